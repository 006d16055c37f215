package capture

import (
	"errors"
	"io"
	"math"
	"sync"
	"sync/atomic"
	"unsafe"
)

// window is a minimal buffered reader that hands out slices of its own
// buffers (zero-copy). A slice returned by peek is valid until the next
// peek, which may move on to the next chunk.
type window struct {
	buf  []byte
	r, w int
	err  error // sticky read error, reported once the buffer is drained
	// off is the input offset of buf[r], for error messages.
	off int64
	// fixed: buf is the whole input (a read-only memory-mapped file), so
	// nothing is ever read into it or moved within it.
	fixed bool
	// bound is the largest block a reader accepts: the buffer size, the
	// same for a fixed window as for a read one (so errors do not depend
	// on how the file was read).
	bound int
	// dropped: buf[:dropped] of a fixed window was released (dropPages),
	// so resident memory does not grow with the file's length.
	dropped int
	// ra, when set, fills chunks on its own goroutine; buf is then the
	// chunk being read (nil before the first), seq its number (1-based).
	ra  *readahead
	seq uint64
	// spare: chunks done with, not yet given back (giveBackMin).
	spare []heldChunk
}

// dropEvery is how far a fixed window reads past what it last released
// before releasing again; dropLag keeps the last bytes (the packet just
// returned, whose Data must stay valid) mapped.
const (
	dropEvery = 2 << 20
	dropLag   = 1 << 20
)

// newFixedWindow is a window over the whole input in data.
func newFixedWindow(data []byte, bound int) *window {
	return &window{buf: data, w: len(data), err: io.EOF, fixed: true, bound: bound}
}

// peek returns the next n bytes without consuming them. If fewer than n bytes
// remain before the end of the input it returns what is there and the read
// error (io.EOF at a clean end). n must not exceed the buffer size.
func (w *window) peek(n int) ([]byte, error) {
	if w.w-w.r >= n {
		return w.buf[w.r : w.r+n], nil
	}
	return w.fill(n)
}

func (w *window) fill(n int) ([]byte, error) {
	if w.fixed {
		return w.buf[w.r:w.w], io.EOF
	}
	if n > w.bound {
		return w.buf[w.r:w.w], io.ErrShortBuffer
	}
	return w.fillAhead(n)
}

// skip consumes n bytes, reading past the buffer if needed (for blocks
// larger than the buffer that are skipped, never looked at). It returns
// the number of bytes actually skipped.
func (w *window) skip(n int64) (int64, error) {
	if avail := int64(w.w - w.r); n <= avail {
		w.r += int(n)
		w.off += n
		return n, nil
	}
	done := int64(w.w - w.r)
	w.off += done
	if w.fixed {
		w.r = w.w
		return done, io.EOF
	}
	w.r = w.w
	return w.skipAhead(done, n)
}

// advance consumes n bytes that a successful peek returned.
func (w *window) advance(n int) {
	w.r += n
	w.off += int64(n)
	// The next record's header (and the packet headers after it) was
	// written by a reading goroutine on another core, or mapped cold:
	// reading it stalls for a trip to memory, a third of the time spent
	// reading a capture of 64 KiB segments. Asking for it now overlaps
	// that trip with the analysis of the packet just returned.
	if w.r+128 <= w.w {
		prefetch(&w.buf[w.r])
	}
	if w.fixed && w.r-w.dropped >= dropEvery+dropLag {
		end := (w.r - dropLag) &^ (pageSize - 1)
		dropPages(w.buf[w.dropped:end])
		w.dropped = end
	}
}

// Readahead: reading a capture costs a copy out of the page cache (or a
// gunzip) per byte, which on a 1.34 GB file of 64 KiB segments was a third
// of the analysis time. Goroutines read chunks ahead (for a regular file
// one, and a second at alternate offsets once the first is not keeping
// up; one for a stream), so that copy runs on other cores while packets
// are analyzed. Chunks are handed over, not
// copied: only a record that straddles two chunks has its first part copied
// into the headroom in front of the next chunk's data, which is why the
// headroom is as large as the largest block a reader accepts.
//
// Waking a parked goroutine costs tens of microseconds on a virtual machine
// (an inter-processor interrupt), and every page touched for the first time
// a few more: chunks are two megabytes (a huge page; 1 MiB chunks were 10%
// slower on 64 KiB segments), few, and given back to the reading
// goroutine two at a time, unless it is about to be waited for.
const (
	chunkData    = 2 << 20 // bytes read into a chunk
	chunkBuffers = 4       // chunks in circulation: one being read, up to three ahead
	giveBackMin  = 2       // chunks given back at once
	// retainExtra chunks join when the reader retains data (Retain): they
	// hold the packets still in flight to other goroutines.
	retainExtra = 5
)

