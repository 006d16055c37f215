//go:build linux

package capture

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gopacket/gopacket/layers"
	"golang.org/x/sys/unix"
)

// The receive ring (TPACKET_V3). The kernel writes packets one after the
// other into fixed-size blocks of a memory region shared with kwatch, and
// hands a block over (TP_STATUS_USER) when it is full or when it has held
// packets for ringBlockTimeout. kwatch reads the block's packets in place,
// then gives the block back (TP_STATUS_KERNEL). There is no system call per
// packet, only one netpoller wait per block when kwatch has caught up; an
// idle capture wakes nobody (an empty block is never handed over).
//
// The memory is the ring's whole size, allocated by the kernel when the
// socket opens and pinned until it closes.

const (
	// ringBlockSize is one block: a whole loopback segment (64 KiB) many
	// times over, thousands of small packets. The kernel needs page
	// multiples; it allocates each block as one run of pages.
	ringBlockSize = 1 << 20
	// ringBlockTimeout bounds how long a packet waits in a block that is
	// not full: the latency of a quiet capture, and the number of wake-ups
	// per second (at most 1/ringBlockTimeout) of a busy one that has caught
	// up. It also bounds what the ring holds of a light load: every block
	// is handed over after at most this long, however empty, so the ring
	// absorbs a stall of kwatch of at least blocks x ringBlockTimeout (6.4 s
	// for the default 64 blocks; 1.3 s at 20 ms, which a loaded 2-core
	// machine exceeded at 20k packets/s). A tenth of a second is below what
	// a person watching the TUI notices; a wake-up costs ~10-20 µs, so at
	// 20 ms they were 50 ns a packet at 20k packets/s.
	ringBlockTimeout = 100 * time.Millisecond
	// stopDrainMax bounds how long Stop waits for the block being filled.
	// The kernel's block timer hands a block over at its second tick that
	// finds it current, within two block timeouts, but later when the
	// timer's softirq waits for a busy CPU: a fixed wait of two timeouts
	// lost the last block's packets (445 requests, with 0 drops counted)
	// on a loaded machine.
	stopDrainMax = 10 * ringBlockTimeout
	// tpacketAlign is TPACKET_ALIGNMENT.
	tpacketAlign = 16
)

// Offsets in a block descriptor (struct tpacket_block_desc: version and
// offset_to_priv, then struct tpacket_hdr_v1).
const (
	blkStatusOff   = 8
	blkNumPktsOff  = 12
	blkFirstPktOff = 16
)

// ring is the mapped TPACKET_V3 ring and the reader's position in it.
type ring struct {
	mem     []byte
	nblocks int
	cur     int  // the block read now, or waited for
	held    bool // cur is handed over and being read
	left    uint32
	off     uint32
}

// ringSize rounds size to whole blocks within limits.
func ringSize(size int) int {
	if size <= 0 {
		size = DefaultRingSize
	}
	size = max(size, MinRingSize)
	return (size + ringBlockSize - 1) / ringBlockSize * ringBlockSize
}

// setupRing switches fd to TPACKET_V3 and maps a ring of size bytes (a
// multiple of ringBlockSize) whose packets keep at most snaplen bytes.
func setupRing(fd, size, snaplen int) (*ring, error) {
	if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_VERSION, unix.TPACKET_V3); err != nil {
		return nil, fmt.Errorf("asking for TPACKET_V3: %w", err)
	}
	// The frame size only matters to the kernel's checks: V3 packs packets
	// by their captured size. A snap length larger than a block cannot be
	// kept whole: the kernel cuts packets to what a block holds.
	frame := min(alignUp(unix.SizeofTpacket3Hdr+int(unsafe.Sizeof(unix.RawSockaddrLinklayer{}))+snaplen+tpacketAlign, tpacketAlign), ringBlockSize)
	nblocks := size / ringBlockSize
	req := unix.TpacketReq3{
		Block_size:     ringBlockSize,
		Block_nr:       uint32(nblocks),
		Frame_size:     uint32(frame),
		Frame_nr:       uint32(ringBlockSize / frame * nblocks),
		Retire_blk_tov: uint32(ringBlockTimeout / time.Millisecond),
	}
	if err := unix.SetsockoptTpacketReq3(fd, unix.SOL_PACKET, unix.PACKET_RX_RING, &req); err != nil {
		return nil, fmt.Errorf("setting up a %d MiB receive ring: %w (try a smaller --ring-size)", size>>20, err)
	}
	mem, err := unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mapping the receive ring: %w", err)
	}
	return &ring{mem: mem, nblocks: nblocks}, nil
}

func alignUp(n, a int) int { return (n + a - 1) / a * a }

func (r *ring) block(i int) []byte { return r.mem[i*ringBlockSize : (i+1)*ringBlockSize] }

func (r *ring) status(i int) *uint32 {
	return (*uint32)(unsafe.Pointer(&r.mem[i*ringBlockSize+blkStatusOff]))
}

// ready tells whether the kernel has handed block cur over.
func (r *ring) ready() bool { return atomic.LoadUint32(r.status(r.cur))&unix.TP_STATUS_USER != 0 }

// take starts reading block cur, which is ready.
func (r *ring) take() {
	b := r.block(r.cur)
	r.held = true
	r.left = *(*uint32)(unsafe.Pointer(&b[blkNumPktsOff]))
	r.off = *(*uint32)(unsafe.Pointer(&b[blkFirstPktOff]))
}

// numPkts is block i's packet count, which the kernel raises as it fills
// the block.
func (r *ring) numPkts(i int) *uint32 {
	return (*uint32)(unsafe.Pointer(&r.mem[i*ringBlockSize+blkNumPktsOff]))
}

