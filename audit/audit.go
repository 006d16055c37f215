package audit

import (
	"cmp"
	"container/list"
	"slices"
	"sync"
	"time"

	"github.com/kwatch/kwatch/decode"
	"github.com/kwatch/kwatch/flow"
	"github.com/rs/zerolog"
)

// Defaults of Options.
const (
	DefaultMaxInstances = 100_000
	DefaultMaxFindings  = 200_000
	// DefaultMaxFindingBytes bounds the memory of kept findings (about
	// 15000 typical ones): with DefaultMaxFindings alone a hostile capture
	// could make the report hold ~100 MB. Every finding is counted, and
	// in its case, beyond it; a fleet that repeats one fault on every
	// request stays under 64 MB of peak RSS in every format
	// (bench.TestPeakRSSFindingsHeavy).
	DefaultMaxFindingBytes = 8 << 20
	DefaultClosedGrace     = 2 * time.Minute
)

// Options tunes an Auditor. The zero value audits the seed profile.
type Options struct {
	// Profile: ProfileSeed (default) or ProfileAccepted2026.
	Profile Profile
	// MemberIDRequiredFrom is the ConsumerGroupHeartbeat version from which a
	// client-generated member ID is required (SPEC.md 3.4). 0 means the
	// default, 1; a negative value means every version. Share (76) and
	// streams (88) group heartbeats require it from v0 regardless.
	MemberIDRequiredFrom int16
	// OnFinding, when set, is called with each finding as it is made, in
	// event order, from the goroutine calling Event (never under the
	// Auditor's lock, so it may call Snapshot).
	OnFinding func(Finding)
	// MaxInstances caps report rows (instances and legacy clients); the
	// least recently seen is evicted and counted. Default 100000.
	MaxInstances int
	// MaxFindings caps the findings a report keeps (all are counted and
	// passed to OnFinding). Default 200000.
	MaxFindings int
	// MaxFindingBytes caps the estimated memory of kept findings (the
	// Finding struct and the strings it owns); beyond it findings are
	// counted, passed to OnFinding, not kept. Default DefaultMaxFindingBytes.
	MaxFindingBytes int
	// ClosedGrace is how long, in packet time, a closed connection's state
	// is kept (late responses, member-ID collisions). Default 2 minutes.
	ClosedGrace time.Duration
	// SingleGoroutine promises that every method (Event, Snapshot, Finish,
	// AddCapture, SetKernelStats) is called from one goroutine, as an
	// offline read does: Event then takes no lock, whose two atomic
	// operations cost a good part of an ordinary event.
	SingleGoroutine bool
	// NameFrame, when several capture files are read as one, names the
	// capture (file or agent) of an event's frame and the packet's number
	// in it (SPEC.md 2.1); nil: one capture, frames named as they are.
	NameFrame func(frame uint64) (capture string, n uint64)
	// Filter narrows the report and suppresses known cases; nil: all.
	Filter *Filter
	// StreamFindings hands findings to OnFinding only: the report keeps
	// none (its totals and cases count them all), for a run whose findings
	// are written as they come (NDJSON) and whose report is a summary.
	StreamFindings bool
	// Observer, when set, makes the Auditor the per-connection part only
	// (a fleet agent, split.go): every step it would hand the
	// per-instance part, verdicts included, goes to Observer instead, and
	// its report holds no rows or findings (ConnTotals holds its counts).
	Observer Observer
	Logger   zerolog.Logger
}

// nameFrame names frame for a person; see Options.NameFrame.
func (o *Options) nameFrame(frame uint64) (capture string, n uint64) {
	if o.NameFrame == nil {
		return "", frame
	}
	return o.NameFrame(frame)
}

