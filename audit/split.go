package audit

import (
	"encoding/binary"
	"slices"
	"time"

	"github.com/kwatch/kwatch/decode"
	"github.com/kwatch/kwatch/internal/wire"
)

// The auditor's two parts in two processes (SPEC.md section 7): an Auditor
// whose Options name an Observer is the per-connection part only (a fleet
// agent), handing every step out instead of taking it; an Auditor fed
// through Observe is the per-instance part only (the fleet's aggregator).
// Fed the same steps in the same order, the second makes the findings
// and rows that one Auditor makes from the events.

// Observer takes a step of the per-connection part (Options.Observer): o,
// complete, valid until the call returns, and for StepVerdict its verdict
// (nil for every other step).
type Observer func(o *Observation, v *Verdict)

// Verdict is a finding the per-connection part judged (StepVerdict), as
// the per-instance part takes it: the rule and what the check said. The
// per-instance part makes the finding (severity, confidence, capture,
// attribution) as it does in one process.
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
	b = binary.AppendVarint(b, v.RequestTime.UnixNano())
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

// handOut gives the Observer step o (and verdict v).
func (a *Auditor) handOut(o *Observation, v *Verdict) {
	o.complete()
	a.o.Observer(o, v)
}

// handVerdict hands out the verdict of rule r on the step o describes.
func (a *Auditor) handVerdict(o *Observation, r ruleID, d *detail) {
	if !r.runsUnder(a.o.Profile) {
		return
	}
	v := Verdict{Rule: r.rule().ID, Severity: d.sev, KIP: d.kip, Expected: d.expected, Observed: d.observed,
		Message: d.msg, Group: d.group, MemberID: d.member, Instance: d.inst, RequestFrame: d.reqFrame}
	if d.reqFrame != 0 {
		v.RequestTime = d.reqTime
	}
	a.handOut(o, &v)
}

// detail is what v said, for fire's finding; false for a rule this
// Auditor does not know.
func (v *Verdict) detail() (ruleID, detail, bool) {
	r, ok := ruleIndex[v.Rule]
	if !ok || v.Severity > SeverityError {
		return 0, detail{}, false
	}
	return r, detail{sev: v.Severity, kip: v.KIP, expected: v.Expected, observed: v.Observed, msg: v.Message,
		group: v.Group, member: v.MemberID, inst: v.Instance, reqFrame: v.RequestFrame, reqTime: v.RequestTime}, true
}

// Observed is one step of a connection's audit as the per-instance part
// takes it from elsewhere: the Observation and, for StepVerdict, its
// Verdict.
type Observed struct {
	Observation
	Verdict Verdict
}

// Observe takes the steps the per-connection part made of one event (in
// the order it made them), as an Auditor given that event would have
// taken them: the per-instance part only, fed from elsewhere (fleet's
// aggregator). Steps of a connection come in its order; an Auditor fed
// through Observe is given no events. OnFinding is called as Event calls
// it. Steps are not retained; they may be changed (their books are set).
func (a *Auditor) Observe(event []Observed) {
	if !a.o.SingleGoroutine {
		a.mu.Lock()
	}
	for i := range event {
		a.observed(&event[i])
	}
	if len(a.outbox) > 1 {
		a.sortOutbox()
	}
	out := a.outbox
	a.outbox = a.outbox[:0]
	if !a.o.SingleGoroutine {
		a.mu.Unlock()
	}
	a.deliver(out)
}

// observed takes one step from elsewhere.
func (a *Auditor) observed(s *Observed) {
	o := &s.Observation
	if !o.Time.IsZero() {
		a.clock(o.Time)
	}
	c := a.bookOf(o)
	o.book, o.connOf, o.lazyConn, o.lazyEvent = &c.book, nil, nil, nil
	switch o.Step {
	case StepVerdict:
		if r, d, ok := s.Verdict.detail(); ok && a.finding(&a.f, o, r, &d) {
			a.verdict(o, &a.f)
		} else if !ok {
			a.t.stateLimited++ // a rule this kwatch does not know
		}
	case StepConnClosed:
		a.observe(o)
		if !c.closed {
			c.closed = true
			a.closedQ = append(a.closedQ, closedConn{c, o.Time})
		}
	default:
		a.observe(o)
	}
}

