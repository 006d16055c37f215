package reassembly

import (
	"fmt"
	"net/netip"
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/kwatch/kwatch/flow"
)

// TestCloseReleasesStreams: as Close ends the connections still open, each
// leaves the reassembler, so its Stream (and what the Stream holds: a
// decoder, in kwatch) can be freed while the rest end, and none is kept
// once Close returns (but the last, below), though the Reassembler is.
func TestCloseReleasesStreams(t *testing.T) {
	const n = 200
	var streams []weak.Pointer[nopStream]
	r := New(Options{}, OpenerFunc(func(Flow) Stream {
		s := &nopStream{}
		streams = append(streams, weak.Make(s))
		return s
	}))
	for i := range n {
		cli := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 1, byte(i >> 8), byte(i)}), 40000)
		ps := with(handshake, []pkt{{from: "c", seq: 1001, ack: 5001, flags: "A", data: fmt.Sprint("request ", i)}})
		for j := range ps {
			ps[j].cli = cli
		}
		for _, s := range segs(ps) {
			s.Time = t0.Add(time.Duration(i) * time.Millisecond)
			r.Add(s)
		}
	}
	r.Close(flow.Meta{Frame: 1 << 20, Time: t0.Add(time.Hour)})
	if len(streams) != n {
		t.Fatalf("%d streams opened, want %d", len(streams), n)
	}
	runtime.GC()
	kept := 0
	for i, w := range streams {
		if w.Value() != nil {
			t.Logf("stream %d kept", i)
			kept++
		}
	}
	// tcpasm's one-entry cache of the last connection looked up may keep
	// the last one: one connection's state, not the run's.
	if kept > 1 {
		t.Errorf("%d of %d streams still reachable after Close", kept, n)
	}
	runtime.KeepAlive(r)
}