// errWindowClosed ends reading once Close stopped the readahead.
var errWindowClosed = errors.New("capture: source closed")

type readahead struct {
	// lanes each read every len(lanes)-th chunk, on a goroutine of their
	// own: chunk k (from 0) comes from lane k % len(lanes), except for an
	// adaptive readahead (see laneOf).
	lanes []lane
	done  chan struct{}
	stop  sync.Once
	head  int // headroom before each chunk's data
	data  int // bytes read into a chunk: chunkData, less for a small input

	// Retaining (see Retainer): chunks left behind are held, with their
	// sequence numbers, until Release; mu guards held against Release
	// calls from another goroutine.
	retaining bool
	mu        sync.Mutex
	held      []heldChunk

	// adaptive (a regular file, two lanes): lane 0 reads every chunk
	// until the window has had to wait for chunks splitAfterWaits times
	// after the first round of buffers (warm chunks, the ones that take a
	// page fault per huge page); lane 1 then joins, and from chunk split on
	// the two alternate. A second reader pays where the copy out of the
	// page cache is the bottleneck (64 KiB segments), but where analysis
	// is, it only takes turns with the analysis on a core: on 84 MB of
	// small packets two readers from the start cost 5-8 ms of ~100.
	adaptive bool
	warm     uint64
	waits    atomic.Int32
	split    atomic.Uint64 // noSplit until lane 1 joins
	join     chan struct{} // closed when lane 1 joins
	owned0   atomic.Int32  // buffers given to lane 0 before the split
}

const (
	noSplit         = math.MaxUint64
	splitAfterWaits = 2
)

// lane is one reading goroutine's queues.
type lane struct {
	full chan chunk  // chunks read, in input order
	free chan []byte // chunks to read into
}

type heldChunk struct {
	buf  []byte
	seq  uint64
	lane int
}

// chunk is buf[head:end] read from the input; err ends the input after it.
type chunk struct {
	buf []byte
	end int
	err error
}

// newReadahead sizes the chunks to the input when its size is known (size
// >= 0) and small: opening a capture of a few packets should not allocate
// megabytes (a fuzz target opens thousands).
func newReadahead(bound, lanes int, size int64) *readahead {
	data, buffers := chunkData, chunkBuffers
	if size >= 0 && size < int64(chunkData*chunkBuffers) {
		// All of it in one chunk per lane, with room for the read that
		// finds the end.
		data = int(size/int64(lanes)+4096) &^ 4095
		// One more than the lanes: the window keeps the chunk it reads
		// from until it has the next one, which its lane must read into
		// another buffer.
		buffers = lanes + 1
	}
	ra := &readahead{lanes: make([]lane, lanes), done: make(chan struct{}), head: bound, data: min(data, chunkData),
		warm: uint64(buffers), join: make(chan struct{})}
	ra.split.Store(noSplit)
	for i := range ra.lanes {
		ra.lanes[i] = lane{
			full: make(chan chunk, chunkBuffers+retainExtra),
			free: make(chan []byte, chunkBuffers+retainExtra),
		}
	}
	ra.addChunks(buffers)
	return ra
}

// addChunks gives n more chunks to the lanes, in turn; all to lane 0
// while it reads alone.
func (ra *readahead) addChunks(n int) {
	alone := ra.adaptive && ra.split.Load() == noSplit
	for i, b := range chunkMemory(n, ra.head+ra.data) {
		if alone {
			i = 0
			ra.owned0.Add(1)
		}
		ra.lanes[i%len(ra.lanes)].free <- b
	}
}

// laneOf is the lane that reads chunk k.
func (ra *readahead) laneOf(k uint64) int {
	n := uint64(len(ra.lanes))
	if !ra.adaptive {
		return int(k % n)
	}
	s := ra.split.Load()
	if k < s {
		return 0
	}
	return int((k - s) % n)
}

// splitAt makes lane 1 join from chunk s on (s read by lane 0, s+1 by lane
// 1, ...). Lane 0 calls it before it sends chunk s-1, so the window knows
// the split before it asks for chunk s. Lane 1 gets half of lane 0's
// buffers, as a static split would have dealt them: the window is
// waiting, so they are mostly free (lane 1 makes up any shortfall).
func (ra *readahead) splitAt(s uint64) {
	ra.split.Store(s)
	l0, l1 := &ra.lanes[0], &ra.lanes[1]
	for range ra.owned0.Load() / 2 {
		select {
		case b := <-l0.free:
			l1.free <- b
		default:
		}
	}
	close(ra.join)
}

