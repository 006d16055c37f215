// Copyright 2012 Google, Inc. All rights reserved.
//
// Use of this source code is governed by a BSD-style license
// that can be found in the LICENSE file in the root of the source
// tree.

package tcpasm

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/kwatch/kwatch/reassembly/internal/dlist"
)

const invalidSequence = -1
const uint32Max = 0xFFFFFFFF

// Sequence is a TCP sequence number.  It provides a few convenience functions
// for handling TCP wrap-around.  The sequence should always be in the range
// [0,0xFFFFFFFF]... its other bits are simply used in wrap-around calculations
// and should never be set.
type Sequence int64

// Difference defines an ordering for comparing TCP sequences that's safe for
// roll-overs.  It returns:
//
//	> 0 : if t comes after s
//	< 0 : if t comes before s
//	  0 : if t == s
//
// The number returned is the sequence difference, so 4.Difference(8) will
// return 4.
//
// It handles rollovers by considering any sequence in the first quarter of the
// uint32 space to be after any sequence in the last quarter of that space, thus
// wrapping the uint32 space.
func (s Sequence) Difference(t Sequence) int {
	// The wrapped operand is unwrapped by a full turn of the uint32 space
	// (uint32Max+1 == 1<<32), matching what Add does.
	if s > uint32Max-uint32Max/4 && t < uint32Max/4 {
		t += uint32Max + 1
	} else if t > uint32Max-uint32Max/4 && s < uint32Max/4 {
		s += uint32Max + 1
	}
	return int(t - s)
}

// Add adds an integer to a sequence and returns the resulting sequence.
func (s Sequence) Add(t int) Sequence {
	return (s + Sequence(t)) & uint32Max
}

// TCPAssemblyStats provides some figures for a ScatterGather
type TCPAssemblyStats struct {
	// For this ScatterGather
	Chunks  int
	Packets int
	// For the half connection, since last call to ReassembledSG()
	QueuedBytes    int
	QueuedPackets  int
	OverlapBytes   int
	OverlapPackets int
}

// ScatterGather is used to pass reassembled data and metadata of reassembled
// packets to a Stream via ReassembledSG
type ScatterGather interface {
	// Returns the length of available bytes and saved bytes
	Lengths() (int, int)
	// Returns the bytes up to length (shall be <= available bytes)
	Fetch(length int) []byte
	// Tell to keep from offset
	KeepFrom(offset int)
	// Return CaptureInfo of packet corresponding to given offset
	CaptureInfo(offset int) gopacket.CaptureInfo
	// Pieces calls f with each packet's or page's bytes, with the frame
	// number and capture time of the packet they came from
	Pieces(f func(b []byte, frame uint64, ts time.Time))
	// Return some info about the reassembled chunks
	Info() (direction TCPFlowDirection, start bool, end bool, skip int)
	// SkipReason says why Info's skip bytes were skipped
	SkipReason() SkipReason
	// Return some stats regarding the state of the stream
	Stats() TCPAssemblyStats
}

// SkipReason says why the bytes a ScatterGather skips were skipped.
type SkipReason uint8

const (
	// SkipGivenUp: the Assembler gave the hole up (a flush, a page
	// limit, the other direction acknowledging past it).
	SkipGivenUp SkipReason = iota
	// SkipLost: the caller said the bytes were lost (SkipTo).
	SkipLost
	// SkipCut: the caller said a snap length cut the bytes (SkipTo).
	SkipCut
)

// byteContainer is either a page or a livePacket
type byteContainer interface {
	getBytes() []byte
	length() int
	convertToPages(*pageCache, int, AssemblerContext) (*page, *page, int)
	captureInfo() gopacket.CaptureInfo
	frameNumber() uint64
	assemblerContext() AssemblerContext
	release(*pageCache) int
	isStart() bool
	isEnd() bool
	getSeq() Sequence
	isPacket() bool
}

// Implements a ScatterGather
type reassemblyObject struct {
	all []byteContainer
	// live is all[0] when it is the only container, a live packet: the
	// methods read it without going through byteContainer.
	live      *livePacket
	Skip      int
	reason    SkipReason
	Direction TCPFlowDirection
	saved     int
	toKeep    int
	// stats
	queuedBytes    int
	queuedPackets  int
	overlapBytes   int
	overlapPackets int
}

func (rl *reassemblyObject) Lengths() (int, int) {
	if lp := rl.live; lp != nil {
		return len(lp.bytes), rl.saved
	}
	l := 0
	for _, r := range rl.all {
		l += r.length()
	}
	return l, rl.saved
}

func (rl *reassemblyObject) Fetch(l int) []byte {
	if lp := rl.live; lp != nil && l <= len(lp.bytes) {
		return lp.bytes[:l]
	}
	if l <= rl.all[0].length() {
		return rl.all[0].getBytes()[:l]
	}
	bytes := make([]byte, 0, l)
	for _, bc := range rl.all {
		bytes = append(bytes, bc.getBytes()...)
	}
	return bytes[:l]
}

func (rl *reassemblyObject) KeepFrom(offset int) {
	rl.toKeep = offset
}

func (rl *reassemblyObject) CaptureInfo(offset int) gopacket.CaptureInfo {
	if offset < 0 {
		return gopacket.CaptureInfo{}
	}

	current := 0
	for _, r := range rl.all {
		if current+r.length() > offset {
			return r.captureInfo()
		}
		current += r.length()
	}
	// Invalid offset
	return gopacket.CaptureInfo{}
}

// Pieces calls f with the bytes of each packet or page in rl, in order,
// with the frame number and capture time of the packet they came from.
func (rl *reassemblyObject) Pieces(f func(b []byte, frame uint64, ts time.Time)) {
	if lp := rl.live; lp != nil {
		if len(lp.bytes) > 0 {
			f(lp.bytes, lp.frame, lp.captureInfo().Timestamp)
		}
		return
	}
	for _, r := range rl.all {
		if b := r.getBytes(); len(b) > 0 {
			f(b, r.frameNumber(), r.captureInfo().Timestamp)
		}
	}
}

func (rl *reassemblyObject) Info() (TCPFlowDirection, bool, bool, int) {
	if lp := rl.live; lp != nil {
		return rl.Direction, lp.start, lp.end, rl.Skip
	}
	return rl.Direction, rl.all[0].isStart(), rl.all[len(rl.all)-1].isEnd(), rl.Skip
}

func (rl *reassemblyObject) SkipReason() SkipReason { return rl.reason }

func (rl *reassemblyObject) Stats() TCPAssemblyStats {
	packets := int(0)
	for _, r := range rl.all {
		if r.isPacket() {
			packets++
		}
	}
	return TCPAssemblyStats{
		Chunks:         len(rl.all),
		Packets:        packets,
		QueuedBytes:    rl.queuedBytes,
		QueuedPackets:  rl.queuedPackets,
		OverlapBytes:   rl.overlapBytes,
		OverlapPackets: rl.overlapPackets,
	}
}

// pageBytes is gopacket's 1900 less 100, so that a page with its header fits the
// 2,048-byte size class (2,304 at 1900): a full-size Ethernet segment
// still takes one page, and a page of out-of-order data costs 11% less.
const pageBytes = 1800

