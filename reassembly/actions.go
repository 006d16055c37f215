package reassembly

import (
	"github.com/kwatch/kwatch/flow"
	"github.com/kwatch/kwatch/reassembly/internal/tcpasm"
)

// What the segments do not show is acted on through the fork's operations
// on one direction (start at, skip to, close), once the real segment's
// AssembleAddrs has returned: during Accept the Assembler is in the middle
// of that segment, and must not be called. They are scheduled as actions.

type actKind uint8

const (
	actFill    actKind = iota // force the hole at the position out, up to to
	actStart                  // start side at to (SYN-ACK seen, no SYN)
	actAbort                  // a RST ended the other side: end side too
	actRestart                // a new SYN on the 4-tuple: end c, replay seg
	actReplay                 // hand the refused segment to gopacket again
)

// action is a step scheduled from Accept or ReassembledSG.
type action struct {
	kind actKind
	c    *conn
	side flow.Side
	to   seq
}

const (
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
			if h.closed || !a.c.lists(a.side).truncHole(a.c.pos(a.side)) {
				continue
			}
			r.stats.TruncFills++
			r.fill(a.c, a.side, a.to, false)
			r.forceTruncHoles(a.c)
		case actStart:
			r.startAt(a.c, a.side, a.to)
		case actAbort:
			r.abort(a.c, a.side)
		case actRestart:
			r.stats.Restarts++
			r.abort(a.c, flow.Client)
			r.abort(a.c, flow.Broker)
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
// refused it to let the holes before it be forced out first.
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
	for _, side := range [2]flow.Side{flow.Client, flow.Broker} {
		h := &c.half[side]
		for range maxRounds {
			if c.ended || h.closed {
				break
			}
			c.prune(side)
			before := c.pos(side)
			to, cut, ok := c.forcedEnd(side, before)
			if !ok {
				break
			}
			r.stats.TruncFills++
			r.fill(c, side, to, cut)
			if c.pos(side) == before {
				break
			}
		}
	}
}

// abort ends side after a RST on the other one: its remaining holes become
// gaps, its buffered data is delivered, then it is closed.
func (r *Reassembler) abort(c *conn, side flow.Side) {
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
		c.prune(side)
		to, ok := c.queued(side)
		if !ok {
			break
		}
		before := c.pos(side)
		r.fill(c, side, to, false)
		if c.pos(side) == before {
			break
		}
	}
	if c.ended || h.closed {
		return
	}
	// A side not started is closed at its start, which is zero: where
	// it would have started is not known.
	r.forcing = true
	ok := r.asm.Close(c.sender(side), c.sender(side.Other()), h.start, r.cur.meta.Time, &r.cur)
	r.forcing = false
	if ok && !h.started {
		h.started = true
		if p := c.pos(side); p >= 0 {
			h.start = p
		}
	}
	h.closed = true
}

// startAt starts side at to, where the other side's first segment shows
// it starts (SYN-ACK seen, no SYN).
func (r *Reassembler) startAt(c *conn, side flow.Side, to seq) {
	h := &c.half[side]
	if h.started {
		return
	}
	if r.asm.StartAt(c.sender(side), c.sender(side.Other()), to, r.cur.meta.Time) {
		h.started, h.start = true, to
	}
}

// fill gives up the hole of side from its position to to, so that
// gopacket moves past it rather than wait for it; ReassembledSG reports it
// as one Gap, or as one Cut if cut. It stops at buffered data, which
// gopacket then delivers.
func (r *Reassembler) fill(c *conn, side flow.Side, to seq, cut bool) {
	h := &c.half[side]
	if c.ended {
		return // its 4-tuple may be another connection's now
	}
	if m, ok := c.queued(side); ok && m.Difference(to) > 0 {
		to = m
	}
	if n := c.pos(side).Difference(to); n <= 0 || n > maxFill {
		return
	}
	if !h.closed {
		reason := tcpasm.SkipLost
		if cut {
			reason = tcpasm.SkipCut
		}
		r.forcing = true
		r.asm.SkipTo(c.sender(side), c.sender(side.Other()), to, reason, r.cur.meta.Time, &r.cur)
		r.forcing = false
	}
	c.flushGap(side)
}
