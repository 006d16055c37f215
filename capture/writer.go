package capture

import (
	"fmt"
	"os"
	"runtime"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// PcapngWriter writes packets to a pcapng file (`-w FILE.pcapng`) as they
// come, through pcapgo's NgWriter: one section, one interface, nanosecond
// timestamps. It buffers; Close (or Flush) writes out what is buffered. One
// goroutine at a time.
type PcapngWriter struct {
	f    *os.File
	w    *pcapgo.NgWriter
	path string
}

// NewPcapngWriter creates (or truncates) path with mode 0600, since a
// capture holds credentials, and writes the section and interface headers.
func NewPcapngWriter(path string, linkType layers.LinkType, snaplen int) (*PcapngWriter, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("capture: %w", err)
	}
	// O_CREATE's mode does not apply to a file that already existed.
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return nil, fmt.Errorf("capture: %w", err)
	}
	intf := pcapgo.DefaultNgInterface
	intf.LinkType = linkType
	intf.SnapLength = uint32(max(snaplen, 0))
	w, err := pcapgo.NewNgWriterInterface(f, intf, pcapgo.NgWriterOptions{SectionInfo: pcapgo.NgSectionInfo{
		Hardware: runtime.GOARCH, OS: runtime.GOOS, Application: "kwatch",
	}})
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("capture: %s: %w", path, err)
	}
	return &PcapngWriter{f: f, w: w, path: path}, nil
}

// WritePacket appends p. Its link type is the writer's, whatever p says.
func (w *PcapngWriter) WritePacket(p *Packet) error {
	ci := gopacket.CaptureInfo{Timestamp: p.Time, CaptureLength: len(p.Data), Length: max(p.Length, len(p.Data))}
	if err := w.w.WritePacket(ci, p.Data); err != nil {
		return fmt.Errorf("capture: %s: frame %d: %w", w.path, p.Frame, err)
	}
	return nil
}

// Flush writes buffered packets to the file.
func (w *PcapngWriter) Flush() error {
	if err := w.w.Flush(); err != nil {
		return fmt.Errorf("capture: %s: %w", w.path, err)
	}
	return nil
}

// Close flushes and closes the file.
func (w *PcapngWriter) Close() error {
	ferr := w.Flush()
	if err := w.f.Close(); err != nil && ferr == nil {
		ferr = fmt.Errorf("capture: %w", err)
	}
	return ferr
}
