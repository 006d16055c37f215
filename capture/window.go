package capture

import "io"

// window is a minimal buffered reader that hands out slices of its own
// buffer (zero-copy). A slice returned by peek is valid until the next peek,
// which may move the buffered bytes to the front of the buffer.
type window struct {
	src  io.Reader
	buf  []byte
	r, w int
	err  error // sticky read error, reported once the buffer is drained
	// off is the input offset of buf[r], for error messages.
	off int64
	// zeroReads counts consecutive empty reads without an error.
	zeroReads int
	// fixed: buf is the whole input (a read-only memory-mapped file), so
	// nothing is ever read into it or moved within it.
	fixed bool
	// bound is the largest block a reader accepts: the buffer size, the
	// same for a fixed window as for a read one (so errors do not depend
	// on how the file was read).
	bound int
	// dropped: buf[:dropped] of a fixed window was released (dropPages),
	// so resident memory does not grow with the file's length.
	dropped int
}

// dropEvery is how far a fixed window reads past what it last released
// before releasing again; dropLag keeps the last bytes (the packet just
// returned, whose Data must stay valid) mapped.
const (
	dropEvery = 8 << 20
	dropLag   = 4 << 20
)

// newFixedWindow is a window over the whole input in data.
func newFixedWindow(data []byte, bound int) *window {
	return &window{buf: data, w: len(data), err: io.EOF, fixed: true, bound: bound}
}

func newWindow(src io.Reader, size int) *window {
	return &window{src: src, buf: make([]byte, size), bound: size}
}

// peek returns the next n bytes without consuming them. If fewer than n bytes
// remain before the end of the input it returns what is there and the read
// error (io.EOF at a clean end). n must not exceed the buffer size.
func (w *window) peek(n int) ([]byte, error) {
	if w.w-w.r >= n {
		return w.buf[w.r : w.r+n], nil
	}
	return w.fill(n)
}

func (w *window) fill(n int) ([]byte, error) {
	if w.fixed {
		return w.buf[w.r:w.w], io.EOF
	}
	if n > len(w.buf) {
		return w.buf[w.r:w.w], io.ErrShortBuffer
	}
	if w.r > 0 && w.r+n > len(w.buf) {
		copy(w.buf, w.buf[w.r:w.w])
		w.w -= w.r
		w.r = 0
	}
	for w.w-w.r < n && w.err == nil {
		m, err := w.src.Read(w.buf[w.w:])
		w.w += m
		if m > 0 {
			w.zeroReads = 0
		}
		if err != nil {
			w.err = err
		} else if m == 0 {
			// A reader that keeps returning 0, nil would spin forever.
			w.zeroReads++
			if w.zeroReads > 100 {
				w.err = io.ErrNoProgress
			}
		}
	}
	if w.w-w.r >= n {
		return w.buf[w.r : w.r+n], nil
	}
	return w.buf[w.r:w.w], w.err
}

// skip consumes n bytes, reading past the buffer if needed (for blocks
// larger than the buffer that are skipped, never looked at). It returns
// the number of bytes actually skipped.
func (w *window) skip(n int64) (int64, error) {
	if avail := int64(w.w - w.r); n <= avail {
		w.r += int(n)
		w.off += n
		return n, nil
	}
	done := int64(w.w - w.r)
	w.off += done
	if w.fixed {
		w.r = w.w
		return done, io.EOF
	}
	w.r, w.w = 0, 0
	for done < n {
		if w.err != nil {
			return done, w.err
		}
		want := n - done
		if want > int64(len(w.buf)) {
			want = int64(len(w.buf))
		}
		m, err := w.src.Read(w.buf[:want])
		done += int64(m)
		w.off += int64(m)
		if err != nil {
			w.err = err
		}
		if m == 0 && err == nil {
			w.zeroReads++
			if w.zeroReads > 100 {
				w.err = io.ErrNoProgress
			}
		}
	}
	return done, nil
}

// advance consumes n bytes that a successful peek returned.
func (w *window) advance(n int) {
	w.r += n
	w.off += int64(n)
	if w.fixed && w.r-w.dropped >= dropEvery+dropLag {
		end := (w.r - dropLag) &^ (pageSize - 1)
		dropPages(w.buf[w.dropped:end])
		w.dropped = end
	}
}
