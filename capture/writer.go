package capture

import (
	"errors"
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

// NewPcapngWriter creates path with mode 0600, since a capture holds
// credentials, and writes the section and interface headers. It never
// follows a symlink at path (kwatch live opens it as root: a link planted
// in /tmp must not point it at another file), and an existing path is an
// error unless replace is set; then only a regular file is truncated.
func NewPcapngWriter(path string, linkType layers.LinkType, snaplen int, replace bool) (*PcapngWriter, error) {
	flags := os.O_WRONLY | os.O_CREATE | oNoFollow | oNonblock
	if replace {
		flags |= os.O_TRUNC
	} else {
		flags |= os.O_EXCL
	}
	f, err := os.OpenFile(path, flags, 0o600)
	if err != nil {
		// O_EXCL refuses a symlink as existing: say which it is.
		if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&os.ModeSymlink != 0 {
			err = errSymlink
		}
		switch {
		case isSymlinkErr(err):
			return nil, fmt.Errorf("capture: %s is a symbolic link; give the file itself", path)
		case errors.Is(err, os.ErrExist):
			return nil, fmt.Errorf("capture: %s already exists; remove it or let it be replaced (--force)", path)
		}
		return nil, fmt.Errorf("capture: %w", err)
	}
	if err := checkRegular(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("capture: %s: %w", path, err)
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

// checkRegular refuses a device or FIFO opened in place of a file: O_TRUNC
// means nothing to them. (O_NONBLOCK was only there so that opening a FIFO
// cannot hang; on a regular file it changes nothing.)
func checkRegular(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("not a regular file (%v)", fi.Mode().Type())
	}
	return nil
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

// errSymlink stands for an open refused because path is a symlink.
var errSymlink = errors.New("symbolic link")
