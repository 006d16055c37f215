package fleet

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kwatch/kwatch/audit"
	"github.com/kwatch/kwatch/capture"
)

// AggregatorOptions tune an Aggregator.
type AggregatorOptions struct {
	// Group is the consumer group; "" reads every partition of the topic
	// from its start and commits nothing (a batch run over what is there).
	// With a group, an aggregator still rebuilds its state from each
	// partition's start, but reports (OnFinding, through Replaying) only
	// what comes after the offsets the group committed, and commits the
	// offsets of what it has merged: a restart neither loses nor repeats a
	// streamed finding.
	Group string
	// UntilIdle ends Run once no record has come for this long; 0 runs
	// until the context ends.
	UntilIdle time.Duration
	Logger    zerolog.Logger
}

// Sink is the per-instance part of the audit, fed from the agents' records
// (audit.Auditor).
type Sink interface {
	// Take takes the steps one agent made of one event.
	Take(event []audit.Observed)
	// AddConnTotals adds what an agent's per-connection part counted.
	AddConnTotals(audit.ConnTotals)
}

// Aggregator consumes the records of every agent, merges them by capture
// time and hands their steps to the per-instance part of the audit, in the
// order kwatch read would have made them over the same captures merged by
// time.
type Aggregator struct {
	o      AggregatorOptions
	client *kgo.Client
	sink   Sink

	agents map[string]*agentState
	// captures numbers the captures in the order they appear; names is
	// the reverse, for NameFrame.
	captures map[string]int
	names    []string
	totals   Totals
	steps    []audit.Observed
	topic    string
	merged   []*kgo.Record // merged, not yet committed (group mode)
	// deferred: merged records whose steps wait for every agent's end
	// (the Final steps, whose time is the last packet of all).
	deferred []*Record
	// committed: per partition, the offset the group had committed when
	// this aggregator got it; replaying is true while the merge hands on a
	// record below it.
	mu        sync.Mutex
	committed map[int32]int64
	// owned: the partitions the group gave this member (nil: no group,
	// every partition); revoked ones are dropped at the next merge.
	owned map[int32]bool
	// topicParts: the topic's partitions when the aggregator started (0:
	// unknown); an agent's record cannot make it wait on others.
	topicParts int32
	replaying  bool
	// Read by metrics scrapes on other goroutines.
	records, invalid, waiting atomic.Uint64
}

// agentState holds an agent's records not yet merged: one queue per
// partition, each in the agent's order.
type agentState struct {
	name  string
	parts map[int32]*agentQueue
	// counted: the agent's totals were added (its end record comes on
	// every partition).
	counted bool
	// audit: the agent's per-connection counts added so far, from the
	// record seq carried (watermarks carry them as they grow).
	audit    audit.ConnTotals
	auditSeq uint64
}

// counts adds what r's per-connection counts hold beyond those added.
func (a *Aggregator) counts(r *Record) {
	ag := a.agents[r.Agent]
	if r.Totals == nil || r.Seq <= ag.auditSeq {
		return
	}
	a.sink.AddConnTotals(r.Totals.Audit.Since(ag.audit))
	ag.audit, ag.auditSeq = r.Totals.Audit, r.Seq
}

type agentQueue struct {
	recs  []*Record
	ended bool
}

// NewAggregator connects to t's brokers.
func NewAggregator(t Target, o AggregatorOptions, sink Sink) (*Aggregator, error) {
	opts := []kgo.Opt{
		kgo.SeedBrokers(t.Brokers...),
		kgo.ConsumeTopics(t.Topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
	}
	a := newAggregator(o, sink, t.Topic)
	if o.Group != "" {
		a.owned = map[int32]bool{}
		opts = append(opts, kgo.ConsumerGroup(o.Group), kgo.DisableAutoCommit(), kgo.AdjustFetchOffsetsFn(a.fromStart),
			kgo.OnPartitionsRevoked(a.revoked), kgo.OnPartitionsLost(a.revoked))
	}
	client, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("fleet: %w", err)
	}
	a.client = client
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	a.topicParts, _ = partitionCount(ctx, kadm.NewClient(client), t.Topic) // unknown: the topic is not made yet
	return a, nil
}

