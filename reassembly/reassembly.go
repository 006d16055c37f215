// Package reassembly turns captured TCP segments into the in-order byte
// streams of each connection, both directions, for the Kafka decoder.
//
// It is a thin layer over gopacket's reassembly package, forked into
// internal/tcpasm to make in-order segments cheap ("gopacket" in this
// package means that code): gopacket keeps the out-of-order buffer, the
// sequence arithmetic and each direction's position, which this package
// reads from it (Accept's arguments, Assembler.NextSeq and Queued) and moves
// only through its per-connection operations (actions.go), never keeping a
// copy; this package decides which side of a connection is
// the client, waits a little for a late SYN before taking a connection as
// joined mid-stream (hold.go), turns every byte gopacket skips and every
// hole the other side acknowledged into an explicit Gap (acked.go), hands
// bytes cut by the snap length on as a Cut, flushes idle connections by
// packet time, and replays whatever a flush produces in a deterministic
// order. The common segment, in order on a connection with nothing
// waiting, takes a fast path (inorder.go) that makes the same calls
// without gopacket's Accept and ScatterGather. Nothing here starts a
// goroutine: every Stream call happens inside Add, IdleFlush or Close, on
// the caller's goroutine.
//
// Captures as operators take them (SPEC.md 2.1): packets reordered within
// 1 s and 64 packets of a connection give the same calls as in order. A
// connection whose SYN or SYN-ACK comes that late is observed from its
// start; a hole is given up as lost only once acknowledged that long; a
// segment that acknowledges bytes of the other side not delivered yet waits
// for them, so that an answer never reaches a Stream before its question.
// The segments kept aside meanwhile are copies, bounded in bytes over all
// connections (Options.MaxHeldBytes), past which nothing more waits.
//
// Bounds (issue 12): the connection table is capped and split into parts
// that a sharded pipeline keeps whole (table.go); a connection without
// data is a compact embryo, not a connection (embryo.go); the out-of-order
// buffer's cap is shared out to the same parts.
//
// Concurrency: a Reassembler is used by one goroutine. There is no
// package-level state, so one Reassembler per worker shard (by flow hash) is
// fine.
//
// Buffers: the bytes handed to Stream.Data belong to the Reassembler (most
// often they point into the captured packet, or into a copy it kept aside)
// and are valid only during the call; a Stream copies what it keeps.
//
// Snaplen-cut segments: capture.Segment.Cut gives the number of bytes the
// snap length took off a segment, from the IP length. They are delivered in
// their place as a Cut (not a Gap: nothing is lost but their content) as
// soon as the stream reaches them, the fork skipping them (see actions.go).
// When the IP length is unknown (Cut 0), the
// hole after the captured bytes is forced out as a Gap as soon as its end
// is known: from the next segment on that side, the peer's ACK, or data
// already buffered beyond it; only such a segment that is the last of its
// side, never acknowledged, leaves its tail unreported. Truncated comes
// after what the cut segment released.
//
// Meta: Data carries the flow.Meta of the packet that carried the bytes when
// they were buffered behind a hole forced out (acknowledged, cut, the buffer
// cap, a flush), as Wireshark shows them; otherwise that of the packet whose
// arrival released them: for in-order data the packet that carried them,
// for data released from the out-of-order buffer the packet that completed
// the in-order run. A Gap or Cut carries the flow.Meta of the data after it, or
// failing that the packet or flush that forced it out (Close: the flow.Meta given
// to Close).
package reassembly

import (
	"math"
	"slices"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/rs/zerolog"

	"github.com/kwatch/kwatch/capture"
	"github.com/kwatch/kwatch/flow"
	"github.com/kwatch/kwatch/reassembly/internal/tcpasm"
)

// Flow describes a connection when it is opened.
type Flow struct {
	// ConnID names the connection as every stage names it; its
	// StartFrame is the frame of the first packet seen of this
	// connection, which tells apart connections that reuse a 4-tuple.
	flow.ConnID
	// FromStart: a SYN or SYN-ACK was seen, possibly late (hold.go), so
	// the client's stream starts at its first byte.
	FromStart bool
}

