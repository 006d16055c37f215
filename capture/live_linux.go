//go:build linux

package capture

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/gopacket/gopacket/layers"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// liveBufferSize is the packet socket's receive buffer: what the kernel
// queues while kwatch is busy before it drops. The default (rmem_default,
// about 200 KiB) holds three 64 KiB loopback segments, a millisecond of
// 1 Gbit/s. 64 MiB (128 MiB of kernel accounting, which counts skb overhead
// too) rides out half a second of 1 Gbit/s: on a busy 2-CPU machine a
// writeback stall of -w or the scheduler has queued 40 MiB of accounting
// (e2e/livebench logs the deepest queue). Memory is only used while
// packets wait.
const liveBufferSize = 64 << 20

// LiveSource captures from a Linux interface through an AF_PACKET socket
// (pure Go, no libpcap), one recvmsg per packet into one reused buffer. Next
// blocks in the Go netpoller until a packet arrives; Close, from any
// goroutine, makes a pending Next return io.EOF. Stats may be called from
// any goroutine, also after Close (Close reads the kernel counters last).
type LiveSource struct {
	iface  string
	file   *os.File
	conn   syscall.RawConn
	buf    []byte
	oob    []byte
	closed atomic.Bool
	frame  uint64

	mu    sync.Mutex
	stats LiveStats
}

// OpenLive opens iface for capture. Interfaces with Ethernet framing
// (including lo) are supported. Without CAP_NET_RAW it fails with an error
// that says how to grant it.
func OpenLive(iface string, opts LiveOptions) (*LiveSource, error) {
	ifc, err := net.InterfaceByName(iface)
	if err != nil {
		if iface == "any" {
			// libpcap's pseudo-interface: its cooked framing differs per
			// interface, which the Ethernet-framed socket here cannot do.
			return nil, fmt.Errorf("capture: any: the 'any' pseudo-interface is not supported; capture one interface (-i eth0), or pipe tcpdump: tcpdump -i any -w - port 9092 | kwatch read -")
		}
		return nil, fmt.Errorf("capture: %s: no such interface", iface)
	}
	loopback := false
	if t, err := os.ReadFile("/sys/class/net/" + iface + "/type"); err == nil {
		// ARPHRD_ETHER (1) and ARPHRD_LOOPBACK (772) deliver Ethernet
		// frames; tun devices and the like deliver something else.
		s := strings.TrimSpace(string(t))
		if s != "1" && s != "772" {
			return nil, fmt.Errorf("capture: %s: interface type ARPHRD %s has no Ethernet framing; only Ethernet-framed interfaces are supported", iface, s)
		}
		loopback = s == "772"
	}
	snaplen := opts.snaplen()
	filter := opts.Filter
	if filter == nil && len(opts.Ports) > 0 {
		if filter, err = PortFilter(opts.Ports, uint32(snaplen)); err != nil {
			return nil, err
		}
	}
	if loopback {
		// On loopback the kernel hands a packet socket every packet twice,
		// as sent and as received; libpcap drops the sent copy, and so do we.
		if filter, err = dropOutgoing(filter, uint32(snaplen)); err != nil {
			return nil, err
		}
	}

	// Protocol 0: the socket receives nothing until bind names one, so no
	// packet gets in before the filter and the buffer size are set.
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
			return nil, fmt.Errorf("capture: %s: permission denied opening a packet socket: run as root or grant the capability with: sudo setcap cap_net_raw+ep $(which kwatch)", iface)
		}
		return nil, fmt.Errorf("capture: %s: opening a packet socket: %w", iface, err)
	}
	if err := setupSocket(fd, ifc.Index, filter, opts.Promiscuous); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("capture: %s: %w", iface, err)
	}
	// The kernel reports twice what was set (it counts its overhead).
	rcvbuf, _ := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF)
	if rcvbuf < 2*liveBufferSize {
		opts.Logger.Warn().Str("iface", iface).Int("rcvbuf", rcvbuf).
			Msg("small capture buffer: kernel drops are likely under load; grant CAP_NET_ADMIN or raise net.core.rmem_max")
	} else {
		opts.Logger.Debug().Str("iface", iface).Int("rcvbuf", rcvbuf).Int("snaplen", snaplen).Msg("packet socket open")
	}

	file := os.NewFile(uintptr(fd), "packet:"+iface)
	conn, err := file.SyscallConn()
	if err != nil {
		file.Close()
		return nil, fmt.Errorf("capture: %s: %w", iface, err)
	}
	s := &LiveSource{
		iface: iface,
		file:  file,
		conn:  conn,
		buf:   make([]byte, snaplen),
		oob:   make([]byte, unix.CmsgSpace(int(unsafe.Sizeof(unix.TpacketAuxdata{})))+unix.CmsgSpace(int(unsafe.Sizeof(unix.Timespec{})))),
	}
	// Reset the kernel counters (they count since the last read), so that
	// Stats starts from the filter being installed.
	if _, err := s.readStats(); err != nil {
		file.Close()
		return nil, err
	}
	return s, nil
}

