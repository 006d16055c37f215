//go:build e2e

package livebench

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"time"

	"golang.org/x/sys/unix"
)

// Raw frames: the small-request load written straight onto lo as Ethernet
// frames, one Metadata request each, so that both tools of a pair see the
// same packets. Over real TCP the kernel merges the writes of a socket
// whose last segment is still queued (autocorking), how often depending
// on what else the CPUs run: on a loaded machine the two runs of a pair
// differed in packets by 5x, and so did their CPU per packet. The frames
// go to a MAC address that is not lo's: the stack drops them as
// PACKET_OTHERHOST, after the packet sockets have captured them, so no
// TCP endpoint answers (or resets) them.

// rawFrame is an Ethernet/IPv4/TCP frame from src:sport to dst:dport.
func rawFrame(src, dst [4]byte, sport, dport uint16, seq, ack uint32, flags uint8, payload []byte) []byte {
	f := make([]byte, 14+20+20+len(payload))
	copy(f[0:6], []byte{2, 0, 0, 0, 0, 1}) // not lo's 00:00:00:00:00:00
	copy(f[6:12], []byte{2, 0, 0, 0, 0, 2})
	binary.BigEndian.PutUint16(f[12:], unix.ETH_P_IP)
	ip := f[14:34]
	ip[0] = 0x45
	binary.BigEndian.PutUint16(ip[2:], uint16(40+len(payload)))
	ip[8] = 64
	ip[9] = unix.IPPROTO_TCP
	copy(ip[12:16], src[:])
	copy(ip[16:20], dst[:])
	binary.BigEndian.PutUint16(ip[10:], ipChecksum(ip))
	tcp := f[34:54]
	binary.BigEndian.PutUint16(tcp[0:], sport)
	binary.BigEndian.PutUint16(tcp[2:], dport)
	binary.BigEndian.PutUint32(tcp[4:], seq)
	binary.BigEndian.PutUint32(tcp[8:], ack)
	tcp[12] = 5 << 4
	tcp[13] = flags
	binary.BigEndian.PutUint16(tcp[14:], 65535)
	copy(f[54:], payload)
	return f
}

func ipChecksum(h []byte) uint16 {
	var s uint32
	for i := 0; i+1 < len(h); i += 2 {
		s += uint32(binary.BigEndian.Uint16(h[i:]))
	}
	for s>>16 != 0 {
		s = s&0xffff + s>>16
	}
	return ^uint16(s)
}

const (
	tcpFIN = 0x01
	tcpSYN = 0x02
	tcpPSH = 0x08
	tcpACK = 0x10
)

// rawSender writes frames on lo through a packet socket.
type rawSender struct{ fd int }

func newRawSender() (*rawSender, error) {
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		return nil, err
	}
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("packet socket: %w", err)
	}
	// Protocol 0: the socket sends and receives nothing.
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Ifindex: lo.Index}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("bind to lo: %w", err)
	}
	return &rawSender{fd: fd}, nil
}

// send writes f, waiting while the device queue is full.
func (s *rawSender) send(f []byte) error {
	for {
		_, err := unix.Write(s.fd, f)
		if !errors.Is(err, unix.ENOBUFS) && !errors.Is(err, unix.EAGAIN) {
			return err
		}
		time.Sleep(50 * time.Microsecond)
	}
}

// runRawLoad sends cfg's load to 127.0.0.1:port as raw frames: each of
// cfg.Conns connections opens with a handshake, then the requests go round
// the connections at cfg.Rate, and each connection ends with a FIN both
// ways. The count is of requests, one a frame.
func runRawLoad(ctx context.Context, port int, cfg smallLoad) (smallResult, error) {
	s, err := newRawSender()
	if err != nil {
		return smallResult{}, err
	}
	defer unix.Close(s.fd)
	req := smallRequest()
	cli, srv := [4]byte{127, 0, 0, 2}, [4]byte{127, 0, 0, 1}
	dport := uint16(port)
	const iss, brokerISS = 1000, 5000
	frames := make([][]byte, cfg.Conns)
	seqs := make([]uint32, cfg.Conns)
	for i := range frames {
		sport := uint16(40000 + i)
		for _, f := range [][]byte{
			rawFrame(cli, srv, sport, dport, iss, 0, tcpSYN, nil),
			rawFrame(srv, cli, dport, sport, brokerISS, iss+1, tcpSYN|tcpACK, nil),
			rawFrame(cli, srv, sport, dport, iss+1, brokerISS+1, tcpACK, nil),
		} {
			if err := s.send(f); err != nil {
				return smallResult{}, err
			}
		}
		frames[i] = rawFrame(cli, srv, sport, dport, 0, brokerISS+1, tcpPSH|tcpACK, req)
		seqs[i] = iss + 1
	}
	start := time.Now()
	var res smallResult
	for ctx.Err() == nil {
		el := time.Since(start)
		if el >= cfg.Duration {
			break
		}
		// Paced on the count sent so far: the long-run rate is exact
		// whatever the sleep granularity.
		for due := uint64(el.Seconds() * cfg.Rate); res.Requests < due; res.Requests++ {
			i := int(res.Requests % uint64(cfg.Conns))
			binary.BigEndian.PutUint32(frames[i][38:], seqs[i])
			seqs[i] += uint32(len(req))
			if err := s.send(frames[i]); err != nil {
				return res, err
			}
		}
		time.Sleep(200 * time.Microsecond)
	}
	res.Elapsed = time.Since(start)
	for i := range frames {
		sport := uint16(40000 + i)
		for _, f := range [][]byte{
			rawFrame(cli, srv, sport, dport, seqs[i], brokerISS+1, tcpFIN|tcpACK, nil),
			rawFrame(srv, cli, dport, sport, brokerISS+1, seqs[i]+1, tcpFIN|tcpACK, nil),
		} {
			if err := s.send(f); err != nil {
				return res, err
			}
		}
	}
	return res, nil
}
