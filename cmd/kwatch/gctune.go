package main

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// A soft memory limit below the live heap makes the collector run without
// pause: Go then spends up to half the CPU collecting, and gains nothing.
// A run may legitimately hold more than offlineMemoryLimit (100k open
// connections hold about 190 MB at their peak), so after each collection
// the limit is raised above the live heap, and never below
// offlineMemoryLimit, where it keeps a findings-heavy run's garbage small.
// Up to largeHeap the limit stays a quarter above the live heap (a SYN
// flood's ~45 MB then peaks under 64 MB). Past it, a limit on all of the
// runtime's memory (which counts freed pages not yet returned) left the
// heap a few percent of room and the collector ran every few MB (100k
// connections: 75 collections, 290 MiB peak); GOGC=10 without a limit
// gives the heap a tenth of room, and the peak is 244 MiB for as much CPU
// (GOGC=25: 276 MiB).
const (
	largeHeap          = 64 << 20
	largeHeapGCPercent = 10
)

// gcFor returns the GOGC and the soft memory limit for a live heap of
// live bytes.
func gcFor(live uint64) (percent int, limit int64) {
	if live > largeHeap {
		return largeHeapGCPercent, math.MaxInt64
	}
	l := int64(live)
	return offlineGCPercent, max(offlineMemoryLimit, l+l/4)
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
				percent, limit := gcFor(sample[0].Value.Uint64())
				debug.SetGCPercent(percent)
				debug.SetMemoryLimit(limit)
			}
			arm()
		})
	}
	arm()
}

// gcTick is the object whose collection marks a GC cycle; a pointer keeps
// it out of the tiny allocator, whose blocks free their objects together.
type gcTick struct{ _ *byte }