// TCPFlowDirection distinguish the two half-connections directions.
//
// TCPDirClientToServer is assigned to half-connection for the first received
// packet, hence might be wrong if packets are not received in order.
// It's up to the caller (e.g. in Accept()) to decide if the direction should
// be interpretted differently.
type TCPFlowDirection bool

// Value are not really useful
const (
	TCPDirClientToServer TCPFlowDirection = false
	TCPDirServerToClient TCPFlowDirection = true
)

func (dir TCPFlowDirection) String() string {
	switch dir {
	case TCPDirClientToServer:
		return "client->server"
	case TCPDirServerToClient:
		return "server->client"
	}
	return ""
}

// Reverse returns the reversed direction
func (dir TCPFlowDirection) Reverse() TCPFlowDirection {
	return !dir
}

/* page: implements a byteContainer */

// page is used to store TCP data we're not ready for yet (out-of-order
// packets).  Unused pages are stored in and returned from a pageCache, which
// avoids memory allocation.  Used pages are stored in a doubly-linked list in
// a connection.
type page struct {
	chunk // ac and frame: of the packet the page was cut from
	dlist.Links[page]
	owner *pageCache // the pageCache whose used count includes this page
	buf   [pageBytes]byte
	ci    gopacket.CaptureInfo // ac's CaptureInfo when the page was cut: a context may be reused
	seen  time.Time
	first bool // only set for the first page of a packet
}

// chunk is what a page and a livePacket both are, and the byteContainer
// methods they share: bytes at a sequence number, from the packet of
// context ac and frame number frame (AssembleAddrs), which may start or
// end the stream.
type chunk struct {
	bytes      []byte
	seq        Sequence
	ac         AssemblerContext
	frame      uint64
	start, end bool
}

func (c *chunk) getBytes() []byte                   { return c.bytes }
func (c *chunk) length() int                        { return len(c.bytes) }
func (c *chunk) frameNumber() uint64                { return c.frame }
func (c *chunk) assemblerContext() AssemblerContext { return c.ac }
func (c *chunk) isStart() bool                      { return c.start }
func (c *chunk) isEnd() bool                        { return c.end }
func (c *chunk) getSeq() Sequence                   { return c.seq }

func (p *page) captureInfo() gopacket.CaptureInfo {
	return p.ci
}
func (p *page) convertToPages(pc *pageCache, skip int, ac AssemblerContext) (*page, *page, int) {
	if skip != 0 {
		p.bytes = p.bytes[skip:]
		p.seq = p.seq.Add(skip)
	}
	p.Prev, p.Next = nil, nil
	return p, p, 1
}
func (p *page) release(pc *pageCache) int {
	pc.replace(p)
	return 1
}
func (p *page) isPacket() bool {
	return p.first
}
func (p *page) String() string {
	return fmt.Sprintf("page@%p{seq: %v, bytes:%d, -> nextSeq:%v} (prev:%p, next:%p)", p, p.seq, len(p.bytes), p.seq+Sequence(len(p.bytes)), p.Prev, p.Next)
}

/* livePacket: implements a byteContainer */
type livePacket struct{ chunk }

func (lp *livePacket) captureInfo() gopacket.CaptureInfo {
	return lp.ac.GetCaptureInfo()
}
func (lp *livePacket) isPacket() bool {
	return true
}

// Creates a page (or set of pages) from a TCP packet: returns the first and last
// page in its doubly-linked list of new pages.
func (lp *livePacket) convertToPages(pc *pageCache, skip int, ac AssemblerContext) (*page, *page, int) {
	ci := lp.captureInfo()
	ts := ci.Timestamp
	first := pc.next(ts)
	current := first
	current.Prev = nil
	first.ac, first.ci, first.frame = ac, ci, lp.frame
	first.first = true
	numPages := 1
	seq, bytes := lp.seq.Add(skip), lp.bytes[skip:]
	for {
		length := min(len(bytes), pageBytes)
		current.bytes = current.buf[:length]
		copy(current.bytes, bytes)
		current.seq = seq
		bytes = bytes[length:]
		if len(bytes) == 0 {
			current.end = lp.isEnd()
			current.Next = nil
			break
		}
		seq = seq.Add(length)
		current.Next = pc.next(ts)
		current.Next.Prev = current
		current = current.Next
		current.ac, current.ci, current.frame = ac, ci, lp.frame
		current.first = false
		numPages++
	}
	return first, current, numPages
}
func (lp *livePacket) estimateNumberOfPages() int {
	return (len(lp.bytes) + pageBytes + 1) / pageBytes
}

func (lp *livePacket) release(*pageCache) int {
	return 0
}

// Stream is implemented by the caller to handle incoming reassembled
// TCP data.  Callers create a StreamFactory, then StreamPool uses
// it to create a new Stream for every TCP stream.
//
// assembly will, in order:
//  1. Create the stream via StreamFactory.New
//  2. Call ReassembledSG 0 or more times, passing in reassembled TCP data in order
//  3. Call ReassemblyComplete one time, after which the stream is dereferenced by assembly.
type Stream interface {
	// Tell whether the TCP packet should be accepted, start could be modified to force a start even if no SYN have been seen.
	// nextSeq is the sequence number of the next in-order byte of the
	// packet's direction, revSeq that of the reverse direction (kwatch:
	// upstream passes nextSeq only); either is negative before its
	// direction started.
	Accept(tcp *layers.TCP, ci gopacket.CaptureInfo, dir TCPFlowDirection, nextSeq, revSeq Sequence, start *bool, ac AssemblerContext) bool

	// ReassembledSG is called zero or more times.
	// ScatterGather is reused after each Reassembled call,
	// so it's important to copy anything you need out of it,
	// especially bytes (or use KeepFrom())
	// During the call, and the ReassemblyComplete it may lead to, the
	// direction's next sequence number (Assembler.NextSeq) is already
	// past the bytes delivered, not yet past a FIN (kwatch).
	ReassembledSG(sg ScatterGather, ac AssemblerContext)

	// ReassemblyComplete is called when assembly decides there is
	// no more data for this Stream, either because a FIN or RST packet
	// was seen, or because the stream has timed out without any new
	// packet data (due to a call to FlushCloseOlderThan).
	// It should return true if the connection should be removed from the pool
	// It can return false if it want to see subsequent packets with Accept(), e.g. to
	// see FIN-ACK, for deeper state-machine analysis.
	ReassemblyComplete(ac AssemblerContext) bool
}

// StreamFactory is used by assembly to create a new stream for each
// new TCP session.
type StreamFactory interface {
	// New should return a new stream for the given TCP key.
	New(netFlow, tcpFlow gopacket.Flow, tcp *layers.TCP, ac AssemblerContext) Stream
}

// endpoint is one end of a connection as the StreamPool keys it: an IP
// address as 16 bytes (IPv4 mapped into IPv6), any other address
// zero-padded to 16, in two words, then the port, the address length and
// the endpoint type packed in a third. Keys are plain words so that they
// hash and compare cheaply and are built without a gopacket.Flow.
type endpoint struct {
	a0, a1, rest uint64
}

