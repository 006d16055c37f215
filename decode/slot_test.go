package decode

import (
	"strings"
	"testing"

	"github.com/kwatch/kwatch/flow"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestEventSlot: every event of one Conn carries the same Slot and its
// current ID (also after a swap of client and broker); another Conn's
// events carry another Slot.
func TestEventSlot(t *testing.T) {
	big := make([]byte, 2000)
	tests := []struct {
		name      string
		fromStart bool
		segs      []seg
	}{
		{name: "basic conversation", fromStart: true, segs: basicSegs(t)},
		{name: "noisy", fromStart: true, segs: noisySegs(t)},
		{name: "swapped", segs: []seg{
			{dir: flow.Client, data: respFrame(0, 8, 1, big)[700:]},
			{dir: flow.Broker, data: reqFrame(t, 3, 12, 2, strp("a"), nil, metadataReq())},
			{dir: flow.Broker, data: reqFrame(t, 3, 12, 3, strp("a"), nil, metadataReq())},
			{dir: flow.Client, data: respFrame(3, 12, 2, nil)},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			slots := map[*any]int{}
			for i := range 2 {
				var c *Conn
				n := 0
				c = NewConn(testID, tt.fromStart, Options{}, SinkFunc(func(e *Event) {
					n++
					if e.Slot == nil || e.Conn != c.ID() {
						t.Fatalf("conn %d event %d: slot %p, conn %+v, want %+v", i, n, e.Slot, e.Conn, c.ID())
					}
					if *e.Slot == nil {
						*e.Slot = i // what a sink keeps there
					}
					if *e.Slot != i {
						t.Fatalf("conn %d event %d: slot holds %v", i, n, *e.Slot)
					}
					slots[e.Slot] = i
				}))
				for j, s := range tt.segs {
					c.Feed(s.dir, s.data, flow.Meta{Frame: uint64(j + 1)})
				}
				c.Close(flow.Meta{Frame: uint64(len(tt.segs) + 1)})
				if n < 2 {
					t.Fatalf("conn %d: %d events", i, n)
				}
			}
			if len(slots) != 2 {
				t.Errorf("%d slots for 2 connections", len(slots))
			}
		})
	}
}

// TestWholeFrameAtMaxHeader: a frame a Feed holds whole is decoded where it
// lies, up to maxHeader bytes; the events are those of the frame fed in
// pieces (buffered), also for headers as long as the frame.
func TestWholeFrameAtMaxHeader(t *testing.T) {
	var segs []seg
	corr := int32(0)
	// fill returns a request of size bytes (after the int32) whose header
	// ends with a tag 5 of the length needed.
	fill := func(size int, cid string, first []tag) []byte {
		n := size
		for {
			f := reqFrame(t, 3, 12, corr, &cid, append(first, tag{5, make([]byte, n)}), nil)
			switch d := len(f) - 4 - size; {
			case d == 0:
				return f
			case d > n:
				t.Fatalf("cannot fill %d bytes", size)
			default:
				n -= max(d, 1)
			}
		}
	}
	// A client opens with ApiVersions: a Metadata request of nothing but
	// a header would not be believed as a connection's first.
	segs = append(segs, seg{dir: flow.Client, data: reqFrame(t, 18, 3, corr, strp("c"), nil, apiVersionsReq())},
		seg{dir: flow.Broker, data: respFrame(18, 3, corr, kmsg.NewPtrApiVersionsResponse())})
	for _, size := range []int{maxHeader - 1, maxHeader, maxHeader + 1} {
		for _, h := range []struct {
			cid   string
			first []tag
		}{{"c", nil}, {"c", []tag{{0, iid[:]}}}, {strings.Repeat("c", 30000), []tag{{0, iid[:]}}}} {
			corr++
			segs = append(segs, seg{dir: flow.Client, data: fill(size, h.cid, h.first)},
				seg{dir: flow.Broker, data: respFrame(3, 12, corr, nil)})
		}
	}
	want, _ := run(testID, true, Options{}, segs, 0)
	if n := strings.Count(want.String(), "response f="); n != 7 {
		t.Fatalf("%d responses:\n%s", n, want)
	}
	for _, chunk := range []int{1, 1000, maxHeader - 1} {
		if got, _ := run(testID, true, Options{}, segs, chunk); got.String() != want.String() {
			t.Errorf("chunks of %d:\n%s\nwant:\n%s", chunk, got, want)
		}
	}
}
