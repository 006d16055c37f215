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
	ReasonFragment                      // an IP fragment held for reassembly, or dropped (FragStats says why)
	ReasonTruncated                     // the snap length cut the headers
	ReasonMalformed                     // headers that cannot be right
	ReasonTunnelDepth                   // tunnels nested deeper than maxTunnels
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
	ReasonTunnelDepth:     "tunnel-too-deep",
}

func (r Reason) String() string { return name(reasonNames[:], r) }

// name is names[v], or "unknown" past the table: the String of Reason,
// Tunnel and FragDrop.
func name[T ~uint8](names []string, v T) string {
	if int(v) < len(names) {
		return names[v]
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
	protoTCP   = 6
)

// LayerDecoder decodes the link, IP and TCP headers of a Packet into a
// Segment, in place and without allocating in the steady state. It unwraps
// the tunnels of tunnel.go (at most maxTunnels deep) and reassembles IPv4
// and IPv6 fragments within the bounds of frag.go, so the segment it gives
// is always the innermost packet's. It is used by one goroutine; it keeps
// counters of its outcomes.
type LayerDecoder struct {
	last    Reason
	stats   DecodeStats
	tunnels TunnelStats
	frags   fragTable
	frag    fragment // the fragment being decoded (here, not on the stack, to spare zeroing it)
}

// NewLayerDecoder returns a decoder with zeroed counters.
func NewLayerDecoder() *LayerDecoder {
	d := &LayerDecoder{}
	d.frags.init()
	return d
}

// Reason says why the last Decode returned false (ReasonNone if it did not).
func (d *LayerDecoder) Reason() Reason { return d.last }

// Stats returns the outcome counters since the decoder was made.
func (d *LayerDecoder) Stats() DecodeStats { return d.stats }

// Decode fills s from p and reports whether p holds a TCP segment. s.TCP is
// decoded with the fields layers.TCP.DecodeFromBytes sets (but options);
// its payload is trimmed of link-layer padding by the IP length and points
// into p.Data, or, for a datagram reassembled from fragments, into the
// decoder's own buffer: either way it is valid until the next Decode. When
// Decode returns false, Reason says why and s is partly overwritten.
func (d *LayerDecoder) Decode(p *Packet, s *Segment) (ok bool) {
	r := d.decode(p, s)
	d.last = r
	d.stats[r]++
	return r == ReasonNone
}

// ipInfo is what an IP header tells the layers above it. src and dst point
// into the packet (4 or 16 bytes); payload is trimmed to the IP length.
type ipInfo struct {
	hdr       []byte // the fixed header: addresses at 12 and 16 (IPv4) or 8 and 24 (IPv6)
	proto     uint8
	payload   []byte
	truncated bool // the IP length exceeds the bytes the snap length left
}

// decode is the hot path: a plain Ethernet/IPv4/TCP packet makes two calls
// (ipv4, decodeTCP); the rest is in small functions.
func (d *LayerDecoder) decode(p *Packet, s *Segment) Reason {
	d.frags.done = false
	var (
		ether uint16
		b     []byte
		r     Reason
	)
	if p.LinkType == linkEthernet && len(p.Data) >= 14 {
		ether, b = uint16(p.Data[12])<<8|uint16(p.Data[13]), p.Data[14:]
	} else if ether, b, r = linkLayer(p); r != ReasonNone {
		return r
	}
	var (
		ip        ipInfo
		truncated bool
	)
	for depth := 0; ; depth++ {
		if ether != etherIPv4 && ether != etherIPv6 {
			if ether, b, r = skipVLANs(p, ether, b); r != ReasonNone {
				return r
			}
		}
		switch ether {
		case etherIPv4:
			r = ipv4(p, b, &ip, &d.frag)
		case etherIPv6:
			r = ipv6(p, b, &ip, &d.frag)
		default:
			return ReasonNotIP
		}
		if r == ReasonFragment {
			r = d.reassemble(p, ether, depth, &ip)
		}
		if r != ReasonNone {
			return r
		}
		truncated = truncated || ip.truncated
		if ip.proto == protoTCP {
			break
		}
		if depth == maxTunnels {
			return ReasonTunnelDepth
		}
		var k Tunnel
		if ether, b, k, r = unwrap(p, &ip); r != ReasonNone {
			return r
		}
		d.tunnels[k]++
	}
	// What gopacket's DecodeFromBytes would reject, decodeTCP must not see.
	tcp := ip.payload
	if len(tcp) < 20 {
		return short(p)
	}
	off := int(tcp[12]>>4) * 4
	if off < 20 {
		return ReasonMalformed
	}
	if off > len(tcp) {
		return short(p)
	}
	decodeTCP(&s.TCP, tcp, off)
	s.Frame = p.Frame
	s.Time = p.Time
	var src, dst netip.Addr
	if h := ip.hdr; h[0]>>4 == 4 {
		src, dst = netip.AddrFrom4([4]byte(h[12:16])), netip.AddrFrom4([4]byte(h[16:20]))
	} else {
		src, dst = netip.AddrFrom16([16]byte(h[8:24])), netip.AddrFrom16([16]byte(h[24:40]))
	}
	s.Src = netip.AddrPortFrom(src, uint16(s.TCP.SrcPort))
	s.Dst = netip.AddrPortFrom(dst, uint16(s.TCP.DstPort))
	s.Truncated = truncated || p.Truncated()
	return ReasonNone
}

// linkLayer strips the link header of p: the EtherType of what follows (0:
// the IP version nibble decides) and the bytes after the header.
func linkLayer(p *Packet) (uint16, []byte, Reason) {
	b := p.Data
	switch p.LinkType {
	case linkEthernet:
		if len(b) < 14 {
			return 0, nil, short(p)
		}
		return uint16(b[12])<<8 | uint16(b[13]), b[14:], ReasonNone
	case linkSLL:
		if len(b) < 16 {
			return 0, nil, short(p)
		}
		return uint16(b[14])<<8 | uint16(b[15]), b[16:], ReasonNone
	case linkSLL2:
		if len(b) < 20 {
			return 0, nil, short(p)
		}
		return uint16(b[0])<<8 | uint16(b[1]), b[20:], ReasonNone
	case linkNull, linkLoop:
		return familyHeader(p)
	case linkRaw, linkRaw12, linkRaw14:
		return 0, b, ReasonNone
	case linkIPv4:
		return etherIPv4, b, ReasonNone
	case linkIPv6:
		return etherIPv6, b, ReasonNone
	}
	return 0, nil, ReasonUnsupportedLink
}

// familyHeader strips the 4-byte address family of Null and Loop: host
// byte order of the capturing machine for Null, big-endian for Loop.
// Families fit in a byte, so whichever end byte is set names it.
func familyHeader(p *Packet) (uint16, []byte, Reason) {
	b := p.Data
	if len(b) < 4 {
		return 0, nil, short(p)
	}
	fam := b[3]
	if p.LinkType == linkNull && b[3] == 0 {
		fam = b[0]
	}
	if b[1] != 0 || b[2] != 0 {
		return 0, nil, ReasonNotIP
	}
	switch fam {
	case 2: // AF_INET everywhere
		return etherIPv4, b[4:], ReasonNone
	case 10, 24, 28, 30: // AF_INET6: Linux, NetBSD/OpenBSD, FreeBSD, Darwin
		return etherIPv6, b[4:], ReasonNone
	}
	return 0, nil, ReasonNotIP
}

// skipVLANs steps over stacked 802.1Q/802.1ad tags and, for an EtherType
// of 0, reads the IP version nibble.
func skipVLANs(p *Packet, ether uint16, b []byte) (uint16, []byte, Reason) {
	for range maxVLANs {
		if ether != etherVLAN && ether != etherQinQ && ether != etherQinQ1 {
			break
		}
		if len(b) < 4 {
			return 0, nil, short(p)
		}
		ether, b = uint16(b[2])<<8|uint16(b[3]), b[4:]
	}
	if ether != 0 {
		return ether, b, ReasonNone
	}
	if len(b) < 1 {
		return 0, nil, short(p)
	}
	switch b[0] >> 4 {
	case 4:
		return etherIPv4, b, ReasonNone
	case 6:
		return etherIPv6, b, ReasonNone
	}
	return 0, nil, ReasonNotIP
}

// reassemble hands the fragment ipv4 or ipv6 found to the fragment table;
// when it completes its datagram, the datagram is decoded in its place.
func (d *LayerDecoder) reassemble(p *Packet, ether uint16, depth int, ip *ipInfo) Reason {
	dg, r := d.frags.add(p, &d.frag, ip, depth)
	if r != ReasonNone {
		return r
	}
	if ether == etherIPv4 {
		return ipv4(p, dg, ip, &d.frag)
	}
	return ipv6(p, dg, ip, &d.frag)
}

// ipv4 decodes an IPv4 header. For a fragment it returns ReasonFragment
// with f filled.
func ipv4(p *Packet, b []byte, ip *ipInfo, f *fragment) Reason {
	if len(b) < 20 {
		return short(p)
	}
	ihl := int(b[0]&0x0f) * 4
	if b[0]>>4 != 4 || ihl < 20 {
		return ReasonMalformed
	}
	if len(b) < ihl {
		return short(p)
	}
	total := int(b[2])<<8 | int(b[3])
	ip.truncated = false
	switch {
	case total == 0:
		// Segmentation offload on the capturing host: the length
		// is not filled in yet; the captured bytes are the packet.
	case total < ihl:
		return ReasonMalformed
	case total <= len(b):
		b = b[:total] // drop Ethernet padding and trailers
	default:
		ip.truncated = p.Truncated() // cut by the snap length, else a wrong length field: the bytes are the packet
	}
	ip.hdr, ip.proto, ip.payload = b, b[9], b[ihl:]
	if b[6]&0x3f != 0 || b[7] != 0 { // more fragments, or a non-zero offset
		f.header = b[:20]
		f.off = (int(b[6]&0x1f)<<8 | int(b[7])) * 8
		f.more = b[6]&0x20 != 0
		f.id = uint32(b[4])<<8 | uint32(b[5])
		return ReasonFragment
	}
	return ReasonNone
}

// ipv6 decodes an IPv6 header and its extension headers. For a fragment it
// returns ReasonFragment with f filled.
func ipv6(p *Packet, b []byte, ip *ipInfo, f *fragment) Reason {
	if len(b) < 40 {
		return short(p)
	}
	if b[0]>>4 != 6 {
		return ReasonMalformed
	}
	plen := int(b[4])<<8 | int(b[5])
	ip.truncated = false
	switch {
	case plen == 0:
		// A jumbogram, or segmentation offload: the captured bytes
		// are the packet.
	case 40+plen <= len(b):
		b = b[:40+plen]
	default:
		ip.truncated = p.Truncated() // as for IPv4
	}
	ip.hdr = b
	next, rest := b[6], b[40:]
	for i := 0; ; i++ {
		var n int
		switch next {
		case 0, 43, 60: // hop-by-hop, routing, destination options
			if len(rest) < 2 {
				return short(p)
			}
			n = (int(rest[1]) + 1) * 8
		case 51: // authentication header
			if len(rest) < 2 {
				return short(p)
			}
			n = (int(rest[1]) + 2) * 4
		case 44: // fragment
			if len(rest) < 8 {
				return short(p)
			}
			f.header = b[:40]
			f.off = int(rest[2])<<8 | int(rest[3]&0xf8)
			f.more = rest[3]&1 != 0
			f.id = binary.BigEndian.Uint32(rest[4:8])
			ip.proto, ip.payload = rest[0], rest[8:]
			if f.off == 0 && !f.more {
				// An atomic fragment (RFC 6946): the whole datagram.
				next, rest = rest[0], rest[8:]
				continue
			}
			return ReasonFragment
		default:
			ip.proto, ip.payload = next, rest
			return ReasonNone
		}
		if i == maxIPv6Ext {
			return ReasonMalformed
		}
		if len(rest) < n {
			return short(p)
		}
		next, rest = rest[0], rest[n:]
	}
}

// short classifies headers that end early: cut by the snap length, or
// simply too short to be real.
func short(p *Packet) Reason {
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
