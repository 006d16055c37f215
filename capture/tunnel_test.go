package capture

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/kwatch/kwatch/internal/pcapgen"
)

// encapTunnel is the Tunnel each pcapgen encapsulation must count.
var encapTunnel = map[pcapgen.Encap]Tunnel{
	pcapgen.EncapVXLAN:       TunnelVXLAN,
	pcapgen.EncapGENEVE:      TunnelGENEVE,
	pcapgen.EncapGENEVEIP:    TunnelGENEVE,
	pcapgen.EncapGRE:         TunnelGRE,
	pcapgen.EncapGREIP:       TunnelGRE,
	pcapgen.EncapERSPAN2:     TunnelERSPAN2,
	pcapgen.EncapERSPAN3:     TunnelERSPAN3,
	pcapgen.EncapIPIP:        TunnelIPIP,
	pcapgen.EncapIPv6Outer:   TunnelVXLAN,
	pcapgen.EncapVLANInVXLAN: TunnelVXLAN,
}

// wrapped is tt's packet inside enc, as a capture of link Ethernet.
func wrapped(t testing.TB, enc pcapgen.Encap, tt decodeCase) Packet {
	t.Helper()
	length := max(tt.length, len(tt.data))
	b, n, err := pcapgen.Wrap(enc, tt.link, tt.data, length, 7)
	if err != nil {
		t.Fatal(err)
	}
	return Packet{Frame: 42, Time: time.Unix(5, 6), Data: b, CaptureLength: len(b), Length: n, LinkType: linkEthernet}
}

// TestTunnelsDecodeAsPlain: every packet that decodes plain decodes the
// same inside every encapsulation (same endpoints, payload, truncation),
// and the tunnel is counted.
func TestTunnelsDecodeAsPlain(t *testing.T) {
	for _, enc := range pcapgen.Encaps() {
		t.Run(enc.String(), func(t *testing.T) {
			d := NewLayerDecoder()
			n := 0
			for _, tt := range decodeCases(t) {
				if tt.want != ReasonNone {
					continue
				}
				n++
				p := wrapped(t, enc, tt)
				var s Segment
				if !d.Decode(&p, &s) {
					t.Fatalf("%s: reason %v", tt.name, d.Reason())
				}
				wantSrc := netip.AddrPortFrom(netip.MustParseAddr(tt.p.src), tt.p.sport)
				wantDst := netip.AddrPortFrom(netip.MustParseAddr(tt.p.dst), tt.p.dport)
				if s.Src != wantSrc || s.Dst != wantDst || s.Frame != 42 || s.TCP.Seq != tt.p.seq {
					t.Errorf("%s: %v -> %v frame %d seq %d, want %v -> %v", tt.name, s.Src, s.Dst, s.Frame, s.TCP.Seq, wantSrc, wantDst)
				}
				if !bytes.Equal(s.TCP.Payload, tt.p.payload) || s.Truncated != tt.truncated {
					t.Errorf("%s: payload %q truncated %v, want %q %v", tt.name, s.TCP.Payload, s.Truncated, tt.p.payload, tt.truncated)
				}
			}
			if got := d.Unwrapped()[encapTunnel[enc]]; got != uint64(n) {
				t.Errorf("%v counted %d times, want %d", encapTunnel[enc], got, n)
			}
		})
	}
}

// TestTunnelsNested: a tunnel inside a tunnel unwraps both, up to
// maxTunnels; one more is ReasonTunnelDepth.
func TestTunnelsNested(t *testing.T) {
	ip4, _ := ipTCP(t, v4)
	frame := ethernet(t, layers.EthernetTypeIPv4, nil, ip4)
	encs := []pcapgen.Encap{pcapgen.EncapVXLAN, pcapgen.EncapGRE, pcapgen.EncapIPIP, pcapgen.EncapGENEVEIP, pcapgen.EncapERSPAN3}
	for depth := 1; depth <= len(encs); depth++ {
		b := frame
		for _, enc := range encs[:depth] {
			var err error
			if b, _, err = pcapgen.Wrap(enc, linkEthernet, b, len(b), 1); err != nil {
				t.Fatal(err)
			}
		}
		d := NewLayerDecoder()
		var s Segment
		p := Packet{Data: b, CaptureLength: len(b), Length: len(b), LinkType: linkEthernet}
		ok := d.Decode(&p, &s)
		want := ReasonNone
		if depth > maxTunnels {
			want = ReasonTunnelDepth
		}
		if d.Reason() != want {
			t.Fatalf("depth %d: reason %v, want %v", depth, d.Reason(), want)
		}
		if ok && !bytes.Equal(s.TCP.Payload, v4.payload) {
			t.Errorf("depth %d: payload %q", depth, s.TCP.Payload)
		}
	}
}

