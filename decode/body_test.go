package decode

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kwatch/kwatch/flow"
	"github.com/kwatch/kwatch/internal/hostilegen"
)

// kmsgMessage is a kmsg request or response as these tests use it.
type kmsgBodyMsg interface {
	SetVersion(int16)
	ReadFrom([]byte) error
	AppendTo([]byte) []byte
}

// kmsgIdentity is the reference the layouts are held to: kmsg reads the
// whole body, and the identity fields are taken from what it read. ok is
// false when kmsg cannot read the body.
func kmsgIdentity(key, ver int16, response bool, body []byte) (Body, bool) {
	var m kmsgBodyMsg
	if response {
		m = kmsg.ResponseForKey(key)
	} else {
		m = kmsg.RequestForKey(key)
	}
	m.SetVersion(clampVersion(key, ver))
	if m.ReadFrom(body) != nil {
		return Body{}, false
	}
	var b Body
	switch m := m.(type) {
	case *kmsg.SASLHandshakeResponse:
		b.ErrorCode, b.HasErrorCode = m.ErrorCode, true
	case *kmsg.ApiVersionsRequest:
		b.ClientSoftwareName, b.ClientSoftwareVersion = m.ClientSoftwareName, m.ClientSoftwareVersion
	case *kmsg.ApiVersionsResponse:
		b.ErrorCode, b.HasErrorCode = m.ErrorCode, true
	case *kmsg.ConsumerGroupHeartbeatRequest:
		b.Group, b.MemberID, b.HasMemberID, b.MemberEpoch = m.Group, m.MemberID, true, m.MemberEpoch
	case *kmsg.ConsumerGroupHeartbeatResponse:
		b.ErrorCode, b.HasErrorCode, b.MemberEpoch = m.ErrorCode, true, m.MemberEpoch
		b.MemberID, b.HasMemberID = deref(m.MemberID)
	case *kmsg.ShareGroupHeartbeatRequest:
		b.Group, b.MemberID, b.HasMemberID, b.MemberEpoch = m.GroupID, m.MemberID, true, m.MemberEpoch
	case *kmsg.ShareGroupHeartbeatResponse:
		b.ErrorCode, b.HasErrorCode, b.MemberEpoch = m.ErrorCode, true, m.MemberEpoch
		b.MemberID, b.HasMemberID = deref(m.MemberID)
	case *kmsg.StreamsGroupHeartbeatRequest:
		b.Group, b.MemberID, b.HasMemberID, b.MemberEpoch = m.Group, m.MemberID, true, m.MemberEpoch
	case *kmsg.StreamsGroupHeartbeatResponse:
		b.ErrorCode, b.HasErrorCode, b.MemberEpoch = m.ErrorCode, true, m.MemberEpoch
		b.MemberID, b.HasMemberID = m.MemberID, true
	case *kmsg.GetTelemetrySubscriptionsRequest:
		b.TelemetryInstanceID, b.HasTelemetryInstanceID = m.ClientInstanceID, true
	case *kmsg.GetTelemetrySubscriptionsResponse:
		b.ErrorCode, b.HasErrorCode = m.ErrorCode, true
		b.TelemetryInstanceID, b.HasTelemetryInstanceID = m.ClientInstanceID, true
		b.SubscriptionID, b.HasSubscriptionID = m.SubscriptionID, true
	case *kmsg.PushTelemetryRequest:
		b.TelemetryInstanceID, b.HasTelemetryInstanceID = m.ClientInstanceID, true
		b.SubscriptionID, b.HasSubscriptionID = m.SubscriptionID, true
	case *kmsg.PushTelemetryResponse:
		b.ErrorCode, b.HasErrorCode = m.ErrorCode, true
	default:
		panic(fmt.Sprintf("no reference for %T", m))
	}
	b.Decoded = true
	return b, true
}

func deref(s *string) (string, bool) {
	if s == nil {
		return "", false
	}
	return *s, true
}

