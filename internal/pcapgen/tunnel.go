package pcapgen

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"strconv"

	"github.com/gopacket/gopacket/layers"
)

// Encap is an encapsulation Wrap puts around a packet, as a switch, a
// cloud mirror or a tunnel endpoint would (SPEC 2.1).
type Encap uint8

const (
	// EncapVXLAN: Ethernet / IPv4 / UDP 4789 / VXLAN / Ethernet.
	EncapVXLAN Encap = iota
	// EncapGENEVE: Ethernet / IPv4 / UDP 6081 / GENEVE with an option /
	// Ethernet (protocol 0x6558).
	EncapGENEVE
	// EncapGENEVEIP: GENEVE carrying the IP packet with no Ethernet
	// header, as AWS Gateway Load Balancer sends it.
	EncapGENEVEIP
	// EncapGRE: GRE with key and sequence number, transparent Ethernet
	// bridging (0x6558).
	EncapGRE
	// EncapGREIP: IP in GRE with a checksum field.
	EncapGREIP
	// EncapERSPAN2: GRE with sequence number, ERSPAN type II, Ethernet.
	EncapERSPAN2
	// EncapERSPAN3: GRE with sequence number, ERSPAN type III with the
	// platform-specific subheader, Ethernet.
	EncapERSPAN3
	// EncapIPIP: the IP packet in IPv4 (protocol 4 or 41).
	EncapIPIP
	// EncapIPv6Outer: VXLAN over an IPv6 outer header.
	EncapIPv6Outer
	// EncapVLANInVXLAN: VXLAN whose inner Ethernet carries stacked
	// 802.1ad and 802.1Q tags.
	EncapVLANInVXLAN
	numEncaps
)

var encapNames = [numEncaps]string{"vxlan", "geneve", "geneve-ip", "gre", "gre-ip", "erspan2", "erspan3", "ipip", "ipv6-outer", "vlan-in-vxlan"}

func (e Encap) String() string {
	if e < numEncaps {
		return encapNames[e]
	}
	return "encap(" + strconv.Itoa(int(e)) + ")"
}

// Encaps lists every encapsulation Wrap knows.
func Encaps() []Encap {
	var out []Encap
	for e := range numEncaps {
		out = append(out, e)
	}
	return out
}

// The outer addresses: documentation prefixes (RFC 5737, RFC 3849).
var (
	outerSrc6 = netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 15: 1})
	outerDst6 = netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 15: 2})
)

// Wrap returns a packet of link type lt (captured bytes data, length on
// the wire length) inside enc, as an Ethernet frame, with the frame's
// length on the wire. Lengths in the new headers count the whole original
// packet, so a packet the snap length cut stays cut by as many bytes. id is
// the outer IPv4 identification.
func Wrap(enc Encap, lt layers.LinkType, data []byte, length int, id uint16) ([]byte, int, error) {
	off, err := linkHeaderLen(lt, data)
	if err != nil {
		return nil, 0, err
	}
	ip, ipLen := data[off:], length-off
	if len(ip) == 0 {
		return nil, 0, fmt.Errorf("pcapgen: wrap: no IP header")
	}
	ipEther := uint16(layers.EthernetTypeIPv4)
	if ip[0]>>4 == 6 {
		ipEther = uint16(layers.EthernetTypeIPv6)
	}
	var inner []byte // what the tunnel header carries before ip
	if enc != EncapGENEVEIP && enc != EncapGREIP && enc != EncapIPIP {
		inner = innerEthernet(enc == EncapVLANInVXLAN, ipEther)
	}
	tun, proto := tunnelHeader(enc, ipEther, len(inner)+ipLen)
	outerLen := len(tun) + len(inner) + ipLen
	v6 := enc == EncapIPv6Outer
	outer := make([]byte, 0, 14+40+len(tun)+len(inner)+len(ip))
	outer = appendOuter(outer, v6, proto, outerLen, id)
	outer = append(append(append(outer, tun...), inner...), ip...)
	return outer, len(outer) + ipLen - len(ip), nil
}

// linkHeaderLen is the length of the link header (with any VLAN tags) of
// a packet of link type lt.
func linkHeaderLen(lt layers.LinkType, data []byte) (int, error) {
	n := 0
	switch lt {
	case layers.LinkTypeEthernet:
		n = 14
		for len(data) >= n && isVLAN(binary.BigEndian.Uint16(data[n-2:])) {
			n += 4
		}
	case layers.LinkTypeLinuxSLL:
		n = 16
	case layers.LinkTypeLinuxSLL2:
		n = 20
	case layers.LinkTypeNull, layers.LinkTypeLoop:
		n = 4
	case layers.LinkTypeRaw, 12, 14, 228, 229:
	default:
		return 0, fmt.Errorf("pcapgen: wrap: link type %d", lt)
	}
	if len(data) < n {
		return 0, fmt.Errorf("pcapgen: wrap: %d-byte packet shorter than its link header", len(data))
	}
	return n, nil
}

