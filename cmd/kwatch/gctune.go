package main

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// Read and dump collect only when their memory reaches a soft limit
// (GOGC off): a findings-heavy run allocates some 20 MB in all (the kept
// findings, the read buffers), so it then never collects, where GOGC=400
// collected once, scanning the 5 MB of globals (200k findings: 9% less
// CPU, least of 15 alternating runs).
//
// A soft memory limit below the live heap makes the collector run without
// pause: Go then spends up to half the CPU collecting, and gains nothing.
// A run may legitimately hold more than offlineMemoryLimit (100k open
// connections hold about 190 MB at their peak), so after each collection
// the limit is raised above the memory in use, and never below
// offlineMemoryLimit, where it keeps a findings-heavy run's garbage small.
// Up to largeHeap the limit stays a sixteenth of the live heap above the
// memory in use (a SYN flood's ~45 MB then peaks under 64 MB). Past it,
// a limit on all of the runtime's memory (which counts freed pages not
// yet returned) left the heap a few percent of room and the collector ran
// every few MB (100k connections: 75 collections, 290 MiB peak); GOGC=10
// without a limit gives the heap a tenth of room, and the peak is 244 MiB
// for as much CPU (GOGC=25: 276 MiB).
const (
	largeHeap          = 64 << 20
	largeHeapGCPercent = 10
	// gcOff is SetGCPercent's "collect only at the memory limit".
	gcOff = -1
)

// gcFor returns the GOGC and the soft memory limit after a collection
// that left live bytes of heap, with used bytes of memory in use in all
// (what the limit counts). The limit leaves room for a sixteenth of the live
// heap above what is in use: a limit a quarter above the live heap alone
// left no room once the runtime's other memory (heap spans, metadata,
// stacks) was counted, and the collector ran back to back (100k open
// connections: 122 collections, 7.8 s of CPU; with it, 60 and 6-7 s, most
// of them at GOGC=10 past largeHeap). A SYN flood's ~45 MB peaks at 50 MiB
// (an eighth: 58 MiB).
func gcFor(live, used uint64) (percent int, limit int64) {
	if live > largeHeap {
		return largeHeapGCPercent, math.MaxInt64
	}
	return gcOff, max(offlineMemoryLimit, int64(used+live/16))
}

// followLiveHeap adjusts the soft memory limit after every collection,
// from a finalizer that re-arms itself: one metrics read per cycle.
func followLiveHeap() {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"}}
	var arm func()
	arm = func() {
		tick := new(gcTick)
		runtime.SetFinalizer(tick, func(*gcTick) {
			metrics.Read(sample)
			if ok := sample[0].Value.Kind() == metrics.KindUint64 && sample[1].Value.Kind() == metrics.KindUint64 &&
				sample[2].Value.Kind() == metrics.KindUint64; ok {
				used := sample[1].Value.Uint64() - min(sample[2].Value.Uint64(), sample[1].Value.Uint64())
				percent, limit := gcFor(sample[0].Value.Uint64(), used)
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
