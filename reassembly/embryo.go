package reassembly

import (
	"cmp"
	"math/bits"
	"math/rand/v2"
	"net/netip"
	"slices"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/kwatch/kwatch/capture"
	"github.com/kwatch/kwatch/flow"
)

// Embryos: a connection that has carried no data costs no gopacket
// connection, no conn and no Stream (issue 12: a SYN flood, a port scan,
// clients that connect and wait). Its first packet, a SYN or SYN-ACK, and up
// to maxEmbryoRecs-1 more without payload, FIN or RST, are kept as compact
// records in a table of their own. Its first other packet promotes it: the
// records are added again, in their order, with their frames and times, and
// then that packet, so that everything downstream sees what it would have
// seen had the connection been made at once. An embryo idle for the idle
// timeout, evicted, or still there at Close is opened and ended directly,
// as gopacket would have ended it: its Stream sees Open and End, nothing
// between.

const maxEmbryoRecs = 3

// embRec is one packet of an embryo, relative to its first.
type embRec struct {
	seq, ack uint32
	dframe   uint32 // frame - embryo.frame
	dtime    uint32 // nanoseconds after embryo.time
	flags    uint8
}

const (
	recSYN   = 1 << iota
	recACK   // the ACK flag
	recFromB // sent by b (else by a)
)

// embryo is a connection without data. Addresses are kept as bytes, not
// netip.AddrPort, so that the table holds no pointers for the GC to scan.
type embryo struct {
	a, b       [16]byte
	pa, pb     uint16
	v4         bool
	n          uint8 // records
	part       uint8
	recs       [maxEmbryoRecs]embRec
	frame      uint64
	time       int64 // Unix nanoseconds, UTC
	prev, next int32 // in its part's list; -1: none
}

// embList is a part's embryos, least recently active first.
type embList struct{ head, tail int32 }

// embTable holds the embryos: entries in chunks that never move (free
// ones chained by next), found by open addressing over slots (entry index
// + 1; 0 empty), at most half full, hashed with a per-table seed. Chunks,
// rather than one slice grown by append, so that growing never holds the
// old array and the new at once.
type embTable struct {
	chunks [][]embryo
	used   int32 // entries ever taken from the chunks
	free   int32 // first free entry, -1: none
	slots  []int32
	n      int
	seed   uint64
}

const embChunk = 4096

// at returns entry i.
func (t *embTable) at(i int32) *embryo { return &t.chunks[i/embChunk][i%embChunk] }

func newEmbTable() embTable {
	return embTable{free: -1, slots: make([]int32, 64), seed: rand.Uint64()}
}

func addrBytes(ap netip.AddrPort) [16]byte { return ap.Addr().As16() }

func (e *embryo) addr(b bool) netip.AddrPort {
	x, p := e.a, e.pa
	if b {
		x, p = e.b, e.pb
	}
	a := netip.AddrFrom16(x)
	if e.v4 {
		a = a.Unmap()
	}
	return netip.AddrPortFrom(a, p)
}

func (t *embTable) hashEnds(x [16]byte, px uint16, y [16]byte, py uint16) uint64 {
	hx := mix64(leUint64(x[:8])^t.seed, leUint64(x[8:])^uint64(px))
	hy := mix64(leUint64(y[:8])^t.seed, leUint64(y[8:])^uint64(py))
	return mix64(min(hx, hy), max(hx, hy))
}

func leUint64(b []byte) uint64 {
	_ = b[7]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

func mix64(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a^0x2d358dccaa6c78a5, b^0x8bb84b93962eacc9)
	return hi ^ lo
}

func (t *embTable) hashOf(e *embryo) uint64 { return t.hashEnds(e.a, e.pa, e.b, e.pb) }

// slot returns the slot of the embryo of src and dst, or the empty slot
// where it would go.
func (t *embTable) slot(src, dst netip.AddrPort) int {
	x, y := addrBytes(src), addrBytes(dst)
	px, py := src.Port(), dst.Port()
	mask := len(t.slots) - 1
	for i := int(t.hashEnds(x, px, y, py)) & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			return i
		}
		e := t.at(s - 1)
		if e.a == x && e.pa == px && e.b == y && e.pb == py || e.a == y && e.pa == py && e.b == x && e.pb == px {
			return i
		}
	}
}

// find returns the index of the embryo of src and dst, or -1.
func (t *embTable) find(src, dst netip.AddrPort) int32 {
	if t.n == 0 {
		return -1
	}
	return t.slots[t.slot(src, dst)] - 1
}

