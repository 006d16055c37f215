//go:build linux

package capture

import (
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gopacket/gopacket/layers"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// FanoutSource captures from one interface through several TPACKET_V3
// rings joined in one PACKET_FANOUT group: the kernel spreads packets over
// the rings by their flow hash (PACKET_FANOUT_HASH, symmetric, so both
// directions of a TCP connection land on one ring; PACKET_FANOUT_FLAG_DEFRAG,
// so that the fragments of a datagram do too). Each ring is waited for and
// walked on its own goroutine, block by block; the reader (NextInto) merges
// the rings' packets by capture time, so that the analysis, whose rules
// compare connections, sees one capture in time order:
//
//   - a ring's own packets keep its order;
//   - the next packet is the earliest of the rings' next packets, once every
//     other ring has shown it holds nothing earlier: it has a packet queued,
//     or the kernel holds no packet for it (its current block is empty and
//     not handed over: a packet it takes from now on is stamped from now on,
//     the kernel counts a packet into the block before stamping it). A ring
//     whose kernel block is filling is waited for; the kernel hands that
//     block over within its block timeout (ringBlockTimeout), so an idle ring
//     holds the others back by at most about that long.
//
// A block goes back to the kernel once the reader has moved past its last
// packet. Concurrency is LiveSource's: NextInto on one goroutine, Stop and
// Close from any, Stats from any (also after Close).
type FanoutSource struct {
	rings    []*fanRing
	arrivals chan blockRef // walked blocks, and ends, from the rings' goroutines
	quit     chan struct{} // closed by Close: the goroutines stop waiting
	wg       sync.WaitGroup
	timer    *time.Timer

	mu       sync.Mutex // held by NextInto and Close
	last     int        // the ring whose packet NextInto returned last, or -1
	frame    uint64
	live     int // rings whose goroutine has not ended
	err      error
	closed   bool
	released bool
	closeErr error
	// Late counts packets stamped earlier than one already returned (a
	// clock step, or a kernel that stamps out of order): returned anyway.
	late uint64
	// bound: the ring last returned from may go on without a choice while
	// its packets are earlier than this (every other ring's head, or the
	// time from which an empty ring's packets will be stamped).
	bound     int64
	lastStamp int64 // the last returned packet's time, and its ring
	lastRing  int
}

// blockRef is a walked block of ring, or (block -1) the ring's end.
type blockRef struct {
	ring, block int
	err         error
}

// fanRing is one ring of the group: the goroutine walking it, and the
// reader's position in it.
type fanRing struct {
	src *LiveSource
	idx int
	// refs[b] are block b's packets, walked by the goroutine while the
	// block is in flight (taken and not yet given back): 24 bytes a packet
	// without pointers, which the collector does not scan.
	refs     [][]pktRef
	inFlight atomic.Int32
	cur      atomic.Int32  // the block the goroutine waits for next
	freed    chan struct{} // a block given back while every block was in flight

	// The reader's side.
	queue      []int32 // in-flight blocks not started, oldest first (circular)
	qhead, qn  int
	blk, pos   int // the block being read (-1: none) and the next packet in it
	ended      bool
	deliveries uint64
}

const (
	// fanoutStampSlack is how much earlier than the moment the reader sees
	// a ring's block empty a packet counted into it later may be stamped.
	// The kernel counts a packet into the block before it stamps it, but
	// it prefers a stamp the packet already carries, taken when the
	// device queued it (when any socket on the host asked for receive
	// stamps): that is the backlog's wait earlier, a few milliseconds on
	// a loaded machine. The margin costs latency only (findings come 20 ms
	// later while a ring is idle); a packet it does not cover is counted
	// (Late).
	fanoutStampSlack = 20 * time.Millisecond
	// fanoutMinWait is the shortest wait for an empty ring's stamps to
	// pass a packet's: at a low rate every packet would otherwise wait on
	// a timer of its own.
	fanoutMinWait = 5 * time.Millisecond
	// fanoutAgain is pick's "choose again", no wait.
	fanoutAgain = time.Duration(-2)
)

// OpenFanout opens n rings on iface (see FanoutSource); n must be at least
// 2 (one ring is OpenLive). The memory is n rings of opts.RingSize.
func OpenFanout(iface string, n int, opts LiveOptions) (*FanoutSource, error) {
	if n < 2 || n > 256 {
		return nil, fmt.Errorf("capture: %s: %d rings: fanout takes 2 to 256", iface, n)
	}
	ifc, filter, err := liveSetup(iface, opts)
	if err != nil {
		return nil, err
	}
	// Each socket takes nothing until every socket is in the group: alone,
	// a socket would take every packet, and the others' copies would be
	// duplicates. The rejecting filter is then replaced, socket by socket.
	reject, err := bpf.Assemble([]bpf.Instruction{bpf.RetConstant{Val: 0}})
	if err != nil {
		return nil, fmt.Errorf("capture: fanout filter: %w", err)
	}
	f := &FanoutSource{last: -1, quit: make(chan struct{}), timer: time.NewTimer(time.Hour)}
	f.timer.Stop()
	group := -1 // the kernel picks a group ID no one uses for the first socket
	var nblocks int
	for i := range n {
		s, err := openSocket(iface, ifc, reject, opts)
		if err == nil {
			group, err = joinFanout(s.fd, group)
		}
		if err != nil {
			f.closeSources()
			return nil, fmt.Errorf("capture: %s: ring %d of %d: %w", iface, i+1, n, err)
		}
		f.rings = append(f.rings, newFanRing(s, i))
		nblocks += s.ring.nblocks
	}
	for _, r := range f.rings {
		if err := attachFilter(r.src.fd, filter); err != nil {
			f.closeSources()
			return nil, fmt.Errorf("capture: %s: %w", iface, err)
		}
	}
	opts.Logger.Debug().Str("iface", iface).Int("rings", n).Int("group", group).Msg("packet fanout open")
	f.arrivals = make(chan blockRef, nblocks+n)
	f.live = n
	for _, r := range f.rings {
		f.wg.Add(1)
		go r.run(f.arrivals, f.quit, &f.wg)
	}
	return f, nil
}

// joinFanout puts fd in fanout group (by flow hash, fragments reassembled
// first so that they hash as their datagram), or with group -1 in a new
// group whose ID the kernel picks unique (two captures in one process,
// or a pid's low bits shared with another process, would otherwise share
// a group and each other's packets). It returns the group's ID.
func joinFanout(fd, group int) (int, error) {
	mode := unix.PACKET_FANOUT_HASH | unix.PACKET_FANOUT_FLAG_DEFRAG
	arg := group | mode<<16
	if group < 0 {
		arg = (mode | unix.PACKET_FANOUT_FLAG_UNIQUEID) << 16
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_FANOUT, arg); err != nil {
		return group, fmt.Errorf("joining a packet fanout group: %w", err)
	}
	got, err := unix.GetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_FANOUT)
	if err != nil {
		return group, fmt.Errorf("reading the packet fanout group: %w", err)
	}
	return got & 0xffff, nil
}

