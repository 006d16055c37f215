package capture

import (
	"net/netip"
	"time"

	"github.com/gopacket/gopacket/layers"
)

// Packet is one captured packet as a Source returns it. Data is owned by the
// Source and valid only until the next call to Next: copy what you keep.
type Packet struct {
	// Frame is the 1-based packet number across the whole input (Wireshark's
	// numbering for a single file).
	Frame uint64
	Time  time.Time
	// Data holds CaptureLength bytes; Length is the packet's length on the
	// wire. CaptureLength < Length means the snap length cut it.
	Data          []byte
	CaptureLength int
	Length        int
	LinkType      layers.LinkType
}

// Truncated reports whether the capture's snap length cut this packet.
func (p *Packet) Truncated() bool { return p.CaptureLength < p.Length }

// Source yields packets in capture order. Next returns io.EOF at the end of
// the input; any other error ends the input and names the file and frame.
type Source interface {
	Next() (Packet, error)
	Close() error
}

// IntoSource is a Source that can read the next packet into the caller's
// Packet. Next returns 80 bytes by value, copied again at every level of
// the call; on a capture of small packets those copies were a tenth of the
// time spent per packet. Every file Source is an IntoSource.
type IntoSource interface {
	Source
	// NextInto is Next writing into p: p is overwritten whether or not it
	// returns an error, and its Data follows Next's rules.
	NextInto(p *Packet) error
}

// nextInto is Next for an IntoSource: a packet read by NextInto, returned
// by value. Inlined into each Next, the call is devirtualised and the
// packet stays on the stack.
func nextInto(s interface{ NextInto(*Packet) error }) (Packet, error) {
	var p Packet
	err := s.NextInto(&p)
	return p, err
}

// Segment is a TCP segment decoded from a Packet by a LayerDecoder. It is
// reused: valid until the next Decode call. TCP.Payload points into the
// packet's Data, or into the decoder's buffer when the segment's datagram
// was reassembled from fragments (Frame is then the last fragment's).
type Segment struct {
	Frame uint64
	Time  time.Time
	// Src and Dst are the segment's endpoints (IP and TCP port).
	Src, Dst netip.AddrPort
	TCP      layers.TCP
	// Truncated: the snap length cut the packet, so the payload is short.
	Truncated bool
	// Cut is how many payload bytes the snap length cut off the end of
	// TCP.Payload, as the IP length tells; 0 when unknown (no IP length,
	// as with segmentation offload) or not Truncated.
	Cut int
}
