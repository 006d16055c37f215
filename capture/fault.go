package capture

import (
	"runtime/debug"
	"sync"
	"unsafe"
)

// A memory-mapped capture (Options.Mmap) is read in place. When another
// process shortens a mapped file while it is read (tcpdump -W reopening
// its oldest file, a copy over it), touching a page past the new end
// raises SIGBUS, which would kill the process. The goroutine that touches
// packet data runs under GuardFaults and CatchFault, which turn that fault
// into a *ShrunkError for the run to end with, as a read error would.

// mapped are the live mappings, to tell a fault on one of them from any
// other.
var mapped struct {
	sync.Mutex
	spans []mapSpan
}

type mapSpan struct {
	lo, hi uintptr
	name   string
}

func spanOf(b []byte) (lo, hi uintptr) {
	lo = uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return lo, lo + uintptr(len(b))
}

// addMapped records the mapping b of the capture name.
func addMapped(b []byte, name string) {
	lo, hi := spanOf(b)
	mapped.Lock()
	mapped.spans = append(mapped.spans, mapSpan{lo: lo, hi: hi, name: name})
	mapped.Unlock()
}

// removeMapped forgets the mapping b, before it is unmapped.
func removeMapped(b []byte) {
	lo, _ := spanOf(b)
	mapped.Lock()
	defer mapped.Unlock()
	for i, s := range mapped.spans {
		if s.lo == lo {
			mapped.spans = append(mapped.spans[:i], mapped.spans[i+1:]...)
			return
		}
	}
}

// mappedName names the capture whose mapping holds addr.
func mappedName(addr uintptr) (string, bool) {
	mapped.Lock()
	defer mapped.Unlock()
	for _, s := range mapped.spans {
		if s.lo <= addr && addr < s.hi {
			return s.name, true
		}
	}
	return "", false
}

// ShrunkError ends a run whose memory-mapped capture was shortened by
// another process while it was read.
type ShrunkError struct{ Name string }

func (e *ShrunkError) Error() string {
	return "capture " + e.Name + ": the file shrank while it was read (truncated or rewritten by another process)"
}

// GuardFaults makes a memory fault in the calling goroutine panic instead
// of crashing the process, until the returned function restores the
// setting. Pair it with CatchFault:
//
//	defer capture.GuardFaults()()
//	defer capture.CatchFault(&err)
func GuardFaults() (restore func()) {
	old := debug.SetPanicOnFault(true)
	return func() { debug.SetPanicOnFault(old) }
}

// CatchFault, deferred, recovers a fault on a mapped capture's memory into
// *err (a *ShrunkError). Any other panic goes on.
func CatchFault(err *error) {
	r := recover()
	if r == nil {
		return
	}
	if f, ok := r.(interface{ Addr() uintptr }); ok {
		if name, ok := mappedName(f.Addr()); ok {
			*err = &ShrunkError{Name: name}
			return
		}
	}
	panic(r)
}
