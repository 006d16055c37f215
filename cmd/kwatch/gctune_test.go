package main

import "testing"

func TestMemoryLimitFollowsLiveHeap(t *testing.T) {
	for _, tc := range []struct {
		live uint64
		want int64
	}{
		{0, offlineMemoryLimit},
		{offlineMemoryLimit / 2, offlineMemoryLimit},
		{offlineMemoryLimit, offlineMemoryLimit * 3 / 2},
		{500 << 20, 750 << 20},
		{1 << 63, 3 << 60},
	} {
		if got := memoryLimitFor(tc.live); got != tc.want {
			t.Errorf("memoryLimitFor(%d) = %d, want %d", tc.live, got, tc.want)
		}
	}
}
