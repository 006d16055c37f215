package reassembly

import (
	"slices"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/kwatch/kwatch/capture"
	"github.com/kwatch/kwatch/flow"
	"github.com/kwatch/kwatch/reassembly/internal/tcpasm"
)

// Late SYNs (SPEC.md 2.1 "Reordering"): a capture may hold a connection's
// SYN or SYN-ACK after some of its data. A connection whose first packet is
// neither is therefore held, its segments copied aside and no Stream opened,
// until one of them comes (the connection is then observed from its start),
// or holdPackets of its packets or holdTime of capture time have passed
// without one (it was joined mid-stream). Either way its held segments are
// then handed to gopacket again in capture order, each half first started
// where the held segments show it begins, so that data reordered before the
// start is not mistaken for the stream's first bytes.

const (
	holdPackets = 64
	holdTime    = time.Second
	// DefaultMaxHeldBytes is the default of Options.MaxHeldBytes.
	DefaultMaxHeldBytes = 32 << 20
)

// hold copies the segment being added aside for c, still held. A SYN or
// SYN-ACK that fits the held segments orients the connection as observed
// from its start; the hold ends when both halves' first bytes are known (a
// SYN-ACK, or the client's first segment after its SYN, gives the broker's),
// or at the limits.
func (r *Reassembler) hold(c *conn, t *layers.TCP, dir tcpasm.TCPFlowDirection) {
	s := r.seg
	late := len(c.x().held) >= holdPackets || r.cur.meta.Time.Sub(c.x().heldSince) > holdTime
	syn := t.SYN && !t.RST
	if syn && !c.flow.FromStart && !late && c.synFits(t, s) {
		c.firstIsClient = (dir == tcpasm.TCPDirClientToServer) == !t.ACK
		c.flow.Client, c.flow.Broker = s.Src, s.Dst
		if t.ACK {
			c.flow.Client, c.flow.Broker = s.Dst, s.Src
		}
		c.flow.FromStart = true
		syn = false // a fitting SYN ends nothing
	}
	if syn && c.flow.FromStart {
		// The SYN-ACK after the SYN, or a retransmission: it fits if its
		// numbers agree with what is known.
		syn = !c.synAgrees(t, s)
	}
	cp := *s
	cp.TCP.Payload = slices.Clone(t.Payload)
	cp.TCP.Contents, cp.TCP.Options = nil, nil
	c.x().held = append(c.x().held, cp)
	*c.held() += len(t.Payload)
	// A SYN that does not fit shows the held data is an earlier
	// connection's, joined mid-stream; the SYN then starts a new one.
	if capped := *c.held() > r.heldCap; syn || late || len(c.x().held) >= holdPackets || capped {
		if capped && !syn && !late && len(c.x().held) < holdPackets {
			r.stats.HeldCapped++
		}
		c.flow.FromStart = c.flow.FromStart && !syn
		r.decide(c)
		return
	}
	if c.flow.FromStart {
		if _, ok := c.heldStart(flow.Client); ok {
			if _, ok := c.heldStart(flow.Broker); ok {
				r.stats.LateSYNs++
				r.decide(c)
			}
		}
	}
}

// synAgrees reports whether a SYN or SYN-ACK agrees with the held ones.
func (c *conn) synAgrees(t *layers.TCP, s *capture.Segment) bool {
	for i := range c.x().held {
		h := &c.x().held[i].TCP
		if !h.SYN {
			continue
		}
		same := c.x().held[i].Src == s.Src
		if same && h.Seq != t.Seq || !same && (h.ACK && seq(h.Ack) != seq(t.Seq).Add(1) || t.ACK && seq(t.Ack) != seq(h.Seq).Add(1)) {
			return false
		}
	}
	return true
}

// synFits reports whether the SYN or SYN-ACK s belongs before the held
// segments: no held data of its sender lies before its first byte, and for
// a SYN-ACK none of the client's before the byte it acknowledges.
func (c *conn) synFits(t *layers.TCP, s *capture.Segment) bool {
	first := seq(t.Seq).Add(1)
	for i := range c.x().held {
		h := &c.x().held[i]
		if len(h.TCP.Payload) == 0 && !h.TCP.FIN {
			continue
		}
		switch {
		case h.Src == s.Src && first.Difference(seq(h.TCP.Seq)) < 0:
			return false
		case h.Src == s.Dst && t.ACK && seq(t.Ack).Difference(seq(h.TCP.Seq)) < 0:
			return false
		}
	}
	return true
}