func (e endpoint) less(f endpoint) bool {
	if e.a0 != f.a0 {
		return e.a0 < f.a0
	}
	if e.a1 != f.a1 {
		return e.a1 < f.a1
	}
	return e.rest < f.rest
}

func packRest(n int, typ gopacket.EndpointType, port uint16) uint64 {
	return uint64(port) | uint64(n)<<16 | uint64(typ)<<24
}

// flowEndpoint keys raw, an endpoint of a gopacket.Flow, with a port.
func flowEndpoint(typ gopacket.EndpointType, raw []byte, port uint16) endpoint {
	if typ == layers.EndpointIPv4 && len(raw) == 4 {
		return endpoint{0, 0xffff<<32 | uint64(binary.BigEndian.Uint32(raw)), packRest(4, typ, port)}
	}
	var b [16]byte
	n := copy(b[:], raw)
	return endpoint{binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:]), packRest(n, typ, port)}
}

// addrEndpoint keys ap exactly as flowEndpoint keys the same address taken
// from a Flow built by layers.IPv4 or layers.IPv6.
func addrEndpoint(ap netip.AddrPort) endpoint {
	a := ap.Addr()
	if a.Is4() {
		// As16 would do, but reading its result back as words stalls on
		// store forwarding; As4 is read back as it was written.
		b := a.As4()
		return endpoint{0, 0xffff<<32 | uint64(binary.BigEndian.Uint32(b[:])), packRest(4, layers.EndpointIPv4, ap.Port())}
	}
	b := a.As16()
	return endpoint{binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:]), packRest(16, layers.EndpointIPv6, ap.Port())}
}

// addrFlow is the gopacket.Flow of the IP layer from src to dst.
func addrFlow(src, dst netip.AddrPort) gopacket.Flow {
	s, d := src.Addr(), dst.Addr()
	if s.Is4() && d.Is4() {
		s4, d4 := s.As4(), d.As4()
		return gopacket.NewFlow(layers.EndpointIPv4, s4[:], d4[:])
	}
	s16, d16 := s.As16(), d.As16()
	return gopacket.NewFlow(layers.EndpointIPv6, s16[:], d16[:])
}

// key is a connection's two endpoints, the lesser first, so that both
// directions of a connection find it with one lookup.
type key struct {
	lo, hi endpoint
}

// eq is k == *o without the call to memequal that comparing 48 bytes
// compiles to.
func (k *key) eq(o *key) bool {
	return k.lo.a0 == o.lo.a0 && k.lo.a1 == o.lo.a1 && k.lo.rest == o.lo.rest &&
		k.hi.a0 == o.hi.a0 && k.hi.a1 == o.hi.a1 && k.hi.rest == o.hi.rest
}

// set makes k the key of a packet from src to dst and reports whether src
// is its lo endpoint.  It writes k in place: a key returned by value is
// copied in 16-byte moves that stall on the 8-byte stores that built it.
func (k *key) set(src, dst endpoint) (srcIsLo bool) {
	if dst.less(src) {
		k.lo, k.hi = dst, src
		return false
	}
	k.lo, k.hi = src, dst
	return true
}

/* one-way connection, i.e. halfconnection */
// The fields an in-order packet reads come first, to share cache lines.
type halfconnection struct {
	stream      Stream
	nextSeq     Sequence // sequence number of in-order received bytes
	first, last *page    // Doubly-linked list of out-of-order pages (seq > nextSeq)
	saved       *page    // Doubly-linked list of in-order pages (seq < nextSeq) already given to Stream who told us to keep
	finSeq      Sequence // position of a FIN seen ahead of nextSeq, invalidSequence if none
	lastSeen    time.Time
	// seenNs is lastSeen in Unix nanoseconds (UnixNanos): an in-order
	// packet compares integers (InOrder).
	seenNs int64
	dir    TCPFlowDirection
	closed bool
	// for stats
	queuedBytes    int
	queuedPackets  int
	overlapBytes   int
	overlapPackets int

	pages int // Number of pages used (both in first/last and saved)
	// kwatch: upstream's created and ackSeq, never read but by String
	// and Dump, are gone: 32 bytes a direction of every connection.
}

// see notes a packet of half at ts: lastSeen is the latest.
func (half *halfconnection) see(ts time.Time) {
	if half.lastSeen.Before(ts) {
		half.setSeen(ts)
	}
}

// seeNs is see for ts in Unix nanoseconds, ns, within UnixNanos's range.
func (half *halfconnection) seeNs(ts time.Time, ns int64) {
	if ns > half.seenNs {
		half.lastSeen, half.seenNs = ts, ns
	}
}

func (half *halfconnection) setSeen(ts time.Time) {
	half.lastSeen = ts
	half.seenNs, _ = UnixNanos(ts)
}

func (half *halfconnection) String() string {
	closed := ""
	if half.closed {
		closed = "closed "
	}
	return fmt.Sprintf("%slast:%v", closed, half.lastSeen)
}

// Dump returns a string (crypticly) describing the halfconnction
func (half *halfconnection) Dump() string {
	s := fmt.Sprintf("pages: %d\n"+
		"nextSeq: %d\n"+
		"Seen :  %s\n"+
		"dir:    %s\n", half.pages, half.nextSeq, half.lastSeen, half.dir)
	nb := 0
	for p := half.first; p != nil; p = p.Next {
		s += fmt.Sprintf("	Page[%d] %s len: %d\n", nb, p, len(p.bytes))
		nb++
	}
	return s
}

/* Bi-directionnal connection */

type connection struct {
	key key
	// c2sFromLo: the first packet, whose half is c2s, was sent by key.lo.
	c2sFromLo bool
	c2s, s2c  halfconnection
	removed   bool // no longer in the StreamPool, waiting to be reused
	// gen counts the keys the object has had, so that a reference to it
	// may be known still to be to the same connection (StreamPool.recent).
	gen uint32
	// pc is the pageCache its out-of-order pages are taken from and
	// counted in: its group's (Assembler.PageGroup).
	pc *pageCache
}

func (c *connection) reset(k key, srcIsLo bool, s Stream, ts time.Time) {
	c.key = k
	c.gen++
	c.c2sFromLo = srcIsLo
	c.removed = false
	c.pc = nil
	base := halfconnection{
		nextSeq:  invalidSequence,
		finSeq:   invalidSequence,
		lastSeen: ts,
		stream:   s,
	}
	base.setSeen(ts)
	c.c2s, c.s2c = base, base
	c.c2s.dir, c.s2c.dir = TCPDirClientToServer, TCPDirServerToClient
}

// halves returns the half-connection of a packet sent by c.key.lo
// (srcIsLo) or c.key.hi, then the reverse one.
func (c *connection) halves(srcIsLo bool) (*halfconnection, *halfconnection) {
	if srcIsLo == c.c2sFromLo {
		return &c.c2s, &c.s2c
	}
	return &c.s2c, &c.c2s
}

