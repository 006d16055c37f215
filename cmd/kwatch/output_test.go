package main

// SPEC.md section 5: the finding object, the report (totals, instance rows,
// legacy rows, coverage counts), kwatch dump's objects, json/ndjson/text, time
// format, hostile strings, and byte-identical reports across --workers.
// Expectations come from SPEC.md and README.md's "Rules: where SPEC.md is
// silent" only, never from kwatch's implementation.

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/kwatch/kwatch/internal/pcapgen"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// SPEC section 2: "Requests with a v0/v1 header are exempt from the header
// instance-ID rules: they neither set nor break the connection's state."
// Section 5 totals: "requests by header version".
func TestOutputV0V1HeadersExempt(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	// ControlledShutdown v0: header v0 (no client ID field).
	s := bbSession(cn, nil, nil)
	cs := kmsg.NewPtrControlledShutdownRequest()
	cs.Version = 0
	cs.BrokerID = 1
	csr := kmsg.NewPtrControlledShutdownResponse()
	s.RoundTrip(cs, csr)
	// ApiVersions v2 and Metadata v8: header v1, client ID, no tags.
	s.Header.ClientID = pcapgen.Ptr("orders-app")
	s.RoundTrip(pcapgen.APIVersions(2, "", ""), pcapgen.APIVersionsResponse(2))
	s.Header.ClientID = nil
	s.RoundTrip(pcapgen.Metadata(8, "orders"), pcapgen.MetadataResponse(8, "10.0.0.1", 9092))
	// First v2 request carries X: no instance-id-late.
	s.Header.InstanceID = bbID(bbX)
	bbMeta(s)
	// A v1 request in between does not break the state: no dropped.
	s.RoundTrip(pcapgen.Metadata(8, "orders"), pcapgen.MetadataResponse(8, "10.0.0.1", 9092))
	bbMeta(s)
	cn.Close()
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{})
	want := map[string]int{"v0": 1, "v1": 3, "v2": 2}
	for k, v := range want {
		if rep.Totals.ByHeaderVersion[k] != v {
			t.Errorf("requests_by_header_version[%s] = %d, want %d (%v)", k, rep.Totals.ByHeaderVersion[k], v, rep.Totals.ByHeaderVersion)
		}
	}
	if rep.Totals.Requests != 6 {
		t.Errorf("totals.requests %d, want 6", rep.Totals.Requests)
	}
}

// SPEC 5: "ndjson = one finding per line, the summary on stderr": the same
// findings as the json report.
func TestOutputNDJSONSameFindings(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bbSession(cn, pcapgen.Ptr("orders-app"), bbID(bbX))
	bbMeta(s)
	s.Header.ClientID = pcapgen.Ptr("other")
	s.Header.InstanceID = bbID(bbY)
	bbMeta(s)
	bbPush(s, bbZero, 0)
	cn.Close()
	path := bbCaptureFile(t, c, "")
	rep := bbRead(t, path)
	code, stdout, _ := runKwatch("read", "--format", "ndjson", "--fail-on", "never", path)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	lines := strings.Split(strings.TrimRight(stdout, "\n"), "\n")
	if len(lines) != len(rep.Findings) {
		t.Errorf("ndjson has %d lines, json report %d findings", len(lines), len(rep.Findings))
	}
	t.Logf("findings:\n%s", rep.summary())
}

func bb3Str(t *testing.T, v any, what string) string {
	t.Helper()
	s, ok := v.(string)
	if !ok {
		t.Errorf("%s = %v (%T), want a JSON string", what, v, v)
	}
	return s
}

// bb3FindingKeys are the field names of section 5's finding example.
var bb3FindingKeys = []string{"time", "rule", "severity", "kip", "confidence", "frame", "conn",
	"api", "api_key", "api_version", "correlation_id", "client_id", "instance_id",
	"expected", "observed", "message"}

// bb3CheckFinding checks the types of every field of section 5's example
// and the given values (key -> want; nil want = JSON null).
func bb3CheckFinding(t *testing.T, c *pcapgen.Capture, f map[string]any, want map[string]any) {
	t.Helper()
	rule := fmt.Sprint(f["rule"])
	for _, k := range []string{"time", "rule", "severity", "kip", "confidence", "frame", "conn", "api", "api_key", "api_version", "correlation_id", "client_id", "message"} {
		if _, ok := f[k]; !ok {
			t.Errorf("%s finding lacks %q: %v", rule, k, f)
		}
	}
	ts := bb3Str(t, f["time"], rule+".time")
	if !bb3TimeRE.MatchString(ts) {
		t.Errorf("%s time %q not in the spec's form 2026-11-29T16:49:25.123456Z", rule, ts)
	}
	frame := bb3Int(t, f["frame"], rule+".frame")
	if frame >= 1 && int(frame) <= c.Frames() {
		wantT := c.Packets()[frame-1].Time.UTC().Format("2006-01-02T15:04:05.000000Z")
		bb3Eq(t, rule+".time (time of its frame)", ts, wantT)
	} else {
		t.Errorf("%s frame %d outside the capture (1..%d)", rule, frame, c.Frames())
	}
	for _, k := range []string{"rule", "severity", "kip", "confidence", "api", "message"} {
		bb3Str(t, f[k], rule+"."+k)
	}
	if sev := f["severity"]; sev != "error" && sev != "warn" && sev != "info" {
		t.Errorf("%s severity %v", rule, sev)
	}
	if conf := f["confidence"]; conf != "full" && conf != "partial" {
		t.Errorf("%s confidence %v", rule, conf)
	}
	for _, k := range []string{"api_key", "api_version", "correlation_id"} {
		bb3Int(t, f[k], rule+"."+k)
	}
	conn, ok := f["conn"].(map[string]any)
	if !ok {
		t.Errorf("%s conn = %T, want an object", rule, f["conn"])
	} else {
		for _, k := range []string{"client", "broker"} {
			s := bb3Str(t, conn[k], rule+".conn."+k)
			if _, err := netip.ParseAddrPort(s); err != nil {
				t.Errorf("%s conn.%s %q is not ip:port", rule, k, s)
			}
		}
	}
	if v, ok := f["client_id"]; ok && v != nil {
		bb3Str(t, v, rule+".client_id")
	}
	for _, k := range []string{"instance_id", "expected", "observed"} {
		if v, ok := f[k]; ok && v != nil {
			bb3Str(t, v, rule+"."+k)
		}
	}
	if s, ok := f["instance_id"].(string); ok && s != "" {
		if len(s) != 22 || strings.ContainsAny(s, "+/=") {
			t.Errorf("%s instance_id %q is not Java's base64url form", rule, s)
		}
	}
	for k, w := range want {
		var got any
		if strings.HasPrefix(k, "conn.") {
			got = conn[strings.TrimPrefix(k, "conn.")]
		} else {
			var present bool
			got, present = f[k]
			if !present {
				t.Errorf("%s finding lacks %q", rule, k)
				continue
			}
		}
		if w == nil {
			if got != nil {
				t.Errorf("%s.%s = %v, want JSON null", rule, k, got)
			}
			continue
		}
		bb3Eq(t, rule+"."+k, got, w)
	}
}

// ------------------------------------------------------------ finding object

// SPEC 5: "A finding, as one JSON object ... {"time":"2026-11-29T16:49:25.123456Z",
// "rule":"instance-id-changed","severity":"error","kip":"KIP-1313",
// "confidence":"full","frame":1234,"conn":{"client":..,"broker":..},
// "api":"Metadata","api_key":3,"api_version":12,"correlation_id":7,
// "client_id":"orders-app","instance_id":..,"expected":..,"observed":..,"message":..}".
func TestOutputFindingChangedSchema(t *testing.T) {
	c, frame, corr := bb3Changed(pcapgen.Options{})
	rep := bb3ReadJSON(t, bbCaptureFile(t, c, "changed.pcap"))
	fs := bb3Findings(t, rep)
	f := bb3One(t, fs, "instance-id-changed")
	for _, k := range bb3FindingKeys {
		if _, ok := f[k]; !ok {
			t.Errorf("finding lacks %q", k)
		}
	}
	bb3CheckFinding(t, c, f, map[string]any{
		"severity": "error", "kip": "KIP-1313", "confidence": "full", "frame": frame,
		"conn.client": "10.0.0.5:53122", "conn.broker": "10.0.0.9:9092",
		"api": "Metadata", "api_key": 3, "api_version": 12, "correlation_id": corr,
		"client_id": "orders-app", "instance_id": bbJ(bb3X),
		"expected": bbJ(bb3X), "observed": bbJ(bb3Y),
	})
	if m, _ := f["message"].(string); m == "" {
		t.Errorf("empty message")
	}
}

// SPEC 1: "Java's Uuid.toString() is URL-safe base64 without padding (22
// chars). This is the canonical string form kwatch prints for every UUID".
// An ID whose bytes spell '-' and '_' must not come out as '+' and '/'.
func TestOutputInstanceIDJavaForm(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{Client: bb3ClientA, Broker: bb3BrokerA})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("orders-app"), InstanceID: bbID(bb3Dash), CorrelationID: 1})
	bbMeta9(s)
	s.Header.ClientID = nil
	s.Header.InstanceID = nil
	bbMeta9(s)
	cn.Close()
	want := bbJ(bb3Dash)
	if !strings.ContainsAny(want, "-_") {
		t.Fatalf("test ID %s spells no '-' or '_'", want)
	}
	path := bbCaptureFile(t, c, "dash.pcap")
	rep := bb3ReadJSON(t, path)
	f := bb3One(t, bb3Findings(t, rep), "instance-id-dropped")
	bb3CheckFinding(t, c, f, map[string]any{"instance_id": want, "expected": want, "api": "Metadata"})
	// The report row and the dump use the same form.
	found := false
	for _, in := range rep["instances"].([]any) {
		if in.(map[string]any)["instance_id"] == want {
			found = true
		}
	}
	if !found {
		t.Errorf("no instance row with instance_id %s", want)
	}
	_, out, _ := runKwatch("dump", "--format", "ndjson", path)
	if !strings.Contains(out, `"instance_id":"`+want+`"`) {
		t.Errorf("dump does not print instance_id %s:\n%s", want, out)
	}
}

// SPEC 5 finding fields on a non-flexible request: "client_id" and "api"
// spelled as Kafka does ("SaslHandshake"); 3.2 client-id-changed "a later
// request carries a non-null client ID different from the first request's".
func TestOutputFindingSaslHandshake(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{Client: bb3ClientA, Broker: bb3BrokerA})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("first-app"), CorrelationID: 10})
	s.RoundTrip(pcapgen.APIVersions(2, "", ""), pcapgen.APIVersionsResponse(2))
	s.Header.ClientID = pcapgen.Ptr("second-app")
	corr := s.Header.CorrelationID
	frame, _ := s.RoundTrip(pcapgen.SaslHandshake(1, "PLAIN"), pcapgen.SaslHandshakeResponse(1, "PLAIN"))
	cn.Close()
	rep := bb3ReadJSON(t, bbCaptureFile(t, c, "sasl.pcap"))
	f := bb3One(t, bb3Findings(t, rep), "client-id-changed")
	bb3CheckFinding(t, c, f, map[string]any{
		"severity": "warn", "kip": "KIP-1313", "frame": frame, "api": "SaslHandshake",
		"api_key": 17, "api_version": 1, "correlation_id": corr,
	})
	// Without a header instance ID the finding must not name one.
	if v, ok := f["instance_id"]; ok && v != nil && v != "" {
		t.Errorf("legacy finding instance_id = %v, want absent/null", v)
	}
	if obs, _ := f["observed"].(string); !strings.Contains(obs, "second-app") {
		t.Errorf("observed %q does not name the later client ID", obs)
	}
}

