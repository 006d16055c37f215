package decode

import (
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kwatch/kwatch/flow"
	"github.com/kwatch/kwatch/internal/hostilegen"
)

// feedCost is the least time, over a few runs, that frames fed in chunks
// of chunk bytes (0: one Feed per frame) take to decode.
func feedCost(frames []byte, fromStart bool, opts Options, chunk int) time.Duration {
	best := time.Duration(1 << 62)
	for run := 0; run < 5; run++ {
		n := 0
		c := NewConn(testID, fromStart, opts, SinkFunc(func(e *Event) {
			if e.Kind == KindRequest {
				n++
			}
		}))
		start := time.Now()
		for p := frames; len(p) > 0; {
			k := len(p)
			if chunk > 0 {
				k = min(k, chunk)
			}
			c.Feed(flow.Client, p[:k], flow.Meta{Frame: 1})
			p = p[k:]
		}
		best = min(best, time.Since(start))
		if n == 0 {
			return -1
		}
	}
	return best
}

// TestHeaderCostLinear: a request header of any legal size parses in time
// proportional to its length whatever the segmentation (issue 12): 64 KiB
// of 20,000 empty tags cut in 1448-byte segments costs at most twice the
// same bytes in one segment, recognised or probed.
func TestHeaderCostLinear(t *testing.T) {
	big := hostilegen.ManyTagsFrame(20000, 1, 8<<10) // larger than maxHeader: never parsed in place
	var frames []byte
	for i := 0; i < 10; i++ {
		frames = append(frames, big...)
	}
	tests := []struct {
		name      string
		fromStart bool
		opts      Options
		frames    []byte
	}{
		{"port", true, Options{AssumeKafka: true}, frames},
		{"probed first frame", true, Options{}, big},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A few attempts, for a shared machine's noise: a quadratic
			// parse fails them all by orders of magnitude.
			var whole, cut time.Duration
			for try := 0; try < 3; try++ {
				whole = feedCost(tt.frames, tt.fromStart, tt.opts, 0)
				cut = feedCost(tt.frames, tt.fromStart, tt.opts, 1448)
				if whole < 0 || cut < 0 {
					t.Fatal("no request decoded")
				}
				t.Logf("one segment %v, 1448-byte segments %v", whole, cut)
				if cut <= 2*whole+time.Millisecond {
					return
				}
			}
			t.Errorf("segmented header costs %v, one segment %v: more than twice", cut, whole)
		})
	}
}

// pipelined feeds n small requests, answered one by one or never, and
// returns the least time over a few runs and the decoder's drop count.
func pipelined(t *testing.T, n int, answered bool) (time.Duration, uint64) {
	req := reqFrame(t, 3, 12, 0, strp("a"), nil, metadataReq())
	resp := respFrame(3, 12, 0, kmsg.NewPtrMetadataResponse())
	best, dropped := time.Duration(1<<62), uint64(0)
	for run := 0; run < 3; run++ {
		c := NewConn(testID, true, Options{}, SinkFunc(func(*Event) {}))
		start := time.Now()
		for i := 0; i < n; i++ {
			binary.BigEndian.PutUint32(req[8:], uint32(i))
			c.Feed(flow.Client, req, flow.Meta{Frame: uint64(2 * i)})
			if answered {
				binary.BigEndian.PutUint32(resp[4:], uint32(i))
				c.Feed(flow.Broker, resp, flow.Meta{Frame: uint64(2*i + 1)})
			}
		}
		best, dropped = min(best, time.Since(start)), c.InFlightDropped()
	}
	return best, dropped
}

// TestUnansweredCost: requests that are never answered cost no more than
// answered ones (1.5x at most, issue 12: the in-flight table compacted all
// its entries on every request once full), and the cap is counted.
func TestUnansweredCost(t *testing.T) {
	const n = 300_000
	var ans, unans time.Duration
	var ansDropped, unansDropped uint64
	for try := 0; try < 3; try++ { // noise; a compaction per request fails all
		ans, ansDropped = pipelined(t, n, true)
		unans, unansDropped = pipelined(t, n, false)
		t.Logf("%d requests: answered %v, unanswered %v", n, ans, unans)
		if unans <= ans*3/2 {
			break
		}
	}
	if unans > ans*3/2 {
		t.Errorf("unanswered requests cost %v, answered %v: more than 1.5x", unans, ans)
	}
	if ansDropped != 0 || unansDropped != n-DefaultMaxInFlight {
		t.Errorf("dropped %d answered, %d unanswered; want 0 and %d", ansDropped, unansDropped, n-DefaultMaxInFlight)
	}
}

// TestInFlightCapCounted: a response to a request forgotten past the cap
// says so.
func TestInFlightCapCounted(t *testing.T) {
	var segs []seg
	for i := int32(1); i <= 5; i++ {
		segs = append(segs, seg{dir: flow.Client, data: reqFrame(t, 3, 12, i, strp("a"), nil, metadataReq())})
	}
	segs = append(segs, seg{dir: flow.Broker, data: respFrame(3, 12, 1, kmsg.NewPtrMetadataResponse())})
	r, c := run(testID, true, Options{MaxInFlight: 3}, segs, 0)
	if c.InFlightDropped() != 2 || !strings.Contains(r.String(), "2 requests forgotten past the in-flight cap of 3") {
		t.Fatalf("dropped %d, events:\n%s", c.InFlightDropped(), r)
	}
}

// TestCandidateCostLinear: a candidate's first answer (64 KiB of response
// header tags) and its client's next request in 80-byte packets (under
// holdCalls of them) cost time linear in their length: each is parsed
// once, when whole. In 1-byte packets, the candidate is given up at
// holdCalls packets.
func TestCandidateCostLinear(t *testing.T) {
	first := reqFrame(t, 3, 12, 1, nil, nil, metadataReq())
	h := binary.BigEndian.AppendUint32(nil, 1)
	h = binary.AppendUvarint(h, 20000)
	for i := 1; i <= 20000; i++ {
		h = binary.AppendUvarint(h, uint64(i))
		h = append(h, 0)
	}
	answer := frame(h, encodeBody(kmsg.NewPtrMetadataResponse(), 12))
	next := hostilegen.ManyTagsFrame(600, 1, 0) // 2 KiB of tags: the scan window
	binary.BigEndian.PutUint32(next[8:], 2)
	feed := func(piece int) (time.Duration, ConnState) {
		c := NewConn(testID, true, Options{}, nil)
		start := time.Now()
		c.Feed(flow.Client, first, flow.Meta{Frame: 1})
		frame := uint64(1)
		for d, b := range [][]byte{next, answer} {
			for p := b; len(p) > 0; p = p[min(piece, len(p)):] {
				frame++ // one packet each
				c.Feed(flow.Side(d), p[:min(piece, len(p))], flow.Meta{Frame: frame})
			}
		}
		return time.Since(start), c.State()
	}
	if _, st := feed(1); st != StateNotKafka {
		t.Errorf("fed a byte at a time: %s, want not-kafka", st)
	}
	var took time.Duration
	for try := 0; try < 3; try++ {
		var st ConnState
		took, st = feed(80)
		t.Logf("%d bytes in 80-byte pieces: %v, %s", len(next)+len(answer), took, st)
		if st != StateKafka {
			t.Fatalf("state %s, want kafka (the answer vouches)", st)
		}
		if took < 25*time.Millisecond { // parsed per piece: over 100 ms
			return
		}
	}
	t.Errorf("%v for %d bytes", took, len(next)+len(answer))
}