// compare orders flows for deterministic replay, in kwatch's one
// connection order (flow.ConnID.Compare).
func (f *Flow) compare(g *Flow) int {
	return f.ConnID.Compare(g.ConnID)
}

// Stream receives one connection's bytes. Calls for a connection come in
// order; calls for different connections interleave in capture order.
// A Stream must not call back into the Reassembler.
type Stream interface {
	// Data delivers in-order bytes of side, each exactly once. p is valid
	// only during the call.
	Data(side flow.Side, p []byte, m flow.Meta)
	// Gap says lost bytes were never seen on side; the next Data on side
	// starts after them. Lost bytes are never glued silently.
	Gap(side flow.Side, lost int, m flow.Meta)
	// Truncated says a segment cut by the capture's snap length was seen
	// on side. Its missing bytes come later: as a Cut when the IP length
	// told how many there were, else as a Gap.
	Truncated(side flow.Side, m flow.Meta)
	// Cut says n bytes of side were on the wire but not in the capture
	// (the snap length cut them): unlike a Gap, their number and place are
	// known, and the next Data on side starts right after them.
	Cut(side flow.Side, n int, m flow.Meta)
	// End is called once, last: FIN or RST, idle flush, or Close.
	End(m flow.Meta)
}

// Opener opens a Stream for a new connection. It returns nil to ignore the
// connection: no more calls are made for it.
type Opener interface {
	Open(f Flow) Stream
}

// OpenerFunc adapts a function to Opener.
type OpenerFunc func(f Flow) Stream

// Open calls fn(f).
func (fn OpenerFunc) Open(f Flow) Stream { return fn(f) }

// Defaults for zero Options fields.
const (
	DefaultIdleTimeout             = 10 * time.Minute
	DefaultMaxBufferedPagesPerConn = 4096 // pages of 1800 bytes, one or more per segment: ~7.4 MB
	// A page takes 2,048 bytes of memory (1,800 of data): 49,152 pages,
	// 1,536 a part of the connection table (table.go), hold at most 100 MB.
	DefaultMaxBufferedPagesTotal = 3 << 14
)

// Options configure a Reassembler. Zero values take the defaults above.
type Options struct {
	// BrokerPorts are the ports the user named: the side on such a port is
	// the broker, and segments with neither port listed are dropped before
	// any connection is opened. Empty: every connection is opened.
	BrokerPorts []uint16
	// IdleTimeout ends connections that saw no packet for this long, and
	// gives up on holes older than this, in packet time.
	IdleTimeout time.Duration
	// MaxBufferedPagesPerConn caps the out-of-order data held for one
	// connection; reaching it skips to the first buffered byte (a Gap).
	// Negative: no cap.
	MaxBufferedPagesPerConn int
	// MaxBufferedPagesTotal caps it over all connections: each part of the
	// connection table (table.go) holds its share, so that the cap is the
	// same, and bites the same way, for any number of workers. Negative:
	// no cap.
	MaxBufferedPagesTotal int
	// MaxHeldBytes caps the payload copied aside over all connections
	// while a connection waits for a late SYN or a segment for the bytes
	// it acknowledges (SPEC.md 2.1): past it nothing more waits. Like the
	// out-of-order cap it is shared out to the parts of the connection
	// table, so that it is over all workers and bites the same way for any
	// number of them. Negative: nothing waits.
	MaxHeldBytes int
	// MaxConnections caps the connection table (see table.go): past it the
	// least recently active connections are evicted, those that carried
	// no data first. 0: DefaultMaxConnections; negative: no cap.
	MaxConnections int
	// ExternalIdleFlush: Add never flushes idle connections; the caller
	// calls IdleFlush, driven by an IdleClock over all segments (sharding).
	ExternalIdleFlush bool
	// Logger is for debug logging. Nothing logs at present: the one line
	// there was said that our copy of a position had gone out of step with
	// tcpasm's, and tcpasm now holds the only one.
	Logger zerolog.Logger
}

