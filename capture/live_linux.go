//go:build linux

package capture

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// LiveSource captures from a Linux interface through an AF_PACKET socket
// with a TPACKET_V3 receive ring (pure Go, no libpcap): packets are read in
// place from memory the kernel shares, block by block (ring_linux.go).
//
// Concurrency: NextInto and Next are called from one goroutine. Stop, from
// any goroutine, makes them return what the kernel has already captured
// and then io.EOF. Close, from any goroutine, stops at once, waits for a
// pending NextInto to return and releases the ring. Stats may be called
// from any goroutine, also after Close (Close reads the kernel counters
// last).
type LiveSource struct {
	iface   string
	fd      int
	file    *os.File
	conn    syscall.RawConn
	readyFn func(uintptr) bool

	// The reader's state. readMu is held by the reader between blocks
	// (nextBlock) and by Close; closed, released and ring.held change
	// under it (released under mu too).
	readMu   sync.Mutex
	ring     *ring
	frame    uint64
	drained  bool          // stopped, and the kernel's last block read or given up on
	drainBy  time.Time     // stopped: when to give up on the block being filled
	drainMax time.Duration // how long after Stop that is; 0: stopDrainMax (tests set it)
	closed   bool
	released bool
	stopping atomic.Bool

	mu    sync.Mutex // guards stats and the socket for Stats, on any goroutine
	stats LiveStats
}

// OpenLive opens iface for capture. Interfaces with Ethernet framing
// (including lo) are supported. Without CAP_NET_RAW it fails with an error
// that says how to grant it.
func OpenLive(iface string, opts LiveOptions) (*LiveSource, error) {
	ifc, filter, err := liveSetup(iface, opts)
	if err != nil {
		return nil, err
	}
	return openSocket(iface, ifc, filter, opts)
}

// liveSetup looks iface up and makes its kernel filter.
func liveSetup(iface string, opts LiveOptions) (*net.Interface, []bpf.RawInstruction, error) {
	ifc, loopback, err := liveInterface(iface)
	if err != nil {
		return nil, nil, err
	}
	filter, err := liveFilter(opts, opts.snaplen(), loopback)
	return ifc, filter, err
}

// openSocket opens one packet socket with its ring on ifc, filter
// installed, bound and reading.
func openSocket(iface string, ifc *net.Interface, filter []bpf.RawInstruction, opts LiveOptions) (*LiveSource, error) {
	snaplen := opts.snaplen()
	// Protocol 0: the socket receives nothing until bind names one, so no
	// packet gets in before the filter and the ring are set.
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
			return nil, fmt.Errorf("capture: %s: permission denied opening a packet socket: run as root or grant the capability with: sudo setcap cap_net_raw+ep $(which kwatch)", iface)
		}
		return nil, fmt.Errorf("capture: %s: opening a packet socket: %w", iface, err)
	}
	size := ringSize(opts.RingSize)
	r, err := setupSocket(fd, ifc.Index, filter, opts.Promiscuous, size, snaplen)
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("capture: %s: %w", iface, err)
	}
	opts.Logger.Debug().Str("iface", iface).Int("ring_bytes", size).Int("snaplen", snaplen).Msg("packet ring open")
	file := os.NewFile(uintptr(fd), "packet:"+iface)
	conn, err := file.SyscallConn()
	if err != nil {
		r.unmap()
		file.Close()
		return nil, fmt.Errorf("capture: %s: %w", iface, err)
	}
	s := &LiveSource{iface: iface, fd: fd, file: file, conn: conn, ring: r}
	// One method value for the netpoller, made once: a closure per wait
	// would allocate.
	s.readyFn = s.readyForRead
	// Reset the kernel counters (they count since the last read), so that
	// Stats starts from the filter being installed.
	if _, err := s.readStats(); err != nil {
		r.unmap()
		file.Close()
		return nil, err
	}
	return s, nil
}

// liveInterface looks iface up and tells whether it is a loopback.
func liveInterface(iface string) (*net.Interface, bool, error) {
	ifc, err := net.InterfaceByName(iface)
	if err != nil {
		if iface == "any" {
			// libpcap's pseudo-interface: its cooked framing differs per
			// interface, which the Ethernet-framed socket here cannot do.
			return nil, false, fmt.Errorf("capture: any: the 'any' pseudo-interface is not supported; capture one interface (-i eth0), or pipe tcpdump: tcpdump -i any -w - port 9092 | kwatch read -")
		}
		return nil, false, fmt.Errorf("capture: %s: no such interface", iface)
	}
	loopback := false
	if t, err := os.ReadFile("/sys/class/net/" + iface + "/type"); err == nil {
		// ARPHRD_ETHER (1) and ARPHRD_LOOPBACK (772) deliver Ethernet
		// frames; tun devices and the like deliver something else.
		s := strings.TrimSpace(string(t))
		if s != "1" && s != "772" {
			return nil, false, fmt.Errorf("capture: %s: interface type ARPHRD %s has no Ethernet framing; only Ethernet-framed interfaces are supported", iface, s)
		}
		loopback = s == "772"
	}
	return ifc, loopback, nil
}

