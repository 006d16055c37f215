package pcapgen

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/netip"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/gopacket/gopacket/layers"
)

// BaseTime is the time of a capture's first packet unless Options.Start says
// otherwise: fixed, so that generated files are reproducible.
func BaseTime() time.Time { return time.Date(2026, 11, 29, 16, 0, 0, 0, time.UTC) }

// DefaultStep is the time between two consecutive packets unless
// Options.Step says otherwise.
const DefaultStep = time.Millisecond

// maxPayload is the largest TCP payload an IPv4 packet can carry.
const maxPayload = 65535 - 20 - 20

// Options configure a Capture.
type Options struct {
	Link Link
	// VLAN is the 802.1Q VLAN ID for LinkVLAN (0 = 100).
	VLAN uint16
	// Format of WriteTo and WriteFile (FormatAuto: by extension, else pcap).
	Format Format
	// Gzip compresses the output. WriteFile also compresses when the path
	// ends in ".gz".
	Gzip bool
	// Snaplen cuts every packet at this many bytes when writing, with the
	// original length recorded (0 = DefaultSnaplen, which cuts nothing
	// pcapgen writes).
	Snaplen int
	// Start is the first packet's time (zero = BaseTime()).
	Start time.Time
	// Step is the time between packets (0 = DefaultStep).
	Step time.Duration
	// Seed drives every random choice (initial sequence numbers, shuffles).
	Seed uint64
	// Perturb applies to every connection whose ConnOptions.Perturb is nil.
	Perturb Perturb
}

// Perturb changes how a connection's bytes are cut into segments and in which
// order the segments appear, never the bytes themselves. Data segments are
// numbered per connection from 1, both directions together, in the order
// they are cut (before reordering); the Every fields select ordinals that are
// multiples of N.
type Perturb struct {
	// MSS is the largest payload of one segment (0 = 1460 for IPv4, 1440
	// for IPv6; at most 65495).
	MSS int
	// SplitAt adds cut points at these byte offsets of every write (Send,
	// Reply, Raw), e.g. {2} splits each write's size field.
	SplitAt []int
	// Reorder > 1 reverses the order of a write's segments within each
	// window of Reorder segments (or shuffles them, with Shuffle).
	Reorder int
	Shuffle bool
	// RetransmitEvery N sends every Nth data segment again, after the next
	// segment of the same write (or right after it, if it is the last).
	RetransmitEvery int
	// OverlapEvery N follows every Nth data segment (not the first of a
	// write) with a retransmission that covers the second half of the
	// previous segment and the first half of this one, with the same bytes.
	OverlapEvery int
	// DropEvery N loses every Nth data segment: the capture never sees its
	// bytes, and the sequence numbers after it leave a gap.
	DropEvery int
	// Drop loses the data segments with these ordinals.
	Drop []int
	// ACKs makes the receiver send a pure ACK after every write.
	ACKs bool
}

// ConnOptions configure one TCP connection.
type ConnOptions struct {
	// Client and Broker are the endpoints. A zero Client gets 10.1.x.y
	// (fd00::1:x:y for an IPv6 broker) and port 40000+n for the nth
	// connection; a zero Broker gets 10.0.0.1:9092 (fd00::1 for an IPv6
	// client). Both must be of the same IP family.
	Client, Broker netip.AddrPort
	// NoSYN starts the connection mid-stream: no handshake at all.
	NoSYN bool
	// SkipSYN omits only the SYN: SYN-ACK and ACK are present (the SYN-ACK
	// still tells the client's initial sequence number).
	SkipSYN bool
	// ClientISN and BrokerISN are the initial sequence numbers (0 = seeded).
	ClientISN, BrokerISN uint32
	// Perturb overrides Options.Perturb for this connection.
	Perturb *Perturb
}

// Dir is the direction of a write.
type Dir uint8

const (
	// ToBroker is client to broker: requests.
	ToBroker Dir = iota
	// ToClient is broker to client: responses.
	ToClient
)

func (d Dir) String() string {
	if d == ToBroker {
		return "to-broker"
	}
	return "to-client"
}

// Packet is one packet of a Capture.
type Packet struct {
	// Frame is the 1-based packet number, as Wireshark numbers it.
	Frame int
	Time  time.Time
	// Data is the whole packet from the link header on, never truncated
	// (Options.Snaplen applies when writing).
	Data []byte
}

// Capture builds a capture of several TCP connections whose packets
// interleave in the order the calls are made.
type Capture struct {
	opts    Options
	fr      framer
	now     time.Time
	packets []Packet
	conns   int
	err     error
	scratch []byte
}