// SPEC 5: the finding object has a "client_id" field, and dump uses "the
// same field names" with "client_id (null when null)": a client that never
// sends a client ID gets "client_id": null, not "" and not a missing key.
// DISCREPANCY: kwatch omits "client_id" from the finding entirely.
func TestOutputFindingNullClientID(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{Client: bb3ClientA, Broker: bb3BrokerA})
	s := cn.Session(pcapgen.RequestHeader{InstanceID: bbID(bb3X), CorrelationID: 1})
	bbMeta9(s)
	s.Header.InstanceID = bbID(bb3Y)
	bbMeta9(s)
	cn.Close()
	rep := bb3ReadJSON(t, bbCaptureFile(t, c, "nullcid.pcap"))
	f := bb3One(t, bb3Findings(t, rep), "instance-id-changed")
	bb3CheckFinding(t, c, f, map[string]any{"client_id": nil, "instance_id": bbJ(bb3X)})
}

// SPEC 3.3 rows 4 and 3.7 "PushTelemetry with a zero body ID is
// telemetry-id-zero-push only"; SPEC 5 api names "GetTelemetrySubscriptions"
// (71) and "PushTelemetry" (72), with expected/observed in Java's form.
func TestOutputFindingTelemetry(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{Client: bb3ClientA, Broker: bb3BrokerA})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("tele-app"), InstanceID: bbID(bb3X), CorrelationID: 1})
	bbMeta9(s)
	s.Header.ClientID = nil
	gCorr := s.Header.CorrelationID
	gFrame, _ := s.RoundTrip(pcapgen.GetTelemetrySubscriptions(bb3Zero), pcapgen.GetTelemetrySubscriptionsResponse(42, bb3Zero, 0))
	pCorr := s.Header.CorrelationID
	pFrame, _ := s.RoundTrip(pcapgen.PushTelemetry(bb3Zero, 7), pcapgen.PushTelemetryResponse(42))
	cn.Close()
	rep := bb3ReadJSON(t, bbCaptureFile(t, c, "tele.pcap"))
	fs := bb3Findings(t, rep)
	g := bb3One(t, fs, "telemetry-id-requested-with-header")
	bb3CheckFinding(t, c, g, map[string]any{"severity": "error", "frame": gFrame, "api": "GetTelemetrySubscriptions",
		"api_key": 71, "api_version": 0, "correlation_id": gCorr, "instance_id": bbJ(bb3X), "client_id": "tele-app"})
	p := bb3One(t, fs, "telemetry-id-zero-push")
	bb3CheckFinding(t, c, p, map[string]any{"severity": "error", "frame": pFrame, "api": "PushTelemetry",
		"api_key": 72, "api_version": 0, "correlation_id": pCorr, "instance_id": bbJ(bb3X)})
	if len(bb3Rule(fs, "telemetry-id-mismatch")) != 0 {
		t.Errorf("zero push also reported as telemetry-id-mismatch")
	}
	if e, ok := g["expected"].(string); ok && e != "" && e != bbJ(bb3X) && e != bbJ(bb3Zero) {
		t.Errorf("requested-with-header expected %q, want a Java-form UUID", e)
	}
}

// SPEC 3.4 rules on the three heartbeats; SPEC 5 api names as Kafka spells
// them: "ConsumerGroupHeartbeat" (68), "ShareGroupHeartbeat" (76),
// "StreamsGroupHeartbeat" (88). leave-without-member-id is error, KIP-1082.
func TestOutputFindingHeartbeatAPIs(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{Client: bb3ClientA, Broker: bb3BrokerA})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("grp-app"), CorrelationID: 1})
	type hb struct {
		api   string
		key   int
		frame int
		corr  int32
	}
	var want []hb
	corr, f := s.Request(pcapgen.ConsumerGroupHeartbeat(1, "cg", "", -1))
	want = append(want, hb{"ConsumerGroupHeartbeat", 68, f, corr})
	corr, f = s.Request(pcapgen.ShareGroupHeartbeat(1, "sg", "", -1))
	want = append(want, hb{"ShareGroupHeartbeat", 76, f, corr})
	corr, f = s.Request(pcapgen.StreamsGroupHeartbeat(0, "st", "", -1))
	want = append(want, hb{"StreamsGroupHeartbeat", 88, f, corr})
	cn.Close()
	rep := bb3ReadJSON(t, bbCaptureFile(t, c, "hb.pcap"))
	fs := bb3Rule(bb3Findings(t, rep), "leave-without-member-id")
	if len(fs) != 3 {
		t.Fatalf("%d leave-without-member-id findings, want 3", len(fs))
	}
	for i, w := range want {
		bb3CheckFinding(t, c, fs[i], map[string]any{"severity": "error", "kip": "KIP-1082",
			"api": w.api, "api_key": w.key, "frame": w.frame, "correlation_id": w.corr, "client_id": "grp-app"})
	}
}

// README 12: "client-id-repeated is about a connection, not one request: its
// api is empty, its api_key, api_version and correlation_id are -1, and its
// frame is the connection's last"; SPEC 3.7 "once per connection, when the
// connection ends, with the bytes saved". Ended by an RST (the RST is the
// connection's last packet) and by the end of the capture.
func TestOutputFindingClientIDRepeated(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	var last []int
	for i := 0; i < 2; i++ {
		cn := c.Conn(pcapgen.ConnOptions{Client: netip.AddrPortFrom(bb3ClientA.Addr(), uint16(50000+i)), Broker: bb3BrokerA})
		s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("rep-app"), InstanceID: bbID(bb3X), CorrelationID: 1})
		bbMeta9(s)
		bbMeta9(s)
		bbMeta9(s)
		if i == 0 {
			cn.Reset()
		}
		last = append(last, c.Frames())
	}
	rep := bb3ReadJSON(t, bbCaptureFile(t, c, "rep.pcap"))
	fs := bb3Rule(bb3Findings(t, rep), "client-id-repeated")
	if len(fs) != 2 {
		t.Fatalf("%d client-id-repeated findings, want one per connection (2)", len(fs))
	}
	for i, f := range fs {
		bb3CheckFinding(t, c, f, map[string]any{"severity": "info", "kip": "KIP-1313", "api": "",
			"api_key": -1, "api_version": -1, "correlation_id": -1, "frame": last[i],
			"client_id": "rep-app", "instance_id": bbJ(bb3X)})
		// 2 repeats of "rep-app" (7 bytes) = 14 bytes null would save.
		if obs, _ := f["observed"].(string); !strings.Contains(obs, "14") {
			t.Errorf("observed %q does not give the 14 bytes saved", obs)
		}
	}
}

// SPEC 2: "any finding that depends on the first request carries
// "confidence": "partial"" for a connection joined mid-stream.
func TestOutputFindingPartialMidstream(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{Client: bb3ClientA, Broker: bb3BrokerA, NoSYN: true})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("mid-app"), InstanceID: bbID(bb3X), CorrelationID: 1})
	bbMeta9(s)
	s.Header.InstanceID = bbID(bb3Y)
	bbMeta9(s)
	cn.Close()
	rep := bb3ReadJSON(t, bbCaptureFile(t, c, "mid.pcap"))
	f := bb3One(t, bb3Findings(t, rep), "instance-id-changed")
	bb3CheckFinding(t, c, f, map[string]any{"confidence": "partial"})
}

// SPEC 5: "A report also holds: totals (packets, bytes, connections,
// requests by header version, coverage events)"; README 14: "connections
// counts every TCP connection followed, Kafka or not (kafka_connections
// those recognised as Kafka)".
func TestOutputReportTotals(t *testing.T) {
	c, info := bb3Fleet()
	rep := bb3ReadJSON(t, bbCaptureFile(t, c, "fleet.pcap"))
	tot, ok := rep["totals"].(map[string]any)
	if !ok {
		t.Fatalf("totals is %T", rep["totals"])
	}
	bb3Eq(t, "totals.packets", bb3Int(t, tot["packets"], "packets"), c.Frames())
	wire := 0
	for _, p := range c.Packets() {
		wire += len(p.Data)
	}
	bb3Eq(t, "totals.bytes (captured packet bytes)", bb3Int(t, tot["bytes"], "bytes"), wire)
	bb3Eq(t, "totals.connections", bb3Int(t, tot["connections"], "connections"), 4)
	bb3Eq(t, "totals.kafka_connections", bb3Int(t, tot["kafka_connections"], "kafka_connections"), info.kafkaConns)
	bb3Eq(t, "totals.requests", bb3Int(t, tot["requests"], "requests"), info.requests["v0"]+info.requests["v1"]+info.requests["v2"])
	hv, ok := tot["requests_by_header_version"].(map[string]any)
	if !ok {
		t.Fatalf("requests_by_header_version is %T", tot["requests_by_header_version"])
	}
	for _, v := range []string{"v0", "v1", "v2"} {
		bb3Eq(t, "requests_by_header_version."+v, bb3Int(t, hv[v], v), info.requests[v])
	}
	cov, ok := tot["coverage"].(map[string]any)
	if !ok {
		t.Fatalf("coverage is %T", tot["coverage"])
	}
	// 3.6: "always reported in totals": every name, 0 on a clean capture.
	for _, ev := range []string{"midstream-join", "stream-gap", "framing-error", "tls-connection", "sasl-raw-tokens", "unmatched-response", "truncated-packet"} {
		v, present := cov[ev]
		if !present {
			t.Errorf("coverage lacks %q", ev)
			continue
		}
		bb3Eq(t, "coverage."+ev, bb3Int(t, v, ev), 0)
	}
	fs := bb3Findings(t, rep)
	f := bb3One(t, fs, "instance-id-dropped")
	bb3Eq(t, "dropped frame", bb3Int(t, f["frame"], "frame"), info.droppedAt)
}

func bb3Instance(t *testing.T, rep map[string]any, id string) map[string]any {
	t.Helper()
	for _, in := range rep["instances"].([]any) {
		m := in.(map[string]any)
		if m["instance_id"] == id {
			return m
		}
	}
	t.Fatalf("no instance row %s in %v", id, rep["instances"])
	return nil
}

func bb3Strings(v any) []string {
	arr, _ := v.([]any)
	var out []string
	for _, x := range arr {
		out = append(out, fmt.Sprint(x))
	}
	sort.Strings(out)
	return out
}

// SPEC 5: "one row per client instance: instance ID, client IDs, client
// software name/version, client hosts, brokers, connections, member IDs by
// group, telemetry ID, findings by rule".
func TestOutputReportInstanceRow(t *testing.T) {
	c, _ := bb3Fleet()
	rep := bb3ReadJSON(t, bbCaptureFile(t, c, "fleet.pcap"))
	in := bb3Instance(t, rep, bbJ(bb3X))
	bb3Eq(t, "client_ids", bb3Strings(in["client_ids"]), []string{"orders-app"})
	bb3Eq(t, "software_name", in["software_name"], "apache-kafka-java")
	bb3Eq(t, "software_version", in["software_version"], "4.2.0")
	bb3Eq(t, "client_hosts", bb3Strings(in["client_hosts"]), []string{"10.0.0.5"})
	bb3Eq(t, "brokers", bb3Strings(in["brokers"]), []string{"10.0.0.10:9092", "10.0.0.9:9092"})
	bb3Eq(t, "connections", bb3Int(t, in["connections"], "connections"), 2)
	mids, ok := in["member_ids"].(map[string]any)
	if !ok {
		t.Fatalf("member_ids is %T", in["member_ids"])
	}
	bb3Eq(t, "member_ids.g1", bb3Strings(mids["g1"]), []string{bbJ(bb3X)})
	bb3Eq(t, "member_ids.g2", bb3Strings(mids["g2"]), []string{bbJ(bb3X)})
	bb3Eq(t, "telemetry_id", in["telemetry_id"], bbJ(bb3X))
	byRule, ok := in["findings"].(map[string]any)
	if !ok {
		t.Fatalf("row findings is %T, want an object by rule", in["findings"])
	}
	bb3Eq(t, "findings.instance-id-dropped", bb3Int(t, byRule["instance-id-dropped"], "n"), 1)
	if len(byRule) != 1 {
		t.Errorf("row findings %v, want only instance-id-dropped", byRule)
	}
}

