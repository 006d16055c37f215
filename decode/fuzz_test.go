package decode

import (
	"math/rand/v2"
	"testing"

	"github.com/kwatch/kwatch/flow"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// FuzzParseRequestHeader: ParseRequestHeader never panics, never reads past
// its input (the input's capacity is cut to its length), what it returns
// lies inside the input, and a flexible header's tags read as parseTags's
// walk reads them (parseReqHeader reads the usual ones without it).
func FuzzParseRequestHeader(f *testing.F) {
	for _, s := range [][]byte{
		reqHeader(f, 3, 12, 1, strp("app"), []tag{{0, iid[:]}}),
		reqHeader(f, 3, 12, 1, nil, []tag{{0, iid[:]}}),
		reqHeader(f, 3, 12, 1, nil, nil),
		reqHeader(f, 3, 12, 1, nil, []tag{{0, iid[:]}})[:20],
		reqHeader(f, 3, 12, 1, strp("app"), []tag{{0, iid[:3]}}),
		reqHeader(f, 3, 12, 1, strp("app"), []tag{{5, nil}, {0, iid[:]}}),
		reqHeader(f, 3, 12, 1, nil, []tag{{0, iid[:]}, {0, iid[:]}}),
		reqHeader(f, 7, 0, 1, nil, nil),
		reqHeader(f, 0, 8, 1, strp("p"), nil),
		{0, 3, 0, 12, 0, 0, 0, 1, 0x7f, 0xff},
		{0, 3, 0, 12, 0, 0, 0, 1, 0xff, 0xfe},
		{0, 3, 0, 12, 0, 0, 0, 1, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f},
		{0, 3, 0, 12, 0, 0, 0, 1, 0, 0, 1, 0, 0xff, 0xff, 0xff, 0xff, 0x7f},
		{0, 3},
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		frame = frame[:len(frame):len(frame)]
		var h RequestHeader
		if err := ParseRequestHeader(frame, &h); err != nil {
			return
		}
		if h.Len < 8 || h.Len > len(frame) {
			t.Fatalf("Len %d outside 8..%d", h.Len, len(frame))
		}
		if len(h.ClientID) > 0 && (h.HeaderVersion == 0 || 10+len(h.ClientID) > len(frame)) {
			t.Fatalf("client ID of %d bytes in a %d-byte frame", len(h.ClientID), len(frame))
		}
		if h.HasInstanceID && h.TagProblem != TagOK {
			t.Fatal("instance ID with a tag problem")
		}
		if h.HeaderVersion < 2 {
			return
		}
		var walked RequestHeader
		end, _, problem := parseTags(frame, 10+len(h.ClientID), len(frame), &walked, nil)
		if problem != TagOK {
			walked.InstanceID, walked.HasInstanceID = UUID{}, false
		}
		if end != h.Len || problem != h.TagProblem || walked.InstanceID != h.InstanceID || walked.HasInstanceID != h.HasInstanceID {
			t.Fatalf("header: Len %d %v instance %v %x; walked: %d %v %v %x",
				h.Len, h.TagProblem, h.HasInstanceID, h.InstanceID, end, problem, walked.HasInstanceID, walked.InstanceID)
		}
	})
}