// Auditor turns decoded events into findings and a report. Event must be
// called from one goroutine, in capture order; Snapshot may be called from
// another goroutine at any time (unless Options.SingleGoroutine): a mutex
// guards the state.
type Auditor struct {
	o       Options
	reqFrom int16

	// What every event touches comes first, to share few cache lines.
	mu       sync.Mutex
	closedQ  []closedConn
	closedAt int       // index of the first live entry of closedQ
	outbox   []Finding // findings of the current event, for OnFinding
	t        totals

	conns map[flow.ConnID]*connState

	instances map[decode.UUID]*row
	legacy    map[legacyKey]*row
	lru       *list.List // rows, most recently seen at the front
	software  map[clientSoftware]*clientSoftware

	claims map[memberKey]*claimSet
	cases  map[caseKey]*caseState
	// suppressed: the cases of findings the baseline suppressed, kept
	// with Filter.ShowSuppressed.
	suppressed map[caseKey]*caseState

	findings keptFindings

	// req holds the request being checked while a check of apiChecks
	// runs: passed to a function value, a local would move to the heap
	// on every request.
	req reqCheck
	// obs is the Observation of the current step (observation).
	obs Observation
	// f is the finding being made (fire): a Finding is large, and a
	// local passed by pointer would move to the heap.
	f Finding

	// connCache holds recently looked-up connections by connSlot, so most
	// events without a Slot skip hashing a ConnID (two addresses) in conns.
	connCache [connCacheSize]*connState
}

type totals struct {
	first, last             time.Time
	requests                [4]uint64
	responses               uint64
	packets, bytes          uint64
	connections, kafkaConns uint64
	// tcpConns: every TCP connection the pipeline followed (AddCapture).
	tcpConns        uint64
	coverage        [decode.NumCoverage]uint64
	byRule          [numRules]uint64
	bySeverity      [SeverityError + 1]uint64
	findingsDropped uint64
	evicted         uint64
	cidRepeatBytes  uint64
	cidRepeats      uint64
	unobservable    uint64
	kernelReceived  uint64
	kernelDropped   uint64
	stateLimited    uint64
	pendingEvicted  uint64
	suppressed      uint64
	unwrapped       map[string]uint64
	notKafka        uint64
	evictedConns    uint64
}

// New returns an Auditor.
func New(o Options) *Auditor {
	if o.MaxInstances <= 0 {
		o.MaxInstances = DefaultMaxInstances
	}
	if o.MaxFindings <= 0 {
		o.MaxFindings = DefaultMaxFindings
	}
	if o.MaxFindingBytes <= 0 {
		o.MaxFindingBytes = DefaultMaxFindingBytes
	}
	if o.ClosedGrace <= 0 {
		o.ClosedGrace = DefaultClosedGrace
	}
	req := o.MemberIDRequiredFrom
	switch {
	case req == 0:
		req = 1
	case req < 0:
		req = 0
	}
	return &Auditor{
		o: o, reqFrom: req, findings: newKept(&o),
		conns:     make(map[flow.ConnID]*connState),
		instances: make(map[decode.UUID]*row),
		legacy:    make(map[legacyKey]*row),
		software:  make(map[clientSoftware]*clientSoftware),
		lru:       list.New(),
		claims:    make(map[memberKey]*claimSet),
	}
}

// SetKernelStats records a live capture's kernel counters (packets
// delivered and dropped), shown with the coverage figures.
func (a *Auditor) SetKernelStats(received, dropped uint64) {
	a.mu.Lock()
	a.t.kernelReceived, a.t.kernelDropped = received, dropped
	a.mu.Unlock()
}

// AddCapture adds the pipeline's counts: packets read, their bytes, and
// the TCP connections it followed, Kafka or not (the auditor alone sees
// only those whose traffic was recognised as Kafka, TLS or worth a
// coverage event; the totals count every TCP connection).
func (a *Auditor) AddCapture(packets, bytes, connections uint64) {
	a.mu.Lock()
	a.t.packets += packets
	a.t.bytes += bytes
	a.t.tcpConns += connections
	a.mu.Unlock()
}

// AddNotKafka adds connections the decoder judged not to be Kafka (other
// protocols of a broker host: docs/recognition.md).
func (a *Auditor) AddNotKafka(n uint64) {
	a.mu.Lock()
	a.t.notKafka += n
	a.mu.Unlock()
}

