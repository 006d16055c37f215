package audit

import (
	"slices"
	"time"

	"github.com/kwatch/kwatch/decode"
	"github.com/kwatch/kwatch/flow"
)

// ConnAuditor is the per-connection part of the audit (docs/architecture.md,
// "The auditor's two parts"): it takes decoded events (a decode.Sink),
// follows each TCP connection (its first request, client ID, header
// instance ID, the requests awaiting answers), judges the rules one
// connection shows (checks.go) and hands every step it makes, verdicts
// included, to its Observer: in one process the InstanceAuditor (Auditor
// pairs them), in a fleet agent the publisher.
//
// A ConnAuditor takes no lock: it is used from one goroutine (the
// Auditor that pairs it with an InstanceAuditor locks around it).
type ConnAuditor struct {
	o       Options
	reqFrom int16
	next    Observer

	// What every event touches comes first, to share few cache lines.
	closedQ  []closedConn
	closedAt int // index of the first live entry of closedQ
	n        connCounts

	conns map[flow.ConnID]*connState

	// req holds the request being checked while a check of apiChecks
	// runs: passed to a function value, a local would move to the heap
	// on every request.
	req reqCheck
	// obs is the Observation of the current step (observation).
	obs Observation
	// v is the verdict being handed out (fire): passed to the Observer
	// (an interface), a local would move to the heap.
	v Verdict

	// connCache holds recently looked-up connections by connSlot, so most
	// events without a Slot skip hashing a ConnID (two addresses) in conns.
	connCache [connCacheSize]*connState
}

// connCounts is what the per-connection part counts: the report's totals
// of requests, responses, connections and coverage (ConnTotals carries
// them between processes).
type connCounts struct {
	first, last             time.Time
	requests                [4]uint64
	responses               uint64
	connections, kafkaConns uint64
	// open: Kafka connections not yet ended.
	open           uint64
	coverage       [decode.NumCoverage]uint64
	cidRepeatBytes uint64
	cidRepeats     uint64
	unobservable   uint64
	stateLimited   uint64
	pendingEvicted uint64
}

// clock takes a packet time: the report's first and last.
func (n *connCounts) clock(at time.Time) {
	if n.first.IsZero() || at.Before(n.first) {
		n.first = at
	}
	if at.After(n.last) {
		n.last = at
	}
}

// NewConnAuditor returns the per-connection part of an audit, handing its
// steps to next.
func NewConnAuditor(o Options, next Observer) *ConnAuditor {
	o = o.withDefaults()
	req := o.MemberIDRequiredFrom
	switch {
	case req == 0:
		req = 1
	case req < 0:
		req = 0
	}
	a := &ConnAuditor{o: o, reqFrom: req, next: next, conns: make(map[flow.ConnID]*connState)}
	return a
}

// Event audits one decoded event (decode.Sink). e is not retained past
// the steps it makes.
func (a *ConnAuditor) Event(e *decode.Event) {
	if !e.Time.IsZero() {
		// Packet time mostly grows: one comparison for most events (first
		// <= last once set, so a later time is not an earlier one). Written
		// here, not called (connCounts.clock): the call cost an ordinary
		// event a twentieth of its instructions.
		switch {
		case e.Time.After(a.n.last):
			a.n.last = e.Time
			if a.n.first.IsZero() {
				a.n.first = e.Time
			}
		case a.n.first.IsZero() || e.Time.Before(a.n.first):
			a.n.first = e.Time
		}
		if a.closedAt < len(a.closedQ) {
			a.sweep(e.Time)
		}
	}
	c := a.conn(e)
	if e.Frame > c.lastFrame {
		c.lastFrame = e.Frame
	}
	switch e.Kind {
	case decode.KindConnStart:
		c.fromStart = e.FromStart
	case decode.KindConnEnd:
		a.endConn(c, e.Time, e.Frame)
	case decode.KindCoverage:
		if int(e.Coverage) < len(a.n.coverage) {
			a.n.coverage[e.Coverage]++
		}
		switch e.Coverage {
		case decode.StreamGap:
			c.gap = true
		case decode.MidstreamJoin:
			c.fromStart = false
		}
	case decode.KindRequest:
		a.markKafka(c)
		a.request(c, e)
	case decode.KindResponse:
		a.markKafka(c)
		a.n.responses++
		a.response(c, e)
	}
}

func (a *ConnAuditor) markKafka(c *connState) {
	if !c.kafka {
		c.kafka = true
		a.n.kafkaConns++
		a.n.open++
	}
}

// conn finds or creates the state of e's connection: in e.Slot when the
// decoder gave one, else looked up by ConnID (and then kept in e.Slot).
func (a *ConnAuditor) conn(e *decode.Event) *connState {
	if e.Slot == nil {
		return a.connByID(e)
	}
	if c, ok := (*e.Slot).(*connState); ok && c.owner == a && !c.swept {
		// c.id == e.Conn: a Conn's ID does not change once it emits events.
		if e.Partial {
			c.gap = true
		}
		return c
	}
	c := a.connByID(e)
	// Another sink's state stays; so does another ConnAuditor's.
	if old, ok := (*e.Slot).(*connState); *e.Slot == nil || ok && old.owner == a {
		*e.Slot = c
	}
	return c
}