func newFanRing(s *LiveSource, idx int) *fanRing {
	n := s.ring.nblocks
	return &fanRing{src: s, idx: idx, refs: make([][]pktRef, n), queue: make([]int32, n),
		freed: make(chan struct{}, 1), blk: -1}
}

// run waits for the ring's blocks, walks each into its packets and hands
// it to the reader, until the source stops (or quit).
func (r *fanRing) run(out chan<- blockRef, quit <-chan struct{}, wg *sync.WaitGroup) {
	defer wg.Done()
	s, rg := r.src, r.src.ring
	for {
		if int(r.inFlight.Load()) == rg.nblocks {
			// The reader holds every block: wait for one back.
			select {
			case <-r.freed:
				continue
			case <-quit:
				out <- blockRef{ring: r.idx, block: -1}
				return
			}
		}
		if rg.ready() {
			r.walk(rg.cur)
			r.inFlight.Add(1)
			out <- blockRef{ring: r.idx, block: rg.cur}
			rg.cur = (rg.cur + 1) % rg.nblocks
			r.cur.Store(int32(rg.cur))
			continue
		}
		if err := s.wait(); err != nil {
			if err == io.EOF {
				err = nil
			}
			out <- blockRef{ring: r.idx, block: -1, err: err}
			return
		}
	}
}

