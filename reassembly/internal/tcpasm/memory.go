// Copyright 2012 Google, Inc. All rights reserved.
//
// Use of this source code is governed by a BSD-style license
// that can be found in the LICENSE file in the root of the source
// tree.

package tcpasm

import (
	"encoding/binary"
	"math"
	"math/bits"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

/*
 * pageCache
 */
// pageCache is a concurrency-unsafe store of page objects we use to avoid
// memory allocation as much as we can.  Assemblers sharing a StreamPool pop
// each other's pages off a connection, so used is charged to the owning
// cache.  The sync.Pool behind it lets the garbage collector take back pages
// after a burst of out-of-order traffic.
type pageCache struct {
	pagePool *sync.Pool
	used     int64
}

func newPageCache() *pageCache {
	pc := &pageCache{
		pagePool: &sync.Pool{
			New: func() interface{} { return new(page) },
		}}
	return pc
}

// next returns a clean, ready-to-use page object.
func (c *pageCache) next(ts time.Time) (p *page) {
	p = c.pagePool.Get().(*page)
	p.seen = ts
	p.bytes = p.buf[:0]
	p.owner = c
	// A page from the pool keeps the flags of its last use, and
	// convertToPages sets end on a packet's last page only: a stale end on
	// another page would end its stream early.
	p.start, p.end, p.first = false, false, false
	c.used++
	return p
}

// replace replaces a page into the pageCache.
func (c *pageCache) replace(p *page) {
	p.owner.used--
	p.Prev = nil
	p.Next = nil
	c.pagePool.Put(p)
}

/*
 * StreamPool
 */

// StreamPool stores all streams created by Assemblers.  It is not safe
// for concurrency: the Assemblers sharing it must all be used by one
// goroutine.
//
// StreamPool handles the creation and storage of Stream objects used by one or
// more Assembler objects.  When a new TCP stream is found by an Assembler, it
// creates an associated Stream by calling its StreamFactory's New method.
// Thereafter (until the stream is closed), that Stream object will receive
// assembled TCP data via Assembler's calls to the stream's Reassembled
// function.
//
// Like the Assembler, StreamPool attempts to minimize allocation.
type StreamPool struct {
	conns     connTable
	factory   StreamFactory
	free      []*connection
	nextAlloc int
	// ending: no connection will be opened again (EndInput), so one
	// removed is not parked for reuse, and the allocation it shares with
	// others is freed once they are removed too.
	ending bool
	// floor, once floorKnown, is at or before every time a flush compares
	// (a half's lastSeen, a page's seen): set by a full flush, lowered by
	// any packet stamped earlier. A flush whose thresholds are not after
	// it has nothing to do, so a table of active connections costs no
	// scan per idle flush (see FlushWithOptions).
	floor      time.Time
	floorKnown bool
	// floorNs is floor in Unix nanoseconds (UnixNanos).
	floorNs int64
	// soon holds, after a full flush, the connections whose floor was
	// within flushAhead of its threshold: the next flushes, while their
	// thresholds stay below floor (now the floor of all the others), need
	// look at these alone. A connection object in it may have been reused
	// since; looking at it is then merely wasted.
	soon []*connection
	// recent caches pooled connections by their ports for
	// Assembler.InOrder (see Assembler.find). An entry goes with its
	// connection (remove), so that the cache holds nothing dropped.
	recent [recentSize]recentConn
	// OnRemove, if set, is told of each connection the pool drops (a SYN
	// reusing its 4-tuple, a flush, Remove), after the Stream's last call.
	OnRemove func(Stream)
}

// flushAhead is how far past a full flush's threshold a connection's
// floor may be for the next flushes to look at it alone (soon).
const flushAhead = time.Minute

// lower notes a packet time: the floor stays at or before it.
func (p *StreamPool) lower(ts time.Time) {
	if ts.Before(p.floor) {
		p.setFloor(ts)
	}
}

// lowerNs is lower for ts in Unix nanoseconds, ns, within UnixNanos's
// range.
func (p *StreamPool) lowerNs(ts time.Time, ns int64) {
	if ns < p.floorNs {
		p.floor, p.floorNs = ts, ns
	}
}

func (p *StreamPool) setFloor(ts time.Time) {
	p.floor = ts
	p.floorNs, _ = UnixNanos(ts)
}

const initialAllocSize = 1024

func (p *StreamPool) grow() {
	conns := make([]connection, p.nextAlloc)
	for i := range conns {
		p.free = append(p.free, &conns[i])
	}
	// Doubling up to a bound: past it, a pool of many connections
	// would hold up to half again as many unused ones.
	p.nextAlloc = min(2*p.nextAlloc, maxAllocSize)
}

// maxAllocSize bounds the connections allocated at once.
const maxAllocSize = 4096

// remove takes conn out of the pool and parks it on the free list.
func (p *StreamPool) remove(conn *connection) {
	if conn.removed {
		return
	}
	if p.conns.remove(&conn.key) {
		if !p.ending {
			p.free = append(p.free, conn)
		}
		if p.OnRemove != nil {
			p.OnRemove(conn.c2s.stream)
		}
	}

	// A parked connection must keep neither its Stream nor its pages alive.
	conn.removed = true
	if e := &p.recent[recentSlot(uint16(conn.key.lo.rest), uint16(conn.key.hi.rest))]; e.c == conn {
		*e = recentConn{}
	}
	for _, half := range [2]*halfconnection{&conn.c2s, &conn.s2c} {
		half.stream, half.saved, half.first, half.last = nil, nil, nil, nil
	}
}

// NewStreamPool creates a new connection pool.  Streams will
// be created as necessary using the passed-in StreamFactory.
func NewStreamPool(factory StreamFactory) *StreamPool {
	return &StreamPool{
		conns:     newConnTable(initialAllocSize),
		free:      make([]*connection, 0, initialAllocSize),
		factory:   factory,
		nextAlloc: initialAllocSize,
		floorNs:   math.MinInt64, // the zero floor, year 1
	}
}

// connections appends the pooled connections to dst.
func (p *StreamPool) connections(dst []*connection) []*connection {
	for _, s := range p.conns.slots {
		if s.c != nil {
			dst = append(dst, s.c)
		}
	}
	return dst
}

func (p *StreamPool) newConnection(k key, srcIsLo bool, s Stream, ts time.Time) *connection {
	if len(p.free) == 0 {
		p.grow()
	}
	index := len(p.free) - 1
	c := p.free[index]
	p.free = p.free[:index]
	c.reset(k, srcIsLo, s, ts)
	return c
}

// getConnection returns the connection of k, creating it, for a packet
// sent by k.lo (srcIsLo) or k.hi, if the factory gives it a Stream.
func (p *StreamPool) getConnection(k key, srcIsLo bool, netFlow gopacket.Flow, tcp *layers.TCP, ac AssemblerContext) *connection {
	if conn := p.conns.get(&k); conn != nil {
		return conn
	}
	ts := ac.GetCaptureInfo().Timestamp
	s := p.factory.New(netFlow, portFlow(tcp), tcp, ac)
	if s == nil {
		return nil
	}
	// New may have assembled a packet of this connection, which added it.
	if conn := p.conns.get(&k); conn != nil {
		// FIXME: delete s ?
		return conn
	}
	conn := p.newConnection(k, srcIsLo, s, ts)
	p.conns.put(conn)
	return conn
}

// open returns the connection a packet of k goes to, creating it if
// needed.  A SYN on a connection closed in both directions but kept in the
// pool (ReassemblyComplete returned false) starts a new connection on that
// 4-tuple.  It returns nil if the factory gives no Stream.
func (p *StreamPool) open(k key, srcIsLo bool, netFlow gopacket.Flow, tcp *layers.TCP, ac AssemblerContext, reopenOnReuse bool) *connection {
	for {
		conn := p.getConnection(k, srcIsLo, netFlow, tcp, ac)
		if conn == nil {
			return nil
		}
		if conn.reusedBy(srcIsLo, tcp, reopenOnReuse) {
			p.remove(conn)
			continue
		}
		return conn
	}
}

// connTable maps keys to connections: open addressing with linear probing
// over a power-of-two array at most half full.  It stands in for a Go map,
// whose generic hashing and comparing of 48-byte keys cost more than the
// rest of the handling of an in-order packet.  The hash is seeded per
// table, as Go seeds its maps, so that crafted traffic cannot aim for
// collisions.
type connTable struct {
	slots []connSlot
	n     int
	seed  [3]uint64
}

type connSlot struct {
	h uint64 // hash of c.key
	c *connection
}

func newConnTable(size int) connTable {
	n := 16
	for n < 2*size {
		n *= 2
	}
	return connTable{slots: make([]connSlot, n), seed: [3]uint64{rand.Uint64(), rand.Uint64(), rand.Uint64()}}
}

// mix is wyhash's mixing step.
func mix(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a^0x2d358dccaa6c78a5, b^0x8bb84b93962eacc9)
	return hi ^ lo
}