// setupSocket installs the filter, sizes the receive buffer, asks for
// packet lengths and timestamps, and binds fd to the interface.
func setupSocket(fd, ifindex int, filter []bpf.RawInstruction, promisc bool) error {
	if len(filter) > 0 {
		prog := make([]unix.SockFilter, len(filter))
		for i, ins := range filter {
			prog[i] = unix.SockFilter{Code: ins.Op, Jt: ins.Jt, Jf: ins.Jf, K: ins.K}
		}
		fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
		if err := unix.SetsockoptSockFprog(fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, &fprog); err != nil {
			return fmt.Errorf("installing the packet filter: %w", err)
		}
	}
	// SO_RCVBUFFORCE passes net.core.rmem_max with CAP_NET_ADMIN; without
	// it SO_RCVBUF gets what rmem_max allows, which is still more than the
	// default.
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, liveBufferSize); err != nil {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, liveBufferSize); err != nil {
			return fmt.Errorf("setting the receive buffer: %w", err)
		}
	}
	// PACKET_AUXDATA gives each packet's length on the wire (a snaplen cut
	// hides it); SO_TIMESTAMPNS the kernel's receive time.
	if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_AUXDATA, 1); err != nil {
		return fmt.Errorf("asking for packet lengths: %w", err)
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1); err != nil {
		return fmt.Errorf("asking for timestamps: %w", err)
	}
	if promisc {
		mreq := unix.PacketMreq{Ifindex: int32(ifindex), Type: unix.PACKET_MR_PROMISC}
		if err := unix.SetsockoptPacketMreq(fd, unix.SOL_PACKET, unix.PACKET_ADD_MEMBERSHIP, &mreq); err != nil {
			return fmt.Errorf("promiscuous mode: %w", err)
		}
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: ifindex}); err != nil {
		return fmt.Errorf("binding the packet socket: %w", err)
	}
	return nil
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// Next returns the next packet; Data is valid until the next call.
func (s *LiveSource) Next() (Packet, error) {
	for {
		if s.closed.Load() {
			return Packet{}, io.EOF
		}
		n, oobn, err := s.recv()
		if err != nil {
			if s.closed.Load() || errors.Is(err, os.ErrClosed) {
				return Packet{}, io.EOF
			}
			if errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN) {
				continue
			}
			return Packet{}, fmt.Errorf("capture: %s: frame %d: %w", s.iface, s.frame+1, err)
		}
		length, ts := n, time.Time{}
		// Two known control messages: no need for ParseSocketControlMessage,
		// which allocates.
		for oob := s.oob[:oobn]; len(oob) >= unix.SizeofCmsghdr; {
			h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
			if h.Len < unix.SizeofCmsghdr || int(h.Len) > len(oob) {
				break
			}
			data := oob[unix.CmsgLen(0):h.Len]
			switch {
			case h.Level == unix.SOL_PACKET && h.Type == unix.PACKET_AUXDATA && len(data) >= int(unsafe.Sizeof(unix.TpacketAuxdata{})):
				length = int((*unix.TpacketAuxdata)(unsafe.Pointer(&data[0])).Len)
			case h.Level == unix.SOL_SOCKET && h.Type == unix.SO_TIMESTAMPNS && len(data) >= int(unsafe.Sizeof(unix.Timespec{})):
				tv := (*unix.Timespec)(unsafe.Pointer(&data[0]))
				ts = time.Unix(tv.Sec, tv.Nsec).UTC()
			}
			oob = oob[min(unix.CmsgSpace(int(h.Len)-unix.CmsgLen(0)), len(oob)):]
		}
		// MSG_TRUNC makes n the packet's full size; keep what fits.
		caplen := min(n, len(s.buf))
		s.frame++
		return Packet{
			Frame:         s.frame,
			Time:          ts,
			Data:          s.buf[:caplen],
			CaptureLength: caplen,
			Length:        max(length, caplen),
			LinkType:      layers.LinkTypeEthernet,
		}, nil
	}
}

// recv reads one packet into s.buf, waiting in the netpoller while the
// socket is empty. recvmsg is called directly because unix.Recvmsg
// allocates the sender's address on every call.
func (s *LiveSource) recv() (n, oobn int, err error) {
	var msg unix.Msghdr
	var from unix.RawSockaddrLinklayer
	msg.Name = (*byte)(unsafe.Pointer(&from))
	msg.Namelen = uint32(unsafe.Sizeof(from))
	iov := unix.Iovec{Base: &s.buf[0]}
	iov.SetLen(len(s.buf))
	msg.Iov = &iov
	msg.Iovlen = 1
	msg.Control = &s.oob[0]
	msg.SetControllen(len(s.oob))
	var errno syscall.Errno
	rerr := s.conn.Read(func(fd uintptr) bool {
		r, _, e := syscall.Syscall(unix.SYS_RECVMSG, fd, uintptr(unsafe.Pointer(&msg)), unix.MSG_TRUNC)
		n, errno = int(r), e
		return e != unix.EAGAIN
	})
	if rerr != nil {
		return 0, 0, rerr
	}
	if errno != 0 {
		return 0, 0, errno
	}
	return n, int(msg.Controllen), nil
}

// Close stops the capture; a pending Next returns io.EOF. It reads the
// kernel counters one last time, so that Stats after Close is complete.
func (s *LiveSource) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Swap(true) {
		return nil
	}
	s.addStats()
	return s.file.Close()
}

// Stats returns the kernel's counters since OpenLive.
func (s *LiveSource) Stats() (LiveStats, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() {
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
	return nil
}

func (s *LiveSource) readStats() (st *unix.TpacketStats, err error) {
	cerr := s.conn.Control(func(fd uintptr) {
		st, err = unix.GetsockoptTpacketStats(int(fd), unix.SOL_PACKET, unix.PACKET_STATISTICS)
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
