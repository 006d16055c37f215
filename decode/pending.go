package decode

import (
	"cmp"
	"math/bits"
	"slices"
)

// inflight is a request awaiting its response.
type inflight struct {
	key, ver int16
	// reused: it replaced a request with the same correlation ID still
	// awaiting its answer (a client numbering wrongly), so which of the
	// two an answer belongs to cannot be told.
	reused bool
	// respHV is the response's header version (ResponseHeaderVersion).
	respHV int8
	frame  uint64
	seq    uint64 // request number on the connection, for raw-SASL and eviction
}

const (
	// ringFrom: the ring is made when this many requests (or max, if
	// fewer) would await an answer at once. Until then no request can be
	// forgotten, so arrival order is not needed: a connection that awaits
	// one answer at a time, as most do, has no ring.
	ringFrom = 4
	// minRing and minSlots are the tables' first sizes.
	minRing  = 2 * ringFrom
	minSlots = 2
)

// arrivals is the ring of requests in arrival order: FIFO, e[head:] then
// e[:head] when wrapped, n entries.
type arrivals struct {
	e       []ringEntry
	head, n int32
}

type ringEntry struct {
	corr int32
	seq  uint64
}

// pendingSet remembers requests awaiting a response, keyed by correlation
// ID (brokers answer in order, but the decoder never relies on it), at most
// max of them: past that the oldest is forgotten, and counted in dropped.
// The ring keeps arrival order; entries already answered or replaced are
// left in it (dead) and skipped lazily. Every operation is amortized O(1):
// the ring holds up to 2*max entries, so when it is full at least half of
// them are dead and a compaction pays for itself.
//
// A connection most often awaits one answer at a time: while the table is
// empty and there is no ring, one request is kept in one, beside them (no
// allocation, no hashing). The table is allocated when two await an answer
// at once, the ring when a few do (ringFrom), both small at first, and the
// counts are int32 (at most 2*max entries, max below 2^30): a Conn is kept
// for every open connection.
type pendingSet struct {
	byID idTable
	ring *arrivals // nil until a few await an answer at once
	max  int32
	// oneCorr and one: the request awaiting an answer when hasOne (then
	// the table is empty and there is no ring).
	oneCorr int32
	one     inflight
	hasOne  bool
	// dropped counts live requests forgotten because max were in flight.
	dropped uint64
}

func (p *pendingSet) init(max int) {
	p.max = int32(min(max, 1<<30))
}

func (p *pendingSet) len() int {
	if p.hasOne {
		return 1
	}
	return int(p.byID.live)
}

func (p *pendingSet) get(corr int32) (inflight, bool) {
	if p.hasOne {
		return p.one, p.oneCorr == corr
	}
	if i := p.byID.find(corr); i >= 0 {
		return p.byID.slots[i].r, true
	}
	return inflight{}, false
}

// take returns and forgets the request with correlation ID corr.
func (p *pendingSet) take(corr int32) (inflight, bool) {
	if p.hasOne {
		if p.oneCorr != corr {
			return inflight{}, false
		}
		p.hasOne = false
		return p.one, true
	}
	i := p.byID.find(corr)
	if i < 0 {
		return inflight{}, false
	}
	r := p.byID.slots[i].r
	p.byID.del(i)
	if q := p.ring; q != nil && q.n > 0 && q.e[q.head].seq == r.seq {
		// Brokers answer in order: the request answered is most often the
		// oldest, whose entry leaves the ring now rather than in a compaction.
		q.pop()
	}
	return r, true
}

// live reports whether corr's pending request is the one numbered seq.
func (p *pendingSet) isLive(corr int32, seq uint64) bool {
	if p.hasOne {
		return p.oneCorr == corr && p.one.seq == seq
	}
	i := p.byID.find(corr)
	return i >= 0 && p.byID.slots[i].r.seq == seq
}

// add remembers r. A request reusing a pending correlation ID replaces it.
func (p *pendingSet) add(corr int32, r inflight) {
	if p.byID.live == 0 && p.ring == nil && p.addOne(corr, r) {
		return
	}
	if p.byID.live >= p.max && p.byID.find(corr) < 0 {
		p.dropOldest() // the ring exists: live >= max >= min(ringFrom, max)
	}
	if p.ring == nil && p.byID.live+1 >= min(ringFrom, p.max) {
		p.makeRing()
	}
	if p.ring != nil {
		p.push(ringEntry{corr: corr, seq: r.seq})
	}
	p.byID.put(corr, r)
}

// addOne adds r while the table is empty and there is no ring: into one,
// when it is free, or holds the same correlation ID, or max is 1 (the
// request it held is forgotten); otherwise both go to the table, and it
// returns false for add to go on with r.
func (p *pendingSet) addOne(corr int32, r inflight) bool {
	switch {
	case !p.hasOne:
		p.oneCorr, p.one, p.hasOne = corr, r, true
		return true
	case p.oneCorr == corr:
		r.reused = true
		p.one = r
		return true
	case p.max <= 1:
		p.dropped++
		p.oneCorr, p.one = corr, r
		return true
	}
	p.hasOne = false
	p.byID.put(p.oneCorr, p.one) // 1 < max: nothing to forget
	return false
}

