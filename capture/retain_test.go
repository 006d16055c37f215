package capture

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestRetain: packets read from a retaining Source keep their bytes while
// they are held, across many chunk changes, and releasing lets reading go
// on for longer than the chunks could hold at once; a lagging holder sees
// exactly what a plain read returns. Both a file by path (multiSource, two
// files) and a reader.
func TestRetain(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var recs []rec
	for i := range 6000 {
		// Sizes up to 9000 bytes, so records straddle chunks often.
		data := make([]byte, 1+rng.IntN(9000))
		for j := range data {
			data[j] = byte(rng.Uint32())
		}
		recs = append(recs, rec{sec: uint32(i), data: data})
	}
	file := pcapFile(false, false, 1, recs)
	path := writeTemp(t, "a.pcap", file)
	path2 := writeTemp(t, "b.pcap", file)

	for _, lag := range []int{1, 50, 400} {
		t.Run(fmt.Sprint("files/lag=", lag), func(t *testing.T) {
			src, err := OpenFiles([]string{path, path2}, Options{})
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