// README 11: "Clients without a header instance ID are grouped per (client
// IP, first client ID) as "legacy" rows"; SPEC 1: only "ApiVersions (v3+
// request has ClientSoftwareName/Version)" names the software.
func TestOutputReportLegacyRow(t *testing.T) {
	c, _ := bb3Fleet()
	rep := bb3ReadJSON(t, bbCaptureFile(t, c, "fleet.pcap"))
	var row map[string]any
	for _, in := range rep["instances"].([]any) {
		m := in.(map[string]any)
		if reflect.DeepEqual(bb3Strings(m["client_ids"]), []string{"legacy-app"}) {
			row = m
		}
	}
	if row == nil {
		t.Fatalf("no legacy row for legacy-app: %v", rep["instances"])
	}
	bb3Eq(t, "legacy", row["legacy"], true)
	if v, ok := row["instance_id"]; ok && v != nil && v != "" {
		t.Errorf("legacy row instance_id %v", v)
	}
	bb3Eq(t, "client_hosts", bb3Strings(row["client_hosts"]), []string{"10.0.0.7"})
	bb3Eq(t, "brokers", bb3Strings(row["brokers"]), []string{"10.0.0.9:9092"})
	bb3Eq(t, "connections", bb3Int(t, row["connections"], "connections"), 1)
	if v, ok := row["software_name"]; ok && v != nil && v != "" {
		t.Errorf("software_name %v from ApiVersions v2, which carries none", v)
	}
	// The HTTP client is not a Kafka client: no row for 10.0.0.8.
	for _, in := range rep["instances"].([]any) {
		if strings.Contains(fmt.Sprint(in.(map[string]any)["client_hosts"]), "10.0.0.8") {
			t.Errorf("non-Kafka connection has a client row: %v", in)
		}
	}
}

// README 14: "A report without findings has "findings": []" (SPEC 5: the
// findings are "an array in a report"), also for a capture with no packets,
// whose audit is incomplete (SPEC 5: exit 3, "an empty capture").
func TestOutputReportEmptyFindingsArray(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("ok-app"), CorrelationID: 1})
	bbMeta9(s)
	cn.Close()
	empty := pcapgen.New(pcapgen.Options{})
	for name, cc := range map[string]*pcapgen.Capture{"clean.pcap": c, "nopackets.pcap": empty} {
		code, out, errOut := runKwatch("read", "--format", "json", bbCaptureFile(t, cc, name))
		if want := map[string]int{"clean.pcap": 0, "nopackets.pcap": 3}[name]; code != want {
			t.Errorf("%s: exit %d (%s)", name, code, errOut)
			continue
		}
		if !regexp.MustCompile(`"findings":\s*\[\s*\]`).MatchString(out) {
			t.Errorf("%s: report has no \"findings\": []:\n%s", name, out)
		}
		rep := bb3Decode(t, out).(map[string]any)
		if _, ok := rep["instances"].([]any); !ok {
			t.Errorf("%s: instances is %T, want an array", name, rep["instances"])
		}
	}
}

// SPEC 3.6 coverage events "always reported in totals", counted per name.
func TestOutputReportCoverageCounts(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	// midstream-join
	cn := c.Conn(pcapgen.ConnOptions{NoSYN: true})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("a"), CorrelationID: 1})
	bbMeta9(s)
	cn.Close()
	// tls-connection x2
	for i := 0; i < 2; i++ {
		tl := c.Conn(pcapgen.ConnOptions{Broker: netip.MustParseAddrPort("10.0.0.1:9093")})
		tl.Raw(pcapgen.ToBroker, pcapgen.TLSClientHello())
		tl.Close()
	}
	// unmatched-response
	cn = c.Conn(pcapgen.ConnOptions{})
	s = cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("b"), CorrelationID: 1})
	bbMeta9(s)
	s.Respond(999, pcapgen.MetadataResponse(12, "10.0.0.1", 9092))
	cn.Close()
	rep := bb3ReadJSON(t, bbCaptureFile(t, c, "cov.pcap"))
	cov := rep["totals"].(map[string]any)["coverage"].(map[string]any)
	bb3Eq(t, "midstream-join", bb3Int(t, cov["midstream-join"], "m"), 1)
	bb3Eq(t, "tls-connection", bb3Int(t, cov["tls-connection"], "t"), 2)
	bb3Eq(t, "unmatched-response", bb3Int(t, cov["unmatched-response"], "u"), 1)
	bb3Eq(t, "framing-error", bb3Int(t, cov["framing-error"], "f"), 0)
}

// bb3CheckPDU checks the common fields of section 5 for requests/responses.
func bb3CheckPDU(t *testing.T, o map[string]any) {
	t.Helper()
	what := fmt.Sprintf("%v %v", o["kind"], o["api"])
	for _, k := range []string{"time", "frame", "conn", "api", "api_key", "api_version", "header_version", "correlation_id"} {
		if _, ok := o[k]; !ok {
			t.Errorf("%s lacks %q: %v", what, k, o)
		}
	}
	if s := bb3Str(t, o["time"], what+".time"); !bb3TimeRE.MatchString(s) {
		t.Errorf("%s time %q", what, s)
	}
	for _, k := range []string{"frame", "api_key", "api_version", "header_version", "correlation_id"} {
		bb3Int(t, o[k], what+"."+k)
	}
	if cn, ok := o["conn"].(map[string]any); !ok || cn["client"] == nil || cn["broker"] == nil {
		t.Errorf("%s conn = %v", what, o["conn"])
	}
	if o["kind"] == "request" {
		if _, ok := o["client_id"]; !ok {
			t.Errorf("%s lacks client_id", what)
		}
	}
}

// SPEC 5: "kwatch dump --format ndjson writes one object per decoded PDU or
// coverage event ... "kind" is "request", "response" or "event"; requests
// and responses carry time, frame, conn, api, api_key, api_version,
// header_version, correlation_id, and requests client_id (null when null)
// and instance_id (absent when absent or zero)". SPEC 1: header versions
// v0 (ControlledShutdown v0), v1, v2; ApiVersions responses always v0.
func TestOutputDumpCommonFields(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{Client: bb3ClientA, Broker: bb3BrokerA})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("dump-app"), InstanceID: bbID(bb3X), CorrelationID: 1})
	avF, avRF := s.RoundTrip(pcapgen.APIVersions(3, "apache-kafka-java", "4.2.0"), pcapgen.APIVersionsResponse(3))
	s.Header.ClientID = nil
	nullF := bbMeta9(s) // client_id null, instance X
	s.Header.InstanceID = bbID(bb3Zero)
	zeroF := bbMeta9(s) // zero instance: absent in dump
	s.Header.InstanceID = nil
	absentF := bbMeta9(s)
	s.Header.ClientID = pcapgen.Ptr("")
	emptyF, _ := s.RoundTrip(pcapgen.Metadata(1, "orders"), pcapgen.MetadataResponse(1, "h", 1)) // header v1, empty client ID
	_, csF := s.Request(kmsg.NewPtrControlledShutdownRequest())
	cn.Close()
	objs := bbDump(t, bbCaptureFile(t, c, "dump.pcap"))
	byFrame := map[int64]map[string]any{}
	for _, o := range objs {
		bb3CheckPDU(t, o)
		if o["kind"] != "request" && o["kind"] != "response" {
			t.Errorf("unexpected kind %v on a clean capture: %v", o["kind"], o)
		}
		byFrame[bb3Int(t, o["frame"], "frame")] = o
	}
	if n := len(bb3Kind(objs, "request", "")); n != 6 {
		t.Errorf("%d request objects, want 6", n)
	}
	if n := len(bb3Kind(objs, "response", "")); n != 5 {
		t.Errorf("%d response objects, want 5 (ControlledShutdown unanswered)", n)
	}
	chk := func(frame int, key string, want any, present bool) {
		t.Helper()
		o := byFrame[int64(frame)]
		if o == nil {
			t.Errorf("no object at frame %d", frame)
			return
		}
		v, ok := o[key]
		if ok != present {
			t.Errorf("frame %d (%v): %q present=%v, want %v (value %v)", frame, o["api"], key, ok, present, v)
			return
		}
		if present && fmt.Sprint(v) != fmt.Sprint(want) {
			t.Errorf("frame %d (%v): %s = %v, want %v", frame, o["api"], key, v, want)
		}
	}
	chk(avF, "client_id", "dump-app", true)
	chk(avF, "instance_id", bbJ(bb3X), true)
	chk(avF, "header_version", 2, true)
	chk(avF, "api", "ApiVersions", true)
	chk(avF, "api_key", 18, true)
	chk(avF, "correlation_id", 1, true)
	chk(avRF, "kind", "response", true)
	chk(avRF, "header_version", 0, true)
	chk(avRF+2, "header_version", 1, true) // Metadata v12 response: flexible
	chk(nullF, "client_id", nil, true)
	if o := byFrame[int64(nullF)]; o != nil && o["client_id"] != nil {
		t.Errorf("null client ID dumped as %v, want JSON null", o["client_id"])
	}
	chk(nullF, "instance_id", bbJ(bb3X), true)
	chk(zeroF, "instance_id", nil, false)
	chk(absentF, "instance_id", nil, false)
	chk(emptyF, "client_id", "", true)
	chk(emptyF, "header_version", 1, true)
	chk(csF, "header_version", 0, true)
	chk(csF, "api", "ControlledShutdown", true)
}

// SPEC 5: "decoded bodies add group, member_id, member_epoch,
// telemetry_instance_id, subscription_id, error_code, client_software_name,
// client_software_version where they apply".
func TestOutputDumpBodyFields(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{Client: bb3ClientA, Broker: bb3BrokerA})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("body-app"), CorrelationID: 1})
	m := bbJ(bb3X)
	avF, _ := s.RoundTrip(pcapgen.APIVersions(4, "librdkafka", "2.6.0"), pcapgen.APIVersionsResponse(4))
	cgF, cgRF := s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(1, "cg", m, 0), pcapgen.ConsumerGroupHeartbeatResponse(1, 0, &m, 5))
	shF, shRF := s.RoundTrip(pcapgen.ShareGroupHeartbeat(1, "sg", m, 3), pcapgen.ShareGroupHeartbeatResponse(1, 25, nil, 3))
	stF, stRF := s.RoundTrip(pcapgen.StreamsGroupHeartbeat(0, "st", m, -1), pcapgen.StreamsGroupHeartbeatResponse(0, 0, m, -1))
	gF, gRF := s.RoundTrip(pcapgen.GetTelemetrySubscriptions(bb3Zero), pcapgen.GetTelemetrySubscriptionsResponse(0, bb3Y, 77))
	pF, pRF := s.RoundTrip(pcapgen.PushTelemetry(bb3Y, 77), pcapgen.PushTelemetryResponse(0))
	_, saRF := s.RoundTrip(pcapgen.SaslHandshake(1, "PLAIN"), pcapgen.SaslHandshakeResponse(1, "PLAIN"))
	cn.Close()
	objs := bbDump(t, bbCaptureFile(t, c, "bodies.pcap"))
	byFrame := map[int64]map[string]any{}
	for _, o := range objs {
		bb3CheckPDU(t, o)
		byFrame[bb3Int(t, o["frame"], "frame")] = o
	}
	type kv = map[string]any
	want := map[int]kv{
		avF:  {"api": "ApiVersions", "client_software_name": "librdkafka", "client_software_version": "2.6.0"},
		cgF:  {"api": "ConsumerGroupHeartbeat", "api_key": 68, "group": "cg", "member_id": m, "member_epoch": 0},
		cgRF: {"api": "ConsumerGroupHeartbeat", "member_id": m, "member_epoch": 5, "error_code": 0},
		shF:  {"api": "ShareGroupHeartbeat", "api_key": 76, "group": "sg", "member_id": m, "member_epoch": 3},
		shRF: {"error_code": 25},
		stF:  {"api": "StreamsGroupHeartbeat", "api_key": 88, "group": "st", "member_id": m, "member_epoch": -1},
		stRF: {"error_code": 0, "member_epoch": -1},
		gF:   {"api": "GetTelemetrySubscriptions", "api_key": 71, "telemetry_instance_id": bbJ(bb3Zero)},
		gRF:  {"telemetry_instance_id": bbJ(bb3Y), "subscription_id": 77, "error_code": 0},
		pF:   {"api": "PushTelemetry", "api_key": 72, "telemetry_instance_id": bbJ(bb3Y), "subscription_id": 77},
		pRF:  {"api": "PushTelemetry", "error_code": 0},
		saRF: {"api": "SaslHandshake", "api_key": 17, "error_code": 0},
	}
	bbCheckDumpFields(t, func(f int) map[string]any { return byFrame[int64(f)] }, want)
	// Body fields are where they apply only: Metadata-like PDUs and
	// ApiVersions carry no group.
	if o := byFrame[int64(avF)]; o != nil {
		for _, k := range []string{"group", "member_id", "member_epoch", "subscription_id"} {
			if _, ok := o[k]; ok {
				t.Errorf("ApiVersions request carries %q", k)
			}
		}
	}
}

