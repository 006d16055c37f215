package reassembly

import (
	"slices"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/kwatch/kwatch/capture"
	"github.com/kwatch/kwatch/flow"

	"github.com/kwatch/kwatch/reassembly/internal/dlist"
	"github.com/kwatch/kwatch/reassembly/internal/tcpasm"
)

// seq is a TCP sequence number with gopacket's wrap-around arithmetic.
type seq = tcpasm.Sequence

// conn is one connection: gopacket's Stream for it, and our view of both
// halves. It lives until gopacket drops it after End.
//
// What every segment reads comes first, the rest after, to touch fewer
// cache lines per segment.
type conn struct {
	r *Reassembler
	s Stream // nil: the Opener ignored the connection
	// firstIsClient: gopacket's TCPDirClientToServer half (the direction
	// of the first packet) is the client's.
	firstIsClient bool
	ended         bool
	touched       bool // in r.touched during a flush
	acking        bool // in r.acking: a half has a hole acknowledged (acked.go)
	// holding: the connection waits for a late SYN (see hold.go), its
	// segments in held since heldSince; no Stream is open yet.
	holding bool
	waiting bool    // len(deferred) > 0, read without touching it
	pkts    uint64  // segments of the connection handed to Accept
	half    [2]half // by flow.Side

	id   uint64 // creation order, the last tie-break of replay order
	flow Flow
	// Its place in the connection table (table.go).
	dlist.Links[conn]
	part   uint8
	on     uint8
	active bool // a packet came since it was last put at its list's back
	// Rarely used, allocated when first needed: only when packets are
	// out of order, lost, or cut by the snap length.
	rare *connRare
	// last is the connection's last packet. Its End carries it: an end
	// found at another connection's packet (idle time passed, the
	// 4-tuple reused, the capture over) happened after the last packet
	// of its own, which is the one a person looks for.
	last flow.Meta
}

// connRare is the part of a conn that only reordering and loss need,
// apart so that the many connections without either cost less.
type connRare struct {
	held      []capture.Segment
	heldSince time.Time
	// deferred holds segments waiting for the bytes they acknowledge
	// (acked.go), in capture order.
	deferred []capture.Segment
	acks     [2]ackState // by flow.Side
	lists    [2]cutLists // by Side: only captures with a snap length have them
}

// cutLists holds what snaplen-cut segments of a side left: trunc, where
// those of unknown length end (a hole starting there will never be
// filled); cuts, the bytes those of known IP length lost (when the position
// reaches one, it is delivered as a Cut).
type cutLists struct {
	trunc []seq
	cuts  []span
}

// noLists is the cutLists of a conn without a rare part; never appended to.
var noLists cutLists

// lists returns side's cutLists, to read.
func (c *conn) lists(side flow.Side) *cutLists {
	if c.rare == nil {
		return &noLists
	}
	return &c.rare.lists[side]
}

// x returns c's rare part, allocating it.
func (c *conn) x() *connRare {
	if c.rare == nil {
		c.rare = &connRare{}
	}
	return c.rare
}

// span is a sequence range [from, to).
type span struct{ from, to seq }

// half is our view of one direction, beside the position tcpasm holds for
// it (conn.pos): the sequence number of the next in-order byte, which only
// tcpasm keeps and moves.
type half struct {
	started bool
	closed  bool
	synSeen bool
	// captured: a segment of this side was seen. A side never captured
	// (asymmetric routing, a mirror of one direction) loses nothing the
	// other acknowledges: nothing of it was to be had.
	captured bool
	gap      int // lost bytes not reported yet
	cut      int // cut bytes not reported yet
	start    seq // the position when the half started
	isn      seq // sequence number of its SYN, if synSeen
}

// pos returns side's position: the sequence number of its next in-order
// byte, as tcpasm holds it; negative before the side started. During
// ReassembledSG it is already past the bytes delivered.
func (c *conn) pos(side flow.Side) seq {
	return c.r.asm.NextSeq(c.sender(side), c.sender(side.Other()))
}

