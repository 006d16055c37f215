package pipeline_test

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kwatch/kwatch/audit"
	"github.com/kwatch/kwatch/capture"
	"github.com/kwatch/kwatch/decode"
	"github.com/kwatch/kwatch/internal/pcapgen"
	"github.com/kwatch/kwatch/pipeline"
)

// conversation writes two interleaved connections: a modern client with
// identity traffic and Produce/Fetch of a few sizes, and a legacy client.
func conversation(c *pcapgen.Capture, o1, o2 pcapgen.ConnOptions) {
	id := pcapgen.SeqUUID(0x10)
	a := c.Conn(o1)
	b := c.Conn(o2)
	sa := a.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("orders"), InstanceID: &id, CorrelationID: 1})
	sb := b.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("legacy"), CorrelationID: 100})
	sa.RoundTrip(pcapgen.APIVersions(4, "kwatch-test", "1.0"), pcapgen.APIVersionsResponse(4))
	sb.RoundTrip(pcapgen.APIVersions(3, "librdkafka", "2.3.0"), pcapgen.APIVersionsResponse(3))
	sa.RoundTrip(pcapgen.Metadata(12, "t"), pcapgen.MetadataResponse(12, "10.0.0.1", 9092))
	sb.RoundTrip(pcapgen.Metadata(9, "t"), pcapgen.MetadataResponse(9, "10.0.0.2", 9092))
	topicID := pcapgen.SeqUUID(0x40)
	for i, size := range []int{10, 3000, 20000, 70000} {
		records := bytes.Repeat([]byte{byte(i)}, size)
		sa.RoundTrip(pcapgen.Produce(11, "t", topicID, records), pcapgen.ProduceResponse(11, "t", topicID))
		sb.RoundTrip(pcapgen.Fetch(12, "t", topicID), pcapgen.FetchResponse(12, "t", topicID, records))
	}
	member := pcapgen.JavaString(id)
	sa.RoundTrip(pcapgen.ConsumerGroupHeartbeat(1, "g", member, 0), pcapgen.ConsumerGroupHeartbeatResponse(1, 0, &member, 1))
	// Pipelined: three requests before any answer.
	corrs, _ := sb.Pipeline(pcapgen.Metadata(9, "a"), pcapgen.Metadata(9, "b"), pcapgen.Metadata(9, "c"))
	for _, corr := range corrs {
		sb.Respond(corr, pcapgen.MetadataResponse(9, "10.0.0.2", 9092))
	}
	sa.RoundTrip(pcapgen.PushTelemetry(id, 1), pcapgen.PushTelemetryResponse(0))
	a.Close()
	b.Close()
}

func body(b decode.Body) string {
	if !b.Decoded {
		return "-"
	}
	return fmt.Sprintf("{g=%q m=%q/%v e=%d t=%x/%v s=%d err=%d/%v sw=%s/%s}", b.Group, b.MemberID, b.HasMemberID, b.MemberEpoch,
		b.TelemetryInstanceID, b.HasTelemetryInstanceID, b.SubscriptionID, b.ErrorCode, b.HasErrorCode, b.ClientSoftwareName, b.ClientSoftwareVersion)
}

// line renders an event without its frame and time, which change with
// packetisation; everything else must not.
func line(e *decode.Event) string {
	switch e.Kind {
	case decode.KindRequest:
		return fmt.Sprintf("req %v>%v %s v%d h%d corr=%d cid=%q null=%v inst=%x/%v tag=%v body=%s partial=%v",
			e.Conn.Client, e.Conn.Broker, e.APIKey.String(), e.APIVersion, e.HeaderVersion, e.CorrelationID,
			e.ClientID, e.ClientIDNull, e.InstanceID, e.HasInstanceID, e.TagProblem, body(e.Body), e.Partial)
	case decode.KindResponse:
		return fmt.Sprintf("resp %v<%v %s v%d h%d corr=%d body=%s partial=%v",
			e.Conn.Client, e.Conn.Broker, e.APIKey.String(), e.APIVersion, e.HeaderVersion, e.CorrelationID, body(e.Body), e.Partial)
	case decode.KindCoverage:
		return fmt.Sprintf("event %s %v>%v", e.Coverage, e.Conn.Client, e.Conn.Broker)
	}
	return e.Kind.String()
}