// New starts an empty capture.
func New(opts Options) *Capture {
	if opts.Start.IsZero() {
		opts.Start = BaseTime()
	}
	if opts.Step <= 0 {
		opts.Step = DefaultStep
	}
	vlan := opts.VLAN
	if vlan == 0 {
		vlan = 100
	}
	return &Capture{opts: opts, now: opts.Start, fr: framer{link: opts.Link, vlan: vlan}}
}

// LinkType is the pcap link type of the capture.
func (c *Capture) LinkType() layers.LinkType { return c.opts.Link.LinkType() }

// Packets returns the packets so far. The slice and the packets' Data belong
// to the capture: do not modify them.
func (c *Capture) Packets() []Packet { return c.packets }

// Frames is the number of packets so far, which is also the frame number of
// the latest packet.
func (c *Capture) Frames() int { return len(c.packets) }

// Now is the time the next packet will carry.
func (c *Capture) Now() time.Time { return c.now }

// Sleep advances the clock by d, e.g. to let a session time out.
func (c *Capture) Sleep(d time.Duration) { c.now = c.now.Add(d) }

// Err returns the first scenario error (such as endpoints of different IP
// families). WriteTo and WriteFile return it too.
func (c *Capture) Err() error { return c.err }

func (c *Capture) fail(err error) {
	if c.err == nil {
		c.err = err
	}
}

// emit builds one packet at the current time and returns its frame number.
func (c *Capture) emit(s *segment) int {
	c.scratch = c.fr.appendHeaders(c.scratch[:0], s)
	data := make([]byte, 0, len(c.scratch)+len(s.payload))
	data = append(append(data, c.scratch...), s.payload...)
	c.packets = append(c.packets, Packet{Frame: len(c.packets) + 1, Time: c.now, Data: data})
	c.now = c.now.Add(c.opts.Step)
	return len(c.packets)
}

// WriteTo writes the capture in Options.Format (pcap for FormatAuto),
// gzipped if Options.Gzip.
func (c *Capture) WriteTo(w io.Writer) (int64, error) {
	cw := &countWriter{w: w}
	err := c.write(cw, formatFor(c.opts.Format, ""), c.opts.Gzip)
	return cw.n, err
}

// WriteFile writes the capture to path; FormatAuto picks pcapng for
// ".pcapng" names, and a ".gz" suffix gzips.
func (c *Capture) WriteFile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("pcapgen: %w", err)
	}
	err = c.write(f, formatFor(c.opts.Format, path), c.opts.Gzip || strings.HasSuffix(path, ".gz"))
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("pcapgen: %w", cerr)
	}
	return err
}

// Bytes returns the capture as WriteTo writes it.
func (c *Capture) Bytes() ([]byte, error) {
	var b bytes.Buffer
	_, err := c.WriteTo(&b)
	return b.Bytes(), err
}

func (c *Capture) write(w io.Writer, f Format, gz bool) error {
	if c.err != nil {
		return c.err
	}
	out, closeGz := gzipWriter(w, gz)
	pw, err := newPacketWriter(out, f, c.LinkType(), c.opts.Snaplen)
	if err != nil {
		return err
	}
	for i := range c.packets {
		p := &c.packets[i]
		if err := pw.writePacket(p.Time, p.Data, nil); err != nil {
			return fmt.Errorf("pcapgen: write frame %d: %w", p.Frame, err)
		}
	}
	if err := pw.flush(); err != nil {
		return fmt.Errorf("pcapgen: flush: %w", err)
	}
	if err := closeGz(); err != nil {
		return fmt.Errorf("pcapgen: gzip: %w", err)
	}
	return nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// Conn is one TCP connection of a Capture.
type Conn struct {
	c              *Capture
	client, broker netip.AddrPort
	perturb        Perturb
	// next is the next sequence number per direction (indexed by Dir).
	next     [2]uint32
	dataSegs int
	dropNext int
	rng      *rand.Rand
	closed   bool
}

// Conn opens a connection: its handshake packets (unless NoSYN) are written
// now.
func (c *Capture) Conn(o ConnOptions) *Conn {
	c.conns++
	n := c.conns
	client := netip.AddrPortFrom(o.Client.Addr().Unmap(), o.Client.Port())
	broker := netip.AddrPortFrom(o.Broker.Addr().Unmap(), o.Broker.Port())
	v6 := client.Addr().Is6() || broker.Addr().Is6()
	if !broker.IsValid() {
		if v6 {
			broker = netip.AddrPortFrom(netip.MustParseAddr("fd00::1"), 9092)
		} else {
			broker = netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 0, 1}), 9092)
		}
	}
	if !client.IsValid() {
		port := uint16(40000 + n%20000)
		if v6 {
			client = netip.AddrPortFrom(netip.AddrFrom16([16]byte{0: 0xfd, 13: 1, 14: byte(n >> 8), 15: byte(n)}), port)
		} else {
			client = netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 1, byte(n >> 8), byte(n)}), port)
		}
	}
	cn := &Conn{c: c, client: client, broker: broker, perturb: c.opts.Perturb}
	if o.Perturb != nil {
		cn.perturb = *o.Perturb
	}
	cn.rng = rand.New(rand.NewPCG(c.opts.Seed, uint64(n)))
	if client.Addr().Is4() != broker.Addr().Is4() {
		c.fail(fmt.Errorf("pcapgen: connection %d: client %s and broker %s are of different IP families", n, client, broker))
		cn.closed = true
		return cn
	}
	isn := [2]uint32{o.ClientISN, o.BrokerISN}
	for i := range isn {
		if isn[i] == 0 {
			isn[i] = cn.rng.Uint32() | 1
		}
	}
	cn.next = isn
	if o.NoSYN {
		return cn
	}
	mss := uint16(cn.mss())
	if !o.SkipSYN {
		cn.packet(ToBroker, isn[0], 0, flagSYN, mss, nil)
	}
	cn.packet(ToClient, isn[1], isn[0]+1, flagSYN|flagACK, mss, nil)
	cn.next = [2]uint32{isn[0] + 1, isn[1] + 1}
	cn.packet(ToBroker, cn.next[0], cn.next[1], flagACK, 0, nil)
	return cn
}