// How far from where a closed half ended data may lie and still belong to
// it: behind, a retransmission of bytes sent before the close; ahead,
// bytes in flight when a RST aborted it (within the receiver's window).
// Data beyond is a new connection on the same 4-tuple. Its initial
// sequence number is random, or on Linux (RFC 6528) a hash plus a clock
// that advances 15.6 M a second, so a reuse a second later is already
// past reuseAhead.
const (
	reuseBehind = 1 << 24
	reuseAhead  = 1 << 20
)

// reusedBy reports whether t, on c's 4-tuple, opens a new connection: c is
// closed both ways and t is a SYN, or (byData) carries data far from where
// its direction of c ended: a new connection whose handshake was not
// captured, whose data the closed one would drop. It is asked of every
// packet, so the common answer (c is open) stays inline.
func (c *connection) reusedBy(srcIsLo bool, t *layers.TCP, byData bool) bool {
	return c.c2s.closed && c.s2c.closed && (t.SYN || byData && c.farFromEnd(srcIsLo, t))
}

// farFromEnd reports whether t carries data far from where its direction
// of the closed connection c ended.
func (c *connection) farFromEnd(srcIsLo bool, t *layers.TCP) bool {
	half, _ := c.halves(srcIsLo)
	if len(t.Payload) == 0 || t.RST || half.nextSeq == invalidSequence {
		return false
	}
	d := half.nextSeq.Difference(Sequence(t.Seq))
	return d > reuseAhead || d < -reuseBehind
}

func (c *connection) lastSeen() time.Time {
	if c.c2s.lastSeen.Before(c.s2c.lastSeen) {
		return c.s2c.lastSeen
	}

	return c.c2s.lastSeen
}

func (c *connection) String() string {
	return fmt.Sprintf("c2s: %s, s2c: %s", &c.c2s, &c.s2c)
}

/*
 * Assembler
 */

// AssemblerOptions controls the behavior of each assembler.  Modify the
// options of each assembler you create to change their behavior.
type AssemblerOptions struct {
	// MaxBufferedPagesTotal is an upper limit on the total number of pages to
	// buffer while waiting for out-of-order packets.  Once this limit is
	// reached, the assembler will degrade to flushing every connection it
	// gets a packet for.  If <= 0, this is ignored.
	MaxBufferedPagesTotal int
	// MaxBufferedPagesPerConnection is an upper limit on the number of pages
	// buffered for a single connection.  Should this limit be reached for a
	// particular connection, the smallest sequence number will be flushed, along
	// with any contiguous data.  If <= 0, this is ignored.
	MaxBufferedPagesPerConnection int
}

// Assembler handles reassembling TCP streams.  It is not safe for
// concurrency: an Assembler, its StreamPool and every Assembler sharing that
// pool must be used by one goroutine.  Stream and StreamFactory methods are
// called from inside Assembler methods; they must not call the Assembler
// (StreamFactory.New may: the pool looks the connection up again after it).
//
// In the common case, handling a TCP packet allocates nothing: the
// Assembler looks the connection up, finds the packet in order with nothing
// queued, and hands the packet's own bytes to the Stream.  Only a packet that
// arrives out of order is copied into pages, taken from a pageCache that
// reuses them.  Connection objects are reused too.
type Assembler struct {
	AssemblerOptions
	ret      []byteContainer
	pc       *pageCache
	connPool *StreamPool
	cacheLP  livePacket
	cacheSG  reassemblyObject
	start    bool
	conns    []*connection // snapshot of the pool for a flush, reused
	// last is the connection of the previous packet, or nil.  It may have
	// been removed since, and reused for another key.
	last *connection
	// noFastPath: tests compare the in-order fast path with general.
	noFastPath bool
	// SkipAckedHoles gives up a hole as soon as the other direction
	// acknowledges the bytes after it (see skipAcked). gopacket waits for
	// a flush or the page limit.
	SkipAckedHoles bool
	// ReopenOnReuse opens a new connection for data far from where a
	// connection closed both ways ended, as for a SYN (see reusedBy).
	// gopacket gives such data to the closed connection, which drops it.
	ReopenOnReuse bool
	// PageGroup, if set, puts each connection in a group of out-of-order
	// pages, 0..Groups-1, by its Stream: MaxBufferedPagesTotal then caps
	// each group's pages, not the Assembler's. kwatch groups connections
	// as its shards do, so that the cap bites the same way whatever the
	// number of shards.
	PageGroup     func(Stream) int
	Groups        int
	groups        []*pageCache
	pc0           *pageCache // the cache of a connection without group
	skippingAcked bool       // inside skipAcked (see SkippingAckedHole)
	// frame is the frame number of the packet being assembled, which its
	// bytes carry (ScatterGather.Pieces); AssembleWithContext has none.
	frame uint64
	// skipReason is the reason of the skip buildSG reports (SkipTo's).
	skipReason SkipReason
	// inOrder is the half of the segment InOrder accepted last, for
	// TakeInOrder.
	inOrder *halfconnection
}

// NewAssembler creates a new assembler.  Pass in the StreamPool
// to use, may be shared across assemblers of the same goroutine.
//
// The options are zero: no limit on buffered pages.
func NewAssembler(pool *StreamPool) *Assembler {
	pc := newPageCache()
	return &Assembler{
		ret:      make([]byteContainer, 0, assemblerReturnValueInitialSize),
		pc:       pc,
		pc0:      pc,
		connPool: pool,
	}
}

// cacheOf returns the pageCache of s's group.
func (a *Assembler) cacheOf(s Stream) *pageCache {
	if a.PageGroup == nil {
		return a.pc0
	}
	if a.groups == nil {
		a.groups = make([]*pageCache, a.Groups)
		for i := range a.groups {
			// One sync.Pool for all: a page freed by one group serves
			// another.
			a.groups[i] = &pageCache{pagePool: a.pc0.pagePool}
		}
	}
	return a.groups[a.PageGroup(s)]
}

// Dump returns a short string describing the page usage of the Assembler
func (a *Assembler) Dump() string {
	s := ""
	s += fmt.Sprintf("pageCache: used: %d:", a.pc.used)
	return s
}

// AssemblerContext provides method to get metadata
type AssemblerContext interface {
	GetCaptureInfo() gopacket.CaptureInfo
}

// Implements AssemblerContext for Assemble()
type assemblerSimpleContext gopacket.CaptureInfo

func (asc *assemblerSimpleContext) GetCaptureInfo() gopacket.CaptureInfo {
	return gopacket.CaptureInfo(*asc)
}

const assemblerReturnValueInitialSize = 16

type assemblerAction struct {
	nextSeq Sequence
	queue   bool
}