// newReadaheadWindow reads src on a goroutine until it ends or close is
// called. eager fills each chunk completely (for a gzip stream, whose reads
// return a few KiB each); otherwise one Read per chunk, so a slow pipe's
// packets are not held back waiting for a full chunk.
func newReadaheadWindow(src io.Reader, size int64, bound int, eager bool, onExit func()) *window {
	ra := newReadahead(bound, 1, size)
	go ra.run(src, eager, onExit)
	return &window{bound: bound, ra: ra}
}

// readLanes is how many goroutines may read a regular file. The copy out
// of the page cache was the bottleneck of a capture of 64 KiB segments
// (1.34 GB: 135 ms of copying on one core against ~100 ms of analysis);
// two readers halve it, a third would only take the analysis' core. The
// second joins only when needed (see readahead.adaptive).
const readLanes = 2

// newFileReadaheadWindow reads the regular file f from offset base with
// readLanes goroutines reading alternate chunks at their offsets.
func newFileReadaheadWindow(f io.ReaderAt, base, size int64, bound int) *window {
	ra := newReadahead(bound, readLanes, size)
	ra.adaptive = readLanes == 2
	if ra.adaptive {
		// newReadahead dealt the buffers round: they all go to lane 0.
		for len(ra.lanes[1].free) > 0 {
			ra.lanes[0].free <- <-ra.lanes[1].free
		}
		ra.owned0.Store(int32(len(ra.lanes[0].free)))
	}
	for i := range ra.lanes {
		go ra.runAt(f, base, i)
	}
	return &window{bound: bound, ra: ra}
}

func (ra *readahead) run(src io.Reader, eager bool, onExit func()) {
	if onExit != nil {
		defer onExit()
	}
	l := &ra.lanes[0]
	zeroReads := 0
	for {
		buf, ok := ra.take(l)
		if !ok {
			return
		}
		end := ra.head
		var err error
		for end < len(buf) {
			m, rerr := src.Read(buf[end:])
			end += m
			if rerr != nil {
				err = rerr
				break
			}
			if m == 0 {
				// A reader that keeps returning 0, nil would spin forever.
				if zeroReads++; zeroReads > 100 {
					err = io.ErrNoProgress
					break
				}
				continue
			}
			zeroReads = 0
			if !eager {
				break
			}
		}
		if !ra.put(l, chunk{buf: buf, end: end, err: err}) || err != nil {
			return
		}
	}
}

// runAt is lane i reading its chunks of f: i, i+len(lanes), ..., or, when
// adaptive, lane 0 every chunk until the split and lane 1 nothing before
// it. A short read is the end of the file (ReadAt says io.EOF), wherever it
// falls.
func (ra *readahead) runAt(f io.ReaderAt, base int64, i int) {
	l := &ra.lanes[i]
	k, step := uint64(i), uint64(len(ra.lanes))
	if ra.adaptive {
		if i == 0 {
			step = 1
		} else {
			select {
			case <-ra.join:
			case <-ra.done:
				return
			}
			k = ra.split.Load() + 1
			if short := giveBackMin - len(l.free); short > 0 {
				// Lane 0 had too few buffers to spare; two keep a lane
				// reading while the window holds the other.
				for _, b := range chunkMemory(short, ra.head+ra.data) {
					l.free <- b
				}
			}
		}
	}
	for {
		buf, ok := ra.take(l)
		if !ok {
			return
		}
		m, err := f.ReadAt(buf[ra.head:], base+int64(k)*int64(ra.data))
		next := k + step
		if step == 1 && err == nil && ra.waits.Load() >= splitAfterWaits {
			ra.splitAt(k + 1)
			step = uint64(len(ra.lanes))
		}
		if !ra.put(l, chunk{buf: buf, end: ra.head + m, err: err}) || err != nil {
			return
		}
		k = next
	}
}

// take waits for a free buffer of lane l; false once the window is closed.
func (ra *readahead) take(l *lane) ([]byte, bool) {
	select {
	case buf := <-l.free:
		return buf, true
	case <-ra.done:
		return nil, false
	}
}

// put hands a chunk read to lane l's reader; false once the window is
// closed.
func (ra *readahead) put(l *lane, c chunk) bool {
	select {
	case l.full <- c:
		return true
	case <-ra.done:
		return false
	}
}

// close stops the goroutines at their next chunk. One may still be inside
// a Read of a pipe; that Read's result is dropped.
func (ra *readahead) close() {
	ra.stop.Do(func() { close(ra.done) })
}

