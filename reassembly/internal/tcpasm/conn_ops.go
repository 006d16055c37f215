package tcpasm

import (
	"net/netip"
	"time"

	"github.com/kwatch/kwatch/reassembly/internal/dlist"
)

// Operations on one direction of one connection, for a caller that knows
// more than the segments show: where a direction starts, that a hole will
// never be filled, that a direction ended. Each names the direction by its
// sender src and receiver dst, acts at time ts as a packet of that time
// would (for flushes), and reports whether the connection is pooled. They
// must not be called from inside a Stream call.

// half returns the pooled connection of src and dst and the direction
// from src, and marks it seen at ts; nil if the connection is not pooled.
func (a *Assembler) half(src, dst netip.AddrPort, ts time.Time) (*connection, *halfconnection) {
	var k key
	srcIsLo := k.set(addrEndpoint(src), addrEndpoint(dst))
	conn := a.lookup(&k)
	if conn == nil {
		return nil, nil
	}
	if a.PageGroup != nil {
		a.pc = conn.pc
	}
	half, _ := conn.halves(srcIsLo)
	a.connPool.lower(ts)
	half.see(ts)
	return conn, half
}

// NextSeq returns the sequence number of the next in-order byte of the
// direction from src to dst: negative if it has not started or the
// connection is not pooled. The Assembler is the one owner of the position
// (see Stream.Accept for it per packet); unlike the operations below, it may
// be called from inside a Stream call, where it reads the position past
// the bytes being delivered.
func (a *Assembler) NextSeq(src, dst netip.AddrPort) Sequence {
	half := a.peek(src, dst)
	if half == nil {
		return invalidSequence
	}
	return half.nextSeq
}

// Queued returns where the first byte queued ahead of a hole in the
// direction from src to dst starts, if any: how far a hole may be given up
// (SkipTo) without skipping data that is there. It may be called from
// inside a Stream call.
func (a *Assembler) Queued(src, dst netip.AddrPort) (Sequence, bool) {
	half := a.peek(src, dst)
	if half == nil || half.first == nil {
		return invalidSequence, false
	}
	return half.first.seq, true
}

// peek returns the half of the pooled connection of src and dst that src
// sends, or nil, and changes nothing.
func (a *Assembler) peek(src, dst netip.AddrPort) *halfconnection {
	var k key
	srcIsLo := k.set(addrEndpoint(src), addrEndpoint(dst))
	conn := a.last
	if conn == nil || conn.removed || !conn.key.eq(&k) {
		if conn = a.connPool.conns.get(&k); conn == nil {
			return nil
		}
	}
	half, _ := conn.halves(srcIsLo)
	return half
}

// StartAt starts the direction from src at sequence number at, unless it
// has started (or closed): as a segment at at with start set would, it
// delivers nothing yet.
func (a *Assembler) StartAt(src, dst netip.AddrPort, at Sequence, ts time.Time) bool {
	_, half := a.half(src, dst, ts)
	if half == nil {
		return false
	}
	if !half.closed && half.nextSeq == invalidSequence {
		half.nextSeq = at
	}
	return true
}

// SkipTo gives up the bytes of the direction from src before to, which
// will never come: the Stream gets a ScatterGather that skips them, with
// reason as its SkipReason, followed by the data queued from to on, if
// any. Queued bytes before to are dropped. A direction not started, closed,
// or already at or past to is left alone.
func (a *Assembler) SkipTo(src, dst netip.AddrPort, to Sequence, reason SkipReason, ts time.Time, ac AssemblerContext) bool {
	conn, half := a.half(src, dst, ts)
	if half == nil {
		return false
	}
	if half.closed || half.nextSeq == invalidSequence || half.nextSeq.Difference(to) <= 0 {
		return true
	}
	a.dropBefore(half, to)
	a.skipReason = reason
	a.sendEmpty(conn, half, to, false, ac)
	a.skipReason = SkipGivenUp
	return true
}

// Close ends the direction from src where it is, as a RST there would
// (at, if it has not started): the Stream gets the data queued from there
// on, if any, and the end.
func (a *Assembler) Close(src, dst netip.AddrPort, at Sequence, ts time.Time, ac AssemblerContext) bool {
	conn, half := a.half(src, dst, ts)
	if half == nil {
		return false
	}
	if half.closed {
		return true
	}
	if half.nextSeq == invalidSequence {
		half.nextSeq = at
	}
	a.sendEmpty(conn, half, half.nextSeq, true, ac)
	return true
}

// sendEmpty hands the Stream an empty packet at seq, the end if end, with
// the data queued contiguous to it, as general does a packet's.
func (a *Assembler) sendEmpty(conn *connection, half *halfconnection, seq Sequence, end bool, ac AssemblerContext) {
	lp := &a.cacheLP
	lp.bytes, lp.start, lp.end, lp.seq, lp.ac, lp.frame = nil, false, end, seq, ac, 0
	a.ret = append(a.ret[:0], lp)
	a.sendToConnection(conn, half, ac)
}

// dropBefore drops the queued bytes of half before to.
func (a *Assembler) dropBefore(half *halfconnection, to Sequence) {
	for p := half.first; p != nil && p.seq.Difference(to) > 0; p = half.first {
		if d := p.seq.Difference(to); d < len(p.bytes) {
			p.bytes, p.seq = p.bytes[d:], to
			return
		}
		dlist.Unlink(&half.first, &half.last, p)
		half.pages -= p.release(a.pc)
	}
}