// layoutIdentity reads body whole with key's layout, as the decoder does.
func layoutIdentity(key, ver int16, response bool, body []byte) (Body, bool) {
	l := codecFor(key).request
	if response {
		l = codecFor(key).response
	}
	ver = clampVersion(key, ver)
	r := fieldReader{b: body, n: len(body), flex: lookupAPI(key).isFlexible(ver)}
	var b Body
	l.read(ver, &r, &b)
	if r.need > 0 || r.bad {
		return Body{}, false
	}
	b.Decoded = true
	return b, true
}

// identityKeys are the APIs of SPEC.md section 1, each direction whose
// body is decoded.
var identityKeys = []struct {
	key      int16
	response bool
}{
	{keySASLHandshake, true},
	{keyAPIVersions, false}, {keyAPIVersions, true},
	{keyConsumerGroupHeartbeat, false}, {keyConsumerGroupHeartbeat, true},
	{keyGetTelemetrySubscriptions, false}, {keyGetTelemetrySubscriptions, true},
	{keyPushTelemetry, false}, {keyPushTelemetry, true},
	{keyShareGroupHeartbeat, false}, {keyShareGroupHeartbeat, true},
	{keyStreamsGroupHeartbeat, false}, {keyStreamsGroupHeartbeat, true},
}

// TestLayoutsMatchKmsg: for every identity API, direction and version
// kmsg knows, a layout reads from the body what kmsg reads (kmsg, made
// from Kafka's message specs, is the schema source), on bodies kmsg wrote
// with random identity fields, and on those bodies cut short or spoilt at
// random: a layout may read a body whose tail kmsg refuses (it stops at
// its last field), never the other way round, and never differently.
func TestLayoutsMatchKmsg(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 1))
	for _, k := range identityKeys {
		max := lookupAPI(k.key).maxVersion
		for ver := int16(0); ver <= max+1; ver++ {
			name := fmt.Sprintf("%s v%d response=%v", APIName(k.key), ver, k.response)
			for i := 0; i < 200; i++ {
				body := randomBody(rng, k.key, ver, k.response)
				want, wok := kmsgIdentity(k.key, ver, k.response, body)
				got, gok := layoutIdentity(k.key, ver, k.response, body)
				if !wok || !gok || got != want {
					t.Fatalf("%s: layout %+v (%v), kmsg %+v (%v), body %x", name, got, gok, want, wok, body)
				}
				spoilt := append([]byte(nil), body...)
				switch i % 3 {
				case 0:
					spoilt = spoilt[:rng.IntN(len(spoilt)+1)]
				case 1:
					if len(spoilt) > 0 {
						spoilt[rng.IntN(len(spoilt))] = byte(rng.Uint32())
					}
				}
				want, wok = kmsgIdentity(k.key, ver, k.response, spoilt)
				got, gok = layoutIdentity(k.key, ver, k.response, spoilt)
				if wok && (!gok || got != want) {
					t.Fatalf("%s spoilt: layout %+v (%v), kmsg %+v, body %x", name, got, gok, want, spoilt)
				}
			}
		}
	}
}