// bookOf is the state of o's connection that an Auditor fed through
// Observe keeps: the per-instance part's book, and the connection's
// identity as its last step told it (what Finish needs to end a
// connection whose agent never did). It counts no connection: the agent's
// ConnTotals do.
func (a *Auditor) bookOf(o *Observation) *connState {
	c := a.conns[o.Conn]
	if c == nil || c.swept {
		c = &connState{id: o.Conn, owner: a}
		c.book.id = &c.id
		a.conns[o.Conn] = c
	}
	if o.Frame > c.lastFrame {
		c.lastFrame = o.Frame
	}
	c.fromStart, c.gap, c.kafka = o.FromStart, o.Partial, c.kafka || o.Kafka
	c.firstCID = o.ClientID
	if o.HasClientID {
		c.cid = cidSet
	}
	switch {
	case o.InstanceFixed:
		c.inst, c.instID = idSet, o.Instance
	case o.NoInstance:
		c.inst = idNone
	}
	return c
}

// ConnTotals is what the per-connection part counts, which an Auditor fed
// through Observe adds from each agent (AddConnTotals) so that its totals
// are those of one Auditor over every event.
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

// ConnTotals returns what this Auditor's per-connection part counted.
func (a *Auditor) ConnTotals() ConnTotals {
	a.mu.Lock()
	defer a.mu.Unlock()
	t := &a.t
	out := ConnTotals{Requests: t.requests, Responses: t.responses, Connections: t.connections, Kafka: t.kafkaConns,
		CIDRepeats: t.cidRepeats, CIDBytes: t.cidRepeatBytes, Unobservable: t.unobservable,
		StateLimited: t.stateLimited + t.pendingEvicted}
	if !t.first.IsZero() {
		out.First, out.Last = t.first.UnixNano(), t.last.UnixNano()
	}
	for _, cv := range decode.Coverages() {
		if n := t.coverage[cv]; n > 0 {
			if out.Coverage == nil {
				out.Coverage = map[string]uint64{}
			}
			out.Coverage[cv.String()] = n
		}
	}
	return out
}

// Since is what c counts beyond prev, an earlier ConnTotals of the same
// Auditor (its First and Last are c's): what an aggregator adds of an
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
func (a *Auditor) AddConnTotals(c ConnTotals) {
	a.mu.Lock()
	defer a.mu.Unlock()
	t := &a.t
	if c.First != 0 {
		a.clock(time.Unix(0, c.First).UTC())
		a.clock(time.Unix(0, c.Last).UTC())
	}
	for i, n := range c.Requests {
		t.requests[i] += n
	}
	t.responses += c.Responses
	t.connections += c.Connections
	t.kafkaConns += c.Kafka
	t.cidRepeats += c.CIDRepeats
	t.cidRepeatBytes += c.CIDBytes
	t.unobservable += c.Unobservable
	t.stateLimited += c.StateLimited
	for _, cv := range decode.Coverages() {
		t.coverage[cv] += c.Coverage[cv.String()]
	}
}

// clock takes the time of a step from elsewhere, as event takes an
// event's: the report's first and last, and the sweep of closed
// connections.
func (a *Auditor) clock(at time.Time) {
	if a.t.first.IsZero() || at.Before(a.t.first) {
		a.t.first = at
	}
	if at.After(a.t.last) {
		a.t.last = at
	}
	if a.closedAt < len(a.closedQ) {
		a.sweep(at)
	}
}

// sortOutbox puts the findings of one event in rule order.
func (a *Auditor) sortOutbox() {
	slices.SortStableFunc(a.outbox, func(x, y Finding) int { return int(x.rule) - int(y.rule) })
}

// deliver hands findings to OnFinding, outside the lock.
func (a *Auditor) deliver(out []Finding) {
	if a.o.OnFinding != nil {
		for i := range out {
			a.o.OnFinding(out[i])
		}
	}
}
