package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// A soft memory limit below the live heap makes the collector run without
// pause: Go then spends up to half the CPU collecting, and gains nothing.
// A run may legitimately hold more than offlineMemoryLimit (100k open
// connections hold about 500 MB; that read took 9.3 s of CPU, over half of
// it in the collector), so after each collection the limit is raised to
// half again the live heap (GOGC=50: memory matters more here than time), and never below
// offlineMemoryLimit, where it keeps a findings-heavy run's garbage small.

// memoryLimitFor is the soft limit for a live heap of live bytes.
func memoryLimitFor(live uint64) int64 {
	return max(offlineMemoryLimit, int64(min(live, 1<<61))*3/2)
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