// decide ends c's hold: its Stream is opened now, and its held segments
// are handed to gopacket once the segment being added is done (release).
func (r *Reassembler) decide(c *conn) {
	c.holding = false
	if i := slices.Index(r.holding, c); i >= 0 {
		r.holding = slices.Delete(r.holding, i, i+1)
	}
	// A connection that ended while held (a reset, its 4-tuple reused)
	// opens nothing: gopacket is done with it, and its held segments go
	// to whichever connection has its 4-tuple now.
	if !c.ended {
		r.open(c)
	}
	r.release = append(r.release, c)
}

// releaseDecided hands the held segments of the connections decided so far
// to gopacket.
func (r *Reassembler) releaseDecided() {
	if r.releasing {
		return // the loop below goes on with it
	}
	r.releasing = true
	for len(r.release) > 0 {
		c := r.release[0]
		r.release = slices.Delete(r.release, 0, 1)
		r.releaseHeld(c)
	}
	r.releasing = false
}

// releaseHeld starts c's halves where its held segments show they begin,
// then adds the segments again, in capture order.
func (r *Reassembler) releaseHeld(c *conn) {
	held := c.x().held
	saved := r.cur
	if len(held) > 0 {
		// The starts belong to the first held packet: with a flush's
		// time, the connection would not look idle to that flush.
		f := &held[0]
		r.cur.meta = flow.Meta{Frame: f.Frame, Time: f.Time}
	}
	for i := range held {
		// Known captured before any is added again (see half.captured).
		if held[i].Src == c.sender(flow.Client) {
			c.half[flow.Client].captured = true
		} else {
			c.half[flow.Broker].captured = true
		}
	}
	for _, side := range [2]flow.Side{flow.Client, flow.Broker} {
		if to, ok := c.heldStart(side); ok && !c.ended {
			r.startAt(c, side, to)
		}
	}
	c.x().held = nil
	for i := range held {
		*c.held() -= len(held[i].TCP.Payload)
		r.assemble(&held[i])
	}
	r.cur = saved
}

// heldStart says where side's stream starts, from the held segments. Seen
// from its start: after the SYN (the client's) or the SYN-ACK (the
// broker's), or for the broker at the client's first segment's
// acknowledgement. Joined mid-stream: at the lowest first byte of side's
// held data.
func (c *conn) heldStart(side flow.Side) (seq, bool) {
	sender := c.sender(side)
	if c.flow.FromStart {
		var isn seq
		found := false
		for i := range c.x().held {
			s := &c.x().held[i]
			switch {
			case s.TCP.SYN && s.Src == sender:
				return seq(s.TCP.Seq).Add(1), true
			case s.TCP.SYN && s.TCP.ACK && side == flow.Client:
				return seq(s.TCP.Ack), true
			case s.TCP.SYN && side == flow.Broker:
				isn, found = seq(s.TCP.Seq), true
			}
		}
		if !found {
			return 0, false
		}
		for i := range c.x().held {
			if s := &c.x().held[i]; s.Src != sender && !s.TCP.SYN && s.TCP.ACK && seq(s.TCP.Seq) == isn.Add(1) {
				return seq(s.TCP.Ack), true
			}
		}
		return 0, false
	}
	var (
		lo seq
		ok bool
	)
	for i := range c.x().held {
		if s := &c.x().held[i]; s.Src == sender && !s.TCP.SYN && !s.TCP.RST && (len(s.TCP.Payload) > 0 || s.TCP.FIN) {
			if sq := seq(s.TCP.Seq); !ok || lo.Difference(sq) < 0 {
				lo, ok = sq, true
			}
		}
	}
	return lo, ok
}

// releaseAged decides the held connections whose hold time has passed
// before t, and those still held at all when all is true (Close).
func (r *Reassembler) releaseAged(t time.Time, all bool) {
	for _, c := range slices.Clone(r.holding) {
		if all || t.Sub(c.x().heldSince) > holdTime {
			r.decide(c)
		}
	}
	r.releaseDecided()
}