// makeRing makes the ring of the requests awaiting an answer, in arrival
// (request number) order.
func (p *pendingSet) makeRing() {
	q := &arrivals{e: make([]ringEntry, max(minRing, 2*int(p.byID.live)))}
	for _, s := range p.byID.slots {
		if s.used {
			q.e[q.n] = ringEntry{corr: s.corr, seq: s.r.seq}
			q.n++
		}
	}
	slices.SortFunc(q.e[:q.n], func(a, b ringEntry) int { return cmp.Compare(a.seq, b.seq) })
	p.ring = q
}

// dropOldest forgets the oldest live request, popping the dead entries
// before it (each entry is popped once: amortized O(1)).
func (p *pendingSet) dropOldest() {
	for q := p.ring; q.n > 0; {
		e := q.pop()
		if i := p.byID.find(e.corr); i >= 0 && p.byID.slots[i].r.seq == e.seq {
			p.byID.del(i)
			p.dropped++
			return
		}
	}
}

func (p *pendingSet) push(e ringEntry) {
	// A full ring is compacted when at least half of it is dead, else
	// grown (up to 2*max: past max live entries add drops the oldest, so
	// a full ring of 2*max is at least half dead). Compactions thus free
	// half the ring each time and stay amortized O(1), and the ring stays
	// near the number of requests really in flight (growing it on each
	// doubling would allocate in steady state).
	q := p.ring
	if int(q.n) == len(q.e) {
		p.makeRoom()
	}
	q.e[q.at(q.n)] = e
	q.n++
}

// makeRoom compacts a full ring or grows it (see push); apart so that
// push, run once a request, is inlined.
func (p *pendingSet) makeRoom() {
	if q := p.ring; 2*(q.n-p.byID.live) >= q.n && q.n > 0 {
		p.compact()
	} else {
		q.grow(p.max)
	}
}

// grow doubles the ring, up to 2*max.
func (q *arrivals) grow(max32 int32) {
	size := max(minRing, min(2*len(q.e), 2*int(max32)))
	if size <= len(q.e) {
		return
	}
	grown := make([]ringEntry, size)
	for i := range q.n {
		grown[i] = q.e[q.at(i)]
	}
	q.e, q.head = grown, 0
}

func (q *arrivals) pop() ringEntry {
	e := q.e[q.head]
	q.head = q.at(1)
	q.n--
	return e
}

// at is the ring index of the i-th entry from the head, i <= len(q.e) (a
// subtraction: ring sizes follow MaxInFlight, not powers of two).
func (q *arrivals) at(i int32) int32 {
	j := q.head + i
	if j >= int32(len(q.e)) {
		j -= int32(len(q.e))
	}
	return j
}

// compact drops ring entries whose request was answered or replaced.
func (p *pendingSet) compact() {
	q := p.ring
	live := int32(0)
	for i := range q.n {
		e := q.e[q.at(i)]
		if p.isLive(e.corr, e.seq) {
			q.e[q.at(live)] = e
			live++
		}
	}
	q.n = live
}

// idTable maps correlation IDs to requests: open addressing with linear
// probing and backward-shift deletion (no tombstones), a power-of-two
// number of slots at most half full. It replaces a Go map because it is
// used twice per request/response pair, almost always holding one entry:
// hashing an int32 and one probe cost less than the map's generic path.
type idTable struct {
	slots []idSlot
	shift uint8 // 32 - log2(len(slots))
	live  int32
}

type idSlot struct {
	corr int32
	used bool
	r    inflight
}

func (t *idTable) home(corr int32) int {
	return int((uint32(corr) * 0x9E3779B1) >> t.shift)
}

// find returns corr's slot index, or -1.
func (t *idTable) find(corr int32) int {
	if t.live == 0 {
		return -1
	}
	mask := len(t.slots) - 1
	for i := t.home(corr); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if !s.used {
			return -1
		}
		if s.corr == corr {
			return i
		}
	}
}

// put sets corr's request, replacing any (and then marks it reused).
func (t *idTable) put(corr int32, r inflight) {
	if 2*(int(t.live)+1) > len(t.slots) {
		t.grow()
	}
	mask := len(t.slots) - 1
	for i := t.home(corr); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if !s.used {
			// Field by field: a composite literal is built then copied.
			s.corr, s.used, s.r = corr, true, r
			t.live++
			return
		}
		if s.corr == corr {
			s.r = r
			s.r.reused = true
			return
		}
	}
}

// del empties slot i, shifting back the entries of its probe run so that
// every entry stays reachable from its home slot.
func (t *idTable) del(i int) {
	mask := len(t.slots) - 1
	t.live--
	for {
		t.slots[i].used = false
		j := i
		for {
			j = (j + 1) & mask
			if !t.slots[j].used {
				return
			}
			k := t.home(t.slots[j].corr)
			// The entry at j stays if its home k lies cyclically in (i, j].
			if i <= j {
				if i < k && k <= j {
					continue
				}
			} else if i < k || k <= j {
				continue
			}
			t.slots[i] = t.slots[j]
			i = j
			break
		}
	}
}

func (t *idTable) grow() {
	old := t.slots
	n := max(minSlots, 2*len(old))
	t.slots = make([]idSlot, n)
	t.shift = uint8(32 - bits.Len(uint(n-1)))
	t.live = 0
	for _, s := range old {
		if s.used {
			t.put(s.corr, s.r)
		}
	}
}