// SPEC 5: "events carry event (the names of 3.6) and conn", kind "event".
func TestOutputDumpEvents(t *testing.T) {
	cases := []struct {
		event string
		build func(c *pcapgen.Capture)
		opts  pcapgen.Options
	}{
		{"midstream-join", func(c *pcapgen.Capture) {
			cn := c.Conn(pcapgen.ConnOptions{Client: bb3ClientA, Broker: bb3BrokerA, NoSYN: true})
			bbMeta9(cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("a"), CorrelationID: 1}))
			cn.Close()
		}, pcapgen.Options{}},
		{"tls-connection", func(c *pcapgen.Capture) {
			cn := c.Conn(pcapgen.ConnOptions{Client: bb3ClientA, Broker: bb3BrokerA})
			cn.Raw(pcapgen.ToBroker, pcapgen.TLSClientHello())
			cn.Close()
		}, pcapgen.Options{}},
		{"unmatched-response", func(c *pcapgen.Capture) {
			cn := c.Conn(pcapgen.ConnOptions{Client: bb3ClientA, Broker: bb3BrokerA})
			s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("a"), CorrelationID: 1})
			bbMeta9(s)
			s.Respond(999, pcapgen.MetadataResponse(12, "h", 1))
			cn.Close()
		}, pcapgen.Options{}},
		{"framing-error", func(c *pcapgen.Capture) {
			cn := c.Conn(pcapgen.ConnOptions{Client: bb3ClientA, Broker: bb3BrokerA})
			s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("a"), CorrelationID: 1})
			bbMeta9(s)
			cn.Raw(pcapgen.ToBroker, []byte{0, 0, 0, 3, 1, 2, 3})
			cn.Close()
		}, pcapgen.Options{}},
		{"sasl-raw-tokens", func(c *pcapgen.Capture) {
			cn := c.Conn(pcapgen.ConnOptions{Client: bb3ClientA, Broker: bb3BrokerA})
			s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("a"), CorrelationID: 1})
			s.RoundTrip(pcapgen.SaslHandshake(0, "PLAIN"), pcapgen.SaslHandshakeResponse(0, "PLAIN"))
			cn.Raw(pcapgen.ToBroker, pcapgen.SASLToken([]byte("\x00alice\x00secret")))
			cn.Raw(pcapgen.ToClient, pcapgen.SASLToken(nil))
			bbMeta9(s)
			cn.Close()
		}, pcapgen.Options{}},
		{"stream-gap", func(c *pcapgen.Capture) {
			cn := c.Conn(pcapgen.ConnOptions{Client: bb3ClientA, Broker: bb3BrokerA, Perturb: &pcapgen.Perturb{Drop: []int{3}}})
			s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("a"), CorrelationID: 1})
			for i := 0; i < 4; i++ {
				bbMeta9(s)
			}
			cn.Close()
		}, pcapgen.Options{}},
		{"truncated-packet", func(c *pcapgen.Capture) {
			cn := c.Conn(pcapgen.ConnOptions{Client: bb3ClientA, Broker: bb3BrokerA})
			bbMeta9(cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("a"), CorrelationID: 1}))
			cn.Close()
		}, pcapgen.Options{Snaplen: 70}},
	}
	for _, tc := range cases {
		t.Run(tc.event, func(t *testing.T) {
			c := pcapgen.New(tc.opts)
			tc.build(c)
			path := bbCaptureFile(t, c, "ev.pcap")
			objs := bbDump(t, path)
			evs := bb3Kind(objs, "event", "")
			var hit map[string]any
			for _, e := range evs {
				if e["event"] == tc.event {
					hit = e
				}
			}
			if hit == nil {
				t.Fatalf("no event %q in dump: %v", tc.event, evs)
			}
			cn, ok := hit["conn"].(map[string]any)
			if !ok || cn["client"] != bb3ClientA.String() || cn["broker"] != bb3BrokerA.String() {
				t.Errorf("event conn = %v, want client %s broker %s", hit["conn"], bb3ClientA, bb3BrokerA)
			}
			// The dump's events agree with the report's coverage count.
			rep := bb3ReadJSON(t, path)
			n := bb3Int(t, rep["totals"].(map[string]any)["coverage"].(map[string]any)[tc.event], tc.event)
			if n < 1 {
				t.Errorf("report coverage %s = %d", tc.event, n)
			}
		})
	}
}

// SPEC 5 / README: dump --format json holds the same objects as ndjson
// (one object per decoded PDU or coverage event).
func TestOutputDumpJSONMatchesNDJSON(t *testing.T) {
	c, _ := bb3Fleet()
	path := bbCaptureFile(t, c, "fleet.pcap")
	nd := bbDump(t, path)
	code, out, errOut := runKwatch("dump", "--format", "json", path)
	if code != 0 {
		t.Fatalf("exit %d (%s)", code, errOut)
	}
	arr, ok := bb3Decode(t, out).([]any)
	if !ok {
		t.Fatalf("dump --format json is not an array:\n%.400s", out)
	}
	if len(arr) != len(nd) {
		t.Fatalf("json has %d objects, ndjson %d", len(arr), len(nd))
	}
	for i := range arr {
		if !reflect.DeepEqual(arr[i], any(nd[i])) {
			t.Errorf("object %d differs:\njson   %v\nndjson %v", i, arr[i], nd[i])
		}
	}
	rep := bb3ReadJSON(t, path)
	tot := rep["totals"].(map[string]any)
	bb3Eq(t, "dump requests vs totals.requests", len(bb3Kind(nd, "request", "")), bb3Int(t, tot["requests"], "requests"))
}

// ------------------------------------------------------------ read formats

// SPEC 6: "ndjson = one finding per line, the summary on stderr".
func TestOutputReadNDJSON(t *testing.T) {
	c, _ := bb3Fleet()
	path := bbCaptureFile(t, c, "fleet.pcap")
	rep := bb3ReadJSON(t, path)
	want := bb3Findings(t, rep)
	code, out, errOut := runKwatch("read", "--format", "ndjson", "--fail-on", "never", path)
	if code != 0 {
		t.Fatalf("exit %d (%s)", code, errOut)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d ndjson lines, want %d findings:\n%s", len(lines), len(want), out)
	}
	for i, l := range lines {
		got := bb3Decode(t, l)
		if !reflect.DeepEqual(got, any(want[i])) {
			t.Errorf("line %d differs from the report's finding:\n%s\n%v", i+1, l, want[i])
		}
	}
	if strings.TrimSpace(errOut) == "" {
		t.Errorf("no summary on stderr")
	}
	if strings.Contains(errOut, `"rule"`) {
		t.Errorf("stderr holds findings: %s", errOut)
	}
}

// SPEC 6 ndjson with no finding: nothing on stdout, exit 0.
func TestOutputReadNDJSONNoFindings(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	bbMeta9(cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("ok"), CorrelationID: 1}))
	cn.Close()
	code, out, errOut := runKwatch("read", "--format", "ndjson", bbCaptureFile(t, c, "ok.pcap"))
	if code != 0 || out != "" {
		t.Errorf("exit %d, stdout %q, want 0 and nothing (stderr %q)", code, out, errOut)
	}
}

// SPEC 5 time format with a nanosecond pcapng capture: the spec's
// "2026-11-29T16:49:25.123456Z" form (microseconds, UTC, 'Z').
func TestOutputTimeFormatNanos(t *testing.T) {
	start := time.Date(2026, 11, 29, 16, 49, 25, 123456789, time.FixedZone("X", 3600))
	c, frame, _ := bb3Changed(pcapgen.Options{Start: start})
	rep := bb3ReadJSON(t, bbCaptureFile(t, c, "ns.pcapng"))
	f := bb3One(t, bb3Findings(t, rep), "instance-id-changed")
	want := c.Packets()[frame-1].Time.UTC().Truncate(time.Microsecond).Format("2006-01-02T15:04:05.000000Z")
	bb3Eq(t, "time", f["time"], want)
}

// SPEC 5 conn object "client":"10.0.0.5:53122": an IPv6 endpoint is
// written so that it still parses as ip:port ("[addr]:port").
func TestOutputIPv6Conn(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cl, br := netip.MustParseAddrPort("[fd00::5]:53122"), netip.MustParseAddrPort("[fd00::9]:9092")
	cn := c.Conn(pcapgen.ConnOptions{Client: cl, Broker: br})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("v6-app"), InstanceID: bbID(bb3X), CorrelationID: 1})
	bbMeta9(s)
	s.Header.ClientID = nil
	s.Header.InstanceID = bbID(bb3Y)
	bbMeta9(s)
	cn.Close()
	path := bbCaptureFile(t, c, "v6.pcap")
	f := bb3One(t, bb3Findings(t, bb3ReadJSON(t, path)), "instance-id-changed")
	bb3CheckFinding(t, c, f, map[string]any{"conn.client": cl.String(), "conn.broker": br.String()})
	objs := bbDump(t, path)
	if len(objs) == 0 || objs[0]["conn"].(map[string]any)["client"] != cl.String() {
		t.Errorf("dump conn %v, want client %s", objs, cl)
	}
}

// SPEC 5 row "telemetry ID" and "findings by rule" for a client without
// instance ID (README 11 legacy row): 3.3 row 1 "remember B as the
// connection's telemetry ID".
func TestOutputLegacyRowTelemetryAndFindings(t *testing.T) {
	b := pcapgen.SeqUUID(0x40)
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{Client: bb3ClientA, Broker: bb3BrokerA})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("legacy-tele"), CorrelationID: 1})
	s.RoundTrip(pcapgen.APIVersions(3, "librdkafka", "2.6.0"), pcapgen.APIVersionsResponse(3))
	s.RoundTrip(pcapgen.GetTelemetrySubscriptions(bb3Zero), pcapgen.GetTelemetrySubscriptionsResponse(0, b, 7))
	s.RoundTrip(pcapgen.PushTelemetry(b, 7), pcapgen.PushTelemetryResponse(0))
	s.Header.ClientID = pcapgen.Ptr("renamed")
	bbMeta9(s)
	cn.Close()
	rep := bb3ReadJSON(t, bbCaptureFile(t, c, "lt.pcap"))
	fs := bb3Findings(t, rep)
	bb3One(t, fs, "client-id-changed")
	rows := rep["instances"].([]any)
	if len(rows) != 1 {
		t.Fatalf("%d rows, want 1 legacy row", len(rows))
	}
	row := rows[0].(map[string]any)
	bb3Eq(t, "legacy", row["legacy"], true)
	bb3Eq(t, "telemetry_id", row["telemetry_id"], bbJ(b))
	bb3Eq(t, "software_name", row["software_name"], "librdkafka")
	bb3Eq(t, "software_version", row["software_version"], "2.6.0")
	by, _ := row["findings"].(map[string]any)
	bb3Eq(t, "findings.client-id-changed", by["client-id-changed"], json.Number("1"))
	bb3Eq(t, "client_ids[0] (first client ID)", bb3Strings(row["client_ids"])[0] != "", true)
}

