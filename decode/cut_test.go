package decode

import (
	"strings"
	"testing"

	"github.com/kwatch/kwatch/flow"
)

// cutRecorder renders events as recorder does, with each PDU's Cut.
type cutRecorder struct{ recorder }

func (r *cutRecorder) Event(e *Event) {
	l := render(e)
	if e.Kind == KindRequest || e.Kind == KindResponse {
		l += " cut=" + e.Cut.String()
	}
	r.lines = append(r.lines, l)
}

// cutSeg is one packet: keep bytes of data captured, the rest cut.
type cutSeg struct {
	dir  flow.Side
	data []byte
	keep int // < 0: all
}

// TestSkip checks SPEC.md 2.1 "Snap length" in the decoder: cut bytes
// inside a frame whose size was read lose no framing; a header or identity
// body is decoded from what was captured, the event saying which fields
// were cut; a cut that takes a frame's start loses the position.
func TestSkip(t *testing.T) {
	cid := strp("app")
	iid := tag{0, make([]byte, 16)}
	iid.data[15] = 7
	member := strings.Repeat("M", 22)
	meta := reqFrame(t, 3, 12, 2, cid, nil, metadataReq())
	metaLine := `request f=2 Metadata v12 hv2 corr=2 size=18 cid="app" cut=none`
	tests := []struct {
		name string
		segs []cutSeg
		want string
	}{
		{
			name: "skipped body cut: counted down, next frame whole",
			segs: []cutSeg{{flow.Client, reqFrame(t, 0, 9, 1, cid, nil, produceReq(300)), 40}, {flow.Client, meta, -1}},
			want: `request f=1 Produce v9 hv2 corr=1 size=314 cid="app" cut=none` + "\n" + metaLine,
		},
		{
			name: "tags cut: the instance ID is not read",
			segs: []cutSeg{{flow.Client, reqFrame(t, 3, 12, 1, cid, []tag{iid}, metadataReq()), 4 + 10 + 3}, {flow.Client, meta, -1}},
			want: `request f=1 Metadata v12 hv2 corr=1 size=36 cid="app" cut=tags` + "\n" + metaLine,
		},
		{
			name: "client ID cut",
			segs: []cutSeg{{flow.Client, reqFrame(t, 3, 12, 1, cid, nil, metadataReq()), 4 + 10 + 1}, {flow.Client, meta, -1}},
			want: `request f=1 Metadata v12 hv2 corr=1 size=18 cid="a\x00\x00" cut=client-id` + "\n" + metaLine,
		},
		{
			name: "heartbeat cut after its identity fields: decoded",
			segs: []cutSeg{{flow.Client, reqFrame(t, 68, 0, 1, cid, nil, cghReq(member, 5)), 4 + 14 + 3 + 23 + 4}, {flow.Client, meta, -1}},
			want: `request f=1 ConsumerGroupHeartbeat v0 hv2 corr=1 size=54 cid="app" body{"g1" "MMMMMMMMMMMMMMMMMMMMMM"/true 5 tid=00000000000000000000000000000000/false sub=0/false err=0/false sw="" ""} cut=none` + "\n" + metaLine,
		},
		{
			name: "heartbeat member ID cut: not decoded",
			segs: []cutSeg{{flow.Client, reqFrame(t, 68, 0, 1, cid, nil, cghReq(member, 5)), 4 + 14 + 3 + 10}, {flow.Client, meta, -1}},
			want: `request f=1 ConsumerGroupHeartbeat v0 hv2 corr=1 size=54 cid="app" cut=body` + "\n" + metaLine,
		},
		{
			name: "heartbeat epoch's last byte cut: not decoded",
			segs: []cutSeg{{flow.Client, reqFrame(t, 68, 0, 1, cid, nil, cghReq(member, 5)), 4 + 14 + 3 + 23 + 3}, {flow.Client, meta, -1}},
			want: `request f=1 ConsumerGroupHeartbeat v0 hv2 corr=1 size=54 cid="app" cut=body` + "\n" + metaLine,
		},
		{
			name: "correlation ID cut: the frame is skipped by length",
			segs: []cutSeg{{flow.Client, reqFrame(t, 3, 12, 1, cid, nil, metadataReq()), 4 + 6}, {flow.Client, meta, -1}},
			want: `conn-start f=2 client=10.0.0.5:53122 start=true` + "\n" + metaLine,
		},
		{
			name: "next frame's start cut: position lost",
			segs: []cutSeg{{flow.Client, cat(meta, meta), 4 + 18 + 2}},
			want: `conn-start f=1 client=10.0.0.5:53122 start=true` + "\n" +
				`request f=1 Metadata v12 hv2 corr=2 size=18 cid="app" cut=none` + "\n" +
				`event f=1 partial stream-gap bytes=20 size=0 "frame start cut by the capture's snap length on client->broker"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &cutRecorder{}
			c := NewConn(testID, true, Options{}, r)
			for i, s := range tt.segs {
				at := flow.Meta{Frame: uint64(i + 1)}
				keep := s.keep
				if keep < 0 {
					keep = len(s.data)
				}
				c.Feed(s.dir, s.data[:keep], at)
				c.Skip(s.dir, len(s.data)-keep, at)
			}
			got := strings.TrimPrefix(r.String(), "conn-start f=1 client=10.0.0.5:53122 start=true\n")
			want := strings.TrimPrefix(tt.want, "conn-start f=1 client=10.0.0.5:53122 start=true\n")
			if got != want {
				t.Errorf("events:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// FuzzSkip: arbitrary bytes in both directions, with cuts (Skip) between
// them, never panic, and the events do not depend on how the captured
// bytes were chunked.
//
// The input is a script of records: a control byte (bit 0 direction, bit
// 1 a cut of n bytes instead of data, bits 2-7 ignored), a length byte n,
// then, for data, n bytes.
func FuzzSkip(f *testing.F) {
	cid := strp("app")
	for _, s := range [][]byte{
		cat([]byte{0, 20}, reqFrame(f, 3, 12, 1, cid, []tag{{0, iid[:]}}, metadataReq())[:20], []byte{2, 17}),
		cat([]byte{0, 30}, reqFrame(f, 68, 0, 1, cid, nil, cghReq("m", 1))[:30], []byte{2, 200, 2, 255}),
		cat([]byte{0, 6}, []byte{0, 0, 1, 0, 0, 3}, []byte{2, 255, 0, 4}, []byte{0, 0, 0, 9}),
		cat([]byte{1, 4}, []byte{0, 0, 0, 8}, []byte{3, 8}),
	} {
		f.Add(true, s)
		f.Add(false, s)
	}
	f.Fuzz(func(t *testing.T, fromStart bool, script []byte) {
		for _, opts := range []Options{{}, {AssumeKafka: true, MaxFrame: 1 << 16}} {
			whole := runCutScript(fromStart, opts, script, 0)
			if bytes := runCutScript(fromStart, opts, script, 1); bytes != whole {
				t.Fatalf("byte by byte:\n%s\nwhole:\n%s", bytes, whole)
			}
		}
	})
}

// runCutScript runs a FuzzSkip script, data fed in chunks of chunk bytes
// (0: whole), and returns the events.
func runCutScript(fromStart bool, opts Options, script []byte, chunk int) string {
	r := &cutRecorder{}
	c := NewConn(testID, fromStart, opts, r)
	for k := 0; len(script) >= 2; k++ {
		ctl, n := script[0], int(script[1])
		script = script[2:]
		at := flow.Meta{Frame: uint64(k + 1)}
		if ctl&2 != 0 {
			c.Skip(flow.Side(ctl&1), n, at)
			continue
		}
		n = min(n, len(script))
		feedChunks(c, flow.Side(ctl&1), script[:n], at, func(int) int { return chunk })
		script = script[n:]
	}
	c.Close(flow.Meta{Frame: 1 << 20})
	return r.String()
}