// AssembleWithContext reassembles the given TCP packet into its appropriate
// stream.  The connection is keyed by netFlow's endpoints and t's SrcPort
// and DstPort.
//
// The timestamp passed in must be the timestamp the packet was seen.
// For packets read from PCAP files, CaptureInfo.Timestamp should be passed
// in.  This timestamp will affect which streams are flushed by a call to
// FlushCloseOlderThan.
//
// Each AssembleWithContext call results in, in order:
//
//	zero or one call to StreamFactory.New, creating a stream
//	zero or one call to ReassembledSG on a single stream
//	zero or one call to ReassemblyComplete on the same stream
func (a *Assembler) AssembleWithContext(netFlow gopacket.Flow, t *layers.TCP, ac AssemblerContext) {
	ci := ac.GetCaptureInfo()
	a.frame = 0
	src, dst := netFlow.Endpoints()
	typ := netFlow.EndpointType()
	var k key
	srcIsLo := k.set(flowEndpoint(typ, src.Raw(), uint16(t.SrcPort)), flowEndpoint(typ, dst.Raw(), uint16(t.DstPort)))
	conn := a.last
	if conn == nil || conn.removed || !conn.key.eq(&k) {
		conn = a.lookup(&k)
	}
	if conn == nil || conn.reusedBy(srcIsLo, t, a.ReopenOnReuse) {
		if conn = a.open(k, srcIsLo, netFlow, t, ac); conn == nil {
			return
		}
	}
	if a.PageGroup != nil {
		a.pc = conn.pc
	}
	a.ret = a.ret[:0]
	a.connPool.lower(ci.Timestamp)
	half, rev := conn.halves(srcIsLo)
	half.see(ci.Timestamp)
	a.start = half.nextSeq == invalidSequence && t.SYN
	if half.stream.Accept(t, ci, half.dir, half.nextSeq, rev.nextSeq, &a.start, ac) {
		a.accepted(conn, half, t, ac)
	}
}

// AssembleAddrs is AssembleWithContext for a packet from src to dst, IPv4
// or IPv6 addresses with t's ports, seen at ts as frame number frame (which
// its bytes keep, wherever they are delivered), for a context whose
// CaptureInfo holds nothing but ts: Accept is given
// gopacket.CaptureInfo{Timestamp: ts}, not ac.GetCaptureInfo().  It keys
// the connection without building gopacket Flows, which it builds only for
// StreamFactory.New.  A connection is the same whichever of the two
// methods its packets come through.
//
// Taking ts rather than calling GetCaptureInfo avoids copying the
// 72-byte CaptureInfo out of an interface call, or out of memory the
// caller has just written: either copy stalls on store forwarding, a good
// part of the cost of an in-order packet.
func (a *Assembler) AssembleAddrs(src, dst netip.AddrPort, t *layers.TCP, ts time.Time, frame uint64, ac AssemblerContext) {
	// Built first, so that the copy calling Accept makes of it reads
	// stores old enough to have left the store buffer.
	ci := gopacket.CaptureInfo{Timestamp: ts}
	a.frame = frame
	var k key
	srcIsLo := k.set(addrEndpoint(src), addrEndpoint(dst))
	conn := a.last
	if conn == nil || conn.removed || !conn.key.eq(&k) {
		conn = a.lookup(&k)
	}
	if conn == nil || conn.reusedBy(srcIsLo, t, a.ReopenOnReuse) {
		if conn = a.open(k, srcIsLo, addrFlow(src, dst), t, ac); conn == nil {
			return
		}
	}
	if a.PageGroup != nil {
		a.pc = conn.pc
	}
	half, rev := conn.halves(srcIsLo)
	if t.ACK && rev.first != nil && a.SkipAckedHoles {
		a.skipAcked(conn, rev, Sequence(t.Ack))
	}
	// As AssembleWithContext from here.
	a.ret = a.ret[:0]
	a.connPool.lower(ts)
	half.see(ts)
	a.start = half.nextSeq == invalidSequence && t.SYN
	if half.stream.Accept(t, ci, half.dir, half.nextSeq, rev.nextSeq, &a.start, ac) {
		a.accepted(conn, half, t, ac)
	}
}

// skipAcked gives up the holes of half that ack, from the other direction,
// acknowledges: the receiver has those bytes, so they will not be sent
// again, and the capture missed them. Data queued after a hole would
// otherwise wait for a flush (minutes of packet time) while the answers to
// it go by. Only holes wholly acknowledged are given up: bytes past ack may
// still be retransmitted.
func (a *Assembler) skipAcked(conn *connection, half *halfconnection, ack Sequence) {
	a.skippingAcked = true
	defer func() { a.skippingAcked = false }()
	for half.first != nil && !half.closed && half.nextSeq != invalidSequence &&
		half.nextSeq.Difference(half.first.seq) > 0 && half.first.seq.Difference(ack) >= 0 {
		a.skipFlush(conn, half)
	}
}

// SkippingAckedHole reports, during a Stream call, whether the data comes
// after a hole given up because the other direction acknowledged it.
func (a *Assembler) SkippingAckedHole() bool { return a.skippingAcked }

// lookup returns the pooled connection of k, or nil, and remembers it in
// a.last.  Half the packets of a capture follow one of the same
// connection (a request and its ACK, a response): callers try a.last
// before calling lookup, which hashes.
func (a *Assembler) lookup(k *key) *connection {
	c := a.connPool.conns.get(k)
	a.last = c
	return c
}

// open is StreamPool.open, remembering the connection for lookup.
func (a *Assembler) open(k key, srcIsLo bool, netFlow gopacket.Flow, t *layers.TCP, ac AssemblerContext) *connection {
	c := a.connPool.open(k, srcIsLo, netFlow, t, ac, a.ReopenOnReuse)
	a.last = c
	if c != nil && c.pc == nil {
		c.pc = a.cacheOf(c.c2s.stream)
	}
	return c
}

// accepted handles a packet of half that its Stream accepted.
func (a *Assembler) accepted(conn *connection, half *halfconnection, t *layers.TCP, ac AssemblerContext) {
	if half.closed {
		// this way is closed
		return
	}
	// A SYN on a synchronized half is answered with a challenge ACK and
	// dropped by the receiver (RFC 5961): its payload is not stream data.
	if t.SYN && half.nextSeq != invalidSequence {
		return
	}

	seq, bytes := Sequence(t.Seq), t.Payload
	// In order with nothing queued, kept or pending: what general would do
	// comes down to handleBytes and sendToConnection with the packet
	// alone as the ScatterGather (Skip 0, nothing saved), so no page is
	// taken and no list is walked.  Stream calls and their arguments are
	// those of general.  A SYN does not get here: it returned above
	// unless nextSeq is invalid, and seq never is.
	if seq != half.nextSeq || t.RST || half.first != nil || half.saved != nil || half.finSeq != invalidSequence || a.noFastPath {
		a.general(conn, half, t, seq, bytes, ac)
		return
	}
	fin := t.FIN
	if len(bytes) == 0 && !fin {
		return
	}
	lp := &a.cacheLP
	lp.bytes, lp.start, lp.end, lp.seq, lp.ac, lp.frame = bytes, false, fin, seq, ac, a.frame
	a.ret = append(a.ret, lp)
	sg := &a.cacheSG
	sg.all = a.ret
	sg.live = lp
	sg.Direction = half.dir
	sg.Skip, sg.reason = 0, SkipGivenUp
	sg.saved = 0
	sg.toKeep = -1
	a.setStatsToSG(half)
	// Past the bytes before the Stream hears of them, as in
	// sendToConnection.
	half.nextSeq = seq.Add(len(bytes))
	half.stream.ReassembledSG(sg, ac)
	if sg.toKeep >= 0 {
		// The Stream keeps bytes: they go to pages as usual.
		a.cleanSG(half, ac)
	}
	if fin {
		a.closeHalfConnection(conn, half)
		half.nextSeq = half.nextSeq.Add(1)
	}
}

