package pcapgen

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/kwatch/kwatch/internal/enum"
)

// Format is the capture file format.
type Format uint8

const (
	// FormatAuto picks pcapng for a ".pcapng" or ".pcapng.gz" path in
	// WriteFile, and classic pcap (microseconds) otherwise.
	FormatAuto Format = iota
	// FormatPCAP is classic pcap, microsecond timestamps, little-endian.
	FormatPCAP
	// FormatPCAPNanos is classic pcap with nanosecond timestamps.
	FormatPCAPNanos
	// FormatPCAPBigEndian is FormatPCAP written big-endian.
	FormatPCAPBigEndian
	// FormatPCAPNanosBigEndian is FormatPCAPNanos written big-endian.
	FormatPCAPNanosBigEndian
	// FormatPCAPNG is pcapng (one section, one interface, nanoseconds).
	FormatPCAPNG
)

var formatNames = [...]string{"auto", "pcap", "pcap-ns", "pcap-be", "pcap-ns-be", "pcapng"}

func (f Format) String() string { return enum.Name(formatNames[:], f, "unknown format") }

// ParseFormat reads a Format name as String spells it.
func ParseFormat(s string) (Format, error) {
	for i, n := range formatNames {
		if n == s {
			return Format(i), nil
		}
	}
	return 0, fmt.Errorf("pcapgen: unknown format %q (want one of %s)", s, strings.Join(formatNames[:], ", "))
}

// formatFor resolves FormatAuto from a file name.
func formatFor(f Format, path string) Format {
	if f != FormatAuto {
		return f
	}
	if strings.HasSuffix(path, ".pcapng") || strings.HasSuffix(path, ".pcapng.gz") {
		return FormatPCAPNG
	}
	return FormatPCAP
}

// DefaultSnaplen is the snap length written when Options.Snaplen is 0.
const DefaultSnaplen = 262144

// packetWriter writes packets given as a header part and a payload part,
// cutting them at the snap length and recording the original length.
type packetWriter interface {
	writePacket(t time.Time, hdr, payload []byte) error
	flush() error
}

// newPacketWriter writes a file header for format f to w and returns a
// writer for its packets. f must not be FormatAuto.
func newPacketWriter(w io.Writer, f Format, link layers.LinkType, snaplen int) (packetWriter, error) {
	if snaplen <= 0 {
		snaplen = DefaultSnaplen
	}
	switch f {
	case FormatAuto, FormatPCAP, FormatPCAPNanos, FormatPCAPBigEndian, FormatPCAPNanosBigEndian:
		pw := &pcapWriter{w: bufio.NewWriterSize(w, 1<<20), snaplen: snaplen}
		pw.nanos = f == FormatPCAPNanos || f == FormatPCAPNanosBigEndian
		pw.order = binary.LittleEndian
		if f == FormatPCAPBigEndian || f == FormatPCAPNanosBigEndian {
			pw.order = binary.BigEndian
		}
		if err := pw.writeHeader(link); err != nil {
			return nil, err
		}
		return pw, nil
	case FormatPCAPNG:
		ng, err := pcapgo.NewNgWriterInterface(w, pcapgo.NgInterface{
			Name:                "kwatch0",
			LinkType:            link,
			SnapLength:          uint32(snaplen),
			TimestampResolution: 9,
		}, pcapgo.NgWriterOptions{SectionInfo: pcapgo.NgSectionInfo{Application: "kwatch pcapgen"}})
		if err != nil {
			return nil, fmt.Errorf("pcapgen: pcapng header: %w", err)
		}
		return &ngWriter{w: ng, snaplen: snaplen}, nil
	default:
		return nil, fmt.Errorf("pcapgen: unknown format %d", f)
	}
}

// pcapWriter is a classic pcap writer. pcapgo.Writer only writes
// little-endian files and takes each packet as one slice; this one writes
// both byte orders and takes header and payload apart, so the bulk generator
// never copies a payload to frame it.
type pcapWriter struct {
	w       *bufio.Writer
	order   binary.ByteOrder
	nanos   bool
	snaplen int
	rec     [16]byte
}

func (p *pcapWriter) writeHeader(link layers.LinkType) error {
	var h [24]byte
	magic := uint32(0xa1b2c3d4)
	if p.nanos {
		magic = 0xa1b23c4d
	}
	p.order.PutUint32(h[0:], magic)
	p.order.PutUint16(h[4:], 2)
	p.order.PutUint16(h[6:], 4)
	p.order.PutUint32(h[16:], uint32(p.snaplen))
	p.order.PutUint32(h[20:], uint32(link))
	_, err := p.w.Write(h[:])
	return err
}

func (p *pcapWriter) writePacket(t time.Time, hdr, payload []byte) error {
	orig := len(hdr) + len(payload)
	hdr, payload = cut(hdr, payload, p.snaplen)
	frac := t.Nanosecond()
	if !p.nanos {
		frac /= 1000
	}
	p.order.PutUint32(p.rec[0:], uint32(t.Unix()))
	p.order.PutUint32(p.rec[4:], uint32(frac))
	p.order.PutUint32(p.rec[8:], uint32(len(hdr)+len(payload)))
	p.order.PutUint32(p.rec[12:], uint32(orig))
	if _, err := p.w.Write(p.rec[:]); err != nil {
		return err
	}
	if _, err := p.w.Write(hdr); err != nil {
		return err
	}
	_, err := p.w.Write(payload)
	return err
}

func (p *pcapWriter) flush() error { return p.w.Flush() }

// ngWriter adapts pcapgo.NgWriter, which wants each packet as one slice.
type ngWriter struct {
	w       *pcapgo.NgWriter
	snaplen int
	buf     []byte
}

func (n *ngWriter) writePacket(t time.Time, hdr, payload []byte) error {
	orig := len(hdr) + len(payload)
	hdr, payload = cut(hdr, payload, n.snaplen)
	n.buf = append(append(n.buf[:0], hdr...), payload...)
	ci := gopacket.CaptureInfo{Timestamp: t, CaptureLength: len(n.buf), Length: orig}
	return n.w.WritePacket(ci, n.buf)
}

func (n *ngWriter) flush() error { return n.w.Flush() }

// cut shortens hdr+payload to at most snaplen bytes.
func cut(hdr, payload []byte, snaplen int) ([]byte, []byte) {
	if len(hdr) >= snaplen {
		return hdr[:snaplen], nil
	}
	if len(hdr)+len(payload) > snaplen {
		payload = payload[:snaplen-len(hdr)]
	}
	return hdr, payload
}

// gzipWriter wraps w in gzip when on; close flushes the gzip stream (never
// closes w).
func gzipWriter(w io.Writer, on bool) (io.Writer, func() error) {
	if !on {
		return w, func() error { return nil }
	}
	zw := gzip.NewWriter(w)
	return zw, zw.Close
}