// walk reads block b's packets into r.refs[b], whose room is kept from the
// block's last turn.
func (r *fanRing) walk(b int) {
	rg := r.src.ring
	rg.cur = b
	rg.take()
	refs := r.refs[b][:0]
	for rg.left > 0 {
		if ref, ok := rg.nextRef(); ok {
			refs = append(refs, ref)
		}
	}
	rg.held = false
	r.refs[b] = refs
}

// headNs is the time of the ring's head packet (head() is true).
func (r *fanRing) headNs() int64 { return r.refs[r.blk][r.pos].ns }

// head makes sure the ring's next packet is at r.refs[r.blk][r.pos],
// giving back blocks read to the end; false when none is queued.
func (r *fanRing) head() bool {
	for {
		if r.blk >= 0 {
			if r.pos < len(r.refs[r.blk]) {
				return true
			}
			r.src.ring.giveBack(r.blk)
			r.blk = -1
			if r.inFlight.Add(-1) == int32(r.src.ring.nblocks-1) {
				select {
				case r.freed <- struct{}{}:
				default:
				}
			}
		}
		if r.qn == 0 {
			return false
		}
		r.blk, r.pos = int(r.queue[r.qhead]), 0
		r.qhead = (r.qhead + 1) % len(r.queue)
		r.qn--
	}
}

// kernelEmpty tells whether the kernel holds no packet for the ring beyond
// what its goroutine handed over: the block it waits for is neither handed
// over nor filling. The caller collects arrivals after this returns true
// (blocks before cur were sent before cur was published).
func (r *fanRing) kernelEmpty() bool {
	rg := r.src.ring
	c := int(r.cur.Load())
	return atomic.LoadUint32(rg.status(c))&unix.TP_STATUS_USER == 0 && atomic.LoadUint32(rg.numPkts(c)) == 0
}

// NextInto reads the next packet in capture time order into p. p.Data
// points into a ring and stays valid until the next call.
func (f *FanoutSource) NextInto(p *Packet) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		*p = Packet{}
		return errors.Join(io.EOF, f.release())
	}
	if i := f.last; i >= 0 {
		r := f.rings[i]
		r.pos++
		// Within a block, before every other ring's bound: no choice to make.
		if r.pos < len(r.refs[r.blk]) && r.headNs() < f.bound {
			f.emit(i, p)
			return nil
		}
		f.last = -1
	}
	for {
		f.collect()
		i, wait := f.pick()
		if i >= 0 {
			f.emit(i, p)
			return nil
		}
		switch {
		case wait == fanoutAgain:
		case wait < 0:
			*p = Packet{}
			return f.endErr()
		default:
			f.await(wait)
		}
	}
}

// emit returns ring i's head packet.
func (f *FanoutSource) emit(i int, p *Packet) {
	r := f.rings[i]
	ref := r.refs[r.blk][r.pos]
	r.src.ring.fill(p, r.blk, ref)
	f.frame++
	p.Frame = f.frame
	p.LinkType = layers.LinkTypeEthernet
	f.last = i
	r.deliveries++
	if ref.ns < f.lastStamp && f.lastRing != i {
		f.late++
	}
	f.lastStamp, f.lastRing = ref.ns, i
}

