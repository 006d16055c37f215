package capture

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"net/netip"
	"reflect"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

var (
	v4 = pkt{src: "10.0.0.5", dst: "10.0.0.9", sport: 53122, dport: 9092, seq: 1000, payload: []byte("kafka bytes")}
	v6 = pkt{v6: true, src: "fd00::5", dst: "fd00::9", sport: 53122, dport: 9092, seq: 2000, payload: []byte("kafka over v6")}
)

func sll(proto layers.EthernetType, payload []byte) []byte {
	b := []byte{0, 0, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0}
	b = binary.BigEndian.AppendUint16(b, uint16(proto))
	return append(b, payload...)
}

func sll2(proto layers.EthernetType, payload []byte) []byte {
	b := binary.BigEndian.AppendUint16(nil, uint16(proto))
	b = append(b, 0, 0, 0, 0, 0, 2, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0)
	return append(b, payload...)
}

func family(big bool, fam uint32, payload []byte) []byte {
	return append(order(big).AppendUint32(nil, fam), payload...)
}

// decodeCase is a packet of one link type and what decoding it gives.
type decodeCase struct {
	name      string
	link      layers.LinkType
	data      []byte
	length    int // on the wire; 0: len(data)
	want      Reason
	p         pkt // when want == ReasonNone
	truncated bool
}

