// Package wire reads big-endian fields from bytes anyone on the network
// chose. A Reader remembers its first overrun and yields zero values and
// nil slices after it, so that a parser reads every field in a row and
// checks Bad once at the end (as kbin does).
package wire

import "encoding/binary"

// Reader reads fields from B in order.
type Reader struct {
	B   []byte
	Bad bool // a read ran past the end (or a caller gave up)
}

// Take returns the next n bytes, or nil once the reader is bad or fewer
// than n remain (it is bad then).
func (r *Reader) Take(n int) []byte {
	if r.Bad || n < 0 || n > len(r.B) {
		r.Bad, r.B = true, nil
		return nil
	}
	v := r.B[:n]
	r.B = r.B[n:]
	return v
}

// Skip steps over n bytes.
func (r *Reader) Skip(n int) { r.Take(n) }

// U8 reads one byte.
func (r *Reader) U8() int {
	if v := r.Take(1); v != nil {
		return int(v[0])
	}
	return 0
}

// U16 reads a big-endian uint16.
func (r *Reader) U16() int {
	if v := r.Take(2); v != nil {
		return int(binary.BigEndian.Uint16(v))
	}
	return 0
}

// Sub takes the next n bytes as a reader of their own, bad if r is.
func (r *Reader) Sub(n int) Reader {
	v := r.Take(n)
	return Reader{B: v, Bad: r.Bad}
}
