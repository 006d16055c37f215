package pipeline

import (
	"cmp"
	"context"
	"errors"
	"io"
	"sync"

	"github.com/kwatch/kwatch/capture"
	"github.com/kwatch/kwatch/decode"
	"github.com/kwatch/kwatch/flow"
	"github.com/kwatch/kwatch/reassembly"
	"github.com/kwatch/kwatch/tlsdec"
)

// The sharded run (Options.Workers > 1) splits the work over goroutines
// while producing exactly the single-goroutine run's event sequence:
//
//   - the reader (one goroutine) reads packets, decodes their layers,
//     applies the port filter, runs the one IdleClock over all segments, and
//     appends each packet to the input of the worker its connection hashes
//     to (symmetric in the two endpoints, so both directions go to the same
//     worker). A source that can retain packet data (capture.Retainer, every
//     file) hands its packets over uncopied, and the merger releases them
//     batch by batch; other packets are copied into the batch's arena. It
//     also records the batch's steps in capture order: "segment for worker
//     w", "idle flush" (every worker), "close" (every worker).
//   - each worker owns a LayerDecoder, a Reassembler (ExternalIdleFlush)
//     and the decoders of its connections; it decodes its packets' layers
//     again (cheaper than handing decoded segments over) and copies the
//     events the decoders emit, tagged with the step that caused them, into
//     its part of the batch.
//   - the merger (the caller of Run) takes batches in order and replays
//     their steps: a segment step's events come from its worker alone; a
//     flush or close step's events are merged across workers connection by
//     connection in Flow order (StartFrame, client, broker), the order in
//     which one Reassembler replays a flush. The sink, and so the auditor
//     with its cross-connection rules, stays on one goroutine.

const (
	batchSteps   = 2048 // segments (steps) per batch
	batchesInUse = 4    // batches in flight between reader and merger
	// maxArenaBatch ends a batch once a worker's arena holds this many
	// bytes. Arenas are allocated once with room for it plus one record
	// (arenaCap) so that appending never reallocates: memory stays at
	// batchesInUse * workers * arenaCap (about 18 MB for 2 workers)
	// whatever the capture, where growing arenas by append left the GC
	// with ~120 MB on a capture of 64 KiB segments.
	maxArenaBatch = 2 << 20
	arenaCap      = maxArenaBatch + capture.DefaultMaxRecord
	// maxMarksBatch ends a batch of retained packets once the source's
	// mark moved this far (one 2 MiB readahead chunk), so that the batches in
	// flight never hold all of the source's chunks.
	maxMarksBatch = 1
)

type stepKind uint8

const (
	stepSegment stepKind = iota
	stepFlush
	stepDrain // reassembly.Reassembler.Drain, before stepClose
	stepClose
)

type step struct {
	kind   stepKind
	worker uint16
	meta   int32 // flush and close: index in batch.metas
}

// segRef is a packet handed to a worker: its Data is retained by the
// source or points into the part's arena.
type segRef struct {
	step int32
	pkt  capture.Packet
}

// outEvent is an event copied out of a worker: ClientID lives in the
// worker's event arena at cid (cidLen -1: nil), and points there once the
// worker is done with the batch.
type outEvent struct {
	step   int32
	cidOff int32
	cidLen int32
	ev     decode.Event
}

// part is one worker's share of a batch.
type part struct {
	in    []segRef
	arena []byte
	out   []outEvent
	cids  []byte
}

type batch struct {
	steps []step
	metas []flow.Meta
	parts []part
	wg    sync.WaitGroup
	end   bool // the last batch: the reader is done
	// Retained packets: the source's mark when the batch started, and
	// when it was sent (released once the batch is merged).
	startMark, endMark uint64
}

func (b *batch) reset() {
	b.steps = b.steps[:0]
	b.metas = b.metas[:0]
	for i := range b.parts {
		p := &b.parts[i]
		p.in = p.in[:0]
		if cap(p.arena) > arenaCap {
			p.arena = nil // grown by a larger record: allocated again at arenaCap
		}
		p.arena = p.arena[:0]
		p.out = p.out[:0] // what old events point to is bounded: batchesInUse batches
		p.cids = p.cids[:0]
	}
	b.end = false
}

