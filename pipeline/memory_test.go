package pipeline

import (
	"net/netip"
	"runtime"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kwatch/kwatch/decode"
	"github.com/kwatch/kwatch/flow"
	"github.com/kwatch/kwatch/internal/pcapgen"
	"github.com/kwatch/kwatch/reassembly"
)

// streamBytes opens n streams on one Engine, as its Reassembler would,
// hands each the client bytes in first, and returns the heap they hold,
// per connection, once collected: the pipeline's stream and the decoder's
// state, not the reassembler's.
func streamBytes(n int, opts Options, first []byte) uint64 {
	e := New(opts, decode.SinkFunc(func(*decode.Event) {}))
	streams := make([]reassembly.Stream, n)
	broker := netip.MustParseAddrPort("10.0.0.1:9092")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range streams {
		client := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 1, byte(i >> 8), byte(i)}), 40000)
		s := e.open(reassembly.Flow{ConnID: flow.ConnID{Client: client, Broker: broker, StartFrame: uint64(i + 1)}, FromStart: true})
		if first != nil {
			s.Data(flow.Client, first, flow.Meta{Frame: uint64(i + 2)})
		}
		streams[i] = s
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(streams)
	return (after.HeapAlloc - min(after.HeapAlloc, before.HeapAlloc)) / uint64(n)
}

// TestOpenConnectionMemory: what the pipeline holds for an open connection
// beside the reassembler's state (issue 12's 100k open connections with
// one request each, under 256 MB in all): a stream of 112 bytes, and once
// it carries data a decoder (decode.TestOpenConnMemory). Before issue 12 a
// connection with a request held about 2,080 bytes here.
func TestOpenConnectionMemory(t *testing.T) {
	const n = 20_000
	id := "app"
	req := pcapgen.EncodeRequest(pcapgen.RequestHeader{APIKey: int16(kmsg.ApiVersions), APIVersion: 3, ClientID: &id},
		pcapgen.APIVersions(3, "open", "1.0"))
	tests := []struct {
		name  string
		opts  Options
		first []byte
		max   uint64
	}{
		{name: "SYN only", max: 120},
		{name: "one request, recognised by content", first: req, max: 590},
		{name: "one request, on a port", opts: Options{Ports: []uint16{9092}}, first: req, max: 590},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := streamBytes(n, tt.opts, tt.first)
			t.Logf("%d bytes per open connection", got)
			if got > tt.max {
				t.Errorf("%d bytes per open connection, want at most %d", got, tt.max)
			}
		})
	}
}
