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

	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// LiveSource captures from a Linux interface through an AF_PACKET socket
// (pcapgo's EthernetHandle: pure Go, no libpcap). Next blocks until a
// packet arrives; Close, from any goroutine, makes a pending Next return
// io.EOF. Stats may be called from any goroutine.
type LiveSource struct {
	iface  string
	h      *pcapgo.EthernetHandle
	closed atomic.Bool
	frame  uint64

	mu    sync.Mutex
	stats LiveStats
}

// OpenLive opens iface for capture. Interfaces with Ethernet framing
// (including lo) are supported. Without CAP_NET_RAW it fails with an error
// that says how to grant it.
func OpenLive(iface string, opts LiveOptions) (*LiveSource, error) {
	if _, err := net.InterfaceByName(iface); err != nil {
		return nil, fmt.Errorf("capture: %s: no such interface", iface)
	}
	if err := checkPacketSocket(iface); err != nil {
		return nil, err
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
	h, err := pcapgo.NewEthernetHandle(iface)
	if err != nil {
		return nil, fmt.Errorf("capture: %s: %w", iface, err)
	}
	snaplen := opts.snaplen()
	if err := h.SetCaptureLength(snaplen); err != nil {
		h.Close()
		return nil, fmt.Errorf("capture: %s: setting the capture length: %w", iface, err)
	}
	filter := opts.Filter
	if filter == nil && len(opts.Ports) > 0 {
		if filter, err = PortFilter(opts.Ports, uint32(snaplen)); err != nil {
			h.Close()
			return nil, err
		}
	}
	if loopback {
		// On loopback the kernel hands a packet socket every packet twice,
		// as sent and as received; libpcap drops the sent copy, and so do we.
		if filter, err = dropOutgoing(filter, uint32(snaplen)); err != nil {
			h.Close()
			return nil, err
		}
	}
	if filter != nil {
		if err := h.SetBPF(filter); err != nil {
			h.Close()
			return nil, fmt.Errorf("capture: %s: installing the packet filter: %w", iface, err)
		}
	}
	if opts.Promiscuous {
		if err := h.SetPromiscuous(true); err != nil {
			h.Close()
			return nil, fmt.Errorf("capture: %s: promiscuous mode: %w", iface, err)
		}
	}
	s := &LiveSource{iface: iface, h: h}
	// Reset the kernel counters (they count since the last read), so that
	// Stats starts from the filter being installed.
	h.Stats()
	return s, nil
}

// checkPacketSocket turns the permission failure into advice, since
// pcapgo's error text loses the errno.
func checkPacketSocket(iface string) error {
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err == nil {
		unix.Close(fd)
		return nil
	}
	if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
		return fmt.Errorf("capture: %s: permission denied opening a packet socket: run as root or grant the capability with: sudo setcap cap_net_raw+ep $(which kwatch)", iface)
	}
	return fmt.Errorf("capture: %s: opening a packet socket: %w", iface, err)
}

// Next returns the next packet; Data is valid until the next call.
func (s *LiveSource) Next() (Packet, error) {
	for {
		if s.closed.Load() {
			return Packet{}, io.EOF
		}
		data, ci, err := s.h.ZeroCopyReadPacketData()
		if err != nil {
			if s.closed.Load() {
				return Packet{}, io.EOF
			}
			if errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN) {
				continue
			}
			return Packet{}, fmt.Errorf("capture: %s: frame %d: %w", s.iface, s.frame+1, err)
		}
		s.frame++
		return Packet{
			Frame:         s.frame,
			Time:          ci.Timestamp.UTC(),
			Data:          data,
			CaptureLength: len(data),
			Length:        max(ci.Length, len(data)),
			LinkType:      layers.LinkTypeEthernet,
		}, nil
	}
}

// Close stops the capture; a pending Next returns io.EOF.
func (s *LiveSource) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	return s.h.Close()
}

// Stats returns the kernel's counters since OpenLive.
func (s *LiveSource) Stats() (LiveStats, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() {
		return s.stats, nil
	}
	st, err := s.h.Stats()
	if err != nil {
		return s.stats, fmt.Errorf("capture: %s: reading kernel statistics: %w", s.iface, err)
	}
	// PACKET_STATISTICS counts since the last read; tp_packets includes
	// the dropped ones.
	s.stats.Received += uint64(st.Packets)
	s.stats.Dropped += uint64(st.Drops)
	return s.stats, nil
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
