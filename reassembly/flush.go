package reassembly

import (
	"cmp"
	"slices"
	"time"

	"github.com/kwatch/kwatch/flow"
	"github.com/kwatch/kwatch/reassembly/internal/tcpasm"
)

// gopacket's flushes walk connections in the order of its hash table,
// which is seeded anew for every Reassembler. Stream calls made during a
// flush are therefore collected and replayed afterwards, grouped by
// connection in Flow order; each connection's own calls keep their order.

// flushEvent is a Stream call collected during a flush.
type flushEvent struct {
	c    *conn
	kind evKind
	side flow.Side
	n    int // lost or cut bytes (Gap, Cut), or length of the data at off (Data)
	off  int
	meta flow.Meta // the packet the call is about (see conn.ReassembledSG)
}

// compare orders connections for replay: Flow order, then creation.
func (c *conn) compare(d *conn) int {
	if x := c.flow.compare(&d.flow); x != 0 {
		return x
	}
	return cmp.Compare(c.id, d.id)
}

// maxArenaKeep bounds the flush arena kept between flushes.
const maxArenaKeep = 4 << 20

func (r *Reassembler) collect(c *conn, k evKind, side flow.Side, p []byte, n int) {
	ev := flushEvent{c: c, kind: k, side: side, n: n, meta: r.cur.meta}
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

// IdleClock decides when idle flushes happen: once per FlushInterval of
// packet time, before the segment whose time crosses it. A Reassembler
// keeps one internally; a caller that shards segments over several
// Reassemblers (Options.ExternalIdleFlush) keeps one over all segments and
// calls IdleFlush on every shard when Tick says so, so that flushes happen
// at the same frames whatever the number of shards.
type IdleClock struct {
	latest      time.Time
	latestFrame uint64
	lastFlush   time.Time
	due         time.Time // lastFlush + flushEvery, once lastFlush is set
	// latestNs and dueNs are latest and due in Unix nanoseconds
	// (tcpasm.UnixNanos), once armed: a segment within the interval,
	// nearly every one, is then two integer comparisons rather than two
	// time.Time ones.
	latestNs, dueNs int64
	armed           bool
}

// FlushInterval is how often, in packet time, idle connections are looked
// for.
const FlushInterval = flushEvery

// Tick records a wanted segment's frame and time (call it before handing
// the segment on) and reports whether an idle flush is due now, with the
// flow.Meta to give IdleFlush.
func (k *IdleClock) Tick(frame uint64, t time.Time) (flow.Meta, bool) {
	k.latestFrame = frame
	if ns, ok := tcpasm.UnixNanos(t); ok && k.armed && ns < k.dueNs {
		if ns > k.latestNs {
			k.latest, k.latestNs = t, ns
		}
		return flow.Meta{}, false
	}
	m, ok := k.tickTime(t)
	k.latestNs, _ = tcpasm.UnixNanos(k.latest)
	k.dueNs, _ = tcpasm.UnixNanos(k.due)
	k.armed = !k.lastFlush.IsZero()
	return m, ok
}

// tickTime is Tick on time.Time, for what tcpasm.UnixNanos does not take and for
// the segment that ends an interval.
func (k *IdleClock) tickTime(t time.Time) (flow.Meta, bool) {
	// Within the interval: latest moves, nothing is due. Until the clock
	// is armed due is zero, and the only times before it, before year 1,
	// are not after latest.
	if t.Before(k.due) {
		if t.After(k.latest) {
			k.latest = t
		}
		return flow.Meta{}, false
	}
	return k.tick(t)
}

func (k *IdleClock) tick(t time.Time) (flow.Meta, bool) {
	// Time that does not move on changes nothing: lastFlush is zero only
	// while latest is.
	if !t.After(k.latest) {
		return flow.Meta{}, false
	}
	k.latest = t
	if k.lastFlush.IsZero() {
		k.arm()
		return flow.Meta{}, false
	}
	// latest >= due: latest.Sub(lastFlush) >= flushEvery.
	k.arm()
	return flow.Meta{Frame: k.latestFrame, Time: k.latest}, true
}

// arm starts the next interval at latest.
func (k *IdleClock) arm() {
	k.lastFlush = k.latest
	k.due = k.latest.Add(flushEvery)
}

// IdleFlush ends connections idle for IdleTimeout before m.Time and gives
// up on holes that old; Stream calls carry m. With ExternalIdleFlush it is
// the only way idle flushes happen.
func (r *Reassembler) IdleFlush(m flow.Meta) {
	if r.closed {
		return
	}
	r.idleFlush(m)
}

func (r *Reassembler) idleFlush(m flow.Meta) {
	t := m.Time.Add(-r.opts.IdleTimeout)
	r.cur = pktCtx{meta: m}
	ended := r.stats.Ended
	r.flushing, r.collecting = true, true
	r.idleEmbryos(t)
	if len(r.holding) > 0 {
		r.releaseAged(m.Time, false)
		r.cur = pktCtx{meta: m}
	}
	if len(r.acking) > 0 {
		r.checkAllAcks(m.Time, false)
	}
	if len(r.deferring) > 0 {
		r.redeliverAll()
	}
	r.asm.FlushWithOptions(tcpasm.FlushOptions{T: t, TC: t})
	r.evictOver()
	r.flushing, r.collecting = false, false
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
	slices.SortFunc(r.touched, (*conn).compare)
	// Each connection's calls, in the order they were made.
	slices.SortStableFunc(r.flushed, func(a, b flushEvent) int {
		if a.c == b.c {
			return 0
		}
		return a.c.compare(b.c)
	})
	// After an idle flush, each connection's forced-out snaplen holes
	// follow its own replayed calls, so that the calls of one connection
	// stay together (a sharded run merges flushes connection by connection).
	var prev *conn
	for _, ev := range r.flushed {
		if after && prev != nil && ev.c != prev {
			r.forceTruncHoles(prev)
		}
		prev = ev.c
		s := ev.c.s
		switch ev.kind {
		case evData:
			s.Data(ev.side, r.arena[ev.off:ev.off+ev.n], ev.meta)
		case evGap:
			s.Gap(ev.side, ev.n, ev.meta)
		case evTruncated:
			s.Truncated(ev.side, ev.meta)
		case evCut:
			s.Cut(ev.side, ev.n, ev.meta)
		case evEnd:
			s.End(ev.c.endMeta(ev.meta))
		}
	}
	if after && prev != nil {
		r.forceTruncHoles(prev)
	}
	clear(r.flushed)
	r.flushed = r.flushed[:0]
	if cap(r.arena) > maxArenaKeep {
		r.arena = nil
	}
	r.arena = r.arena[:0]
	for _, c := range r.touched {
		c.touched = false
	}
	clear(r.touched)
	r.touched = r.touched[:0]
}
