package main

import "testing"

func TestMemoryLimitFollowsLiveHeap(t *testing.T) {
	for _, tc := range []struct {
		live uint64
		want int64
	}{
		{0, offlineMemoryLimit},
		{offlineMemoryLimit / 2, offlineMemoryLimit},
		{offlineMemoryLimit, offlineMemoryLimit * 5 / 4},
		{largeHeap - 4, (largeHeap - 4) * 5 / 4},
		{largeHeap, largeHeap * 3 / 2},
		{400 << 20, 600 << 20},
		{1 << 63, 3 << 57},
	} {
		if got := memoryLimitFor(tc.live); got != tc.want {
			t.Errorf("memoryLimitFor(%d) = %d, want %d", tc.live, got, tc.want)
		}
	}
}