func decodeCases(t testing.TB) []decodeCase {
	ip4, _ := ipTCP(t, v4)
	ip6, _ := ipTCP(t, v6)
	v4opts := v4
	v4opts.ipOpts = true
	ip4opts, _ := ipTCP(t, v4opts)
	v6ext := v6
	v6ext.ext = true
	ip6ext, _ := ipTCP(t, v6ext)
	small := v4
	small.payload = []byte("x")
	ipSmall, _ := ipTCP(t, small)
	v4empty := v4
	v4empty.payload = nil
	ipEmpty, _ := ipTCP(t, v4empty)

	frag := bytes.Clone(ip4)
	frag[6] = 0x20 // more fragments
	fragLater := bytes.Clone(ip4)
	fragLater[7] = 8 // offset 64
	udp := bytes.Clone(ip4)
	udp[9] = 17
	v6frag := bytes.Clone(ip6)
	v6frag[6] = 44
	longer := bytes.Clone(ip4)
	longer[3] += 100 // IP total length beyond the captured bytes

	eth := func(et layers.EthernetType, b []byte) []byte { return ethernet(t, et, nil, b) }
	ok4 := func(name string, link layers.LinkType, data []byte) decodeCase {
		return decodeCase{name: name, link: link, data: data, p: v4}
	}
	ok6 := func(name string, link layers.LinkType, data []byte) decodeCase {
		return decodeCase{name: name, link: link, data: data, p: v6}
	}
	padded := eth(layers.EthernetTypeIPv4, ipSmall)
	padded = append(padded, make([]byte, 60-len(padded)+4)...) // padding and an FCS
	smallCase := ok4("ethernet padding trimmed", linkEthernet, padded)
	smallCase.p = small
	emptyCase := ok4("ethernet empty payload", linkEthernet, eth(layers.EthernetTypeIPv4, ipEmpty))
	emptyCase.p = v4empty
	cut := eth(layers.EthernetTypeIPv4, ip4)
	snapped := ok4("snap length cut the payload", linkEthernet, cut[:len(cut)-5])
	snapped.length, snapped.truncated = len(cut), true
	snapped.p.payload = v4.payload[:len(v4.payload)-5]
	// The record is whole (captured = original length): the IP length
	// field is wrong, not cut by the snap length; the bytes are the
	// payload, and no truncated-packet is claimed.
	beyond := ok4("IP length beyond captured bytes", linkEthernet, eth(layers.EthernetTypeIPv4, longer))

	return []decodeCase{
		ok4("ethernet ipv4", linkEthernet, eth(layers.EthernetTypeIPv4, ip4)),
		ok6("ethernet ipv6", linkEthernet, eth(layers.EthernetTypeIPv6, ip6)),
		ok4("ethernet ipv4 options", linkEthernet, eth(layers.EthernetTypeIPv4, ip4opts)),
		ok6("ethernet ipv6 extension headers", linkEthernet, eth(layers.EthernetTypeIPv6, ip6ext)),
		ok4("802.1Q", linkEthernet, ethernet(t, layers.EthernetTypeIPv4, []layers.EthernetType{layers.EthernetTypeDot1Q}, ip4)),
		ok6("802.1ad stacked", linkEthernet, ethernet(t, layers.EthernetTypeIPv6, []layers.EthernetType{layers.EthernetTypeQinQ, layers.EthernetTypeDot1Q}, ip6)),
		smallCase,
		emptyCase,
		ok4("linux SLL", linkSLL, sll(layers.EthernetTypeIPv4, ip4)),
		ok6("linux SLL ipv6", linkSLL, sll(layers.EthernetTypeIPv6, ip6)),
		ok4("linux SLL2", linkSLL2, sll2(layers.EthernetTypeIPv4, ip4)),
		ok6("linux SLL2 ipv6", linkSLL2, sll2(layers.EthernetTypeIPv6, ip6)),
		ok4("null little-endian", linkNull, family(false, 2, ip4)),
		ok6("null big-endian ipv6 (darwin)", linkNull, family(true, 30, ip6)),
		ok6("null little-endian ipv6 (freebsd)", linkNull, family(false, 28, ip6)),
		ok4("loop", linkLoop, family(true, 2, ip4)),
		ok6("loop ipv6", linkLoop, family(true, 24, ip6)),
		ok4("raw 101", linkRaw, ip4),
		ok6("raw 101 ipv6", linkRaw, ip6),
		ok4("raw 12", linkRaw12, ip4),
		ok6("raw 14", linkRaw14, ip6),
		ok4("ipv4 228", linkIPv4, ip4),
		ok6("ipv6 229", linkIPv6, ip6),
		snapped,
		beyond,
		{name: "arp", link: linkEthernet, data: eth(layers.EthernetTypeARP, make([]byte, 28)), want: ReasonNotIP},
		{name: "802.3 length field", link: linkEthernet, data: eth(100, make([]byte, 100)), want: ReasonNotIP},
		{name: "null AF_UNIX", link: linkNull, data: family(false, 1, ip4), want: ReasonNotIP},
		{name: "udp", link: linkEthernet, data: eth(layers.EthernetTypeIPv4, udp), want: ReasonNotTCP},
		{name: "ipv4 first fragment", link: linkRaw, data: frag, want: ReasonFragment},
		{name: "ipv4 later fragment", link: linkRaw, data: fragLater, want: ReasonFragment},
		{name: "ipv6 fragment header", link: linkRaw, data: v6frag, want: ReasonFragment},
		{name: "802.11", link: 105, data: ip4, want: ReasonUnsupportedLink},
		{name: "headers cut by snap length", link: linkEthernet, data: eth(layers.EthernetTypeIPv4, ip4)[:30], length: 100, want: ReasonTruncated},
		{name: "short ethernet", link: linkEthernet, data: []byte{1, 2, 3}, want: ReasonMalformed},
		{name: "ipv4 ihl too small", link: linkRaw, data: append([]byte{0x43}, ip4[1:]...), want: ReasonMalformed},
		{name: "ipv4 version on 229", link: linkIPv6, data: ip4, want: ReasonMalformed},
		{name: "tcp data offset too small", link: linkRaw, data: append(bytes.Clone(ip4[:32]), 0x30), want: ReasonMalformed},
		{name: "raw garbage version", link: linkRaw, data: []byte{0x12, 0, 0}, want: ReasonNotIP},
	}
}