// ------------------------------------------------------------- command line

// README (Commands): "--workers N (connections sharded by flow over N
// goroutines ...; the report is byte for byte the same for any N)". A capture
// of interleaved connections with findings of every kind, read with 1, 2, 3
// and 4 workers, in json and ndjson.
func TestOutputWorkersSameReport(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{Perturb: pcapgen.Perturb{MSS: 40}})
	type cl struct {
		cn *pcapgen.Conn
		s  *pcapgen.Session
	}
	var cls []cl
	for i := 0; i < 6; i++ {
		o := pcapgen.ConnOptions{Client: bb7Host(fmt.Sprintf("10.7.5.%d", i+1), 41001)}
		if i%2 == 0 {
			cn, s := bb7Modern(c, o, "app", bb7X)
			cls = append(cls, cl{cn, s})
		} else {
			cn, s := bb7Legacy(c, o, fmt.Sprintf("legacy-%d", i))
			cls = append(cls, cl{cn, s})
		}
	}
	m := bbJ(pcapgen.SeqUUID(0x0c))
	for round := 0; round < 3; round++ {
		for i, x := range cls {
			switch round {
			case 0:
				bb7CG.join(x.s, "g", m)
			case 1:
				x.s.Header.InstanceID = &bb7Y
				x.s.Header.ClientID = pcapgen.Ptr(fmt.Sprintf("other-%d", i))
				bbMeta(x.s)
			case 2:
				x.s.RoundTrip(pcapgen.PushTelemetry(bb7Zero, 7), pcapgen.PushTelemetryResponse(errNone))
			}
		}
	}
	for _, x := range cls {
		x.cn.Close()
	}
	path := bbCaptureFile(t, c, "")
	for _, format := range []string{"json", "ndjson"} {
		var first string
		for _, w := range []string{"1", "2", "3", "4"} {
			code, out, errOut := runKwatch("read", "--format", format, "--fail-on", "never", "--workers", w, path)
			if code != 0 {
				t.Fatalf("--workers %s: exit %d (%s)", w, code, errOut)
			}
			if w == "1" {
				first = out
				if strings.Count(out, `"rule"`) < 10 {
					t.Fatalf("scenario gives too few findings:\n%s", out)
				}
				continue
			}
			if out != first {
				t.Errorf("--format %s --workers %s: report differs from --workers 1", format, w)
			}
		}
	}
}

// ------------------------------------------------------------ (1) rows, JSON

// The reference session (see bb8bSession) is compliant with every rule of
// SPEC 3: zero findings, exit 0 even with --fail-on info. SPEC 5: "A report
// also holds: totals (packets, bytes, connections, requests by header
// version, coverage events), and one row per client instance: instance ID,
// client IDs, client software name/version, client hosts, brokers,
// connections, member IDs by group, telemetry ID, findings by rule". SPEC 1:
// Produce v8 is non-flexible, header v1; everything else here is flexible.
// README 14: "connections counts every TCP connection followed".
func TestOutputReferenceSessionRows(t *testing.T) {
	c, _ := bb8bSession(nil)
	rep, path := bb8bRun(t, c)
	bbExpect(t, rep, nil)
	if code, _, errOut := runKwatch("read", "--fail-on", "info", path); code != 0 {
		t.Errorf("--fail-on info on a compliant capture: exit %d (%s)", code, errOut)
	}
	tot := rep.Totals
	wire := 0
	for _, p := range c.Packets() {
		wire += len(p.Data)
	}
	if tot.Packets != c.Frames() || tot.Bytes != wire {
		t.Errorf("totals packets %d bytes %d, capture has %d packets of %d bytes", tot.Packets, tot.Bytes, c.Frames(), wire)
	}
	if tot.Connections != 5 || tot.KafkaConnections != 5 {
		t.Errorf("totals connections %d kafka_connections %d, want 5 and 5", tot.Connections, tot.KafkaConnections)
	}
	if tot.Requests != 31 || tot.Responses != 31 {
		t.Errorf("totals requests %d responses %d, want 31 and 31", tot.Requests, tot.Responses)
	}
	if hv := tot.ByHeaderVersion; hv["v0"] != 0 || hv["v1"] != 1 || hv["v2"] != 30 {
		t.Errorf("requests_by_header_version %v, want v0:0 v1:1 v2:30", hv)
	}
	for _, ev := range []string{"midstream-join", "stream-gap", "framing-error", "tls-connection", "sasl-raw-tokens", "unmatched-response", "truncated-packet"} {
		if n, ok := tot.Coverage[ev]; !ok || n != 0 {
			t.Errorf("coverage %s = %d (present %v), want 0", ev, n, ok)
		}
	}
	if tot.ClientIDRepeats != 0 {
		t.Errorf("client_id_repeats %d: a KIP-1313 client sends null after each connection's first request", tot.ClientIDRepeats)
	}
	if len(rep.Instances) != 2 {
		t.Errorf("%d rows, want 2 (two client instances, no legacy client)", len(rep.Instances))
	}
	bb8bCheckRow(t, "consumer", bb8bRowOf(t, rep, bb8bX), bb8bConsumerRow())
	bb8bCheckRow(t, "producer", bb8bRowOf(t, rep, bb8bP), bb8bProducerRow())
}

// ------------------------------------------------------------ (1) rows, text

// bb8bTextBlock returns the lines of the text report's row that starts
// with a line beginning (after indentation) with head, up to the next line
// at the same or a shallower indentation.
func bb8bTextBlock(out, head string) string {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		trimmed := strings.TrimLeft(l, " ")
		if !strings.HasPrefix(trimmed, head) {
			continue
		}
		indent := len(l) - len(trimmed)
		var b strings.Builder
		b.WriteString(l + "\n")
		for _, n := range lines[i+1:] {
			nt := strings.TrimLeft(n, " ")
			if nt == "" || len(n)-len(nt) <= indent {
				break
			}
			b.WriteString(n + "\n")
		}
		return b.String()
	}
	return ""
}

// The text report (SPEC 6: "text by default") is a report too, so it holds
// what SPEC 5 says a report holds: the totals and one row per client
// instance with its instance ID ("the canonical string form kwatch prints
// for every UUID (with the 8-4-4-4-12 hex form beside it where a person
// reads it)", SPEC 1), client IDs, software name/version, hosts, brokers,
// connections, member IDs by group, telemetry ID and findings.
func TestOutputReferenceSessionText(t *testing.T) {
	c, _ := bb8bSession(nil)
	path := bbCaptureFile(t, c, "")
	code, out, errOut := runKwatch("read", path)
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d stderr %q, want 0 and nothing", code, errOut)
	}
	line := func(word string) string {
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), word) {
				return l
			}
		}
		t.Errorf("text report has no %q line:\n%s", word, out)
		return ""
	}
	if l := line("requests"); !regexp.MustCompile(`\b31\b`).MatchString(l) || !strings.Contains(l, "v1 1") || !strings.Contains(l, "v2 30") {
		t.Errorf("requests line %q, want 31 requests, v1 1, v2 30", l)
	}
	if l := line("connections"); !regexp.MustCompile(`\b5\b`).MatchString(l) {
		t.Errorf("connections line %q, want 5", l)
	}
	if l := line("capture"); !regexp.MustCompile(fmt.Sprintf(`\b%d\b`, c.Frames())).MatchString(l) {
		t.Errorf("capture line %q, want %d packets", l, c.Frames())
	}
	for id, want := range map[[16]byte]bb8bRow{bb8bX: bb8bConsumerRow(), bb8bP: bb8bProducerRow()} {
		blk := bb8bTextBlock(out, bbJ(id))
		if blk == "" {
			t.Errorf("text report has no row for %s:\n%s", bbJ(id), out)
			continue
		}
		must := []string{pcapgen.Dashed(id), want.SoftwareName, want.SoftwareVersion, want.TelemetryID}
		must = append(must, want.ClientIDs...)
		must = append(must, want.ClientHosts...)
		must = append(must, want.Brokers...)
		for g, ms := range want.MemberIDs {
			must = append(must, g)
			must = append(must, ms...)
		}
		for _, s := range must {
			if !strings.Contains(blk, s) {
				t.Errorf("row %s lacks %q:\n%s", bbJ(id), s, blk)
			}
		}
		if !regexp.MustCompile(fmt.Sprintf(`connections\s+%d\b`, want.Connections)).MatchString(blk) {
			t.Errorf("row %s does not give %d connections:\n%s", bbJ(id), want.Connections, blk)
		}
	}
}

// ------------------------------------------------ (2) legacy clients, rows

// bb8bLegacyFleet: clients without header instance IDs on two hosts. On
// 10.40.0.5 a Java 3.9 consumer ("legacy-c") with a bootstrap connection
// to B1, a node connection to B2 (KIP-714 legacy telemetry: body 0, the
// broker assigns B, pushes with B) and a coordinator connection to B3
// (member M1), and a librdkafka producer ("legacy-p") with one connection
// to B1. On 10.40.0.6 a second consumer with the same client ID
// "legacy-c", member M2, coordinator B3. Legacy clients repeat the client
// ID on every request.
func bb8bLegacyFleet() (*pcapgen.Capture, string, string) {
	c := pcapgen.New(pcapgen.Options{})
	m1, m2 := bbJ(pcapgen.SeqUUID(0x85)), bbJ(pcapgen.SeqUUID(0x96))
	c1 := &bb8bProc{c: c, host: netip.MustParseAddr("10.40.0.5"), port: 41000, clientID: "legacy-c", sw: "apache-kafka-java", swv: "3.9.0"}
	pr := &bb8bProc{c: c, host: netip.MustParseAddr("10.40.0.5"), port: 42000, clientID: "legacy-p", sw: "librdkafka", swv: "2.6.0"}
	c2 := &bb8bProc{c: c, host: netip.MustParseAddr("10.40.0.6"), port: 41000, clientID: "legacy-c", sw: "apache-kafka-java", swv: "3.9.0"}

	boot, sb, _ := c1.dial(bb8bB1, 3)
	bbMeta(sb) // 1 repeat
	n2, s2, _ := c1.dial(bb8bB2, 3)
	bb8bFindCoord(s2, bb8bGroup, bb8bB3)
	bbGTSSub(s2, bb8bZero, errNone, bb8bB, 7)
	bbPushSub(s2, bb8bB, 7, false, errNone) // 3 repeats
	boot.Close()
	pc, ps, _ := pr.dial(bb8bB1, 3)
	co1, sc1, _ := c1.dial(bb8bB3, 3)
	co2, sc2, _ := c2.dial(bb8bB3, 3)
	bbCG(sc1, bb8bGroup, m1, 0, errNone, 1)
	bbCG(sc2, bb8bGroup, m2, 0, errNone, 2)
	bb8bProduce(ps)
	bbCG(sc1, bb8bGroup, m1, 1, errNone, 3)
	bbCG(sc2, bb8bGroup, m2, 2, errNone, 3)
	bb8bProduce(ps)                           // 2 repeats
	bbCG(sc1, bb8bGroup, m1, -1, errNone, -1) // 3 repeats
	bbCG(sc2, bb8bGroup, m2, -1, errNone, -1) // 3 repeats
	for _, cn := range []*pcapgen.Conn{n2, pc, co1, co2} {
		cn.Close()
	}
	return c, m1, m2
}