// general is the rest of accepted: the path gopacket takes for every
// packet.
func (a *Assembler) general(conn *connection, half *halfconnection, t *layers.TCP, seq Sequence, bytes []byte, ac AssemblerContext) {
	// TODO: push when Ack is seen ??
	action := assemblerAction{
		nextSeq: Sequence(invalidSequence),
		queue:   true,
	}
	if half.nextSeq == invalidSequence {
		if t.SYN {
			seq = seq.Add(1)
			half.nextSeq = seq
			action.queue = false
		} else if a.start {
			half.nextSeq = seq
			action.queue = false
		}
		// else: waiting for start, storing into connection
	} else {
		diff := half.nextSeq.Difference(seq)
		if diff > 0 {
			// gap in sequence numbers, storing into connection
		} else if (t.RST && diff < 0) || (t.FIN && half.nextSeq.Difference(seq.Add(len(bytes))) < 0) {
			// The RST/FIN lies before nextSeq: the receiver drops such a
			// segment as out of window, so it must not end the stream.
			return
		} else {
			// contiguous data, returning immediately
			action.queue = false
		}
	}

	// A RST that is not at nextSeq is dropped by the receiver (RFC 5961):
	// never queue it as the end of the stream.
	if t.RST && action.queue {
		return
	}

	// A FIN queued ahead of the stream is not stored when it has no payload,
	// so remember where it ends the stream.
	if t.FIN && action.queue {
		half.finSeq = seq.Add(len(bytes))
	}

	action = a.handleBytes(bytes, seq, half, t.SYN, t.RST || t.FIN, action, ac)
	if len(a.ret) > 0 {
		action.nextSeq = a.sendToConnection(conn, half, ac)
	}
	if action.nextSeq != invalidSequence {
		half.nextSeq = action.nextSeq
		if t.FIN {
			half.nextSeq = half.nextSeq.Add(1)
		}
	}
}

// Overlap strategies:
//  - new packet overlaps with sent packets:
//	1) discard new overlapping part
//	2) overwrite old overlapped (TODO)
//  - new packet overlaps existing queued packets:
//	a) consider "age" by timestamp (TODO)
//	b) consider "age" by being present
//	Then
//      1) discard new overlapping part
//      2) overwrite queued part

func (a *Assembler) checkOverlap(half *halfconnection, queue bool, ac AssemblerContext) {
	var next *page
	cur := half.last
	bytes := a.cacheLP.bytes
	start := a.cacheLP.seq
	end := start.Add(len(bytes))

	//          [s6           :           e6]
	//   [s1:e1][s2:e2] -- [s3:e3] -- [s4:e4][s5:e5]
	//             [s <--ds-- : --de--> e]
	for cur != nil {
		// end < cur.start: continue (5)
		if end.Difference(cur.seq) > 0 {
			next = cur
			cur = cur.Prev
			continue
		}

		curEnd := cur.seq.Add(len(cur.bytes))
		// start > cur.end: stop (1)
		if start.Difference(curEnd) <= 0 {
			break
		}

		diffStart := start.Difference(cur.seq)
		diffEnd := end.Difference(curEnd)

		// end > cur.end && start < cur.start: drop (3)
		if diffEnd <= 0 && diffStart >= 0 {
			if cur.isPacket() {
				half.overlapPackets++
			}
			half.overlapBytes += len(cur.bytes)
			dlist.Unlink(&half.first, &half.last, cur)
			tmp := cur.Prev
			half.pages -= cur.release(a.pc)
			cur = tmp
			continue
		}

		// end > cur.end && start < cur.end: drop cur's end (2)
		if diffEnd < 0 && start.Difference(curEnd) > 0 {
			cur.bytes = cur.bytes[:-start.Difference(cur.seq)]
			break
		} else

		// start < cur.start && end > cur.start: drop cur's start (4)
		if diffStart > 0 && end.Difference(cur.seq) < 0 {
			cur.bytes = cur.bytes[-end.Difference(cur.seq):]
			cur.seq = cur.seq.Add(-end.Difference(cur.seq))
			next = cur
		} else

		// end < cur.end && start > cur.start: replace bytes inside cur (6)
		if diffEnd >= 0 && diffStart <= 0 {
			copy(cur.bytes[-diffStart:-diffStart+len(bytes)], bytes)
			bytes = bytes[:0]
		} else {
			next = cur
		}
		cur = cur.Prev
	}

	// Split bytes into pages, and insert in queue
	a.cacheLP.bytes = bytes
	a.cacheLP.seq = start
	if len(bytes) > 0 && queue {
		p, p2, numPages := a.cacheLP.convertToPages(a.pc, 0, ac)
		half.queuedPackets++
		half.queuedBytes += len(bytes)
		half.pages += numPages
		if cur != nil {
			cur.Next = p
			p.Prev = cur
		} else {
			half.first = p
		}
		if next != nil {
			p2.Next = next
			next.Prev = p2
		} else {
			half.last = p2
		}
	}
}

func (a *Assembler) overlapExisting(half *halfconnection, start, end Sequence, bytes []byte) ([]byte, Sequence) {
	if half.nextSeq == invalidSequence {
		// no start yet
		return bytes, start
	}
	diff := start.Difference(half.nextSeq)
	if diff == 0 {
		return bytes, start
	}
	s := 0
	e := len(bytes)
	// TODO: depending on strategy, we might want to shrink half.saved if possible
	if e != 0 {
		half.overlapPackets++
		half.overlapBytes += diff
	}
	s += diff
	if s >= e {
		// Completely included in sent
		s = e
	}
	bytes = bytes[s:]
	return bytes, half.nextSeq
}

// Prepare send or queue
func (a *Assembler) handleBytes(bytes []byte, seq Sequence, half *halfconnection, start bool, end bool, action assemblerAction, ac AssemblerContext) assemblerAction {
	a.cacheLP.bytes = bytes
	a.cacheLP.start = start
	a.cacheLP.end = end
	a.cacheLP.seq = seq
	a.cacheLP.ac = ac
	a.cacheLP.frame = a.frame

	if action.queue {
		a.checkOverlap(half, true, ac)
		if (a.MaxBufferedPagesPerConnection > 0 && half.pages >= a.MaxBufferedPagesPerConnection) ||
			(a.MaxBufferedPagesTotal > 0 && int(a.pc.used) >= a.MaxBufferedPagesTotal) {
			action.queue = false
			a.addNextFromConn(half)
		}
	} else {
		a.cacheLP.bytes, a.cacheLP.seq = a.overlapExisting(half, seq, seq.Add(len(bytes)), a.cacheLP.bytes)
		a.checkOverlap(half, false, ac)
		if len(a.cacheLP.bytes) != 0 || end || start {
			a.ret = append(a.ret, &a.cacheLP)
		}
	}
	return action
}

