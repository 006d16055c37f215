package tui

import (
	"fmt"
	"strings"
	"sync"

	"github.com/kwatch/kwatch/audit"
	"github.com/kwatch/kwatch/decode"
)

// Recorder keeps what the detail screens show and the audit report does not:
// per connection its last requests (for "the requests around a finding"),
// and per client instance its last identity-bearing requests (the
// instance's timeline). It sits in front of the auditor as a decode.Sink and
// passes every event on to Next.
//
// Memory is bounded: rings of fixed size per connection and per instance,
// and at most MaxConns connections and MaxInstances instances remembered
// (the oldest forgotten first). Event is called from the capture goroutine;
// Timeline and Around from the UI's: a mutex guards the state.
type Recorder struct {
	Next decode.Sink

	mu        sync.Mutex
	conns     map[decode.ConnID]*connRecord
	byAddr    map[string]*connRecord // "client broker" -> latest connection
	connOrder []decode.ConnID
	timelines map[string]*ring
	timeOrder []string
}

// Bounds of a Recorder.
const (
	recorderConnRing     = 32
	recorderTimelineRing = 64
	recorderMaxConns     = 10000
	recorderMaxInstances = 10000
)

type ring struct {
	rows []TimelineRow
	next int
	full bool
}

func newRing(n int) *ring { return &ring{rows: make([]TimelineRow, n)} }

func (r *ring) add(row TimelineRow) {
	r.rows[r.next] = row
	r.next++
	if r.next == len(r.rows) {
		r.next, r.full = 0, true
	}
}

// list returns the rows oldest first.
func (r *ring) list() []TimelineRow {
	if !r.full {
		return append([]TimelineRow(nil), r.rows[:r.next]...)
	}
	out := make([]TimelineRow, 0, len(r.rows))
	out = append(out, r.rows[r.next:]...)
	return append(out, r.rows[:r.next]...)
}

type connRecord struct {
	key       string // instance key (InstanceRow.Key) once known
	firstCID  string
	haveFirst bool
	lastInst  string
	requests  *ring
}

// NewRecorder returns a Recorder that forwards events to next.
func NewRecorder(next decode.Sink) *Recorder {
	return &Recorder{
		Next:      next,
		conns:     make(map[decode.ConnID]*connRecord),
		byAddr:    make(map[string]*connRecord),
		timelines: make(map[string]*ring),
	}
}

func addrKey(client, broker string) string { return client + " " + broker }

// Event records e and forwards it.
func (r *Recorder) Event(e *decode.Event) {
	if e.Kind == decode.KindRequest || e.Kind == decode.KindResponse {
		r.mu.Lock()
		r.record(e)
		r.mu.Unlock()
	}
	if r.Next != nil {
		r.Next.Event(e)
	}
}

