package tui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/kwatch/kwatch/audit"
	"github.com/kwatch/kwatch/decode"
	"github.com/kwatch/kwatch/flow"
)

// Recorder keeps what the detail screens show and the audit report does not:
// per finding, the requests of its connection around it, recorded when the
// finding is made (Finding, the auditor's OnFinding); per client instance
// its identity-bearing requests and the requests that broke a rule (the
// instance's timeline), the first ones and the latest ones. It sits in
// front of the auditor as a decode.Sink and passes every event on to Next.
//
// Memory is bounded: rings of fixed size per connection, a head and a ring
// per instance, at most MaxConns connections and MaxInstances instances
// (the oldest forgotten first), and the contexts of the first and of the
// latest findings (recorderContexts each). Event and Finding are called
// from the capture goroutine; Timeline and Around from the UI's: a mutex
// guards the state.
type Recorder struct {
	Next decode.Sink

	mu        sync.Mutex
	conns     map[flow.ConnID]*connRecord
	connOrder []flow.ConnID
	timelines map[string]*headTail
	timeOrder []string
	// contexts by contextKey: the first recorderContexts kept for good,
	// the later ones in a FIFO (ctxOrder) of as many.
	contexts map[string]*findingContext
	ctxFirst int
	ctxOrder []string
}

// Bounds of a Recorder.
const (
	recorderConnRing     = 32
	recorderTimelineHead = 16
	recorderTimelineTail = 48
	recorderMaxConns     = 10000
	recorderMaxInstances = 10000
	recorderContexts     = 1024
	// A finding's context: the requests before it (its own included) and
	// after it on its connection.
	contextBefore = 8
	contextAfter  = 6
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
func (r *ring) list() []TimelineRow { return r.last(len(r.rows)) }

// last returns the newest n rows (fewer when fewer were added), oldest first.
func (r *ring) last(n int) []TimelineRow {
	size := r.next
	if r.full {
		size = len(r.rows)
	}
	n = min(n, size)
	out := make([]TimelineRow, 0, n)
	for i := r.next - n; i < r.next; i++ {
		out = append(out, r.rows[(i+len(r.rows))%len(r.rows)])
	}
	return out
}

// headTail keeps the first rows and the latest ones of a long list, and
// counts those in between it forgot.
type headTail struct {
	head    []TimelineRow
	tail    *ring
	omitted int
}

func newHeadTail() *headTail {
	return &headTail{head: make([]TimelineRow, 0, recorderTimelineHead), tail: newRing(recorderTimelineTail)}
}

func (h *headTail) add(row TimelineRow) {
	if len(h.head) < cap(h.head) {
		h.head = append(h.head, row)
		return
	}
	if h.tail.full {
		h.omitted++
	}
	h.tail.add(row)
}

// lastRow is the newest row, nil when none.
func (h *headTail) lastRow() *TimelineRow {
	switch {
	case h.tail.full || h.tail.next > 0:
		return &h.tail.rows[(h.tail.next+len(h.tail.rows)-1)%len(h.tail.rows)]
	case len(h.head) > 0:
		return &h.head[len(h.head)-1]
	}
	return nil
}

func (h *headTail) excerpt() Excerpt {
	rows := append(slices.Clone(h.head), h.tail.list()...)
	return Excerpt{Rows: rows, Gap: len(h.head), Omitted: h.omitted}
}

type connRecord struct {
	key       string // instance key (InstanceRow.Key) once known
	firstCID  string
	haveFirst bool
	lastInst  string
	requests  *ring
	seen      int // rows recorded on the connection
	// pending are the contexts still taking the rows after their finding.
	pending []*findingContext
}

// findingContext is the requests around one finding, as recorded.
type findingContext struct {
	rows    []TimelineRow
	earlier int // requests of the connection before rows[0]
	after   int // rows still to take after the finding
}

// NewRecorder returns a Recorder that forwards events to next. Give its
// Finding method to the auditor as audit.Options.OnFinding.
func NewRecorder(next decode.Sink) *Recorder {
	return &Recorder{
		Next:      next,
		conns:     make(map[flow.ConnID]*connRecord),
		timelines: make(map[string]*headTail),
		contexts:  make(map[string]*findingContext),
	}
}

// contextKey names a finding's request: its connection and frame (the
// findings of one request share their context).
func contextKey(client, broker string, frame uint64) string {
	return client + " " + broker + " " + strconv.FormatUint(frame, 10)
}

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

// Finding records the context of f as it is made: the connection's latest
// requests, and (as they come) the next few. Use it as audit's OnFinding.
func (r *Recorder) Finding(f audit.Finding) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.conns[f.Conn]
	if c == nil {
		return
	}
	client, broker := addrString(f.Conn.Client), addrString(f.Conn.Broker)
	k := contextKey(client, broker, f.Frame)
	ctx := r.contexts[k]
	if ctx == nil {
		rows := c.requests.last(contextBefore)
		ctx = &findingContext{rows: rows, earlier: c.seen - len(rows), after: contextAfter}
		r.keepContext(k, ctx)
		c.pending = append(c.pending, ctx)
	}
	for i := range ctx.rows {
		if ctx.rows[i].Frame == f.Frame && !slices.Contains(ctx.rows[i].Rules, f.Rule) {
			ctx.rows[i].Rules = append(slices.Clip(ctx.rows[i].Rules), f.Rule)
		}
	}
	r.markTimeline(&f, client, broker)
}

