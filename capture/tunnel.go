package capture

// Tunnels as mirrored traffic arrives (SPEC 2.1 "Encapsulation"): VXLAN and
// GENEVE on their UDP ports, GRE (RFC 2784 with RFC 2890's key and
// sequence number) carrying Ethernet, IP or ERSPAN types I, II and III, and
// IP in IP. unwrap steps over one tunnel header at a time; LayerDecoder's
// loop then decodes the inner packet as it would a captured one, so VLAN
// tags, IP options, extension headers and fragments inside a tunnel are
// handled as outside it. Only the innermost packet names the connection.

// Tunnel is a kind of encapsulation LayerDecoder unwraps.
type Tunnel uint8

const (
	TunnelVXLAN   Tunnel = iota // UDP 4789, inner Ethernet
	TunnelGENEVE                // UDP 6081, inner Ethernet or IP
	TunnelGRE                   // GRE with Ethernet (0x6558) or IP inside
	TunnelERSPAN2               // GRE 0x88BE: ERSPAN type II (and type I, which has no header)
	TunnelERSPAN3               // GRE 0x22EB: ERSPAN type III
	TunnelIPIP                  // IPv4 or IPv6 directly in IPv4 or IPv6 (protocols 4 and 41)
	numTunnels
)

var tunnelNames = [numTunnels]string{
	TunnelVXLAN:   "vxlan",
	TunnelGENEVE:  "geneve",
	TunnelGRE:     "gre",
	TunnelERSPAN2: "erspan2",
	TunnelERSPAN3: "erspan3",
	TunnelIPIP:    "ipip",
}

func (t Tunnel) String() string { return name(tunnelNames[:], t) }

// TunnelStats counts the tunnel headers LayerDecoder unwrapped, indexed by
// Tunnel: a packet in two tunnels counts in both.
type TunnelStats [numTunnels]uint64

// Named returns the non-zero counters by tunnel name.
func (s *TunnelStats) Named() map[string]uint64 {
	out := map[string]uint64{}
	for k, n := range s {
		if n > 0 {
			out[Tunnel(k).String()] = n
		}
	}
	return out
}

// Unwrapped returns the tunnel counters since the decoder was made.
func (d *LayerDecoder) Unwrapped() TunnelStats { return d.tunnels }

const (
	// maxTunnels bounds the tunnels unwrapped in one packet; a packet
	// nested deeper is ReasonTunnelDepth.
	maxTunnels = 4

	protoIPIP = 4
	protoUDP  = 17
	protoIPv6 = 41
	protoGRE  = 47

	portVXLAN  = 4789
	portGENEVE = 6081

	etherTEB     = 0x6558 // transparent Ethernet bridging
	etherERSPAN2 = 0x88be
	etherERSPAN3 = 0x22eb
)

// unwrap steps over the tunnel header that ip's payload starts with: the
// inner EtherType (0x0800 or 0x86DD for a bare IP packet), the inner bytes
// and the tunnel's kind. A payload that is no tunnel kwatch knows is
// ReasonNotTCP: it is not audited, whatever it holds.
func unwrap(p *Packet, ip *ipInfo) (uint16, []byte, Tunnel, Reason) {
	b := ip.payload
	switch ip.proto {
	case protoIPIP:
		return etherIPv4, b, TunnelIPIP, ReasonNone
	case protoIPv6:
		return etherIPv6, b, TunnelIPIP, ReasonNone
	case protoUDP:
		return udpTunnel(p, b)
	case protoGRE:
		return gre(p, b)
	}
	return notTunnel(ReasonNotTCP)
}

// notTunnel is unwrap's answer for bytes it does not step over.
func notTunnel(r Reason) (uint16, []byte, Tunnel, Reason) { return 0, nil, 0, r }

// udpTunnel recognises VXLAN and GENEVE by the UDP destination port and a
// header that fits the protocol; any other UDP datagram is ReasonNotTCP.
func udpTunnel(p *Packet, b []byte) (uint16, []byte, Tunnel, Reason) {
	if len(b) < 8 {
		return notTunnel(short(p))
	}
	port := uint16(b[2])<<8 | uint16(b[3])
	b = b[8:]
	switch port {
	case portVXLAN:
		// RFC 7348: flags RRRRIRRR with I set, then the VNI.
		switch {
		case len(b) < 8:
			return notTunnel(short(p))
		case b[0]&0x08 == 0:
			return notTunnel(ReasonNotTCP)
		}
		ether, b, r := innerEthernet(p, b[8:])
		return ether, b, TunnelVXLAN, r
	case portGENEVE:
		return geneve(p, b)
	}
	return notTunnel(ReasonNotTCP)
}