// prune drops the ranges side's position has passed. The check is apart so
// that it inlines: the lists are empty for in-order traffic, and the
// position is not looked up.
func (c *conn) prune(side flow.Side) {
	if c.rare != nil {
		if l := &c.rare.lists[side]; len(l.trunc) > 0 || len(l.cuts) > 0 {
			l.prune(c.pos(side))
		}
	}
}

func (h *cutLists) prune(pos seq) {
	h.cuts = slices.DeleteFunc(h.cuts, func(s span) bool { return pos.Difference(s.to) <= 0 })
	h.trunc = slices.DeleteFunc(h.trunc, func(t seq) bool { return pos.Difference(t) < 0 })
}

// cutAt returns where the snaplen cut that holds the byte at pos ends.
func (h *cutLists) cutAt(pos seq) (seq, bool) {
	for _, s := range h.cuts {
		if s.from.Difference(pos) >= 0 && pos.Difference(s.to) > 0 {
			return s.to, true
		}
	}
	return 0, false
}

// forcedEnd says where the hole at side's position pos ends when it is one
// that will never be filled: a snaplen cut of known length (cut), or one of
// unknown length up to the first buffered data.
func (c *conn) forcedEnd(side flow.Side, pos seq) (to seq, cut, ok bool) {
	h := c.lists(side)
	if to, ok := h.cutAt(pos); ok {
		return to, true, true
	}
	if h.truncHole(pos) {
		to, ok := c.queued(side)
		return to, false, ok
	}
	return 0, false, false
}

// holesToForce reports whether a half may hold a hole that forceTruncHoles
// must force out. The check inlines: the lists are empty unless the capture
// has a snap length.
func (c *conn) holesToForce() bool {
	return c.rare != nil && c.rare.holes()
}

func (x *connRare) holes() bool {
	return len(x.lists[flow.Client].trunc)|len(x.lists[flow.Broker].trunc)|len(x.lists[flow.Client].cuts)|len(x.lists[flow.Broker].cuts) != 0
}

// truncHole reports whether the byte at pos is the first byte a snaplen
// cut took away.
func (h *cutLists) truncHole(pos seq) bool {
	for _, t := range h.trunc {
		if t == pos {
			return true
		}
	}
	return false
}

// queued returns where the first data tcpasm buffered beyond side's
// position starts: a hole may be forced out only up to it.
func (c *conn) queued(side flow.Side) (seq, bool) {
	return c.r.asm.Queued(c.sender(side), c.sender(side.Other()))
}

// side maps gopacket's direction (relative to the first packet) to a flow.Side.
func (c *conn) side(dir tcpasm.TCPFlowDirection) flow.Side {
	if (dir == tcpasm.TCPDirClientToServer) == c.firstIsClient {
		return flow.Client
	}
	return flow.Broker
}

