package audit

import (
	"encoding/binary"
	"slices"
	"time"

	"github.com/kwatch/kwatch/decode"
	"github.com/kwatch/kwatch/flow"
	"github.com/kwatch/kwatch/internal/wire"
)

// The auditor's two parts in two processes (SPEC.md section 7): a
// ConnAuditor whose Observer is a fleet agent's publisher, and an
// InstanceAuditor fed through Take (the fleet's aggregator). Fed the same
// steps in the same order, the second makes the findings and rows that one
// Auditor makes from the events.

// Verdict is what a check said of a finding (StepVerdict): the rule and
// its values. The per-instance part makes the finding (severity,
// confidence, capture, attribution) from it, in one process or from
// elsewhere.
type Verdict struct {
	Rule                        string   // the rule's ID
	Severity                    Severity // 0: the rule's
	KIP                         string   // "": the rule's
	Expected, Observed, Message string
	Group, MemberID             string
	// Instance: the instance the finding belongs to, when the check names
	// one (zero: the connection's).
	Instance decode.UUID
	// RequestFrame and RequestTime: for a rule seen in a response, the
	// request's packet, which the finding names (0: the step's own).
	RequestFrame uint64
	RequestTime  time.Time

	// rule is Rule's index, known when the verdict was made in this
	// process (ruleID looks a decoded one up).
	rule  ruleID
	known bool
}

// ruleID is the rule v names; false for a rule this kwatch does not know
// or a severity out of range.
func (v *Verdict) ruleID() (ruleID, bool) {
	if v.known {
		return v.rule, true
	}
	r, ok := ruleIndex[v.Rule]
	return r, ok && v.Severity <= SeverityError
}

// verdictVersion is the first byte of an encoded Verdict.
const verdictVersion = 1

// AppendBinary appends v's stable encoding to b: a version byte, then the
// fields in declaration order (as Observation.AppendBinary).
func (v *Verdict) AppendBinary(b []byte) ([]byte, error) {
	b = append(b, verdictVersion)
	b = appendString(b, v.Rule)
	b = binary.AppendUvarint(b, uint64(v.Severity))
	for _, s := range []string{v.KIP, v.Expected, v.Observed, v.Message, v.Group, v.MemberID} {
		b = appendString(b, s)
	}
	b = append(b, v.Instance[:]...)
	b = binary.AppendUvarint(b, v.RequestFrame)
	at := int64(0)
	if v.RequestFrame != 0 {
		at = v.RequestTime.UnixNano()
	}
	b = binary.AppendVarint(b, at)
	return b, nil
}

// UnmarshalBinary reads what AppendBinary wrote; strings are copied.
func (v *Verdict) UnmarshalBinary(data []byte) error {
	r := obsReader{wire.Reader{B: data}}
	if r.byte() != verdictVersion {
		return ErrObservation
	}
	*v = Verdict{Rule: r.string(), Severity: Severity(r.uvarint())}
	for _, s := range []*string{&v.KIP, &v.Expected, &v.Observed, &v.Message, &v.Group, &v.MemberID} {
		*s = r.string()
	}
	v.Instance = r.uuid()
	v.RequestFrame = r.uvarint()
	v.RequestTime = time.Unix(0, r.varint()).UTC()
	if r.Bad || len(r.B) != 0 {
		return ErrObservation
	}
	return nil
}

// Observed is one step of a connection's audit as the per-instance part
// takes it from elsewhere: the Observation and, for StepVerdict, its
// Verdict.
type Observed struct {
	Observation
	Verdict Verdict
}

// Take takes the steps a per-connection part elsewhere made of one event
// (in the order it made them), as an InstanceAuditor fed by a ConnAuditor
// in its goroutine would have taken them (fleet's aggregator). Steps of a
// connection come in its order. OnFinding is called as Auditor.Event calls
// it. Steps are not retained; they may be changed (their books are set).
func (a *InstanceAuditor) Take(event []Observed) {
	a.lock()
	for i := range event {
		a.observed(&event[i])
	}
	out := a.takeOutbox()
	a.unlock()
	a.deliver(out)
}