// AddEvicted adds connections the reassembler's connection table evicted
// (--max-connections).
func (a *Auditor) AddEvicted(n uint64) {
	a.mu.Lock()
	a.t.evictedConns += n
	a.mu.Unlock()
}

// AddUnwrapped adds what the capture layers unwrapped on the way to TCP
// (tunnels by kind, IP fragments reassembled or dropped), by name: the
// report says what it took apart (Totals.Unwrapped).
func (a *Auditor) AddUnwrapped(counts map[string]uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for k, n := range counts {
		if n == 0 {
			continue
		}
		if a.t.unwrapped == nil {
			a.t.unwrapped = map[string]uint64{}
		}
		a.t.unwrapped[k] += n
	}
}

// Event audits one decoded event (decode.Sink). e is not retained.
func (a *Auditor) Event(e *decode.Event) {
	if !a.o.SingleGoroutine {
		a.mu.Lock()
	}
	a.event(e)
	out := a.outbox
	a.outbox = a.outbox[:0]
	if !a.o.SingleGoroutine {
		a.mu.Unlock()
	}
	a.deliver(out)
}

func (a *Auditor) event(e *decode.Event) {
	if !e.Time.IsZero() {
		// Packet time mostly grows: one comparison for most events (first
		// <= last once set, so a later time is not an earlier one). Written
		// here, not called (clock, for steps from elsewhere): the call cost
		// an ordinary event a twentieth of its instructions.
		switch {
		case e.Time.After(a.t.last):
			a.t.last = e.Time
			if a.t.first.IsZero() {
				a.t.first = e.Time
			}
		case a.t.first.IsZero() || e.Time.Before(a.t.first):
			a.t.first = e.Time
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
		if int(e.Coverage) < len(a.t.coverage) {
			a.t.coverage[e.Coverage]++
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
		a.t.responses++
		a.response(c, e)
	}
	if len(a.outbox) > 1 {
		a.sortOutbox()
	}
}

func (a *Auditor) markKafka(c *connState) {
	if !c.kafka {
		c.kafka = true
		a.t.kafkaConns++
	}
}

// conn finds or creates the state of e's connection: in e.Slot when the
// decoder gave one, else looked up by ConnID (and then kept in e.Slot).
func (a *Auditor) conn(e *decode.Event) *connState {
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
	// Another sink's state stays; so does another Auditor's.
	if old, ok := (*e.Slot).(*connState); *e.Slot == nil || ok && old.owner == a {
		*e.Slot = c
	}
	return c
}

// connByID finds or creates the state of connection e.Conn.
func (a *Auditor) connByID(e *decode.Event) *connState {
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
	a.t.connections++
	return c
}

const connCacheSize = 256 // a power of two

// connSlot is id's index in connCache: a cheap mix of what differs most
// between live connections (start frame, client port).
func connSlot(id *flow.ConnID) int {
	h := id.StartFrame*0x9E3779B97F4A7C15 ^ uint64(id.Client.Port())*0xBF58476D1CE4E5B9
	return int(h >> (64 - 8))
}

// endConn closes c: client-id-repeated fires now; the state is kept for
// ClosedGrace of packet time.
func (a *Auditor) endConn(c *connState, at time.Time, frame uint64) {
	if c.closed {
		return
	}
	end := decode.Event{Kind: decode.KindConnEnd, Conn: c.id, Frame: frame, Time: at}
	a.observe(a.observation(c, &end, StepConnEnd))
	if c.claimed && c.cidRepeats > 0 {
		a.fireConnEnd(c, at, frame)
	}
	a.observe(a.observation(c, &end, StepConnClosed))
	c.closed = true
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
func (a *Auditor) sweep(now time.Time) {
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

// Finish ends every open connection at time at (end of input) and returns
// the final report.
func (a *Auditor) Finish(at time.Time) *Report {
	a.mu.Lock()
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
	out := a.outbox
	a.outbox = nil
	r := a.report()
	r.Findings = a.findings.final()
	a.mu.Unlock()
	r.sort()
	a.deliver(out)
	return r
}

// Snapshot returns the report so far; safe to call concurrently with Event.
// It only copies under the lock: sorting happens after.
func (a *Auditor) Snapshot() *Report {
	a.mu.Lock()
	r := a.report()
	r.Findings = a.findings.since(0)
	a.mu.Unlock()
	r.sort()
	return r
}

// --- rows ---

func (a *Auditor) touchLRU(r *row, at time.Time) {
	r.lastSeen = at
	if r.elem != nil {
		a.lru.MoveToFront(r.elem)
	}
}

func (a *Auditor) addRow(r *row) {
	for a.lru.Len() >= a.o.MaxInstances {
		old := a.lru.Back()
		v := old.Value.(*row)
		a.lru.Remove(old)
		v.evicted, v.elem = true, nil
		if v.legacy {
			delete(a.legacy, v.lkey)
		} else {
			delete(a.instances, v.id)
		}
		a.t.evicted++
		a.o.Logger.Debug().Bool("legacy", v.legacy).Msg("audit: report row evicted")
	}
	r.elem = a.lru.PushFront(r)
}

// instanceRow finds or creates the row of a non-zero instance ID.
func (a *Auditor) instanceRow(id decode.UUID, frame uint64, at time.Time) (r *row, created bool) {
	if r = a.instances[id]; r != nil {
		a.touchLRU(r, at)
		return r, false
	}
	r = &row{id: id, firstFrame: frame, firstSeen: at, lastSeen: at}
	a.instances[id] = r
	a.addRow(r)
	return r, true
}

// ensureRow gives c a row: a legacy row keyed (client IP, first client ID)
// when it has none yet.
func (a *Auditor) ensureRow(c *connBook, o *Observation, at time.Time, frame uint64) *row {
	if c.row != nil && !c.row.evicted {
		return c.row
	}
	o.complete()
	if c.row != nil && !c.row.legacy {
		// Its instance row was evicted: bring it back (counted afresh).
		r, _ := a.instanceRow(c.row.id, frame, at)
		c.row, c.lastInst = r, r
		c.unregister()
		a.register(c, o, r)
		return r
	}
	k := legacyKey{host: o.Conn.Client.Addr(), clientID: o.ClientID}
	r := a.legacy[k]
	if r == nil {
		r = &row{legacy: true, lkey: k, firstFrame: frame, firstSeen: at, lastSeen: at}
		a.legacy[k] = r
		a.addRow(r)
	} else {
		a.touchLRU(r, at)
	}
	c.row = r
	a.register(c, o, r)
	return r
}

// register records c on r once: host, broker, client ID, software.
// It reports whether r gained a second host or client ID.
func (a *Auditor) register(c *connBook, o *Observation, r *row) (newHost, newCID bool) {
	for i := range int(c.nTouched) {
		if c.touched[i] == r {
			return false, false
		}
	}
	o.complete()
	if c.nTouched < maxTouched {
		c.touched[c.nTouched] = r
		c.nTouched++
		if !c.closed {
			r.open++
		}
	}
	r.conns++
	if len(r.connList) < maxRowConns {
		r.connList = append(r.connList, o.Conn)
	}
	newHost = addUnique(&r.hosts, o.Conn.Client.Addr()) && len(r.hosts) > 1
	addUnique(&r.brokers, o.Conn.Broker)
	if o.HasClientID {
		newCID = addUnique(&r.clientIDs, o.ClientID) && len(r.clientIDs) > 1
	}
	if c.software.named() && !r.software.named() {
		r.software = c.software
	}
	return newHost, newCID
}

func addUnique[T comparable](s *[]T, v T) bool {
	for _, x := range *s {
		if x == v {
			return false
		}
	}
	if len(*s) >= maxRowList {
		return false
	}
	*s = append(*s, v)
	return true
}

// rowFor is the row a finding about instance id (zero: none) on c counts against.
func (a *Auditor) rowFor(o *Observation, id decode.UUID) *row {
	if !id.IsZero() {
		if r := a.instances[id]; r != nil {
			return r
		}
	}
	return a.ensureRow(o.book, o, o.Time, o.Frame)
}

// --- findings ---

// detail is what a check says about a finding; fire fills in the rest.
type detail struct {
	sev                Severity // 0: the rule's default
	kip                string   // "": the rule's
	expected, observed string
	msg                string
	group, member      string
	inst               decode.UUID // overrides the instance the finding belongs to
	// reqFrame and reqTime: for a rule seen in a response (3.5), the
	// packet of the request it answers, which the finding names (SPEC.md
	// section 5: "the packet that completed the request"; 3.7 counts 3.5
	// rules per request).
	reqFrame uint64
	reqTime  time.Time
}

// fire judges rule r on connection c at event e: the per-connection
// part's findings reach their row through a StepVerdict, unless the
// finding repeats the connection's last one (repeat).
func (a *Auditor) fire(c *connState, e *decode.Event, r ruleID, d *detail) {
	if a.o.Observer != nil {
		a.handVerdict(a.observation(c, e, StepVerdict), r, d)
		return
	}
	if a.repeat(c, e, r, d) {
		return
	}
	o := a.observation(c, e, StepVerdict)
	if a.finding(&a.f, o, r, d) {
		a.verdict(o, &a.f)
	}
}

// finding makes in f the finding of rule r on the event o describes, or
// false when the profile does not run r.
func (a *Auditor) finding(f *Finding, o *Observation, r ruleID, d *detail) bool {
	if !r.runsUnder(a.o.Profile) {
		return false
	}
	o.complete()
	rule := r.rule()
	sev := d.sev
	if sev == 0 {
		sev = rule.Severity
	}
	kip := d.kip
	if kip == "" {
		kip = rule.KIP
	}
	conf := ConfidenceFull
	if o.Partial || (rule.FirstRequest && !o.FromStart) {
		conf = ConfidencePartial
	}
	inst := d.inst
	if inst.IsZero() {
		inst = o.findingInstance()
	}
	*f = Finding{
		Time: o.Time, Rule: rule.ID, Severity: sev, KIP: kip, Confidence: conf, Frame: o.Frame,
		Conn: o.Conn, API: o.APIKey.String(), APIKey: o.APIKey, APIVersion: o.APIVersion,
		CorrelationID: o.CorrelationID, ClientID: o.ClientID, InstanceID: inst,
		Expected: d.expected, Observed: d.observed, Message: d.msg,
		Group: d.group, MemberID: d.member, rule: r,
	}
	if d.reqFrame != 0 {
		f.Frame, f.Time = d.reqFrame, d.reqTime
	}
	f.seq = f.Frame
	f.Capture, f.Frame = a.o.nameFrame(f.Frame)
	if o.PDU != decode.KindRequest && o.PDU != decode.KindResponse {
		// A connection-level finding (client-id-repeated): no PDU.
		f.API, f.APIKey, f.APIVersion, f.CorrelationID = "", -1, -1, -1
	}
	return true
}

// record attributes finding f, made on the event o describes, to its row
// and case, and keeps it (a copy: f may be reused).
func (a *Auditor) record(o *Observation, f *Finding) {
	flt := a.o.Filter
	if !flt.keep(f) {
		return
	}
	r := a.rowFor(o, f.InstanceID)
	if flt != nil && flt.Baseline != nil && flt.Baseline.known[caseEntry(f.rule.rule(), r, f)] {
		a.t.suppressed++
		if flt.ShowSuppressed {
			a.addCase(&a.suppressed, r, f)
		}
		return
	}
	a.count(r, f.rule, f.Severity)
	cs := a.addCase(&a.cases, r, f)
	if cs != nil && flt == nil && (f.InstanceID.IsZero() && r == o.book.row || !r.legacy && r.id == f.InstanceID) {
		if o.book.last == nil {
			o.book.last = new(repeatCache)
		}
		*o.book.last = repeatCache{rule: f.rule, inst: f.InstanceID, row: r, cs: cs}
	} else if o.book.last != nil {
		*o.book.last = repeatCache{}
	}
	switch sz := findingSize(f); {
	case a.keeps(sz):
		a.findings.add(f, sz)
	case !a.o.StreamFindings:
		a.t.findingsDropped++
	}
	if a.o.OnFinding != nil {
		a.outbox = append(a.outbox, *f)
	}
}

// count counts a finding of rule on row r in the totals.
func (a *Auditor) count(r *row, rule ruleID, sev Severity) {
	a.t.byRule[rule]++
	a.t.bySeverity[sev]++
	if r.findings == nil {
		r.findings = new([numRules]uint64)
	}
	r.findings[rule]++
}

// keeps reports whether the report keeps a finding of sz bytes
// (findingSize); those it does not are counted.
func (a *Auditor) keeps(sz int) bool {
	return !a.o.StreamFindings && len(a.findings.fs) < a.o.MaxFindings && a.findings.bytes+sz <= a.o.MaxFindingBytes
}

// repeatCache is a connection's last finding's rule, instance, row and
// case: a client that repeats its fault on every request repeats them.
// The row is one rowFor gives again while it is not evicted: the instance
// ID's own row, or (no instance) the connection's primary row. Cases are
// never deleted.
type repeatCache struct {
	rule ruleID
	inst decode.UUID
	row  *row
	cs   *caseState
}

// repeat counts the finding of rule r on connection c at event e in its
// case without making it, when nothing would read it: the report keeps
// no more findings, no one takes them (OnFinding), no filter looks at
// them, and its case is the connection's last (repeatCache). It reports
// whether it did (or r does not run under the profile).
func (a *Auditor) repeat(c *connState, e *decode.Event, r ruleID, d *detail) bool {
	last := c.book.last
	if last == nil || last.cs == nil || last.rule != r || a.o.OnFinding != nil || a.o.Filter != nil || last.row.evicted {
		return false
	}
	inst := d.inst
	if inst.IsZero() {
		if c.inst == idSet {
			inst = c.instID
		} else if e.Kind == decode.KindRequest && e.HasInstanceID && e.TagProblem == decode.TagOK {
			inst = e.InstanceID
		}
	}
	if inst != last.inst || inst.IsZero() && last.row != c.book.row ||
		a.keeps(sizeOfFinding(c.firstCID, d.expected, d.observed, d.msg, d.group, d.member)) {
		return false
	}
	if !r.runsUnder(a.o.Profile) {
		return true
	}
	sev := cmp.Or(d.sev, r.rule().Severity)
	frame, at := e.Frame, e.Time
	if d.reqFrame != 0 {
		frame, at = d.reqFrame, d.reqTime
	}
	capture, n := a.o.nameFrame(frame)
	a.count(last.row, r, sev)
	last.cs.add(sev, frameAt{time: at, capture: capture, frame: n})
	if !a.o.StreamFindings {
		a.t.findingsDropped++
	}
	return true
}

// fireConnEnd emits client-id-repeated for c, which has no event of its own.
func (a *Auditor) fireConnEnd(c *connState, at time.Time, frame uint64) {
	if frame == 0 {
		frame = c.lastFrame
	}
	ev := decode.Event{Kind: decode.KindConnEnd, Conn: c.id, Frame: frame, Time: at}
	a.fire(c, &ev, rClientIDRepeated, &detail{
		expected: "null client ID after the first request",
		observed: plural(c.cidRepeats, "request") + ", " + plural(c.cidRepeatBytes, "byte"),
		msg: "the connection sends header instance IDs (claims KIP-1313) but repeated its client ID on " +
			plural(c.cidRepeats, "later request") + "; sending null would save " + plural(c.cidRepeatBytes, "byte"),
	})
}
