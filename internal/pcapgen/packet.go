package pcapgen

import (
	"encoding/binary"
	"math/bits"
	"net/netip"

	"github.com/gopacket/gopacket/layers"
	"github.com/kwatch/kwatch/internal/enum"
)

// Link is the link layer written under IP.
type Link uint8

const (
	// LinkEthernet is Ethernet II (the default). MAC addresses are derived
	// from the IP addresses.
	LinkEthernet Link = iota
	// LinkVLAN is Ethernet with an 802.1Q tag (Options.VLAN, default 100).
	LinkVLAN
	// LinkSLL is Linux "cooked" capture v1 (tcpdump -i any).
	LinkSLL
	// LinkSLL2 is Linux "cooked" capture v2.
	LinkSLL2
	// LinkNull is BSD loopback: a 4-byte host-order (little-endian) address
	// family.
	LinkNull
	// LinkRaw is raw IP (LINKTYPE_RAW): IPv4 or IPv6 with no link header.
	LinkRaw
)

var linkNames = [...]string{"ethernet", "vlan", "sll", "sll2", "null", "raw"}

func (l Link) String() string { return enum.Name(linkNames[:], l, "unknown link") }

// LinkType is the pcap link type written for l.
func (l Link) LinkType() layers.LinkType {
	switch l {
	case LinkSLL:
		return layers.LinkTypeLinuxSLL
	case LinkSLL2:
		return layers.LinkTypeLinuxSLL2
	case LinkNull:
		return layers.LinkTypeNull
	case LinkRaw:
		return layers.LinkTypeRaw
	default:
		return layers.LinkTypeEthernet
	}
}

// headerLen is the link header length of l.
func (l Link) headerLen() int {
	switch l {
	case LinkVLAN:
		return 18
	case LinkSLL:
		return 16
	case LinkSLL2:
		return 20
	case LinkNull:
		return 4
	case LinkRaw:
		return 0
	default:
		return 14
	}
}

// TCP flag bits.
const (
	flagFIN = 0x01
	flagSYN = 0x02
	flagRST = 0x04
	flagPSH = 0x08
	flagACK = 0x10
)

// segment describes one TCP packet to build.
type segment struct {
	src, dst netip.AddrPort
	seq, ack uint32
	flags    uint8
	// mss, when non-zero, adds the MSS option (SYN and SYN-ACK).
	mss uint16
	// inbound: the packet travels toward the broker (the capture point's host
	// in the SLL packet-type sense).
	inbound bool
	payload []byte
}

// framer appends packet headers. It holds per-capture counters, so one framer
// serves one capture.
type framer struct {
	link Link
	vlan uint16
	ipID uint16
}

