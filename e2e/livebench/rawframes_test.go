//go:build e2e

package livebench

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kwatch/kwatch/internal/pcapgen"
)

// Raw frames: the small-request load written straight onto lo as Ethernet
// frames, one Metadata request each, so that both tools of a pair see the
// same packets. Over real TCP the kernel merges the writes of a socket
// whose last segment is still queued (autocorking), how often depending
// on what else the CPUs run: on a loaded machine the two runs of a pair
// differed in packets by 5x, and so did their CPU per packet. The frames
// go to a MAC address that is not lo's: the stack drops them as
// PACKET_OTHERHOST, after the packet sockets have captured them, so no
// TCP endpoint answers (or resets) them. The frames are pcapgen's.

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

func (s *rawSender) sendAll(frames [][]byte) error {
	for _, f := range frames {
		if err := s.send(f); err != nil {
			return err
		}
	}
	return nil
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

// Each connection's sequence numbers: the client's, the broker's.
const rawClientISN, rawBrokerISN = 1000, 5000

// rawConns are pcapgen's frames of cfg.Conns connections from
// 127.0.0.2:40000+i to 127.0.0.1:port: their handshakes, and for each one
// data frame carrying req, a template whose sequence number is rewritten
// per request. pcapgen's MAC addresses (02:00:...) are not lo's.
func rawConns(port, conns int, req []byte) (opening, data [][]byte) {
	c := pcapgen.New(pcapgen.Options{})
	cs := make([]*pcapgen.Conn, conns)
	for i := range cs {
		cs[i] = c.Conn(rawConnOptions(port, i, rawClientISN, rawBrokerISN))
	}
	n := c.Frames()
	for _, cn := range cs {
		cn.Send(req)
	}
	for _, p := range c.Packets() {
		if p.Frame <= n {
			opening = append(opening, p.Data)
		} else {
			data = append(data, p.Data)
		}
	}
	return opening, data
}

func rawConnOptions(port, i int, clientISN, brokerISN uint32) pcapgen.ConnOptions {
	return pcapgen.ConnOptions{
		Client:    netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 2}), uint16(40000+i)),
		Broker:    netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), uint16(port)),
		ClientISN: clientISN,
		BrokerISN: brokerISN,
	}
}

// rawClosing are the frames that close the connections, the client's
// next sequence numbers being seqs.
func rawClosing(port int, seqs []uint32) [][]byte {
	c := pcapgen.New(pcapgen.Options{})
	for i, seq := range seqs {
		o := rawConnOptions(port, i, seq, rawBrokerISN+1)
		o.NoSYN = true
		c.Conn(o).Close()
	}
	var frames [][]byte
	for _, p := range c.Packets() {
		frames = append(frames, p.Data)
	}
	return frames
}

// rawSeqOff is where an Ethernet/IPv4 frame's TCP sequence number is.
const rawSeqOff = 14 + 20 + 4

// runRawLoad sends cfg's load to 127.0.0.1:port as raw frames: each of
// cfg.Conns connections opens with a handshake, then the requests go round
// the connections at cfg.Rate, and each connection closes. The count is of
// requests, one a frame.
func runRawLoad(ctx context.Context, port int, cfg smallLoad) (smallResult, error) {
	s, err := newRawSender()
	if err != nil {
		return smallResult{}, err
	}
	defer unix.Close(s.fd)
	req := smallRequest()
	opening, frames := rawConns(port, cfg.Conns, req)
	if err := s.sendAll(opening); err != nil {
		return smallResult{}, err
	}
	seqs := make([]uint32, cfg.Conns)
	for i := range seqs {
		seqs[i] = rawClientISN + 1
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
			binary.BigEndian.PutUint32(frames[i][rawSeqOff:], seqs[i])
			seqs[i] += uint32(len(req))
			if err := s.send(frames[i]); err != nil {
				return res, err
			}
		}
		time.Sleep(200 * time.Microsecond)
	}
	res.Elapsed = time.Since(start)
	return res, s.sendAll(rawClosing(port, seqs))
}