// worker owns one shard: its Reassembler and decoders.
type worker struct {
	idx   int
	layer *capture.LayerDecoder
	reasm *reassembly.Reassembler
	// streams is what the worker's streams share; its sink is the worker.
	streams streams
	tls     tlsdec.Stats
	conns   uint64
	dec     DecoderStats
	cur     *part
	step    int32
	seg     capture.Segment
	in      chan *batch
}

// Event copies e into the current batch part (the worker is the decoders'
// sink).
func (w *worker) Event(e *decode.Event) {
	p := w.cur
	o := outEvent{step: w.step, cidLen: -1, ev: *e}
	if e.ClientID != nil {
		o.cidOff, o.cidLen = int32(len(p.cids)), int32(len(e.ClientID))
		p.cids = append(p.cids, e.ClientID...)
	}
	o.ev.ClientID = nil
	p.out = append(p.out, o)
}

func (w *worker) open(f reassembly.Flow) reassembly.Stream {
	w.conns++
	return w.streams.open(f)
}

func (w *worker) run() {
	for b := range w.in {
		w.process(b)
		b.wg.Done()
	}
}

func (w *worker) process(b *batch) {
	p := &b.parts[w.idx]
	w.cur = p
	in := p.in
	for i, st := range b.steps {
		switch st.kind {
		case stepSegment:
			if int(st.worker) != w.idx {
				continue
			}
			r := &in[0]
			in = in[1:]
			w.step = int32(i)
			if !w.layer.Decode(&r.pkt, &w.seg) {
				continue // cannot happen: the reader decoded these bytes
			}
			w.reasm.Add(&w.seg)
		case stepFlush:
			w.step = int32(i)
			w.reasm.IdleFlush(b.metas[st.meta])
		case stepDrain:
			w.step = int32(i)
			w.reasm.Drain(b.metas[st.meta])
		case stepClose:
			w.step = int32(i)
			w.reasm.Close(b.metas[st.meta])
		}
	}
	w.cur = nil
	// The client IDs' arena has stopped growing: the events can point
	// into it now, on the worker's goroutine rather than the merger's.
	for i := range p.out {
		if o := &p.out[i]; o.cidLen >= 0 {
			o.ev.ClientID = p.cids[o.cidOff : o.cidOff+o.cidLen]
		}
	}
}

// shardOf maps a connection's endpoints to a worker, the same for both
// directions: whole parts of the connection table, so that its cap bites
// the same way for any number of workers (reassembly/table.go). Which
// worker a connection gets does not change the output.
func shardOf(s *capture.Segment, n int) int {
	return reassembly.Partition(s.Src, s.Dst) % n
}

// runSharded is Run with opts.Workers > 1: the workers and the reader on
// goroutines of their own, the merger on the caller's.
func runSharded(ctx context.Context, src capture.Source, opts Options, sink decode.Sink) (Stats, error) {
	r := newShardReader(src, opts)
	var wgWorkers sync.WaitGroup
	for _, w := range r.workers {
		wgWorkers.Go(w.run)
	}
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		defer close(r.ordered)
		r.run(ctx)
	}()
	merge(r.ordered, r.free, len(r.workers), r.retainer, sink)
	<-readerDone
	for _, w := range r.workers {
		close(w.in)
	}
	wgWorkers.Wait()
	for range r.ordered { // nothing left; ordered is closed
	}
	return r.finish(), r.err
}

// shardReader is the reader of a sharded run, and owns what the run
// shares: the workers, the batches, and the run's counters.
type shardReader struct {
	src      capture.Source
	into     capture.IntoSource // src, when it can read into a packet
	opts     Options
	perBatch int
	workers  []*worker
	free     chan *batch // batches the merger is done with
	ordered  chan *batch // batches to merge, in capture order
	// retainer is the source when it retains packet data (every file):
	// its packets reach the workers uncopied (see the batch marks).
	retainer capture.Retainer

	b        *batch // being filled
	p        capture.Packet
	seg      capture.Segment
	clock    reassembly.IdleClock
	layer    *capture.LayerDecoder
	stats    Stats
	filtered uint64
	err      error // the source's, other than io.EOF
}

