package decode

import "math/bits"

// inflight is a request awaiting its response.
type inflight struct {
	key, ver int16
	// reused: it replaced a request with the same correlation ID still
	// awaiting its answer (a client numbering wrongly), so which of the
	// two an answer belongs to cannot be told.
	reused bool
	frame  uint64
	seq    uint64 // request number on the connection, for raw SASL
}

// pendingSet remembers requests awaiting a response, keyed by correlation
// ID (brokers answer in order, but the decoder never relies on it), at most
// max of them: past that the oldest is forgotten, and counted in dropped.
//
// The requests are entries of a slab, linked in arrival order (a request
// reusing a pending correlation ID replaces it and becomes the newest), and
// byID maps a correlation ID to its entry. Adding, answering any request
// and forgetting the oldest are O(1), with no dead entries to skip or
// compact. Freed entries are reused last freed first, so that in steady
// state (each request answered before the next, or the cap held) the same
// entry, hence the same cache line, serves every request; the slab grows
// up to max+1 entries and the index to the power of two past 2*max slots
// of 8 bytes.
type pendingSet struct {
	max  int
	byID idTable
	// ents[0] is the sentinel of the circular list in arrival order:
	// ents[0].next is the oldest request, ents[0].prev the newest.
	ents []pendEntry
	free int32 // first free entry, linked by next; 0: none
	// dropped counts live requests forgotten because max were in flight.
	dropped uint64
}

type pendEntry struct {
	r          inflight
	corr       int32
	prev, next int32
}

func (p *pendingSet) init(max int) {
	p.max = max
}

func (p *pendingSet) len() int { return p.byID.live }

func (p *pendingSet) get(corr int32) (inflight, bool) {
	if i := p.byID.find(corr); i >= 0 {
		return p.ents[p.byID.slots[i].ent].r, true
	}
	return inflight{}, false
}

// take returns and forgets the request with correlation ID corr.
func (p *pendingSet) take(corr int32) (inflight, bool) {
	i := p.byID.find(corr)
	if i < 0 {
		return inflight{}, false
	}
	e := p.byID.slots[i].ent
	p.byID.del(i)
	r := p.ents[e].r
	p.release(e)
	return r, true
}

// add remembers r. A request reusing a pending correlation ID replaces it.
func (p *pendingSet) add(corr int32, r inflight) {
	if p.byID.live >= p.max {
		if i := p.byID.find(corr); i >= 0 {
			// Replaced in place: an entry more would pass max+1.
			e := p.byID.slots[i].ent
			p.unlink(e)
			p.ents[e].r = r
			p.ents[e].r.reused = true
			p.link(e)
			return
		}
		p.dropOldest()
	}
	// Below the cap, put finds a request to replace as it inserts.
	e := p.alloc()
	p.ents[e].r, p.ents[e].corr = r, corr
	p.link(e)
	if old := p.byID.put(corr, e); old != 0 {
		p.ents[e].r.reused = true
		p.release(old)
	}
}

// dropOldest forgets the oldest request.
func (p *pendingSet) dropOldest() {
	e := p.ents[0].next
	if e == 0 {
		return
	}
	p.byID.del(p.byID.find(p.ents[e].corr))
	p.release(e)
	p.dropped++
}

// alloc returns a free entry, not linked.
func (p *pendingSet) alloc() int32 {
	e := p.free
	if e == 0 {
		return p.extend()
	}
	p.free = p.ents[e].next
	return e
}

// extend adds an entry to the slab, grown when full by doubling up to
// max+1 entries (the sentinel and max requests), which it never passes,
// rather than to append's next size.
func (p *pendingSet) extend() int32 {
	if len(p.ents) == cap(p.ents) {
		grown := make([]pendEntry, len(p.ents), max(len(p.ents)+1, min(2*len(p.ents), p.max+1), 16))
		copy(grown, p.ents)
		if len(grown) == 0 {
			grown = grown[:1] // the sentinel, linked to itself
		}
		p.ents = grown
	}
	p.ents = p.ents[:len(p.ents)+1]
	return int32(len(p.ents) - 1)
}

// release unlinks entry e and frees it.
func (p *pendingSet) release(e int32) {
	p.unlink(e)
	p.ents[e].next = p.free
	p.free = e
}

func (p *pendingSet) unlink(e int32) {
	n := &p.ents[e]
	p.ents[n.prev].next = n.next
	p.ents[n.next].prev = n.prev
}

// link makes e the newest entry.
func (p *pendingSet) link(e int32) {
	last := p.ents[0].prev
	p.ents[e].prev, p.ents[e].next = last, 0
	p.ents[last].next = e
	p.ents[0].prev = e
}

// idTable maps correlation IDs to pendingSet entries: open addressing with
// linear probing and backward-shift deletion (no tombstones), a
// power-of-two number of slots at most half full. It replaces a Go map
// because it is used twice per request/response pair, almost always
// holding one entry: hashing an int32 and one probe cost less than the
// map's generic path.
type idTable struct {
	slots []idSlot
	shift uint8 // 32 - log2(len(slots))
	live  int
}

// idSlot is one correlation ID's entry; ent 0 (the sentinel, never a
// request's) marks an empty slot.
type idSlot struct {
	corr int32
	ent  int32
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
		if s.ent == 0 {
			return -1
		}
		if s.corr == corr {
			return i
		}
	}
}

// put maps corr to entry ent (not 0), replacing and returning any
// (else 0).
func (t *idTable) put(corr, ent int32) (old int32) {
	if 2*(t.live+1) > len(t.slots) {
		t.grow()
	}
	mask := len(t.slots) - 1
	for i := t.home(corr); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.ent == 0 {
			s.corr, s.ent = corr, ent
			t.live++
			return 0
		}
		if s.corr == corr {
			old, s.ent = s.ent, ent
			return old
		}
	}
}

// del empties slot i, shifting back the entries of its probe run so that
// every entry stays reachable from its home slot.
func (t *idTable) del(i int) {
	mask := len(t.slots) - 1
	t.live--
	for {
		t.slots[i].ent = 0
		j := i
		for {
			j = (j + 1) & mask
			if t.slots[j].ent == 0 {
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
	n := max(8, 2*len(old))
	t.slots = make([]idSlot, n)
	t.shift = uint8(32 - bits.Len(uint(n-1)))
	t.live = 0
	for _, s := range old {
		if s.ent != 0 {
			t.put(s.corr, s.ent)
		}
	}
}