type recorder struct {
	lines  []string
	events []decode.Event
}

func (r *recorder) Event(e *decode.Event) {
	r.lines = append(r.lines, line(e))
	ev := *e
	ev.ClientID = bytes.Clone(e.ClientID)
	r.events = append(r.events, ev)
}

func (r *recorder) count(k decode.Kind, cov decode.Coverage) int {
	n := 0
	for _, e := range r.events {
		if e.Kind == k && (k != decode.KindCoverage || e.Coverage == cov) {
			n++
		}
	}
	return n
}

func runBytes(t *testing.T, data []byte, opts pipeline.Options) (*recorder, pipeline.Stats) {
	t.Helper()
	src, err := capture.NewReader(bytes.NewReader(data), "test.pcap", capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var r recorder
	st, err := pipeline.Run(context.Background(), src, opts, &r)
	if err != nil {
		t.Fatalf("pipeline: %v", err)
	}
	return &r, st
}

func build(t *testing.T, o pcapgen.Options, c1, c2 pcapgen.ConnOptions) []byte {
	t.Helper()
	c := pcapgen.New(o)
	conversation(c, c1, c2)
	data, err := c.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

var (
	client1 = netip.MustParseAddrPort("10.1.0.1:40001")
	client2 = netip.MustParseAddrPort("10.1.0.2:40002")
	broker1 = netip.MustParseAddrPort("10.0.0.1:9092")
	broker2 = netip.MustParseAddrPort("10.0.0.2:9092")
	v6c     = netip.MustParseAddrPort("[fd00::1:1]:40001")
	v6b     = netip.MustParseAddrPort("[fd00::9]:9092")
	v6c2    = netip.MustParseAddrPort("[fd00::1:2]:40002")
	v6b2    = netip.MustParseAddrPort("[fd00::a]:9092")
)

func conns() (pcapgen.ConnOptions, pcapgen.ConnOptions) {
	return pcapgen.ConnOptions{Client: client1, Broker: broker1}, pcapgen.ConnOptions{Client: client2, Broker: broker2}
}

// TestPacketisationInvariance: a capture that has been segmented, reordered,
// retransmitted and overlapped yields exactly the request and response lines
// of the clean original, and so do other link layers and file formats.
func TestPacketisationInvariance(t *testing.T) {
	c1, c2 := conns()
	clean, _ := runBytes(t, build(t, pcapgen.Options{}, c1, c2), pipeline.Options{})
	if got := clean.count(decode.KindRequest, 0); got != 17 {
		t.Fatalf("clean capture: %d requests, want 17:\n%s", got, strings.Join(clean.lines, "\n"))
	}
	if got := clean.count(decode.KindResponse, 0); got != 17 {
		t.Fatalf("clean capture: %d responses, want 16", got)
	}
	for _, l := range clean.lines {
		if strings.HasPrefix(l, "event") {
			t.Fatalf("clean capture has a coverage event: %s", l)
		}
	}
	tests := []struct {
		name string
		opts pcapgen.Options
	}{
		{"small MSS", pcapgen.Options{Perturb: pcapgen.Perturb{MSS: 100}}},
		{"split size field", pcapgen.Options{Perturb: pcapgen.Perturb{SplitAt: []int{1, 2, 3, 5}}}},
		{"reordered", pcapgen.Options{Perturb: pcapgen.Perturb{MSS: 500, Reorder: 4}}},
		{"shuffled", pcapgen.Options{Seed: 7, Perturb: pcapgen.Perturb{MSS: 700, Reorder: 6, Shuffle: true}}},
		{"retransmitted", pcapgen.Options{Perturb: pcapgen.Perturb{MSS: 600, RetransmitEvery: 3}}},
		{"overlapped", pcapgen.Options{Perturb: pcapgen.Perturb{MSS: 600, OverlapEvery: 2}}},
		{"all at once", pcapgen.Options{Seed: 3, Perturb: pcapgen.Perturb{MSS: 300, Reorder: 5, Shuffle: true, RetransmitEvery: 4, OverlapEvery: 3, ACKs: true}}},
		{"jumbo segments", pcapgen.Options{Perturb: pcapgen.Perturb{MSS: 65000}}},
		{"vlan", pcapgen.Options{Link: pcapgen.LinkVLAN}},
		{"linux sll", pcapgen.Options{Link: pcapgen.LinkSLL}},
		{"linux sll2", pcapgen.Options{Link: pcapgen.LinkSLL2}},
		{"bsd null", pcapgen.Options{Link: pcapgen.LinkNull}},
		{"raw ip", pcapgen.Options{Link: pcapgen.LinkRaw}},
		{"pcapng", pcapgen.Options{Format: pcapgen.FormatPCAPNG}},
		{"pcap nanosecond big endian", pcapgen.Options{Format: pcapgen.FormatPCAPNanosBigEndian}},
		{"gzip", pcapgen.Options{Gzip: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := runBytes(t, build(t, tc.opts, c1, c2), pipeline.Options{})
			if d := diff(clean.lines, got.lines); d != "" {
				t.Fatalf("decoded lines differ from the clean capture:\n%s", d)
			}
		})
	}
	t.Run("ipv6", func(t *testing.T) {
		v6 := func(s string) string {
			r := strings.NewReplacer(client1.String(), v6c.String(), broker1.String(), v6b.String(),
				client2.String(), v6c2.String(), broker2.String(), v6b2.String())
			return r.Replace(s)
		}
		got, _ := runBytes(t, build(t, pcapgen.Options{Perturb: pcapgen.Perturb{MSS: 400, Reorder: 3}},
			pcapgen.ConnOptions{Client: v6c, Broker: v6b}, pcapgen.ConnOptions{Client: v6c2, Broker: v6b2}), pipeline.Options{})
		want := make([]string, len(clean.lines))
		for i, l := range clean.lines {
			want[i] = v6(l)
		}
		if d := diff(want, got.lines); d != "" {
			t.Fatalf("IPv6 lines differ:\n%s", d)
		}
	})
}

func diff(want, got []string) string {
	var b strings.Builder
	n := max(len(want), len(got))
	for i := 0; i < n; i++ {
		var w, g string
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w != g {
			fmt.Fprintf(&b, "line %d:\n  want %s\n  got  %s\n", i, w, g)
		}
	}
	return b.String()
}

// TestLoss: one lost segment yields one gap event, and every request that
// starts after the next frame boundary is still decoded.
func TestLoss(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{Client: client1, Broker: broker1, Perturb: &pcapgen.Perturb{MSS: 1000}})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("lossy"), CorrelationID: 1})
	topicID := pcapgen.SeqUUID(1)
	var sent []int32
	for i := 0; i < 6; i++ {
		corr, _ := s.Request(pcapgen.Produce(11, "t", topicID, bytes.Repeat([]byte{1}, 3500)))
		sent = append(sent, corr)
		if i == 2 {
			cn.DropNext(1) // the next data segment (part of request 4) is lost
		}
	}
	cn.Close()
	data, err := c.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	r, _ := runBytes(t, data, pipeline.Options{})
	if n := r.count(decode.KindCoverage, decode.StreamGap); n != 1 {
		t.Fatalf("%d stream-gap events, want 1:\n%s", n, strings.Join(r.lines, "\n"))
	}
	var got []int32
	gapSeen := false
	for _, e := range r.events {
		switch {
		case e.Kind == decode.KindCoverage && e.Coverage == decode.StreamGap:
			gapSeen = true
		case e.Kind == decode.KindRequest:
			got = append(got, e.CorrelationID)
			if e.Partial != gapSeen {
				t.Errorf("request %d: partial=%v, want %v (after the gap)", e.CorrelationID, e.Partial, gapSeen)
			}
		}
	}
	want := []int32{sent[0], sent[1], sent[2], sent[4], sent[5]}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("requests decoded %v, want %v (all but the one that lost bytes)", got, want)
	}
}

