package pcapgen

import (
	"fmt"
	"net/netip"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// Two more conditions of SPEC.md 2.1 made from a clean capture: the same
// traffic taken at several capture points (SplitCapture), and segments the
// capture lost though the other side acknowledged them (DropAcked).

// Segment is what SplitCapture's and DropAcked's callers learn of a packet:
// its 0-based index in the capture and, for an IPv4 or IPv6 TCP packet, its
// endpoints, flags, sequence numbers and payload (TCP is false for
// anything else). Payload points into the capture as read: a caller that
// keeps it past its callback must not change it.
type Segment struct {
	Index    int
	TCP      bool
	Src, Dst netip.AddrPort
	SYN, ACK bool
	FIN, RST bool
	Seq, Ack uint32
	Len      int
	Payload  []byte
}

func segmentOf(i int, link layers.LinkType, data []byte) Segment {
	s := Segment{Index: i}
	p := gopacket.NewPacket(data, link, gopacket.DecodeOptions{NoCopy: true})
	var src, dst netip.Addr
	switch ip := p.NetworkLayer().(type) {
	case *layers.IPv4:
		src, _ = netip.AddrFromSlice(ip.SrcIP)
		dst, _ = netip.AddrFromSlice(ip.DstIP)
	case *layers.IPv6:
		src, _ = netip.AddrFromSlice(ip.SrcIP)
		dst, _ = netip.AddrFromSlice(ip.DstIP)
	default:
		return s
	}
	tcp, ok := p.TransportLayer().(*layers.TCP)
	if !ok {
		return s
	}
	s.TCP = true
	s.Src, s.Dst = netip.AddrPortFrom(src, uint16(tcp.SrcPort)), netip.AddrPortFrom(dst, uint16(tcp.DstPort))
	s.SYN, s.ACK, s.FIN, s.RST = tcp.SYN, tcp.ACK, tcp.FIN, tcp.RST
	s.Seq, s.Ack, s.Len, s.Payload = tcp.Seq, tcp.Ack, len(tcp.Payload), tcp.Payload
	return s
}

// Segments returns what SplitCapture and DropAcked tell their callers of
// each packet of the capture b, so that a caller can pick with the whole
// capture in view (a connection's last response, say).
func Segments(b []byte) ([]Segment, error) {
	link, ps, err := readCapture(b)
	if err != nil {
		return nil, err
	}
	segs := make([]Segment, len(ps))
	for i, p := range ps {
		segs[i] = segmentOf(i, link, p.data)
	}
	return segs, nil
}

// Place is where SplitCapture put a packet: the key of its file and its
// 1-based number there (the frame a reader of that file sees).
type Place struct {
	Key   string
	Frame uint64
}

// SplitCapture returns the capture b as one classic pcap per key that part
// gives its packets (one capture point per broker host, say), each packet
// with its own time, keys in order of first appearance, and where each
// packet went (indexed by its 0-based index in b).
func SplitCapture(b []byte, part func(Segment) string) (map[string][]byte, []string, []Place, error) {
	link, ps, err := readCapture(b)
	if err != nil {
		return nil, nil, nil, err
	}
	byKey := map[string][]filePacket{}
	var keys []string
	where := make([]Place, len(ps))
	for i, p := range ps {
		k := part(segmentOf(i, link, p.data))
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], p)
		where[i] = Place{k, uint64(len(byKey[k]))}
	}
	files := map[string][]byte{}
	for k, kps := range byKey {
		if files[k], err = writeCapture(link, DefaultSnaplen, kps); err != nil {
			return nil, nil, nil, err
		}
	}
	return files, keys, where, nil
}

// DropAcked returns the capture b without the data segments drop picks
// among those a later packet of the other direction acknowledges in full
// (so the loss is seen by acknowledgement), and the indexes of the packets
// it dropped. A picked segment nothing acknowledges stays.
func DropAcked(b []byte, drop func(Segment) bool) ([]byte, []int, error) {
	link, ps, err := readCapture(b)
	if err != nil {
		return nil, nil, err
	}
	segs := make([]Segment, len(ps))
	for i, p := range ps {
		segs[i] = segmentOf(i, link, p.data)
	}
	var (
		kept    []filePacket
		dropped []int
	)
	for i, s := range segs {
		if s.TCP && s.Len > 0 && drop(s) && ackedLater(segs[i+1:], s) {
			dropped = append(dropped, i)
			continue
		}
		kept = append(kept, ps[i])
	}
	if len(dropped) == 0 {
		return nil, nil, fmt.Errorf("pcapgen: no acknowledged segment to drop")
	}
	out, err := writeCapture(link, DefaultSnaplen, kept)
	return out, dropped, err
}

// ackedLater reports whether a packet of later, from s's receiver to its
// sender, acknowledges every byte of s.
func ackedLater(later []Segment, s Segment) bool {
	end := s.Seq + uint32(s.Len)
	for _, l := range later {
		if l.TCP && l.ACK && l.Src == s.Dst && l.Dst == s.Src && int32(l.Ack-end) >= 0 {
			return true
		}
	}
	return false
}

// ShuffleKeepingTimes is Shuffle with every packet keeping its own time, as
// in a capture of `-i any` or of a multi-queue NIC, where each packet is
// stamped as it arrives and written in the order the queues are drained:
// times then go backwards in file order where packets were reordered.
func ShuffleKeepingTimes(b []byte, minWin, maxWin int, seed uint64) ([]byte, error) {
	return shuffleCapture(b, minWin, maxWin, seed, true)
}

// Conditions are the rewrites of SPEC.md 2.1 that must leave a capture's
// findings, confidence and coverage (truncated-packet aside) as they were,
// by name: every tunnel Wrap knows, IP fragments of 256 bytes in reverse
// order, snap lengths of 512 and 256, and reordering in windows of 3 to 8
// packets. The reordered packets keep their own capture times, as in the
// captures 2.1 names (`-i any`, multi-queue NICs, merged interfaces):
// rewriting times in file order moved a packet's time across an idle pause
// of a second or more (librdkafka polls once a second), which put an
// acknowledgement over a second ahead of the bytes it acknowledges, outside
// 2.1's reordering window, and made the test depend on the recording.
func Conditions() map[string]func([]byte) ([]byte, error) {
	cs := map[string]func([]byte) ([]byte, error){
		"fragmented":  func(b []byte) ([]byte, error) { return FragmentCapture(b, 256, true) },
		"snaplen-512": func(b []byte) ([]byte, error) { return Recut(b, 512) },
		"snaplen-256": func(b []byte) ([]byte, error) { return Recut(b, 256) },
		"reordered":   func(b []byte) ([]byte, error) { return ShuffleKeepingTimes(b, 3, 8, 1) },
	}
	for _, enc := range Encaps() {
		cs["tunnel-"+enc.String()] = func(b []byte) ([]byte, error) { return WrapCapture(b, enc) }
	}
	return cs
}
