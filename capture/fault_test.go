package capture

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/kwatch/kwatch/internal/pcapgen"
)

// writeBulk writes a capture of a few hundred kilobytes to a temp file.
func writeBulk(t *testing.T) string {
	t.Helper()
	var b bytes.Buffer
	if _, err := pcapgen.WriteBulk(&b, pcapgen.BulkOptions{Connections: 3, Requests: 60, PayloadSize: 3000, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "shrinking.pcap")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// readGuarded reads src to its end under the fault guard, as pipeline.Run
// does, and returns how many packets it read and how it ended.
func readGuarded(src Source, after int, hook func()) (n int, err error) {
	defer GuardFaults()()
	defer CatchFault(&err)
	for {
		if n == after {
			hook()
		}
		if _, err = src.Next(); err != nil {
			return n, err
		}
		n++
	}
}

// TestMappedFileShrunk: a mapped capture cut short by another process
// while it is read ends the read with a ShrunkError naming it, instead of
// SIGBUS killing the process; the same cut on a file that is read, not
// mapped, is an ordinary truncation.
func TestMappedFileShrunk(t *testing.T) {
	for _, mmap := range []bool{true, false} {
		path := writeBulk(t)
		src, err := Open(path, Options{Mmap: mmap})
		if err != nil {
			t.Fatal(err)
		}
		n, err := readGuarded(src, 2, func() {
			if err := os.Truncate(path, 4096); err != nil {
				t.Fatal(err)
			}
		})
		src.Close()
		var shrunk *ShrunkError
		if mmap && (!errors.As(err, &shrunk) || shrunk.Name != path) {
			t.Errorf("mapped: read %d packets, ended with %v; want a ShrunkError naming %s", n, err, path)
		}
		if !mmap && (err == nil || errors.As(err, &shrunk)) {
			t.Errorf("read: ended with %v; want a truncation error", err)
		}
		if n < 2 {
			t.Errorf("mmap %v: %d packets read before the cut", mmap, n)
		}
	}
}

// TestCatchFaultPassesOtherPanics: only a fault on a mapped capture is
// turned into an error.
func TestCatchFaultPassesOtherPanics(t *testing.T) {
	defer func() {
		if r := recover(); r != "not a fault" {
			t.Errorf("recovered %v; want the original panic", r)
		}
	}()
	var err error
	func() {
		defer CatchFault(&err)
		panic("not a fault")
	}()
	t.Errorf("CatchFault swallowed a panic (err %v)", err)
}

// TestMappedDoesNotRetain: a mapped file's packets are not handed to
// other goroutines uncopied (they lack the fault guard, and the mapping
// goes when the file is closed).
func TestMappedDoesNotRetain(t *testing.T) {
	path := writeBulk(t)
	for _, paths := range [][]string{{path}, {path, path}} {
		src, err := OpenFiles(paths, Options{Mmap: true, Concat: true})
		if err != nil {
			t.Fatal(err)
		}
		if r, ok := src.(Retainer); ok && r.Retain() {
			t.Errorf("%d files mapped: Retain reported true", len(paths))
		}
		src.Close()
	}
}
