package reassembly

import (
	"net/netip"
	"slices"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/kwatch/kwatch/capture"
	"github.com/kwatch/kwatch/flow"
)

// Loss seen by acknowledgement (SPEC.md 2.1): bytes that the other side
// acknowledged but the capture never held are lost, and become a Gap, also
// when nothing follows them (a lost last response). But a capture may also
// hold a connection's packets out of order: an acknowledgement may come
// before the bytes it acknowledges. So a hole acknowledged is given up only
// once it stayed acknowledged for holdPackets of the connection's packets
// or holdTime of capture time (the window within which SPEC.md 2.1 expects
// reordering), at an idle flush past that time, or at Close.
//
// For the same reason a segment whose acknowledgement runs ahead of what was
// delivered of the other side waits (deferred) until the other side
// catches up, or its hole is given up: a response is never delivered before
// the request it answers, which a reordered capture may hold after it.

// ackState is a side's hole acknowledged: the other side acknowledged
// bytes beyond its position, up to to; first is what it had acknowledged at since,
// when the connection had seen pkts segments.
type ackState struct {
	pending   bool
	first, to seq
	since     time.Time
	pkts      uint64
}

// noteAck records that the other side acknowledged side's bytes up to ack,
// beyond the next byte expected.
func (c *conn) noteAck(side flow.Side, ack seq) {
	a := &c.x().acks[side]
	if a.pending {
		if a.to.Difference(ack) > 0 {
			a.to = ack
		}
		return
	}
	*a = ackState{pending: true, first: ack, to: ack, since: c.r.cur.meta.Time, pkts: c.pkts}
	if !c.acking {
		c.acking = true
		c.r.acking = append(c.r.acking, c)
	}
}

// checkAcks gives up c's acknowledged holes that are due at now: all of
// them when all is set. It reports whether any is still pending.
func (r *Reassembler) checkAcks(c *conn, now time.Time, all bool) bool {
	pending := false
	for _, side := range [2]flow.Side{flow.Client, flow.Broker} {
		h, a := &c.half[side], &c.x().acks[side]
		if !a.pending {
			continue
		}
		if c.ended || h.closed || c.pos(side).Difference(a.to) <= 0 {
			a.pending = false
			continue
		}
		if c.pos(side).Difference(a.first) <= 0 {
			// What was acknowledged first came; the rest is timed anew.
			a.first, a.since, a.pkts = a.to, now, c.pkts
		}
		if c.deferredAt(side) || !h.captured && !all {
			// The bytes are there, deferred: not lost. Or nothing of
			// side was captured yet: its first segments may come.
			pending = true
			continue
		}
		if !h.captured {
			a.pending = false // never captured: nothing was lost
			continue
		}
		if all || c.pkts-a.pkts >= holdPackets || now.Sub(a.since) > holdTime {
			r.stats.AckedHoles++
			r.forceTo(c, side, a.first)
			a.first, a.since, a.pkts = a.to, now, c.pkts
			if all || h.closed || c.pos(side).Difference(a.to) <= 0 {
				a.pending = false
				continue
			}
		}
		pending = true
	}
	if !pending {
		c.acking = false
	}
	return pending
}

// forceTo gives up side's holes before to: each becomes a Gap, and the data
// buffered after it is delivered.
func (r *Reassembler) forceTo(c *conn, side flow.Side, to seq) {
	h := &c.half[side]
	var at *capture.Segment
	if i := c.deferredFrom(side); i >= 0 {
		if d := &c.x().deferred[i]; seq(d.TCP.Seq).Difference(to) >= 0 {
			// The bytes from there are deferred, not lost. The gap is
			// said at the packet of the data after it, as always.
			to, at = seq(d.TCP.Seq), d
		}
	}
	if at == nil {
		// Nothing of side follows the hole; a RST that acknowledged it
		// and waits for it is where the loss shows.
		at = c.deferredRST(side.Other())
	}
	if at != nil {
		saved := r.cur
		r.cur.meta = flow.Meta{Frame: at.Frame, Time: at.Time}
		defer func() { r.cur = saved }()
	}
	for range maxRounds {
		if c.ended || h.closed || c.pos(side).Difference(to) <= 0 {
			return
		}
		c.prune(side)
		before := c.pos(side)
		r.fill(c, side, to, false)
		if c.pos(side) == before {
			return
		}
	}
}

// checkAllAcks runs checkAcks on every connection with a hole acknowledged,
// at an idle flush (all false) or Close (all true), and drops from the list
// those with none left.
func (r *Reassembler) checkAllAcks(now time.Time, all bool) {
	k := 0
	for _, c := range r.acking {
		if c.acking && r.checkAcks(c, now, all) {
			r.acking[k] = c
			k++
		}
	}
	clear(r.acking[k:])
	r.acking = r.acking[:k]
}

