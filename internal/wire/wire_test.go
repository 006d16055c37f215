package wire

import (
	"bytes"
	"testing"
)

func TestReader(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      []byte
		read    func(r *Reader) []int
		want    []int
		wantBad bool
	}{
		{"fields in order", []byte{1, 0x02, 0x03, 9}, func(r *Reader) []int { return []int{r.U8(), r.U16(), r.U8()} }, []int{1, 0x0203, 9}, false},
		{"overrun yields zeros after", []byte{1, 2}, func(r *Reader) []int { return []int{r.U8(), r.U16(), r.U8()} }, []int{1, 0, 0}, true},
		{"skip past the end", []byte{1, 2}, func(r *Reader) []int { r.Skip(3); return []int{r.U8()} }, []int{0}, true},
		{"negative length", []byte{1, 2}, func(r *Reader) []int { r.Skip(-1); return []int{r.U8()} }, []int{0}, true},
		{"sub reads its own bytes", []byte{2, 7, 8, 9}, func(r *Reader) []int { s := r.Sub(r.U8()); return []int{s.U16(), s.U8(), r.U8()} }, []int{0x0708, 0, 9}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Reader{B: bytes.Clone(tc.in)}
			got := tc.read(&r)
			for i := range tc.want {
				if got[i] != tc.want[i] {
					t.Fatalf("read %v, want %v", got, tc.want)
				}
			}
			if r.Bad != tc.wantBad {
				t.Fatalf("Bad = %v, want %v", r.Bad, tc.wantBad)
			}
		})
	}
}