// liveFilter is the kernel filter: opts' program or port filter, or one
// that accepts everything, so that the snap length always applies in the
// kernel (a shorter snap length packs more packets into a ring block).
func liveFilter(opts LiveOptions, snaplen int, loopback bool) ([]bpf.RawInstruction, error) {
	filter := opts.Filter
	var err error
	if filter == nil && len(opts.Ports) > 0 {
		if filter, err = PortFilter(opts.Ports, uint32(snaplen)); err != nil {
			return nil, err
		}
	}
	if filter == nil {
		if filter, err = bpf.Assemble([]bpf.Instruction{bpf.RetConstant{Val: uint32(snaplen)}}); err != nil {
			return nil, fmt.Errorf("capture: snap length filter: %w", err)
		}
	}
	if loopback {
		// On loopback the kernel hands a packet socket every packet twice,
		// as sent and as received; libpcap drops the sent copy, and so do we.
		return dropOutgoing(filter, uint32(snaplen))
	}
	return filter, nil
}

// setupSocket installs the filter, maps the ring and binds fd to the
// interface.
func setupSocket(fd, ifindex int, filter []bpf.RawInstruction, promisc bool, size, snaplen int) (*ring, error) {
	if err := attachFilter(fd, filter); err != nil {
		return nil, err
	}
	if promisc {
		mreq := unix.PacketMreq{Ifindex: int32(ifindex), Type: unix.PACKET_MR_PROMISC}
		if err := unix.SetsockoptPacketMreq(fd, unix.SOL_PACKET, unix.PACKET_ADD_MEMBERSHIP, &mreq); err != nil {
			return nil, fmt.Errorf("promiscuous mode: %w", err)
		}
	}
	r, err := setupRing(fd, size, snaplen)
	if err != nil {
		return nil, err
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: ifindex}); err != nil {
		r.unmap()
		return nil, fmt.Errorf("binding the packet socket: %w", err)
	}
	return r, nil
}

// attachFilter installs filter on fd, replacing the one there.
func attachFilter(fd int, filter []bpf.RawInstruction) error {
	prog := make([]unix.SockFilter, len(filter))
	for i, ins := range filter {
		prog[i] = unix.SockFilter{Code: ins.Op, Jt: ins.Jt, Jf: ins.Jf, K: ins.K}
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.SetsockoptSockFprog(fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, &fprog); err != nil {
		return fmt.Errorf("installing the packet filter: %w", err)
	}
	return nil
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// Stop ends the capture gracefully: NextInto returns the packets the
// kernel has captured so far (those of the block it is filling included),
// then io.EOF. It may be called from any goroutine, more than once.
func (s *LiveSource) Stop() {
	if s.stopping.Swap(true) {
		return
	}
	// Wake a NextInto waiting in the netpoller; a deadline in the past
	// needs no clock.
	s.file.SetReadDeadline(time.Unix(1, 0))
}

// Close stops the capture at once: a pending NextInto returns io.EOF, one
// reading a block returns its remaining packets first. It releases the
// ring unless the reader holds a block, which the reader's next call does.
// It reads the kernel counters one last time, so that Stats after Close is
// complete.
func (s *LiveSource) Close() error {
	s.Stop()
	s.readMu.Lock()
	defer s.readMu.Unlock()
	if s.closed {
		return nil
	}
	s.mu.Lock()
	s.addStats()
	s.mu.Unlock()
	s.closed = true
	if s.ring.held {
		return nil
	}
	return s.releaseRing()
}

// releaseRing unmaps the ring and closes the socket, once; readMu is held.
func (s *LiveSource) releaseRing() error {
	if s.released {
		return nil
	}
	s.mu.Lock() // Stats reads the socket's counters
	defer s.mu.Unlock()
	s.released = true
	return errors.Join(s.ring.unmap(), s.file.Close())
}

// Stats returns the kernel's counters since OpenLive.
func (s *LiveSource) Stats() (LiveStats, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.released {
		return s.stats, nil
	}
	err := s.addStats()
	return s.stats, err
}

// addStats adds the counters since the last read to s.stats; s.mu is held.
func (s *LiveSource) addStats() error {
	st, err := s.readStats()
	if err != nil {
		return err
	}
	// PACKET_STATISTICS counts since the last read, and tp_packets includes
	// the dropped ones: Received is what was queued for kwatch.
	s.stats.Received += uint64(st.Packets - min(st.Drops, st.Packets))
	s.stats.Dropped += uint64(st.Drops)
	s.stats.Freezes += uint64(st.Freeze_q_cnt)
	return nil
}

func (s *LiveSource) readStats() (st *unix.TpacketStatsV3, err error) {
	cerr := s.conn.Control(func(fd uintptr) {
		st, err = unix.GetsockoptTpacketStatsV3(int(fd), unix.SOL_PACKET, unix.PACKET_STATISTICS)
	})
	if err = errors.Join(cerr, err); err != nil {
		return nil, fmt.Errorf("capture: %s: reading kernel statistics: %w", s.iface, err)
	}
	return st, nil
}

// packetOutgoing is PACKET_OUTGOING, the packet type of a sent packet.
const packetOutgoing = 4

// dropOutgoing puts a test for the packet type in front of filter (or of
// "accept everything" when filter is nil): sent packets are dropped.
func dropOutgoing(filter []bpf.RawInstruction, snaplen uint32) ([]bpf.RawInstruction, error) {
	prefix, err := bpf.Assemble([]bpf.Instruction{
		bpf.LoadExtension{Num: bpf.ExtType},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: packetOutgoing, SkipTrue: 0, SkipFalse: 1},
		bpf.RetConstant{Val: 0},
	})
	if err != nil {
		return nil, fmt.Errorf("capture: loopback filter: %w", err)
	}
	if filter == nil {
		accept, err := bpf.Assemble([]bpf.Instruction{bpf.RetConstant{Val: snaplen}})
		if err != nil {
			return nil, fmt.Errorf("capture: loopback filter: %w", err)
		}
		filter = accept
	}
	return append(prefix, filter...), nil
}