// README 11: "Clients without a header instance ID are grouped per (client
// IP, first client ID) as "legacy" rows, so they still appear in the
// report": three rows (10.40.0.5/legacy-c over three connections and three
// brokers, 10.40.0.5/legacy-p, 10.40.0.6/legacy-c). SPEC 3.3 row 1: "remember
// B as the connection's telemetry ID". SPEC 3.2: client-id-repeated "For
// legacy clients this is a statistic, not a finding": no finding, and the
// totals count the 12 repeats (96 bytes: 10 x "legacy-c", 2 x "legacy-p").
// The two consumers are alive at the same time with different member IDs:
// no collision.
func TestOutputLegacyRowsByHostAndClientID(t *testing.T) {
	c, m1, m2 := bb8bLegacyFleet()
	rep, _ := bb8bRun(t, c)
	bbExpect(t, rep, nil)
	if rep.Totals.ClientIDRepeats != 12 || rep.Totals.ClientIDRepeatBytes != 96 {
		t.Errorf("client_id_repeats %d bytes %d, want 12 and 96", rep.Totals.ClientIDRepeats, rep.Totals.ClientIDRepeatBytes)
	}
	type key struct{ host, cid string }
	rows := map[key]bb8bRow{}
	for _, r := range rep.Instances {
		if !r.Legacy {
			t.Errorf("non-legacy row %s in a capture without instance IDs", r.InstanceID)
			continue
		}
		if r.InstanceID != "" {
			t.Errorf("legacy row has instance_id %q", r.InstanceID)
		}
		k := key{bb8bSorted(r.ClientHosts), bb8bSorted(r.ClientIDs)}
		if _, dup := rows[k]; dup {
			t.Errorf("two legacy rows for %v", k)
		}
		rows[k] = r
	}
	if len(rep.Instances) != 3 {
		t.Errorf("%d rows, want 3: %+v", len(rep.Instances), rep.Instances)
	}
	wants := map[key]bb8bRow{
		{"10.40.0.5", "legacy-c"}: {Legacy: true, ClientIDs: []string{"legacy-c"}, SoftwareName: "apache-kafka-java", SoftwareVersion: "3.9.0",
			ClientHosts: []string{"10.40.0.5"}, Brokers: []string{bb8bB1.String(), bb8bB2.String(), bb8bB3.String()}, Connections: 3,
			MemberIDs: map[string][]string{bb8bGroup: {m1}}, TelemetryID: bbJ(bb8bB)},
		{"10.40.0.5", "legacy-p"}: {Legacy: true, ClientIDs: []string{"legacy-p"}, SoftwareName: "librdkafka", SoftwareVersion: "2.6.0",
			ClientHosts: []string{"10.40.0.5"}, Brokers: []string{bb8bB1.String()}, Connections: 1, MemberIDs: map[string][]string{}},
		{"10.40.0.6", "legacy-c"}: {Legacy: true, ClientIDs: []string{"legacy-c"}, SoftwareName: "apache-kafka-java", SoftwareVersion: "3.9.0",
			ClientHosts: []string{"10.40.0.6"}, Brokers: []string{bb8bB3.String()}, Connections: 1, MemberIDs: map[string][]string{bb8bGroup: {m2}}},
	}
	for k, w := range wants {
		r, ok := rows[k]
		if !ok {
			t.Errorf("no legacy row for host %s client ID %s", k.host, k.cid)
			continue
		}
		bb8bCheckRow(t, k.host+"/"+k.cid, r, w)
	}

	// The text report lists the same three legacy rows, each with its host
	// and first client ID.
	_, out, _ := runKwatch("read", bbCaptureFile(t, c, "legacy.pcap"))
	for k, w := range wants {
		found := false
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, k.host) && strings.Contains(l, `"`+k.cid+`"`) {
				blk := bb8bTextBlock(out, strings.TrimSpace(l))
				found = true
				for _, s := range append(append([]string{}, w.Brokers...), w.SoftwareName) {
					if !strings.Contains(blk, s) {
						t.Errorf("text row %s/%s lacks %q:\n%s", k.host, k.cid, s, blk)
					}
				}
				if !regexp.MustCompile(fmt.Sprintf(`connections\s+%d\b`, w.Connections)).MatchString(blk) {
					t.Errorf("text row %s/%s does not give %d connections:\n%s", k.host, k.cid, w.Connections, blk)
				}
				break
			}
		}
		if !found {
			t.Errorf("text report has no legacy row line for %s %q:\n%s", k.host, k.cid, out)
		}
	}
}

// SPEC 5: dump's requests and responses "carry time, frame, conn, api,
// api_key, api_version, header_version, correlation_id, and requests
// client_id (null when null) and instance_id (absent when absent or
// zero); decoded bodies add group, member_id, member_epoch,
// telemetry_instance_id, subscription_id, error_code, client_software_name,
// client_software_version where they apply". SPEC 1 decodes ApiVersions
// ("v3+ request has ClientSoftwareName/Version", so v5 too) and the
// responses of 68, 71 and 72; README 9 counts ApiVersions and SaslHandshake
// among the responses with a top-level error code. Here: ApiVersions v5
// (software), its response with UNSUPPORTED_VERSION, a ConsumerGroup
// heartbeat fenced (null member ID in the answer), Share and Streams
// answers that echo the member ID, GetTelemetrySubscriptions with header
// and body X answered INVALID_REQUEST, PushTelemetry answered
// UNKNOWN_SUBSCRIPTION_ID, SaslHandshake answered
// UNSUPPORTED_SASL_MECHANISM.
func TestOutputDumpBodyFieldsEveryBody(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	x := bb8bX
	m := bbJ(x)
	cn := c.Conn(pcapgen.ConnOptions{Client: netip.MustParseAddrPort("10.80.0.5:46000"), Broker: bb8bB1})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("dump-8b"), InstanceID: &x, CorrelationID: 1})
	avResp := pcapgen.APIVersionsResponse(5)
	avResp.ErrorCode = 35
	avF, avRF := s.RoundTrip(pcapgen.APIVersions(5, "apache-kafka-java", "4.3.0-rc1"), avResp)
	s.Header.ClientID = nil
	cgF, cgRF := s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(1, "cg8", m, 7), pcapgen.ConsumerGroupHeartbeatResponse(1, errFencedMemberEpoch, nil, 0))
	sgF, sgRF := s.RoundTrip(pcapgen.ShareGroupHeartbeat(1, "sg8", m, 0), pcapgen.ShareGroupHeartbeatResponse(1, errNone, &m, 4))
	stF, stRF := s.RoundTrip(pcapgen.StreamsGroupHeartbeat(0, "st8", m, 0), pcapgen.StreamsGroupHeartbeatResponse(0, errNone, m, 9))
	gtF, gtRF := s.RoundTrip(pcapgen.GetTelemetrySubscriptions(x), pcapgen.GetTelemetrySubscriptionsResponse(errInvalidRequest, bb8bZero, 0))
	puF, puRF := s.RoundTrip(pcapgen.PushTelemetry(x, 12), pcapgen.PushTelemetryResponse(errUnknownSubscription))
	saResp := pcapgen.SaslHandshakeResponse(1, "PLAIN")
	saResp.ErrorCode = 33
	_, saRF := s.RoundTrip(pcapgen.SaslHandshake(1, "GSSAPI"), saResp)
	cn.Close()
	objs := bbDump(t, bbCaptureFile(t, c, "dump8b.pcap"))
	byFrame := map[int]map[string]any{}
	for _, o := range objs {
		if n, ok := o["frame"].(json.Number); ok {
			i, _ := n.Int64()
			byFrame[int(i)] = o
		}
	}
	type kv = map[string]any
	want := map[int]kv{
		avF:  {"kind": "request", "api": "ApiVersions", "api_version": 5, "header_version": 2, "client_id": "dump-8b", "instance_id": m, "client_software_name": "apache-kafka-java", "client_software_version": "4.3.0-rc1"},
		avRF: {"kind": "response", "api": "ApiVersions", "header_version": 0, "error_code": 35},
		cgF:  {"kind": "request", "group": "cg8", "member_id": m, "member_epoch": 7, "client_id": nil, "instance_id": m},
		cgRF: {"kind": "response", "api": "ConsumerGroupHeartbeat", "error_code": 110, "member_epoch": 0, "header_version": 1},
		sgF:  {"kind": "request", "api": "ShareGroupHeartbeat", "group": "sg8", "member_id": m, "member_epoch": 0},
		sgRF: {"kind": "response", "api": "ShareGroupHeartbeat", "error_code": 0, "member_id": m, "member_epoch": 4},
		stF:  {"kind": "request", "api": "StreamsGroupHeartbeat", "group": "st8", "member_id": m, "member_epoch": 0},
		stRF: {"kind": "response", "api": "StreamsGroupHeartbeat", "error_code": 0, "member_id": m, "member_epoch": 9},
		gtF:  {"kind": "request", "api": "GetTelemetrySubscriptions", "instance_id": m, "telemetry_instance_id": m},
		gtRF: {"kind": "response", "api": "GetTelemetrySubscriptions", "error_code": 42},
		puF:  {"kind": "request", "api": "PushTelemetry", "telemetry_instance_id": m, "subscription_id": 12},
		puRF: {"kind": "response", "api": "PushTelemetry", "error_code": 117},
		saRF: {"kind": "response", "api": "SaslHandshake", "error_code": 33},
	}
	bbCheckDumpFields(t, func(f int) map[string]any { return byFrame[f] }, want)
	// A response carries no client_id or instance_id (SPEC 5: "and
	// requests client_id ... and instance_id").
	if o := byFrame[cgRF]; o != nil {
		for _, k := range []string{"client_id", "instance_id"} {
			if _, ok := o[k]; ok {
				t.Errorf("response at frame %d carries %q", cgRF, k)
			}
		}
	}
}

// SPEC 6: "kwatch read [flags] FILE... offline: pcap or pcapng". A pcapng
// capture may hold several interfaces of different link types (dumpcap -i
// eth0 -i any): packets of interface 0 (Ethernet) and interface 1 (Linux
// cooked, SLL) interleave in one file. Each interface here carries one
// connection with an instance-id-changed (error); both are reported, at the
// frame numbers of the merged file (SPEC 5: "the 1-based packet number in
// the capture file (as Wireshark numbers it)").
func TestOutputPcapngTwoInterfaces(t *testing.T) {
	mk := func(link pcapgen.Link, host string, x, y [16]byte) (*pcapgen.Capture, int) {
		c := pcapgen.New(pcapgen.Options{Link: link, Start: pcapgen.BaseTime(), Step: 2 * time.Millisecond})
		cn := c.Conn(pcapgen.ConnOptions{Client: netip.MustParseAddrPort(host), Broker: bb8bB1})
		s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("two-if"), InstanceID: &x, CorrelationID: 1})
		bbMeta(s)
		s.Header.ClientID = nil
		s.Header.InstanceID = &y
		f := bbMeta(s)
		cn.Close()
		return c, f
	}
	ce, fe := mk(pcapgen.LinkEthernet, "10.82.0.5:46200", bb8bX, bb8bY)
	cs, fs := mk(pcapgen.LinkSLL, "10.82.0.6:46200", bb8bP, bb8bB)
	// Interleave: Ethernet packets at even milliseconds, SLL one
	// millisecond later.
	path := filepath.Join(t.TempDir(), "two-if.pcapng")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	ng, err := pcapgo.NewNgWriterInterface(f, pcapgo.NgInterface{Name: "eth0", LinkType: layers.LinkTypeEthernet, SnapLength: 262144, TimestampResolution: 9}, pcapgo.NgWriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ng.AddInterface(pcapgo.NgInterface{Name: "any", LinkType: layers.LinkTypeLinuxSLL, SnapLength: 262144, TimestampResolution: 9}); err != nil {
		t.Fatal(err)
	}
	frameOf := map[[2]int]int{} // (interface, packet index) -> merged frame
	n := 0
	pe, ps := ce.Packets(), cs.Packets()
	for i := 0; i < max(len(pe), len(ps)); i++ {
		for ifc, pk := range [][]pcapgen.Packet{pe, ps} {
			if i >= len(pk) {
				continue
			}
			p := pk[i]
			ts := p.Time
			if ifc == 1 {
				ts = ts.Add(time.Millisecond)
			}
			ci := gopacket.CaptureInfo{Timestamp: ts, CaptureLength: len(p.Data), Length: len(p.Data), InterfaceIndex: ifc}
			if err := ng.WritePacket(ci, p.Data); err != nil {
				t.Fatal(err)
			}
			n++
			frameOf[[2]int{ifc, i}] = n
		}
	}
	if err := ng.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	rep := bb8bRead(t, path)
	bbExpect(t, rep, map[string]int{"instance-id-changed": 2})
	want := map[string]int{"10.82.0.5:46200": frameOf[[2]int{0, fe - 1}], "10.82.0.6:46200": frameOf[[2]int{1, fs - 1}]}
	for _, fnd := range rep.Findings {
		if w, ok := want[fnd.Conn.Client]; !ok || fnd.Frame != w {
			t.Errorf("instance-id-changed on %s at frame %d, want frame %d", fnd.Conn.Client, fnd.Frame, w)
		}
	}
	if rep.Totals.Packets != n || rep.Totals.Connections != 2 {
		t.Errorf("totals packets %d connections %d, want %d and 2", rep.Totals.Packets, rep.Totals.Connections, n)
	}
}