// TestMidstream: a capture without the handshake is marked mid-stream and
// still decodes, from the first whole frame on.
func TestMidstream(t *testing.T) {
	for _, tc := range []struct {
		name      string
		opts      pcapgen.ConnOptions
		midstream bool
	}{
		{"no handshake", pcapgen.ConnOptions{Client: client1, Broker: broker1, NoSYN: true}, true},
		{"SYN-ACK only", pcapgen.ConnOptions{Client: client1, Broker: broker1, SkipSYN: true}, false},
		{"broker on a high port", pcapgen.ConnOptions{Client: netip.MustParseAddrPort("10.1.0.1:50000"), Broker: netip.MustParseAddrPort("10.0.0.1:39092"), NoSYN: true}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			cn := c.Conn(tc.opts)
			s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("mid"), CorrelationID: 1})
			for i := 0; i < 3; i++ {
				s.RoundTrip(pcapgen.Metadata(12, "t"), pcapgen.MetadataResponse(12, "h", 9092))
			}
			cn.Close()
			data, _ := c.Bytes()
			r, _ := runBytes(t, data, pipeline.Options{})
			wantMid := 0
			if tc.midstream {
				wantMid = 1
			}
			if n := r.count(decode.KindCoverage, decode.MidstreamJoin); n != wantMid {
				t.Errorf("%d midstream-join events, want %d", n, wantMid)
			}
			if n := r.count(decode.KindRequest, 0); n != 3 {
				t.Errorf("%d requests, want 3:\n%s", n, strings.Join(r.lines, "\n"))
			}
			if n := r.count(decode.KindResponse, 0); n != 3 {
				t.Errorf("%d responses, want 3", n)
			}
			for _, e := range r.events {
				if e.Kind == decode.KindRequest {
					if e.Conn.Client != tc.opts.Client || e.Conn.Broker != tc.opts.Broker {
						t.Fatalf("orientation: client %v broker %v, want %v %v", e.Conn.Client, e.Conn.Broker, tc.opts.Client, tc.opts.Broker)
					}
					if e.FromStart == tc.midstream {
						t.Errorf("FromStart=%v for a capture with midstream=%v", e.FromStart, tc.midstream)
					}
				}
			}
		})
	}
}

