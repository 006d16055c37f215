//go:build e2e

package e2e

import (
	"bufio"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// maxSegment is the largest TCP payload one synthetic packet carries: an
// IPv4 total length is 16 bits, minus 20 bytes of IP and 20 of TCP header.
// A socket read larger than this becomes several back-to-back segments.
const maxSegment = 65535 - 40

// snapLen is the pcap snap length: a full maxSegment packet plus headers
// fits, so nothing is ever truncated.
const snapLen = 1 << 18

// recorder writes synthetic Ethernet/IPv4/TCP packets to a pcap file. All
// methods are safe for concurrent use: one mutex orders every packet, and
// each packet is stamped with time.Now() under that mutex so timestamps never
// go backwards in file order.
type recorder struct {
	mu      sync.Mutex
	f       *os.File
	bw      *bufio.Writer
	w       *pcapgo.Writer
	buf     gopacket.SerializeBuffer
	ipID    uint16
	packets int
	err     error // first write error; later writes are dropped
}

func newRecorder(path string) (*recorder, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("create pcap: %w", err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	w := pcapgo.NewWriter(bw)
	if err := w.WriteFileHeader(snapLen, layers.LinkTypeEthernet); err != nil {
		f.Close()
		return nil, fmt.Errorf("write pcap header: %w", err)
	}
	return &recorder{f: f, bw: bw, w: w, buf: gopacket.NewSerializeBuffer()}, nil
}

// Close flushes and closes the file; it returns the first error seen.
func (r *recorder) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.bw.Flush(); err != nil && r.err == nil {
		r.err = fmt.Errorf("flush pcap: %w", err)
	}
	if err := r.f.Close(); err != nil && r.err == nil {
		r.err = fmt.Errorf("close pcap: %w", err)
	}
	return r.err
}

// Packets returns how many packets were written so far.
func (r *recorder) Packets() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.packets
}

// flow is the TCP state of one recorded connection: the endpoints as the
// client saw them and the next sequence number of each side. It is only
// touched under the recorder's mutex.
type flow struct {
	client, broker netip.AddrPort
	cseq, sseq     uint32 // next sequence number client->broker, broker->client
	cfin, sfin     bool
}

type tcpFlags struct{ syn, ack, psh, fin, rst bool }

// newFlow records the three-way handshake of a connection and returns its
// state. Initial sequence numbers are derived from the client port so that
// they differ per connection and are easy to recognise in Wireshark.
func (r *recorder) newFlow(client, broker netip.AddrPort) *flow {
	fl := &flow{client: client, broker: broker, cseq: uint32(client.Port()) << 16, sseq: uint32(client.Port())<<16 | 0x8000}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.segmentLocked(fl, true, tcpFlags{syn: true}, nil)
	r.segmentLocked(fl, false, tcpFlags{syn: true, ack: true}, nil)
	r.segmentLocked(fl, true, tcpFlags{ack: true}, nil)
	return fl
}

// data records payload sent by the client (fromClient) or by the broker,
// cut into segments of at most maxSegment bytes.
func (r *recorder) data(fl *flow, fromClient bool, p []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for len(p) > 0 {
		n := min(len(p), maxSegment)
		r.segmentLocked(fl, fromClient, tcpFlags{ack: true, psh: true}, p[:n])
		p = p[n:]
	}
}

// fin records that one side closed its half of the connection (or reset
// it), followed by the peer's ACK of that FIN.
func (r *recorder) fin(fl *flow, fromClient, reset bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if (fromClient && fl.cfin) || (!fromClient && fl.sfin) {
		return
	}
	if reset {
		r.segmentLocked(fl, fromClient, tcpFlags{rst: true, ack: true}, nil)
		fl.cfin, fl.sfin = true, true
		return
	}
	r.segmentLocked(fl, fromClient, tcpFlags{fin: true, ack: true}, nil)
	if fromClient {
		fl.cfin = true
	} else {
		fl.sfin = true
	}
	r.segmentLocked(fl, !fromClient, tcpFlags{ack: true}, nil)
}

var (
	clientMAC = net.HardwareAddr{0x02, 0, 0, 0, 0, 1}
	brokerMAC = net.HardwareAddr{0x02, 0, 0, 0, 0, 2}
)

func (r *recorder) segmentLocked(fl *flow, fromClient bool, fl4 tcpFlags, payload []byte) {
	if r.err != nil {
		return
	}
	src, dst := fl.client, fl.broker
	smac, dmac := clientMAC, brokerMAC
	seq, ack := &fl.cseq, fl.sseq
	if !fromClient {
		src, dst = dst, src
		smac, dmac = dmac, smac
		seq, ack = &fl.sseq, fl.cseq
	}
	eth := &layers.Ethernet{SrcMAC: smac, DstMAC: dmac, EthernetType: layers.EthernetTypeIPv4}
	r.ipID++
	ip := &layers.IPv4{
		Version: 4, IHL: 5, TTL: 64, Id: r.ipID, Flags: layers.IPv4DontFragment,
		Protocol: layers.IPProtocolTCP,
		SrcIP:    src.Addr().AsSlice(), DstIP: dst.Addr().AsSlice(),
	}
	tcp := &layers.TCP{
		SrcPort: layers.TCPPort(src.Port()), DstPort: layers.TCPPort(dst.Port()),
		Seq: *seq, SYN: fl4.syn, ACK: fl4.ack, PSH: fl4.psh, FIN: fl4.fin, RST: fl4.rst,
		Window: 65535,
	}
	if fl4.ack {
		tcp.Ack = ack
	}
	if err := tcp.SetNetworkLayerForChecksum(ip); err != nil {
		r.err = fmt.Errorf("tcp checksum layer: %w", err)
		return
	}
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	if err := gopacket.SerializeLayers(r.buf, opts, eth, ip, tcp, gopacket.Payload(payload)); err != nil {
		r.err = fmt.Errorf("serialize packet: %w", err)
		return
	}
	// SYN and FIN each take one sequence number.
	*seq += uint32(len(payload))
	if fl4.syn || fl4.fin {
		*seq++
	}
	data := r.buf.Bytes()
	ci := gopacket.CaptureInfo{Timestamp: time.Now(), CaptureLength: len(data), Length: len(data)}
	if err := r.w.WritePacket(ci, data); err != nil {
		r.err = fmt.Errorf("write packet %d: %w", r.packets+1, err)
		return
	}
	r.packets++
}
