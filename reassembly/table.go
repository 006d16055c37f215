package reassembly

import (
	"net/netip"

	"github.com/kwatch/kwatch/reassembly/internal/dlist"
)

// The connection table's cap (Options.MaxConnections, issue 12): the table
// is split into Partitions parts by a fixed hash of a connection's two
// endpoints, and each part holds at most its share of the cap. A sharded
// pipeline gives each worker whole parts (pipeline/shard.go), so a part
// sees the same segments in the same order whatever the number of workers,
// and its evictions are the same on every run. A connection counts from its
// first packet to the moment the table forgets it; past the share, the
// part evicts, in this order: a connection already ended (kept only to
// absorb its trailing ACKs), a connection that never carried data (an
// embryo, embryo.go), then the connection least recently active. An evicted
// connection ends as at the capture's end (its buffered data delivered, its
// holes given up); a later packet of it opens a new connection, joined
// mid-stream.

// Partitions is the number of parts of the connection table, and so the
// most workers a sharded pipeline keeps busy. Fewer, larger parts give
// each a larger share of the out-of-order cap, which is shared out the
// same way (Options.MaxBufferedPagesTotal): at 32, 1,536 pages, so that
// one connection alone in its part can hold a 2 MiB answer behind a late
// segment (cmd/kwatch TestTransportLargeOutOfOrderRecovery).
const Partitions = 32

// DefaultMaxConnections is the default of Options.MaxConnections: 4,096 a
// part, 131,072 in all. A large broker holds tens of thousands of client
// connections; at 100,000 the fullest part, by the hash's spread, holds
// about 3,300. An embryo costs about 140 bytes, so a SYN flood stays under
// 20 MB; connections that carry Kafka cost a few KB each downstream.
const DefaultMaxConnections = Partitions * 4096

// Partition returns the part of the connection table, and so the shard,
// of the connection between a and b: the same for both directions and on
// every run (unseeded, unlike the table's own hashes).
func Partition(a, b netip.AddrPort) int {
	x, y := endpointKey(a), endpointKey(b)
	if x > y {
		x, y = y, x
	}
	h := x*0x9e3779b97f4a7c15 ^ y*0xc2b2ae3d27d4eb4f
	h ^= h >> 29
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 32
	return int(h % Partitions)
}

func endpointKey(ap netip.AddrPort) uint64 {
	a := ap.Addr()
	var k uint64
	if a.Is4() {
		b := a.As4()
		k = uint64(b[0])<<24 | uint64(b[1])<<16 | uint64(b[2])<<8 | uint64(b[3])
	} else {
		b := a.As16()
		for i := 0; i < 16; i += 8 {
			k = k*0x100000001b3 ^ (uint64(b[i])<<56 | uint64(b[i+1])<<48 | uint64(b[i+2])<<40 | uint64(b[i+3])<<32 |
				uint64(b[i+4])<<24 | uint64(b[i+5])<<16 | uint64(b[i+6])<<8 | uint64(b[i+7]))
		}
	}
	return k<<16 ^ uint64(ap.Port())
}

// part is one part of the connection table.
type part struct {
	n    int  // connections: embryos and conns in gopacket's pool
	held int  // payload bytes its conns hold aside (Options.MaxHeldBytes)
	over bool // in Reassembler.overParts
	// live and done list the part's conns in gopacket's pool, open and
	// ended, least recently active first.
	live, done connList
	emb        embList // the part's embryos, least recently active first
}

// held is the count of bytes held aside in c's part of the table.
func (c *conn) held() *int { return &c.r.parts[c.part].held }

// connList is an intrusive doubly linked list of conns.
type connList struct{ head, tail *conn }

func (l *connList) pushBack(c *conn) {
	c.Prev, c.Next = l.tail, nil
	if l.tail != nil {
		l.tail.Next = c
	} else {
		l.head = c
	}
	l.tail = c
}

func (l *connList) remove(c *conn) {
	dlist.Unlink(&l.head, &l.tail, c)
	c.Prev, c.Next = nil, nil
}

// Which list of its part a conn is on.
const (
	onNone uint8 = iota
	onLive
	onDone
)

func (p *part) list(on uint8) *connList {
	if on == onDone {
		return &p.done
	}
	return &p.live
}

// admit counts c, new in gopacket's pool, in its part.
func (r *Reassembler) admit(c *conn) {
	c.part = uint8(Partition(c.flow.Client, c.flow.Broker))
	p := &r.parts[c.part]
	p.live.pushBack(c)
	c.on = onLive
	r.grew(int(c.part))
}

// grew notes that part i holds one more connection.
func (r *Reassembler) grew(i int) {
	p := &r.parts[i]
	p.n++
	if p.n > r.perPart && !p.over {
		p.over = true
		r.overParts = append(r.overParts, i)
	}
}

// touch marks c active: the part's live list is kept in order lazily,
// as a clock does (evictOne), so that a packet costs one store, not a
// move in the list.
func (r *Reassembler) touch(c *conn) { c.active = true }

// retire moves c, ended, to its part's done list.
func (r *Reassembler) retire(c *conn) {
	if c.on == onLive {
		p := &r.parts[c.part]
		p.live.remove(c)
		p.done.pushBack(c)
		c.on = onDone
	}
}

// leastActive returns the conn of p to evict: the first in its live list
// not active since it was put there. One active since goes to the back,
// no longer marked, so each is passed over once per activity (a clock's
// second chance: least recently active, at the grain of evictions). A
// conn that waits is passed over too.
func (r *Reassembler) leastActive(p *part) *conn {
	for range 2 * (p.n + 1) {
		c := p.live.head
		if c == nil {
			return nil
		}
		if !c.active && !c.holding && !c.waiting {
			return c
		}
		c.active = false
		p.live.remove(c)
		p.live.pushBack(c)
	}
	return nil
}

// forget is told by gopacket's pool that it dropped s's connection.
func (r *Reassembler) forget(s any) {
	c, ok := s.(*conn)
	if !ok || c.on == onNone {
		return
	}
	p := &r.parts[c.part]
	p.list(c.on).remove(c)
	c.on = onNone
	p.n--
}

// evictOver evicts from the parts that grew over their share until they
// are not. A part whose every conn waits stays over until it grows again:
// a part changes only with its own segments, so its evictions do not
// depend on what other parts, on other workers, do meanwhile.
func (r *Reassembler) evictOver() {
	for _, i := range r.overParts {
		p := &r.parts[i]
		p.over = false
		for p.n > r.perPart && r.evictOne(i) {
		}
	}
	r.overParts = r.overParts[:0]
}

// evictOne evicts one connection of part i, in the order the package doc
// gives; it reports whether there was one to evict. A conn waiting for a
// late SYN or for the bytes it acknowledges is passed over: those waits
// are short and bounded in bytes of their own (Options.MaxHeldBytes).
func (r *Reassembler) evictOne(i int) bool {
	p := &r.parts[i]
	var victim *conn
	switch {
	case p.done.head != nil:
		victim = p.done.head
	case p.emb.head >= 0:
		r.stats.Evicted++
		r.endEmbryo(p.emb.head)
		return true
	default:
		victim = r.leastActive(p)
	}
	if victim == nil {
		return false
	}
	r.stats.Evicted++
	// As at the capture's end: data behind a hole keeps its packets'
	// frames, and no hole given up counts as an overflow.
	flushing := r.flushing
	r.flushing = true
	if !r.asm.FlushConn(victim.flow.Client, victim.flow.Broker, true) {
		r.forget(victim) // cannot happen: every listed conn is pooled
	}
	r.flushing = flushing
	return true
}