// add makes an embryo for s and returns its index.
func (t *embTable) add(s *capture.Segment) int32 {
	if 2*(t.n+1) > len(t.slots) {
		t.rehash(2 * len(t.slots))
	}
	i := t.free
	if i >= 0 {
		t.free = t.at(i).next
	} else {
		if int(t.used) == len(t.chunks)*embChunk {
			t.chunks = append(t.chunks, make([]embryo, embChunk))
		}
		i = t.used
		t.used++
	}
	e := t.at(i)
	*e = embryo{a: addrBytes(s.Src), b: addrBytes(s.Dst), pa: s.Src.Port(), pb: s.Dst.Port(), v4: s.Src.Addr().Is4(),
		frame: s.Frame, time: s.Time.UnixNano(), prev: -1, next: -1}
	t.slots[t.slot(s.Src, s.Dst)] = i + 1
	t.n++
	return i
}

func (t *embTable) rehash(n int) {
	old := t.slots
	t.slots = make([]int32, n)
	mask := n - 1
	for _, s := range old {
		if s == 0 {
			continue
		}
		j := int(t.hashOf(t.at(s-1))) & mask
		for t.slots[j] != 0 {
			j = (j + 1) & mask
		}
		t.slots[j] = s
	}
}

// del takes entry i out of the table; the entries after it in its run move
// back so that no probe stops short of them.
func (t *embTable) del(i int32) {
	e := t.at(i)
	mask := len(t.slots) - 1
	h := int(t.hashOf(e)) & mask
	for t.slots[h] != i+1 {
		h = (h + 1) & mask
	}
	for j := (h + 1) & mask; t.slots[j] != 0; j = (j + 1) & mask {
		if home := int(t.hashOf(t.at(t.slots[j]-1))) & mask; (h-home)&mask < (j-home)&mask {
			t.slots[h] = t.slots[j]
			h = j
		}
	}
	t.slots[h] = 0
	t.n--
	*e = embryo{next: t.free}
	t.free = i
	if t.n == 0 && len(t.chunks) > 1 {
		// A flood is over: give its memory back.
		*t = newEmbTable()
	}
}

// pure reports whether s may join an embryo: no payload, FIN or RST, not
// cut, at a time the records can hold.
func pure(s *capture.Segment) bool {
	t := &s.TCP
	if len(t.Payload) > 0 || t.FIN || t.RST || s.Truncated {
		return false
	}
	y := s.Time.Year()
	return y > 1700 && y < 2200
}

// record adds s to embryo i; false if it does not fit (promote instead).
func (r *Reassembler) record(i int32, s *capture.Segment) bool {
	e := r.emb.at(i)
	df, dt := s.Frame-e.frame, s.Time.UnixNano()-e.time
	if int(e.n) == maxEmbryoRecs || df > 1<<32-1 || dt < 0 || dt > 1<<32-1 {
		return false
	}
	t := &s.TCP
	var f uint8
	if t.SYN {
		f |= recSYN
	}
	if t.ACK {
		f |= recACK
	}
	if s.Src.Port() != e.pa || addrBytes(s.Src) != e.a {
		f |= recFromB
	}
	e.recs[e.n] = embRec{seq: t.Seq, ack: t.Ack, dframe: uint32(df), dtime: uint32(dt), flags: f}
	e.n++
	if e.n > 1 {
		r.embUnlink(i)
	}
	r.embPushBack(i)
	return true
}

// newEmbryo makes s, a pure SYN or SYN-ACK of no known connection, an
// embryo, counted in its part.
func (r *Reassembler) newEmbryo(s *capture.Segment) {
	i := r.emb.add(s)
	e := r.emb.at(i)
	e.part = uint8(Partition(s.Src, s.Dst))
	r.record(i, s)
	r.grew(int(e.part))
}

func (r *Reassembler) embPushBack(i int32) {
	e := r.emb.at(i)
	l := &r.parts[e.part].emb
	e.prev, e.next = l.tail, -1
	if l.tail >= 0 {
		r.emb.at(l.tail).next = i
	} else {
		l.head = i
	}
	l.tail = i
}

func (r *Reassembler) embUnlink(i int32) {
	e := r.emb.at(i)
	l := &r.parts[e.part].emb
	if e.prev >= 0 {
		r.emb.at(e.prev).next = e.next
	} else {
		l.head = e.next
	}
	if e.next >= 0 {
		r.emb.at(e.next).prev = e.prev
	} else {
		l.tail = e.prev
	}
	e.prev, e.next = -1, -1
}