func (r *Recorder) record(e *decode.Event) {
	c := r.conns[e.Conn]
	if c == nil {
		c = &connRecord{requests: newRing(recorderConnRing)}
		r.conns[e.Conn] = c
		r.byAddr[addrKey(addrString(e.Conn.Client), addrString(e.Conn.Broker))] = c
		r.connOrder = append(r.connOrder, e.Conn)
		if len(r.connOrder) > recorderMaxConns {
			old := r.connOrder[0]
			r.connOrder = r.connOrder[1:]
			if oc := r.conns[old]; oc != nil {
				k := addrKey(addrString(old.Client), addrString(old.Broker))
				if r.byAddr[k] == oc {
					delete(r.byAddr, k)
				}
			}
			delete(r.conns, old)
		}
	}
	row := TimelineRow{
		Time: e.Time, Frame: e.Frame,
		Client: addrString(e.Conn.Client), Broker: addrString(e.Conn.Broker),
		API: decode.APIName(e.APIKey), APIVersion: e.APIVersion, Header: int(e.HeaderVersion),
		CorrelationID: e.CorrelationID, Note: note(e),
	}
	identity := false
	if e.Kind == decode.KindRequest {
		inst := ""
		switch {
		case e.TagProblem != decode.TagOK:
			inst = "malformed"
		case e.HasInstanceID && !e.InstanceID.IsZero():
			inst = audit.JavaString(e.InstanceID)
		}
		row.InstanceID = inst
		if e.ClientIDNull {
			row.ClientID = "null"
		} else {
			row.ClientID = fmt.Sprintf("%q", e.ClientID)
		}
		if !c.haveFirst && e.HeaderVersion >= 1 {
			c.haveFirst = true
			c.firstCID = string(e.ClientID)
			identity = true
		}
		if c.key == "" && inst != "" && inst != "malformed" {
			c.key = inst
		}
		if inst != c.lastInst {
			identity = true
			c.lastInst = inst
		}
	} else {
		row.API += " (response)"
	}
	if identityAPI(e.APIKey) {
		identity = true
	}
	c.requests.add(row)
	if !identity {
		return
	}
	key := c.key
	if key == "" && c.haveFirst {
		key = legacyKey(e.Conn.Client.Addr().String(), c.firstCID)
	}
	if key == "" {
		return
	}
	t := r.timelines[key]
	if t == nil {
		t = newRing(recorderTimelineRing)
		r.timelines[key] = t
		r.timeOrder = append(r.timeOrder, key)
		if len(r.timeOrder) > recorderMaxInstances {
			delete(r.timelines, r.timeOrder[0])
			r.timeOrder = r.timeOrder[1:]
		}
	}
	t.add(row)
}

// identityAPI: the APIs whose bodies carry identity (SPEC.md section 1).
func identityAPI(key int16) bool {
	switch key {
	case 17, 18, 68, 71, 72, 76, 88:
		return true
	}
	return false
}

// note formats the identity fields of a decoded body.
func note(e *decode.Event) string {
	b := &e.Body
	if !b.Decoded {
		return ""
	}
	var parts []string
	// Group IDs and software names come from the wire: escaped.
	if b.Group != "" {
		parts = append(parts, "group "+audit.PlainText(b.Group))
	}
	if b.HasMemberID || e.APIKey == 68 || e.APIKey == 76 || e.APIKey == 88 {
		parts = append(parts, fmt.Sprintf("member %q epoch %d", b.MemberID, b.MemberEpoch))
	}
	if b.HasTelemetryInstanceID {
		parts = append(parts, "telemetry "+audit.JavaString(b.TelemetryInstanceID))
	}
	if b.ClientSoftwareName != "" {
		parts = append(parts, "software "+audit.PlainText(b.ClientSoftwareName+"/"+b.ClientSoftwareVersion))
	}
	if b.HasErrorCode {
		parts = append(parts, fmt.Sprintf("error %s(%d)", audit.ErrorName(b.ErrorCode), b.ErrorCode))
	}
	return strings.Join(parts, ", ")
}

// Timeline returns the identity-bearing requests recorded for an instance.
func (r *Recorder) Timeline(instanceKey string) []TimelineRow {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t := r.timelines[instanceKey]; t != nil {
		return t.list()
	}
	return []TimelineRow{}
}

// Around returns the recorded requests of the finding's connection within
// a few frames of it: up to five before and five after.
func (r *Recorder) Around(f FindingRow) []TimelineRow {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.byAddr[addrKey(f.Client, f.Broker)]
	if c == nil {
		return []TimelineRow{}
	}
	rows := c.requests.list()
	at := len(rows)
	for i, row := range rows {
		if row.Frame >= f.Frame {
			at = i
			break
		}
	}
	lo, hi := max(0, at-5), min(len(rows), at+6)
	return rows[lo:hi]
}

// DetailFeed is a ReportFeed whose detail screens are served by a Recorder.
type DetailFeed struct {
	ReportFeed
	*Recorder
}