// hash mixes the six words of k in three independent pairs, so that the
// multiplications overlap rather than wait for one another; each pair has
// its own seed.
func (t *connTable) hash(k *key) uint64 {
	return mix(k.lo.a0^t.seed[0], k.lo.a1) ^ mix(k.lo.rest^t.seed[1], k.hi.a0) ^ mix(k.hi.a1^t.seed[2], k.hi.rest)
}

// find returns the slot of k, or the empty slot where it would go.
func (t *connTable) find(k *key, h uint64) int {
	mask := len(t.slots) - 1
	for i := int(h) & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.c == nil || (s.h == h && s.c.key.eq(k)) {
			return i
		}
	}
}

func (t *connTable) get(k *key) *connection {
	return t.slots[t.find(k, t.hash(k))].c
}

// put adds c, whose key must not be in t.
func (t *connTable) put(c *connection) {
	if 2*(t.n+1) > len(t.slots) {
		old := t.slots
		t.slots = make([]connSlot, 2*len(old))
		for _, s := range old {
			if s.c != nil {
				t.slots[t.find(&s.c.key, s.h)] = s
			}
		}
	}
	h := t.hash(&c.key)
	t.slots[t.find(&c.key, h)] = connSlot{h: h, c: c}
	t.n++
}

// remove takes k out of t and reports whether it was there.  The entries
// after it in its run move back so that no probe stops short of them.
func (t *connTable) remove(k *key) bool {
	i := t.find(k, t.hash(k))
	if t.slots[i].c == nil {
		return false
	}
	mask := len(t.slots) - 1
	for j := (i + 1) & mask; t.slots[j].c != nil; j = (j + 1) & mask {
		// The entry at j may fill the hole at i only if its probe from
		// home passes i before reaching j.
		if home := int(t.slots[j].h) & mask; (i-home)&mask < (j-home)&mask {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = connSlot{}
	t.n--
	return true
}

// portFlow is tcp's transport flow, built from its port fields rather than
// by TransportFlow, which reads slices only DecodeFromBytes sets: a caller
// may fill a layers.TCP itself.
func portFlow(tcp *layers.TCP) gopacket.Flow {
	var src, dst [2]byte
	binary.BigEndian.PutUint16(src[:], uint16(tcp.SrcPort))
	binary.BigEndian.PutUint16(dst[:], uint16(tcp.DstPort))
	return gopacket.NewFlow(layers.EndpointTCPPort, src[:], dst[:])
}