// TestRecognition: TLS is reported, other protocols are ignored silently
// unless the user named their port, and raw SASL tokens are skipped.
func TestRecognition(t *testing.T) {
	t.Run("tls", func(t *testing.T) {
		c := pcapgen.New(pcapgen.Options{})
		cn := c.Conn(pcapgen.ConnOptions{Client: client1, Broker: broker1})
		cn.Raw(pcapgen.ToBroker, pcapgen.TLSClientHello())
		cn.Close()
		data, _ := c.Bytes()
		r, _ := runBytes(t, data, pipeline.Options{})
		if n := r.count(decode.KindCoverage, decode.TLSConnection); n != 1 {
			t.Fatalf("%d tls-connection events, want 1: %v", n, r.lines)
		}
	})
	httpCapture := func() []byte {
		c := pcapgen.New(pcapgen.Options{})
		cn := c.Conn(pcapgen.ConnOptions{Client: client1, Broker: netip.MustParseAddrPort("10.0.0.1:80")})
		cn.Raw(pcapgen.ToBroker, []byte("GET / HTTP/1.1\r\nHost: example\r\n\r\n"))
		cn.Raw(pcapgen.ToClient, []byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"))
		cn.Close()
		data, _ := c.Bytes()
		return data
	}
	t.Run("http is not kafka", func(t *testing.T) {
		r, _ := runBytes(t, httpCapture(), pipeline.Options{})
		if len(r.events) != 0 {
			t.Fatalf("HTTP produced events: %v", r.lines)
		}
	})
	t.Run("http on a named port is a framing error", func(t *testing.T) {
		r, _ := runBytes(t, httpCapture(), pipeline.Options{Ports: []uint16{80}})
		if n := r.count(decode.KindCoverage, decode.FramingError); n == 0 {
			t.Fatalf("no framing error for HTTP on a port named Kafka: %v", r.lines)
		}
	})
	t.Run("port filter ignores other ports", func(t *testing.T) {
		c1, c2 := conns()
		r, _ := runBytes(t, build(t, pcapgen.Options{}, c1, c2), pipeline.Options{Ports: []uint16{9093}})
		if len(r.events) != 0 {
			t.Fatalf("events on an unlisted port: %v", r.lines[:min(3, len(r.lines))])
		}
	})
	t.Run("raw sasl tokens", func(t *testing.T) {
		c := pcapgen.New(pcapgen.Options{})
		cn := c.Conn(pcapgen.ConnOptions{Client: client1, Broker: broker1})
		s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("sasl"), CorrelationID: 1})
		s.RoundTrip(pcapgen.SaslHandshake(0, "PLAIN"), pcapgen.SaslHandshakeResponse(0, "PLAIN"))
		secret := []byte("\x00alice\x00hunter2-secret")
		cn.Send(pcapgen.SASLToken(secret))
		cn.Reply(pcapgen.SASLToken(nil))
		s.RoundTrip(pcapgen.Metadata(9, "t"), pcapgen.MetadataResponse(9, "h", 9092))
		cn.Close()
		data, _ := c.Bytes()
		r, _ := runBytes(t, data, pipeline.Options{})
		if n := r.count(decode.KindCoverage, decode.SASLRawTokens); n != 1 {
			t.Errorf("%d sasl-raw-tokens events, want 1: %v", n, r.lines)
		}
		if n := r.count(decode.KindCoverage, decode.FramingError); n != 0 {
			t.Errorf("raw tokens caused %d framing errors: %v", n, r.lines)
		}
		if n := r.count(decode.KindRequest, 0); n != 2 {
			t.Errorf("%d requests, want 2 (handshake, metadata): %v", n, r.lines)
		}
		for _, l := range r.lines {
			if strings.Contains(l, "hunter2") {
				t.Fatalf("secret leaked into an event: %s", l)
			}
		}
	})
}

