package capture

import (
	"encoding/binary"
	"net/netip"

	"github.com/gopacket/gopacket/layers"
)

// Reason says why LayerDecoder.Decode did not produce a segment.
type Reason uint8

const (
	ReasonNone            Reason = iota // decoded
	ReasonUnsupportedLink               // a link type this package does not decode
	ReasonNotIP                         // ARP, LLDP, ... : not IPv4 or IPv6
	ReasonNotTCP                        // UDP, ICMP, ...
	ReasonFragment                      // an IP fragment; fragments are not reassembled
	ReasonTruncated                     // the snap length cut the headers
	ReasonMalformed                     // headers that cannot be right
	numReasons
)

var reasonNames = [numReasons]string{
	ReasonNone:            "decoded",
	ReasonUnsupportedLink: "unsupported-link",
	ReasonNotIP:           "not-ip",
	ReasonNotTCP:          "not-tcp",
	ReasonFragment:        "ip-fragment",
	ReasonTruncated:       "truncated-headers",
	ReasonMalformed:       "malformed",
}

func (r Reason) String() string {
	if r < numReasons {
		return reasonNames[r]
	}
	return "unknown"
}

// DecodeStats counts Decode outcomes, indexed by Reason (ReasonNone counts
// decoded segments).
type DecodeStats [numReasons]uint64

// Link types as numbers: some have no gopacket name, and 12/14 mean raw IP
// only on some systems (DLT_RAW's value differs between BSDs).
const (
	linkNull     = 0
	linkEthernet = 1
	linkRaw12    = 12
	linkRaw14    = 14
	linkRaw      = 101
	linkLoop     = 108
	linkSLL      = 113
	linkIPv4     = 228
	linkIPv6     = 229
	linkSLL2     = 276
)

// LinkTypeSupported reports whether LayerDecoder decodes packets of lt.
func LinkTypeSupported(lt layers.LinkType) bool {
	switch lt {
	case linkNull, linkEthernet, linkRaw12, linkRaw14, linkRaw, linkLoop, linkSLL, linkIPv4, linkIPv6, linkSLL2:
		return true
	}
	return false
}

const (
	etherIPv4  = 0x0800
	etherIPv6  = 0x86dd
	etherVLAN  = 0x8100 // 802.1Q
	etherQinQ  = 0x88a8 // 802.1ad
	etherQinQ1 = 0x9100 // pre-standard QinQ
	maxVLANs   = 8
	maxIPv6Ext = 8
)

// LayerDecoder decodes the link, IP and TCP headers of a Packet into a
// Segment, in place and without allocating. It is used by one goroutine;
// it keeps counters of its outcomes.
type LayerDecoder struct {
	last  Reason
	stats DecodeStats
}

// NewLayerDecoder returns a decoder with zeroed counters.
func NewLayerDecoder() *LayerDecoder { return &LayerDecoder{} }

// Reason says why the last Decode returned false (ReasonNone if it did not).
func (d *LayerDecoder) Reason() Reason { return d.last }

// Stats returns the outcome counters since the decoder was made.
func (d *LayerDecoder) Stats() DecodeStats { return d.stats }

// Decode fills s from p and reports whether p holds a TCP segment. s.TCP is
// decoded with layers.TCP.DecodeFromBytes; its payload points into p.Data
// and is trimmed of link-layer padding by the IP length. When Decode
// returns false, Reason says why and s is partly overwritten.
func (d *LayerDecoder) Decode(p *Packet, s *Segment) (ok bool) {
	r := d.decode(p, s)
	d.last = r
	d.stats[r]++
	return r == ReasonNone
}