// Stats counts what the Reassembler saw. Connection counts exclude
// connections on ports not in BrokerPorts, which are never opened.
type Stats struct {
	Segments   uint64 // segments given to Add
	Filtered   uint64 // segments with neither port in BrokerPorts
	Opened     uint64 // connections opened with a Stream
	Ignored    uint64 // connections the Opener declined
	Ended      uint64 // Stream.End calls
	IdleEnded  uint64 // of those, by idle flush
	Bytes      uint64 // bytes delivered by Data
	Gaps       uint64 // Gap calls
	BytesLost  uint64 // sum of their lost counts
	OutOfOrder uint64 // segments buffered ahead of a hole
	Overflow   uint64 // gaps forced by the buffer caps
	AckedHoles uint64 // gaps given up because the other side acknowledged past them
	Truncated  uint64 // snaplen-cut segments
	TruncFills uint64 // holes forced out after a snaplen-cut segment
	Cuts       uint64 // Cut calls
	BytesCut   uint64 // sum of their counts
	Restarts   uint64 // connections ended by a new SYN on their 4-tuple
	Held       uint64 // connections held for a late SYN (see hold.go)
	LateSYNs   uint64 // of those, observed from their start after all
	Evicted    uint64 // connections evicted by Options.MaxConnections
	// HeldCapped counts what Options.MaxHeldBytes cut short: connections
	// not held, or held no longer, for a late SYN, and segments not
	// deferred for the bytes they acknowledge.
	HeldCapped uint64
}

// Add adds t's counters to s (the shards of a sharded run).
func (s *Stats) Add(t Stats) {
	s.Segments += t.Segments
	s.Filtered += t.Filtered
	s.Opened += t.Opened
	s.Ignored += t.Ignored
	s.Ended += t.Ended
	s.IdleEnded += t.IdleEnded
	s.Bytes += t.Bytes
	s.Gaps += t.Gaps
	s.BytesLost += t.BytesLost
	s.OutOfOrder += t.OutOfOrder
	s.Overflow += t.Overflow
	s.AckedHoles += t.AckedHoles
	s.Truncated += t.Truncated
	s.TruncFills += t.TruncFills
	s.Cuts += t.Cuts
	s.BytesCut += t.BytesCut
	s.Restarts += t.Restarts
	s.Held += t.Held
	s.LateSYNs += t.LateSYNs
	s.Evicted += t.Evicted
	s.HeldCapped += t.HeldCapped
}

// flushEvery is how often, in packet time, idle connections are looked for.
const flushEvery = time.Second

// Reassembler feeds segments to one gopacket Assembler and calls Streams.
type Reassembler struct {
	opts Options
	op   Opener
	asm  *tcpasm.Assembler

	cur     pktCtx           // the packet (or flush) being handled
	seg     *capture.Segment // the real segment being assembled, nil otherwise
	curConn *conn            // the connection whose Accept saw seg
	// forcing: a hole is being given up, or a side closed, by the
	// Reassembler (actions.go), not by a segment or a flush.
	forcing bool
	// truncConn: the segment being added was cut by the snap length, on
	// truncSide of this connection (see Accept).
	truncConn *conn
	truncSide flow.Side
	// replaying: seg is handed to gopacket a second time (see actReplay).
	replaying bool
	post      []action

	// holding lists the connections held for a late SYN, in creation
	// order; release those decided, whose held segments go to gopacket
	// once the segment being added is done. heldCap is each table part's
	// share of Options.MaxHeldBytes (part.held).
	holding []*conn
	release []*conn
	heldCap int
	// acking lists the connections with a hole acknowledged (acked.go);
	// deferring those with deferred segments; noDefer: at Close, nothing
	// waits any more.
	acking    []*conn
	deferring []*conn
	noDefer   bool
	releasing bool // in releaseDecided

	clock  IdleClock // when idle flushes happen, unless ExternalIdleFlush
	nextID uint64
	closed bool

	// flushing: a flush or the input's end is under way; collecting: the
	// Stream calls it makes are collected, to be replayed in order.
	flushing   bool
	collecting bool
	flushed    []flushEvent // Stream calls collected during a flush
	arena      []byte       // their bytes
	touched    []*conn

	// The connection table's cap (table.go) and its embryos (embryo.go).
	parts     [Partitions]part
	perPart   int   // each part's share of Options.MaxConnections
	overParts []int // parts that grew over their share
	emb       embTable
	// promoting: the embryo the segment being added promotes, or -1;
	// replayingEmbryo: its records are being added again.
	promoting       int32
	replayingEmbryo bool
	conns           []tcpasm.Stream // Close's snapshot of the pool

	stats Stats
	// noInOrder: tests compare the in-order fast path (inOrder) with
	// assemble; inOrders counts the segments it took.
	noInOrder bool
	inOrders  uint64
}