// TestHostileFrameSize: a frame size over the limit is a framing error, not
// an allocation, and the connection resyncs on the next request.
func TestHostileFrameSize(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{Client: client1, Broker: broker1})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("x"), CorrelationID: 1})
	s.RoundTrip(pcapgen.Metadata(12, "t"), pcapgen.MetadataResponse(12, "h", 9092))
	cn.Send([]byte{0x7f, 0xff, 0xff, 0xf0, 0, 3, 0, 12, 0, 0, 0, 2})
	s.Header.CorrelationID = 3
	s.RoundTrip(pcapgen.Metadata(12, "t"), pcapgen.MetadataResponse(12, "h", 9092))
	cn.Close()
	data, _ := c.Bytes()
	r, _ := runBytes(t, data, pipeline.Options{MaxFrame: 1 << 20})
	if n := r.count(decode.KindCoverage, decode.FramingError); n != 1 {
		t.Fatalf("%d framing errors, want 1: %v", n, r.lines)
	}
	var corrs []int32
	for _, e := range r.events {
		if e.Kind == decode.KindRequest {
			corrs = append(corrs, e.CorrelationID)
		}
	}
	if fmt.Sprint(corrs) != "[1 3]" {
		t.Fatalf("requests %v, want [1 3]: %v", corrs, r.lines)
	}
}

var _ kmsg.Request = (*kmsg.MetadataRequest)(nil)