// take removes embryo i from the table and its part and returns it.
func (r *Reassembler) take(i int32) embryo {
	r.embUnlink(i)
	e := *r.emb.at(i)
	r.parts[e.part].n--
	r.emb.del(i)
	return e
}

// segment rebuilds record k of e.
func (e *embryo) segment(k int) capture.Segment {
	rc := &e.recs[k]
	fromB := rc.flags&recFromB != 0
	s := capture.Segment{Frame: e.frame + uint64(rc.dframe), Time: time.Unix(0, e.time+int64(rc.dtime)).UTC(),
		Src: e.addr(fromB), Dst: e.addr(!fromB)}
	t := &s.TCP
	t.SrcPort, t.DstPort = layers.TCPPort(s.Src.Port()), layers.TCPPort(s.Dst.Port())
	t.Seq, t.Ack = rc.seq, rc.ack
	t.SYN, t.ACK = rc.flags&recSYN != 0, rc.flags&recACK != 0
	return s
}

// flow is the Flow e opens: its first record, a SYN or a SYN-ACK, says
// who the client is.
func (e *embryo) flow() Flow {
	f := Flow{ConnID: flow.ConnID{Client: e.addr(false), Broker: e.addr(true), StartFrame: e.frame}, FromStart: true}
	if e.recs[0].flags&recACK != 0 {
		f.Client, f.Broker = f.Broker, f.Client
	}
	return f
}

// last is the flow.Meta of e's latest packet, which its End carries, and the
// latest time among its packets, which the idle flush compares.
func (e *embryo) last() (flow.Meta, time.Time) {
	var m flow.Meta
	latest := int64(0)
	for k := range int(e.n) {
		rc := &e.recs[k]
		if f := e.frame + uint64(rc.dframe); f > m.Frame {
			m = flow.Meta{Frame: f, Time: time.Unix(0, e.time+int64(rc.dtime)).UTC()}
		}
		latest = max(latest, int64(rc.dtime))
	}
	return m, time.Unix(0, e.time+latest).UTC()
}

// promote replays embryo i into gopacket, then s, the packet that showed
// it is no embryo.
func (r *Reassembler) promote(i int32, s *capture.Segment) {
	e := r.take(i)
	r.replayingEmbryo = true
	for k := range int(e.n) {
		seg := e.segment(k)
		r.assemble(&seg)
	}
	r.replayingEmbryo = false
	r.assemble(s)
}

// endEmbryo opens embryo i and ends it at once, as gopacket ends a
// connection at an idle flush or at Close.
func (r *Reassembler) endEmbryo(i int32) {
	e := r.take(i)
	last, _ := e.last()
	r.nextID++
	c := &conn{r: r, id: r.nextID, flow: e.flow(), last: last}
	r.open(c)
	c.ended = true
	if c.s != nil {
		c.emit(evEnd, 0, nil, 0)
		r.stats.Ended++
	}
}

// idleEmbryos ends the embryos whose latest packet is before t. Each
// part's list is in order of activity, which is time order but for
// reordering: the walk stops at an embryo a minute past t.
func (r *Reassembler) idleEmbryos(t time.Time) {
	if r.emb.n == 0 {
		return
	}
	stop := t.Add(time.Minute)
	for p := range r.parts {
		for i := r.parts[p].emb.head; i >= 0; {
			e := r.emb.at(i)
			next := e.next
			_, latest := e.last()
			if !latest.Before(stop) {
				break
			}
			if latest.Before(t) {
				r.endEmbryo(i)
			}
			i = next
		}
	}
}

// embAt is an embryo's first frame, which orders the ends of Close: no
// two embryos share it (each is made by its first packet), and its Flow,
// which the order compares next, need not be built for every embryo.
type embAt struct {
	frame uint64
	i     int32
}

// embryosInOrder returns every embryo in Flow order.
func (r *Reassembler) embryosInOrder() []embAt {
	out := make([]embAt, 0, r.emb.n)
	for _, s := range r.emb.slots {
		if s != 0 {
			out = append(out, embAt{frame: r.emb.at(s - 1).frame, i: s - 1})
		}
	}
	slices.SortFunc(out, func(x, y embAt) int { return cmp.Compare(x.frame, y.frame) })
	return out
}

// flowOf is embryo i's Flow.
func (t *embTable) flowOf(i int32) *Flow {
	f := t.at(i).flow()
	return &f
}