// remoteConn is the per-instance part's state of a connection whose steps
// come from elsewhere: its book, and the connection's identity as its last
// step told it (what Finish needs to end a connection whose agent never
// did).
type remoteConn struct {
	book      connBook
	last      Observation
	lastFrame uint64
	closedAt  time.Time
	kafka     bool
}

// observed takes one step from elsewhere.
func (a *InstanceAuditor) observed(s *Observed) {
	o := &s.Observation
	if !o.Time.IsZero() {
		a.clock(o.Time)
	}
	rc := a.remoteOf(o)
	o.book, o.connOf, o.lazyConn, o.lazyEvent = &rc.book, nil, nil, nil
	switch o.Step {
	case StepVerdict:
		a.Judge(o, &s.Verdict)
	case StepConnClosed:
		closed := rc.book.closed
		a.Observe(o)
		if !closed {
			rc.closedAt = o.Time
			if rc.kafka {
				a.counts.open--
			}
			a.remoteQ = append(a.remoteQ, rc)
		}
	default:
		a.Observe(o)
	}
}

// remoteOf is the state of o's connection, made on first use. It counts
// no connection: the agent's ConnTotals do.
func (a *InstanceAuditor) remoteOf(o *Observation) *remoteConn {
	rc := a.remote[o.Conn]
	if rc == nil {
		rc = &remoteConn{}
		rc.last.Conn = o.Conn
		rc.book.id = &rc.last.Conn
		a.remote[o.Conn] = rc
	}
	if o.Frame > rc.lastFrame {
		rc.lastFrame = o.Frame
	}
	if o.Kafka && !rc.kafka && !rc.book.closed {
		rc.kafka = true
		a.counts.open++
	}
	l := &rc.last
	l.ClientID, l.HasClientID = o.ClientID, o.HasClientID
	l.Instance, l.InstanceFixed, l.NoInstance = o.Instance, o.InstanceFixed, o.NoInstance
	l.FromStart, l.Partial, l.Kafka = o.FromStart, o.Partial, l.Kafka || o.Kafka
	return rc
}

// book is the per-instance part's book of a connection whose steps came
// from elsewhere (bookKeeper).
func (a *InstanceAuditor) book(id flow.ConnID) *connBook {
	if rc := a.remote[id]; rc != nil {
		return &rc.book
	}
	return nil
}

// endRemote ends, at time at, the connections whose steps came from
// elsewhere and did not end, in connection order.
func (a *InstanceAuditor) endRemote(at time.Time) {
	var open []*remoteConn
	for _, rc := range a.remote {
		if !rc.book.closed {
			open = append(open, rc)
		}
	}
	slices.SortFunc(open, func(x, y *remoteConn) int { return x.last.Conn.Compare(y.last.Conn) })
	for _, rc := range open {
		o := rc.last
		o.Frame, o.Time, o.PDU, o.book = 0, at, decode.KindConnEnd, &rc.book
		for _, step := range []Step{StepConnEnd, StepConnClosed} {
			o.Step = step
			a.Observe(&o)
		}
		if rc.kafka {
			a.counts.open--
		}
	}
}

// clock takes the time of a step from elsewhere: the report's first and
// last, and the sweep of closed connections.
func (a *InstanceAuditor) clock(at time.Time) {
	a.counts.clock(at)
	for a.remoteAt < len(a.remoteQ) {
		rc := a.remoteQ[a.remoteAt]
		if at.Sub(rc.closedAt) <= a.o.ClosedGrace {
			break
		}
		if a.remote[rc.last.Conn] == rc {
			delete(a.remote, rc.last.Conn)
		}
		a.remoteQ[a.remoteAt] = nil
		a.remoteAt++
	}
	if a.remoteAt > 1024 && a.remoteAt*2 > len(a.remoteQ) {
		n := copy(a.remoteQ, a.remoteQ[a.remoteAt:])
		clear(a.remoteQ[n:])
		a.remoteQ = a.remoteQ[:n]
		a.remoteAt = 0
	}
}

