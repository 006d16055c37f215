package tui

import (
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kwatch/kwatch/audit"
	"github.com/kwatch/kwatch/decode"
)

type countSink struct{ n int }

func (c *countSink) Event(*decode.Event) { c.n++ }

func TestRecorder(t *testing.T) {
	conn := decode.ConnID{
		Client:     netip.MustParseAddrPort("10.1.0.1:40001"),
		Broker:     netip.MustParseAddrPort("10.0.0.1:9092"),
		StartFrame: 1,
	}
	id := decode.UUID{1, 2, 3, 4, 5, 6, 0x47, 8, 0x89, 10, 11, 12, 13, 14, 15, 16}
	next := &countSink{}
	r := NewRecorder(next)
	base := time.Date(2026, 11, 29, 16, 0, 0, 0, time.UTC)
	req := func(frame uint64, key int16, corr int32, withID bool) *decode.Event {
		e := &decode.Event{Kind: decode.KindRequest, Conn: conn, Frame: frame, Time: base.Add(time.Duration(frame) * time.Millisecond),
			APIKey: key, APIVersion: 1, HeaderVersion: 2, CorrelationID: corr, ClientID: []byte("app")}
		if withID {
			e.InstanceID, e.HasInstanceID = id, true
		}
		return e
	}
	r.Event(&decode.Event{Kind: decode.KindConnStart, Conn: conn, Frame: 1})
	r.Event(req(4, 18, 1, true)) // ApiVersions: identity
	for i := int32(2); i < 60; i++ {
		r.Event(req(uint64(4+2*i), 3, i, true)) // Metadata: not identity
	}
	hb := req(200, 68, 60, true)
	hb.Body = decode.Body{Decoded: true, Group: "g", MemberID: "m", HasMemberID: true}
	r.Event(hb)
	r.Event(req(202, 3, 61, false)) // instance ID dropped: identity
	if next.n != 62 {
		t.Fatalf("forwarded %d events, want 62", next.n)
	}

	tl := r.Timeline(audit.JavaString(id))
	var apis []string
	for _, row := range tl {
		apis = append(apis, row.API)
	}
	if got := strings.Join(apis, ","); got != "ApiVersions,ConsumerGroupHeartbeat,Metadata" {
		t.Fatalf("timeline %s, want the ApiVersions, the heartbeat and the request that dropped the ID", got)
	}
	if !strings.Contains(tl[1].Note, `member "m"`) || tl[2].InstanceID != "" {
		t.Errorf("timeline rows: %+v", tl)
	}

	around := r.Around(FindingRow{Client: "10.1.0.1:40001", Broker: "10.0.0.1:9092", Frame: 200})
	var frames []string
	for _, row := range around {
		frames = append(frames, strconv.FormatUint(row.Frame, 10))
	}
	// Five requests before the finding's on its connection, it, and what follows.
	if got := strings.Join(frames, ","); got != "114,116,118,120,122,200,202" {
		t.Fatalf("frames around 200: %s", got)
	}
	if got := r.Around(FindingRow{Client: "10.9.9.9:1", Broker: "10.0.0.1:9092", Frame: 5}); len(got) != 0 {
		t.Errorf("rows for an unknown connection: %+v", got)
	}
	if got := r.Timeline("unknown"); len(got) != 0 {
		t.Errorf("timeline of an unknown instance: %+v", got)
	}
}

func TestRecorderBounded(t *testing.T) {
	r := NewRecorder(nil)
	for i := 0; i < recorderMaxConns+50; i++ {
		conn := decode.ConnID{
			Client:     netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 1, byte(i >> 8), byte(i)}), 40000),
			Broker:     netip.MustParseAddrPort("10.0.0.1:9092"),
			StartFrame: uint64(i + 1),
		}
		for j := 0; j < recorderConnRing+5; j++ {
			r.Event(&decode.Event{Kind: decode.KindRequest, Conn: conn, Frame: uint64(i*100 + j), APIKey: 18, HeaderVersion: 2, ClientID: []byte("c")})
		}
	}
	if len(r.conns) != recorderMaxConns || len(r.byAddr) > recorderMaxConns {
		t.Fatalf("%d connections remembered, want at most %d", len(r.conns), recorderMaxConns)
	}
	if len(r.timelines) > recorderMaxInstances {
		t.Fatalf("%d timelines remembered", len(r.timelines))
	}
	for _, c := range r.conns {
		if len(c.requests.list()) != recorderConnRing {
			t.Fatalf("a connection ring holds %d rows", len(c.requests.list()))
		}
		break
	}
}
