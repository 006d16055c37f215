package reassembly

import (
	"github.com/kwatch/kwatch/capture"
)

// inOrder handles the common segment without the general machinery:
// data or an ACK at the next sequence number of an open side of a
// connection that started both ways, with nothing buffered, held, deferred,
// acknowledged ahead, cut or pending on it. It makes the calls assemble
// would, with the same arguments, and reports false, having changed
// nothing, for any other segment, which assemble then handles. It is
// called from Add only: there no flush, replay or release is under way.
func (r *Reassembler) inOrder(s *capture.Segment) bool {
	t := &s.TCP
	if s.Truncated {
		return false
	}
	st, dir, _, revSeq, ok := r.asm.InOrder(s.Src, s.Dst, t, s.Time)
	if !ok {
		return false
	}
	c, ok := st.(*conn)
	if !ok || c.holding || c.s == nil || c.ended || c.acking || c.waiting || c.holesToForce() {
		return false
	}
	side := c.side(dir)
	h, o := &c.half[side], &c.half[side.Other()]
	// Accept's cases: a side not started or closed, the start of the
	// broker's side still to come, bytes of the other side acknowledged
	// before they were delivered (a superset of Accept's ahead).
	if !h.started || h.closed || side == Client && h.synSeen && !o.started ||
		t.ACK && revSeq.Difference(seq(t.Ack)) > 0 && o.started && !o.closed {
		return false
	}
	m := Meta{Frame: s.Frame, Time: s.Time}
	r.cur = pktCtx{meta: m}
	c.active = true // r.touch
	if m.Frame > c.last.Frame {
		c.last = m
	}
	c.pkts++
	h.captured = true
	r.asm.TakeInOrder(t)
	c.data(side, t.Payload)
	return true
}