// TestResyncNullClientID: KIP-1313 clients send a null client ID after a
// connection's first request. After a lost segment, and on a connection
// joined mid-stream, their requests must still be found: by a flexible
// header with clean tags whose correlation ID follows the last one, or,
// with no request seen yet, by the next request following it.
func TestResyncNullClientID(t *testing.T) {
	id := pcapgen.SeqUUID(0x20)
	build := func(opts pcapgen.ConnOptions, drop bool) ([]byte, []int32) {
		c := pcapgen.New(pcapgen.Options{})
		cn := c.Conn(opts)
		if opts.NoSYN {
			cn.DropNext(1) // the capture starts after the first request
		}
		s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("modern"), InstanceID: &id, CorrelationID: 1})
		var corrs []int32
		corr, _ := s.Request(pcapgen.APIVersions(4, "java", "4.2"))
		corrs = append(corrs, corr)
		s.Header.ClientID = nil
		topicID := pcapgen.SeqUUID(3)
		for i := 0; i < 8; i++ {
			if drop && i == 2 {
				cn.DropNext(1)
			}
			if i%2 == 0 {
				corr, _ = s.Request(pcapgen.Produce(11, "t", topicID, bytes.Repeat([]byte{7}, 3000)))
			} else {
				corr, _ = s.Request(pcapgen.Metadata(12, "t"))
			}
			corrs = append(corrs, corr)
		}
		cn.Close()
		data, err := c.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		return data, corrs
	}
	decoded := func(r *recorder) []int32 {
		var got []int32
		for _, e := range r.events {
			if e.Kind == decode.KindRequest {
				got = append(got, e.CorrelationID)
			}
		}
		return got
	}
	t.Run("after a gap", func(t *testing.T) {
		data, corrs := build(pcapgen.ConnOptions{Client: client1, Broker: broker1, Perturb: &pcapgen.Perturb{MSS: 1000}}, true)
		r, _ := runBytes(t, data, pipeline.Options{})
		got := decoded(r)
		// corrs[3] lost bytes; everything after it must be back.
		want := append(append([]int32{}, corrs[:3]...), corrs[4:]...)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("requests %v, want %v:\n%s", got, want, strings.Join(r.lines, "\n"))
		}
	})
	t.Run("mid-stream", func(t *testing.T) {
		data, corrs := build(pcapgen.ConnOptions{Client: client1, Broker: broker1, NoSYN: true}, false)
		r, _ := runBytes(t, data, pipeline.Options{})
		got := decoded(r)
		// Only requests with a null client ID were captured. The first, a
		// 3 KB Produce, starts at the first byte captured, where a clean
		// flexible header is believed; from then on each request follows
		// the last one's correlation ID.
		if fmt.Sprint(got) != fmt.Sprint(corrs[1:]) {
			t.Fatalf("requests %v, want %v:\n%s", got, corrs[1:], strings.Join(r.lines, "\n"))
		}
	})
}

// TestSnapshotsChangeNothing: a TUI takes snapshots while the capture is
// analyzed; however often it does, the final report is the same.
func TestSnapshotsChangeNothing(t *testing.T) {
	report := func(snapshots bool) string {
		src, err := capture.Open(filepath.Join("..", "testdata", "pcaps", "fleet-mixed.pcapng"), capture.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		a := audit.New(audit.Options{})
		sink := decode.SinkFunc(func(e *decode.Event) {
			a.Event(e)
			if snapshots {
				a.Snapshot()
			}
		})
		st, err := pipeline.Run(context.Background(), src, pipeline.Options{}, sink)
		if err != nil {
			t.Fatal(err)
		}
		a.AddCapture(st.Packets, st.Bytes, st.Connections)
		var b bytes.Buffer
		if err := a.Finish(st.LastTime).WriteJSON(&b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	plain, snapped := report(false), report(true)
	if !strings.Contains(plain, `"findings"`) || plain != snapped {
		t.Fatalf("the report changed with snapshots taken:\n%s", diff(strings.Split(plain, "\n"), strings.Split(snapped, "\n")))
	}
}