// README 11: clients without instance ID "are grouped per (client IP, first
// client ID) as "legacy" rows"; SPEC 5: a row holds the "member IDs by
// group". A cron job on one host runs a librdkafka consumer (default client
// ID "rdkafka") every minute, twelve times: twelve processes, one after the
// other (never alive at the same time: no collision), each with its own
// random member ID, joining and leaving the group. One legacy row of twelve
// connections whose member IDs by group name all twelve IDs.
func TestOutputLegacyRowCronConsumers(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	var ids []string
	for i := 0; i < 12; i++ {
		u := pcapgen.SeqUUID(0xc0)
		u[0] = byte(i)
		m := bbJ(u)
		ids = append(ids, m)
		p := &bb8bProc{c: c, host: netip.MustParseAddr("10.62.0.5"), port: uint16(49000 + i), clientID: "rdkafka", sw: "librdkafka", swv: "2.6.0"}
		cn, s, _ := p.dial(bb8bB3, 3)
		bbCG(s, bb8bGroup, m, 0, errNone, int32(2*i+1))
		bb8bFetch(s)
		bbCG(s, bb8bGroup, m, -1, errNone, -1)
		cn.Close()
		c.Sleep(time.Minute)
	}
	rep, _ := bb8bRun(t, c)
	bbExpect(t, rep, nil)
	if len(rep.Instances) != 1 {
		t.Fatalf("%d rows, want 1 legacy row", len(rep.Instances))
	}
	bb8bCheckRow(t, "10.62.0.5/rdkafka", rep.Instances[0], bb8bRow{Legacy: true, ClientIDs: []string{"rdkafka"},
		SoftwareName: "librdkafka", SoftwareVersion: "2.6.0", ClientHosts: []string{"10.62.0.5"}, Brokers: []string{bb8bB3.String()},
		Connections: 12, MemberIDs: map[string][]string{bb8bGroup: ids}})
}

// README: "Time comes from packets only, so the same capture always gives
// the same report, byte for byte." One KIP-1313 client connection carries
// heartbeats for 40 groups (a heartbeat proxy, or a load tester driving
// many groups over one coordinator connection): it joins each group with
// Java(X), then rejoins each with another ID. SPEC 3.4 member-id-changed
// (warn) once per offending request (3.7): 40; member-id-misaligned once
// per (connection, group, member ID): the 40 (group, Java(Y)) pairs.
// Reading the capture five times must give five identical reports.
func TestOutputManyGroupsDeterministic(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	x := bb8bX
	p := &bb8bProc{c: c, host: netip.MustParseAddr("10.63.0.5"), port: 49500, clientID: "hb-proxy", inst: &x, sw: "apache-kafka-java", swv: "4.2.0"}
	cn, s, _ := p.dial(bb8bB3, 4)
	for _, m := range []string{bbJ(x), bbJ(bb8bY)} {
		for g := 0; g < 40; g++ {
			bbCG(s, fmt.Sprintf("group-%02d", g), m, 0, errNone, 1)
		}
	}
	cn.Close()
	path := bbCaptureFile(t, c, "")
	outs := map[string]bool{}
	for i := 0; i < 5; i++ {
		outs[bbReadJSON(t, path)] = true
	}
	if len(outs) != 1 {
		t.Errorf("five reads of one capture gave %d different reports", len(outs))
	}
	rep := bb8bRead(t, path)
	bbExpect(t, rep, map[string]int{"member-id-changed": 40, "member-id-misaligned": 40})
}

// ---------------------------------------------------- finding JSON text

// TestOutputTimeWholeSeconds: SPEC 5's time "2026-11-29T16:49:25.123456Z"
// has six fractional digits. Packets on whole seconds keep them
// (".000000Z", not RFC 3339's shortest "16:49:25Z"), in the json report,
// ndjson and dump.
func TestOutputTimeWholeSeconds(t *testing.T) {
	c, early, _ := bb8dBase(pcapgen.Options{Start: time.Date(2026, 11, 29, 16, 49, 25, 0, time.UTC), Step: time.Second})
	path := bbCaptureFile(t, c, "secs.pcap")
	rep, _ := bbReadAs[bbFindingsReport](t, path)
	want := c.Packets()[early-1].Time.UTC().Format("2006-01-02T15:04:05.000000Z")
	if len(rep.Findings) == 0 || rep.Findings[0].Time != want {
		t.Errorf("json: first finding %+v, want time %s", rep.Findings, want)
	}
	for _, f := range rep.Findings {
		if !bb8dTimeRE.MatchString(f.Time) {
			t.Errorf("json: %s time %q", f.Rule, f.Time)
		}
	}
	_, out, _ := runKwatch("read", "--format", "ndjson", "--fail-on", "never", path)
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var f bbFinding
		json.Unmarshal([]byte(l), &f)
		if !bb8dTimeRE.MatchString(f.Time) {
			t.Errorf("ndjson: time %q in %s", f.Time, l)
		}
	}
	_, out, _ = runKwatch("dump", "--format", "ndjson", path)
	bad := 0
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var o struct {
			Kind string `json:"kind"`
			Time string `json:"time"`
		}
		json.Unmarshal([]byte(l), &o)
		if o.Kind != "event" && !bb8dTimeRE.MatchString(o.Time) {
			if bad++; bad <= 3 {
				t.Errorf("dump: time %q in %s", o.Time, l)
			}
		}
	}
}

// TestOutputHostileClientIDs: the client ID is any bytes a client sends
// (int16-length string). Standard: bad input never breaks the output, and
// "stdout carries only the report": the JSON report, ndjson and dump stay
// valid JSON in valid UTF-8 (README: the encoder is "held byte for byte to
// encoding/json", which writes an invalid byte as U+FFFD), dump's
// client_id is the client ID as encoding/json would give it, and the text
// report and dump text are readable: no terminal escape or other control
// byte from the capture, no line forged by a newline inside a client ID.
func TestOutputHostileClientIDs(t *testing.T) {
	hostile := "evil\"\\\x01\x1b[2J\x1b]0;owned\x07\r\nFAKE finding line\u2028<&>\xff\x7f"
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{Client: bb8dAP("10.8.6.1:46000"), Broker: bb8dAP("10.0.0.9:9092")})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("orders"), CorrelationID: 1})
	bbMeta9(s)
	s.Header.ClientID = pcapgen.Ptr(hostile)
	bbMeta9(s)
	cn.Close()
	cn = c.Conn(pcapgen.ConnOptions{Client: bb8dAP("10.8.6.2:46000"), Broker: bb8dAP("10.0.0.9:9092")})
	s = cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr(hostile), CorrelationID: 1})
	bbMeta9(s)
	s.Header.ClientID = pcapgen.Ptr("orders")
	bbMeta9(s)
	cn.Close()
	path := bbCaptureFile(t, c, "hostile-cid.pcap")
	decoded := strings.ToValidUTF8(hostile, "\uFFFD")

	for _, format := range []string{"json", "ndjson"} {
		code, out, errOut := runKwatch("read", "--format", format, "--fail-on", "never", path)
		if code != 0 {
			t.Errorf("read %s: exit %d (%s)", format, code, errOut)
		}
		if !utf8.ValidString(out) {
			t.Errorf("read %s: stdout is not valid UTF-8", format)
		}
		docs := []string{out}
		if format == "ndjson" {
			docs = strings.Split(strings.TrimRight(out, "\n"), "\n")
		}
		for _, d := range docs {
			if !json.Valid([]byte(d)) {
				t.Errorf("read %s: not valid JSON: %.300q", format, d)
			}
		}
		// Count the findings themselves: the json report names rules
		// elsewhere too (its summary of cases).
		n := 0
		for _, d := range docs {
			var r struct {
				Rule     string `json:"rule"`
				Findings []struct {
					Rule string `json:"rule"`
				} `json:"findings"`
			}
			json.Unmarshal([]byte(d), &r)
			if r.Rule == "client-id-changed" {
				n++
			}
			for _, f := range r.Findings {
				if f.Rule == "client-id-changed" {
					n++
				}
			}
		}
		if n != 2 {
			t.Errorf("read %s: %d client-id-changed findings, want 2 (one per connection)", format, n)
		}
		var anyHostile bool
		for _, d := range docs {
			var v any
			json.Unmarshal([]byte(d), &v)
			anyHostile = anyHostile || strings.Contains(fmt.Sprint(v), "FAKE finding line")
		}
		if !anyHostile {
			t.Errorf("read %s: the hostile client ID is in no field", format)
		}
	}
	code, out, errOut := runKwatch("dump", "--format", "ndjson", path)
	if code != 0 || !utf8.ValidString(out) {
		t.Errorf("dump ndjson: exit %d (%s), valid UTF-8 %v", code, errOut, utf8.ValidString(out))
	}
	seen := 0
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		var o map[string]any
		if err := json.Unmarshal([]byte(l), &o); err != nil {
			t.Errorf("dump ndjson line is no JSON: %.300q", l)
			continue
		}
		if cid, ok := o["client_id"].(string); ok && strings.HasPrefix(cid, "evil") {
			seen++
			if cid != decoded {
				t.Errorf("dump client_id %q, want %q", cid, decoded)
			}
		}
	}
	if seen != 2 {
		t.Errorf("dump: %d requests carry the hostile client ID, want 2", seen)
	}
	for _, args := range [][]string{{"read", "--fail-on", "never", path}, {"dump", path}} {
		_, out, _ := runKwatch(args...)
		for i, r := range out {
			if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r < 0xa0) {
				t.Errorf("%s: control character %U at byte %d of the text output: %.120q", args[0], r, i, out[max(0, i-40):min(len(out), i+40)])
				break
			}
		}
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "FAKE finding line") {
				t.Errorf("%s: a newline inside a client ID forged an output line: %q", args[0], l)
			}
		}
	}
}

// ------------------------------------------------------------ workers