// randomBody is a body kmsg writes for key at ver with random identity
// fields (strings of random length, some null) and a random tail.
func randomBody(rng *rand.Rand, key, ver int16, response bool) []byte {
	str := func() string { return strings.Repeat("m", rng.IntN(300)) }
	nstr := func() *string {
		if rng.IntN(3) == 0 {
			return nil
		}
		return strp(str())
	}
	var id UUID
	for i := range id {
		id[i] = byte(rng.Uint32())
	}
	i32, i16 := int32(rng.Uint32()), int16(rng.Uint32())
	var m interface {
		SetVersion(int16)
		AppendTo([]byte) []byte
	}
	switch key*2 + b2i(response) {
	case keySASLHandshake*2 + 1:
		r := kmsg.NewPtrSASLHandshakeResponse()
		r.ErrorCode, r.SupportedMechanisms = i16, []string{str(), "PLAIN"}
		m = r
	case keyAPIVersions * 2:
		r := kmsg.NewPtrApiVersionsRequest()
		r.ClientSoftwareName, r.ClientSoftwareVersion = str(), str()
		m = r
	case keyAPIVersions*2 + 1:
		r := kmsg.NewPtrApiVersionsResponse()
		r.ErrorCode = i16
		r.ApiKeys = make([]kmsg.ApiVersionsResponseApiKey, rng.IntN(50))
		m = r
	case keyConsumerGroupHeartbeat * 2:
		r := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		r.Group, r.MemberID, r.MemberEpoch, r.InstanceID = str(), str(), i32, nstr()
		r.SubscribedTopicNames = []string{str()}
		m = r
	case keyConsumerGroupHeartbeat*2 + 1:
		r := kmsg.NewPtrConsumerGroupHeartbeatResponse()
		r.ErrorCode, r.ErrorMessage, r.MemberID, r.MemberEpoch = i16, nstr(), nstr(), i32
		m = r
	case keyShareGroupHeartbeat * 2:
		r := kmsg.NewPtrShareGroupHeartbeatRequest()
		r.GroupID, r.MemberID, r.MemberEpoch, r.RackID = str(), str(), i32, nstr()
		m = r
	case keyShareGroupHeartbeat*2 + 1:
		r := kmsg.NewPtrShareGroupHeartbeatResponse()
		r.ErrorCode, r.ErrorMessage, r.MemberID, r.MemberEpoch = i16, nstr(), nstr(), i32
		m = r
	case keyStreamsGroupHeartbeat * 2:
		r := kmsg.NewPtrStreamsGroupHeartbeatRequest()
		r.Group, r.MemberID, r.MemberEpoch, r.InstanceID = str(), str(), i32, nstr()
		m = r
	case keyStreamsGroupHeartbeat*2 + 1:
		r := kmsg.NewPtrStreamsGroupHeartbeatResponse()
		r.ErrorCode, r.ErrorMessage, r.MemberID, r.MemberEpoch = i16, nstr(), str(), i32
		m = r
	case keyGetTelemetrySubscriptions * 2:
		r := kmsg.NewPtrGetTelemetrySubscriptionsRequest()
		r.ClientInstanceID = id
		m = r
	case keyGetTelemetrySubscriptions*2 + 1:
		r := kmsg.NewPtrGetTelemetrySubscriptionsResponse()
		r.ErrorCode, r.ClientInstanceID, r.SubscriptionID, r.RequestedMetrics = i16, id, i32, []string{str()}
		m = r
	case keyPushTelemetry * 2:
		r := kmsg.NewPtrPushTelemetryRequest()
		r.ClientInstanceID, r.SubscriptionID, r.Metrics = id, i32, []byte(str())
		m = r
	case keyPushTelemetry*2 + 1:
		r := kmsg.NewPtrPushTelemetryResponse()
		r.ErrorCode = i16
		m = r
	}
	return encodeBody(m, clampVersion(key, ver))
}

func b2i(b bool) int16 {
	if b {
		return 1
	}
	return 0
}

// identityBody returns the body of f's large frame (the request's, or the
// response's when there is one) and whether it is a response.
func identityBody(t *testing.T, f hostilegen.IdentityFrame) ([]byte, bool) {
	if f.Response == nil {
		var hd RequestHeader
		if err := ParseRequestHeader(f.Request[4:], &hd); err != nil {
			t.Fatal(err)
		}
		return f.Request[4+hd.Len:], false
	}
	return f.Response[4+4+int(ResponseHeaderVersion(f.Key, f.Ver)):], true
}