func newAggregator(o AggregatorOptions, sink Sink, topic string) *Aggregator {
	return &Aggregator{o: o, sink: sink, topic: topic, agents: map[string]*agentState{}, captures: map[string]int{}, committed: map[int32]int64{}}
}

// fromStart remembers the group's committed offsets and starts every
// assigned partition from its beginning, to rebuild the state.
func (a *Aggregator) fromStart(_ context.Context, offsets map[string]map[int32]kgo.Offset) (map[string]map[int32]kgo.Offset, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for t, parts := range offsets {
		for p, o := range parts {
			if at := o.EpochOffset().Offset; at > 0 {
				a.committed[p] = at
			}
			offsets[t][p] = kgo.NewOffset().AtStart().WithEpoch(-1)
			a.owned[p] = true
		}
	}
	return offsets, nil
}

// revoked forgets partitions the group took from this member.
func (a *Aggregator) revoked(_ context.Context, _ *kgo.Client, lost map[string][]int32) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, parts := range lost {
		for _, p := range parts {
			delete(a.owned, p)
		}
	}
}

// owns reports whether this member consumes partition p.
func (a *Aggregator) owns(p int32) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.topicParts > 0 && p >= a.topicParts {
		return false
	}
	return a.owned == nil || a.owned[p]
}

// dropRevoked drops the queues of partitions another member now has.
func (a *Aggregator) dropRevoked() {
	for _, ag := range a.agents {
		for p, q := range ag.parts {
			if !a.owns(p) {
				a.waiting.Add(-uint64(len(q.recs)))
				delete(ag.parts, p)
			}
		}
	}
}

// Replaying reports whether the event being handed on is one the group had
// already reported before this aggregator started (state rebuilt, not to
// be reported again).
func (a *Aggregator) Replaying() bool { return a.replaying }

// Run consumes until ctx ends or, with UntilIdle, until no record has
// come for that long; then it merges what is left and returns the agents'
// totals (packets, bytes, connections, last packet time).
func (a *Aggregator) Run(ctx context.Context) (Totals, error) {
	defer a.client.Close()
	for {
		pollCtx, cancel := ctx, context.CancelFunc(func() {})
		if a.o.UntilIdle > 0 {
			pollCtx, cancel = context.WithTimeout(ctx, a.o.UntilIdle)
		}
		fetches := a.client.PollFetches(pollCtx)
		idle := pollCtx.Err() != nil && ctx.Err() == nil
		cancel()
		if err := a.take(fetches); err != nil {
			return a.totals, err
		}
		if ctx.Err() != nil {
			break
		}
		if idle && fetches.NumRecords() == 0 {
			a.merge(ctx, true)
			break
		}
		a.merge(ctx, false)
		a.commit(ctx)
	}
	// Stopped or idle: what is merged is committed; a record not merged
	// waits for the next member of the group.
	a.commit(context.WithoutCancel(ctx))
	return a.totals, nil
}

// take queues the fetched records by agent.
func (a *Aggregator) take(fetches kgo.Fetches) error {
	var fatal error
	fetches.EachError(func(topic string, p int32, err error) {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return
		}
		a.o.Logger.Warn().Err(err).Str("topic", topic).Int32("partition", p).Msg("fleet: fetch")
		if errors.Is(err, kgo.ErrClientClosed) {
			fatal = err
		}
	})
	fetches.EachRecord(a.add)
	return fatal
}

