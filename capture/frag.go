package capture

import "time"

// IP fragment reassembly, bounded (SPEC 2.1: tunnels fragment). Fragments
// of IPv4 (MF and offset) and IPv6 (the Fragment extension header) wait in
// a small table keyed by (source, destination, identification, protocol,
// tunnel depth) until their datagram is whole; the datagram is then decoded
// as if it had arrived unfragmented, in the packet of its last fragment.
//
// Everything that bites is counted in FragStats: a datagram not whole
// within fragTimeout of packet time, one evicted because the table holds
// fragMaxDatagrams, one longer than an IP length can say, one whose
// buffers would take the table past fragMaxHeld bytes, one with overlapping
// fragments (RFC 5722's rule, for IPv4 too: overlaps are how fragments
// hide what the receiver sees), more than fragMaxPieces fragments, a
// fragment cut by the snap length, or fragments that contradict each
// other. An exact duplicate (mirrored traffic repeats packets) is ignored
// and counted.
//
// Memory: a datagram's bytes live in its slot's buffer, kept when the slot
// is freed (up to fragMaxHeld bytes of spare buffers) so that the steady
// state does not allocate. A completed datagram is copied, with a rebuilt
// IP header, into the table's one output buffer, which the Segment's
// payload then points into until the next Decode.

const (
	fragMaxDatagrams = 1024
	fragMaxHeld      = 8 << 20
	fragTimeout      = 30 * time.Second
	fragMaxPieces    = 64
	fragMinBuf       = 2048
	maxIPLength      = 65535
)

// FragDrop says why a datagram's fragments were dropped.
type FragDrop uint8

const (
	FragTimeout   FragDrop = iota // not whole within fragTimeout of packet time
	FragTableFull                 // the oldest datagram, evicted for a new one
	FragTooBig                    // longer than the IP length field can say
	FragMemory                    // the table's bytes would pass fragMaxHeld
	FragOverlap                   // fragments overlap without being duplicates
	FragTooMany                   // more than fragMaxPieces fragments
	FragTruncated                 // a fragment cut by the snap length
	FragMalformed                 // fragments that contradict each other or RFC 791's 8-byte units
	numFragDrops
)

var fragDropNames = [numFragDrops]string{
	FragTimeout:   "timeout",
	FragTableFull: "table-full",
	FragTooBig:    "too-big",
	FragMemory:    "memory",
	FragOverlap:   "overlap",
	FragTooMany:   "too-many-fragments",
	FragTruncated: "truncated",
	FragMalformed: "malformed",
}

func (r FragDrop) String() string { return name(fragDropNames[:], r) }

// Named returns the non-zero counters by name: ip-fragments-reassembled,
// -duplicate, and -dropped-REASON.
func (s *FragStats) Named() map[string]uint64 {
	out := map[string]uint64{}
	if s.Reassembled > 0 {
		out["ip-fragments-reassembled"] = s.Reassembled
	}
	if s.Duplicates > 0 {
		out["ip-fragments-duplicate"] = s.Duplicates
	}
	for r, n := range s.Dropped {
		if n > 0 {
			out["ip-fragments-dropped-"+FragDrop(r).String()] = n
		}
	}
	return out
}

// FragStats counts what fragment reassembly did.
type FragStats struct {
	Reassembled uint64 // datagrams made whole and decoded
	Duplicates  uint64 // fragments identical in place to one held, ignored
	// Dropped counts datagrams dropped, by reason.
	Dropped [numFragDrops]uint64
}

// Fragments returns the reassembly counters since the decoder was made.
func (d *LayerDecoder) Fragments() FragStats { return d.frags.stats }

// Reassembled reports whether the segment of the last Decode came from a
// datagram reassembled from fragments, and if so returns that datagram as
// a raw IP packet of p's frame and time: decoding it gives the same
// segment, without the fragments before it (a sharded pipeline hands it to
// a worker whose decoder never saw them). Its Data is the decoder's, valid
// until the next Decode; the tunnels outside the reassembled datagram are
// gone, and so they are not counted again.
func (d *LayerDecoder) Reassembled(p *Packet) (Packet, bool) {
	if !d.frags.done || d.last != ReasonNone {
		return Packet{}, false
	}
	out := d.frags.out
	return Packet{Frame: p.Frame, Time: p.Time, Data: out, CaptureLength: len(out),
		Length: len(out) + p.Length - p.CaptureLength, LinkType: linkRaw}, true
}