// TestLargeIdentityFrames: a frame of just under 1 MiB of each identity API
// and direction (hostilegen.IdentityFrames), in 1448-byte segments,
// decodes to what kmsg reads from its whole body, while the decoder holds
// no more than its header and the bytes up to its identity fields plus
// bodyChunk (here: under 1 KiB).
func TestLargeIdentityFrames(t *testing.T) {
	for _, f := range hostilegen.IdentityFrames() {
		t.Run(f.Name, func(t *testing.T) {
			body, resp := identityBody(t, f)
			want, ok := kmsgIdentity(f.Key, f.Ver, resp, body)
			if !ok {
				t.Fatal("kmsg cannot read the body")
			}
			var got *Body
			c := NewConn(testID, true, Options{}, SinkFunc(func(e *Event) {
				if e.Kind == KindResponse && resp || e.Kind == KindRequest && !resp {
					b := e.Body
					got = &b
				}
			}))
			dir, data := flow.Client, f.Request
			if resp {
				c.Feed(flow.Client, f.Request, flow.Meta{Frame: 1})
				dir, data = flow.Broker, f.Response
			}
			if len(data) < hostilegen.TailSize*15/16 || len(data) > 1<<20 {
				t.Fatalf("frame of %d bytes: not just under 1 MiB", len(data))
			}
			held := 0
			for p := data; len(p) > 0; p = p[min(len(p), 1448):] {
				c.Feed(dir, p[:min(len(p), 1448)], flow.Meta{Frame: 2})
				held = max(held, cap(c.halves[reqHalf].buf), cap(c.halves[respHalf].buf))
			}
			if got == nil || *got != want {
				t.Fatalf("body %+v, want %+v", got, want)
			}
			if held > 1<<10 {
				t.Errorf("held %d bytes, want at most 1 KiB", held)
			}
		})
	}
}

// TestIdentityBound: identity fields as long as Kafka allows (strings of
// 32767 bytes) are read, holding at most maxHeader + maxIdentity +
// bodyChunk; one byte more is a body error (a broker refuses it too), found
// without holding more.
func TestIdentityBound(t *testing.T) {
	long := strings.Repeat("g", maxString)
	for _, tt := range []struct {
		name  string
		group string
		want  string
	}{
		{"longest group", long, `body{"` + long[:8]},
		{"group too long", long + "g", "body-error"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := cghReq(long, 1)
			req.Group = tt.group
			req.SubscribedTopicNames = make([]string, 1<<16)
			data := reqFrame(t, keyConsumerGroupHeartbeat, 1, 1, strp("app"), nil, req)
			r := &recorder{}
			c := NewConn(testID, true, Options{}, r)
			held := 0
			for p := data; len(p) > 0; p = p[min(len(p), 1448):] {
				c.Feed(flow.Client, p[:min(len(p), 1448)], flow.Meta{Frame: 1})
				held = max(held, cap(c.halves[reqHalf].buf))
			}
			if len(r.lines) != 2 || !strings.Contains(r.lines[1], tt.want) {
				t.Fatalf("events:\n%.300s", r)
			}
			if held > maxHeader+maxIdentity+bodyChunk {
				t.Errorf("held %d bytes, bound %d", held, maxHeader+maxIdentity+bodyChunk)
			}
		})
	}
}

// TestOverrunHeaderHoldsNothing: a heartbeat request whose header's tags
// overrun a frame of 1 MiB has no body to read: it is a body error, and
// the frame is counted down, not held.
func TestOverrunHeaderHoldsNothing(t *testing.T) {
	h := reqHeader(t, keyConsumerGroupHeartbeat, 1, 1, strp("app"), nil)
	h = append(h[:len(h)-1], 1, 5, 0xff, 0xff, 0xff, 0x0f) // one tag whose size overruns
	data := frame(h, make([]byte, 1<<20))
	r := &recorder{}
	c := NewConn(testID, true, Options{AssumeKafka: true}, r)
	held := 0
	for p := data; len(p) > 0; p = p[min(len(p), 1448):] {
		c.Feed(flow.Client, p[:min(len(p), 1448)], flow.Meta{Frame: 1})
		held = max(held, cap(c.halves[reqHalf].buf))
	}
	if len(r.lines) != 2 || !strings.Contains(r.lines[1], "body-error") || !strings.Contains(r.lines[1], "overrun") {
		t.Fatalf("events:\n%s", r)
	}
	if held > 1<<10 {
		t.Errorf("held %d bytes", held)
	}
}
