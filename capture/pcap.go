package capture

import (
	"fmt"

	"github.com/gopacket/gopacket/layers"
)

// pcap: a 24-byte file header, then records of a 16-byte header (seconds,
// fraction, captured length, original length) and the captured bytes. The
// magic's byte order is the file's byte order; a1b23c4d means nanoseconds.

func (r *fileReader) openPcap() error {
	h, err := r.win.peek(24)
	if len(h) < 24 {
		return r.truncated(0, "pcap file header", 24, len(h), err)
	}
	r.format = formatPcap
	switch le32(h) {
	case magicPcapMicro:
		r.fracMul = 1000
	case magicPcapNano:
		r.fracMul = 1
	case magicPcapMicroBE:
		r.big, r.fracMul = true, 1000
	case magicPcapNanoBE:
		r.big, r.fracMul = true, 1
	}
	// The link-type field's upper bits carry FCS information (libpcap's
	// LT_LINKTYPE); the link type is the low bits.
	r.link = layers.LinkType(u32(h[20:], r.big) & 0x03ffffff)
	if !LinkTypeSupported(r.link) {
		r.warnLink(r.link, "")
	}
	r.win.advance(24)
	return nil
}

// readPcap reads the next record into p.
func (r *fileReader) readPcap(p *Packet) error {
	h, err := r.win.peek(16)
	if len(h) < 16 {
		return r.short("record header", 16, len(h), err)
	}
	var sec, frac, incl, orig uint32
	if r.big {
		sec, frac, incl, orig = be32(h), be32(h[4:]), be32(h[8:]), be32(h[12:])
	} else {
		sec, frac, incl, orig = le32(h), le32(h[4:]), le32(h[8:]), le32(h[12:])
	}
	if incl > uint32(r.max) {
		return r.fail(r.frame+1, fmt.Errorf("%w record: captured length %d exceeds the %d-byte bound", ErrCorrupt, incl, r.max))
	}
	n := 16 + int(incl)
	b, err := r.win.peek(n)
	if len(b) < n {
		return r.truncated(r.frame+1, "record", n-16, len(b)-16, err)
	}
	r.win.advance(n)
	r.frame++
	length := int(orig)
	if length < int(incl) {
		length = int(incl) // a writer's bug; keep Truncated meaningful
	}
	p.Frame = r.frame
	p.Time = packetTime(int64(sec), int64(frac)*r.fracMul)
	p.Data = b[16:n:n]
	p.CaptureLength = int(incl)
	p.Length = length
	p.LinkType = r.link
	return nil
}
