package reassembly

import (
	"github.com/kwatch/kwatch/capture"
	"github.com/kwatch/kwatch/flow"
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
	st, dir, revSeq, ok := r.asm.InOrder(s.Src, s.Dst, t, s.Time)
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
	// before they were delivered (a superset of Accept's ahead); and a
	// Gap or Cut to report first.
	if !h.started || h.closed || side == flow.Client && h.synSeen && !o.started ||
		t.ACK && revSeq.Difference(seq(t.Ack)) > 0 && o.started && !o.closed ||
		h.gap|h.cut != 0 {
		return false
	}
	// r.cur is left alone: only the calls assemble, a flush, Drain and
	// Close make read it, and each sets it first.
	m := flow.Meta{Frame: s.Frame, Time: s.Time}
	c.active = true // r.touch
	if m.Frame > c.last.Frame {
		c.last = m
	}
	c.pkts++
	h.captured = true
	r.inOrders++
	r.asm.TakeInOrder(t)
	if n := len(t.Payload); n > 0 {
		// c.data without its gap, nor a flush to collect for.
		r.stats.Bytes += uint64(n)
		c.s.Data(side, t.Payload, m)
	}
	return true
}