func isVLAN(et uint16) bool { return et == 0x8100 || et == 0x88a8 || et == 0x9100 }

// innerEthernet is the Ethernet header inside a tunnel, with two VLAN tags
// when vlans.
func innerEthernet(vlans bool, ether uint16) []byte {
	b := []byte{0x02, 0, 0, 0, 0, 0x0b, 0x02, 0, 0, 0, 0, 0x0a}
	if vlans {
		b = append(b, 0x88, 0xa8, 0x00, 0x0a, 0x81, 0x00, 0x00, 0x14)
	}
	return binary.BigEndian.AppendUint16(b, ether)
}

// tunnelHeader is enc's header for n bytes of payload (UDP's included)
// and the outer IP protocol.
func tunnelHeader(enc Encap, ipEther uint16, n int) ([]byte, uint8) {
	be := binary.BigEndian
	udp := func(port uint16, hdr []byte) []byte {
		b := be.AppendUint16(nil, 49152+port%1000)
		b = be.AppendUint16(b, port)
		b = be.AppendUint16(b, uint16(8+len(hdr)+n))
		return append(append(b, 0, 0), hdr...)
	}
	switch enc {
	case EncapVXLAN, EncapIPv6Outer, EncapVLANInVXLAN:
		return udp(4789, []byte{0x08, 0, 0, 0, 0, 0x12, 0x34, 0}), uint8(layers.IPProtocolUDP)
	case EncapGENEVE:
		// One 8-byte option (class 0x0108, type 1, 4 bytes of data).
		return udp(6081, []byte{0x02, 0, 0x65, 0x58, 0, 0, 0x2a, 0, 0x01, 0x08, 0x01, 0x01, 0xde, 0xad, 0xbe, 0xef}), uint8(layers.IPProtocolUDP)
	case EncapGENEVEIP:
		h := []byte{0, 0, 0, 0, 0, 0, 0x2a, 0}
		be.PutUint16(h[2:], ipEther)
		return udp(6081, h), uint8(layers.IPProtocolUDP)
	case EncapGRE:
		return []byte{0x30, 0, 0x65, 0x58, 0, 0, 0, 7, 0, 0, 0, 1}, uint8(layers.IPProtocolGRE)
	case EncapGREIP:
		h := []byte{0x80, 0, 0, 0, 0, 0, 0, 0}
		be.PutUint16(h[2:], ipEther)
		return h, uint8(layers.IPProtocolGRE)
	case EncapERSPAN2:
		return []byte{0x10, 0, 0x88, 0xbe, 0, 0, 0, 1, 0x10, 0x64, 0x00, 0x05, 0, 0, 0, 0}, uint8(layers.IPProtocolGRE)
	case EncapERSPAN3:
		return []byte{0x10, 0, 0x22, 0xeb, 0, 0, 0, 1,
			0x20, 0x64, 0x00, 0x05, 0, 0, 0, 0, 0, 0, 0x00, 0x01, // ERSPAN III, O set
			0, 0, 0, 0, 0, 0, 0, 0}, uint8(layers.IPProtocolGRE) // platform subheader
	case EncapIPIP:
		if ipEther == uint16(layers.EthernetTypeIPv6) {
			return nil, uint8(layers.IPProtocolIPv6)
		}
		return nil, uint8(layers.IPProtocolIPv4)
	}
	return nil, 0
}

// appendOuter appends the outer Ethernet and IP headers for n bytes of IP
// payload.
func appendOuter(b []byte, v6 bool, proto uint8, n int, id uint16) []byte {
	b = append(b, 0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01)
	if v6 {
		b = binary.BigEndian.AppendUint16(b, uint16(layers.EthernetTypeIPv6))
		b = append(b, 0x60, 0, 0, 0)
		b = binary.BigEndian.AppendUint16(b, uint16(n))
		b = append(b, proto, 64)
		s, d := outerSrc6.As16(), outerDst6.As16()
		return append(append(b, s[:]...), d[:]...)
	}
	b = binary.BigEndian.AppendUint16(b, uint16(layers.EthernetTypeIPv4))
	ip := len(b)
	b = append(b, 0x45, 0)
	b = binary.BigEndian.AppendUint16(b, uint16(20+n))
	b = binary.BigEndian.AppendUint16(b, id)
	b = append(b, 0, 0, 64, proto, 0, 0)
	b = append(b, 192, 0, 2, 1, 192, 0, 2, 2)
	binary.BigEndian.PutUint16(b[ip+10:], fold(sum(0, b[ip:ip+20])))
	return b
}
