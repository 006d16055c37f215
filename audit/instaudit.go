package audit

import (
	"cmp"
	"container/list"
	"slices"
	"sync"
	"time"

	"github.com/kwatch/kwatch/decode"
	"github.com/kwatch/kwatch/flow"
)

// InstanceAuditor is the per-instance part of the audit (docs/architecture.md,
// "The auditor's two parts"): it takes the steps a per-connection part
// made (an Observer), keeps the report's rows, each client's member IDs
// across its connections and who claims which member ID, judges what
// spans connections (instance.go, claims.go, legacy.go), makes every
// finding, attributes it to its row and case, and builds the Report.
//
// Its steps come from a ConnAuditor in the same goroutine (Observe and
// Judge: an Auditor pairs the two under the InstanceAuditor's lock), or
// from elsewhere (Take: fleet's aggregator). The snapshots may be called
// from any goroutine: a mutex guards the state (unless
// Options.SingleGoroutine).
type InstanceAuditor struct {
	o Options

	// What every step touches comes first, to share few cache lines.
	mu     sync.Mutex
	outbox []Finding // findings of the current event, for OnFinding
	t      instTotals
	// counts: the per-connection part's counts, which the report's totals
	// show: in one process the ConnAuditor's own; fed from elsewhere, own,
	// which AddConnTotals and Take keep.
	counts *connCounts
	own    connCounts
	// books finds the book of a connection by its ID: in one process the
	// ConnAuditor (which keeps each beside the connection's state); fed
	// from elsewhere, the InstanceAuditor itself (remote).
	books bookKeeper

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

	// f is the finding being made (Judge): a Finding is large, and a
	// local passed by pointer would move to the heap.
	f Finding

	// remote holds the books of connections whose steps come from
	// elsewhere (Take), by ID; remoteQ the closed ones, swept after
	// ClosedGrace.
	remote   map[flow.ConnID]*remoteConn
	remoteQ  []*remoteConn
	remoteAt int
}

// bookKeeper finds the per-instance part's book of a connection by its ID
// (nil: none is known).
type bookKeeper interface {
	book(id flow.ConnID) *connBook
}

// instTotals is what the per-instance part counts, and what the pipeline
// adds (AddCapture...).
type instTotals struct {
	packets, bytes uint64
	// tcpConns: every TCP connection the pipeline followed (AddCapture).
	tcpConns        uint64
	byRule          [numRules]uint64
	bySeverity      [SeverityError + 1]uint64
	findingsDropped uint64
	evicted         uint64
	kernelReceived  uint64
	kernelDropped   uint64
	stateLimited    uint64
	suppressed      uint64
	unwrapped       map[string]uint64
	notKafka        uint64
	evictedConns    uint64
}

// NewInstanceAuditor returns the per-instance part of an audit, to be fed
// from elsewhere (Take) or by a ConnAuditor in its goroutine.
func NewInstanceAuditor(o Options) *InstanceAuditor {
	o = o.withDefaults()
	a := &InstanceAuditor{
		o: o, findings: newKept(&o),
		instances: make(map[decode.UUID]*row),
		legacy:    make(map[legacyKey]*row),
		software:  make(map[clientSoftware]*clientSoftware),
		lru:       list.New(),
		claims:    make(map[memberKey]*claimSet),
		remote:    make(map[flow.ConnID]*remoteConn),
	}
	a.counts, a.books = &a.own, a
	return a
}

// withDefaults fills in the zero fields of o.
func (o Options) withDefaults() Options {
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
	return o
}

func (a *InstanceAuditor) lock() {
	if !a.o.SingleGoroutine {
		a.mu.Lock()
	}
}

func (a *InstanceAuditor) unlock() {
	if !a.o.SingleGoroutine {
		a.mu.Unlock()
	}
}

// takeOutbox returns the findings made since the last call, for deliver;
// the lock is held.
func (a *InstanceAuditor) takeOutbox() []Finding {
	if len(a.outbox) > 1 {
		a.sortOutbox()
	}
	out := a.outbox
	a.outbox = a.outbox[:0]
	return out
}

// sortOutbox puts the findings of one event in rule order.
func (a *InstanceAuditor) sortOutbox() {
	slices.SortStableFunc(a.outbox, func(x, y Finding) int { return int(x.rule) - int(y.rule) })
}

// deliver hands findings to OnFinding, outside the lock.
func (a *InstanceAuditor) deliver(out []Finding) {
	if a.o.OnFinding != nil {
		for i := range out {
			a.o.OnFinding(out[i])
		}
	}
}

