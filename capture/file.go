package capture

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/gopacket/gopacket/layers"
	"github.com/rs/zerolog"
)

// DefaultMaxRecord bounds a record's captured length when Options.MaxRecord
// is zero. libpcap's largest snap length is 256 KiB; a record claiming more
// is corruption, never a reason to allocate.
const DefaultMaxRecord = 256 << 10

// Options configure a file Source. The zero value is ready to use.
type Options struct {
	// MaxRecord bounds a record's captured length in bytes; a record
	// claiming more ends the input with a corruption error. 0 means
	// DefaultMaxRecord.
	MaxRecord int
	// Mmap memory-maps a plain (not gzipped) regular file instead of
	// reading it: packets are read in place, so bytes the analysis never
	// looks at (the records of a large Produce) are never copied, nor even
	// faulted in. kwatch read with one worker, least CPU time of
	// alternating runs: 84 MB of small packets with a finding each,
	// 0.105 s read against 0.094 s mapped; 1.34 GB of 64 KiB segments,
	// 0.317 s against 0.086 s. The goroutine
	// that reads the Source must run under GuardFaults and CatchFault
	// (pipeline.Run does): a file shortened while mapped faults. Such a
	// Source does not retain (Retain reports false).
	Mmap bool
	// Concat reads several files one after another in the order given
	// (OpenFiles); by default they are merged by packet time.
	Concat bool
	// Logger hears about notable but harmless things (a new pcapng
	// section, interfaces with unsupported link types). Zero value: silent.
	Logger zerolog.Logger
	// Secrets, when set, is given the payload of every pcapng Decryption
	// Secrets Block (its secrets type and data, valid during the call), in
	// file order, before the packets that follow it are returned.
	Secrets func(typ uint32, data []byte)
}

func (o Options) maxRecord() int {
	if o.MaxRecord <= 0 {
		return DefaultMaxRecord
	}
	return o.MaxRecord
}

// windowSize bounds a block a reader accepts: a whole record or pcapng
// packet block (with up to 64 KiB of options) must fit in it. It is also
// the headroom of every readahead chunk, so it is kept no larger.
func (o Options) windowSize() int {
	return o.maxRecord() + 64<<10
}

// Errors wrapped by a *FileError, for errors.Is.
var (
	// ErrNotCapture: the input is neither pcap nor pcapng (nor gzip of one).
	ErrNotCapture = errors.New("not a pcap or pcapng file")
	// ErrTruncated: the input ends in the middle of a header or record.
	ErrTruncated = errors.New("truncated")
	// ErrCorrupt: a header or record is impossible (bad length, unknown
	// interface, bad byte-order magic).
	ErrCorrupt = errors.New("corrupt")
)

// FileError is the error that ends a file Source: it names the file and,
// once packets have started, the frame the bad record would have had.
type FileError struct {
	File  string
	Frame uint64 // 0 when the error is not at a packet (file header, open)
	Err   error
}

func (e *FileError) Error() string {
	if e.Frame == 0 {
		return fmt.Sprintf("capture: %s: %v", e.File, e.Err)
	}
	_, n := SplitFrame(e.Frame)
	return fmt.Sprintf("capture: %s: frame %d: %v", e.File, n, e.Err)
}

func (e *FileError) Unwrap() error { return e.Err }

type format uint8

const (
	formatPcap format = iota + 1
	formatPcapng
)

// Magic numbers as the first four bytes read little-endian.
const (
	magicPcapMicro   = 0xa1b2c3d4
	magicPcapNano    = 0xa1b23c4d
	magicPcapMicroBE = 0xd4c3b2a1
	magicPcapNanoBE  = 0x4d3cb2a1
	magicPcapng      = 0x0a0d0d0a
)

// Open opens one pcap or pcapng file, gzip-compressed or not, detected by
// its first bytes rather than its name.
func Open(path string, opts Options) (Source, error) {
	return OpenFiles([]string{path}, opts)
}

