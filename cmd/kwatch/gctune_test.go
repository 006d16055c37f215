package main

import (
	"math"
	"testing"
)

func TestGCFollowsLiveHeap(t *testing.T) {
	const mb = 1 << 20
	for _, tc := range []struct {
		live, used uint64
		percent    int
		limit      int64
	}{
		{0, 0, gcOff, offlineMemoryLimit},
		{8 * mb, 20 * mb, gcOff, offlineMemoryLimit},
		// The runtime's other memory counts: room above what is in use,
		// not above the live heap alone.
		{32 * mb, 40 * mb, gcOff, 42 * mb},
		{largeHeap, largeHeap + 16*mb, gcOff, largeHeap*17/16 + 16*mb},
		{largeHeap + 1, largeHeap + 16*mb, largeHeapGCPercent, math.MaxInt64},
		{1 << 63, 1 << 63, largeHeapGCPercent, math.MaxInt64},
	} {
		if p, l := gcFor(tc.live, tc.used); p != tc.percent || l != tc.limit {
			t.Errorf("gcFor(%d, %d) = %d, %d; want %d, %d", tc.live, tc.used, p, l, tc.percent, tc.limit)
		}
	}
}
