package pcapgen

import (
	"bytes"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// TestWrapGopacket: gopacket, an independent decoder, finds the inner TCP
// segment in every encapsulation it knows (all but ERSPAN III), so Wrap
// and kwatch's decoder cannot share a misreading of the formats.
func TestWrapGopacket(t *testing.T) {
	c := New(Options{})
	cn := c.Conn(ConnOptions{})
	cn.Send([]byte("kafka request bytes"))
	last := c.Packets()[len(c.Packets())-1].Data
	for _, enc := range Encaps() {
		t.Run(enc.String(), func(t *testing.T) {
			b, n, err := Wrap(enc, layers.LinkTypeEthernet, last, len(last), 9)
			if err != nil || n != len(b) {
				t.Fatalf("Wrap: %d/%d bytes, %v", len(b), n, err)
			}
			if enc == EncapERSPAN3 {
				return // gopacket has no ERSPAN III
			}
			pkt := gopacket.NewPacket(b, layers.LayerTypeEthernet, gopacket.Default)
			tcp, _ := pkt.Layer(layers.LayerTypeTCP).(*layers.TCP)
			if tcp == nil {
				t.Fatalf("no TCP layer: %v", pkt)
			}
			if uint16(tcp.DstPort) != cn.Broker().Port() || !bytes.Equal(tcp.Payload, []byte("kafka request bytes")) {
				t.Errorf("TCP to %d, payload %q", tcp.DstPort, tcp.Payload)
			}
		})
	}
}

// TestWrapKeepsCut: a packet the snap length cut stays cut by as many
// bytes, and its wrapped lengths count the whole packet.
func TestWrapKeepsCut(t *testing.T) {
	c := New(Options{})
	c.Conn(ConnOptions{}).Send(bytes.Repeat([]byte("x"), 500))
	full := c.Packets()[len(c.Packets())-1].Data
	b, n, err := Wrap(EncapVXLAN, layers.LinkTypeEthernet, full[:100], len(full), 1)
	if err != nil {
		t.Fatal(err)
	}
	whole, m, _ := Wrap(EncapVXLAN, layers.LinkTypeEthernet, full, len(full), 1)
	if n != m || m != len(whole) || n-len(b) != len(full)-100 || !bytes.Equal(whole[:len(b)], b) {
		t.Errorf("cut: %d of %d bytes; whole %d of %d", len(b), n, len(whole), m)
	}
}

// TestFragmentFrame: fragments carry the packet's payload in order, in
// 8-byte units, and a packet that fits comes back whole.
func TestFragmentFrame(t *testing.T) {
	c := New(Options{})
	c.Conn(ConnOptions{}).Send(bytes.Repeat([]byte("0123456789"), 100))
	frame := c.Packets()[len(c.Packets())-1].Data
	fs := FragmentFrame(frame, 256, 1)
	var payload []byte
	for i, f := range fs {
		pkt := gopacket.NewPacket(f, layers.LayerTypeEthernet, gopacket.Default)
		ip, _ := pkt.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
		if ip == nil || int(ip.FragOffset)*8 != len(payload) || (ip.Flags&layers.IPv4MoreFragments != 0) != (i < len(fs)-1) {
			t.Fatalf("fragment %d: %v", i, pkt)
		}
		payload = append(payload, ip.Payload...)
	}
	if !bytes.Equal(payload, frame[14+20:]) {
		t.Error("fragments do not add up to the packet")
	}
	if len(FragmentFrame(frame, 2048, 1)) != 1 {
		t.Error("a packet that fits was cut")
	}
	if _, err := FragmentCapture(nil, 12, false); err == nil {
		t.Error("size 12 accepted")
	}
}