// add queues one consumed record by agent and partition.
func (a *Aggregator) add(kr *kgo.Record) {
	a.records.Add(1)
	r, err := ParseRecord(kr.Value)
	if err != nil {
		a.invalid.Add(1)
		a.o.Logger.Warn().Err(err).Int64("offset", kr.Offset).Msg("fleet: record skipped")
		return
	}
	ag := a.agents[r.Agent]
	if ag == nil {
		ag = &agentState{name: r.Agent, parts: map[int32]*agentQueue{}}
		a.agents[r.Agent] = ag
	}
	q := ag.parts[kr.Partition]
	if q == nil {
		q = &agentQueue{}
		ag.parts[kr.Partition] = q
	}
	// The agent's queues of every partition it writes to that this
	// member consumes: one still empty holds the merge back.
	for p := int32(0); p < r.Parts && p < maxPartitions && len(ag.parts) < int(r.Parts); p++ {
		if ag.parts[p] == nil && a.owns(p) {
			ag.parts[p] = &agentQueue{}
		}
	}
	r.partition, r.offset = kr.Partition, kr.Offset
	q.recs = append(q.recs, r)
	a.waiting.Add(1)
}

// merge hands on records in capture-time order for as long as every agent
// that is still capturing has a record waiting in every partition it
// writes to (it could still send an earlier one otherwise; its watermarks
// say how far it got); at the end (final) every agent is taken as done.
// Once every agent has ended (or at the end), the deferred records follow.
func (a *Aggregator) merge(ctx context.Context, final bool) {
	a.dropRevoked()
	for ctx.Err() == nil {
		var next *agentState
		var nq *agentQueue
		for _, ag := range a.agents {
			q, blocked := ag.head(final)
			if blocked {
				return
			}
			if q != nil && (nq == nil || before(ag, q, next, nq)) {
				next, nq = ag, q
			}
		}
		if nq == nil {
			break
		}
		r := nq.recs[0]
		nq.recs[0] = nil
		nq.recs = nq.recs[1:]
		a.waiting.Add(^uint64(0))
		switch {
		case r.Final:
			a.deferred = append(a.deferred, r)
		case r.Kind == KindEnd:
			nq.ended = true
			a.end(r)
		default:
			a.apply(r)
		}
	}
	if len(a.deferred) > 0 && (final || a.allEnded()) {
		a.applyDeferred()
	}
}

// head is the queue holding the agent's next record (the lowest seq of
// its queues' heads), nil when none waits; blocked when a queue of a
// partition the agent writes to is empty and it has not ended there.
func (ag *agentState) head(final bool) (next *agentQueue, blocked bool) {
	for _, q := range ag.parts {
		if len(q.recs) == 0 {
			if !q.ended && !final {
				return nil, true
			}
			continue
		}
		if next == nil || q.recs[0].Seq < next.recs[0].Seq {
			next = q
		}
	}
	return next, false
}

// before orders two agents' next records: by capture time, then by name.
func before(ag *agentState, q *agentQueue, other *agentState, oq *agentQueue) bool {
	x, y := q.recs[0].At, oq.recs[0].At
	if x != y {
		return x < y
	}
	return ag.name < other.name
}

// allEnded reports whether every agent has ended in every partition.
func (a *Aggregator) allEnded() bool {
	for _, ag := range a.agents {
		for _, q := range ag.parts {
			if !q.ended || len(q.recs) > 0 {
				return false
			}
		}
	}
	return true
}

// apply hands on the steps of an obs record, or the counts of a mark.
func (a *Aggregator) apply(r *Record) {
	if r.Kind == KindMark {
		a.counts(r)
	}
	if r.Kind == KindObs {
		steps, ok := r.decodeSteps(a.steps, a.captureIndex(r.Capture))
		a.steps = steps
		if !ok {
			a.invalid.Add(1)
			a.o.Logger.Warn().Int64("offset", r.offset).Msg("fleet: record with a malformed step skipped")
		} else {
			a.handOn(r, steps)
		}
	}
	a.done(r)
}

