package tui

import (
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kwatch/kwatch/audit"
	"github.com/kwatch/kwatch/decode"
	"github.com/kwatch/kwatch/flow"
)

type countSink struct{ n int }

func (c *countSink) Event(*decode.Event) { c.n++ }

func TestRecorder(t *testing.T) {
	conn := flow.ConnID{
		Client:     netip.MustParseAddrPort("10.1.0.1:40001"),
		Broker:     netip.MustParseAddrPort("10.0.0.1:9092"),
		StartFrame: 1,
	}
	id := decode.UUID{1, 2, 3, 4, 5, 6, 0x47, 8, 0x89, 10, 11, 12, 13, 14, 15, 16}
	next := &countSink{}
	r := NewRecorder(next)
	base := time.Date(2026, 11, 29, 16, 0, 0, 0, time.UTC)
	req := func(frame uint64, key decode.APIKey, corr int32, withID bool) *decode.Event {
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
	for _, row := range tl.Rows {
		apis = append(apis, row.API)
	}
	if got := strings.Join(apis, ","); got != "ApiVersions,ConsumerGroupHeartbeat,Metadata" {
		t.Fatalf("timeline %s, want the ApiVersions, the heartbeat and the request that dropped the ID", got)
	}
	if !strings.Contains(tl.Rows[1].Note, `member "m"`) || tl.Rows[2].InstanceID != "" {
		t.Errorf("timeline rows: %+v", tl)
	}

	if got := r.Around(FindingRow{Client: "10.9.9.9:1", Broker: "10.0.0.1:9092", Frame: 5}); got.Rows != nil {
		t.Errorf("rows for an unknown connection: %+v", got)
	}
	if got := r.Timeline("unknown"); len(got.Rows) != 0 {
		t.Errorf("timeline of an unknown instance: %+v", got)
	}
}

// TestRecorderContext: the requests around a finding are those of its
// connection when it was made and just after, however busy the connection
// is afterwards; the request that broke the rule joins the instance's
// timeline, named by the rule.
func TestRecorderContext(t *testing.T) {
	conn := flow.ConnID{
		Client:     netip.MustParseAddrPort("10.1.0.1:40001"),
		Broker:     netip.MustParseAddrPort("10.0.0.1:9092"),
		StartFrame: 1,
	}
	r := NewRecorder(nil)
	req := func(frame uint64, key decode.APIKey) {
		r.Event(&decode.Event{Kind: decode.KindRequest, Conn: conn, Frame: frame, APIKey: key, APIVersion: 1,
			HeaderVersion: 2, CorrelationID: int32(frame), ClientID: []byte("app")})
	}
	for f := uint64(1); f <= 101; f++ {
		req(f, 3)
	}
	r.Finding(audit.Finding{Rule: "client-id-changed", Frame: 101, Conn: conn, ClientID: "app", API: "Metadata"})
	r.Finding(audit.Finding{Rule: "instance-id-late", Frame: 101, Conn: conn, ClientID: "app", API: "Metadata"})
	for f := uint64(102); f <= 150; f++ {
		req(f, 3)
	}
	around := r.Around(FindingRow{Client: "10.1.0.1:40001", Broker: "10.0.0.1:9092", Frame: 101})
	var frames []string
	for _, row := range around.Rows {
		frames = append(frames, strconv.FormatUint(row.Frame, 10))
		if row.Frame == 101 && strings.Join(row.Rules, ",") != "client-id-changed,instance-id-late" {
			t.Errorf("the finding's request names rules %v", row.Rules)
		}
	}
	want := "94,95,96,97,98,99,100,101,102,103,104,105,106,107"
	if got := strings.Join(frames, ","); got != want || around.Omitted != 93 {
		t.Fatalf("around frame 101: %s (+%d earlier), want %s (+93 earlier)", got, around.Omitted, want)
	}
	tl := r.Timeline(legacyKey("10.1.0.1", "app"))
	found := false
	for _, row := range tl.Rows {
		found = found || row.Frame == 101 && slices.Contains(row.Rules, "instance-id-late")
	}
	if !found {
		t.Errorf("timeline lacks the offending request: %+v", tl.Rows)
	}
}

// TestRecorderTimelineKeepsFirst: a long timeline keeps its first rows
// (the joins) and its latest, and counts what it left out.
func TestRecorderTimelineKeepsFirst(t *testing.T) {
	h := newHeadTail()
	const n = 500
	for i := range n {
		h.add(TimelineRow{Frame: uint64(i + 1)})
	}
	ex := h.excerpt()
	if len(ex.Rows) != recorderTimelineHead+recorderTimelineTail || ex.Gap != recorderTimelineHead ||
		ex.Omitted != n-recorderTimelineHead-recorderTimelineTail {
		t.Fatalf("%d rows, gap %d, omitted %d", len(ex.Rows), ex.Gap, ex.Omitted)
	}
	if ex.Rows[0].Frame != 1 || ex.Rows[ex.Gap].Frame != n-recorderTimelineTail+1 || ex.Rows[len(ex.Rows)-1].Frame != n {
		t.Errorf("frames %d, %d, %d", ex.Rows[0].Frame, ex.Rows[ex.Gap].Frame, ex.Rows[len(ex.Rows)-1].Frame)
	}
}

func TestRecorderBounded(t *testing.T) {
	r := NewRecorder(nil)
	for i := 0; i < recorderMaxConns+50; i++ {
		conn := flow.ConnID{
			Client:     netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 1, byte(i >> 8), byte(i)}), 40000),
			Broker:     netip.MustParseAddrPort("10.0.0.1:9092"),
			StartFrame: uint64(i + 1),
		}
		for j := 0; j < recorderConnRing+5; j++ {
			r.Event(&decode.Event{Kind: decode.KindRequest, Conn: conn, Frame: uint64(i*100 + j), APIKey: 18, HeaderVersion: 2, ClientID: []byte("c")})
		}
	}
	if len(r.conns) != recorderMaxConns {
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
	conn := flow.ConnID{Client: netip.MustParseAddrPort("10.1.0.1:40000"), Broker: netip.MustParseAddrPort("10.0.0.1:9092"), StartFrame: 1}
	r.conns[conn] = &connRecord{requests: newRing(recorderConnRing)}
	for f := range uint64(3 * recorderContexts) {
		r.Finding(audit.Finding{Rule: "client-id-changed", Frame: f, Conn: conn})
	}
	if len(r.contexts) != 2*recorderContexts {
		t.Fatalf("%d contexts remembered, want %d", len(r.contexts), 2*recorderContexts)
	}
	if r.Around(FindingRow{Client: "10.1.0.1:40000", Broker: "10.0.0.1:9092", Frame: 0}).Rows == nil {
		t.Error("the first finding's context was forgotten")
	}
}
