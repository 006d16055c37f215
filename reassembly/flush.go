package reassembly

import (
	"cmp"
	"slices"

	"github.com/gopacket/gopacket"
	tcpasm "github.com/gopacket/gopacket/reassembly"
)

// gopacket's flushes walk connections in map order. Stream calls made
// during a flush are therefore collected and replayed afterwards, grouped
// by connection in Flow order; each connection's own calls keep their
// order.

// flushEvent is a Stream call collected during a flush.
type flushEvent struct {
	c    *conn
	kind evKind
	side Side
	n    int // lost bytes (Gap), or length of the data at off (Data)
	off  int
}

// maxArenaKeep bounds the flush arena kept between flushes.
const maxArenaKeep = 4 << 20

func (r *Reassembler) collect(c *conn, k evKind, side Side, p []byte, n int) {
	ev := flushEvent{c: c, kind: k, side: side, n: n}
	if k == evData {
		ev.off, ev.n = len(r.arena), len(p)
		r.arena = append(r.arena, p...)
	}
	r.flushed = append(r.flushed, ev)
	if !c.touched {
		c.touched = true
		r.touched = append(r.touched, c)
	}
}

// maybeIdleFlush ends connections idle for IdleTimeout and gives up on
// holes that old, looking once per second of packet time.
func (r *Reassembler) maybeIdleFlush() {
	if r.lastFlush.IsZero() {
		r.lastFlush = r.latest
		return
	}
	if r.latest.Sub(r.lastFlush) < flushEvery {
		return
	}
	r.lastFlush = r.latest
	t := r.latest.Add(-r.opts.IdleTimeout)
	r.cur = pktCtx{
		ci:   gopacket.CaptureInfo{Timestamp: r.latest},
		meta: Meta{Frame: r.latestFrame, Time: r.latest},
	}
	ended := r.stats.Ended
	r.flushing = true
	r.asm.FlushWithOptions(tcpasm.FlushOptions{T: t, TC: t})
	r.flushing = false
	r.stats.IdleEnded += r.stats.Ended - ended
	r.replay(true)
}

// replay delivers the calls collected during a flush, connection by
// connection in Flow order. After an idle flush, holes it exposed after
// snaplen-cut segments are forced out too.
func (r *Reassembler) replay(after bool) {
	if len(r.touched) == 0 {
		return
	}
	slices.SortFunc(r.touched, func(a, b *conn) int {
		if c := a.flow.compare(&b.flow); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	// Each connection's calls, in the order they were made.
	slices.SortStableFunc(r.flushed, func(a, b flushEvent) int {
		if a.c == b.c {
			return 0
		}
		if c := a.c.flow.compare(&b.c.flow); c != 0 {
			return c
		}
		return cmp.Compare(a.c.id, b.c.id)
	})
	m := r.cur.meta
	for _, ev := range r.flushed {
		s := ev.c.s
		switch ev.kind {
		case evData:
			s.Data(ev.side, r.arena[ev.off:ev.off+ev.n], m)
		case evGap:
			s.Gap(ev.side, ev.n, m)
		case evTruncated:
			s.Truncated(ev.side, m)
		case evEnd:
			s.End(m)
		}
	}
	clear(r.flushed)
	r.flushed = r.flushed[:0]
	if cap(r.arena) > maxArenaKeep {
		r.arena = nil
	}
	r.arena = r.arena[:0]
	for _, c := range r.touched {
		c.touched = false
		if after {
			r.forceTruncHoles(c)
		}
	}
	clear(r.touched)
	r.touched = r.touched[:0]
}
