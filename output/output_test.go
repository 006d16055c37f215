package output

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kwatch/kwatch/audit"
	"github.com/kwatch/kwatch/decode"
	"github.com/kwatch/kwatch/flow"
)

var conn = flow.ConnID{
	Client: netip.MustParseAddrPort("10.1.0.1:40001"),
	Broker: netip.MustParseAddrPort("10.0.0.1:9092"),
}

var at = time.Date(2026, 11, 29, 16, 0, 0, 3000000, time.UTC)

// events are one of each kind a dump writes, and one it does not.
func events() []decode.Event {
	return []decode.Event{
		{Kind: decode.KindRequest, Conn: conn, Frame: 4, Time: at, APIKey: 68, APIVersion: 1, HeaderVersion: 2,
			CorrelationID: 7, Size: 60, ClientID: []byte("app\n"), HasInstanceID: true, InstanceID: decode.UUID{1},
			Body: decode.Body{Decoded: true, Group: "g", MemberID: "m", MemberEpoch: 3}},
		{Kind: decode.KindResponse, Conn: conn, Frame: 5, Time: at, APIKey: 68, APIVersion: 1, HeaderVersion: 1,
			CorrelationID: 7, Size: 30, RequestFrame: 4,
			Body: decode.Body{Decoded: true, HasErrorCode: true, ErrorCode: 42, MemberEpoch: 3}},
		{Kind: decode.KindCoverage, Conn: conn, Frame: 6, Time: at, Coverage: decode.FramingError,
			Detail: "frame size 9 out of range", Bytes: 12, Decrypted: true},
		{Kind: decode.KindConnEnd, Conn: conn, Frame: 7, Time: at},
	}
}

// TestEventFormats: each event format renders the events a dump writes,
// and none of a connection's bookkeeping.
func TestEventFormats(t *testing.T) {
	tests := []struct {
		name   string
		format string
		names  Namer
		want   string
	}{
		{"text", "text", nil, `2026-11-29T16:00:00.003000Z #4 10.1.0.1:40001 > 10.0.0.1:9092 request  ConsumerGroupHeartbeat(68) v1 hdr2 corr=7 client_id="app\n" instance=AQAAAAAAAAAAAAAAAAAAAA group="g" member_id="m" epoch=3
2026-11-29T16:00:00.003000Z #5 10.1.0.1:40001 < 10.0.0.1:9092 response ConsumerGroupHeartbeat(68) v1 hdr1 corr=7 error=INVALID_REQUEST(42)
2026-11-29T16:00:00.003000Z #6 10.1.0.1:40001 - 10.0.0.1:9092 event framing-error: frame size 9 out of range bytes=12 tls
`},
		{"text with capture names", "text", func(f uint64) (string, uint64) { return "b\x1b.pcap", f + 100 }, "2026-11-29T16:00:00.003000Z b\\x1b.pcap#104 "},
		{"ndjson", "ndjson", nil, `{"kind":"request","time":"2026-11-29T16:00:00.003000Z","frame":4,"conn":{"client":"10.1.0.1:40001","broker":"10.0.0.1:9092"},"api":"ConsumerGroupHeartbeat","api_key":68,"api_version":1,"header_version":2,"correlation_id":7,"size":60,"client_id":"app\n","instance_id":"AQAAAAAAAAAAAAAAAAAAAA","group":"g","member_id":"m","member_epoch":3}
{"kind":"response","time":"2026-11-29T16:00:00.003000Z","frame":5,"conn":{"client":"10.1.0.1:40001","broker":"10.0.0.1:9092"},"api":"ConsumerGroupHeartbeat","api_key":68,"api_version":1,"header_version":1,"correlation_id":7,"size":30,"request_frame":4,"member_epoch":3,"error_code":42}
{"kind":"event","time":"2026-11-29T16:00:00.003000Z","frame":6,"event":"framing-error","conn":{"client":"10.1.0.1:40001","broker":"10.0.0.1:9092"},"detail":"frame size 9 out of range","bytes":12,"decrypted":true}
`},
		{"ndjson with capture names", "ndjson", func(f uint64) (string, uint64) { return "a.pcap", f + 100 }, `{"kind":"request","time":"2026-11-29T16:00:00.003000Z","capture":"a.pcap","frame":104,`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := render(t, tt.format, tt.names, events())
			if !strings.HasPrefix(got, tt.want) {
				t.Errorf("got\n%s\nwant (prefix)\n%s", got, tt.want)
			}
		})
	}
}

