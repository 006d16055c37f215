package decode

import (
	"math/rand/v2"
	"testing"
)

// TestIDTableMatchesMap drives idTable and a Go map with the same random
// puts and deletes (keys from small and wide ranges, so probe runs wrap and
// collide) and checks they agree after every step.
func TestIDTableMatchesMap(t *testing.T) {
	tests := []struct {
		name  string
		keys  int32 // keys drawn from [0, keys) or, if negative, anywhere
		steps int
	}{
		{name: "few keys", keys: 8, steps: 20000},
		{name: "many keys", keys: 5000, steps: 50000},
		{name: "any int32", keys: -1, steps: 20000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(tt.steps)))
			var tab idTable
			ref := map[int32]uint64{}
			key := func() int32 {
				if tt.keys < 0 {
					return int32(rng.Uint32())
				}
				return rng.Int32N(tt.keys)
			}
			for step := 0; step < tt.steps; step++ {
				k := key()
				if rng.IntN(3) == 0 {
					if i := tab.find(k); i >= 0 {
						tab.del(i)
					}
					delete(ref, k)
				} else {
					tab.put(k, inflight{seq: uint64(step)})
					ref[k] = uint64(step)
				}
				if tab.live != len(ref) {
					t.Fatalf("step %d: live %d, want %d", step, tab.live, len(ref))
				}
				if step%97 == 0 {
					for k, seq := range ref {
						i := tab.find(k)
						if i < 0 || tab.slots[i].r.seq != seq {
							t.Fatalf("step %d: key %d lost or stale", step, k)
						}
					}
				}
				if q := key(); tab.find(q) >= 0 != (func() bool { _, ok := ref[q]; return ok })() {
					t.Fatalf("step %d: find(%d) disagrees with the map", step, q)
				}
			}
		})
	}
}
