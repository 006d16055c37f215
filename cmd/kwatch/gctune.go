package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// A soft memory limit below the live heap makes the collector run without
// pause: Go then spends up to half the CPU collecting, and gains nothing.
// A run may legitimately hold more than offlineMemoryLimit (100k open
// connections hold about 500 MB; that read took 10 s of CPU, over half of
// it in the collector), so after each collection the limit is raised above
// the live heap, and never below offlineMemoryLimit, where it keeps a
// findings-heavy run's garbage small. Up to largeHeap the limit stays a
// quarter above the live heap (a SYN flood's ~45 MB then peaks under
// 64 MB); past it, half above, since a collection costs more the more it
// scans (100k connections: 3 s of CPU against 8 s at a quarter).
const largeHeap = 128 << 20

// memoryLimitFor is the soft limit for a live heap of live bytes.
func memoryLimitFor(live uint64) int64 {
	l := int64(min(live, 1<<58))
	if l < largeHeap {
		return max(offlineMemoryLimit, l+l/4)
	}
	return l + l/2
}

// followLiveHeap adjusts the soft memory limit after every collection,
// from a finalizer that re-arms itself: one metrics read per cycle.
func followLiveHeap() {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	var arm func()
	arm = func() {
		tick := new(gcTick)
		runtime.SetFinalizer(tick, func(*gcTick) {
			metrics.Read(sample)
			if sample[0].Value.Kind() == metrics.KindUint64 {
				debug.SetMemoryLimit(memoryLimitFor(sample[0].Value.Uint64()))
			}
			arm()
		})
	}
	arm()
}

// gcTick is the object whose collection marks a GC cycle; a pointer keeps
// it out of the tiny allocator, whose blocks free their objects together.
type gcTick struct{ _ *byte }