// appendHeaders appends the link, IP and TCP headers of s to dst, with the
// lengths and checksums computed over s.payload, but not the payload itself:
// the caller appends or writes it, so that large payloads are never copied
// just to be framed.
func (f *framer) appendHeaders(dst []byte, s *segment) []byte {
	v6 := s.src.Addr().Is6()
	tcpLen := 20
	if s.mss != 0 {
		tcpLen = 24
	}
	ipLen := 20
	etherType := uint16(layers.EthernetTypeIPv4)
	if v6 {
		ipLen = 40
		etherType = uint16(layers.EthernetTypeIPv6)
	}
	switch f.link {
	case LinkEthernet, LinkVLAN:
		dm, sm := mac(s.dst.Addr()), mac(s.src.Addr())
		dst = append(dst, dm[:]...)
		dst = append(dst, sm[:]...)
		if f.link == LinkVLAN {
			dst = binary.BigEndian.AppendUint16(dst, uint16(layers.EthernetTypeDot1Q))
			dst = binary.BigEndian.AppendUint16(dst, f.vlan&0x0fff)
		}
		dst = binary.BigEndian.AppendUint16(dst, etherType)
	case LinkSLL:
		dst = binary.BigEndian.AppendUint16(dst, sllPacketType(s.inbound))
		dst = binary.BigEndian.AppendUint16(dst, 1) // ARPHRD_ETHER
		dst = binary.BigEndian.AppendUint16(dst, 6)
		sm := mac(s.src.Addr())
		dst = append(dst, sm[:]...)
		dst = append(dst, 0, 0)
		dst = binary.BigEndian.AppendUint16(dst, etherType)
	case LinkSLL2:
		dst = binary.BigEndian.AppendUint16(dst, etherType)
		dst = append(dst, 0, 0)                     // reserved
		dst = binary.BigEndian.AppendUint32(dst, 2) // interface index
		dst = binary.BigEndian.AppendUint16(dst, 1) // ARPHRD_ETHER
		dst = append(dst, byte(sllPacketType(s.inbound)), 6)
		sm := mac(s.src.Addr())
		dst = append(dst, sm[:]...)
		dst = append(dst, 0, 0)
	case LinkNull:
		family := uint32(layers.ProtocolFamilyIPv4)
		if v6 {
			family = uint32(layers.ProtocolFamilyIPv6Darwin)
		}
		dst = binary.LittleEndian.AppendUint32(dst, family)
	case LinkRaw:
	}

	total := tcpLen + len(s.payload)
	if v6 {
		dst = append(dst, 0x60, 0, 0, 0)
		dst = binary.BigEndian.AppendUint16(dst, uint16(total))
		dst = append(dst, byte(layers.IPProtocolTCP), 64)
		a, b := s.src.Addr().As16(), s.dst.Addr().As16()
		dst = append(dst, a[:]...)
		dst = append(dst, b[:]...)
	} else {
		f.ipID++
		ip := len(dst)
		dst = append(dst, 0x45, 0)
		dst = binary.BigEndian.AppendUint16(dst, uint16(ipLen+total))
		dst = binary.BigEndian.AppendUint16(dst, f.ipID)
		dst = append(dst, 0x40, 0, 64, byte(layers.IPProtocolTCP), 0, 0) // DF, TTL 64
		a, b := s.src.Addr().As4(), s.dst.Addr().As4()
		dst = append(dst, a[:]...)
		dst = append(dst, b[:]...)
		binary.BigEndian.PutUint16(dst[ip+10:], fold(sum(0, dst[ip:ip+20])))
	}

	// Pseudo-header sum, then the TCP header and the payload.
	var ps uint64
	if v6 {
		a, b := s.src.Addr().As16(), s.dst.Addr().As16()
		ps = sum(sum(0, a[:]), b[:])
	} else {
		a, b := s.src.Addr().As4(), s.dst.Addr().As4()
		ps = sum(sum(0, a[:]), b[:])
	}
	ps += uint64(layers.IPProtocolTCP) + uint64(total)

	t := len(dst)
	dst = binary.BigEndian.AppendUint16(dst, s.src.Port())
	dst = binary.BigEndian.AppendUint16(dst, s.dst.Port())
	dst = binary.BigEndian.AppendUint32(dst, s.seq)
	dst = binary.BigEndian.AppendUint32(dst, s.ack)
	dst = append(dst, byte(tcpLen/4)<<4, s.flags)
	dst = binary.BigEndian.AppendUint16(dst, 65535) // window
	dst = append(dst, 0, 0, 0, 0)                   // checksum, urgent
	if s.mss != 0 {
		dst = append(dst, 2, 4)
		dst = binary.BigEndian.AppendUint16(dst, s.mss)
	}
	ps = sum(ps, dst[t:])
	ps = sum(ps, s.payload)
	binary.BigEndian.PutUint16(dst[t+16:], fold(ps))
	return dst
}

func sllPacketType(inbound bool) uint16 {
	if inbound {
		return 0 // PACKET_HOST
	}
	return 4 // PACKET_OUTGOING
}

// mac derives a locally administered MAC address from an IP address.
func mac(a netip.Addr) [6]byte {
	b := a.As16()
	return [6]byte{0x02, 0x00, b[12], b[13], b[14], b[15]}
}

// sum adds b to the running one's-complement sum s as big-endian 16-bit
// words (an odd final byte is padded with zero). Words are summed 64 bits at
// a time with end-around carry, which folds to the same 16-bit result.
func sum(s uint64, b []byte) uint64 {
	var c uint64
	for len(b) >= 32 {
		s, c = bits.Add64(s, binary.BigEndian.Uint64(b), c)
		s, c = bits.Add64(s, binary.BigEndian.Uint64(b[8:]), c)
		s, c = bits.Add64(s, binary.BigEndian.Uint64(b[16:]), c)
		s, c = bits.Add64(s, binary.BigEndian.Uint64(b[24:]), c)
		b = b[32:]
	}
	for len(b) >= 8 {
		s, c = bits.Add64(s, binary.BigEndian.Uint64(b), c)
		b = b[8:]
	}
	s, c = bits.Add64(s, c, 0)
	s += c
	for len(b) >= 2 {
		s, c = bits.Add64(s, uint64(binary.BigEndian.Uint16(b)), 0)
		s += c
		b = b[2:]
	}
	if len(b) == 1 {
		s, c = bits.Add64(s, uint64(b[0])<<8, 0)
		s += c
	}
	return s
}

// fold reduces a running sum to the 16-bit one's-complement checksum.
func fold(s uint64) uint16 {
	s = (s >> 32) + (s & 0xffffffff)
	s = (s >> 32) + (s & 0xffffffff)
	s = (s >> 16) + (s & 0xffff)
	s = (s >> 16) + (s & 0xffff)
	s = (s >> 16) + (s & 0xffff)
	return ^uint16(s)
}