// OpenFiles reads several capture files as one capture (SPEC.md 2.1):
// packets merged by time, as mergecap does by default, or with
// Options.Concat in the order given (files rotated by tcpdump -C, read one
// at a time as reading reaches them). Every packet's Frame is its number in
// its own file, with the file's index packed above it (PackFrame). Every
// file is checked to be a capture before OpenFiles returns.
func OpenFiles(paths []string, opts Options) (Source, error) {
	if len(paths) == 0 {
		return nil, errors.New("capture: no input files")
	}
	if len(paths) > 1 && !opts.Concat {
		return openMerged(paths, opts)
	}
	m := &multiSource{paths: paths, opts: opts}
	// Check every file's magic now, so a wrong argument fails before any
	// output rather than halfway through.
	check := opts
	check.Logger = zerolog.Nop() // what reading finds is said when it is read
	for _, p := range paths[1:] {
		r, err := openFile(p, check, 0)
		if err != nil {
			return nil, err
		}
		r.Close()
	}
	r, err := openFile(paths[0], opts, 0)
	if err != nil {
		return nil, err
	}
	m.cur = r
	return m, nil
}

// NewReader reads one capture (pcap, pcapng, or gzip of either) from r;
// name is used in errors. Closing the Source does not close r.
func NewReader(r io.Reader, name string, opts Options) (Source, error) {
	return newFileReader(r, nil, name, opts, nil, 0)
}

type multiSource struct {
	paths []string
	opts  Options
	next  int // index in paths of cur
	cur   *fileReader
	err   error
	// broken holds the errors of files that broke part way (truncated,
	// corrupt) when more files followed: reading goes on with the next
	// one, and the errors end the input in place of io.EOF.
	broken []error
	// mu guards next and cur against Release on another goroutine;
	// retain: every file's window retains (Retainer).
	mu     sync.Mutex
	retain bool
}

func (m *multiSource) Next() (Packet, error) {
	return nextInto(m)
}

// NextInto reads the next packet into p; see IntoSource.
func (m *multiSource) NextInto(p *Packet) error {
	for {
		if m.err != nil {
			return m.err
		}
		err := m.cur.NextInto(p)
		if err == nil {
			return nil
		}
		more := m.next+1 < len(m.paths)
		switch {
		case err == io.EOF:
		case more && (errors.Is(err, ErrTruncated) || errors.Is(err, ErrCorrupt)):
			// Rotated captures are independent files: one that broke
			// does not make the next unreadable.
			m.broken = append(m.broken, err)
		default:
			m.err = err
			if len(m.broken) > 0 {
				m.err = errors.Join(append(m.broken, err)...)
			}
			return m.err
		}
		if !more {
			m.err = io.EOF
			if len(m.broken) > 0 {
				m.err = errors.Join(m.broken...)
			}
			return m.err
		}
		m.cur.Close()
		m.mu.Lock()
		m.next++
		m.mu.Unlock()
		r, err := openFile(m.paths[m.next], m.opts, PackFrame(m.next, 0))
		if err != nil {
			m.err = err
			return err
		}
		m.mu.Lock()
		if m.retain {
			r.win.retain()
		}
		m.cur = r
		m.mu.Unlock()
	}
}

func (m *multiSource) Close() error {
	if m.err == nil {
		m.err = errors.New("capture: source closed")
	}
	return m.cur.Close()
}

// openMapped memory-maps f when it is a plain regular file; ok is false
// when it was not mapped (f is then still open, to be read).
func openMapped(f *os.File, path string, opts Options, frame uint64) (r *fileReader, ok bool, err error) {
	data, unmap, mapped := mapFile(f)
	if !mapped {
		return nil, false, nil
	}
	if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
		unmap() // gzip: read through the decompressor
		return nil, false, nil
	}
	addMapped(data, path)
	c := &mappedCloser{f: f, unmap: func() error { removeMapped(data); return unmap() }}
	r, err = newFileReader(nil, c, path, opts, newFixedWindow(data, opts.windowSize()), frame)
	if err != nil {
		c.Close()
		return nil, true, err
	}
	return r, true, nil
}

