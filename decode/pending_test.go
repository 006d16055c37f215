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
				if int(tab.live) != len(ref) {
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

// TestPendingSetMatchesModel drives pendingSet and a plain list in arrival
// order with the same random requests (correlation IDs from a small range,
// so that some reuse a pending one), answers and evictions past the cap,
// and checks they agree on every answer, on what is pending and on the
// count dropped.
func TestPendingSetMatchesModel(t *testing.T) {
	type req struct {
		corr int32
		r    inflight
	}
	tests := []struct {
		name  string
		max   int
		corrs int32
	}{
		{name: "cap 1", max: 1, corrs: 4},
		{name: "cap 3, IDs reused", max: 3, corrs: 6},
		{name: "cap 64, IDs reused", max: 64, corrs: 100},
		{name: "cap 64, IDs apart", max: 64, corrs: 1 << 30},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(2, uint64(tt.max)))
			var p pendingSet
			p.init(tt.max)
			var model []req
			var dropped uint64
			find := func(corr int32) int {
				for i, q := range model {
					if q.corr == corr {
						return i
					}
				}
				return -1
			}
			for step := 1; step <= 20000; step++ {
				corr := rng.Int32N(tt.corrs)
				if rng.IntN(2) == 0 {
					r := inflight{key: int16(step % 7), frame: uint64(step), seq: uint64(step)}
					p.add(corr, r)
					if i := find(corr); i >= 0 {
						model = append(model[:i], model[i+1:]...)
						r.reused = true
					} else if len(model) >= tt.max {
						model = model[1:]
						dropped++
					}
					model = append(model, req{corr, r})
				} else {
					got, ok := p.take(corr)
					i := find(corr)
					if ok != (i >= 0) || ok && got != model[i].r {
						t.Fatalf("step %d: take(%d) = %+v %v, want %v", step, corr, got, ok, i >= 0)
					}
					if ok {
						model = append(model[:i], model[i+1:]...)
					}
				}
				if p.len() != len(model) || p.dropped != dropped {
					t.Fatalf("step %d: len %d dropped %d, want %d and %d", step, p.len(), p.dropped, len(model), dropped)
				}
			}
			for _, q := range model {
				if got, ok := p.get(q.corr); !ok || got != q.r {
					t.Errorf("get(%d) = %+v %v, want %+v", q.corr, got, ok, q.r)
				}
			}
			if p.ring != nil && len(p.ring.e) > max(16, 2*tt.max) {
				t.Errorf("a ring of %d for a cap of %d", len(p.ring.e), tt.max)
			}
		})
	}
}
