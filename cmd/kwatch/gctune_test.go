package main

import (
	"math"
	"testing"
)

func TestGCFollowsLiveHeap(t *testing.T) {
	for _, tc := range []struct {
		live    uint64
		percent int
		limit   int64
	}{
		{0, offlineGCPercent, offlineMemoryLimit},
		{offlineMemoryLimit / 2, offlineGCPercent, offlineMemoryLimit},
		{offlineMemoryLimit, offlineGCPercent, offlineMemoryLimit * 5 / 4},
		{largeHeap, offlineGCPercent, largeHeap * 5 / 4},
		{largeHeap + 1, largeHeapGCPercent, math.MaxInt64},
		{1 << 63, largeHeapGCPercent, math.MaxInt64},
	} {
		if p, l := gcFor(tc.live); p != tc.percent || l != tc.limit {
			t.Errorf("gcFor(%d) = %d, %d; want %d, %d", tc.live, p, l, tc.percent, tc.limit)
		}
	}
}