// next takes the next chunk, giving the current one back.
func (w *window) next() (chunk, bool) {
	c, ok := w.take()
	if ok {
		w.giveBack(w.buf)
	}
	return c, ok
}

// take receives the next chunk. Chunks given back but not yet sent go
// first when its lane has nothing ready: it may be waiting for them.
func (w *window) take() (chunk, bool) {
	ra := w.ra
	l := &ra.lanes[ra.laneOf(w.seq)]
	if len(l.full) == 0 {
		w.sendSpare()
		if ra.adaptive && w.seq > ra.warm {
			ra.waits.Add(1)
		}
	}
	select {
	case c := <-l.full:
		return c, true
	case <-ra.done:
		return chunk{}, false
	}
}

func (w *window) sendSpare() {
	for _, h := range w.spare {
		w.ra.lanes[h.lane].free <- h.buf // never blocks: free holds every chunk
	}
	clear(w.spare)
	w.spare = w.spare[:0]
}

// giveBack is done with the chunk that was current: it returns to its
// lane, or waits for Release when retaining.
func (w *window) giveBack(buf []byte) {
	seq := w.seq
	w.seq++
	if buf == nil {
		return
	}
	ra := w.ra
	h := heldChunk{buf: buf, seq: seq, lane: ra.laneOf(seq - 1)}
	if ra.retaining {
		ra.mu.Lock()
		ra.held = append(ra.held, h)
		ra.mu.Unlock()
		return
	}
	w.spare = append(w.spare, h)
	if len(w.spare) >= giveBackMin {
		w.sendSpare()
	}
}

// retain switches to retaining chunks until release; see Retainer.
func (w *window) retain() {
	if w.fixed || w.ra == nil || w.ra.retaining {
		return
	}
	w.ra.retaining = true
	w.ra.addChunks(retainExtra)
}

// mark is the sequence number of the current chunk: data returned so far
// lies in it and the chunks before it.
func (w *window) mark() uint64 { return w.seq }

// release gives back the held chunks before mark m. Any goroutine.
func (w *window) release(m uint64) {
	ra := w.ra
	if ra == nil {
		return
	}
	ra.mu.Lock()
	n := 0
	for n < len(ra.held) && ra.held[n].seq < m {
		h := ra.held[n]
		ra.lanes[h.lane].free <- h.buf // never blocks: free holds every chunk
		n++
	}
	ra.held = append(ra.held[:0], ra.held[n:]...)
	ra.mu.Unlock()
}

func (w *window) fillAhead(n int) ([]byte, error) {
	for w.w-w.r < n && w.err == nil {
		prev, r, wend := w.buf, w.r, w.w
		// Take the chunk before giving prev back: prev's unread tail is
		// copied out of it below.
		c, ok := w.take()
		if !ok {
			w.err = errWindowClosed
			continue
		}
		tail := wend - r
		start := w.ra.head - tail // tail < n <= bound == head
		copy(c.buf[start:w.ra.head], prev[r:wend])
		w.giveBack(prev)
		w.buf, w.r, w.w, w.err = c.buf, start, c.end, c.err
	}
	if w.w-w.r >= n {
		return w.buf[w.r : w.r+n], nil
	}
	return w.buf[w.r:w.w], w.err
}

// skipAhead continues skip past the bytes buffered (done of them, already
// consumed) chunk by chunk.
func (w *window) skipAhead(done, n int64) (int64, error) {
	for done < n {
		if w.err != nil {
			return done, w.err
		}
		c, ok := w.next()
		if !ok {
			w.err = errWindowClosed
			continue
		}
		w.buf, w.r, w.w, w.err = c.buf, w.ra.head, c.end, c.err
		m := min(n-done, int64(w.w-w.r))
		w.r += int(m)
		w.off += m
		done += m
	}
	return done, nil
}

// close stops a readahead window's goroutine; other windows have none.
func (w *window) close() {
	if w.ra != nil {
		w.ra.close()
	}
}

// chunkMemory allocates n chunk buffers of size bytes in one allocation
// whose huge-page-aligned part is advised to use huge pages (adviseHuge).
func chunkMemory(n, size int) [][]byte {
	mem := make([]byte, n*size+hugePage)
	addr := uintptr(unsafe.Pointer(unsafe.SliceData(mem)))
	start := int((hugePage - addr%hugePage) % hugePage)
	adviseHuge(mem[start : start+(len(mem)-start)/hugePage*hugePage])
	bufs := make([][]byte, n)
	for i := range bufs {
		off := start + i*size
		bufs[i] = mem[off : off+size : off+size]
	}
	return bufs
}