func newShardReader(src capture.Source, opts Options) *shardReader {
	n := opts.Workers
	r := &shardReader{
		src:      src,
		opts:     opts,
		perBatch: cmp.Or(opts.batchSteps, batchSteps),
		workers:  make([]*worker, n),
		free:     make(chan *batch, batchesInUse),
		ordered:  make(chan *batch, batchesInUse),
		layer:    capture.NewLayerDecoder(),
	}
	r.into, _ = src.(capture.IntoSource)
	if rt, ok := src.(capture.Retainer); ok && rt.Retain() {
		r.retainer = rt
	}
	dopts := decodeOptions(opts)
	for i := range r.workers {
		w := &worker{idx: i, layer: capture.NewLayerDecoder(), in: make(chan *batch, batchesInUse)}
		w.streams = streams{dec: decode.NewDecoder(dopts), sink: w, keys: opts.Keys, tls: &w.tls, into: &w.dec}
		ro := reassemblyOptions(opts)
		ro.ExternalIdleFlush = true
		w.reasm = reassembly.New(ro, reassembly.OpenerFunc(w.open))
		r.workers[i] = w
	}
	for range batchesInUse {
		r.free <- &batch{parts: make([]part, n)}
	}
	return r
}

// run reads the source to its end (or ctx's), sending full batches, and
// the last one with the drain and close steps.
func (r *shardReader) run(ctx context.Context) {
	r.b = <-r.free
	r.mark()
	r.err = r.readAll(ctx)
	b := r.b
	b.steps = append(b.steps, step{kind: stepDrain, meta: int32(len(b.metas))})
	b.steps = append(b.steps, step{kind: stepClose, meta: int32(len(b.metas))})
	b.metas = append(b.metas, flow.Meta{Frame: r.stats.LastFrame, Time: r.stats.LastTime})
	r.send(true)
}