// fragment is one IP fragment as ipv4 or ipv6 found it; its payload,
// protocol and addresses are in the ipInfo beside it.
type fragment struct {
	header []byte // the fixed IP header: 20 or 40 bytes
	off    int    // the payload's byte offset in the datagram
	more   bool   // more fragments follow
	id     uint32
}

type fragKey struct {
	src, dst [16]byte
	id       uint32
	proto    uint8
	depth    uint8
	v6       bool
}

type fragRange struct{ off, end int32 }

type fragSlot struct {
	key        fragKey
	start      time.Time
	prev, next int32 // creation order of live slots; next links free slots
	buf        []byte
	pieces     [fragMaxPieces]fragRange
	n          int
	got        int // payload bytes held
	extent     int // the highest end of a piece
	end        int // the payload's length, -1 until the last fragment
}

// fragTable holds the datagrams being reassembled. The limits are fields so
// that tests can make them bite with little traffic.
type fragTable struct {
	index       map[fragKey]int32
	slots       []fragSlot
	head, tail  int32 // oldest and newest live slot, -1: none
	free        int32 // first free slot, -1: none
	held, spare int   // bytes of live and of free slots' buffers
	out         []byte
	done        bool // out holds the datagram of the last Decode's segment
	stats       FragStats

	maxDatagrams, maxHeld int
	timeout               time.Duration
}

func (t *fragTable) init() {
	t.index = make(map[fragKey]int32)
	t.head, t.tail, t.free = -1, -1, -1
	t.maxDatagrams, t.maxHeld, t.timeout = fragMaxDatagrams, fragMaxHeld, fragTimeout
}

// add takes one fragment. When it completes its datagram, add returns the
// datagram (IP header and payload, valid until the next add) and
// ReasonNone; otherwise ReasonFragment.
func (t *fragTable) add(p *Packet, f *fragment, ip *ipInfo, depth int) ([]byte, Reason) {
	t.expire(p.Time)
	key := fragKey{id: f.id, proto: ip.proto, depth: uint8(depth), v6: len(f.header) == 40}
	if key.v6 {
		key.src, key.dst = [16]byte(f.header[8:24]), [16]byte(f.header[24:40])
	} else {
		copy(key.src[:], f.header[12:16])
		copy(key.dst[:], f.header[16:20])
	}
	i, ok := t.index[key]
	if ip.truncated {
		if ok {
			t.drop(i, FragTruncated)
		} else {
			t.stats.Dropped[FragTruncated]++
		}
		return nil, ReasonFragment
	}
	if !ok {
		i = t.alloc(key, p.Time)
	}
	s := &t.slots[i]
	data := ip.payload
	end := f.off + len(data)
	if why, bad := s.check(f, len(data), end, len(f.header)); bad {
		t.drop(i, why)
		return nil, ReasonFragment
	}
	switch s.place(int32(f.off), int32(end)) {
	case placeDuplicate:
		t.stats.Duplicates++
		return nil, ReasonFragment
	case placeOverlap:
		t.drop(i, FragOverlap)
		return nil, ReasonFragment
	case placeTooMany:
		t.drop(i, FragTooMany)
		return nil, ReasonFragment
	}
	if !t.grow(s, end) {
		t.drop(i, FragMemory)
		return nil, ReasonFragment
	}
	copy(s.buf[f.off:end], data)
	s.got += len(data)
	s.extent = max(s.extent, end)
	if !f.more {
		s.end = end
	}
	if s.end < 0 || s.got != s.end {
		return nil, ReasonFragment
	}
	t.out = rebuild(t.out[:0], f.header, ip.proto, s.buf[:s.end])
	t.release(i)
	t.stats.Reassembled++
	t.done = true
	return t.out, ReasonNone
}

