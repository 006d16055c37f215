package decode

// inflight is a request awaiting its response.
type inflight struct {
	key, ver int16
	frame    uint64
	seq      uint64 // request number on the connection, for raw-SASL and eviction
}

type ringEntry struct {
	corr int32
	seq  uint64
}

// pendingSet remembers requests awaiting a response, keyed by correlation
// ID (brokers answer in order, but the decoder never relies on it), at most
// max of them: past that the oldest is forgotten. The ring keeps arrival
// order; entries already answered are left in it and skipped lazily.
type pendingSet struct {
	max  int
	byID map[int32]inflight
	ring []ringEntry // FIFO, ring[head:] then ring[:head] when wrapped
	head int
	n    int
}

func (p *pendingSet) init(max int) {
	p.max = max
	p.byID = make(map[int32]inflight)
}

func (p *pendingSet) len() int { return len(p.byID) }

func (p *pendingSet) get(corr int32) (inflight, bool) {
	r, ok := p.byID[corr]
	return r, ok
}

// take returns and forgets the request with correlation ID corr.
func (p *pendingSet) take(corr int32) (inflight, bool) {
	r, ok := p.byID[corr]
	if ok {
		delete(p.byID, corr)
	}
	return r, ok
}

// add remembers r. A request reusing a pending correlation ID replaces it.
func (p *pendingSet) add(corr int32, r inflight) {
	if p.n == p.max {
		p.compact()
		for p.n >= p.max {
			e := p.pop()
			if cur, ok := p.byID[e.corr]; ok && cur.seq == e.seq {
				delete(p.byID, e.corr)
			}
		}
	}
	p.byID[corr] = r
	p.push(ringEntry{corr: corr, seq: r.seq})
}

func (p *pendingSet) push(e ringEntry) {
	// Answered entries are dropped before the ring grows, so that it stays
	// as small as the requests really in flight (growing it on each
	// doubling up to max would allocate in steady state). It grows when
	// compaction freed less than half, so compactions stay amortized O(1).
	if p.n == len(p.ring) {
		p.compact()
		if 2*p.n >= len(p.ring) {
			p.grow()
		}
	}
	p.ring[(p.head+p.n)%len(p.ring)] = e
	p.n++
}

// grow doubles the ring, up to max (add keeps n below max, so a ring of
// max entries always has room).
func (p *pendingSet) grow() {
	size := max(16, min(2*len(p.ring), p.max))
	if size <= len(p.ring) {
		return
	}
	grown := make([]ringEntry, size)
	for i := 0; i < p.n; i++ {
		grown[i] = p.ring[(p.head+i)%len(p.ring)]
	}
	p.ring, p.head = grown, 0
}

func (p *pendingSet) pop() ringEntry {
	e := p.ring[p.head]
	p.head = (p.head + 1) % len(p.ring)
	p.n--
	return e
}

// compact drops ring entries whose request was answered or replaced, so
// only live requests count against max.
func (p *pendingSet) compact() {
	live := 0
	for i := 0; i < p.n; i++ {
		e := p.ring[(p.head+i)%len(p.ring)]
		if cur, ok := p.byID[e.corr]; ok && cur.seq == e.seq {
			p.ring[(p.head+live)%len(p.ring)] = e
			live++
		}
	}
	p.n = live
}