func (d *LayerDecoder) decode(p *Packet, s *Segment) Reason {
	b := p.Data
	var ether uint16 // 0: the IP version nibble decides
	switch p.LinkType {
	case linkEthernet:
		if len(b) < 14 {
			return d.short(p)
		}
		ether, b = uint16(b[12])<<8|uint16(b[13]), b[14:]
	case linkSLL:
		if len(b) < 16 {
			return d.short(p)
		}
		ether, b = uint16(b[14])<<8|uint16(b[15]), b[16:]
	case linkSLL2:
		if len(b) < 20 {
			return d.short(p)
		}
		ether, b = uint16(b[0])<<8|uint16(b[1]), b[20:]
	case linkNull, linkLoop:
		// A 4-byte address family: host byte order of the capturing
		// machine for Null, big-endian for Loop. Families fit in a byte,
		// so whichever end byte is set names it.
		if len(b) < 4 {
			return d.short(p)
		}
		fam := b[3]
		if p.LinkType == linkNull && b[3] == 0 {
			fam = b[0]
		}
		if b[1] != 0 || b[2] != 0 {
			return ReasonNotIP
		}
		switch fam {
		case 2: // AF_INET everywhere
			ether = etherIPv4
		case 10, 24, 28, 30: // AF_INET6: Linux, NetBSD/OpenBSD, FreeBSD, Darwin
			ether = etherIPv6
		default:
			return ReasonNotIP
		}
		b = b[4:]
	case linkRaw, linkRaw12, linkRaw14:
	case linkIPv4:
		ether = etherIPv4
	case linkIPv6:
		ether = etherIPv6
	default:
		return ReasonUnsupportedLink
	}
	for range maxVLANs {
		if ether != etherVLAN && ether != etherQinQ && ether != etherQinQ1 {
			break
		}
		if len(b) < 4 {
			return d.short(p)
		}
		ether, b = uint16(b[2])<<8|uint16(b[3]), b[4:]
	}
	if ether == 0 {
		if len(b) < 1 {
			return d.short(p)
		}
		switch b[0] >> 4 {
		case 4:
			ether = etherIPv4
		case 6:
			ether = etherIPv6
		default:
			return ReasonNotIP
		}
	}
	var (
		tcp       []byte
		truncated bool
		cut       int // IP payload bytes beyond the captured ones
		src, dst  netip.Addr
	)
	switch ether {
	case etherIPv4:
		if len(b) < 20 {
			return d.short(p)
		}
		ihl := int(b[0]&0x0f) * 4
		if b[0]>>4 != 4 || ihl < 20 {
			return ReasonMalformed
		}
		if len(b) < ihl {
			return d.short(p)
		}
		total := int(b[2])<<8 | int(b[3])
		switch {
		case total == 0:
			// Segmentation offload on the capturing host: the length
			// is not filled in yet; the captured bytes are the packet.
		case total < ihl:
			return ReasonMalformed
		case total <= len(b):
			b = b[:total] // drop Ethernet padding and trailers
		default:
			truncated = p.Truncated() // cut by the snap length, else a wrong length field: the bytes are the packet
			cut = total - len(b)
		}
		if b[6]&0x20 != 0 || (b[6]&0x1f != 0 || b[7] != 0) {
			return ReasonFragment // more fragments, or a non-zero offset
		}
		if b[9] != 6 {
			return ReasonNotTCP
		}
		src = netip.AddrFrom4([4]byte(b[12:16]))
		dst = netip.AddrFrom4([4]byte(b[16:20]))
		tcp = b[ihl:]
	case etherIPv6:
		if len(b) < 40 {
			return d.short(p)
		}
		if b[0]>>4 != 6 {
			return ReasonMalformed
		}
		plen := int(b[4])<<8 | int(b[5])
		switch {
		case plen == 0:
			// A jumbogram, or segmentation offload: the captured bytes
			// are the packet.
		case 40+plen <= len(b):
			b = b[:40+plen]
		default:
			truncated = p.Truncated() // as for IPv4
			cut = 40 + plen - len(b)
		}
		src = netip.AddrFrom16([16]byte(b[8:24]))
		dst = netip.AddrFrom16([16]byte(b[24:40]))
		next, rest := b[6], b[40:]
		for i := 0; next != 6; i++ {
			if i == maxIPv6Ext {
				return ReasonMalformed
			}
			var n int
			switch next {
			case 0, 43, 60: // hop-by-hop, routing, destination options
				if len(rest) < 2 {
					return d.short(p)
				}
				n = (int(rest[1]) + 1) * 8
			case 51: // authentication header
				if len(rest) < 2 {
					return d.short(p)
				}
				n = (int(rest[1]) + 2) * 4
			case 44:
				return ReasonFragment
			default:
				return ReasonNotTCP
			}
			if len(rest) < n {
				return d.short(p)
			}
			next, rest = rest[0], rest[n:]
		}
		tcp = rest
	default:
		return ReasonNotIP
	}
	// What gopacket's DecodeFromBytes would reject, decodeTCP must not see.
	if len(tcp) < 20 {
		return d.short(p)
	}
	off := int(tcp[12]>>4) * 4
	if off < 20 {
		return ReasonMalformed
	}
	if off > len(tcp) {
		return d.short(p)
	}
	decodeTCP(&s.TCP, tcp, off)
	s.Frame = p.Frame
	s.Time = p.Time
	s.Src = netip.AddrPortFrom(src, uint16(s.TCP.SrcPort))
	s.Dst = netip.AddrPortFrom(dst, uint16(s.TCP.DstPort))
	s.Truncated = truncated || p.Truncated()
	s.Cut = 0
	if truncated {
		s.Cut = cut
	}
	return ReasonNone
}

// short classifies headers that end early: cut by the snap length, or
// simply too short to be real.
func (d *LayerDecoder) short(p *Packet) Reason {
	if p.Truncated() {
		return ReasonTruncated
	}
	return ReasonMalformed
}

// decodeTCP fills t from the header at b, whose data offset off was checked
// (20 <= off <= len(b)): every field layers.TCP.DecodeFromBytes sets except
// the options, which nothing in kwatch reads. Parsing them (gopacket's loop
// over every option, allocating for MPTCP ones) cost more than the rest of
// the link, IP and TCP decoding together.
func decodeTCP(t *layers.TCP, b []byte, off int) {
	t.SrcPort = layers.TCPPort(binary.BigEndian.Uint16(b[0:2]))
	t.DstPort = layers.TCPPort(binary.BigEndian.Uint16(b[2:4]))
	t.Seq = binary.BigEndian.Uint32(b[4:8])
	t.Ack = binary.BigEndian.Uint32(b[8:12])
	t.DataOffset = b[12] >> 4
	flags := b[13]
	t.FIN = flags&0x01 != 0
	t.SYN = flags&0x02 != 0
	t.RST = flags&0x04 != 0
	t.PSH = flags&0x08 != 0
	t.ACK = flags&0x10 != 0
	t.URG = flags&0x20 != 0
	t.ECE = flags&0x40 != 0
	t.CWR = flags&0x80 != 0
	t.NS = b[12]&0x01 != 0
	t.Window = binary.BigEndian.Uint16(b[14:16])
	t.Checksum = binary.BigEndian.Uint16(b[16:18])
	t.Urgent = binary.BigEndian.Uint16(b[18:20])
	t.Options = t.Options[:0]
	t.Padding = nil
	t.Multipath = false
	t.Contents = b[:off]
	t.Payload = b[off:]
}