// check reports whether a fragment of n bytes ending at end contradicts
// its datagram, and why.
func (s *fragSlot) check(f *fragment, n, end, hdr int) (FragDrop, bool) {
	switch {
	case end > maxIPLength-hdr:
		return FragTooBig, true
	case f.more && (n == 0 || n%8 != 0):
		return FragMalformed, true
	case f.more && s.end >= 0 && end > s.end:
		return FragMalformed, true
	case !f.more && (s.end >= 0 && s.end != end || s.extent > end):
		return FragMalformed, true
	}
	return 0, false
}

type placement uint8

const (
	placeNew placement = iota
	placeDuplicate
	placeOverlap
	placeTooMany
)

// place records the piece [off, end) unless it repeats or overlaps one.
func (s *fragSlot) place(off, end int32) placement {
	for _, r := range s.pieces[:s.n] {
		if r.off == off && r.end == end {
			return placeDuplicate
		}
		if off < r.end && r.off < end {
			return placeOverlap
		}
	}
	if s.n == fragMaxPieces {
		return placeTooMany
	}
	s.pieces[s.n] = fragRange{off, end}
	s.n++
	return placeNew
}

// grow makes s.buf hold need bytes within the table's memory bound.
func (t *fragTable) grow(s *fragSlot, need int) bool {
	if need <= cap(s.buf) {
		s.buf = s.buf[:cap(s.buf)]
		return true
	}
	n := min(max(need, 2*cap(s.buf), fragMinBuf), maxIPLength)
	if t.held-cap(s.buf)+n > t.maxHeld {
		return false
	}
	buf := make([]byte, n)
	copy(buf, s.buf[:s.extent])
	t.held += n - cap(s.buf)
	s.buf = buf
	return true
}

// rebuild appends an unfragmented IP header, made from a fragment's, and
// the payload.
func rebuild(out, header []byte, proto uint8, payload []byte) []byte {
	out = append(out, header...)
	n := len(payload)
	if len(header) == 20 {
		total := 20 + n
		out[0] = 0x45 // options are dropped: nothing above IP reads them
		out[2], out[3] = byte(total>>8), byte(total)
		out[6], out[7] = 0, 0
	} else {
		out[4], out[5] = byte(n>>8), byte(n)
		out[6] = proto
	}
	return append(out, payload...)
}

// expire drops the datagrams that waited longer than the timeout.
func (t *fragTable) expire(now time.Time) {
	for t.head >= 0 && now.Sub(t.slots[t.head].start) > t.timeout {
		t.drop(t.head, FragTimeout)
	}
}

// alloc makes a live slot for key, evicting the oldest datagram when the
// table is full.
func (t *fragTable) alloc(key fragKey, now time.Time) int32 {
	if len(t.index) >= t.maxDatagrams {
		t.drop(t.head, FragTableFull)
	}
	i := t.free
	if i >= 0 {
		t.free = t.slots[i].next
	} else {
		i = int32(len(t.slots))
		t.slots = append(t.slots, fragSlot{})
	}
	s := &t.slots[i]
	t.spare -= cap(s.buf)
	t.held += cap(s.buf)
	s.key, s.start = key, now
	s.n, s.got, s.extent, s.end = 0, 0, 0, -1
	s.prev, s.next = t.tail, -1
	if t.tail >= 0 {
		t.slots[t.tail].next = i
	} else {
		t.head = i
	}
	t.tail = i
	t.index[key] = i
	return i
}

func (t *fragTable) drop(i int32, why FragDrop) {
	t.stats.Dropped[why]++
	t.release(i)
}

// release unlinks slot i and frees it, keeping its buffer while the spare
// buffers stay under the memory bound.
func (t *fragTable) release(i int32) {
	s := &t.slots[i]
	if s.prev >= 0 {
		t.slots[s.prev].next = s.next
	} else {
		t.head = s.next
	}
	if s.next >= 0 {
		t.slots[s.next].prev = s.prev
	} else {
		t.tail = s.prev
	}
	delete(t.index, s.key)
	t.held -= cap(s.buf)
	if t.spare+cap(s.buf) > t.maxHeld {
		s.buf = nil
	}
	t.spare += cap(s.buf)
	s.next = t.free
	t.free = i
}