func openFile(path string, opts Options, frame uint64) (*fileReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("capture: %w", err)
	}
	// With Options.Mmap a plain (not gzipped) regular file is
	// memory-mapped: packets are read in place, with no copy through a
	// read buffer.
	if opts.Mmap {
		if r, ok, err := openMapped(f, path, opts, frame); ok {
			return r, err
		}
	}
	r, err := newFileReader(f, f, path, opts, nil, frame)
	if err != nil {
		f.Close()
		return nil, err
	}
	return r, nil
}

// fileReader reads one file. Both formats live in one type so that Next is
// a switch, not an interface call per packet.
type fileReader struct {
	name   string
	closer io.Closer
	win    *window
	format format
	max    int
	log    zerolog.Logger
	frame  uint64 // the last frame returned (PackFrame: its file index above)
	err    error  // sticky end of input
	// clamped counts absurd timestamps and if_tsoffsets (pcapng.go).
	clamped uint64

	// pcap
	big     bool
	fracMul int64 // 1000 for microsecond files, 1 for nanosecond
	link    layers.LinkType

	// pcapng
	ng      ngState
	secrets func(typ uint32, data []byte) // Options.Secrets
}

// warnLink says, once per file or interface, that packets of link type lt
// will be counted and not analysed: a capture of the wrong interface
// (USB, radiotap) must not pass for a capture without Kafka.
func (r *fileReader) warnLink(lt layers.LinkType, where string) {
	r.log.Warn().Msgf("%s%s: link type %v (%d) cannot be decoded: its packets are counted, not analysed", r.name, where, lt, int(lt))
}

func newFileReader(src io.Reader, closer io.Closer, name string, opts Options, win *window, frame uint64) (*fileReader, error) {
	r := &fileReader{name: name, closer: closer, max: opts.maxRecord(), log: opts.Logger, frame: frame, secrets: opts.Secrets}
	if win != nil && win.fixed {
		r.win = win
		return r.open(win.buf[:min(4, len(win.buf))], "first bytes")
	}
	// A regular file is read at offsets, from where it stood (standard
	// input redirected from a file need not be at its start).
	file, _ := src.(*os.File)
	var base int64
	if file != nil {
		var err error
		if base, err = file.Seek(0, io.SeekCurrent); err != nil {
			file = nil // not seekable: read it
		}
	}
	size := inputSize(src, file, base)
	head, src, err := sniff(src)
	if err != nil {
		return nil, r.fail(0, err)
	}
	if len(head) == 0 {
		return nil, r.fail(0, fmt.Errorf("empty file: %w", ErrNotCapture))
	}
	what := "first bytes"
	var gz *gzip.Reader
	if len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b {
		if gz, err = gzip.NewReader(src); err != nil {
			return nil, r.fail(0, fmt.Errorf("gzip: %w", err))
		}
		head, src, err = sniff(gz)
		if err != nil {
			return nil, r.fail(0, fmt.Errorf("gzip: %w", err))
		}
		if len(head) == 0 {
			return nil, r.fail(0, fmt.Errorf("empty gzip content: %w", ErrNotCapture))
		}
		what = "first bytes after gunzip"
	}
	switch {
	case gz != nil:
		// The readahead goroutine owns the gzip stream: it closes it when
		// it stops, so Close never races a Read in progress. The
		// gunzipped length is not known.
		r.win = newReadaheadWindow(src, -1, opts.windowSize(), true, func() { _ = gz.Close() })
	case file != nil && size >= 0: // a regular file
		r.win = newFileReadaheadWindow(file, base, size, opts.windowSize())
	default:
		r.win = newReadaheadWindow(src, size, opts.windowSize(), false, nil)
	}
	fr, err := r.open(head, what)
	if err != nil {
		r.win.close()
	}
	return fr, err
}

