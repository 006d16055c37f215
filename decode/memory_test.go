package decode

import (
	"encoding/binary"
	"runtime"
	"testing"

	"github.com/kwatch/kwatch/flow"
	"github.com/kwatch/kwatch/internal/hostilegen"
)

// heapPer returns the heap that the n values open makes hold, per value,
// once collected (the table that keeps them alive is allocated before).
func heapPer[T any](n int, open func(i int) T) uint64 {
	held := make([]T, n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range held {
		held[i] = open(i)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(held)
	return (after.HeapAlloc - min(after.HeapAlloc, before.HeapAlloc)) / uint64(n)
}

// heldPerConn opens n connections (first feeding each the requests in
// first, whole), feeds each the bytes of f on dir but its last 100, in
// 1448-byte segments, and returns the heap they hold, per connection, once
// collected.
func heldPerConn(t *testing.T, n int, opts Options, first []byte, dir flow.Side, f []byte) uint64 {
	f = f[:len(f)-100]
	return heapPer(n, func(int) *Conn {
		c := NewConn(testID, true, opts, SinkFunc(func(*Event) {}))
		if first != nil {
			c.Feed(flow.Client, first, flow.Meta{Frame: 1})
		}
		for p := f; len(p) > 0; p = p[min(len(p), 1448):] {
			c.Feed(dir, p[:min(len(p), 1448)], flow.Meta{Frame: 2})
		}
		return c
	})
}

// TestPartialFrameMemory: an unfinished frame is held only for an identity
// body (SPEC.md section 1), and only up to its identity fields: 200
// connections each holding an unfinished 1 MiB frame of any identity API,
// either direction, take well under 64 MB, recognised by content or by
// --port (issue 12).
func TestPartialFrameMemory(t *testing.T) {
	const target = 64 << 20 / 200 // 200 connections under 64 MB
	produce := reqFrame(t, 0, 9, 1, strp("app"), nil, nil)
	binary.BigEndian.PutUint32(produce, 1<<20)
	produce = append(produce, make([]byte, 1<<20+4-len(produce))...)
	check := func(t *testing.T, opts Options, first []byte, dir flow.Side, f []byte) {
		got := heldPerConn(t, 200, opts, first, dir, f)
		t.Logf("%d bytes held per connection", got)
		if got > target {
			t.Errorf("%d bytes held per connection, want at most %d", got, target)
		}
	}
	t.Run("Produce", func(t *testing.T) { check(t, Options{}, nil, flow.Client, produce) })
	for _, tt := range hostilegen.IdentityFrames() {
		first, f, dir := []byte(nil), tt.Request, flow.Client
		if tt.Response != nil {
			first, f, dir = tt.Request, tt.Response, flow.Broker
		}
		t.Run(tt.Name, func(t *testing.T) { check(t, Options{}, first, dir, f) })
		t.Run(tt.Name+" on a port", func(t *testing.T) { check(t, Options{AssumeKafka: true}, first, dir, f) })
	}
}

// openConnBytes opens n connections on one Decoder, as the pipeline does,
// feeds each the client bytes in first (in one segment), and returns the
// heap they hold, per connection, once collected.
func openConnBytes(n int, opts Options, fromStart bool, first []byte) uint64 {
	d := NewDecoder(opts)
	sink := SinkFunc(func(*Event) {})
	// The IDs are the caller's (the pipeline's stream holds them).
	ids := make([]flow.ConnID, n)
	return heapPer(n, func(i int) *Conn {
		ids[i] = testID
		c := d.NewConn(&ids[i], fromStart, sink)
		c.Feed(flow.Client, first, flow.Meta{Frame: uint64(i + 1)})
		return c
	})
}

// TestOpenConnMemory: a connection open with one request awaiting its
// answer (issue 12's 100k open connections) holds its Conn and a small
// in-flight table, nothing more: no Event of its own, no resync buffers,
// no tag walk, no in-flight table, no frame buffer (a connection recognised
// by content lets go of the one its first frames were held in). The bound
// is the Conn's size class (448) and some slack; before issue 12 it was
// about 1,930 bytes.
func TestOpenConnMemory(t *testing.T) {
	const n = 20_000
	apiVersions := reqFrame(t, 18, 3, 1, strp("app"), nil, apiVersionsReq())
	produce := reqFrame(t, 0, 11, 1, nil, []tag{{0, iid[:]}}, make([]byte, 200))
	tests := []struct {
		name      string
		opts      Options
		fromStart bool
		first     []byte
		max       uint64
	}{
		{name: "ApiVersions, recognised by content", fromStart: true, first: apiVersions, max: 470},
		{name: "ApiVersions, on a port", opts: Options{AssumeKafka: true}, fromStart: true, first: apiVersions, max: 470},
		{name: "Produce, on a port", opts: Options{AssumeKafka: true}, fromStart: true, first: produce, max: 470},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := openConnBytes(n, tt.opts, tt.fromStart, tt.first)
			t.Logf("%d bytes per open connection", got)
			if got > tt.max {
				t.Errorf("%d bytes per open connection, want at most %d", got, tt.max)
			}
		})
	}
}