// pktCtx is the AssemblerContext of every call: one per Reassembler, so
// handing it to gopacket allocates nothing. The fork's pages keep the frame
// number handed with each segment: that is how data behind a hole given up
// keeps its packets' frames (see flow.Meta above).
type pktCtx struct {
	meta      flow.Meta
	rst       bool
	truncated bool
	cut       int // capture.Segment.Cut
}

// GetCaptureInfo is called only when the fork cuts pages from a segment,
// not for every segment.
func (c *pktCtx) GetCaptureInfo() gopacket.CaptureInfo {
	return gopacket.CaptureInfo{Timestamp: c.meta.Time}
}

// New returns a Reassembler that opens connections through op.
func New(opts Options, op Opener) *Reassembler {
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	if opts.MaxBufferedPagesPerConn == 0 {
		opts.MaxBufferedPagesPerConn = DefaultMaxBufferedPagesPerConn
	}
	if opts.MaxBufferedPagesTotal == 0 {
		opts.MaxBufferedPagesTotal = DefaultMaxBufferedPagesTotal
	}
	if opts.MaxHeldBytes == 0 {
		opts.MaxHeldBytes = DefaultMaxHeldBytes
	}
	r := &Reassembler{opts: opts, op: op, emb: newEmbTable(), promoting: -1}
	switch {
	case opts.MaxConnections == 0:
		r.perPart = DefaultMaxConnections / Partitions
	case opts.MaxConnections < 0:
		r.perPart = math.MaxInt
	default:
		r.perPart = max(opts.MaxConnections/Partitions, 1)
	}
	for i := range r.parts {
		r.parts[i].emb = embList{head: -1, tail: -1}
	}
	pool := tcpasm.NewStreamPool(factory{r})
	pool.OnRemove = func(s tcpasm.Stream) { r.forget(s) }
	r.asm = tcpasm.NewAssembler(pool)
	r.asm.ReopenOnReuse = true
	r.asm.MaxBufferedPagesPerConnection = max(opts.MaxBufferedPagesPerConn, 0)
	// The total cap is shared out to the table's parts, so that it is
	// over all workers and bites the same way for any number of them.
	if opts.MaxBufferedPagesTotal > 0 {
		r.asm.MaxBufferedPagesTotal = max(opts.MaxBufferedPagesTotal/Partitions, 1)
	}
	// So is the cap on held bytes.
	r.heldCap = -1
	if opts.MaxHeldBytes > 0 {
		r.heldCap = max(opts.MaxHeldBytes/Partitions, 1)
	}
	r.asm.Groups = Partitions
	r.asm.PageGroup = func(s tcpasm.Stream) int { return int(s.(*conn).part) }
	return r
}

// Stats returns the counters so far.
func (r *Reassembler) Stats() Stats { return r.stats }