// readAll batches the source's packets up to its end or ctx's, and
// returns its error other than io.EOF, or a *capture.ShrunkError (see
// Engine.readAll).
func (r *shardReader) readAll(ctx context.Context) (runErr error) {
	defer capture.GuardFaults()()
	defer capture.CatchFault(&runErr)
	for {
		if r.stats.Packets%checkEvery == 0 && ctx.Err() != nil {
			return nil
		}
		var err error
		if r.into != nil {
			err = r.into.NextInto(&r.p)
		} else {
			r.p, err = r.src.Next()
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if r.add() {
			r.send(false)
		}
	}
}

// add puts packet r.p into the batch: a flush step first when the idle
// clock ticks, then a segment step for its connection's worker. It tells
// whether the batch is full.
func (r *shardReader) add() bool {
	p, b := &r.p, r.b
	r.stats.count(p)
	if !r.layer.Decode(p, &r.seg) {
		r.stats.NotTCP++
		return false
	}
	if !wanted(r.opts.Ports, &r.seg) {
		r.filtered++
		return false
	}
	if m, ok := r.clock.Tick(r.seg.Frame, r.seg.Time); ok {
		b.steps = append(b.steps, step{kind: stepFlush, meta: int32(len(b.metas))})
		b.metas = append(b.metas, m)
	}
	wi := shardOf(&r.seg, len(r.workers))
	pt := &b.parts[wi]
	// A reassembled datagram goes to the worker whole: its decoder never
	// sees the fragments before it.
	dg, reassembled := r.layer.Reassembled(p)
	if reassembled {
		*p = dg
	}
	if r.retainer == nil || reassembled {
		pt.keep(p)
	}
	pt.in = append(pt.in, segRef{step: int32(len(b.steps)), pkt: *p})
	b.steps = append(b.steps, step{kind: stepSegment, worker: uint16(wi)})
	return len(b.steps) >= r.perBatch || len(pt.arena) >= maxArenaBatch ||
		r.retainer != nil && r.retainer.Mark()-b.startMark >= maxMarksBatch
}

// keep copies p's data into the part's arena: the source reuses it.
func (pt *part) keep(p *capture.Packet) {
	if pt.arena == nil {
		pt.arena = make([]byte, 0, arenaCap)
	}
	off := len(pt.arena)
	pt.arena = append(pt.arena, p.Data...)
	p.Data = pt.arena[off:len(pt.arena):len(pt.arena)]
}

// mark notes where the source's retained data stood when the batch began.
func (r *shardReader) mark() {
	if r.retainer != nil {
		r.b.startMark = r.retainer.Mark()
	}
}

// send hands the batch to the merger and the workers and, unless it is the
// last, takes a free one.
func (r *shardReader) send(last bool) {
	b := r.b
	b.end = last
	if r.retainer != nil {
		b.endMark = r.retainer.Mark()
	}
	b.wg.Add(len(r.workers))
	r.ordered <- b
	for _, w := range r.workers {
		w.in <- b
	}
	if last {
		return
	}
	r.b = <-r.free
	r.b.reset()
	r.mark()
}

// finish sums the run's counters once every goroutine has ended.
func (r *shardReader) finish() Stats {
	stats := r.stats
	stats.Layers = r.layer.Stats()
	stats.Tunnels = r.layer.Unwrapped()
	stats.Fragments = r.layer.Fragments()
	stats.Reassembly.Segments = r.filtered
	stats.Reassembly.Filtered = r.filtered
	for _, w := range r.workers {
		stats.Connections += w.conns
		stats.TLS.Add(w.tls)
		stats.Decoders.add(w.dec)
		stats.Reassembly.Add(w.reasm.Stats())
	}
	return stats
}

// merge is the merger, on the caller's goroutine: it takes the batches in
// order, waits for their workers, and replays their events to sink.
func merge(ordered <-chan *batch, free chan<- *batch, workers int, retainer capture.Retainer, sink decode.Sink) {
	pos := make([]int, workers)
	for b := range ordered {
		b.wg.Wait()
		clear(pos)
		b.replay(pos, sink)
		if retainer != nil {
			retainer.Release(b.endMark)
		}
		if b.end {
			return
		}
		free <- b
	}
}

// replay hands the batch's events to sink step by step; pos[w] is how many
// of worker w's events were handed over. An event is handed over where it
// lies in the batch: a sink must not modify it, so one copy (the
// worker's) is enough.
func (b *batch) replay(pos []int, sink decode.Sink) {
	for i, st := range b.steps {
		si := int32(i)
		if st.kind != stepSegment {
			b.replayMerged(si, pos, sink)
			continue
		}
		pi := int(st.worker)
		out := b.parts[pi].out
		for pos[pi] < len(out) && out[pos[pi]].step == si {
			sink.Event(&out[pos[pi]].ev)
			pos[pi]++
		}
	}
}

// replayMerged hands over a flush or close step's events, merged across
// workers connection by connection in Flow order.
func (b *batch) replayMerged(si int32, pos []int, sink decode.Sink) {
	for {
		best := -1
		for pi := range b.parts {
			out := b.parts[pi].out
			if pos[pi] >= len(out) || out[pos[pi]].step != si {
				continue
			}
			if best < 0 || out[pos[pi]].ev.Conn.Compare(b.parts[best].out[pos[best]].ev.Conn) < 0 {
				best = pi
			}
		}
		if best < 0 {
			return
		}
		out := b.parts[best].out
		c := out[pos[best]].ev.Conn
		for pos[best] < len(out) && out[pos[best]].step == si && out[pos[best]].ev.Conn == c {
			sink.Event(&out[pos[best]].ev)
			pos[best]++
		}
	}
}

// wanted is reassembly's port filter: with ports named, a segment must have
// one of them on either end.
func wanted(ports []uint16, s *capture.Segment) bool {
	if len(ports) == 0 {
		return true
	}
	sp, dp := s.Src.Port(), s.Dst.Port()
	for _, p := range ports {
		if p == sp || p == dp {
			return true
		}
	}
	return false
}
