package reassembly

import "github.com/gopacket/gopacket/layers"

// gopacket offers no way to act on one connection from outside a segment:
// no per-connection flush, no way to set where a half starts. Both are done
// by handing it synthetic segments, built here, once the real segment's
// AssembleAddrs has returned (during Accept the Assembler is in the middle
// of that segment, and must not be called).

// synthetic describes the synthetic segment being assembled.
type synthetic struct {
	c     *conn
	side  Side
	start bool // force the half to start at this segment
	fill  bool // payload bytes are a hole, not data
	cut   bool // the hole is a snaplen cut of known length, not lost bytes
	from  seq
	to    seq
}

type actKind uint8

const (
	actFill    actKind = iota // force the hole at pos out, up to to
	actStart                  // start side at to (SYN-ACK seen, no SYN)
	actAbort                  // a RST ended the other side: end side too
	actRestart                // a new SYN on the 4-tuple: end c, replay seg
	actReplay                 // hand the refused segment to gopacket again
)

// action is a synthetic step scheduled from Accept or ReassembledSG.
type action struct {
	kind actKind
	c    *conn
	side Side
	to   seq
}

const (
	fillChunk = 64 << 10 // bytes of zeros per synthetic fill segment
	// maxFill bounds a forced hole: more means sequence numbers that make
	// no sense, and the hole is left to gopacket's flushes.
	maxFill = 64 << 20
	// maxRounds bounds loops that force several holes out in a row.
	maxRounds = 4096
)

// runPost runs the scheduled actions; they may schedule more.
func (r *Reassembler) runPost() {
	for i := 0; i < len(r.post); i++ {
		a := r.post[i]
		if a.c.ended && a.kind != actReplay {
			continue
		}
		switch a.kind {
		case actFill:
			h := &a.c.half[a.side]
			if h.closed || !h.truncHole() {
				continue
			}
			r.stats.TruncFills++
			r.fill(a.c, a.side, a.to, false)
			r.forceTruncHoles(a.c)
		case actStart:
			if !a.c.half[a.side].started {
				r.inject(a.c, a.side, a.to, nil, false, true)
			}
		case actAbort:
			r.abort(a.c, a.side)
		case actRestart:
			r.stats.Restarts++
			r.abort(a.c, Client)
			r.abort(a.c, Broker)
			if a.c.ended {
				r.replay1()
			}
		case actReplay:
			r.replay1()
		}
	}
	r.post = r.post[:0]
}

// replay1 hands the current segment to gopacket once more, after Accept
// refused it to let synthetic segments go first.
func (r *Reassembler) replay1() {
	s := r.seg
	if s == nil || r.replaying {
		return
	}
	r.replaying = true
	r.asm.AssembleAddrs(s.Src, s.Dst, &s.TCP, s.Time, s.Frame, &r.cur)
	r.replaying = false
}

// forceTruncHoles forces out holes that a snaplen cut left: those of known
// length as Cuts, the others up to where buffered data starts, as Gaps. The
// cut bytes never come.
func (r *Reassembler) forceTruncHoles(c *conn) {
	if !c.holesToForce() {
		return // no hole can start at a cut: the common case
	}
	for _, side := range [2]Side{Client, Broker} {
		h := &c.half[side]
		for range maxRounds {
			if c.ended || h.closed {
				break
			}
			h.prune()
			to, cut, ok := h.forcedEnd()
			if !ok {
				break
			}
			before := h.pos
			r.stats.TruncFills++
			r.fill(c, side, to, cut)
			if h.pos == before {
				break
			}
		}
	}
}

// abort ends side after a RST on the other one: its remaining holes become
// gaps, its buffered data is delivered, then a synthetic RST closes it.
func (r *Reassembler) abort(c *conn, side Side) {
	h := &c.half[side]
	if c.acking {
		// Bytes the RST's sender acknowledged but the capture never held
		// (a lost last response) are lost now: nothing can bring them.
		r.checkAcks(c, r.cur.meta.Time, true)
	}
	for range maxRounds {
		if c.ended || h.closed || !h.started {
			break
		}
		h.prune()
		to, ok := h.aheadMin()
		if !ok {
			break
		}
		before := h.pos
		r.fill(c, side, to, false)
		if h.pos == before {
			break
		}
	}
	if c.ended || h.closed {
		return
	}
	r.inject(c, side, h.pos, nil, true, !h.started)
	c.half[side].closed = true
}

// fill hands gopacket zeros for [pos, to) on side, so that it moves past a
// hole it would otherwise wait for; ReassembledSG reports them as one Gap,
// or as one Cut if cut. It stops at buffered data, which gopacket then
// delivers.
func (r *Reassembler) fill(c *conn, side Side, to seq, cut bool) {
	h := &c.half[side]
	if m, ok := h.aheadMin(); ok && m.Difference(to) > 0 {
		to = m
	}
	if n := h.pos.Difference(to); n <= 0 || n > maxFill {
		return
	}
	if r.zero == nil {
		r.zero = make([]byte, fillChunk)
	}
	for !c.ended && !h.closed {
		n := min(h.pos.Difference(to), fillChunk)
		if n <= 0 {
			break
		}
		before := h.pos
		r.synthCut = cut
		r.inject(c, side, h.pos, r.zero[:n], false, false)
		r.synthCut = false
		if h.pos == before {
			break // gopacket did not take it
		}
	}
	c.flushGap(side)
}

// inject assembles one synthetic segment on side of c.
func (r *Reassembler) inject(c *conn, side Side, sq seq, payload []byte, rst, start bool) {
	src, dst := c.flow.Client, c.flow.Broker
	if side == Broker {
		src, dst = dst, src
	}
	t := &r.synTCP
	t.SrcPort, t.DstPort = layers.TCPPort(src.Port()), layers.TCPPort(dst.Port())
	t.Seq, t.Ack = uint32(sq), 0
	t.SYN, t.ACK, t.FIN, t.RST = false, false, false, rst
	t.Payload = payload
	r.synth = synthetic{c: c, side: side, start: start, fill: len(payload) > 0, cut: r.synthCut, from: sq, to: sq.Add(len(payload))}
	r.asm.AssembleAddrs(src, dst, t, r.cur.meta.Time, r.cur.meta.Frame, &r.cur)
	r.synth = synthetic{}
}
