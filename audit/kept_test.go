package audit

import "testing"

// TestKeptFindings: kept findings come back in the order made from any
// index; the slice grows to the bound past keptJump (one growth, not
// doublings); the final report shares them when in report order and
// copies them when not.
func TestKeptFindings(t *testing.T) {
	tests := []struct {
		name   string
		o      Options
		frames []uint64 // of the findings kept, in order
		froms  []int
		// wantCap: the slice's capacity after the last add.
		wantCap int
		shared  bool // final shares the kept slice
	}{
		{name: "none", o: Options{MaxFindings: 10, MaxFindingBytes: 1 << 20}, froms: []int{0, 1, -1}},
		{name: "one", o: Options{MaxFindings: 10, MaxFindingBytes: 1 << 20}, frames: []uint64{7}, froms: []int{0, 1, 2}, wantCap: 16, shared: true},
		{name: "out of report order", o: Options{MaxFindings: 10, MaxFindingBytes: 1 << 20}, frames: []uint64{9, 3, 5}, froms: []int{0, 2}, wantCap: 16},
		{name: "past the jump, to the bound", o: Options{MaxFindings: 5000, MaxFindingBytes: 1 << 30}, frames: seqFrames(3000),
			froms: []int{0, 1023, 1024, 2999, 3000, 5000}, wantCap: 5000, shared: true},
		{name: "bound by bytes", o: Options{MaxFindings: 1 << 20, MaxFindingBytes: 2000 * findingBase}, frames: seqFrames(1500),
			froms: []int{0, 1499}, wantCap: 2000, shared: true},
		{name: "bound too large to reserve: doubles", o: Options{MaxFindings: 1 << 20, MaxFindingBytes: 1 << 40}, frames: seqFrames(1500),
			froms: []int{0}, wantCap: 2048, shared: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := newKept(&tt.o)
			for _, fr := range tt.frames {
				k.add(&Finding{Frame: fr, seq: fr}, 10)
			}
			if len(k.fs) != len(tt.frames) || k.bytes != 10*len(tt.frames) || cap(k.fs) != tt.wantCap {
				t.Fatalf("len %d, cap %d, bytes %d; want %d, %d, %d", len(k.fs), cap(k.fs), k.bytes, len(tt.frames), tt.wantCap, 10*len(tt.frames))
			}
			for _, from := range tt.froms {
				got := k.since(from)
				start := min(max(from, 0), len(tt.frames))
				if got == nil || len(got) != len(tt.frames)-start {
					t.Fatalf("since(%d): %d findings (nil %v), want %d", from, len(got), got == nil, len(tt.frames)-start)
				}
				for i := range got {
					if got[i].Frame != tt.frames[start+i] {
						t.Fatalf("since(%d)[%d] is frame %d, want %d", from, i, got[i].Frame, tt.frames[start+i])
					}
				}
			}
			final := k.final()
			if final == nil || len(final) != len(tt.frames) || cap(final) != len(final) {
				t.Fatalf("final: len %d cap %d (nil %v), want len = cap = %d", len(final), cap(final), final == nil, len(tt.frames))
			}
			if shared := len(final) > 0 && &final[0] == &k.fs[0]; shared != tt.shared {
				t.Errorf("final shares the kept slice: %v, want %v", shared, tt.shared)
			}
			sortFindings(final)
			if k.add(&Finding{Frame: 1 << 40}, 1); len(tt.frames) > 0 && k.fs[0].Frame != tt.frames[0] {
				t.Errorf("sorting the final report reordered the kept findings: first is frame %d, want %d", k.fs[0].Frame, tt.frames[0])
			}
		})
	}
}

func seqFrames(n int) []uint64 {
	fs := make([]uint64, n)
	for i := range fs {
		fs[i] = uint64(i + 1)
	}
	return fs
}