// open reads the file header once r.win is set; head is the first bytes.
func (r *fileReader) open(head []byte, what string) (*fileReader, error) {
	if len(head) == 0 {
		return nil, r.fail(0, fmt.Errorf("empty file: %w", ErrNotCapture))
	}
	if len(head) == 4 {
		switch le32(head) {
		case magicPcapMicro, magicPcapNano, magicPcapMicroBE, magicPcapNanoBE:
			if err := r.openPcap(); err != nil {
				return nil, err
			}
			return r, nil
		case magicPcapng:
			r.format = formatPcapng
			return r, nil
		}
	}
	return nil, r.fail(0, fmt.Errorf("%w (%s % x)", ErrNotCapture, what, head))
}

// sniff reads up to four bytes and returns them with a reader that yields
// them again followed by the rest of src.
func sniff(src io.Reader) ([]byte, io.Reader, error) {
	head := make([]byte, 4)
	n, err := io.ReadFull(src, head)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return nil, nil, err
	}
	head = head[:n]
	return head, io.MultiReader(bytes.NewReader(head), src), nil
}

func (r *fileReader) fail(frame uint64, err error) error {
	return &FileError{File: r.name, Frame: frame, Err: err}
}

// Next returns the next packet; see Source.
func (r *fileReader) Next() (Packet, error) {
	return nextInto(r)
}

// NextInto reads the next packet into p; see IntoSource.
func (r *fileReader) NextInto(p *Packet) error {
	if r.err != nil {
		return r.err
	}
	var err error
	switch r.format {
	case formatPcap:
		err = r.readPcap(p)
	default:
		*p, err = r.nextPcapng()
	}
	if err != nil {
		r.err = err
	}
	return err
}

// Close releases the file. Next returns an error afterwards.
func (r *fileReader) Close() error {
	if r.err == nil || r.err == io.EOF {
		r.err = r.fail(0, errors.New("source closed"))
	}
	if r.win != nil {
		r.win.close()
	}
	var err error
	if r.closer != nil {
		err = r.closer.Close()
		r.closer = nil
	}
	return err
}

// short turns a short peek into the error that ends the input: a clean EOF
// when nothing of the record was there, else a truncation naming the frame.
func (r *fileReader) short(what string, need, have int, err error) error {
	if have == 0 && err == io.EOF {
		return io.EOF
	}
	return r.truncated(r.frame+1, what, need, have, err)
}

// truncated is the error for a header or record cut short; a read error
// other than EOF (a gzip checksum, an I/O error) is reported as itself.
func (r *fileReader) truncated(frame uint64, what string, need, have int, err error) error {
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return r.fail(frame, fmt.Errorf("reading %s: %w", what, err))
	}
	return r.fail(frame, fmt.Errorf("%w %s (need %d bytes, have %d)", ErrTruncated, what, need, have))
}

func le32(b []byte) uint32 {
	_ = b[3]
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

func be32(b []byte) uint32 {
	_ = b[3]
	return uint32(b[3]) | uint32(b[2])<<8 | uint32(b[1])<<16 | uint32(b[0])<<24
}

func u32(b []byte, big bool) uint32 {
	if big {
		return be32(b)
	}
	return le32(b)
}

func u16(b []byte, big bool) uint16 {
	_ = b[1]
	if big {
		return uint16(b[0])<<8 | uint16(b[1])
	}
	return uint16(b[1])<<8 | uint16(b[0])
}

func packetTime(sec int64, nsec int64) time.Time {
	return time.Unix(sec, nsec).UTC()
}

// mappedCloser unmaps a memory-mapped capture and closes its file.
type mappedCloser struct {
	f     *os.File
	unmap func() error
}

func (c *mappedCloser) Close() error {
	err := c.unmap()
	if cerr := c.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// inputSize is how many bytes src holds from here, or -1 when that is not
// known up front: a regular file's length past base, or an in-memory
// reader's unread length.
func inputSize(src io.Reader, file *os.File, base int64) int64 {
	if file != nil {
		if fi, err := file.Stat(); err == nil && fi.Mode().IsRegular() {
			return max(fi.Size()-base, 0)
		}
		return -1
	}
	if l, ok := src.(interface{ Len() int }); ok {
		return int64(l.Len())
	}
	return -1
}
