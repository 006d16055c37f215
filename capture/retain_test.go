package capture

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"testing"
)

// TestRetain: packets read from a retaining Source keep their bytes while
// they are held, across many chunk changes, and releasing lets reading go
// on for longer than the chunks could hold at once; a lagging holder sees
// exactly what a plain read returns. Both a file by path (multiSource, two
// files) and a reader.
func TestRetain(t *testing.T) {
	// Sizes up to 9000 bytes, so records straddle chunks often.
	recs := randomRecs(1, 6000, 9000)
	file := pcapFile(false, false, 1, recs)
	path := writeTemp(t, "a.pcap", file)
	path2 := writeTemp(t, "b.pcap", file)

	for _, lag := range []int{1, 50, 400} {
		t.Run(fmt.Sprint("files/lag=", lag), func(t *testing.T) {
			src, err := OpenFiles([]string{path, path2}, Options{Concat: true})
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			checkRetained(t, src, append(recs, recs...), lag)
		})
		t.Run(fmt.Sprint("reader/lag=", lag), func(t *testing.T) {
			src, err := NewReader(bytes.NewReader(file), "r", Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			checkRetained(t, src, recs, lag)
		})
	}
}

// checkRetained reads src while holding the last lag packets (by their
// data, uncopied), checking each against want when it is let go and
// releasing up to the mark taken when it was read.
func checkRetained(t *testing.T, src Source, want []rec, lag int) {
	t.Helper()
	r, ok := src.(Retainer)
	if !ok || !r.Retain() {
		t.Fatal("a file source does not retain")
	}
	type held struct {
		i    int
		data []byte
		mark uint64
	}
	var queue []held
	check := func(h held) {
		if !bytes.Equal(h.data, want[h.i].data) {
			t.Fatalf("packet %d changed while held", h.i+1)
		}
		r.Release(h.mark)
	}
	for i := range want {
		p, err := src.Next()
		if err != nil {
			t.Fatalf("packet %d: %v", i+1, err)
		}
		queue = append(queue, held{i: i, data: p.Data, mark: r.Mark()})
		if len(queue) > lag {
			check(queue[0])
			queue = queue[1:]
		}
	}
	for _, h := range queue {
		check(h)
	}
	if _, err := src.Next(); err == nil {
		t.Fatal("more packets than written")
	}
}

// TestRegularFileAtOffset: a regular file handed over as a reader (standard
// input redirected from a file) is read at offsets from where it stands,
// not from its start, by the parallel readers; packets straddle their
// chunks.
func TestRegularFileAtOffset(t *testing.T) {
	recs := randomRecs(3, 3000, 3000)
	file := pcapFile(false, true, 1, recs)
	junk := []byte("not part of the capture")
	path := writeTemp(t, "offset.pcap", append(append([]byte(nil), junk...), file...))
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Seek(int64(len(junk)), io.SeekStart); err != nil {
		t.Fatal(err)
	}
	src, err := NewReader(f, "stdin", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	got, err := readAll(t, src)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(recs) {
		t.Fatalf("%d packets, want %d", len(got), len(recs))
	}
	for i, p := range got {
		if !bytes.Equal(p.Data, recs[i].data) {
			t.Fatalf("packet %d differs", i+1)
		}
	}
}

// randomRecs returns n records of 1 to max random bytes, one a second.
func randomRecs(seed uint64, n, max int) []rec {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	recs := make([]rec, n)
	for i := range recs {
		data := make([]byte, 1+rng.IntN(max))
		for j := range data {
			data[j] = byte(rng.Uint32())
		}
		recs[i] = rec{sec: uint32(i), data: data}
	}
	return recs
}
