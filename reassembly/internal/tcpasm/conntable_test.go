package tcpasm

import (
	"math/rand/v2"
	"testing"
)

// TestConnTable checks the table against a Go map through random puts and
// removes, starting small so that it grows and its runs wrap around.
func TestConnTable(t *testing.T) {
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 1))
		tab := newConnTable(1)
		tab.seed = [3]uint64{r.Uint64(), r.Uint64(), r.Uint64()}
		want := map[key]*connection{}
		keys := make([]key, 200)
		for i := range keys {
			keys[i] = key{lo: endpoint{a0: uint64(i % 7), a1: uint64(i)}, hi: endpoint{rest: uint64(i % 3)}}
		}
		for op := range 20000 {
			k := keys[r.IntN(len(keys))]
			if c := want[k]; c != nil {
				if !tab.remove(&k) {
					t.Fatalf("seed %d op %d: remove of a present key failed", seed, op)
				}
				delete(want, k)
			} else {
				if tab.remove(&k) {
					t.Fatalf("seed %d op %d: remove of an absent key succeeded", seed, op)
				}
				c := &connection{key: k}
				tab.put(c)
				want[k] = c
			}
			if tab.n != len(want) {
				t.Fatalf("seed %d op %d: %d entries, want %d", seed, op, tab.n, len(want))
			}
			if op%97 == 0 {
				for i := range keys {
					if got := tab.get(&keys[i]); got != want[keys[i]] {
						t.Fatalf("seed %d op %d: get(%v) = %p, want %p", seed, op, keys[i], got, want[keys[i]])
					}
				}
			}
		}
		if 2*tab.n > len(tab.slots) {
			t.Errorf("table more than half full: %d of %d", tab.n, len(tab.slots))
		}
	}
}
