package tcpasm

import (
	"math"
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
// direction and the other direction's position, as Accept would get them;
// the caller decides, as its Accept would, and either calls TakeInOrder,
// delivering the payload itself, or hands the segment to AssembleAddrs,
// which finds everything as it was. It reports false, having changed
// nothing a packet would not, for any other segment.
func (a *Assembler) InOrder(src, dst netip.AddrPort, t *layers.TCP, ts time.Time) (s Stream, dir TCPFlowDirection, revSeq Sequence, ok bool) {
	if t.SYN || t.FIN || t.RST || a.noFastPath {
		return s, dir, 0, false
	}
	conn, srcIsLo := a.find(src, dst)
	if conn == nil {
		return s, dir, 0, false
	}
	half, rev := conn.halves(srcIsLo)
	// An open half means reusedBy is false; rev.first nil that skipAcked
	// has nothing to do.
	if Sequence(t.Seq) != half.nextSeq || half.closed || half.first != nil || half.saved != nil ||
		half.finSeq != invalidSequence || rev.first != nil {
		return s, dir, 0, false
	}
	if ns, ok := UnixNanos(ts); ok {
		a.connPool.lowerNs(ts, ns)
		half.seeNs(ts, ns)
	} else {
		a.connPool.lower(ts)
		half.see(ts)
	}
	a.inOrder = half
	return half.stream, half.dir, rev.nextSeq, true
}

// recentSize is the number of entries of StreamPool.recent: a power of
// 2, a few times the connections a capture interleaves at once.
const recentSize = 256

// recentSlot is the entry of StreamPool.recent for a connection between
// ports p and q, either way.
func recentSlot(p, q uint16) uint32 {
	return (uint32(p) ^ uint32(q)) * 0x9e3779b1 >> 24 % recentSize
}

// recentConn is an entry of StreamPool.recent: the pooled connection c,
// while its gen is still gen, of the packet from src to dst.
type recentConn struct {
	src, dst netip.AddrPort
	c        *connection
	gen      uint32
	srcIsLo  bool
}

// find returns the pooled connection of src and dst, or nil, and whether
// src is its key's lo endpoint. Comparing the two addresses with those of
// a recent packet of the connection, found by its ports, costs a fraction
// of building the key and hashing it.
func (a *Assembler) find(src, dst netip.AddrPort) (*connection, bool) {
	e := &a.connPool.recent[recentSlot(src.Port(), dst.Port())]
	if c := e.c; c != nil && !c.removed && c.gen == e.gen {
		if src == e.src && dst == e.dst {
			return c, e.srcIsLo
		}
		if src == e.dst && dst == e.src {
			return c, !e.srcIsLo
		}
	}
	var k key
	srcIsLo := k.set(addrEndpoint(src), addrEndpoint(dst))
	conn := a.last
	if conn == nil || conn.removed || !conn.key.eq(&k) {
		if conn = a.lookup(&k); conn == nil {
			return nil, false
		}
	}
	*e = recentConn{src: src, dst: dst, c: conn, gen: conn.gen, srcIsLo: srcIsLo}
	return conn, srcIsLo
}

// TakeInOrder takes the segment InOrder last accepted, t, as accepted's
// fast path does: the direction moves past its payload, which the caller
// delivers to the Stream (no ScatterGather is built: the Stream of an
// in-order segment keeps nothing of it).
func (a *Assembler) TakeInOrder(t *layers.TCP) {
	// Left set, as a.last is: clearing it costs a write barrier a packet.
	half := a.inOrder
	half.nextSeq = half.nextSeq.Add(len(t.Payload))
}

// UnixNanos returns t in Unix nanoseconds and true if it lies within 272
// years of 1970, where they do not overflow: there the integers compare as
// Before and After compare packet times. (Times with a monotonic reading,
// which those compare instead when both have one, are not packet times;
// their wall and monotonic clocks agree but across a step of the clock.)
// Otherwise it returns the least or the greatest int64, before or after
// every time in that range, and false: a time kept to be compared with
// packet times may be out of range, a packet time compared may not.
func UnixNanos(t time.Time) (int64, bool) {
	const maxSec = 1 << 33
	switch sec := t.Unix(); {
	case sec < -maxSec:
		return math.MinInt64, false
	case sec > maxSec:
		return math.MaxInt64, false
	default:
		return sec*1e9 + int64(t.Nanosecond()), true
	}
}
