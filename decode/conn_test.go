package decode

import (
	"encoding/binary"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/kwatch/kwatch/flow"
	"github.com/twmb/franz-go/pkg/kmsg"
)

var tid = UUID{0xaa, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 0xbb}

func apiVersionsReq() *kmsg.ApiVersionsRequest {
	r := kmsg.NewPtrApiVersionsRequest()
	r.ClientSoftwareName, r.ClientSoftwareVersion = "kgo", "1.22.3"
	return r
}

func cghReq(member string, epoch int32) *kmsg.ConsumerGroupHeartbeatRequest {
	r := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	r.Group, r.MemberID, r.MemberEpoch = "g1", member, epoch
	return r
}

func cghResp(member *string, epoch int32, code int16) *kmsg.ConsumerGroupHeartbeatResponse {
	r := kmsg.NewPtrConsumerGroupHeartbeatResponse()
	r.MemberID, r.MemberEpoch, r.ErrorCode = member, epoch, code
	return r
}

func produceReq(n int) []byte { return make([]byte, n) }

// basicClient and basicBroker are a small fromStart conversation.
func basicSegs(t testing.TB) []seg {
	cid := strp("app")
	return []seg{
		{dir: flow.Client, data: reqFrame(t, 18, 3, 1, cid, nil, apiVersionsReq())},
		{dir: flow.Broker, data: respFrame(18, 3, 1, kmsg.NewPtrApiVersionsResponse())},
		{dir: flow.Client, data: reqFrame(t, 3, 12, 2, cid, []tag{{0, iid[:]}}, metadataReq())},
		{dir: flow.Broker, data: respFrame(3, 12, 2, kmsg.NewPtrMetadataResponse())},
		{dir: flow.Client, data: reqFrame(t, 68, 1, 3, cid, []tag{{0, iid[:]}}, cghReq("", 0))},
		{dir: flow.Broker, data: respFrame(68, 1, 3, cghResp(strp("AAECAwQFBgcICQoLDA0ODw"), 1, 0))},
		{dir: flow.Client, data: reqFrame(t, 0, 8, 4, cid, nil, produceReq(3000))},
		{dir: flow.Broker, data: respFrame(0, 8, 4, make([]byte, 40))},
	}
}