func TestLayerDecoder(t *testing.T) {
	d := NewLayerDecoder()
	for _, tt := range decodeCases(t) {
		t.Run(tt.name, func(t *testing.T) {
			p := Packet{Frame: 42, Time: time.Unix(5, 6), Data: tt.data, CaptureLength: len(tt.data), Length: len(tt.data), LinkType: tt.link}
			if tt.length != 0 {
				p.Length = tt.length
			}
			var s Segment
			ok := d.Decode(&p, &s)
			if ok != (tt.want == ReasonNone) || d.Reason() != tt.want {
				t.Fatalf("Decode = %v, reason %v; want reason %v", ok, d.Reason(), tt.want)
			}
			if !ok {
				return
			}
			wantSrc := netip.AddrPortFrom(netip.MustParseAddr(tt.p.src), tt.p.sport)
			wantDst := netip.AddrPortFrom(netip.MustParseAddr(tt.p.dst), tt.p.dport)
			if s.Src != wantSrc || s.Dst != wantDst {
				t.Errorf("endpoints %v -> %v, want %v -> %v", s.Src, s.Dst, wantSrc, wantDst)
			}
			if s.Frame != 42 || !s.Time.Equal(p.Time) || s.TCP.Seq != tt.p.seq || !s.TCP.ACK || !s.TCP.PSH {
				t.Errorf("segment frame %d time %v seq %d flags ack=%v psh=%v", s.Frame, s.Time, s.TCP.Seq, s.TCP.ACK, s.TCP.PSH)
			}
			if !bytes.Equal(s.TCP.Payload, tt.p.payload) {
				t.Errorf("payload %q, want %q", s.TCP.Payload, tt.p.payload)
			}
			if s.Truncated != tt.truncated {
				t.Errorf("Truncated = %v, want %v", s.Truncated, tt.truncated)
			}
		})
	}
	st := d.Stats()
	if st[ReasonNone] == 0 || st[ReasonFragment] != 3 {
		t.Errorf("stats %v: want decoded > 0 and 3 fragments", st)
	}
}

func TestLayerDecoderAllocs(t *testing.T) {
	d := NewLayerDecoder()
	var s Segment
	for _, tt := range decodeCases(t) {
		p := Packet{Data: tt.data, CaptureLength: len(tt.data), Length: max(tt.length, len(tt.data)), LinkType: tt.link}
		d.Decode(&p, &s) // the first SYN with many options may grow s.TCP.Options once
		if allocs := testing.AllocsPerRun(100, func() { d.Decode(&p, &s) }); allocs != 0 {
			t.Errorf("%s: Decode allocates %v times, want 0", tt.name, allocs)
		}
	}
}

func TestReasonString(t *testing.T) {
	for r := range numReasons {
		if r.String() == "" || r.String() == "unknown" {
			t.Errorf("Reason(%d) has no name", r)
		}
	}
	if Reason(200).String() != "unknown" {
		t.Error("out-of-range Reason should print unknown")
	}
}

// TestDecodeTCPMatchesGopacket: decodeTCP sets every field gopacket's
// DecodeFromBytes sets, to the same values, but the options, on random
// headers with and without options and payload.
func TestDecodeTCPMatchesGopacket(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 2000 {
		off := 20 + 4*rng.IntN(11)
		b := make([]byte, off+rng.IntN(100))
		for j := range b {
			b[j] = byte(rng.Uint32())
		}
		b[12] = byte(off/4)<<4 | b[12]&0x0f
		var want, got layers.TCP
		if err := want.DecodeFromBytes(b, gopacket.NilDecodeFeedback); err != nil {
			t.Fatalf("header %d: %v", i, err)
		}
		decodeTCP(&got, b, off)
		want.Options, got.Options = nil, nil
		want.Padding, got.Padding = nil, nil
		want.Multipath, got.Multipath = false, false
		if !reflect.DeepEqual(tcpFields(&want), tcpFields(&got)) {
			t.Fatalf("header %d (% x):\ngopacket %+v\ndecodeTCP %+v", i, b[:off], tcpFields(&want), tcpFields(&got))
		}
	}
}

// tcpFields are the exported fields of t that decoding sets.
func tcpFields(t *layers.TCP) []any {
	return []any{t.SrcPort, t.DstPort, t.Seq, t.Ack, t.DataOffset, t.FIN, t.SYN, t.RST, t.PSH, t.ACK, t.URG,
		t.ECE, t.CWR, t.NS, t.Window, t.Checksum, t.Urgent, t.Contents, t.Payload}
}