// TestEventJSONIsNDJSONArray: json is the ndjson lines as one array, and
// valid JSON with or without events.
func TestEventJSONIsNDJSONArray(t *testing.T) {
	for _, n := range []int{0, 1, 3} {
		evs := events()[:n]
		lines := strings.Split(strings.TrimSuffix(render(t, "ndjson", nil, evs), "\n"), "\n")
		want := "[]\n"
		if n > 0 {
			want = "[\n" + strings.Join(lines, ",\n") + "\n]\n"
		}
		got := render(t, "json", nil, evs)
		if got != want {
			t.Errorf("%d events: json\n%s\nwant\n%s", n, got, want)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("%d events: json output is not valid JSON: %s", n, got)
		}
	}
}

func render(t *testing.T, format string, names Namer, evs []decode.Event) string {
	t.Helper()
	f, ok := Events.Lookup(format, nil)
	if !ok {
		t.Fatalf("no event format %q", format)
	}
	var out bytes.Buffer
	w := bufio.NewWriter(&out)
	ew := f.Open(w, names)
	for i := range evs {
		ew.Write(&evs[i])
	}
	ew.Close()
	w.Flush()
	return out.String()
}

// TestRegistry: what each command can ask for, and the names it lists
// when it refuses a format.
func TestRegistry(t *testing.T) {
	tests := []struct {
		name   string
		lookup func(string) bool
		names  []string
		known  []string
		refuse []string
	}{
		{"reports", func(s string) bool { _, ok := Reports.Lookup(s, nil); return ok }, Reports.Names(nil),
			[]string{"text", "json", "ndjson"}, []string{"xml", "", "TEXT"}},
		{"reports after the run", func(s string) bool { _, ok := Reports.Lookup(s, NotStreaming); return ok }, Reports.Names(NotStreaming),
			[]string{"text", "json"}, []string{"ndjson"}},
		{"events", func(s string) bool { _, ok := Events.Lookup(s, nil); return ok }, Events.Names(nil),
			[]string{"text", "json", "ndjson"}, []string{"yaml"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !slices.Equal(tt.names, tt.known) {
				t.Errorf("names %v, want %v", tt.names, tt.known)
			}
			for _, s := range tt.known {
				if !tt.lookup(s) {
					t.Errorf("%q not found", s)
				}
			}
			for _, s := range tt.refuse {
				if tt.lookup(s) {
					t.Errorf("%q found", s)
				}
			}
		})
	}
}

// TestReportFormats: where each report format writes, and what it writes
// per finding.
func TestReportFormats(t *testing.T) {
	f := &audit.Finding{Rule: "instance-id-changed", Severity: audit.SeverityError, Frame: 9, Time: at,
		Conn: conn, Message: "changed"}
	tests := []struct {
		format      string
		findingLine string // prefix; "" when the format writes none
		toDiag      bool
	}{
		{"text", "2026-11-29T16:00:00.003000Z error instance-id-changed frame 9 10.1.0.1:40001 -> 10.0.0.1:9092: changed\n", false},
		{"json", "", false},
		{"ndjson", `{"`, true},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			rf, _ := Reports.Lookup(tt.format, nil)
			var line bytes.Buffer
			if rf.Finding != nil {
				rf.Finding(&line, f)
			}
			if !strings.HasPrefix(line.String(), tt.findingLine) || (tt.findingLine == "") != (line.Len() == 0) {
				t.Errorf("finding %q, want %q", line.String(), tt.findingLine)
			}
			var out, diag bytes.Buffer
			if err := rf.Report(&audit.Report{}, Dest{Out: &out, Diag: &diag}); err != nil {
				t.Fatal(err)
			}
			if (diag.Len() > 0) != tt.toDiag || (out.Len() > 0) == tt.toDiag {
				t.Errorf("report: %d bytes out, %d on diagnostics; want them on diagnostics: %v", out.Len(), diag.Len(), tt.toDiag)
			}
		})
	}
}

// BenchmarkEventWriter: the cost of a dump line per format, over the
// events above (cmd/kwatch's dump measures the whole run).
func BenchmarkEventWriter(b *testing.B) {
	for _, format := range Events.Names(nil) {
		b.Run(format, func(b *testing.B) {
			f, _ := Events.Lookup(format, nil)
			evs := events()[:3]
			w := bufio.NewWriter(discard{})
			ew := f.Open(w, nil)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				ew.Write(&evs[i%3])
			}
		})
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// TestEventWriterAllocs: once its buffer has grown, writing an event
// allocates nothing, in every format (dump writes one per PDU).
func TestEventWriterAllocs(t *testing.T) {
	for _, format := range Events.Names(nil) {
		f, _ := Events.Lookup(format, nil)
		evs := events()
		ew := f.Open(bufio.NewWriter(discard{}), func(n uint64) (string, uint64) { return "a.pcap", n })
		for i := range evs {
			ew.Write(&evs[i])
		}
		if n := testing.AllocsPerRun(100, func() {
			for i := range evs {
				ew.Write(&evs[i])
			}
		}); n != 0 {
			t.Errorf("%s: %v allocations per run of %d events, want 0", format, n, len(evs))
		}
	}
}