// Client is the client endpoint.
func (cn *Conn) Client() netip.AddrPort { return cn.client }

// Broker is the broker endpoint.
func (cn *Conn) Broker() netip.AddrPort { return cn.broker }

// mss is the effective largest segment payload.
func (cn *Conn) mss() int {
	m := cn.perturb.MSS
	switch {
	case m <= 0 && cn.client.Addr().Is4():
		m = 1460
	case m <= 0:
		m = 1440
	case m > maxPayload:
		m = maxPayload
	}
	return m
}

func (cn *Conn) packet(d Dir, seq, ack uint32, flags uint8, mss uint16, payload []byte) int {
	s := segment{src: cn.client, dst: cn.broker, seq: seq, ack: ack, flags: flags, mss: mss, inbound: d == ToBroker, payload: payload}
	if d == ToClient {
		s.src, s.dst = cn.broker, cn.client
	}
	return cn.c.emit(&s)
}

// Send writes request frames client to broker in one write (several frames
// pipelined into shared segments) and returns the frame number of the packet
// that completed the last of them (0 if a lost segment left it incomplete).
func (cn *Conn) Send(frames ...[]byte) int { return last(cn.Write(ToBroker, frames...)) }

// Reply writes response frames broker to client, like Send.
func (cn *Conn) Reply(frames ...[]byte) int { return last(cn.Write(ToClient, frames...)) }

// Raw writes bytes that are no Kafka frame (a TLS ClientHello, raw SASL
// tokens) and returns the frame number that completed them.
func (cn *Conn) Raw(d Dir, data []byte) int { return last(cn.Write(d, data)) }

// DropNext loses the next n data segments of this connection.
func (cn *Conn) DropNext(n int) { cn.dropNext += n }

func last(f []int) int {
	if len(f) == 0 {
		return 0
	}
	return f[len(f)-1]
}

// piece is a byte range [a, b) of one write's data sent as one segment.
type piece struct{ a, b int }

// cutSeg is one segment as cut, with its fate.
type cutSeg struct {
	piece
	dropped, retransmit, overlap bool
}

// Write sends the concatenation of parts in direction d as one write and
// returns, per part, the frame number of the packet after which an in-order
// reassembler holds the whole part: the latest arrival of its bytes and of
// the bytes before it in this write (bytes lost forever do not hold it
// back). A part that lost bytes gets 0.
func (cn *Conn) Write(d Dir, parts ...[]byte) []int {
	done := make([]int, len(parts))
	if cn.closed {
		cn.c.fail(errClosed)
		return done
	}
	var data []byte
	ends := make([]int, len(parts))
	for i, p := range parts {
		data = append(data, p...)
		ends[i] = len(data)
	}
	if len(data) == 0 {
		return done
	}
	segs := cn.cut(len(data))
	out := schedule(segs, cn.order(len(segs)))
	frames := cn.send(d, data, out)
	completions(done, ends, out, frames)
	return done
}

// cut cuts n bytes of one write into segments at the MSS and at the
// perturbation's SplitAt offsets, and decides each one's fate.
func (cn *Conn) cut(n int) []cutSeg {
	p := &cn.perturb
	cuts := []int{0, n}
	for off := cn.mss(); off < n; off += cn.mss() {
		cuts = append(cuts, off)
	}
	for _, off := range p.SplitAt {
		if off > 0 && off < n {
			cuts = append(cuts, off)
		}
	}
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)

	segs := make([]cutSeg, len(cuts)-1)
	for i := range segs {
		cn.dataSegs++
		ord := cn.dataSegs
		s := &segs[i]
		s.piece = piece{cuts[i], cuts[i+1]}
		s.dropped = every(ord, p.DropEvery) || slices.Contains(p.Drop, ord)
		if cn.dropNext > 0 {
			cn.dropNext--
			s.dropped = true
		}
		s.retransmit = every(ord, p.RetransmitEvery)
		s.overlap = every(ord, p.OverlapEvery) && i > 0
	}
	return segs
}

