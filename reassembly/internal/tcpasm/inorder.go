package tcpasm

import (
	"net/netip"
	"time"

	"github.com/gopacket/gopacket/layers"
)

// InOrder is the first half of AssembleAddrs for the common segment, apart
// so that such a segment costs a fraction of it (kwatch): a segment without
// SYN, FIN or RST, at the next sequence number of its direction, open, on a
// pooled connection with nothing queued, kept or pending either way. For
// such a segment AssembleAddrs would call Accept, then, if the Stream
// accepts it, take its payload in order as the whole ScatterGather. InOrder
// does what AssembleAddrs does before Accept and returns the Stream, the
// direction and the positions Accept would get; the caller decides, as its
// Accept would, and either calls TakeInOrder, delivering the payload
// itself, or hands the segment to AssembleAddrs, which finds everything as
// it was. It reports false, having changed nothing a packet would not,
// for any other segment.
func (a *Assembler) InOrder(src, dst netip.AddrPort, t *layers.TCP, ts time.Time) (s Stream, dir TCPFlowDirection, nextSeq, revSeq Sequence, ok bool) {
	if t.SYN || t.FIN || t.RST || a.noFastPath {
		return s, dir, 0, 0, false
	}
	var k key
	srcIsLo := k.set(addrEndpoint(src), addrEndpoint(dst))
	conn := a.last
	if conn == nil || conn.removed || !conn.key.eq(&k) {
		if conn = a.lookup(&k); conn == nil {
			return s, dir, 0, 0, false
		}
	}
	half, rev := conn.halves(srcIsLo)
	// An open half means reusedBy is false; rev.first nil that skipAcked
	// has nothing to do.
	if Sequence(t.Seq) != half.nextSeq || half.closed || half.first != nil || half.saved != nil ||
		half.finSeq != invalidSequence || rev.first != nil {
		return s, dir, 0, 0, false
	}
	if ns, ok := UnixNanos(ts); ok {
		a.connPool.lowerNs(ts, ns)
		half.seeNs(ts, ns)
	} else {
		a.connPool.lower(ts)
		half.see(ts)
	}
	a.inOrder = half
	return half.stream, half.dir, half.nextSeq, rev.nextSeq, true
}

// TakeInOrder takes the segment InOrder last accepted, t, as accepted's
// fast path does: its ack is noted, and the direction moves past its
// payload, which the caller delivers to the Stream (no ScatterGather is
// built: the Stream of an in-order segment keeps nothing of it).
func (a *Assembler) TakeInOrder(t *layers.TCP) {
	half := a.inOrder
	a.inOrder = nil
	if t.ACK {
		half.ackSeq = Sequence(t.Ack)
	}
	half.nextSeq = half.nextSeq.Add(len(t.Payload))
}

// UnixNanos returns t in Unix nanoseconds, if it lies within 272 years of
// 1970, where they do not overflow: there the integers compare as Before
// and After compare packet times. (Times with a monotonic reading, which
// those compare instead when both have one, are not packet times; their
// wall and monotonic clocks agree but across a step of the clock.)
func UnixNanos(t time.Time) (int64, bool) {
	const maxSec = 1 << 33
	sec := t.Unix()
	if uint64(sec+maxSec) > 2*maxSec {
		return 0, false
	}
	return sec*1e9 + int64(t.Nanosecond()), true
}