// TestTunnelsContrary: what looks like a tunnel but is not one, or a
// tunnel with no TCP inside, is never a segment, and never panics.
func TestTunnelsContrary(t *testing.T) {
	ip4, _ := ipTCP(t, v4)
	frame := ethernet(t, layers.EthernetTypeIPv4, nil, ip4)
	udpInner := bytes.Clone(frame)
	udpInner[14+9] = 17
	wrap := func(enc pcapgen.Encap, b []byte) []byte {
		out, _, err := pcapgen.Wrap(enc, linkEthernet, b, len(b), 1)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	edit := func(b []byte, off int, v byte) []byte {
		b = bytes.Clone(b)
		b[off] = v
		return b
	}
	vxlan := wrap(pcapgen.EncapVXLAN, frame)
	gre := wrap(pcapgen.EncapGREIP, frame)
	geneve := wrap(pcapgen.EncapGENEVE, frame)
	erspan3 := wrap(pcapgen.EncapERSPAN3, frame)
	const udp, vx = 14 + 20, 14 + 20 + 8 // UDP and tunnel header offsets
	for _, tt := range []struct {
		name string
		data []byte
		want Reason
	}{
		{"vxlan inner udp", wrap(pcapgen.EncapVXLAN, udpInner), ReasonNotTCP},
		{"vxlan inner arp", edit(vxlan, vx+8+13, 0x06), ReasonNotIP},
		{"udp 4789 without the I flag", edit(vxlan, vx, 0), ReasonNotTCP},
		{"udp to another port", edit(vxlan, udp+3, 0x13), ReasonNotTCP},
		{"vxlan cut in its header", vxlan[:vx+4], ReasonMalformed},
		{"vxlan inner ethernet cut", vxlan[:vx+8+10], ReasonMalformed},
		{"gre unknown protocol", edit(gre, 14+20+2, 0x12), ReasonNotTCP},
		{"gre version 1", edit(gre, 14+20+1, 1), ReasonNotTCP},
		{"gre routing bit", edit(gre, 14+20, 0xc0), ReasonNotTCP},
		{"gre cut", gre[:14+20+6], ReasonMalformed},
		{"geneve version 1", edit(geneve, vx, 0x42), ReasonNotTCP},
		{"geneve unknown protocol", edit(geneve, vx+2, 0x12), ReasonNotTCP},
		{"geneve options beyond the packet", edit(geneve, vx, 0x3f)[:vx+40], ReasonMalformed},
		{"erspan3 wrong version", edit(erspan3, 14+20+8, 0x10), ReasonNotTCP},
		{"erspan3 unknown frame type", edit(erspan3, 14+20+8+10, 0x7c), ReasonNotTCP},
		{"ipip inner garbage", wrap(pcapgen.EncapIPIP, edit(frame, 14, 0x35)), ReasonMalformed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := NewLayerDecoder()
			var s Segment
			p := Packet{Data: tt.data, CaptureLength: len(tt.data), Length: len(tt.data), LinkType: linkEthernet}
			if d.Decode(&p, &s) || d.Reason() != tt.want {
				t.Errorf("reason %v, want %v", d.Reason(), tt.want)
			}
		})
	}
}

// TestTunnelsERSPANTypeI: GRE 0x88BE without a sequence number is ERSPAN
// type I, with no ERSPAN header.
func TestTunnelsERSPANTypeI(t *testing.T) {
	ip4, _ := ipTCP(t, v4)
	frame := ethernet(t, layers.EthernetTypeIPv4, nil, ip4)
	b := ethernet(t, layers.EthernetTypeIPv4, nil, outerIPv4(47, append([]byte{0, 0, 0x88, 0xbe}, frame...)))
	d := NewLayerDecoder()
	var s Segment
	p := Packet{Data: b, CaptureLength: len(b), Length: len(b), LinkType: linkEthernet}
	if !d.Decode(&p, &s) || !bytes.Equal(s.TCP.Payload, v4.payload) || d.Unwrapped()[TunnelERSPAN2] != 1 {
		t.Fatalf("reason %v payload %q counts %v", d.Reason(), s.TCP.Payload, d.Unwrapped())
	}
}

// outerIPv4 is an IPv4 header of protocol proto before payload.
func outerIPv4(proto byte, payload []byte) []byte {
	h := []byte{0x45, 0, 0, 0, 0, 1, 0, 0, 64, proto, 0, 0, 192, 0, 2, 1, 192, 0, 2, 2}
	binary.BigEndian.PutUint16(h[2:], uint16(20+len(payload)))
	return append(h, payload...)
}

// TestKindNames: every tunnel kind and fragment drop reason has a name.
func TestKindNames(t *testing.T) {
	var names []string
	for k := range numTunnels {
		names = append(names, k.String())
	}
	for r := range numFragDrops {
		names = append(names, r.String())
	}
	for i, n := range names {
		if n == "" || n == "unknown" {
			t.Errorf("name %d: %q", i, n)
		}
	}
	if Tunnel(200).String() != "unknown" || FragDrop(200).String() != "unknown" {
		t.Error("out-of-range kinds should print unknown")
	}
}

// TestTunnelAllocs: unwrapping allocates nothing.
func TestTunnelAllocs(t *testing.T) {
	d := NewLayerDecoder()
	var s Segment
	for _, enc := range pcapgen.Encaps() {
		for _, tt := range decodeCases(t)[:6] {
			p := wrapped(t, enc, tt)
			d.Decode(&p, &s)
			if allocs := testing.AllocsPerRun(100, func() { d.Decode(&p, &s) }); allocs != 0 {
				t.Errorf("%v %s: Decode allocates %v times, want 0", enc, tt.name, allocs)
			}
		}
	}
}