// connByID finds or creates the state of connection e.Conn.
func (a *ConnAuditor) connByID(e *decode.Event) *connState {
	slot := &a.connCache[connSlot(&e.Conn)]
	c := *slot
	if c == nil || c.id != e.Conn {
		c = a.conns[e.Conn]
	}
	if c != nil {
		*slot = c
		if e.Partial {
			c.gap = true
		}
		return c
	}
	c = &connState{id: e.Conn, owner: a, fromStart: e.FromStart, gap: e.Partial}
	c.book.id = &c.id
	a.conns[e.Conn] = c
	*slot = c
	a.n.connections++
	return c
}

const connCacheSize = 256 // a power of two

// connSlot is id's index in connCache: a cheap mix of what differs most
// between live connections (start frame, client port).
func connSlot(id *flow.ConnID) int {
	h := id.StartFrame*0x9E3779B97F4A7C15 ^ uint64(id.Client.Port())*0xBF58476D1CE4E5B9
	return int(h >> (64 - 8))
}

// book is the per-instance part's book of connection id (bookKeeper): in
// one process it lives in the connection's state.
func (a *ConnAuditor) book(id flow.ConnID) *connBook {
	if c := a.conns[id]; c != nil {
		return &c.book
	}
	return nil
}

// endConn closes c: client-id-repeated fires now; the state is kept for
// ClosedGrace of packet time.
func (a *ConnAuditor) endConn(c *connState, at time.Time, frame uint64) {
	if c.closed {
		return
	}
	end := decode.Event{Kind: decode.KindConnEnd, Conn: c.id, Frame: frame, Time: at}
	a.next.Observe(a.observation(c, &end, StepConnEnd))
	if c.claimed && c.cidRepeats > 0 {
		a.fireConnEnd(c, at, frame)
	}
	a.next.Observe(a.observation(c, &end, StepConnClosed))
	c.closed = true
	if c.kafka {
		a.n.open--
	}
	a.closedQ = append(a.closedQ, closedConn{c, at})
}

// closedConn is a closed connection and when it closed; the time is kept
// here rather than in every connection's state, most of which stay open.
type closedConn struct {
	c  *connState
	at time.Time
}

// sweep drops closed connections older than ClosedGrace. The caller checks
// that closedQ is not empty, which it mostly is.
func (a *ConnAuditor) sweep(now time.Time) {
	for a.closedAt < len(a.closedQ) {
		c := a.closedQ[a.closedAt].c
		if now.Sub(a.closedQ[a.closedAt].at) <= a.o.ClosedGrace {
			break
		}
		if a.conns[c.id] == c {
			delete(a.conns, c.id)
		}
		c.swept = true // a Slot that holds c must not give it out again
		if slot := &a.connCache[connSlot(&c.id)]; *slot == c {
			*slot = nil
		}
		a.closedQ[a.closedAt] = closedConn{}
		a.closedAt++
	}
	if a.closedAt > 1024 && a.closedAt*2 > len(a.closedQ) {
		n := copy(a.closedQ, a.closedQ[a.closedAt:])
		clear(a.closedQ[n:])
		a.closedQ = a.closedQ[:n]
		a.closedAt = 0
	}
}

// Finish ends every open connection at time at (end of input), in
// connection order, handing on their last steps.
func (a *ConnAuditor) Finish(at time.Time) {
	// The last step's Observation and request check point to the caller's
	// last Event, which lives in the decoder, which reaches the whole
	// pipeline: dropped here, the reassembler's and decoders' state (over
	// half the heap of 100k open connections) is freed before the report
	// is built, rather than kept alive to the end.
	a.obs.lazyConn, a.obs.lazyEvent = nil, nil
	a.req = reqCheck{}
	ids := make([]*connState, 0, len(a.conns))
	for _, c := range a.conns {
		if !c.closed {
			ids = append(ids, c)
		}
	}
	// Deterministic order: by start frame, then addresses.
	slices.SortFunc(ids, func(x, y *connState) int { return x.id.Compare(y.id) })
	for _, c := range ids {
		a.endConn(c, at, 0)
	}
}

// fire judges rule r on connection c at event e: the verdict goes to the
// Observer with the step's Observation. d is copied.
func (a *ConnAuditor) fire(c *connState, e *decode.Event, r ruleID, d *Verdict) {
	if !r.runsUnder(a.o.Profile) {
		return
	}
	a.v = *d
	a.v.Rule, a.v.rule, a.v.known = ruleTable[r].ID, r, true
	if a.v.RequestFrame == 0 {
		a.v.RequestTime = time.Time{}
	}
	a.next.Judge(a.observation(c, e, StepVerdict), &a.v)
}

// fireConnEnd emits client-id-repeated for c, which has no event of its own.
func (a *ConnAuditor) fireConnEnd(c *connState, at time.Time, frame uint64) {
	if frame == 0 {
		frame = c.lastFrame
	}
	ev := decode.Event{Kind: decode.KindConnEnd, Conn: c.id, Frame: frame, Time: at}
	a.fire(c, &ev, rClientIDRepeated, &Verdict{
		Expected: "null client ID after the first request",
		Observed: plural(c.cidRepeats, "request") + ", " + plural(c.cidRepeatBytes, "byte"),
		Message: "the connection sends header instance IDs (claims KIP-1313) but repeated its client ID on " +
			plural(c.cidRepeats, "later request") + "; sending null would save " + plural(c.cidRepeatBytes, "byte"),
	})
}

// Totals returns what this part counted so far.
func (a *ConnAuditor) Totals() ConnTotals { return a.n.export() }