// Add reassembles one segment. Segments come in capture order. The
// connection is found by s.Src and s.Dst (addresses and ports); s.TCP
// gives flags, sequence numbers and payload. Add after Close does nothing.
func (r *Reassembler) Add(s *capture.Segment) {
	if r.closed {
		return
	}
	r.stats.Segments++
	if !r.wanted(s) {
		r.stats.Filtered++
		return
	}
	// Time passes before the segment is handled: a connection idle for
	// too long ends first, and its 4-tuple opens a new one. Idle
	// connections are looked for once per second of packet time.
	if !r.opts.ExternalIdleFlush {
		if m, ok := r.clock.Tick(s.Frame, s.Time); ok {
			r.idleFlush(m)
		}
	}
	if r.noInOrder || !r.inOrder(s) {
		r.assemble(s)
	}
	if len(r.overParts) > 0 {
		r.evictOver()
	}
}

// assemble hands one segment to gopacket and runs what it scheduled.
func (r *Reassembler) assemble(s *capture.Segment) {
	r.cur.meta = flow.Meta{Frame: s.Frame, Time: s.Time}
	r.cur.rst, r.cur.truncated, r.cur.cut = s.TCP.RST, s.Truncated, s.Cut
	r.seg, r.curConn = s, nil
	r.asm.AssembleAddrs(s.Src, s.Dst, &s.TCP, s.Time, s.Frame, &r.cur)
	if r.promoting >= 0 {
		i := r.promoting
		r.promoting, r.seg = -1, nil
		r.promote(i, s)
		return
	}
	if len(r.post) > 0 {
		r.runPost()
	}
	c := r.curConn
	if c != nil && c.holesToForce() {
		r.forceTruncHoles(c)
	}
	if tc := r.truncConn; tc != nil {
		r.truncConn = nil
		if !tc.ended { // the segment's FIN or RST ended it: nothing more
			tc.emit(evTruncated, r.truncSide, nil, 0)
		}
	}
	r.seg, r.curConn = nil, nil
	if c != nil {
		// Either may add segments again (assemble within assemble).
		if c.acking {
			r.checkAcks(c, r.cur.meta.Time, false)
		}
		if c.waiting {
			r.redeliver(c)
		}
	}
	if len(r.release) > 0 {
		r.releaseDecided()
	}
}

// Close ends the input: every hole still open becomes a Gap, and every
// open connection ends, in order of StartFrame. Later Adds are ignored.
func (r *Reassembler) Close(m flow.Meta) {
	if r.closed {
		return
	}
	r.Drain(m)
	r.cur = pktCtx{meta: m}
	// In replay order, one connection after the other: the calls need not
	// be collected, nor everything still buffered copied aside.
	r.flushing = true
	r.closeAll()
	r.flushing = false
	r.closed = true
}

// closeAll ends every connection and embryo, one after the other in
// replay order.
func (r *Reassembler) closeAll() {
	r.conns = r.asm.Streams(r.conns[:0])
	r.asm.EndInput()
	slices.SortFunc(r.conns, func(x, y tcpasm.Stream) int { return x.(*conn).compare(y.(*conn)) })
	embs := r.embryosInOrder()
	for len(r.conns) > 0 || len(embs) > 0 {
		if len(embs) == 0 || len(r.conns) > 0 && r.conns[0].(*conn).flow.compare(r.emb.flowOf(embs[0].i)) <= 0 {
			c := r.conns[0].(*conn)
			// Ended and out of the pool, a connection's state is freed
			// while the rest end (100k open connections: a third of the
			// peak heap was kept to the end).
			r.conns[0] = nil
			r.conns = r.conns[1:]
			r.asm.FlushConn(c.flow.Client, c.flow.Broker, true)
			continue
		}
		r.endEmbryo(embs[0].i)
		embs = embs[1:]
	}
	r.conns = nil
}

