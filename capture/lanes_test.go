package capture

import (
	"bytes"
	"io"
	"math/rand/v2"
	"testing"
	"time"
)

// slowReaderAt delays every read, as a page cache copy slower than the
// analysis would.
type slowReaderAt struct {
	r     io.ReaderAt
	delay time.Duration
}

func (s slowReaderAt) ReadAt(p []byte, off int64) (int, error) {
	time.Sleep(s.delay)
	return s.r.ReadAt(p, off)
}

// TestReadLanesAdapt: a regular file is read by one lane while the window's
// reader has nothing to wait for, and by two, alternating from the split
// on, once it has had to wait; either way every byte comes out in order,
// plain and retained (chunks held and released in batches).
func TestReadLanesAdapt(t *testing.T) {
	const size = 24*chunkData + 12345
	data := make([]byte, size)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	const bound = 64 << 10
	tests := []struct {
		name      string
		readDelay time.Duration // per chunk read
		pause     time.Duration // per chunk consumed
		retain    bool
		wantSplit bool
	}{
		{name: "slow reads split", readDelay: 3 * time.Millisecond, wantSplit: true},
		{name: "slow reads split, retained", readDelay: 3 * time.Millisecond, retain: true, wantSplit: true},
		{name: "slow analysis stays on one lane", pause: 3 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newFileReadaheadWindow(slowReaderAt{bytes.NewReader(data), tt.readDelay}, 0, size, bound)
			defer w.close()
			if tt.retain {
				w.retain()
			}
			type held struct {
				off  int
				b    []byte
				mark uint64
			}
			var queue []held
			off, since := 0, 0
			for off < size {
				n := min(1+rng.IntN(bound), size-off)
				b, err := w.peek(n)
				if len(b) != n {
					t.Fatalf("at %d: peek(%d) gave %d bytes: %v", off, n, len(b), err)
				}
				if !bytes.Equal(b, data[off:off+n]) {
					t.Fatalf("at %d: wrong bytes", off)
				}
				if tt.retain {
					queue = append(queue, held{off, b, w.mark()})
					if len(queue) > 200 {
						h := queue[0]
						queue = queue[1:]
						if !bytes.Equal(h.b, data[h.off:h.off+len(h.b)]) {
							t.Fatalf("bytes at %d changed while held", h.off)
						}
						w.release(h.mark)
					}
				}
				w.advance(n)
				off += n
				if since += n; tt.pause > 0 && since >= chunkData {
					since = 0
					time.Sleep(tt.pause)
				}
			}
			if b, err := w.peek(1); len(b) != 0 || err != io.EOF {
				t.Fatalf("after the end: %d bytes, %v", len(b), err)
			}
			ra := w.ra
			if split := ra.split.Load() != noSplit; split != tt.wantSplit {
				t.Errorf("lane 1 joined: %v, want %v (the window waited %d times)", split, tt.wantSplit, ra.waits.Load())
			}
		})
	}
}
