package audit

import "testing"

// TestKeptFindings: findings kept in chunks come back in the order made,
// from any index, whatever the chunk boundaries.
func TestKeptFindings(t *testing.T) {
	tests := []struct {
		name  string
		n     int
		froms []int
	}{
		{name: "none", n: 0, froms: []int{0, 1, -1}},
		{name: "one", n: 1, froms: []int{0, 1, 2}},
		{name: "first chunk boundary", n: 17, froms: []int{0, 15, 16, 17}},
		{name: "past the largest chunk", n: 3000, froms: []int{0, 1023, 1024, 2047, 2048, 2999, 3000, 5000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var k keptFindings
			for i := range tt.n {
				k.add(&Finding{Frame: uint64(i)}, 10)
			}
			if k.n != tt.n || k.bytes != 10*tt.n {
				t.Fatalf("n %d, bytes %d; want %d, %d", k.n, k.bytes, tt.n, 10*tt.n)
			}
			for _, c := range k.chunks {
				if cap(c) > maxKeptChunk {
					t.Errorf("a chunk of %d findings, over %d", cap(c), maxKeptChunk)
				}
			}
			for _, from := range tt.froms {
				got := k.since(from)
				start := min(max(from, 0), tt.n)
				if got == nil || len(got) != tt.n-start {
					t.Fatalf("since(%d): %d findings (nil %v), want %d", from, len(got), got == nil, tt.n-start)
				}
				for i := range got {
					if got[i].Frame != uint64(start+i) {
						t.Fatalf("since(%d)[%d] is frame %d, want %d", from, i, got[i].Frame, start+i)
					}
				}
			}
		})
	}
}