// SetKernelStats records a live capture's kernel counters (packets
// delivered and dropped), shown with the coverage figures.
func (a *InstanceAuditor) SetKernelStats(received, dropped uint64) {
	a.mu.Lock()
	a.t.kernelReceived, a.t.kernelDropped = received, dropped
	a.mu.Unlock()
}

// AddCapture adds the pipeline's counts: packets read, their bytes, and
// the TCP connections it followed, Kafka or not (the auditor alone sees
// only those whose traffic was recognised as Kafka, TLS or worth a
// coverage event; the totals count every TCP connection).
func (a *InstanceAuditor) AddCapture(packets, bytes, connections uint64) {
	a.mu.Lock()
	a.t.packets += packets
	a.t.bytes += bytes
	a.t.tcpConns += connections
	a.mu.Unlock()
}

// AddNotKafka adds connections the decoder judged not to be Kafka (other
// protocols of a broker host: docs/recognition.md).
func (a *InstanceAuditor) AddNotKafka(n uint64) {
	a.mu.Lock()
	a.t.notKafka += n
	a.mu.Unlock()
}

// AddEvicted adds connections the reassembler's connection table evicted
// (--max-connections).
func (a *InstanceAuditor) AddEvicted(n uint64) {
	a.mu.Lock()
	a.t.evictedConns += n
	a.mu.Unlock()
}

// AddUnwrapped adds what the capture layers unwrapped on the way to TCP
// (tunnels by kind, IP fragments reassembled or dropped), by name: the
// report says what it took apart (Totals.Unwrapped).
func (a *InstanceAuditor) AddUnwrapped(counts map[string]uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for k, n := range counts {
		if a.t.unwrapped == nil {
			a.t.unwrapped = map[string]uint64{}
		}
		a.t.unwrapped[k] += n
	}
}

// Finish ends, at time at, every connection whose steps came from
// elsewhere and did not end (its agent stopped without ending it), and
// returns the final report.
func (a *InstanceAuditor) Finish(at time.Time) *Report {
	a.lock()
	return a.finishLocked(at)
}

// finishLocked is Finish with the lock held; it releases it.
func (a *InstanceAuditor) finishLocked(at time.Time) *Report {
	a.endRemote(at)
	out := a.takeOutbox()
	a.outbox = nil
	r := a.report()
	r.Findings = a.findings.final()
	a.unlock()
	r.sort()
	a.deliver(out)
	return r
}

// Snapshot returns the report so far; safe to call concurrently with the
// steps. It only copies under the lock: sorting happens after.
func (a *InstanceAuditor) Snapshot() *Report {
	a.mu.Lock()
	r := a.report()
	r.Findings = a.findings.since(0)
	a.mu.Unlock()
	r.sort()
	return r
}

// --- steps ---

// Observe takes one step of a connection's audit (Observer), from a
// ConnAuditor in the same goroutine, under the lock its Auditor holds.
func (a *InstanceAuditor) Observe(o *Observation) {
	b := o.book
	switch o.Step {
	case StepInstance:
		a.touchInstance(b, o)
	case StepSoftware:
		b.software = a.softwareOf(o.Software, o.SwVersion)
		for i := 0; i < int(b.nTouched); i++ {
			b.touched[i].software = b.software
		}
	case StepTelemetry:
		a.telemetryUse(b, o)
	case StepTelemetryAssigned:
		id := o.Telemetry
		b.assignedB = &id
		r := a.telemetryOwner(b, o, a.ensureRow(b, o, o.Time, o.Frame), o.Telemetry)
		t := r.telemetry()
		t.assigned, t.hasAssigned, t.id = o.Telemetry, true, o.Telemetry
	case StepHeartbeat:
		a.memberHeartbeat(b, o)
	case StepHeartbeatAnswer:
		a.heartbeatAnswer(b, o)
	case StepJoinAnswered:
		// Whether the join succeeded cannot be told: no ghost can be
		// claimed on it.
		if g := b.tracker(o).group(o.Group, o.Frame); g.join == o.MemberID && g.joinState == joinPending {
			g.joinState = joinAnswered
		}
	case StepConnEnd:
		o.Complete()
		if o.Kafka && b.row == nil {
			a.ensureRow(b, o, o.Time, o.Frame)
		}
	case StepConnClosed:
		b.unregister()
		b.closed = true
	}
}

// Judge takes a finding the per-connection part judged on the event o
// describes (Observer): it makes the finding, attributes it to its row and
// case and keeps it, unless the profile does not run the rule. A verdict
// naming a rule this kwatch does not know is counted in state_limited.
func (a *InstanceAuditor) Judge(o *Observation, v *Verdict) {
	r, ok := v.ruleID()
	if !ok {
		a.t.stateLimited++
		return
	}
	if !r.runsUnder(a.o.Profile) || a.repeat(o, v, r) {
		return
	}
	if a.finding(&a.f, o, r, v) {
		a.record(o, &a.f)
	}
}