// Accept is called by gopacket for every segment of the connection before
// it handles it, with the positions of the segment's side (nextSeq) and of
// the other (revSeq), negative before a side started. It orients and
// starts halves, records what gopacket will buffer, and schedules the
// actions that run after it (actions.go).
func (c *conn) Accept(t *layers.TCP, _ gopacket.CaptureInfo, dir tcpasm.TCPFlowDirection, nextSeq, revSeq tcpasm.Sequence, start *bool, _ tcpasm.AssemblerContext) bool {
	r := c.r
	r.touch(c)
	if c.holding {
		r.hold(c, t, dir)
		return false
	}
	if c.s == nil || c.ended {
		return false
	}
	r.curConn = c
	side := c.side(dir)
	h, o := &c.half[side], &c.half[side.Other()]
	sq := seq(t.Seq)
	n := len(t.Payload)
	first := sq
	if t.SYN {
		first = sq.Add(1)
	}
	// A SYN that does not belong to this connection opens a new one on the
	// same 4-tuple: end this one first (gopacket ignores such a SYN).
	if t.SYN && h.started && !(h.synSeen && sq == h.isn) && first != h.start {
		r.post = append(r.post, action{kind: actRestart, c: c})
		return false
	}
	if r.cur.meta.Frame > c.last.Frame {
		c.last = r.cur.meta // a held segment may come after a later one
	}
	// ahead: t acknowledges bytes of the other side not delivered yet,
	// reordered or lost (acked.go). Rare: the check is one comparison.
	ahead := t.ACK && revSeq.Difference(seq(t.Ack)) > 0 && o.started && !o.closed && c.mayHaveLost(o)
	if !r.replaying {
		c.pkts++
		h.captured = true
		if ahead {
			c.noteAck(side.Other(), seq(t.Ack))
		}
		if c.holesToForce() && c.fillFirst(side, t, first, nextSeq, revSeq) {
			return false
		}
	}
	if h.closed {
		return false
	}
	// Data that acknowledges bytes of the other side not delivered yet
	// waits for them (acked.go): an answer never comes before its request.
	// So does a RST: reordered ahead of the peer's last bytes or FIN, it
	// would end the connection with them still to come, a stream-gap of
	// bytes the capture holds.
	if ahead && (n > 0 || t.FIN || t.RST) && !t.SYN && c.mayDefer(side, t) {
		c.deferSeg(t)
		return false
	}
	pos, ok := c.startHalf(h, t, sq, nextSeq, start)
	if !ok {
		return false
	}
	if t.SYN || side == flow.Client && h.synSeen && !o.started {
		c.noteStarts(side, t, sq)
	}
	if n > 0 && pos.Difference(first) > 0 || r.cur.truncated {
		c.noteBuffered(side, t, first, pos, nextSeq)
	}
	// A capture written by hand may number the first data byte as the
	// SYN (no real stack does: the SYN takes a sequence number). gopacket
	// would drop that byte as old, the first byte of a Kafka frame's size,
	// and the connection would never be recognised: it goes out here,
	// the rest of the segment after it as usual.
	if sq == h.isn && n > 0 && !t.SYN && h.synSeen && nextSeq == h.isn.Add(1) && nextSeq == h.start &&
		!h.closed && !r.replaying {
		c.data(side, t.Payload[:1])
	}
	return true
}

// fillFirst reports whether a segment, seen for the first time, must be
// refused now: holes left by a snaplen cut are forced out before it is
// handled, so that calls come in sequence order, and it is handed to
// gopacket again afterwards (actReplay). pos and opos are the positions of
// side and the other.
func (c *conn) fillFirst(side flow.Side, t *layers.TCP, first, pos, opos seq) bool {
	r := c.r
	h, o := &c.half[side], &c.half[side.Other()]
	pre := false
	// The peer acknowledged bytes of the hole: they exist, and were
	// not captured.
	if t.ACK && o.started && !o.closed && c.lists(side.Other()).truncHole(opos) && opos.Difference(seq(t.Ack)) > 0 {
		r.post = append(r.post, action{kind: actFill, c: c, side: side.Other(), to: seq(t.Ack)})
		pre = true
	}
	// A later segment shows where the hole ends.
	if !h.closed && c.lists(side).truncHole(pos) && pos.Difference(first) > 0 {
		r.post = append(r.post, action{kind: actFill, c: c, side: side, to: first})
		pre = true
	}
	if pre {
		r.post = append(r.post, action{kind: actReplay, c: c})
	}
	return pre
}

// startHalf starts h at its first segment, and reports false for a
// segment that must not start it. It returns h's position: tcpasm's
// (nextSeq) once started, else where the segment starts h, which tcpasm
// takes up when it handles the segment.
func (c *conn) startHalf(h *half, t *layers.TCP, sq seq, nextSeq tcpasm.Sequence, start *bool) (seq, bool) {
	if h.started {
		return nextSeq, true
	}
	if nextSeq < 0 && !t.SYN && len(t.Payload) == 0 && !t.FIN && !t.RST {
		// Mid-stream, an empty segment does not tell where the stream
		// is: a keepalive probe carries the sequence number before
		// the next byte, and starting there would make that byte a
		// hole. The first data or FIN starts the half.
		return 0, false
	}
	h.started = true
	switch {
	case nextSeq >= 0:
		h.start = nextSeq // cannot happen: gopacket started without us
	case t.SYN:
		h.synSeen, h.isn, h.start = true, sq, sq.Add(1)
	default:
		// Mid-stream: start at once rather than buffer, waiting
		// for a SYN that will not come.
		*start = true
		h.start = sq
	}
	return h.start, true
}