// filling tells whether the kernel holds packets in block cur, not yet
// handed over.
func (r *ring) filling() bool { return atomic.LoadUint32(r.numPkts(r.cur)) != 0 }

// release gives the block being read back to the kernel and moves on.
func (r *ring) release() {
	if !r.held {
		return
	}
	r.giveBack(r.cur)
	r.held = false
	r.left = 0
	r.cur++
	if r.cur == r.nblocks {
		r.cur = 0
	}
}

// giveBack hands block i back to the kernel. It touches only the block's
// header, so a goroutine other than the reader may call it (fanout).
func (r *ring) giveBack(i int) {
	// The count is the kernel's to set when it opens the block again;
	// until then it would say the block is filling (see filling).
	atomic.StoreUint32(r.numPkts(i), 0)
	atomic.StoreUint32(r.status(i), unix.TP_STATUS_KERNEL)
}

// pktRef is where a packet lies in its block, and its time: what next
// reads from the packet's header, checked, without a pointer (a fanout
// ring's goroutine keeps thousands per block for the reader).
type pktRef struct {
	ns            int64 // the capture time, Unix nanoseconds
	start, caplen uint32
	length        uint32
}

// next fills p from the next packet of the block being read (r.left > 0).
// Offsets come from the kernel; a bad one ends the block rather than the
// process.
func (r *ring) next(p *Packet) bool {
	ref, ok := r.nextRef()
	if ok {
		r.fill(p, r.cur, ref)
	}
	return ok
}

// nextRef checks the next packet of the block being read (r.left > 0) and
// moves past it.
func (r *ring) nextRef() (pktRef, bool) {
	b := r.block(r.cur)
	r.left--
	off := int(r.off)
	if off < 0 || off+unix.SizeofTpacket3Hdr > len(b) {
		r.left = 0
		return pktRef{}, false
	}
	h := (*unix.Tpacket3Hdr)(unsafe.Pointer(&b[off]))
	start, caplen := off+int(h.Mac), int(h.Snaplen)
	if start > len(b) || caplen > len(b)-start {
		r.left = 0
		return pktRef{}, false
	}
	// Each packet must lie past the last one's header: an offset that
	// stands still, steps back (a wrap of the uint32 sum) or leaves the
	// block would read the same bytes up to 2^32 times (FuzzRingBlock).
	if next := int(h.Next_offset); next < unix.SizeofTpacket3Hdr || next > len(b)-off {
		r.left = 0
	} else {
		r.off += h.Next_offset
	}
	ns := int64(h.Sec)*int64(time.Second) + int64(h.Nsec)
	return pktRef{ns: ns, start: uint32(start), caplen: uint32(caplen), length: uint32(max(int(h.Len), caplen))}, true
}

// fill makes p the packet ref of block blk.
func (r *ring) fill(p *Packet, blk int, ref pktRef) {
	b := r.block(blk)
	end := ref.start + ref.caplen
	p.Time = time.Unix(0, ref.ns).UTC()
	p.Data = b[ref.start:end:end]
	p.CaptureLength = int(ref.caplen)
	p.Length = int(ref.length)
}

func (r *ring) unmap() error {
	if r.mem == nil {
		return nil
	}
	err := unix.Munmap(r.mem)
	r.mem = nil
	return err
}

// NextInto reads the next packet into p without copying: p.Data points
// into the ring and stays valid until the next call, which gives its block
// back to the kernel once every packet in it has been read. Within a block
// it takes no lock and makes no system call.
func (s *LiveSource) NextInto(p *Packet) error {
	for {
		for s.ring.left > 0 {
			if s.ring.next(p) {
				s.frame++
				p.Frame = s.frame
				p.LinkType = layers.LinkTypeEthernet
				return nil
			}
		}
		if err := s.nextBlock(); err != nil {
			*p = Packet{}
			return err
		}
	}
}

// nextBlock gives the block read so far back and takes the next one,
// waiting for it. It holds readMu: Close does not release the ring while
// the reader holds a block or waits for one.
func (s *LiveSource) nextBlock() error {
	s.readMu.Lock()
	defer s.readMu.Unlock()
	s.ring.release()
	for {
		if s.closed {
			return errors.Join(io.EOF, s.releaseRing())
		}
		if s.ring.ready() {
			s.ring.take()
			return nil
		}
		if err := s.wait(); err != nil {
			return err
		}
	}
}

// Next is NextInto returning the packet.
func (s *LiveSource) Next() (Packet, error) { return nextInto(s) }

// wait blocks until block cur is handed over. Once Stop was called it
// waits while the kernel holds packets in the block it is filling, up to
// stopDrainMax, so that they are read too, and then reports io.EOF as
// soon as no block is ready.
func (s *LiveSource) wait() error {
	if s.stopping.Load() {
		if s.drained {
			return io.EOF
		}
		if s.drainBy.IsZero() {
			s.drainBy = time.Now().Add(cmp.Or(s.drainMax, stopDrainMax))
		}
		if !s.ring.filling() || time.Now().After(s.drainBy) {
			s.drained = true
			return io.EOF
		}
		time.Sleep(ringBlockTimeout / 4)
		return nil
	}
	err := s.conn.Read(s.readyFn)
	switch {
	case err == nil, errors.Is(err, os.ErrDeadlineExceeded):
		return nil // a block, or Stop's wake-up
	case errors.Is(err, os.ErrClosed):
		return io.EOF
	}
	return fmt.Errorf("capture: %s: frame %d: %w", s.iface, s.frame+1, err)
}

// readyForRead is the netpoller's test: the kernel signals when it hands a
// block over (or a block timeout retires one).
func (s *LiveSource) readyForRead(uintptr) bool {
	return s.stopping.Load() || s.ring.ready()
}
