package fleet

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kwatch/kwatch/capture"
	"github.com/kwatch/kwatch/decode"
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

// Aggregator consumes the records of every agent, merges them by capture
// time and hands the events to a sink (the auditor), in the order kwatch
// read would have made them over the same captures merged by time.
type Aggregator struct {
	o      AggregatorOptions
	client *kgo.Client
	sink   decode.Sink

	agents map[string]*agentQueue
	// captures numbers the captures in the order they appear; names is
	// the reverse, for NameFrame.
	captures map[string]int
	names    []string
	totals   Totals
	ev       decode.Event
	topic    string
	merged   []*kgo.Record // merged, not yet committed (group mode)
	// committed: per partition, the offset the group had committed when
	// this aggregator got it; replaying is true while the merge hands on a
	// record below it.
	mu        sync.Mutex
	committed map[int32]int64
	replaying bool
	// Read by metrics scrapes on other goroutines.
	records, invalid, waiting atomic.Uint64
}

// agentQueue holds an agent's records not yet merged, in its order.
type agentQueue struct {
	name  string
	recs  []*Record
	ended bool
}

// NewAggregator connects to t's brokers.
func NewAggregator(t Target, o AggregatorOptions, sink decode.Sink) (*Aggregator, error) {
	opts := []kgo.Opt{
		kgo.SeedBrokers(t.Brokers...),
		kgo.ConsumeTopics(t.Topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
	}
	a := &Aggregator{o: o, sink: sink, topic: t.Topic, agents: map[string]*agentQueue{}, captures: map[string]int{}, committed: map[int32]int64{}}
	if o.Group != "" {
		opts = append(opts, kgo.ConsumerGroup(o.Group), kgo.DisableAutoCommit(), kgo.AdjustFetchOffsetsFn(a.fromStart))
	}
	client, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("fleet: %w", err)
	}
	a.client = client
	return a, nil
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
		}
	}
	return offsets, nil
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
	fetches.EachRecord(func(kr *kgo.Record) {
		a.records.Add(1)
		r, err := ParseRecord(kr.Value)
		if err != nil {
			a.invalid.Add(1)
			a.o.Logger.Warn().Err(err).Int64("offset", kr.Offset).Msg("fleet: record skipped")
			return
		}
		q := a.agents[r.Agent]
		if q == nil {
			q = &agentQueue{name: r.Agent}
			a.agents[r.Agent] = q
		}
		r.partition, r.offset = kr.Partition, kr.Offset
		q.recs = append(q.recs, r)
		a.waiting.Add(1)
	})
	return fatal
}

// merge hands on events in capture-time order for as long as every agent
// that is still capturing has a record waiting (it could still send an
// earlier one otherwise); at the end (final) every agent is taken as done.
func (a *Aggregator) merge(ctx context.Context, final bool) {
	for ctx.Err() == nil {
		var next *agentQueue
		for _, q := range a.agents {
			if len(q.recs) == 0 {
				if !q.ended && !final {
					return
				}
				continue
			}
			if next == nil || before(q, next) {
				next = q
			}
		}
		if next == nil {
			return
		}
		r := next.recs[0]
		next.recs[0] = nil
		next.recs = next.recs[1:]
		a.waiting.Add(^uint64(0))
		a.apply(next, r)
	}
}

// before orders two agents' next records: by capture time, then by name.
func before(q, other *agentQueue) bool {
	x, y := q.recs[0].At, other.recs[0].At
	if x != y {
		return x < y
	}
	return q.name < other.name
}

func (a *Aggregator) apply(q *agentQueue, r *Record) {
	switch r.Kind {
	case KindEnd:
		q.ended = true
		a.totals.Packets += r.Totals.Packets
		a.totals.Bytes += r.Totals.Bytes
		a.totals.Connections += r.Totals.Connections
		a.totals.Last = max(a.totals.Last, r.Totals.Last)
	case KindEvent:
		idx := a.captureIndex(r.Capture)
		r.Event.toDecode(&a.ev, func(f uint64) uint64 { return capture.PackFrame(idx, f) })
		a.mu.Lock()
		done, ok := a.committed[r.partition]
		a.mu.Unlock()
		a.replaying = ok && r.offset < done
		a.sink.Event(&a.ev)
		a.replaying = false
	}
	if a.o.Group != "" {
		a.merged = append(a.merged, &kgo.Record{Topic: a.topic, Partition: r.partition, Offset: r.offset})
	}
}

// commit commits the offsets of the records merged so far (group mode).
func (a *Aggregator) commit(ctx context.Context) {
	if len(a.merged) == 0 {
		return
	}
	if err := a.client.CommitRecords(ctx, a.merged...); err != nil {
		if ctx.Err() == nil {
			a.o.Logger.Warn().Err(err).Msg("fleet: committing offsets")
		}
		return // kept: committed at the next chance
	}
	a.merged = a.merged[:0]
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