// noteStarts schedules the start of the other half where a SYN-ACK or the
// client's first segment shows it.
func (c *conn) noteStarts(side flow.Side, t *layers.TCP, sq seq) {
	r := c.r
	h, o := &c.half[side], &c.half[side.Other()]
	if t.SYN {
		if !h.synSeen {
			h.synSeen, h.isn = true, sq
		}
		// SYN-ACK without the SYN: the client's data starts at its ack.
		if t.ACK && !o.started {
			r.post = append(r.post, action{kind: actStart, c: c, side: side.Other(), to: seq(t.Ack)})
		}
	}
	// The client's first segment after its SYN, the SYN-ACK not captured:
	// its ack is where the broker's stream starts (a Kafka broker never
	// speaks first), rather than wherever the broker's first captured
	// segment falls, which may be a later one of its first answer.
	if side == flow.Client && !t.SYN && t.ACK && h.synSeen && !o.started && sq == h.isn.Add(1) {
		r.post = append(r.post, action{kind: actStart, c: c, side: flow.Broker, to: seq(t.Ack)})
	}
}

// noteBuffered counts the data gopacket will buffer ahead of the position
// pos, and records where a snaplen-cut segment lost bytes.
func (c *conn) noteBuffered(side flow.Side, t *layers.TCP, first, pos seq, nextSeq tcpasm.Sequence) {
	r := c.r
	n := len(t.Payload)
	// gopacket buffers data ahead of pos, except a RST's and that of a SYN
	// on a started half, which it drops.
	if n > 0 && pos.Difference(first) > 0 && !t.RST && !(t.SYN && nextSeq >= 0) {
		r.stats.OutOfOrder++
	}
	if !r.cur.truncated {
		return
	}
	r.stats.Truncated++
	// Said once Add has delivered what the segment released, so that
	// the decoder, which may recognise the connection only then,
	// counts every cut packet.
	r.truncConn, r.truncSide = c, side
	end := first.Add(n)
	switch cut := r.cur.cut; {
	case cut > 0 && cut <= maxFill:
		if to := end.Add(cut); pos.Difference(to) > 0 {
			l := &c.x().lists[side]
			l.cuts = append(l.cuts, span{end, to})
		}
	case pos.Difference(end) >= 0:
		l := &c.x().lists[side]
		l.trunc = append(l.trunc, end)
	}
}

// ReassembledSG receives in-order data from gopacket: bytes it skipped
// (skip), lost or cut, then bytes. tcpasm's position is already past them.
func (c *conn) ReassembledSG(sg tcpasm.ScatterGather, _ tcpasm.AssemblerContext) {
	r := c.r
	dir, _, end, skip := sg.Info()
	side := c.side(dir)
	h := &c.half[side]
	length, _ := sg.Lengths()
	if skip > 0 {
		c.skipped(h, skip, sg.SkipReason())
	}
	if length > 0 && (skip > 0 || r.flushing && !r.forcing) {
		// A hole given up while a packet is being added (the other side
		// acknowledged past it, the buffer limit, or forced out), or data
		// flushed (idle time, the capture's end): the data queued arrived
		// with earlier packets, whose frames its PDUs carry, as Wireshark
		// shows them; the gap before it, at the first of them.
		c.pieces(side, sg)
	} else if length > 0 {
		c.data(side, sg.Fetch(length))
	}
	c.prune(side)
	if end {
		h.closed = true
		// A RST aborts both directions.
		if r.cur.rst && !r.forcing && !r.flushing {
			r.post = append(r.post, action{kind: actAbort, c: c, side: side.Other()})
		}
	}
	if !r.forcing {
		c.flushGap(side)
	}
}