// handOn gives the sink one record's steps, telling it whether they are a
// replay of what the group had reported.
func (a *Aggregator) handOn(r *Record, steps []audit.Observed) {
	a.mu.Lock()
	done, ok := a.committed[r.partition]
	a.mu.Unlock()
	a.replaying = ok && r.offset < done
	a.sink.Take(steps)
	a.replaying = false
}

// done notes r as merged, to be committed (group mode).
func (a *Aggregator) done(r *Record) {
	if a.o.Group != "" {
		a.merged = append(a.merged, &kgo.Record{Topic: a.topic, Partition: r.partition, Offset: r.offset})
	}
}

// end takes an agent's end record: its totals (once: it comes on every
// partition) and its last counts.
func (a *Aggregator) end(r *Record) {
	if ag := a.agents[r.Agent]; !ag.counted {
		ag.counted = true
		a.totals.add(r.Totals)
	}
	a.counts(r)
	a.done(r)
}

// applyDeferred applies the steps each replaying agent made as its capture
// ended (Final), once every agent has ended: at the end of every capture
// and in the order kwatch read ends its open connections (by connection).
func (a *Aggregator) applyDeferred() {
	type final struct {
		r     *Record
		steps []audit.Observed
	}
	var finals []final
	for _, r := range a.deferred {
		steps, ok := r.decodeSteps(nil, a.captureIndex(r.Capture))
		if !ok {
			a.invalid.Add(1)
			a.done(r)
			continue
		}
		finals = append(finals, final{r, steps})
	}
	a.deferred = a.deferred[:0]
	slices.SortStableFunc(finals, func(x, y final) int { return x.steps[0].Conn.Compare(y.steps[0].Conn) })
	at := a.totals.LastTime()
	for _, f := range finals {
		for i := range f.steps {
			f.steps[i].Time = at
		}
		a.handOn(f.r, f.steps)
		a.done(f.r)
	}
}

// commit commits the offsets of the records merged so far (group mode),
// but in each partition none at or past a deferred record's: a member
// that takes the partition over must apply that one.
func (a *Aggregator) commit(ctx context.Context) {
	if len(a.merged) == 0 {
		return
	}
	hold := map[int32]int64{}
	for _, r := range a.deferred {
		if h, ok := hold[r.partition]; !ok || r.offset < h {
			hold[r.partition] = r.offset
		}
	}
	var now, later []*kgo.Record
	for _, m := range a.merged {
		if h, ok := hold[m.Partition]; ok && m.Offset >= h {
			later = append(later, m)
		} else {
			now = append(now, m)
		}
	}
	if len(now) == 0 {
		return
	}
	if err := a.client.CommitRecords(ctx, now...); err != nil {
		if ctx.Err() == nil {
			a.o.Logger.Warn().Err(err).Msg("fleet: committing offsets")
		}
		return // kept: committed at the next chance
	}
	a.merged = later
}

func (a *Aggregator) captureIndex(name string) int {
	i, ok := a.captures[name]
	if !ok {
		i = len(a.names)
		a.captures[name] = i
		a.names = append(a.names, name)
	}
	return i
}

// NameFrame names an aggregated frame: its capture (file or agent) and
// its number there (audit.Options.NameFrame).
func (a *Aggregator) NameFrame(frame uint64) (string, uint64) {
	i, n := capture.SplitFrame(frame)
	if i < len(a.names) {
		return a.names[i], n
	}
	return "", n
}

// Stats says what the aggregator consumed: records, records skipped as
// unreadable, and records waiting for the merge (its lag). Safe from any
// goroutine.
func (a *Aggregator) Stats() (records, invalid, waiting uint64) {
	return a.records.Load(), a.invalid.Load(), a.waiting.Load()
}

// LastTime is the capture time of the agents' last packet.
func (t Totals) LastTime() time.Time {
	if t.Last == 0 || t.Last == math.MaxInt64 {
		return time.Time{}
	}
	return time.Unix(0, t.Last).UTC()
}