// keepContext stores ctx under k within the bounds.
func (r *Recorder) keepContext(k string, ctx *findingContext) {
	if r.ctxFirst < recorderContexts {
		r.contexts[k] = ctx
		r.ctxFirst++
		return
	}
	remember(r.contexts, &r.ctxOrder, k, ctx, recorderContexts)
}

// markTimeline puts the request that broke a rule in its instance's
// timeline (the instance the auditor gave the finding), naming the rule.
func (r *Recorder) markTimeline(f *audit.Finding, client, broker string) {
	key := ""
	switch {
	case !f.InstanceID.IsZero():
		key = audit.JavaString(f.InstanceID)
	case f.Conn.Client.IsValid():
		key = legacyKey(f.Conn.Client.Addr().String(), f.ClientID)
	}
	t := r.timeline(key)
	if t == nil {
		return
	}
	if last := t.lastRow(); last != nil && last.Frame == f.Frame && last.Client == client {
		if !slices.Contains(last.Rules, f.Rule) {
			last.Rules = append(slices.Clip(last.Rules), f.Rule)
		}
		return
	}
	row := TimelineRow{Time: f.Time, Frame: f.Frame, Client: client, Broker: broker, API: orDash(f.API),
		APIVersion: f.APIVersion, CorrelationID: f.CorrelationID, Rules: []string{f.Rule}}
	t.add(row)
}

// timeline returns the instance's timeline, made on first use; nil for
// no key.
func (r *Recorder) timeline(key string) *headTail {
	if key == "" {
		return nil
	}
	t := r.timelines[key]
	if t == nil {
		t = newHeadTail()
		remember(r.timelines, &r.timeOrder, key, t, recorderMaxInstances)
	}
	return t
}

// remember adds k to m and to order, forgetting the oldest key when order
// grows past limit.
func remember[K comparable, V any](m map[K]V, order *[]K, k K, v V, limit int) {
	m[k] = v
	*order = append(*order, k)
	if len(*order) > limit {
		delete(m, (*order)[0])
		*order = (*order)[1:]
	}
}

func (r *Recorder) conn(id flow.ConnID) *connRecord {
	c := r.conns[id]
	if c != nil {
		return c
	}
	c = &connRecord{requests: newRing(recorderConnRing)}
	remember(r.conns, &r.connOrder, id, c, recorderMaxConns)
	return c
}

func (r *Recorder) record(e *decode.Event) {
	c := r.conn(e.Conn)
	row := TimelineRow{
		Time: e.Time, Frame: e.Frame,
		Client: addrString(e.Conn.Client), Broker: addrString(e.Conn.Broker),
		API: e.APIKey.String(), APIVersion: e.APIVersion, Header: int(e.HeaderVersion),
		CorrelationID: e.CorrelationID, Note: note(e),
	}
	identity := false
	if e.Kind == decode.KindRequest {
		identity = c.request(e, &row)
	} else {
		row.API += " (response)"
	}
	if e.APIKey.HasIdentityBody() {
		identity = true
	}
	c.requests.add(row)
	c.seen++
	c.feedPending(row)
	if !identity {
		return
	}
	key := c.key
	if key == "" && c.haveFirst {
		key = legacyKey(e.Conn.Client.Addr().String(), c.firstCID)
	}
	if t := r.timeline(key); t != nil {
		t.add(row)
	}
}

// request fills a request's identity fields and reports whether it
// changed the connection's identity (first client ID, instance ID).
func (c *connRecord) request(e *decode.Event, row *TimelineRow) (identity bool) {
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
	return identity
}

// feedPending hands row to the contexts still waiting for rows after
// their finding.
func (c *connRecord) feedPending(row TimelineRow) {
	keep := c.pending[:0]
	for _, ctx := range c.pending {
		ctx.rows = append(ctx.rows, row)
		if ctx.after--; ctx.after > 0 {
			keep = append(keep, ctx)
		}
	}
	clear(c.pending[len(keep):])
	c.pending = keep
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
	if b.HasMemberID || e.APIKey.IsGroupHeartbeat() {
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

// Timeline returns the recorded timeline of an instance.
func (r *Recorder) Timeline(instanceKey string) Excerpt {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t := r.timelines[instanceKey]; t != nil {
		return t.excerpt()
	}
	return Excerpt{Rows: []TimelineRow{}}
}

// Around returns the requests around a finding on its connection, as
// recorded when it was made: Rows nil when it was not (made before the
// Recorder saw its connection, or forgotten).
func (r *Recorder) Around(f FindingRow) Excerpt {
	r.mu.Lock()
	defer r.mu.Unlock()
	ctx := r.contexts[contextKey(f.Client, f.Broker, f.Frame)]
	if ctx == nil {
		return Excerpt{}
	}
	rows := make([]TimelineRow, len(ctx.rows))
	for i := range ctx.rows {
		rows[i] = ctx.rows[i]
		rows[i].Rules = slices.Clone(ctx.rows[i].Rules)
	}
	return Excerpt{Rows: rows, Omitted: ctx.earlier}
}

// DetailFeed is a Feed whose detail screens are served by a Recorder.
type DetailFeed struct {
	Feed
	*Recorder
}