// mayDefer reports whether segment t on side may be deferred: within the
// bound of what is held over all connections, not at Close, and not when a
// segment of the other side deferred already waits for t's bytes while
// holding bytes t waits for (a retransmission acknowledges what the other
// side sent after the bytes it carries): both would wait for each other.
func (c *conn) mayDefer(side flow.Side, t *layers.TCP) bool {
	r := c.r
	if r.noDefer {
		return false
	}
	if *c.held()+len(t.Payload) > r.heldCap {
		if r.heldCap >= 0 {
			r.stats.HeldCapped++
		}
		return false
	}
	from, ack := seq(t.Seq), seq(t.Ack)
	for i := range c.x().deferred {
		d := &c.x().deferred[i].TCP
		if c.x().deferred[i].Src != c.sender(side) && from.Difference(seq(d.Ack)) > 0 && seq(d.Seq).Difference(ack) > 0 {
			return false
		}
	}
	return true
}

// deferredAt reports whether a deferred segment of side holds its next
// byte.
func (c *conn) deferredAt(side flow.Side) bool {
	pos, src := c.pos(side), c.sender(side)
	for i := range c.x().deferred {
		d := &c.x().deferred[i]
		n := len(d.TCP.Payload)
		if d.TCP.FIN {
			n++ // a FIN takes a sequence number
		}
		if d.Src == src && seq(d.TCP.Seq).Difference(pos) >= 0 && pos.Difference(seq(d.TCP.Seq).Add(n)) > 0 {
			return true
		}
	}
	return false
}

// deferredFrom returns the index of the deferred segment of side that
// starts first at or after its next byte, or -1.
func (c *conn) deferredFrom(side flow.Side) int {
	pos, src := c.pos(side), c.sender(side)
	first := -1
	for i := range c.x().deferred {
		d := &c.x().deferred[i]
		if sq := seq(d.TCP.Seq); d.Src == src && pos.Difference(sq) >= 0 && (first < 0 || seq(c.x().deferred[first].TCP.Seq).Difference(sq) < 0) {
			first = i
		}
	}
	return first
}

// deferredRST returns side's deferred RST, or nil.
func (c *conn) deferredRST(side flow.Side) *capture.Segment {
	src := c.sender(side)
	for i := range c.x().deferred {
		if d := &c.x().deferred[i]; d.Src == src && d.TCP.RST {
			return d
		}
	}
	return nil
}

// mayHaveLost reports whether bytes of o that the other side acknowledged
// may have been lost by the capture: not if o was never captured, once the
// connection is past its first holdPackets (asymmetric routing, a mirror
// of one direction).
func (c *conn) mayHaveLost(o *half) bool {
	return o.captured || c.pkts <= holdPackets
}

// sender is the address that sends side's bytes.
func (c *conn) sender(side flow.Side) netip.AddrPort {
	if side == flow.Client {
		return c.flow.Client
	}
	return c.flow.Broker
}

// deferSeg copies the segment being added aside, until redeliver.
func (c *conn) deferSeg(t *layers.TCP) {
	r := c.r
	s := *r.seg
	s.TCP.Payload = slices.Clone(t.Payload)
	s.TCP.Contents, s.TCP.Options = nil, nil
	c.x().deferred = append(c.x().deferred, s)
	c.waiting = true
	*c.held() += len(t.Payload)
	if len(c.x().deferred) == 1 {
		r.deferring = append(r.deferring, c)
	}
}

// redeliver adds again, in capture order, the deferred segments of c whose
// acknowledgement the other side has caught up with (all of them at Close,
// or once c ended).
func (r *Reassembler) redeliver(c *conn) {
	saved := r.cur
	for i := 0; i < len(c.x().deferred); {
		s := &c.x().deferred[i]
		side := flow.Client
		if s.Src != c.sender(flow.Client) {
			side = flow.Broker
		}
		o := &c.half[side.Other()]
		// A segment deferred longer than the reordering window goes on
		// whatever it waits for.
		if !r.noDefer && !c.ended && !o.closed && c.mayHaveLost(o) && c.pos(side.Other()).Difference(seq(s.TCP.Ack)) > 0 && r.cur.meta.Time.Sub(s.Time) <= holdTime {
			i++
			continue
		}
		seg := *s
		c.x().deferred = slices.Delete(c.x().deferred, i, i+1)
		*c.held() -= len(seg.TCP.Payload)
		r.assemble(&seg)
		i = 0 // what it delivered may release earlier ones
	}
	c.waiting = len(c.x().deferred) > 0
	r.cur = saved
}

// redeliverAll runs redeliver on every connection with deferred segments.
func (r *Reassembler) redeliverAll() {
	for _, c := range slices.Clone(r.deferring) {
		r.redeliver(c)
	}
	r.deferring = slices.DeleteFunc(r.deferring, func(c *conn) bool { return len(c.x().deferred) == 0 })
}