// geneve steps over a GENEVE header (RFC 8926) and its options. AWS Gateway
// Load Balancer sends the inner IP packet with no Ethernet header.
func geneve(p *Packet, b []byte) (uint16, []byte, Tunnel, Reason) {
	switch {
	case len(b) < 8:
		return notTunnel(short(p))
	case b[0]>>6 != 0: // version 0 only
		return notTunnel(ReasonNotTCP)
	}
	return byProtocol(p, b, 8+int(b[0]&0x3f)*4, TunnelGENEVE)
}

// byProtocol steps over the n-byte header of a tunnel of kind k whose
// bytes 2-3 name what follows, as GENEVE's and GRE's do: Ethernet
// (transparent Ethernet bridging) or a bare IP packet.
func byProtocol(p *Packet, b []byte, n int, k Tunnel) (uint16, []byte, Tunnel, Reason) {
	if len(b) < n {
		return notTunnel(short(p))
	}
	ether := uint16(b[2])<<8 | uint16(b[3])
	b = b[n:]
	switch ether {
	case etherTEB:
		ether, b, r := innerEthernet(p, b)
		return ether, b, k, r
	case etherIPv4, etherIPv6:
		return ether, b, k, ReasonNone
	}
	return notTunnel(ReasonNotTCP)
}

// gre steps over a GRE header (RFC 2784, with RFC 2890's key and sequence
// number) and, for ERSPAN, the ERSPAN header.
func gre(p *Packet, b []byte) (uint16, []byte, Tunnel, Reason) {
	if len(b) < 4 {
		return notTunnel(short(p))
	}
	flags := b[0]
	// Version 0 only (1 is PPTP's); routing (RFC 1701) and the recursion
	// and reserved bits must be clear, as RFC 2784 has receivers check.
	if flags&0x4f != 0 || b[1] != 0 {
		return notTunnel(ReasonNotTCP)
	}
	// 4 bytes more for each of checksum (0x80), key (0x20) and sequence (0x10).
	n := 4 + 4*int(flags>>7+flags>>5&1+flags>>4&1)
	switch uint16(b[2])<<8 | uint16(b[3]) {
	case etherERSPAN2:
		if len(b) >= n {
			return erspan2(p, b[n:], flags&0x10 != 0)
		}
	case etherERSPAN3:
		if len(b) >= n {
			return erspan3(p, b[n:])
		}
	}
	return byProtocol(p, b, n, TunnelGRE)
}

// erspan2 steps over ERSPAN type II's 8-byte header (version 1). Type I
// has the same GRE protocol, no sequence number and no header.
func erspan2(p *Packet, b []byte, seq bool) (uint16, []byte, Tunnel, Reason) {
	if seq {
		if len(b) < 8 {
			return notTunnel(short(p))
		}
		if b[0]>>4 != 1 {
			return notTunnel(ReasonNotTCP)
		}
		b = b[8:]
	}
	ether, b, r := innerEthernet(p, b)
	return ether, b, TunnelERSPAN2, r
}

// erspan3 steps over ERSPAN type III's 12-byte header (version 2) and the
// 8-byte platform-specific subheader its O bit announces. Its frame type
// says whether an Ethernet frame (0) or a bare IP packet (2) follows.
func erspan3(p *Packet, b []byte) (uint16, []byte, Tunnel, Reason) {
	switch {
	case len(b) < 12:
		return notTunnel(short(p))
	case b[0]>>4 != 2:
		return notTunnel(ReasonNotTCP)
	}
	n := 12
	if b[11]&0x01 != 0 {
		n += 8
	}
	if len(b) < n {
		return notTunnel(short(p))
	}
	ft := b[10] >> 2 & 0x1f
	b = b[n:]
	switch ft {
	case 0:
		ether, b, r := innerEthernet(p, b)
		return ether, b, TunnelERSPAN3, r
	case 2:
		return 0, b, TunnelERSPAN3, ReasonNone // the version nibble decides
	}
	return notTunnel(ReasonNotTCP)
}

// innerEthernet strips a tunnelled Ethernet header; its VLAN tags are left
// to the decoder's loop.
func innerEthernet(p *Packet, b []byte) (uint16, []byte, Reason) {
	if len(b) < 14 {
		return 0, nil, short(p)
	}
	return uint16(b[12])<<8 | uint16(b[13]), b[14:], ReasonNone
}