func (a *Assembler) setStatsToSG(half *halfconnection) {
	a.cacheSG.queuedBytes = half.queuedBytes
	half.queuedBytes = 0
	a.cacheSG.queuedPackets = half.queuedPackets
	half.queuedPackets = 0
	a.cacheSG.overlapBytes = half.overlapBytes
	half.overlapBytes = 0
	a.cacheSG.overlapPackets = half.overlapPackets
	half.overlapPackets = 0
}

// Build the ScatterGather object, i.e. prepend saved bytes and
// append continuous bytes.
func (a *Assembler) buildSG(half *halfconnection) (bool, Sequence) {
	// find if there are skipped bytes
	skip := -1
	if half.nextSeq != invalidSequence {
		skip = half.nextSeq.Difference(a.ret[0].getSeq())
	}
	last := a.ret[0].getSeq().Add(a.ret[0].length())
	// Prepend saved bytes
	saved := a.addPending(half, a.ret[0].getSeq())
	// Append continuous bytes
	nextSeq := a.addContiguous(half, last)

	// The data reached a FIN that arrived ahead of it: this chunk is the end.
	if half.finSeq != invalidSequence && nextSeq == half.finSeq {
		markEnd(a.ret[len(a.ret)-1])
		half.finSeq = invalidSequence
	}
	a.cacheSG.all = a.ret
	a.cacheSG.live = nil
	a.cacheSG.Direction = half.dir
	a.cacheSG.Skip = skip
	a.cacheSG.reason = a.skipReason
	a.cacheSG.saved = saved
	a.cacheSG.toKeep = -1
	a.setStatsToSG(half)
	return a.ret[len(a.ret)-1].isEnd(), nextSeq
}

// markEnd flags a byteContainer as the last one of its stream.
func markEnd(bc byteContainer) {
	switch c := bc.(type) {
	case *page:
		c.end = true
	case *livePacket:
		c.end = true
	}
}

func (a *Assembler) cleanSG(half *halfconnection, ac AssemblerContext) {
	cur := 0
	ndx := 0
	skip := 0

	var r byteContainer
	// Find first page to keep
	if a.cacheSG.toKeep < 0 {
		ndx = len(a.cacheSG.all)
	} else {
		skip = a.cacheSG.toKeep
		found := false
		for ndx, r = range a.cacheSG.all {
			if a.cacheSG.toKeep < cur+r.length() {
				found = true
				break
			}
			cur += r.length()
			if skip >= r.length() {
				skip -= r.length()
			}
		}
		if !found {
			ndx++
		}
	}
	// Release consumed pages
	for _, r := range a.cacheSG.all[:ndx] {
		if r == half.saved {
			if half.saved.Next != nil {
				half.saved.Next.Prev = nil
			}
			half.saved = half.saved.Next
		} else if r == half.first {
			dlist.Unlink(&half.first, &half.last, half.first)
		}
		half.pages -= r.release(a.pc)
	}
	// Keep un-consumed pages
	half.saved = nil
	var saved *page
	for _, r := range a.cacheSG.all[ndx:] {
		first, last, nb := r.convertToPages(a.pc, skip, ac)

		// skip is an offset into the first kept container only.
		skip = 0

		// Pages cut from the live packet are new: count them, as every
		// release of a saved page is counted.
		if _, live := r.(*livePacket); live {
			half.pages += nb
		}

		if half.saved == nil {
			half.saved = first
		} else {
			saved.Next = first
			first.Prev = saved
		}
		saved = last
	}
}

// sendToConnection sends the current values in a.ret to the connection, closing
// the connection if the last thing sent had End set.
//
// The half's nextSeq moves past the bytes sent before the Stream hears of
// them, so that the Stream reads where its direction stands from the one
// owner of the position (NextSeq), not from a copy it keeps; a FIN's
// sequence number is the caller's to add.
func (a *Assembler) sendToConnection(conn *connection, half *halfconnection, ac AssemblerContext) Sequence {
	end, nextSeq := a.buildSG(half)
	if nextSeq != invalidSequence {
		half.nextSeq = nextSeq
	}
	half.stream.ReassembledSG(&a.cacheSG, ac)
	a.cleanSG(half, ac)
	if end {
		a.closeHalfConnection(conn, half)
	}
	return nextSeq
}

func (a *Assembler) addPending(half *halfconnection, firstSeq Sequence) int {
	if half.saved == nil {
		return 0
	}
	s := 0
	ret := []byteContainer{}
	for p := half.saved; p != nil; p = p.Next {
		ret = append(ret, p)
		s += len(p.bytes)
	}
	if half.saved.seq.Add(s) != firstSeq {
		// non-continuous saved: drop them
		var next *page
		for p := half.saved; p != nil; p = next {
			next = p.Next
			half.pages -= p.release(a.pc)
		}
		half.saved = nil
		ret = []byteContainer{}
		s = 0
	}

	a.ret = append(ret, a.ret...)
	return s
}

// addContiguous adds contiguous byte-sets to a connection.
func (a *Assembler) addContiguous(half *halfconnection, lastSeq Sequence) Sequence {
	page := half.first
	if page == nil {
		return lastSeq
	}
	if lastSeq == invalidSequence {
		lastSeq = page.seq
	}
	for page != nil && lastSeq.Difference(page.seq) == 0 {
		lastSeq = lastSeq.Add(len(page.bytes))
		a.ret = append(a.ret, page)
		dlist.Unlink(&half.first, &half.last, page)
		page = page.Next
	}
	return lastSeq
}

// skipFlush skips the first set of bytes we're waiting for and returns the
// first set of bytes we have.  If we have no bytes saved, it closes the
// connection.
func (a *Assembler) skipFlush(conn *connection, half *halfconnection) {
	// Well, it's embarassing it there is still something in half.saved
	// FIXME: change API to give back saved + new/no packets
	if half.first == nil {
		a.closeHalfConnection(conn, half)
		return
	}
	a.ret = a.ret[:0]
	a.addNextFromConn(half)
	a.sendToConnection(conn, half, a.ret[0].assemblerContext())
}

func (a *Assembler) closeHalfConnection(conn *connection, half *halfconnection) {
	half.closed = true

	var next *page
	for p := half.first; p != nil; p = next {
		// FIXME: it should be already empty
		next = p.Next
		a.pc.replace(p)
		half.pages--
	}

	// Pages kept for the Stream are of no use once the half is closed.
	for p := half.saved; p != nil; p = next {
		next = p.Next
		half.pages -= p.release(a.pc)
	}
	half.saved = nil

	if conn.s2c.closed && conn.c2s.closed {
		if half.stream.ReassemblyComplete(nil) { //FIXME: which context to pass ?
			a.connPool.remove(conn)
		}
	}
}

// addNextFromConn pops the first page from a connection off and adds it to the
// return array.
func (a *Assembler) addNextFromConn(conn *halfconnection) {
	if conn.first == nil {
		return
	}
	a.ret = append(a.ret, conn.first)
	dlist.Unlink(&conn.first, &conn.last, conn.first)
}