// Drain ends the waits of the input's end, before Close ends the
// connections: connections held for a late SYN are taken as joined
// mid-stream, holes acknowledged become Gaps, deferred segments are added.
// Its calls come in one batch, like a flush's, so that a connection does
// not end before the next one's held bytes are delivered. Close drains
// first if Drain was not called; after Drain nothing waits any more.
func (r *Reassembler) Drain(m flow.Meta) {
	if r.closed || r.noDefer {
		return
	}
	r.cur = pktCtx{meta: m}
	r.flushing, r.collecting = true, true
	r.releaseAged(m.Time, true)
	r.cur = pktCtx{meta: m}
	// Lost bytes first, then what waited for them, in order; then
	// whatever still waits.
	r.checkAllAcks(m.Time, true)
	r.redeliverAll()
	r.noDefer = true
	r.checkAllAcks(m.Time, true)
	r.redeliverAll()
	r.evictOver()
	r.flushing, r.collecting = false, false
	r.replay(false)
}

// wanted reports whether s belongs to a connection on a broker port.
func (r *Reassembler) wanted(s *capture.Segment) bool {
	if len(r.opts.BrokerPorts) == 0 {
		return true
	}
	return r.isBrokerPort(s.Src.Port()) || r.isBrokerPort(s.Dst.Port())
}

func (r *Reassembler) isBrokerPort(p uint16) bool {
	for _, b := range r.opts.BrokerPorts {
		if b == p {
			return true
		}
	}
	return false
}

// factory opens a conn for each connection gopacket meets.
type factory struct{ r *Reassembler }

func (f factory) New(_, _ gopacket.Flow, t *layers.TCP, _ tcpasm.AssemblerContext) tcpasm.Stream {
	r := f.r
	s := r.seg
	if s == nil {
		return nil
	}
	if !r.replayingEmbryo && r.embryo(s) {
		return nil
	}
	// A lone RST opens nothing: it ends a connection we never saw.
	if t.RST {
		return nil
	}
	clientIsSrc, fromStart := r.orient(s)
	fl := Flow{ConnID: flow.ConnID{Client: s.Src, Broker: s.Dst, StartFrame: s.Frame}, FromStart: fromStart}
	if !clientIsSrc {
		fl.Client, fl.Broker = s.Dst, s.Src
	}
	r.nextID++
	c := &conn{r: r, id: r.nextID, flow: fl, firstIsClient: clientIsSrc}
	capped := r.parts[Partition(s.Src, s.Dst)].held >= r.heldCap
	if capped && r.heldCap >= 0 && !fromStart {
		r.stats.HeldCapped++
	}
	if !fromStart && !capped {
		// Its SYN may come later: see hold.go.
		c.holding, c.x().heldSince = true, s.Time
		r.holding = append(r.holding, c)
		r.stats.Held++
		r.admit(c)
		return c
	}
	r.open(c)
	r.admit(c)
	return c
}

// embryo handles s when it belongs to an embryo, or starts one: it
// reports whether s is taken care of (no conn is to be made for it now).
func (r *Reassembler) embryo(s *capture.Segment) bool {
	if i := r.emb.find(s.Src, s.Dst); i >= 0 {
		if !pure(s) || !r.record(i, s) {
			r.promoting = i // once gopacket is done with s
		}
		return true
	}
	if s.TCP.SYN && pure(s) {
		r.newEmbryo(s)
		return true
	}
	return false
}

// open opens c's Stream.
func (r *Reassembler) open(c *conn) {
	if r.op != nil {
		c.s = r.op.Open(c.flow)
	}
	if c.s == nil {
		r.stats.Ignored++
	} else {
		r.stats.Opened++
	}
}

// orient decides whether the sender of a connection's first segment is the
// client, and whether the connection was seen from its start.
func (r *Reassembler) orient(s *capture.Segment) (clientIsSrc, fromStart bool) {
	t := &s.TCP
	switch {
	case t.SYN && !t.ACK:
		return true, true
	case t.SYN && t.ACK:
		return false, true
	}
	sp, dp := s.Src.Port(), s.Dst.Port()
	if sb, db := r.isBrokerPort(sp), r.isBrokerPort(dp); sb != db {
		return db, false
	}
	const ephemeral = 32768
	if (sp < ephemeral) != (dp < ephemeral) {
		return dp < ephemeral, false
	}
	return true, false
}
