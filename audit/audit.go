package audit

import (
	"time"

	"github.com/kwatch/kwatch/decode"
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

// Options tunes an Auditor and its two parts (a ConnAuditor reads
// Profile, MemberIDRequiredFrom, ClosedGrace, NameFrame, KeepContext and
// Logger; an InstanceAuditor the rest). The zero value audits the seed
// profile.
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
	// operations cost a good part of an ordinary event. (An
	// InstanceAuditor's methods, Take and the snapshots, likewise.)
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
	Logger         zerolog.Logger
}

// nameFrame names frame for a person; see Options.NameFrame.
func (o *Options) nameFrame(frame uint64) (capture string, n uint64) {
	if o.NameFrame == nil {
		return "", frame
	}
	return o.NameFrame(frame)
}

// Auditor is the whole audit in one process: a ConnAuditor (the
// per-connection part) whose steps go straight to an InstanceAuditor (the
// per-instance part, which makes the report), under one lock. It is what
// kwatch read, live and tui run; fleet mode runs the two parts in two
// processes (docs/fleet.md). Event must be called from one goroutine, in
// capture order; the snapshots may be called from another goroutine at
// any time (unless Options.SingleGoroutine).
type Auditor struct {
	conn *ConnAuditor
	inst *InstanceAuditor
}

// New returns an Auditor.
func New(o Options) *Auditor { return NewTee(o, nil) }

// NewTee returns an Auditor whose per-connection steps also go to tee (a
// live fleet agent's publisher: each connection is audited once, for the
// local report and for the fleet). tee is called under the Auditor's lock.
func NewTee(o Options, tee Observer) *Auditor {
	inst := NewInstanceAuditor(o)
	var next Observer = inst
	if tee != nil {
		next = Tee{inst, tee}
	}
	a := &Auditor{inst: inst, conn: NewConnAuditor(o, next)}
	inst.counts = &a.conn.n
	inst.books = a.conn
	return a
}

// Event audits one decoded event (decode.Sink). e is not retained.
func (a *Auditor) Event(e *decode.Event) {
	a.inst.lock()
	a.conn.Event(e)
	out := a.inst.takeOutbox()
	a.inst.unlock()
	a.inst.deliver(out)
}

// Finish ends every open connection at time at (end of input) and returns
// the final report.
func (a *Auditor) Finish(at time.Time) *Report {
	a.inst.lock()
	a.conn.Finish(at)
	return a.inst.finishLocked(at)
}

// Snapshot returns the report so far; safe to call concurrently with Event.
func (a *Auditor) Snapshot() *Report { return a.inst.Snapshot() }

// SnapshotSince is InstanceAuditor.SnapshotSince.
func (a *Auditor) SnapshotSince(from int) (r *Report, fresh []Finding, next int) {
	return a.inst.SnapshotSince(from)
}

// Counts is InstanceAuditor.Counts.
func (a *Auditor) Counts() (Totals, int) { return a.inst.Counts() }

// ConnTotals returns what the per-connection part counted so far.
func (a *Auditor) ConnTotals() ConnTotals {
	a.inst.lock()
	defer a.inst.unlock()
	return a.conn.Totals()
}

// SetKernelStats is InstanceAuditor.SetKernelStats.
func (a *Auditor) SetKernelStats(received, dropped uint64) { a.inst.SetKernelStats(received, dropped) }

// AddCapture is InstanceAuditor.AddCapture.
func (a *Auditor) AddCapture(packets, bytes, connections uint64) {
	a.inst.AddCapture(packets, bytes, connections)
}

// AddNotKafka is InstanceAuditor.AddNotKafka.
func (a *Auditor) AddNotKafka(n uint64) { a.inst.AddNotKafka(n) }

// AddEvicted is InstanceAuditor.AddEvicted.
func (a *Auditor) AddEvicted(n uint64) { a.inst.AddEvicted(n) }

// AddUnwrapped is InstanceAuditor.AddUnwrapped.
func (a *Auditor) AddUnwrapped(counts map[string]uint64) { a.inst.AddUnwrapped(counts) }