// FlushOptions provide options for flushing connections.
type FlushOptions struct {
	T  time.Time // If nonzero, only connections with data older than T are flushed
	TC time.Time // If nonzero, only connections with data older than TC are closed (if no FIN/RST received)
}

// FlushWithOptions finds any streams waiting for packets older than
// the given time T, and pushes through the data they have (IE: tells
// them to stop waiting and skip the data they're waiting for).
//
// It also closes streams older than TC (that can be set to zero, to keep
// long-lived stream alive, but to flush data anyway).
//
// Each Stream maintains a list of zero or more sets of bytes it has received
// out-of-order.  For example, if it has processed up through sequence number
// 10, it might have bytes [15-20), [20-25), [30,50) in its list.  Each set of
// bytes also has the timestamp it was originally viewed.  A flush call will
// look at the smallest subsequent set of bytes, in this case [15-20), and if
// its timestamp is older than the passed-in time, it will push it and all
// contiguous byte-sets out to the Stream's Reassembled function.  In this case,
// it will push [15-20), but also [20-25), since that's contiguous.  It will
// only push [30-50) if its timestamp is also older than the passed-in time,
// otherwise it will wait until the next FlushCloseOlderThan to see if bytes
// [25-30) come in.
//
// Bytes are always pushed in sequence order, so a set of bytes is considered at
// least as old as the sets that follow it: if the timestamp of [30-50) is older
// than the passed-in time, [15-20) and [20-25) are pushed along with it, however
// recently they were received.
//
// Returns the number of connections flushed, and of those, the number closed
// because of the flush.
func (a *Assembler) FlushWithOptions(opt FlushOptions) (flushed, closed int) {
	pool := a.connPool
	full := !pool.floorKnown || pool.floor.Before(opt.T) || pool.floor.Before(opt.TC)
	if full {
		a.conns = pool.connections(a.conns[:0])
	} else {
		// Only the connections near the last full flush's threshold can
		// be due: the others' floor is not before these thresholds.
		a.conns = append(a.conns[:0], pool.soon...)
	}
	closes := 0
	flushes := 0
	floor := farFuture
	ahead := opt.T.Add(flushAhead)
	soon := pool.soon[:0]
	for _, conn := range a.conns {
		// Removed since the snapshot: only a Stream calling back into
		// the pool could do that, but the check is cheap.
		if conn.removed {
			continue
		}
		for _, half := range [2]*halfconnection{&conn.s2c, &conn.c2s} {
			flushed, closed := a.flushClose(conn, half, opt.T, opt.TC)
			if flushed {
				flushes++
			}
			if closed {
				closes++
			}
		}
		if conn.s2c.closed && conn.c2s.closed && conn.s2c.lastSeen.Before(opt.TC) && conn.c2s.lastSeen.Before(opt.TC) {
			a.connPool.remove(conn)
			continue
		}
		if !full {
			soon = append(soon, conn)
			continue
		}
		if f := minTime(conn.c2s.floor(), conn.s2c.floor()); f.Before(ahead) {
			soon = append(soon, conn)
		} else {
			floor = minTime(floor, f)
		}
	}
	clear(a.conns)
	pool.soon = soon
	if full {
		pool.setFloor(floor)
		pool.floorKnown = true
	}
	return flushes, closes
}

// farFuture is a floor above every packet time: a pool with no connection.
var farFuture = time.Unix(1<<40, 0)

// floor is the earliest time a flush compares for half: its lastSeen, or
// its oldest page's seen.
func (half *halfconnection) floor() time.Time {
	t := half.lastSeen
	for p := half.first; p != nil; p = p.Next {
		t = minTime(t, p.seen)
	}
	return t
}

func minTime(ts ...time.Time) time.Time {
	m := ts[0]
	for _, t := range ts[1:] {
		if t.Before(m) {
			m = t
		}
	}
	return m
}

// FlushCloseOlderThan flushes and closes streams older than given time
func (a *Assembler) FlushCloseOlderThan(t time.Time) (flushed, closed int) {
	return a.FlushWithOptions(FlushOptions{T: t, TC: t})
}

func (a *Assembler) flushClose(conn *connection, half *halfconnection, t time.Time, tc time.Time) (bool, bool) {
	flushed, closed := false, false
	if half.closed {
		return flushed, closed
	}
	// Pages are sorted by sequence number, not by age, and can only be pushed
	// in that order: a page must not wait longer than the ones queued behind it.
	for p := half.last; p != nil && p.Prev != nil; p = p.Prev {
		if p.seen.Before(p.Prev.seen) {
			p.Prev.seen = p.seen
		}
	}
	for half.first != nil && half.first.seen.Before(t) {
		flushed = true
		a.skipFlush(conn, half)
		if half.closed {
			closed = true
			return flushed, closed
		}
	}
	// Close the connection only if both halfs of the connection last seen before tc.
	if !half.closed && half.first == nil && conn.lastSeen().Before(tc) {
		a.closeHalfConnection(conn, half)
		closed = true
	}
	return flushed, closed
}

// Streams appends the Streams of the pooled connections to dst, in the
// pool's order.
func (a *Assembler) Streams(dst []Stream) []Stream {
	for _, s := range a.connPool.conns.slots {
		if s.c != nil {
			dst = append(dst, s.c.c2s.stream)
		}
	}
	return dst
}

// EndInput says that no packet will come any more: connections removed
// from now on are not kept for reuse, and their memory can be freed while
// the rest are flushed (all of the free list is let go too).
func (a *Assembler) EndInput() {
	a.connPool.ending = true
	a.connPool.free = nil
}

// FlushConn flushes one connection, of src and dst in either order, as
// FlushAll does every connection: what it buffered is delivered, skipping
// its holes, and both halves are closed. With remove it then leaves the
// pool, so that its next packet opens a new connection. It reports whether
// the connection was pooled.
func (a *Assembler) FlushConn(src, dst netip.AddrPort, remove bool) bool {
	var k key
	k.set(addrEndpoint(src), addrEndpoint(dst))
	conn := a.connPool.conns.get(&k)
	if conn == nil {
		return false
	}
	a.flushConn(conn)
	if remove {
		a.connPool.remove(conn)
	}
	return true
}

// flushConn delivers what conn buffered and closes both its halves.
func (a *Assembler) flushConn(conn *connection) {
	for _, half := range [2]*halfconnection{&conn.s2c, &conn.c2s} {
		for !half.closed {
			a.skipFlush(conn, half)
		}
	}
}

// FlushAll flushes all remaining data into all remaining connections and closes
// those connections. It returns the total number of connections flushed/closed
// by the call. (kwatch flushes connection by connection, in its own
// order: Streams and FlushConn.)
func (a *Assembler) FlushAll() (closed int) {
	a.conns = a.connPool.connections(a.conns[:0])
	closed = len(a.conns)
	for _, conn := range a.conns {
		// Removed since the snapshot: only a Stream calling back into
		// the pool could do that, but the check is cheap.
		if conn.removed {
			continue
		}
		a.flushConn(conn)
	}
	clear(a.conns)
	return
}