// skipped counts the n bytes gopacket skipped on h, by why.
func (c *conn) skipped(h *half, n int, why tcpasm.SkipReason) {
	if why == tcpasm.SkipCut {
		h.cut += n
	} else {
		h.gap += n
	}
	if !c.r.flushing && why == tcpasm.SkipGivenUp {
		c.r.stats.Overflow++
	}
}

// ReassemblyComplete is called by gopacket once both halves are closed.
// The connection stays in gopacket's pool (false) so that trailing ACKs
// and retransmitted FINs do not open a new connection; a new SYN or the
// idle flush removes it.
func (c *conn) ReassemblyComplete(_ tcpasm.AssemblerContext) bool {
	if c.ended {
		return false
	}
	c.ended = true
	c.r.retire(c)
	c.half[flow.Client].closed, c.half[flow.Broker].closed = true, true
	if c.s == nil {
		return false
	}
	c.flushGap(flow.Client)
	c.flushGap(flow.Broker)
	c.emit(evEnd, 0, nil, 0)
	c.r.stats.Ended++
	return false
}

// pieces delivers the bytes of sg, each piece with the flow.Meta of the packet
// that carried it.
func (c *conn) pieces(side flow.Side, sg tcpasm.ScatterGather) {
	r := c.r
	cur := r.cur.meta
	sg.Pieces(func(b []byte, frame uint64, ts time.Time) {
		r.cur.meta = flow.Meta{Frame: frame, Time: ts}
		c.data(side, b)
	})
	r.cur.meta = cur
}

// data delivers p after any gap pending on side.
func (c *conn) data(side flow.Side, p []byte) {
	if len(p) == 0 {
		return
	}
	c.flushGap(side)
	r := c.r
	r.stats.Bytes += uint64(len(p))
	if c.s != nil && !r.collecting {
		c.s.Data(side, p, r.cur.meta) // emit's common case, without the call
		return
	}
	c.emit(evData, side, p, 0)
}

// flushGap reports the lost bytes pending on side as one Gap, and the cut
// ones as one Cut. The check is apart so that it inlines.
func (c *conn) flushGap(side flow.Side) {
	if c.half[side].gap|c.half[side].cut != 0 {
		c.reportGap(side)
	}
}

func (c *conn) reportGap(side flow.Side) {
	h := &c.half[side]
	if n := h.gap; n != 0 {
		h.gap = 0
		c.r.stats.Gaps++
		c.r.stats.BytesLost += uint64(n)
		c.emit(evGap, side, nil, n)
	}
	if n := h.cut; n != 0 {
		h.cut = 0
		c.r.stats.Cuts++
		c.r.stats.BytesCut += uint64(n)
		c.emit(evCut, side, nil, n)
	}
}

type evKind uint8

const (
	evData evKind = iota
	evGap
	evTruncated
	evCut
	evEnd
)

// emit calls the Stream, or during a flush collects the call for replay.
func (c *conn) emit(k evKind, side flow.Side, p []byte, n int) {
	if c.s == nil {
		return
	}
	r := c.r
	if r.collecting {
		r.collect(c, k, side, p, n)
		return
	}
	m := r.cur.meta
	switch k {
	case evData:
		c.s.Data(side, p, m)
	case evGap:
		c.s.Gap(side, n, m)
	case evTruncated:
		c.s.Truncated(side, m)
	case evCut:
		c.s.Cut(side, n, m)
	case evEnd:
		c.s.End(c.endMeta(m))
	}
}

// endMeta is the flow.Meta of c's End: its last packet, or m if it had none.
func (c *conn) endMeta(m flow.Meta) flow.Meta {
	if c.last.Frame == 0 {
		return m
	}
	return c.last
}