// bb8dFleet is a multi-connection capture with findings across
// connections: member-id-collision (two instances, and two legacy hosts),
// instance-id-shared (one instance ID from two hosts),
// telemetry-id-not-adopted, plus client-id-changed and client-id-repeated
// on many connections, a stream gap, requests cut into small segments and
// interleaved across connections, and connections left open at the end.
func bb8dFleet() *pcapgen.Capture {
	c := pcapgen.New(pcapgen.Options{Perturb: pcapgen.Perturb{MSS: 48}})
	type cl struct {
		cn *pcapgen.Conn
		s  *pcapgen.Session
	}
	var all []cl
	dial := func(client, broker, cid string, inst *[16]byte) cl {
		cn := c.Conn(pcapgen.ConnOptions{Client: bb8dAP(client), Broker: bb8dAP(broker)})
		s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr(cid), InstanceID: inst, CorrelationID: 1})
		s.RoundTrip(pcapgen.APIVersions(4, "apache-kafka-java", "4.2.0"), pcapgen.APIVersionsResponse(4))
		if inst != nil {
			s.Header.ClientID = nil
		}
		x := cl{cn, s}
		all = append(all, x)
		return x
	}
	x1, x2, x3 := bb8dX, bb8dY, bb8dC
	m := pcapgen.JavaString(bb8dZ)
	m2 := pcapgen.JavaString(pcapgen.SeqUUID(0x91))
	join := func(x cl, group, member string, epoch int32) {
		x.s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(1, group, member, epoch), pcapgen.ConsumerGroupHeartbeatResponse(1, 0, pcapgen.Ptr(member), epoch+1))
	}
	a := dial("10.9.1.1:45001", "10.0.0.1:9092", "app-a", &x1)
	b := dial("10.9.1.2:45001", "10.0.0.2:9092", "app-b", &x2)
	l1 := dial("10.9.2.1:46001", "10.0.0.1:9092", "legacy-1", nil)
	l2 := dial("10.9.2.2:46001", "10.0.0.3:9092", "legacy-2", nil)
	s1 := dial("10.9.3.1:47001", "10.0.0.1:9092", "shared", &x3)
	tl := dial("10.9.4.1:48001", "10.0.0.2:9092", "telemetry", nil)
	var pads []cl
	for i := 0; i < 24; i++ {
		var inst *[16]byte
		if i%3 == 0 {
			id := pcapgen.SeqUUID(byte(0xc0 + i))
			inst = &id
		}
		pads = append(pads, dial(fmt.Sprintf("10.9.5.%d:%d", i+1, 49000+i), fmt.Sprintf("10.0.0.%d:9092", i%3+1), fmt.Sprintf("pad-%d", i), inst))
	}
	join(a, "g1", m, 0)
	join(l1, "g2", m2, 0)
	s2 := dial("10.9.3.2:47002", "10.0.0.3:9092", "shared", &x3)
	for i, p := range pads {
		if i%3 == 0 {
			p.s.Header.ClientID = pcapgen.Ptr(fmt.Sprintf("pad-%d", i)) // repeats: client-id-repeated
		}
		bbMeta9(p.s)
	}
	join(b, "g1", m, 0)
	join(l2, "g2", m2, 0)
	corr, _ := tl.s.Request(pcapgen.GetTelemetrySubscriptions(bb8dZero))
	tl.s.Respond(corr, pcapgen.GetTelemetrySubscriptionsResponse(0, bb8dB, 7))
	bbMeta9(s1.s)
	bbMeta9(s2.s)
	pads[4].cn.DropNext(1)
	for i, p := range pads {
		if i%4 == 1 {
			p.s.Header.ClientID = pcapgen.Ptr(fmt.Sprintf("renamed-%d", i))
		}
		bbMeta9(p.s)
	}
	tl.s.RoundTrip(pcapgen.PushTelemetry(bb8dC, 7), pcapgen.PushTelemetryResponse(0))
	join(a, "g1", m, 1)
	join(b, "g1", m, 1)
	join(l1, "g2", m2, 1)
	join(l2, "g2", m2, 1)
	for i, x := range all {
		switch i % 3 {
		case 0:
			x.cn.Close()
		case 1:
			x.cn.Reset()
		}
	}
	return c
}

// TestOutputWorkersByteIdentical: README "--workers N (connections sharded
// by flow over N goroutines ...; the report is byte for byte the same for
// any N)"; standard "The same capture gives the same report, byte for byte,
// whether it runs on one goroutine or is sharded by connection across
// workers (--workers N)". A capture whose findings need state across
// connections (member-id-collision, instance-id-shared,
// telemetry-id-not-adopted) and end-of-connection findings
// (client-id-repeated), read with --workers 1, 2, 3 and 8: stdout (json,
// ndjson, text) and the ndjson summary on stderr are identical; dump too.
func TestOutputWorkersByteIdentical(t *testing.T) {
	c := bb8dFleet()
	path := bbCaptureFile(t, c, "fleet.pcap")
	rep, _ := bbReadAs[bbFindingsReport](t, path, "--workers", "1")
	got := map[string]int{}
	for _, f := range rep.Findings {
		got[f.Rule]++
	}
	for rule, n := range map[string]int{"member-id-collision": 2, "instance-id-shared": 1, "telemetry-id-not-adopted": 1, "client-id-repeated": 1, "client-id-changed": 1} {
		if got[rule] < n {
			t.Errorf("scenario: %d %s findings, want at least %d (all: %v)", got[rule], rule, n, got)
		}
	}
	for _, cmd := range [][]string{
		{"read", "--format", "json"}, {"read", "--format", "ndjson"}, {"read", "--format", "text"},
		{"dump", "--format", "ndjson"}, {"dump", "--format", "text"},
	} {
		var first, firstErr string
		for _, w := range []string{"1", "2", "3", "8", "1"} {
			args := append(slices.Clone(cmd), "--workers", w)
			if cmd[0] == "read" {
				args = append(args, "--fail-on", "never")
			}
			code, out, errOut := runKwatch(append(args, path)...)
			if code != 0 {
				t.Errorf("%s: exit %d (%s)", bb8dArgs(args), code, errOut)
				continue
			}
			if w == "1" && first == "" {
				first, firstErr = out, errOut
				continue
			}
			if out != first {
				t.Errorf("%s: stdout differs from --workers 1:\n%s", bb8dArgs(args), bb8dDiff(first, out))
			}
			if errOut != firstErr {
				t.Errorf("%s: stderr differs from --workers 1:\n%s", bb8dArgs(args), bb8dDiff(firstErr, errOut))
			}
		}
	}
}

// TestOutputWorkersOrderSensitive: README 7 "an instance is alive while any
// connection that carried its instance ID is open ...; a client without one
// while the connection it last used the member ID on is open", so whether
// two claimants collide depends on the order of one connection's close and
// another connection's join, packets apart, on connections that --workers
// shards apart. Ten pairs of legacy clients on different hosts: for even
// pairs the first closes (FIN, FIN) before the second joins with the same
// member ID (no collision: not alive at the same time), for odd pairs the
// second joins one packet before the first's close (a collision). An
// instance with two connections closes one and keeps the other while a
// second instance takes its member ID (a collision); a third instance
// closes both before a fourth takes its ID (none). A KIP-1313 client that
// repeats its client ID goes idle for 11 minutes (README 16) while others
// go on. Standard: byte-identical reports for --workers 1, 2, 3, 8, with
// exactly 5+1 member-id-collision findings in each.
func TestOutputWorkersOrderSensitive(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	hb := func(s *pcapgen.Session, member string, epoch int32) {
		s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(1, "g", member, epoch), pcapgen.ConsumerGroupHeartbeatResponse(1, 0, pcapgen.Ptr(member), epoch+1))
	}
	legacy := func(addr string) (*pcapgen.Conn, *pcapgen.Session) {
		cn := c.Conn(pcapgen.ConnOptions{Client: bb8dAP(addr), Broker: bb8dAP("10.0.0.1:9092")})
		s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("legacy-" + addr), CorrelationID: 1})
		s.RoundTrip(pcapgen.APIVersions(3, "librdkafka", "2.6.0"), pcapgen.APIVersionsResponse(3))
		return cn, s
	}
	modern := func(addr string, inst [16]byte) (*pcapgen.Conn, *pcapgen.Session) {
		cn := c.Conn(pcapgen.ConnOptions{Client: bb8dAP(addr), Broker: bb8dAP("10.0.0.2:9092")})
		s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("modern"), InstanceID: &inst, CorrelationID: 1})
		s.RoundTrip(pcapgen.APIVersions(4, "apache-kafka-java", "4.2.0"), pcapgen.APIVersionsResponse(4))
		s.Header.ClientID = nil
		return cn, s
	}
	_, idleS := modern("10.11.9.9:40999", pcapgen.SeqUUID(0xe1))
	idleS.Header.ClientID = pcapgen.Ptr("modern")
	bbMeta9(idleS)
	bbMeta9(idleS)
	c.Sleep(11 * time.Minute) // the idle connection ends when the next packet comes
	type pair struct {
		p, q   *pcapgen.Conn
		ps, qs *pcapgen.Session
		m      string
	}
	var pairs []pair
	for i := 0; i < 10; i++ {
		p, ps := legacy(fmt.Sprintf("10.11.%d.1:41000", i))
		q, qs := legacy(fmt.Sprintf("10.11.%d.2:41000", i))
		m := pcapgen.JavaString(pcapgen.SeqUUID(byte(0x10 * i)))
		hb(ps, m, 0)
		pairs = append(pairs, pair{p, q, ps, qs, m})
	}
	for _, pr := range pairs {
		hb(pr.ps, pr.m, 1)
	}
	for i, pr := range pairs {
		if i%2 == 0 {
			pr.p.Close()
			hb(pr.qs, pr.m, 0)
		} else {
			hb(pr.qs, pr.m, 0)
			pr.p.Close()
		}
	}
	i1, i2, i3, i4 := pcapgen.SeqUUID(0xa3), pcapgen.SeqUUID(0xa5), pcapgen.SeqUUID(0xa7), pcapgen.SeqUUID(0xa9)
	a1, as1 := modern("10.12.0.1:42001", i1)
	a2, as2 := modern("10.12.0.1:42002", i1)
	ma := pcapgen.JavaString(i1)
	hb(as1, ma, 0)
	bbMeta9(as2)
	a1.Close()
	b1, bs1 := modern("10.12.0.2:42001", i2)
	hb(bs1, ma, 0) // i1 still alive on a2: collision
	c1, cs1 := modern("10.12.0.3:42001", i3)
	c2, cs2 := modern("10.12.0.3:42002", i3)
	mc := pcapgen.JavaString(i3)
	hb(cs1, mc, 0)
	bbMeta9(cs2)
	c1.Close()
	c2.Reset()
	d1, ds1 := modern("10.12.0.4:42001", i4)
	hb(ds1, mc, 0) // i3 gone: no collision
	for _, pr := range pairs {
		pr.q.Close()
	}
	a2.Close()
	b1.Close()
	d1.Close()
	path := bbCaptureFile(t, c, "order.pcap")
	var first string
	for _, w := range []string{"1", "2", "3", "8"} {
		code, out, errOut := runKwatch("read", "--format", "json", "--fail-on", "never", "--workers", w, path)
		if code != 0 {
			t.Fatalf("--workers %s: exit %d (%s)", w, code, errOut)
		}
		rep, ok := bb8dParse(t, "--workers "+w, out)
		if ok {
			var coll []string
			for _, f := range rep.Findings {
				if f.Rule == "member-id-collision" {
					coll = append(coll, f.Conn.Client)
				}
			}
			slices.Sort(coll)
			want := []string{"10.11.1.2:41000", "10.11.3.2:41000", "10.11.5.2:41000", "10.11.7.2:41000", "10.11.9.2:41000", "10.12.0.2:42001"}
			if !slices.Equal(coll, want) {
				t.Errorf("--workers %s: member-id-collision on %v, want %v", w, coll, want)
			}
		}
		if first == "" {
			first = out
		} else if out != first {
			t.Errorf("--workers %s: report differs from --workers 1:\n%s", w, bb8dDiff(first, out))
		}
	}
}