// FuzzConn: arbitrary bytes in both directions, with gaps, fed whole or in
// arbitrary chunks, never panic, and the events do not depend on the
// chunking.
//
// The input is a script of records: a control byte (bit 0 direction, bit
// 1 gap, bits 2-7 ignored), a length byte, then that many bytes of data.
func FuzzConn(f *testing.F) {
	seed := func(fromStart bool, segs []seg) {
		var b []byte
		for _, s := range segs {
			for len(s.data) > 0 || s.gap != 0 {
				n := min(len(s.data), 255)
				ctl := byte(s.dir)
				if s.gap != 0 {
					ctl |= 2
					n = 0
				}
				b = append(b, ctl, byte(n))
				b = append(b, s.data[:n]...)
				s.data = s.data[n:]
				s.gap = 0
			}
		}
		f.Add(fromStart, uint64(7), b)
	}
	seed(true, basicSegs(f))
	seed(true, noisySegs(f))
	seed(false, trimFirst(basicSegs(f), 5))
	cid := strp("c")
	seed(true, []seg{
		{dir: flow.Client, data: reqFrame(f, 3, 12, 1, cid, nil, metadataReq())[:9]}, // truncated
		{dir: flow.Client, data: []byte{0x7f, 0xff, 0xff, 0xff}},                     // huge
		{dir: flow.Client, data: []byte{0xff, 0xff, 0xff, 0xf0}},                     // negative
		{dir: flow.Client, data: frame(reqHeader(f, 3, 12, 2, cid, nil)[:11], []byte{2, 0, 3, 1})},
		{dir: flow.Client, data: reqFrame(f, 3, 12, 3, cid, []tag{{9, nil}, {0, iid[:4]}}, metadataReq())},
		{dir: flow.Broker, data: respFrame(3, 12, 3, kmsg.NewPtrMetadataResponse())},
	})
	seed(true, []seg{{dir: flow.Client, data: []byte{0x16, 3, 1, 0, 5}}})
	// Candidates (recog.go): a ZooKeeper connect and its answer, a
	// PostgreSQL startup, a weak first request (null client ID) believed by
	// its answer, and one believed by the next request.
	zk := cat([]byte{0, 0, 0, 0x2d}, make([]byte, 12), []byte{0, 0, 0x75, 0x30}, make([]byte, 12), []byte{0, 0, 0, 16}, make([]byte, 17))
	seed(true, []seg{{dir: flow.Client, data: zk}, {dir: flow.Broker, data: zk[:40]}})
	seed(true, []seg{{dir: flow.Client, data: cat([]byte{0, 0, 0, 0x20, 0, 3, 0, 0}, []byte("user\x00postgres\x00database\x00x\x00\x00"))}})
	seed(true, []seg{
		{dir: flow.Client, data: reqFrame(f, 18, 3, 1, nil, nil, apiVersionsReq())},
		{dir: flow.Broker, data: respFrame(18, 3, 1, kmsg.NewPtrApiVersionsResponse())},
	})
	seed(true, []seg{
		{dir: flow.Client, data: reqFrame(f, 3, 12, 1, nil, nil, metadataReq())},
		{dir: flow.Client, data: reqFrame(f, 3, 12, 2, nil, nil, metadataReq())},
	})
	seed(false, []seg{{dir: flow.Client, data: []byte("POST / HTTP/1.1\r\n")}})
	f.Fuzz(func(t *testing.T, fromStart bool, chunkSeed uint64, script []byte) {
		var segs []seg
		for len(script) >= 2 {
			ctl, n := script[0], int(script[1])
			script = script[2:]
			n = min(n, len(script))
			s := seg{dir: flow.Side(ctl & 1)}
			if ctl&2 != 0 {
				s.gap = n // n lost bytes; 0 = unknown
				if n == 0 {
					s.gap = gapUnknown
				}
			} else {
				s.data = script[:n]
			}
			script = script[n:]
			segs = append(segs, s)
		}
		for _, opts := range []Options{{}, {AssumeKafka: true, MaxInFlight: 4, MaxFrame: 1 << 16}} {
			want, _ := run(testID, fromStart, opts, segs, 0)
			got, _ := run(testID, fromStart, opts, segs, 1)
			if got.String() != want.String() {
				t.Fatalf("byte by byte:\n%s\nwhole:\n%s", got, want)
			}
			rng := rand.New(rand.NewPCG(chunkSeed, 1))
			got = runRandomOpts(fromStart, opts, segs, rng)
			if got.String() != want.String() {
				t.Fatalf("random chunks:\n%s\nwhole:\n%s", got, want)
			}
		}
	})
}

// FuzzCandidate drives recognition without --port (recog.go, scan.go), of
// a connection seen from its start or joined mid-stream: the client's
// bytes, then the broker's, whole and byte by byte. Invariants: it never panics; it holds at most
// holdMax bytes per direction; before a conn-start it emits nothing but a
// tls-connection; the verdict and the events do not depend on chunking.
func FuzzCandidate(f *testing.F) {
	zk := cat([]byte{0, 0, 0, 0x2d}, make([]byte, 12), []byte{0, 0, 0x75, 0x30}, make([]byte, 12), []byte{0, 0, 0, 16}, make([]byte, 17))
	f.Add(true, zk, zk[:40])
	f.Add(false, zk, zk[:40])
	f.Add(true, cat([]byte{0, 0, 0, 0x20, 0, 3, 0, 0}, []byte("user\x00postgres\x00database\x00x\x00\x00")), []byte("R"))
	f.Add(true, reqFrame(f, 18, 3, 1, nil, nil, apiVersionsReq()), respFrame(18, 3, 1, kmsg.NewPtrApiVersionsResponse()))
	f.Add(true, cat(reqFrame(f, 3, 12, 1, nil, nil, metadataReq()), reqFrame(f, 3, 12, 2, nil, nil, metadataReq())), []byte{})
	f.Add(false, reqFrame(f, 18, 3, 7, strp("app"), nil, apiVersionsReq()), []byte{0, 0, 0, 4, 0, 0, 0, 7})
	f.Add(true, []byte{0x16, 3, 1, 0, 9, 1, 0, 0, 5, 3, 3, 0, 0, 0}, []byte{0x16, 3, 3})
	f.Add(false, []byte{0x16, 3, 1, 0, 9, 1, 0, 0, 5, 3, 3, 0, 0, 0}, []byte{0x16, 3, 3})
	f.Fuzz(func(t *testing.T, fromStart bool, client, broker []byte) {
		runOnce := func(chunk int) (string, ConnState) {
			r := &recorder{}
			started := false
			c := NewConn(testID, fromStart, Options{}, SinkFunc(func(e *Event) {
				started = started || e.Kind == KindConnStart
				if !started && !(e.Kind == KindCoverage && e.Coverage == TLSConnection) {
					t.Fatalf("event before the connection was believed: %s", render(e))
				}
				r.Event(e)
			}))
			for i, p := range [][]byte{client, broker} {
				feedChunks(c, flow.Side(i), p, flow.Meta{Frame: uint64(i + 1)}, func(int) int { return chunk })
				if k := c.cand; k != nil && (len(k.bytes[0]) > holdMax || len(k.bytes[1]) > holdMax) {
					t.Fatalf("holds %d and %d bytes", len(k.bytes[0]), len(k.bytes[1]))
				}
			}
			c.Close(flow.Meta{Frame: 3})
			return r.String(), c.State()
		}
		want, wantState := runOnce(0)
		got, gotState := runOnce(1)
		if got != want || gotState != wantState {
			t.Fatalf("byte by byte (%s):\n%s\nwhole (%s):\n%s", gotState, got, wantState, want)
		}
	})
}