// fireAt judges a per-instance rule on the event o describes.
func (a *InstanceAuditor) fireAt(o *Observation, r ruleID, d Verdict) {
	var f Finding
	if r.runsUnder(a.o.Profile) && a.finding(&f, o, r, &d) {
		a.record(o, &f)
	}
}

// --- rows ---

func (a *InstanceAuditor) touchLRU(r *row, at time.Time) {
	r.lastSeen = at
	if r.elem != nil {
		a.lru.MoveToFront(r.elem)
	}
}

func (a *InstanceAuditor) addRow(r *row) {
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
func (a *InstanceAuditor) instanceRow(id decode.UUID, frame uint64, at time.Time) (r *row, created bool) {
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
func (a *InstanceAuditor) ensureRow(c *connBook, o *Observation, at time.Time, frame uint64) *row {
	if c.row != nil && !c.row.evicted {
		return c.row
	}
	o.Complete()
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
func (a *InstanceAuditor) register(c *connBook, o *Observation, r *row) (newHost, newCID bool) {
	for i := range int(c.nTouched) {
		if c.touched[i] == r {
			return false, false
		}
	}
	o.Complete()
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
func (a *InstanceAuditor) rowFor(o *Observation, id decode.UUID) *row {
	if !id.IsZero() {
		if r := a.instances[id]; r != nil {
			return r
		}
	}
	return a.ensureRow(o.book, o, o.Time, o.Frame)
}

// --- findings ---

// finding makes in f the finding of rule r, as v says it, on the event o
// describes; false when the profile does not run r.
func (a *InstanceAuditor) finding(f *Finding, o *Observation, r ruleID, v *Verdict) bool {
	o.Complete()
	rule := r.rule()
	sev := cmp.Or(v.Severity, rule.Severity)
	kip := cmp.Or(v.KIP, rule.KIP)
	conf := ConfidenceFull
	if o.Partial || (rule.FirstRequest && !o.FromStart) {
		conf = ConfidencePartial
	}
	inst := v.Instance
	if inst.IsZero() {
		inst = o.findingInstance()
	}
	*f = Finding{
		Time: o.Time, Rule: rule.ID, Severity: sev, KIP: kip, Confidence: conf, Frame: o.Frame,
		Conn: o.Conn, API: o.APIKey.String(), APIKey: o.APIKey, APIVersion: o.APIVersion,
		CorrelationID: o.CorrelationID, ClientID: o.ClientID, InstanceID: inst,
		Expected: v.Expected, Observed: v.Observed, Message: v.Message,
		Group: v.Group, MemberID: v.MemberID, rule: r,
	}
	if v.RequestFrame != 0 {
		f.Frame, f.Time = v.RequestFrame, v.RequestTime
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
func (a *InstanceAuditor) record(o *Observation, f *Finding) {
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
func (a *InstanceAuditor) count(r *row, rule ruleID, sev Severity) {
	a.t.byRule[rule]++
	a.t.bySeverity[sev]++
	if r.findings == nil {
		r.findings = new([numRules]uint64)
	}
	r.findings[rule]++
}

// keeps reports whether the report keeps a finding of sz bytes
// (findingSize); those it does not are counted.
func (a *InstanceAuditor) keeps(sz int) bool {
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

// repeat counts the finding of rule r that v says, on the event o
// describes, in its case without making it, when nothing would read it:
// the report keeps no more findings, no one takes them (OnFinding), no
// filter looks at them, and its case is the connection's last
// (repeatCache). It reports whether it did.
func (a *InstanceAuditor) repeat(o *Observation, v *Verdict, r ruleID) bool {
	last := o.book.last
	if last == nil || last.cs == nil || last.rule != r || a.o.OnFinding != nil || a.o.Filter != nil || last.row.evicted {
		return false
	}
	inst := v.Instance
	if inst.IsZero() {
		inst = o.findingInstance()
	}
	if inst != last.inst || inst.IsZero() && last.row != o.book.row ||
		a.keeps(sizeOfFinding(o.ClientID, v.Expected, v.Observed, v.Message, v.Group, v.MemberID)) {
		return false
	}
	sev := cmp.Or(v.Severity, r.rule().Severity)
	frame, at := o.Frame, o.Time
	if v.RequestFrame != 0 {
		frame, at = v.RequestFrame, v.RequestTime
	}
	capture, n := a.o.nameFrame(frame)
	a.count(last.row, r, sev)
	last.cs.add(sev, frameAt{time: at, capture: capture, frame: n})
	if !a.o.StreamFindings {
		a.t.findingsDropped++
	}
	return true
}
