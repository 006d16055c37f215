package tui

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kwatch/kwatch/audit"
	"github.com/kwatch/kwatch/decode"
	"github.com/kwatch/kwatch/flow"
)

func fixtureReport() *audit.Report {
	id := decode.UUID{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
	client := netip.MustParseAddrPort("10.0.0.5:53122")
	legacyClient := netip.MustParseAddrPort("10.0.0.8:51000")
	broker := netip.MustParseAddrPort("10.0.0.9:9092")
	return &audit.Report{
		Start: "2026-11-29T16:49:25.123456Z",
		End:   "2026-11-29T16:50:48.579456Z",
		Totals: audit.Totals{
			Packets: 100, Bytes: 2048, Connections: 5, KafkaConnections: 3, OpenConnections: 2, Requests: 40,
			KernelReceived: 90, KernelDropped: 7,
			RequestsByHeaderVersion: map[string]uint64{"v1": 4, "v2": 36},
			Coverage:                map[string]uint64{"midstream-join": 1, "stream-gap": 0},
			Findings:                3,
			FindingsBySeverity:      map[string]uint64{"error": 1, "warn": 1, "info": 1},
			FindingsByRule:          map[string]uint64{"instance-id-changed": 1, "member-id-not-uuid": 1, "client-id-repeated": 1},
		},
		Instances: []audit.Instance{
			{InstanceID: audit.JavaString(id), ClientIDs: []string{"orders-app"}, SoftwareName: "apache-kafka-java", SoftwareVersion: "4.2.0",
				ClientHosts: []string{"10.0.0.5"}, Brokers: []string{"10.0.0.9:9092"}, Connections: 1,
				ConnectionList: []audit.ConnSummary{{Client: "10.0.0.5:53122", Broker: "10.0.0.9:9092", StartFrame: 1}},
				MemberIDs:      map[string][]string{"g": {"m1"}}, Findings: map[string]uint64{"instance-id-changed": 1}},
			{Legacy: true, ClientIDs: []string{"rdkafka"}, ClientHosts: []string{"10.0.0.8"}, Brokers: []string{"10.0.0.9:9092"},
				Connections: 1, MemberIDs: map[string][]string{}, Findings: map[string]uint64{"member-id-not-uuid": 1}},
		},
		Cases: []audit.Case{
			{Rule: "member-id-empty", Severity: audit.SeverityError, Count: 2, InstanceID: audit.JavaString(id),
				SoftwareName: "apache-kafka-java", SoftwareVersion: "4.2.0", First: audit.FrameRef{Frame: 3}, Last: audit.FrameRef{Frame: 5}},
			{Rule: "member-id-empty", Severity: audit.SeverityInfo, Count: 7, ClientIDs: []string{"rdkafka"}, ClientHosts: []string{"10.0.0.8"}},
			{Rule: "broker-accepted-invalid", Severity: audit.SeverityWarn, Count: 1, Broker: "10.0.0.9:9092"},
		},
		Groups:  []audit.GroupView{{Group: "g", Members: []audit.GroupMember{{MemberID: "m\x01", Clients: []string{"a", "b"}, Shared: true}}}},
		Brokers: []audit.BrokerView{{Broker: "10.0.0.9:9092", Clients: 2, Findings: map[string]uint64{"broker-accepted-invalid": 1}}},
		Findings: []audit.Finding{
			{Time: t0, Rule: "instance-id-changed", Severity: audit.SeverityError, KIP: "KIP-1313", Frame: 7,
				Conn: flow.ConnID{Client: client, Broker: broker}, API: "Metadata", APIKey: 3, APIVersion: 12,
				ClientID: "orders-app", InstanceID: id, Expected: "a", Observed: "b", Message: "changed"},
			{Time: t0, Rule: "member-id-not-uuid", Severity: audit.SeverityWarn, KIP: "KIP-1082", Confidence: audit.ConfidencePartial,
				Frame: 9, Conn: flow.ConnID{Client: legacyClient, Broker: broker}, ClientID: "rdkafka", Group: "g", MemberID: "x"},
			{Time: t0, Rule: "client-id-repeated", Severity: audit.SeverityInfo, Frame: 11},
		},
	}
}

func TestFromReport(t *testing.T) {
	d := FromReport(fixtureReport(), Meta{Source: "x.pcap", Done: true})
	checks := []struct {
		name      string
		got, want any
	}{
		{"source", d.Source, "x.pcap"},
		{"done", d.Done, true},
		{"elapsed", d.Elapsed, 83456 * time.Millisecond},
		{"packets", d.Packets, uint64(100)},
		{"requests", d.Requests, uint64(40)},
		{"header v2", d.RequestsByHeader[2], uint64(36)},
		{"connections", d.Connections, 3},
		{"open connections", d.OpenConns, 2},
		{"kernel drops as coverage", d.Coverage["kernel-drops"], uint64(7)},
		{"coverage", d.Coverage["midstream-join"], uint64(1)},
		{"errors", d.FindingsBySeverity[audit.SeverityError], 1},
		{"info", d.FindingsBySeverity[audit.SeverityInfo], 1},
		{"by rule", d.FindingsByRule["member-id-not-uuid"], 1},
		{"instances", len(d.Instances), 2},
		{"software", d.Instances[0].Software, "apache-kafka-java/4.2.0"},
		{"instance key", d.Instances[0].Key, "AAECAwQFBgcICQoLDA0ODw"},
		{"conns", len(d.Instances[0].Conns), 1},
		{"legacy key", d.Instances[1].Key, "legacy 10.0.0.8 rdkafka"},
		{"finding severity", d.Findings[0].Severity, audit.SeverityError},
		{"finding client", d.Findings[0].Client, "10.0.0.5:53122"},
		{"finding instance", d.Findings[0].InstanceID, "AAECAwQFBgcICQoLDA0ODw"},
		{"finding -> instance", d.Findings[0].InstanceKey, d.Instances[0].Key},
		{"legacy finding -> legacy row", d.Findings[1].InstanceKey, d.Instances[1].Key},
		{"confidence", d.Findings[1].Confidence, "partial"},
		{"member", d.Findings[1].MemberID, "x"},
		{"no conn no key", d.Findings[2].InstanceKey, ""},
		{"no conn no client", d.Findings[2].Client, ""},
		{"tcp connections", d.TCPConns, 5},
		{"rule severity is its worst case", d.RuleSeverity["member-id-empty"], audit.SeverityError},
		{"cases", len(d.Cases), 3},
		{"case client", d.Cases[0].InstanceKey, d.Instances[0].Key},
		{"legacy case client", d.Cases[1].InstanceKey, d.Instances[1].Key},
		{"broker case", d.Cases[2].Broker, "10.0.0.9:9092"},
		{"raw findings kept for export", len(d.raw), 3},
		{"groups from the report's view", len(d.Groups), 1},
		{"escaped member ID", d.Groups[0].Members[0].MemberID, `m\x01`},
		{"brokers from the report's view", d.Brokers[0].Findings["broker-accepted-invalid"], 1},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

// TestMetaCounts: the packet loop's counters and a live clock stand in
// for the report's, which the auditor learns only at the end.
func TestMetaCounts(t *testing.T) {
	counts := &CaptureCounts{Packets: 11, Bytes: 900, TCPConns: 4, Truncated: 2, First: t0, Last: t0.Add(3 * time.Second)}
	tests := []struct {
		name    string
		meta    Meta
		packets uint64
		tcp     int
		elapsed time.Duration
	}{
		{"report only", Meta{}, 100, 5, 83456 * time.Millisecond},
		{"replay counts", Meta{Counts: counts}, 11, 4, 3 * time.Second},
		{"live clock", Meta{Counts: counts, Live: true, Clock: 4500 * time.Millisecond}, 11, 4, 4500 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := FromReport(fixtureReport(), tt.meta)
			if d.Packets != tt.packets || d.TCPConns != tt.tcp || d.Elapsed != tt.elapsed {
				t.Errorf("packets %d, TCP %d, elapsed %v; want %d, %d, %v", d.Packets, d.TCPConns, d.Elapsed, tt.packets, tt.tcp, tt.elapsed)
			}
		})
	}
	if d := FromReport(nil, Meta{Counts: counts}); d.Packets != 11 || d.Truncated != 2 {
		t.Errorf("counts without a report: %+v", d)
	}
}

// TestExport: e writes the shown findings, filters applied, as the
// report's NDJSON.
func TestExport(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.ndjson")
	d := FromReport(fixtureReport(), Meta{Done: true})
	m := newSized(t, 120, 40, d, Options{ExportPath: path})
	press(m, "3", "v") // warn and worse: two of the three
	cmd := press(m, "e")
	if cmd == nil {
		t.Fatal("e started no export")
	}
	m.Update(cmd())
	if s := screen(m); !strings.Contains(s, "exported 2 findings to "+path) {
		t.Errorf("status after export:\n%s", s)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"rule":"instance-id-changed"`) || !strings.Contains(lines[1], `"rule":"member-id-not-uuid"`) {
		t.Errorf("export:\n%s", b)
	}
	// A feed without report findings has nothing to export.
	m = newSized(t, 120, 40, fixtureData(), Options{ExportPath: path})
	if cmd := press(m, "3", "e"); cmd != nil {
		t.Error("export without report findings")
	}
}

// TestFromReportSplitLegacy: two processes behind one legacy (host,
// client ID) get two rows with distinct keys.
func TestFromReportSplitLegacy(t *testing.T) {
	r := fixtureReport()
	twin := r.Instances[1]
	twin.TelemetryID = "other"
	r.Instances = append(r.Instances, twin)
	d := FromReport(r, Meta{})
	if d.Instances[1].Key != "legacy 10.0.0.8 rdkafka" || d.Instances[2].Key != "legacy 10.0.0.8 rdkafka (process 2)" {
		t.Errorf("keys %q, %q", d.Instances[1].Key, d.Instances[2].Key)
	}
}

func TestFromReportNil(t *testing.T) {
	d := FromReport(nil, Meta{Source: "eth0", Live: true})
	if d.Source != "eth0" || !d.Live || d.Packets != 0 || d.OpenConns != -1 {
		t.Errorf("FromReport(nil) = %+v", d)
	}
	if got := reportElapsed("", "2026-11-29T16:49:25Z"); got != 0 {
		t.Errorf("elapsed with no start = %v, want 0", got)
	}
}

func TestReportFeedOrder(t *testing.T) {
	var calls []string
	f := ReportFeed{
		Meta:     func() Meta { calls = append(calls, "meta"); return Meta{Done: true} },
		Snapshot: func() *audit.Report { calls = append(calls, "snapshot"); return fixtureReport() },
	}
	d := f.Data()
	if strings.Join(calls, ",") != "meta,snapshot" {
		t.Errorf("calls = %v, want meta before snapshot", calls)
	}
	if !d.Done || len(d.Findings) != 3 {
		t.Errorf("feed data: done %v, %d findings", d.Done, len(d.Findings))
	}
}

func TestExplainRule(t *testing.T) {
	title, text := ExplainRule("instance-id-changed")
	if title == "" || text == "" {
		t.Errorf("ExplainRule(instance-id-changed) = %q, %q; want both set", title, text)
	}
	if title, text := ExplainRule("no-such-rule"); title != "" || text != "" {
		t.Errorf("unknown rule explained: %q, %q", title, text)
	}
}

// TestReportScreens runs the adapter's output through the UI: the legacy
// instance's findings are reachable from its row.
func TestReportScreens(t *testing.T) {
	m := newSized(t, 100, 30, FromReport(fixtureReport(), Meta{Source: "x.pcap", Done: true}), Options{Explain: ExplainRule})
	press(m, "3", "enter")
	s := screen(m)
	if !strings.Contains(s, "Why it matters") {
		t.Errorf("finding detail lacks the rule explanation:\n%s", s)
	}
	m2 := newSized(t, 100, 30, FromReport(fixtureReport(), Meta{Source: "x.pcap", Done: true}), Options{})
	press(m2, "3", "i", "i")
	if s := screen(m2); !strings.Contains(s, "1/3") || !strings.Contains(s, "member-id-not-uuid") {
		t.Errorf("legacy instance filter:\n%s", s)
	}
}

// fakeAuditor hands out the fixture report's findings a few at a time, as
// a running auditor makes them.
type fakeAuditor struct {
	rep   *audit.Report
	avail int // findings made so far
}

func (f *fakeAuditor) SnapshotSince(from int) (*audit.Report, []audit.Finding, int) {
	r := *f.rep
	r.Findings = []audit.Finding{}
	return &r, append([]audit.Finding(nil), f.rep.Findings[from:f.avail]...), f.avail
}

// TestAuditFeed: each finding is converted once and appended; what a
// snapshot handed out never changes.
func TestAuditFeed(t *testing.T) {
	src := &fakeAuditor{rep: fixtureReport(), avail: 2}
	feed := NewAuditFeed(src, func() Meta { return Meta{Source: "x"} })
	first := feed.Data()
	src.avail = 3
	second := feed.Data()
	if len(first.Findings) != 2 || len(second.Findings) != 3 || len(second.raw) != 3 || second.Source != "x" {
		t.Fatalf("findings %d then %d (raw %d)", len(first.Findings), len(second.Findings), len(second.raw))
	}
	if first.Findings[1].Rule != "member-id-not-uuid" || second.Findings[2].Rule != "client-id-repeated" {
		t.Errorf("order: %s, %s", first.Findings[1].Rule, second.Findings[2].Rule)
	}
	if second.Findings[0].Severity != audit.SeverityError || second.FindingsByRule["instance-id-changed"] != 1 {
		t.Errorf("converted %+v, totals %v", second.Findings[0], second.FindingsByRule)
	}
	if third := feed.Data(); len(third.Findings) != 3 {
		t.Errorf("no new finding, yet %d", len(third.Findings))
	}
}
