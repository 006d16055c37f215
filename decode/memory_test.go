package decode

import (
	"encoding/binary"
	"runtime"
	"testing"
)

// heldPerConn feeds n connections the first held bytes of a frame of key
// (a header, then body bytes up to 1 MiB less 100, in 1448-byte segments)
// and returns the heap they hold, per connection, once collected.
func heldPerConn(t *testing.T, n int, key, ver int16, opts Options) uint64 {
	const size = 1 << 20
	f := reqFrame(t, key, ver, 1, strp("app"), nil, nil)
	binary.BigEndian.PutUint32(f, size)
	f = append(f, make([]byte, size-100-len(f))...)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	conns := make([]*Conn, n)
	for i := range conns {
		c := NewConn(testID, true, opts, SinkFunc(func(*Event) {}))
		for p := f; len(p) > 0; p = p[min(len(p), 1448):] {
			c.Feed(ClientToBroker, p[:min(len(p), 1448)], Meta{Frame: 1})
		}
		conns[i] = c
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(conns)
	runtime.KeepAlive(f)
	return (after.HeapAlloc - min(after.HeapAlloc, before.HeapAlloc)) / uint64(n)
}

// TestPartialFrameMemory: an unfinished frame is held only for an identity
// body (SPEC.md section 1), only up to the largest legitimate one
// (bodyLimit), and in a buffer of its own size: 200 connections each
// holding an unfinished 1 MiB ApiVersions frame take well under 64 MB,
// recognised by content or by --port; one holding a heartbeat (1 MiB
// allowed) holds about that, not the 2-3x of a buffer grown by doubling.
func TestPartialFrameMemory(t *testing.T) {
	const target = 64 << 20 / 200 // 200 connections under 64 MB
	for _, tt := range []struct {
		name     string
		key, ver int16
		opts     Options
		max      uint64
	}{
		{"ApiVersions by content", keyAPIVersions, 3, Options{}, target},
		{"ApiVersions on a port", keyAPIVersions, 3, Options{AssumeKafka: true}, target},
		{"Produce", 0, 9, Options{}, target},
		{"ConsumerGroupHeartbeat", keyConsumerGroupHeartbeat, 0, Options{}, 1<<20 + 64<<10},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := heldPerConn(t, 200, tt.key, tt.ver, tt.opts)
			t.Logf("%d bytes held per connection", got)
			if got > tt.max {
				t.Errorf("%d bytes held per connection, want at most %d", got, tt.max)
			}
		})
	}
}