// pick chooses the ring whose head packet comes next, or says how long to
// wait for the others (0: until a block arrives; fanoutAgain: choose
// again; -1: every ring ended). It sets f.bound for the chosen ring.
func (f *FanoutSource) pick() (int, time.Duration) {
	best := -1
	var bestNs int64
	for i, r := range f.rings {
		if r.head() && (best < 0 || r.headNs() < bestNs) {
			best, bestNs = i, r.headNs()
		}
	}
	if best < 0 {
		if f.live == 0 {
			return -1, -1
		}
		return -1, 0
	}
	bound, from := int64(math.MaxInt64), int64(0)
	for i, r := range f.rings {
		switch {
		case i == best:
		case r.blk >= 0: // ended or not: its queued packets count
			bound = min(bound, r.headNs())
		case r.ended:
		case !r.kernelEmpty():
			// The block comes over within ringBlockTimeout (or, stopped,
			// the ring ends): either arrival wakes the reader.
			return -1, 0
		default:
			f.collect()
			if r.head() {
				return -1, fanoutAgain // a block came: choose again
			}
			if from == 0 {
				from = time.Now().Add(-fanoutStampSlack).UnixNano()
			}
			if bestNs >= from {
				return -1, max(time.Duration(bestNs-from+1), fanoutMinWait)
			}
			bound = min(bound, from)
		}
	}
	f.bound = bound
	return best, 0
}

// collect queues the blocks that arrived, without waiting.
func (f *FanoutSource) collect() {
	for {
		select {
		case ref := <-f.arrivals:
			f.accept(ref)
		default:
			return
		}
	}
}

// await waits for a block to arrive, at most d when d > 0.
func (f *FanoutSource) await(d time.Duration) {
	if d <= 0 {
		f.accept(<-f.arrivals)
		return
	}
	f.timer.Reset(d)
	select {
	case ref := <-f.arrivals:
		f.accept(ref)
	case <-f.timer.C:
	}
	f.timer.Stop()
}

func (f *FanoutSource) accept(ref blockRef) {
	r := f.rings[ref.ring]
	if ref.block < 0 {
		r.ended = true
		f.live--
		if ref.err != nil && f.err == nil {
			f.err = ref.err
		}
		return
	}
	r.queue[(r.qhead+r.qn)%len(r.queue)] = int32(ref.block)
	r.qn++
}

func (f *FanoutSource) endErr() error {
	if f.err != nil {
		return f.err
	}
	return io.EOF
}

// Next is NextInto returning the packet.
func (f *FanoutSource) Next() (Packet, error) { return nextInto(f) }

// Stop ends the capture gracefully on every ring: NextInto returns what
// the kernel captured so far, then io.EOF.
func (f *FanoutSource) Stop() {
	for _, r := range f.rings {
		r.src.Stop()
	}
}

// Close stops at once and releases the rings, or leaves that to the
// reader's next call while it holds a packet.
func (f *FanoutSource) Close() error {
	f.Stop()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil
	}
	f.closed = true
	close(f.quit)
	// The goroutines end: Stop wakes their wait, quit their wait for a
	// block back. Their last sends fit in arrivals (room for every block
	// and every end).
	f.wg.Wait()
	if f.last >= 0 {
		return nil
	}
	return f.release()
}

// release closes the sources, once; f.mu is held.
func (f *FanoutSource) release() error {
	if !f.released {
		f.released = true
		f.closeErr = f.closeSources()
	}
	return f.closeErr
}

// closeSources closes every ring's socket; its blocks are no longer read.
func (f *FanoutSource) closeSources() error {
	var errs []error
	for _, r := range f.rings {
		r.src.ring.held = false
		errs = append(errs, r.src.Close())
	}
	return errors.Join(errs...)
}

// Stats sums the rings' kernel counters.
func (f *FanoutSource) Stats() (LiveStats, error) {
	var sum LiveStats
	var errs []error
	for _, r := range f.rings {
		st, err := r.src.Stats()
		errs = append(errs, err)
		sum.Received += st.Received
		sum.Dropped += st.Dropped
		sum.Freezes += st.Freezes
	}
	return sum, errors.Join(errs...)
}

// RingStats are each ring's kernel counters, in ring order.
func (f *FanoutSource) RingStats() []LiveStats {
	out := make([]LiveStats, len(f.rings))
	for i, r := range f.rings {
		out[i], _ = r.src.Stats()
	}
	return out
}

// Late counts packets returned after a later-stamped one (see
// FanoutSource.late).
func (f *FanoutSource) Late() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.late
}