// ConnTotals is what the per-connection part counts, which an
// InstanceAuditor fed from elsewhere adds from each agent (AddConnTotals)
// so that its totals are those of one Auditor over every event.
type ConnTotals struct {
	// First and Last: capture times (Unix ns) of the first and last event; 0: none.
	First int64 `json:"first,omitempty"`
	Last  int64 `json:"last,omitempty"`
	// Requests by header version v0..v3.
	Requests     [4]uint64         `json:"requests"`
	Responses    uint64            `json:"responses"`
	Connections  uint64            `json:"connections"`
	Kafka        uint64            `json:"kafka_connections"`
	Coverage     map[string]uint64 `json:"coverage,omitempty"`
	CIDRepeats   uint64            `json:"client_id_repeats,omitempty"`
	CIDBytes     uint64            `json:"client_id_repeat_bytes,omitempty"`
	Unobservable uint64            `json:"unobservable,omitempty"`
	StateLimited uint64            `json:"state_limited,omitempty"`
}

// export is n as ConnTotals.
func (n *connCounts) export() ConnTotals {
	out := ConnTotals{Requests: n.requests, Responses: n.responses, Connections: n.connections, Kafka: n.kafkaConns,
		CIDRepeats: n.cidRepeats, CIDBytes: n.cidRepeatBytes, Unobservable: n.unobservable,
		StateLimited: n.stateLimited + n.pendingEvicted}
	if !n.first.IsZero() {
		out.First, out.Last = n.first.UnixNano(), n.last.UnixNano()
	}
	for _, cv := range decode.Coverages() {
		if c := n.coverage[cv]; c > 0 {
			if out.Coverage == nil {
				out.Coverage = map[string]uint64{}
			}
			out.Coverage[cv.String()] = c
		}
	}
	return out
}

// Since is what c counts beyond prev, an earlier ConnTotals of the same
// part (its First and Last are c's): what an aggregator adds of an
// agent's running counts.
func (c ConnTotals) Since(prev ConnTotals) ConnTotals {
	d := c
	for i := range d.Requests {
		d.Requests[i] -= prev.Requests[i]
	}
	d.Responses -= prev.Responses
	d.Connections -= prev.Connections
	d.Kafka -= prev.Kafka
	d.CIDRepeats -= prev.CIDRepeats
	d.CIDBytes -= prev.CIDBytes
	d.Unobservable -= prev.Unobservable
	d.StateLimited -= prev.StateLimited
	d.Coverage = nil
	for k, n := range c.Coverage {
		if n > prev.Coverage[k] {
			if d.Coverage == nil {
				d.Coverage = map[string]uint64{}
			}
			d.Coverage[k] = n - prev.Coverage[k]
		}
	}
	return d
}

// AddConnTotals adds what an agent's per-connection part counted (its
// ConnTotals); a coverage event this kwatch does not name is left out.
func (a *InstanceAuditor) AddConnTotals(c ConnTotals) {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := a.counts
	if c.First != 0 {
		a.clock(time.Unix(0, c.First).UTC())
		a.clock(time.Unix(0, c.Last).UTC())
	}
	for i, r := range c.Requests {
		n.requests[i] += r
	}
	n.responses += c.Responses
	n.connections += c.Connections
	n.kafkaConns += c.Kafka
	n.cidRepeats += c.CIDRepeats
	n.cidRepeatBytes += c.CIDBytes
	n.unobservable += c.Unobservable
	n.stateLimited += c.StateLimited
	for _, cv := range decode.Coverages() {
		n.coverage[cv] += c.Coverage[cv.String()]
	}
}