func TestConnEvents(t *testing.T) {
	cid := strp("app")
	big := make([]byte, 2000)
	tests := []struct {
		name      string
		fromStart bool
		opts      Options
		segs      []seg
		want      []string // substrings, one per event, in order
		state     ConnState
	}{
		{
			name: "basic conversation", fromStart: true, segs: basicSegs(t), state: StateKafka,
			want: []string{
				"conn-start f=1 client=10.0.0.5:53122 start=true",
				`request f=1 ApiVersions v3 hv2 corr=1 size=26 cid="app" body{"" ""/false 0 tid=00000000000000000000000000000000/false sub=0/false err=0/false sw="kgo" "1.22.3"}`,
				"response f=2 ApiVersions v3 hv0 corr=1 size=",
				`request f=3 Metadata v12 hv2 corr=2 size=`,
				"response f=4 Metadata v12 hv1 corr=2",
				`request f=5 ConsumerGroupHeartbeat v1 hv2 corr=3 size=`,
				`response f=6 ConsumerGroupHeartbeat v1 hv1 corr=3 size=`,
				`request f=7 Produce v8 hv1 corr=4 size=3013 cid="app"`,
				"response f=8 Produce v8 hv0 corr=4 size=44 reqf=7",
				"conn-end f=9",
			},
		},
		{
			name: "framing error resyncs, later PDUs partial", fromStart: true, state: StateKafka,
			segs: []seg{
				{dir: flow.Client, data: reqFrame(t, 3, 12, 1, cid, nil, metadataReq())},
				{dir: flow.Client, data: cat([]byte{0x7f, 0xff, 0xff, 0xff, 1, 2, 3}, reqFrame(t, 3, 12, 2, cid, nil, metadataReq()))},
			},
			want: []string{
				"conn-start", "request f=1 Metadata v12 hv2 corr=1",
				`event f=2 framing-error bytes=0 size=2147483647 "frame size 2147483647 out of range"`,
				"request f=2 partial Metadata v12 hv2 corr=2", "conn-end",
			},
		},
		{
			name: "negative size", fromStart: true, state: StateKafka,
			segs: []seg{
				{dir: flow.Client, data: reqFrame(t, 3, 12, 1, cid, nil, metadataReq())},
				{dir: flow.Client, data: cat([]byte{0xff, 0xff, 0xff, 0xfe}, reqFrame(t, 3, 12, 2, cid, nil, metadataReq()))},
			},
			want: []string{"conn-start", "request f=1", `framing-error bytes=0 size=-2`, "request f=2 partial Metadata", "conn-end"},
		},
		{
			name: "unknown api key skipped by length", fromStart: true, state: StateKafka,
			segs: []seg{
				{dir: flow.Client, data: reqFrame(t, 3, 12, 1, cid, nil, metadataReq())},
				{dir: flow.Client, data: cat(reqFrame(t, 222, 0, 2, cid, nil, big), reqFrame(t, 3, 12, 3, cid, nil, metadataReq()))},
			},
			want: []string{"conn-start", "request f=1", `framing-error bytes=0 size=2013 "unknown API key 222"`, "request f=2 Metadata v12 hv2 corr=3", "conn-end"},
		},
		{
			name: "unmatched response", fromStart: true, state: StateKafka,
			segs: []seg{
				{dir: flow.Client, data: reqFrame(t, 3, 12, 1, cid, nil, metadataReq())},
				{dir: flow.Broker, data: respFrame(3, 12, 99, big)},
				{dir: flow.Broker, data: respFrame(3, 12, 1, kmsg.NewPtrMetadataResponse())},
			},
			want: []string{"conn-start", "request f=1", "unmatched-response bytes=2009 size=2005", "response f=3 Metadata v12 hv1 corr=1", "conn-end"},
		},
		{
			name: "tls", fromStart: true, state: StateTLS,
			segs: []seg{{dir: flow.Client, data: []byte{0x16, 0x03, 0x01, 0x02, 0x00, 1, 0, 1, 0xfc, 3, 3}}},
			want: []string{"event f=1 tls-connection"},
		},
		{
			name: "http is not kafka", fromStart: true, state: StateNotKafka,
			segs: []seg{{dir: flow.Client, data: []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")}},
		},
		{
			name: "http with assume kafka", fromStart: true, opts: Options{AssumeKafka: true}, state: StateKafka,
			segs: []seg{{dir: flow.Client, data: []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")}},
			want: []string{"conn-start", `framing-error bytes=0 size=1195725856 "frame size 1195725856 out of range: looks like HTTP"`, "conn-end"},
		},
		{
			name: "bad first request is not kafka", fromStart: true, state: StateNotKafka,
			segs: []seg{{dir: flow.Client, data: reqFrame(t, 999, 0, 1, cid, nil, nil)}},
		},
		{
			name: "midstream joins in a frame", fromStart: false, state: StateKafka,
			segs: []seg{
				{dir: flow.Client, data: reqFrame(t, 0, 8, 1, cid, nil, big)[1500:]},
				{dir: flow.Broker, data: respFrame(0, 8, 1, big)[700:]},
				{dir: flow.Client, data: reqFrame(t, 3, 12, 2, cid, nil, metadataReq())},
				{dir: flow.Broker, data: respFrame(3, 12, 2, kmsg.NewPtrMetadataResponse())},
			},
			want: []string{
				"conn-start f=3 client=10.0.0.5:53122 start=false", "event f=3 midstream-join",
				"request f=3 Metadata v12 hv2 corr=2", "response f=4 Metadata v12 hv1 corr=2", "conn-end",
			},
		},
		{
			name: "midstream with client and broker swapped", fromStart: false, state: StateKafka,
			segs: []seg{
				{dir: flow.Client, data: respFrame(0, 8, 1, big)[700:]},
				{dir: flow.Broker, data: reqFrame(t, 3, 12, 2, cid, nil, metadataReq())},
				{dir: flow.Client, data: respFrame(3, 12, 2, kmsg.NewPtrMetadataResponse())},
			},
			want: []string{
				"conn-start f=2 client=10.0.0.9:9092 start=false", "midstream-join",
				"request f=2 Metadata v12 hv2 corr=2", "response f=3 Metadata v12 hv1 corr=2", "conn-end f=4 client=10.0.0.9:9092",
			},
		},
		{
			name: "gap inside a skipped body keeps the position", fromStart: true, state: StateKafka,
			segs: []seg{
				{dir: flow.Client, data: reqFrame(t, 0, 8, 1, cid, nil, big)[:100]},
				{dir: flow.Client, gap: 1000},
				{dir: flow.Client, data: reqFrame(t, 0, 8, 1, cid, nil, big)[1100:]},
				{dir: flow.Client, data: reqFrame(t, 3, 12, 2, cid, nil, metadataReq())},
			},
			want: []string{"conn-start", "event f=2 partial stream-gap bytes=1000", "request f=3 partial Produce v8 hv1 corr=1 size=2013", "request f=4 partial Metadata", "conn-end"},
		},
		{
			name: "gap of unknown size resyncs", fromStart: true, state: StateKafka,
			segs: []seg{
				{dir: flow.Client, data: reqFrame(t, 0, 8, 1, cid, nil, big)[:100]},
				{dir: flow.Client, gap: gapUnknown},
				{dir: flow.Client, data: cat(reqFrame(t, 0, 8, 1, cid, nil, big)[1100:], reqFrame(t, 3, 12, 2, cid, nil, metadataReq()))},
			},
			want: []string{"conn-start", "stream-gap bytes=0", "request f=3 partial Metadata v12 hv2 corr=2", "conn-end"},
		},
		{
			name: "tag problems still emit the request", fromStart: true, state: StateKafka,
			segs: []seg{
				{dir: flow.Client, data: reqFrame(t, 3, 12, 1, cid, []tag{{0, iid[:8]}}, metadataReq())},
				{dir: flow.Client, data: reqFrame(t, 3, 12, 2, cid, []tag{{0, make([]byte, 16)}}, metadataReq())},
				{dir: flow.Client, data: frame(reqHeader(t, 3, 12, 3, cid, nil)[:13], []byte{1, 0, 16, 1, 2})},
			},
			want: []string{
				"conn-start", `request f=1 Metadata v12 hv2 corr=1 size=`, `request f=2 Metadata v12 hv2 corr=2 size=36 cid="app" iid=00000000000000000000000000000000`,
				`request f=3 Metadata v12 hv2 corr=3 size=18 cid="app" tags="tagged fields overrun the header"`, "conn-end",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, c := run(testID, tt.fromStart, tt.opts, tt.segs, 0)
			if c.State() != tt.state {
				t.Errorf("state = %v, want %v", c.State(), tt.state)
			}
			if len(r.lines) != len(tt.want) {
				t.Fatalf("got %d events, want %d:\n%s", len(r.lines), len(tt.want), r)
			}
			for i, w := range tt.want {
				if !strings.Contains(r.lines[i], w) {
					t.Errorf("event %d = %s\nwant it to contain %s", i, r.lines[i], w)
				}
			}
		})
	}
}

func TestTagProblemEvent(t *testing.T) {
	r, _ := run(testID, true, Options{}, []seg{{dir: flow.Client, data: reqFrame(t, 3, 12, 1, strp("a"), []tag{{0, iid[:8]}}, metadataReq())}}, 0)
	if !strings.Contains(r.lines[1], `tags="tag 0 size is not 16"`) || strings.Contains(r.lines[1], "iid=") {
		t.Fatalf("event = %s", r.lines[1])
	}
}

func TestSwapReportsID(t *testing.T) {
	big := make([]byte, 2000)
	_, c := run(testID, false, Options{}, []seg{
		{dir: flow.Client, data: respFrame(0, 8, 1, big)[700:]},
		{dir: flow.Broker, data: reqFrame(t, 3, 12, 2, strp("a"), nil, metadataReq())},
	}, 0)
	if c.ID().Client != testID.Broker || c.ID().Broker != testID.Client {
		t.Fatalf("ID not swapped: %+v", c.ID())
	}
}

func TestMaxInFlightDropsOldest(t *testing.T) {
	var segs []seg
	for i := int32(1); i <= 5; i++ {
		segs = append(segs, seg{dir: flow.Client, data: reqFrame(t, 3, 12, i, strp("a"), nil, metadataReq())})
	}
	segs = append(segs, seg{dir: flow.Broker, data: respFrame(3, 12, 1, kmsg.NewPtrMetadataResponse())},
		seg{dir: flow.Broker, data: respFrame(3, 12, 4, kmsg.NewPtrMetadataResponse())})
	r, _ := run(testID, true, Options{MaxInFlight: 3}, segs, 0)
	got := r.String()
	if !strings.Contains(got, "unmatched-response") || !strings.Contains(got, "response f=7 Metadata v12 hv1 corr=4") {
		t.Fatalf("events:\n%s", got)
	}
}

func TestPendingSetCompacts(t *testing.T) {
	var p pendingSet
	p.init(4)
	for i := int32(0); i < 100; i++ {
		p.add(i, inflight{seq: uint64(i)})
		if i%2 == 0 {
			p.take(i)
		}
	}
	if p.len() != 4 {
		t.Fatalf("len = %d, want 4", p.len())
	}
	for _, corr := range []int32{93, 95, 97, 99} {
		if _, ok := p.get(corr); !ok {
			t.Errorf("newest request %d was dropped", corr)
		}
	}
}

func TestSASLRawTokens(t *testing.T) {
	cid := strp("app")
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Mechanism = "PLAIN"
	token := []byte("\x00user\x00secret-password")
	tok := frame(token)
	segs := []seg{
		{dir: flow.Client, data: reqFrame(t, 17, 0, 1, cid, nil, hs)},
		{dir: flow.Broker, data: respFrame(17, 0, 1, kmsg.NewPtrSASLHandshakeResponse())},
		{dir: flow.Client, data: tok},
		{dir: flow.Broker, data: frame(nil)}, // empty server token
		{dir: flow.Client, data: reqFrame(t, 3, 12, 2, cid, nil, metadataReq())},
		{dir: flow.Broker, data: respFrame(3, 12, 2, kmsg.NewPtrMetadataResponse())},
	}
	r, _ := run(testID, true, Options{}, segs, 0)
	got := r.String()
	want := []string{
		"conn-start", "request f=1 SaslHandshake v0 hv1 corr=1", "response f=2 SaslHandshake v0 hv0 corr=1",
		"request f=5 Metadata v12", "response f=6 Metadata v12", `event f=6 sasl-raw-tokens bytes=29 size=0`, "conn-end",
	}
	if len(r.lines) != len(want) {
		t.Fatalf("events:\n%s", got)
	}
	for i, w := range want {
		if !strings.Contains(r.lines[i], w) {
			t.Errorf("event %d = %s, want %s", i, r.lines[i], w)
		}
	}
	if strings.Contains(got, "secret") {
		t.Fatal("token bytes leaked")
	}

	// Without the broker's answer to a later request, the count comes at Close.
	r, _ = run(testID, true, Options{}, segs[:5], 0)
	if !strings.Contains(r.lines[len(r.lines)-2], "sasl-raw-tokens bytes=29") {
		t.Fatalf("events:\n%s", r)
	}

	// A failed handshake does not start raw mode: the token is a framing error.
	bad := kmsg.NewPtrSASLHandshakeResponse()
	bad.ErrorCode = 33
	segs2 := append([]seg{segs[0], {dir: flow.Broker, data: respFrame(17, 0, 1, bad)}}, segs[2:]...)
	r, _ = run(testID, true, Options{}, segs2, 0)
	if strings.Contains(r.String(), "sasl-raw-tokens") || !strings.Contains(r.String(), "framing-error") {
		t.Fatalf("events:\n%s", r)
	}
}

func TestBodies(t *testing.T) {
	cid := strp("app")
	gts := kmsg.NewPtrGetTelemetrySubscriptionsRequest()
	gts.ClientInstanceID = tid
	gtsResp := kmsg.NewPtrGetTelemetrySubscriptionsResponse()
	gtsResp.ClientInstanceID, gtsResp.SubscriptionID = tid, 7
	push := kmsg.NewPtrPushTelemetryRequest()
	push.ClientInstanceID, push.SubscriptionID = tid, 7
	pushResp := kmsg.NewPtrPushTelemetryResponse()
	pushResp.ErrorCode = 42
	sgh := kmsg.NewPtrShareGroupHeartbeatRequest()
	sgh.GroupID, sgh.MemberID, sgh.MemberEpoch = "sg", "m1", -1
	sghResp := kmsg.NewPtrShareGroupHeartbeatResponse()
	sghResp.MemberEpoch = 3
	stg := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	stg.Group, stg.MemberID, stg.MemberEpoch = "st", "m2", 0
	stgResp := kmsg.NewPtrStreamsGroupHeartbeatResponse()
	stgResp.MemberID, stgResp.MemberEpoch, stgResp.ErrorCode = "m2", 4, 0
	tests := []struct {
		name     string
		key, ver int16
		req      any
		resp     any
		wantReq  string
		wantResp string
	}{
		{name: "api versions v0 request", key: 18, ver: 0, req: apiVersionsReq(), resp: kmsg.NewPtrApiVersionsResponse(),
			wantReq: `sw="" ""`, wantResp: "err=0/true"},
		{name: "api versions v3", key: 18, ver: 3, req: apiVersionsReq(), resp: kmsg.NewPtrApiVersionsResponse(),
			wantReq: `sw="kgo" "1.22.3"`, wantResp: "err=0/true"},
		{name: "api versions v4 answered in v0 layout", key: 18, ver: 4, req: apiVersionsReq(), resp: []byte{0, 35, 0, 0, 0, 0},
			wantReq: `sw="kgo" "1.22.3"`, wantResp: "err=35/true"},
		{name: "consumer group heartbeat null member", key: 68, ver: 0, req: cghReq("m", 0), resp: cghResp(nil, 1, 25),
			wantReq: `body{"g1" "m"/true 0`, wantResp: `body{"" ""/false 1 tid=00000000000000000000000000000000/false sub=0/false err=25/true`},
		{name: "get telemetry subscriptions", key: 71, ver: 0, req: gts, resp: gtsResp,
			wantReq: "tid=aa0102030405060708090a0b0c0d0ebb/true", wantResp: "tid=aa0102030405060708090a0b0c0d0ebb/true sub=7/true err=0/true"},
		{name: "push telemetry", key: 72, ver: 0, req: push, resp: pushResp,
			wantReq: "tid=aa0102030405060708090a0b0c0d0ebb/true sub=7/true", wantResp: "err=42/true"},
		{name: "share group heartbeat", key: 76, ver: 1, req: sgh, resp: sghResp,
			wantReq: `body{"sg" "m1"/true -1`, wantResp: `body{"" ""/false 3`},
		{name: "streams group heartbeat", key: 88, ver: 0, req: stg, resp: stgResp,
			wantReq: `body{"st" "m2"/true 0`, wantResp: `body{"" "m2"/true 4`},
		{name: "garbage bodies", key: 68, ver: 0, req: []byte{0, 5, 'x'}, resp: []byte{1},
			wantReq: "body-error", wantResp: "body-error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := run(testID, true, Options{}, []seg{
				{dir: flow.Client, data: reqFrame(t, tt.key, tt.ver, 1, cid, nil, tt.req)},
				{dir: flow.Broker, data: respFrame(tt.key, tt.ver, 1, tt.resp)},
			}, 0)
			if len(r.lines) != 4 {
				t.Fatalf("events:\n%s", r)
			}
			if !strings.Contains(r.lines[1], tt.wantReq) {
				t.Errorf("request = %s\nwant %s", r.lines[1], tt.wantReq)
			}
			if !strings.Contains(r.lines[2], tt.wantResp) {
				t.Errorf("response = %s\nwant %s", r.lines[2], tt.wantResp)
			}
		})
	}
}

// TestChunkingInvariance: the events do not depend on how the bytes of
// each packet are split into Feed calls.
func TestChunkingInvariance(t *testing.T) {
	streams := map[string]struct {
		fromStart bool
		segs      []seg
	}{
		"basic":     {true, basicSegs(t)},
		"midstream": {false, trimFirst(basicSegs(t), 7)},
		"noise":     {true, noisySegs(t)},
	}
	for name, s := range streams {
		t.Run(name, func(t *testing.T) {
			want, _ := run(testID, s.fromStart, Options{}, s.segs, 0)
			if len(want.lines) < 3 {
				t.Fatalf("too few events:\n%s", want)
			}
			for _, chunk := range []int{1, 2, 3, 7, 1460} {
				got, _ := run(testID, s.fromStart, Options{}, s.segs, chunk)
				if got.String() != want.String() {
					t.Fatalf("chunk %d:\n%s\nwant:\n%s", chunk, got, want)
				}
			}
			rng := rand.New(rand.NewPCG(1, 2))
			for range 20 {
				got := runRandom(s.fromStart, s.segs, rng)
				if got.String() != want.String() {
					t.Fatalf("random chunks:\n%s\nwant:\n%s", got, want)
				}
			}
		})
	}
}

func trimFirst(segs []seg, n int) []seg {
	out := append([]seg(nil), segs...)
	out[0].data = out[0].data[n:]
	return out
}

// noisySegs mixes framing errors, gaps, unknown keys and SASL raw tokens.
func noisySegs(t testing.TB) []seg {
	cid := strp("app")
	hs := kmsg.NewPtrSASLHandshakeRequest()
	return []seg{
		{dir: flow.Client, data: reqFrame(t, 17, 0, 1, cid, nil, hs)},
		{dir: flow.Broker, data: respFrame(17, 0, 1, kmsg.NewPtrSASLHandshakeResponse())},
		{dir: flow.Client, data: cat(frame([]byte("\x00u\x00p")), frame([]byte{0x60, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}))},
		{dir: flow.Broker, data: frame([]byte("ok"))},
		{dir: flow.Client, data: cat(reqFrame(t, 3, 12, 2, cid, []tag{{0, iid[:]}}, metadataReq()), []byte{0, 0, 0, 1, 9})},
		{dir: flow.Client, data: cat([]byte{1, 2, 3}, reqFrame(t, 3, 12, 3, cid, nil, metadataReq()))},
		{dir: flow.Broker, data: cat([]byte{9, 9}, respFrame(3, 12, 3, kmsg.NewPtrMetadataResponse()))},
		{dir: flow.Client, data: reqFrame(t, 200, 0, 4, cid, nil, make([]byte, 100))},
		{dir: flow.Client, data: reqFrame(t, 0, 9, 5, cid, nil, make([]byte, 5000))[:3000]},
		{dir: flow.Client, gap: 1000},
		{dir: flow.Client, data: reqFrame(t, 0, 9, 5, cid, nil, make([]byte, 5000))[4000:]},
		{dir: flow.Client, data: reqFrame(t, 68, 0, 6, cid, nil, cghReq("x", 0))},
		{dir: flow.Broker, data: respFrame(68, 0, 6, cghResp(strp("x"), 1, 0))},
	}
}

func runRandom(fromStart bool, segs []seg, rng *rand.Rand) *recorder {
	return runRandomOpts(fromStart, Options{}, segs, rng)
}

func runRandomOpts(fromStart bool, opts Options, segs []seg, rng *rand.Rand) *recorder {
	r := &recorder{}
	c := NewConn(testID, fromStart, opts, r)
	for i, s := range segs {
		at := flow.Meta{Frame: uint64(i + 1), Time: time.Unix(1700000000, int64(i)).UTC()}
		if s.gap != 0 {
			c.Gap(s.dir, max(s.gap, 0), at)
			continue
		}
		feedChunks(c, s.dir, s.data, at, func(left int) int { return 1 + rng.IntN(left) })
	}
	c.Close(flow.Meta{Frame: uint64(len(segs) + 1)})
	return r
}

// TestSteadyStateAllocs: skipping Produce bodies and Metadata frames
// allocates nothing per frame.
func TestSteadyStateAllocs(t *testing.T) {
	cid := strp("orders-app")
	var stream, resp []byte
	stream = append(stream, reqFrame(t, 0, 9, 1, cid, []tag{{0, iid[:]}}, make([]byte, 4000))...)
	stream = append(stream, reqFrame(t, 3, 12, 2, cid, []tag{{0, iid[:]}}, metadataReq())...)
	resp = append(resp, respFrame(0, 9, 1, make([]byte, 300))...)
	resp = append(resp, respFrame(3, 12, 2, kmsg.NewPtrMetadataResponse())...)
	n := 0
	c := NewConn(testID, true, Options{}, SinkFunc(func(*Event) { n++ }))
	feed := func() {
		for off := 0; off < len(stream); off += 1460 {
			c.Feed(flow.Client, stream[off:min(off+1460, len(stream))], flow.Meta{Frame: 1})
		}
		c.Feed(flow.Broker, resp, flow.Meta{Frame: 2})
	}
	feed()
	if a := testing.AllocsPerRun(200, feed); a != 0 {
		t.Fatalf("Feed allocates %v times per run", a)
	}
	if n != 1+202*4 { // AllocsPerRun runs feed once more to warm up
		t.Fatalf("events = %d", n)
	}
}

func TestClientIDValidDuringSink(t *testing.T) {
	var got []string
	c := NewConn(testID, true, Options{}, SinkFunc(func(e *Event) {
		if e.Kind == KindRequest {
			got = append(got, string(e.ClientID))
		}
	}))
	f := reqFrame(t, 68, 0, 1, strp("heartbeat-client"), nil, cghReq("m", 0))
	for i := range f {
		c.Feed(flow.Client, f[i:i+1], flow.Meta{})
	}
	if len(got) != 1 || got[0] != "heartbeat-client" {
		t.Fatalf("client ids = %q", got)
	}
}

func BenchmarkConnProduceFetch(b *testing.B) {
	cid := strp("bench-producer")
	var req, resp []byte
	corr := int32(0)
	for size := 1 << 10; size <= 64<<10; size *= 2 {
		corr++
		req = append(req, reqFrame(b, 0, 9, corr, cid, []tag{{0, iid[:]}}, make([]byte, size))...)
		corr++
		req = append(req, reqFrame(b, 1, 12, corr, cid, []tag{{0, iid[:]}}, make([]byte, 100))...)
		resp = append(resp, respFrame(0, 9, corr-1, make([]byte, 80))...)
		resp = append(resp, respFrame(1, 12, corr, make([]byte, size))...)
	}
	c := NewConn(testID, true, Options{}, SinkFunc(func(*Event) {}))
	b.ReportAllocs()
	b.SetBytes(int64(len(req) + len(resp)))
	for b.Loop() {
		for off := 0; off < len(req); off += 1460 {
			c.Feed(flow.Client, req[off:min(off+1460, len(req))], flow.Meta{})
		}
		for off := 0; off < len(resp); off += 1460 {
			c.Feed(flow.Broker, resp[off:min(off+1460, len(resp))], flow.Meta{})
		}
	}
	_ = binary.BigEndian
}

// TestRandomStreams builds streams from valid frames, cut frames, noise
// and gaps, and checks, outside the fuzzer too, that decoding never panics
// and does not depend on chunking.
func TestRandomStreams(t *testing.T) {
	rng := rand.New(rand.NewPCG(42, 7))
	cid := strp("app")
	pieces := func(corr int32) [][]byte {
		return [][]byte{
			reqFrame(t, 3, 12, corr, cid, []tag{{0, iid[:]}}, metadataReq()),
			reqFrame(t, 0, 8, corr, cid, nil, make([]byte, rng.IntN(3000))),
			reqFrame(t, 68, 1, corr, cid, nil, cghReq("m", 0)),
			reqFrame(t, 17, 0, corr, cid, nil, kmsg.NewPtrSASLHandshakeRequest()),
			respFrame(17, 0, corr, kmsg.NewPtrSASLHandshakeResponse()),
			respFrame(3, 12, corr, kmsg.NewPtrMetadataResponse()),
			respFrame(68, 1, corr, cghResp(strp("m"), 1, 0)),
			frame([]byte("\x00u\x00p")),
			{0x7f, 0xff, 0xff, 0xff},
			{0xff, 0xff, 0xff, 0xff},
			{0x16, 0x03, 0x01},
		}
	}
	for i := range 300 {
		var segs []seg
		for j := range 2 + rng.IntN(12) {
			ps := pieces(int32(rng.IntN(4)))
			s := seg{dir: flow.Side(rng.IntN(2)), data: ps[rng.IntN(len(ps))]}
			switch rng.IntN(8) {
			case 0:
				s.data = s.data[rng.IntN(len(s.data)):]
			case 1:
				s.data = s.data[:rng.IntN(len(s.data))]
			case 2:
				s = seg{dir: s.dir, gap: rng.IntN(50) - 1}
			case 3:
				junk := make([]byte, rng.IntN(40))
				for k := range junk {
					junk[k] = byte(rng.UintN(256))
				}
				s.data = junk
			}
			if s.gap == 0 && len(s.data) == 0 {
				s.data = []byte{byte(j)}
			}
			segs = append(segs, s)
		}
		for _, fromStart := range []bool{true, false} {
			for _, opts := range []Options{{}, {AssumeKafka: true, MaxInFlight: 2}} {
				want, _ := run(testID, fromStart, opts, segs, 0)
				for _, chunk := range []int{1, 5} {
					if got, _ := run(testID, fromStart, opts, segs, chunk); got.String() != want.String() {
						t.Fatalf("stream %d chunk %d:\n%s\nwant:\n%s", i, chunk, got, want)
					}
				}
				if got := runRandomOpts(fromStart, opts, segs, rng); got.String() != want.String() {
					t.Fatalf("stream %d random chunks:\n%s\nwant:\n%s", i, got, want)
				}
			}
		}
	}
}

func TestStatesAndTruncation(t *testing.T) {
	cid := strp("app")
	tests := []struct {
		name      string
		fromStart bool
		feed      func(c *Conn)
		state     ConnState
		want      string
	}{
		{
			// SPEC.md 2.1: every cut packet is one truncated-packet, those
			// before recognition when the connection turns out Kafka.
			name: "truncated before recognition is reported at recognition", fromStart: true, state: StateKafka,
			feed: func(c *Conn) {
				c.Truncated(flow.Client, flow.Meta{Frame: 1})
				c.Feed(flow.Client, reqFrame(t, 3, 12, 1, cid, nil, metadataReq()), flow.Meta{Frame: 2})
				c.Truncated(flow.Broker, flow.Meta{Frame: 3})
				c.Gap(flow.Broker, 10, flow.Meta{Frame: 3})
			},
			want: "conn-start f=2 client=10.0.0.5:53122 start=true\n" +
				"event f=2 truncated-packet bytes=0 size=0 \"packet cut by the capture's snap length on client->broker\"\n" +
				"request f=2 Metadata v12 hv2 corr=1 size=18 cid=\"app\"\n" +
				"event f=3 truncated-packet bytes=0 size=0 \"packet cut by the capture's snap length on broker->client\"\n" +
				"event f=3 partial stream-gap bytes=10 size=0 \"bytes lost on broker->client\"\nconn-end f=9 partial client=10.0.0.5:53122 start=true",
		},
		{
			name: "midstream tls record", fromStart: false, state: StateTLS,
			feed: func(c *Conn) {
				c.Feed(flow.Client, []byte{0x16}, flow.Meta{Frame: 1})
				c.Feed(flow.Client, []byte{0x03, 0x03, 0, 5, 1, 2, 3, 4, 5}, flow.Meta{Frame: 2})
			},
			want: "event f=2 tls-connection bytes=0 size=0 \"client's first bytes are a TLS record\"",
		},
		{
			name: "midstream 0x16 alone is not tls", fromStart: false, state: StateKafka,
			feed: func(c *Conn) {
				c.Feed(flow.Client, cat([]byte{0x16, 1, 2}, reqFrame(t, 3, 12, 1, cid, nil, metadataReq())), flow.Meta{Frame: 1})
			},
			want: "conn-start f=1 client=10.0.0.5:53122 start=false\nevent f=1 midstream-join bytes=0 size=0 \"connection joined mid-stream\"\n" +
				"request f=1 Metadata v12 hv2 corr=1 size=18 cid=\"app\"\nconn-end f=9 client=10.0.0.5:53122 start=false",
		},
		{
			name: "midstream noise gives up", fromStart: false, state: StateNotKafka,
			feed: func(c *Conn) {
				junk := make([]byte, 1<<20)
				for i := range 9 {
					c.Feed(flow.Client, junk, flow.Meta{Frame: uint64(i + 1)})
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &recorder{}
			c := NewConn(testID, tt.fromStart, Options{}, r)
			tt.feed(c)
			c.Close(flow.Meta{Frame: 9})
			if c.State() != tt.state {
				t.Errorf("state = %v, want %v", c.State(), tt.state)
			}
			if r.String() != tt.want {
				t.Errorf("events:\n%s\nwant:\n%s", r, tt.want)
			}
		})
	}
}

func TestConnStateString(t *testing.T) {
	for s, want := range map[ConnState]string{StateProbing: "probing", StateKafka: "kafka", StateTLS: "tls", StateNotKafka: "not-kafka", 9: "unknown"} {
		if s.String() != want {
			t.Errorf("%d.String() = %q, want %q", s, s.String(), want)
		}
	}
}