// order is the order n segments go out in: as cut, or reversed (or
// shuffled) within windows of the perturbation's Reorder.
func (cn *Conn) order(n int) []int {
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	if w := cn.perturb.Reorder; w > 1 {
		for lo := 0; lo < len(order); lo += w {
			win := order[lo:min(lo+w, len(order))]
			if cn.perturb.Shuffle {
				cn.rng.Shuffle(len(win), func(i, j int) { win[i], win[j] = win[j], win[i] })
			} else {
				slices.Reverse(win)
			}
		}
	}
	return order
}

// schedule lists the byte ranges sent, in order: each segment not dropped,
// a retransmission after the next one, an overlapping segment after its
// own.
func schedule(segs []cutSeg, order []int) []piece {
	var out, pending []piece
	for _, i := range order {
		s := segs[i]
		if !s.dropped {
			out = append(out, s.piece)
		}
		out = append(out, pending...)
		pending = pending[:0]
		if s.dropped {
			continue
		}
		if s.retransmit {
			pending = append(pending, s.piece)
		}
		if s.overlap && !segs[i-1].dropped {
			prev := segs[i-1].piece
			out = append(out, piece{prev.b - max(1, (prev.b-prev.a)/2), s.a + max(1, (s.b-s.a)/2)})
		}
	}
	return append(out, pending...)
}

// send writes the packets of out, ranges of data sent in direction d, and
// the other side's ACK if the perturbation asks for it; it returns their
// frame numbers.
func (cn *Conn) send(d Dir, data []byte, out []piece) []int {
	base := cn.next[d]
	frames := make([]int, len(out))
	for i, pc := range out {
		flags := uint8(flagACK)
		if pc.b == len(data) {
			flags |= flagPSH
		}
		frames[i] = cn.packet(d, base+uint32(pc.a), cn.next[1-d], flags, 0, data[pc.a:pc.b])
	}
	cn.next[d] = base + uint32(len(data))
	if cn.perturb.ACKs {
		cn.packet(1-d, cn.next[1-d], cn.next[d], flagACK, 0, nil)
	}
	return frames
}

// completions sets done[i] to the frame after which the part ending at
// ends[i] is delivered: cut the data into atoms at every boundary; an atom
// arrives with the first packet covering it. A part is complete when all
// its atoms arrived, and is delivered (in order) once every earlier atom
// that will ever arrive has arrived too.
func completions(done, ends []int, out []piece, frames []int) {
	bounds := append([]int{0}, ends...)
	for _, pc := range out {
		bounds = append(bounds, pc.a, pc.b)
	}
	slices.Sort(bounds)
	bounds = slices.Compact(bounds)
	arrival := make([]int, len(bounds)-1)
	for k := range arrival {
		for i, pc := range out {
			if pc.a <= bounds[k] && bounds[k+1] <= pc.b {
				arrival[k] = frames[i]
				break
			}
		}
	}
	start, k, delivered := 0, 0, 0
	for i, end := range ends {
		whole := true
		for ; k < len(arrival) && bounds[k] < end; k++ {
			if arrival[k] == 0 && bounds[k] >= start {
				whole = false
			}
			delivered = max(delivered, arrival[k])
		}
		if whole {
			done[i] = delivered
		}
		start = end
	}
}

func every(ord, n int) bool { return n > 0 && ord%n == 0 }

// Close ends the connection with a FIN handshake started by the client.
func (cn *Conn) Close() {
	if cn.closed {
		return
	}
	cn.closed = true
	cn.packet(ToBroker, cn.next[0], cn.next[1], flagFIN|flagACK, 0, nil)
	cn.next[0]++
	cn.packet(ToClient, cn.next[1], cn.next[0], flagFIN|flagACK, 0, nil)
	cn.next[1]++
	cn.packet(ToBroker, cn.next[0], cn.next[1], flagACK, 0, nil)
}

// Reset ends the connection with an RST from the client.
func (cn *Conn) Reset() {
	if cn.closed {
		return
	}
	cn.closed = true
	cn.packet(ToBroker, cn.next[0], cn.next[1], flagRST|flagACK, 0, nil)
}

// errClosed is reported when a scenario writes on a closed connection.
var errClosed = errors.New("pcapgen: write on a closed connection")
