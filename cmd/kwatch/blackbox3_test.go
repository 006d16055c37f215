package main

// Black-box scenarios for SPEC.md section 5 (the finding object, the report,
// `kwatch dump`, exit status) and section 6 (command line and flags), plus
// README "Rules: where SPEC.md is silent" choices. Expectations come from
// SPEC.md and README only, never from the implementation.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kwatch/kwatch/internal/pcapgen"
)

var (
	bb3X = pcapgen.SeqUUID(0x10)
	bb3Y = pcapgen.SeqUUID(0x20)
	// bb3Dash spells '-' and '_' in Java's URL-safe form ('+' and '/' in
	// standard base64), so a wrong alphabet shows.
	bb3Dash = [16]byte{0xfb, 0xff, 0xbf, 0xfb, 0xef, 0xbe, 0x4f, 0xff, 0xbf, 0xfb, 0xef, 0xbe, 0xfb, 0xff, 0xbf, 0xfb}
	bb3Zero = [16]byte{}

	bb3ClientA = netip.MustParseAddrPort("10.0.0.5:53122")
	bb3BrokerA = netip.MustParseAddrPort("10.0.0.9:9092")
	bb3BrokerB = netip.MustParseAddrPort("10.0.0.10:9092")

	bb3TimeRE = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$`)
)

func bb3J(id [16]byte) string    { return pcapgen.JavaString(id) }
func bb3P(id [16]byte) *[16]byte { return &id }

// bb3Decode decodes one JSON value keeping numbers as json.Number.
func bb3Decode(t *testing.T, s string) any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, s)
	}
	if d.More() {
		t.Fatalf("more than one JSON value:\n%s", s)
	}
	return v
}

// bb3ReadJSON runs `kwatch read --format json --fail-on never` and returns
// the report object.
func bb3ReadJSON(t *testing.T, args ...string) map[string]any {
	t.Helper()
	out := bbReadJSON(t, args...)
	m, ok := bb3Decode(t, out).(map[string]any)
	if !ok {
		t.Fatalf("report is not a JSON object:\n%s", out)
	}
	return m
}

func bb3Findings(t *testing.T, rep map[string]any) []map[string]any {
	t.Helper()
	arr, ok := rep["findings"].([]any)
	if !ok {
		t.Fatalf("report findings is %T, want an array", rep["findings"])
	}
	var out []map[string]any
	for _, f := range arr {
		out = append(out, f.(map[string]any))
	}
	return out
}

func bb3Rule(fs []map[string]any, rule string) []map[string]any {
	var out []map[string]any
	for _, f := range fs {
		if f["rule"] == rule {
			out = append(out, f)
		}
	}
	return out
}

func bb3One(t *testing.T, fs []map[string]any, rule string) map[string]any {
	t.Helper()
	r := bb3Rule(fs, rule)
	if len(r) != 1 {
		var got []string
		for _, f := range fs {
			got = append(got, fmt.Sprint(f["rule"]))
		}
		t.Fatalf("%d %s findings, want 1 (all: %v)", len(r), rule, got)
	}
	return r[0]
}

func bb3Int(t *testing.T, v any, what string) int64 {
	t.Helper()
	n, ok := v.(json.Number)
	if !ok {
		t.Errorf("%s = %v (%T), want a JSON number", what, v, v)
		return -999999
	}
	i, err := n.Int64()
	if err != nil {
		t.Errorf("%s = %v, want an integer", what, n)
	}
	return i
}

func bb3Str(t *testing.T, v any, what string) string {
	t.Helper()
	s, ok := v.(string)
	if !ok {
		t.Errorf("%s = %v (%T), want a JSON string", what, v, v)
	}
	return s
}

func bb3Eq(t *testing.T, what string, got, want any) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s = %v, spec requires %v", what, got, want)
	}
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

// bb3Meta is a Metadata v12 round trip (header v2).
func bb3Meta(s *pcapgen.Session) int {
	f, _ := s.RoundTrip(pcapgen.Metadata(12, "orders"), pcapgen.MetadataResponse(12, "10.0.0.9", 9092))
	return f
}

// bb3Changed builds one connection with an instance-id-changed request and
// returns the capture, the offending frame and correlation ID.
func bb3Changed(opts pcapgen.Options) (*pcapgen.Capture, int, int32) {
	c := pcapgen.New(opts)
	cn := c.Conn(pcapgen.ConnOptions{Client: bb3ClientA, Broker: bb3BrokerA})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("orders-app"), InstanceID: bb3P(bb3X), CorrelationID: 1})
	s.RoundTrip(pcapgen.APIVersions(3, "apache-kafka-java", "4.2.0"), pcapgen.APIVersionsResponse(3))
	s.Header.ClientID = nil
	bb3Meta(s)
	s.Header.InstanceID = bb3P(bb3Y)
	corr := s.Header.CorrelationID
	f := bb3Meta(s)
	cn.Close()
	return c, f, corr
}

// ------------------------------------------------------------ finding object

// SPEC 5: "A finding, as one JSON object ... {"time":"2026-11-29T16:49:25.123456Z",
// "rule":"instance-id-changed","severity":"error","kip":"KIP-1313",
// "confidence":"full","frame":1234,"conn":{"client":..,"broker":..},
// "api":"Metadata","api_key":3,"api_version":12,"correlation_id":7,
// "client_id":"orders-app","instance_id":..,"expected":..,"observed":..,"message":..}".
func TestBlackbox3FindingChangedSchema(t *testing.T) {
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
		"client_id": "orders-app", "instance_id": bb3J(bb3X),
		"expected": bb3J(bb3X), "observed": bb3J(bb3Y),
	})
	if m, _ := f["message"].(string); m == "" {
		t.Errorf("empty message")
	}
}

// SPEC 1: "Java's Uuid.toString() is URL-safe base64 without padding (22
// chars). This is the canonical string form kwatch prints for every UUID".
// An ID whose bytes spell '-' and '_' must not come out as '+' and '/'.
func TestBlackbox3InstanceIDJavaForm(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{Client: bb3ClientA, Broker: bb3BrokerA})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("orders-app"), InstanceID: bb3P(bb3Dash), CorrelationID: 1})
	bb3Meta(s)
	s.Header.ClientID = nil
	s.Header.InstanceID = nil
	bb3Meta(s)
	cn.Close()
	want := bb3J(bb3Dash)
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
func TestBlackbox3FindingSaslHandshake(t *testing.T) {
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
func TestBlackbox3FindingNullClientID(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{Client: bb3ClientA, Broker: bb3BrokerA})
	s := cn.Session(pcapgen.RequestHeader{InstanceID: bb3P(bb3X), CorrelationID: 1})
	bb3Meta(s)
	s.Header.InstanceID = bb3P(bb3Y)
	bb3Meta(s)
	cn.Close()
	rep := bb3ReadJSON(t, bbCaptureFile(t, c, "nullcid.pcap"))
	f := bb3One(t, bb3Findings(t, rep), "instance-id-changed")
	bb3CheckFinding(t, c, f, map[string]any{"client_id": nil, "instance_id": bb3J(bb3X)})
}

// SPEC 3.3 rows 4 and 3.7 "PushTelemetry with a zero body ID is
// telemetry-id-zero-push only"; SPEC 5 api names "GetTelemetrySubscriptions"
// (71) and "PushTelemetry" (72), with expected/observed in Java's form.
func TestBlackbox3FindingTelemetry(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{Client: bb3ClientA, Broker: bb3BrokerA})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("tele-app"), InstanceID: bb3P(bb3X), CorrelationID: 1})
	bb3Meta(s)
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
		"api_key": 71, "api_version": 0, "correlation_id": gCorr, "instance_id": bb3J(bb3X), "client_id": "tele-app"})
	p := bb3One(t, fs, "telemetry-id-zero-push")
	bb3CheckFinding(t, c, p, map[string]any{"severity": "error", "frame": pFrame, "api": "PushTelemetry",
		"api_key": 72, "api_version": 0, "correlation_id": pCorr, "instance_id": bb3J(bb3X)})
	if len(bb3Rule(fs, "telemetry-id-mismatch")) != 0 {
		t.Errorf("zero push also reported as telemetry-id-mismatch")
	}
	if e, ok := g["expected"].(string); ok && e != "" && e != bb3J(bb3X) && e != bb3J(bb3Zero) {
		t.Errorf("requested-with-header expected %q, want a Java-form UUID", e)
	}
}

// SPEC 3.4 rules on the three heartbeats; SPEC 5 api names as Kafka spells
// them: "ConsumerGroupHeartbeat" (68), "ShareGroupHeartbeat" (76),
// "StreamsGroupHeartbeat" (88). leave-without-member-id is error, KIP-1082.
func TestBlackbox3FindingHeartbeatAPIs(t *testing.T) {
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
func TestBlackbox3FindingClientIDRepeated(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	var last []int
	for i := 0; i < 2; i++ {
		cn := c.Conn(pcapgen.ConnOptions{Client: netip.AddrPortFrom(bb3ClientA.Addr(), uint16(50000+i)), Broker: bb3BrokerA})
		s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("rep-app"), InstanceID: bb3P(bb3X), CorrelationID: 1})
		bb3Meta(s)
		bb3Meta(s)
		bb3Meta(s)
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
			"client_id": "rep-app", "instance_id": bb3J(bb3X)})
		// 2 repeats of "rep-app" (7 bytes) = 14 bytes null would save.
		if obs, _ := f["observed"].(string); !strings.Contains(obs, "14") {
			t.Errorf("observed %q does not give the 14 bytes saved", obs)
		}
	}
}

// SPEC 2: "any finding that depends on the first request carries
// "confidence": "partial"" for a connection joined mid-stream.
func TestBlackbox3FindingPartialMidstream(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{Client: bb3ClientA, Broker: bb3BrokerA, NoSYN: true})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("mid-app"), InstanceID: bb3P(bb3X), CorrelationID: 1})
	bb3Meta(s)
	s.Header.InstanceID = bb3P(bb3Y)
	bb3Meta(s)
	cn.Close()
	rep := bb3ReadJSON(t, bbCaptureFile(t, c, "mid.pcap"))
	f := bb3One(t, bb3Findings(t, rep), "instance-id-changed")
	bb3CheckFinding(t, c, f, map[string]any{"confidence": "partial"})
}

// ------------------------------------------------------------------ report

// bb3Fleet: a modern client on two connections to two brokers (ApiVersions
// v3 with software name, two groups, aligned telemetry, one
// instance-id-dropped), a legacy client (header v1, v0, v2 requests) and an
// HTTP connection that is TCP but not Kafka.
type bb3FleetInfo struct {
	requests   map[string]int
	droppedAt  int
	kafkaConns int
}

func bb3Fleet() (*pcapgen.Capture, bb3FleetInfo) {
	info := bb3FleetInfo{requests: map[string]int{}, kafkaConns: 3}
	c := pcapgen.New(pcapgen.Options{})
	m := bb3J(bb3X)
	cn := c.Conn(pcapgen.ConnOptions{Client: bb3ClientA, Broker: bb3BrokerA})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("orders-app"), InstanceID: bb3P(bb3X), CorrelationID: 1})
	s.RoundTrip(pcapgen.APIVersions(3, "apache-kafka-java", "4.2.0"), pcapgen.APIVersionsResponse(3))
	s.Header.ClientID = nil
	s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(1, "g1", m, 0), pcapgen.ConsumerGroupHeartbeatResponse(1, 0, &m, 1))
	s.RoundTrip(pcapgen.GetTelemetrySubscriptions(bb3X), pcapgen.GetTelemetrySubscriptionsResponse(0, bb3Zero, 7))
	s.Header.InstanceID = nil
	info.droppedAt = bb3Meta(s) // instance-id-dropped
	info.requests["v2"] += 4
	cn.Close()

	cn2 := c.Conn(pcapgen.ConnOptions{Client: netip.MustParseAddrPort("10.0.0.5:53123"), Broker: bb3BrokerB})
	s2 := cn2.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("orders-app"), InstanceID: bb3P(bb3X), CorrelationID: 1})
	s2.RoundTrip(pcapgen.APIVersions(3, "apache-kafka-java", "4.2.0"), pcapgen.APIVersionsResponse(3))
	s2.Header.ClientID = nil
	s2.RoundTrip(pcapgen.ShareGroupHeartbeat(1, "g2", m, 0), pcapgen.ShareGroupHeartbeatResponse(1, 0, &m, 1))
	info.requests["v2"] += 2
	cn2.Close()

	cn3 := c.Conn(pcapgen.ConnOptions{Client: netip.MustParseAddrPort("10.0.0.7:40000"), Broker: bb3BrokerA})
	s3 := cn3.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("legacy-app"), CorrelationID: 1})
	s3.RoundTrip(pcapgen.APIVersions(2, "", ""), pcapgen.APIVersionsResponse(2))
	s3.RoundTrip(pcapgen.Metadata(1, "orders"), pcapgen.MetadataResponse(1, "10.0.0.9", 9092))
	s3.Request(kmsg.NewPtrControlledShutdownRequest())
	bb3Meta(s3)
	info.requests["v1"] += 2
	info.requests["v0"]++
	info.requests["v2"]++
	cn3.Close()

	cn4 := c.Conn(pcapgen.ConnOptions{Client: netip.MustParseAddrPort("10.0.0.8:41000"), Broker: netip.MustParseAddrPort("10.0.0.1:8080")})
	cn4.Raw(pcapgen.ToBroker, []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	cn4.Raw(pcapgen.ToClient, []byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"))
	cn4.Close()
	return c, info
}

// SPEC 5: "A report also holds: totals (packets, bytes, connections,
// requests by header version, coverage events)"; README 14: "connections
// counts every TCP connection followed, Kafka or not (kafka_connections
// those recognised as Kafka)".
func TestBlackbox3ReportTotals(t *testing.T) {
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
func TestBlackbox3ReportInstanceRow(t *testing.T) {
	c, _ := bb3Fleet()
	rep := bb3ReadJSON(t, bbCaptureFile(t, c, "fleet.pcap"))
	in := bb3Instance(t, rep, bb3J(bb3X))
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
	bb3Eq(t, "member_ids.g1", bb3Strings(mids["g1"]), []string{bb3J(bb3X)})
	bb3Eq(t, "member_ids.g2", bb3Strings(mids["g2"]), []string{bb3J(bb3X)})
	bb3Eq(t, "telemetry_id", in["telemetry_id"], bb3J(bb3X))
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
func TestBlackbox3ReportLegacyRow(t *testing.T) {
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
// findings are "an array in a report"), also for a capture with no packets.
func TestBlackbox3ReportEmptyFindingsArray(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("ok-app"), CorrelationID: 1})
	bb3Meta(s)
	cn.Close()
	empty := pcapgen.New(pcapgen.Options{})
	for name, cc := range map[string]*pcapgen.Capture{"clean.pcap": c, "nopackets.pcap": empty} {
		code, out, errOut := runKwatch("read", "--format", "json", bbCaptureFile(t, cc, name))
		if code != 0 {
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
func TestBlackbox3ReportCoverageCounts(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	// midstream-join
	cn := c.Conn(pcapgen.ConnOptions{NoSYN: true})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("a"), CorrelationID: 1})
	bb3Meta(s)
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
	bb3Meta(s)
	s.Respond(999, pcapgen.MetadataResponse(12, "10.0.0.1", 9092))
	cn.Close()
	rep := bb3ReadJSON(t, bbCaptureFile(t, c, "cov.pcap"))
	cov := rep["totals"].(map[string]any)["coverage"].(map[string]any)
	bb3Eq(t, "midstream-join", bb3Int(t, cov["midstream-join"], "m"), 1)
	bb3Eq(t, "tls-connection", bb3Int(t, cov["tls-connection"], "t"), 2)
	bb3Eq(t, "unmatched-response", bb3Int(t, cov["unmatched-response"], "u"), 1)
	bb3Eq(t, "framing-error", bb3Int(t, cov["framing-error"], "f"), 0)
}

// ------------------------------------------------------------------- dump

func bb3Dump(t *testing.T, args ...string) []map[string]any {
	t.Helper()
	all := append([]string{"dump", "--format", "ndjson"}, args...)
	code, out, errOut := runKwatch(all...)
	if code != 0 {
		t.Fatalf("kwatch %v: exit %d (%s)", all, code, errOut)
	}
	var objs []map[string]any
	for i, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if line == "" {
			continue
		}
		m, ok := bb3Decode(t, line).(map[string]any)
		if !ok {
			t.Fatalf("dump line %d is not an object: %s", i+1, line)
		}
		objs = append(objs, m)
	}
	return objs
}

func bb3Kind(objs []map[string]any, kind, api string) []map[string]any {
	var out []map[string]any
	for _, o := range objs {
		if o["kind"] == kind && (api == "" || o["api"] == api) {
			out = append(out, o)
		}
	}
	return out
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
func TestBlackbox3DumpCommonFields(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{Client: bb3ClientA, Broker: bb3BrokerA})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("dump-app"), InstanceID: bb3P(bb3X), CorrelationID: 1})
	avF, avRF := s.RoundTrip(pcapgen.APIVersions(3, "apache-kafka-java", "4.2.0"), pcapgen.APIVersionsResponse(3))
	s.Header.ClientID = nil
	nullF := bb3Meta(s) // client_id null, instance X
	s.Header.InstanceID = bb3P(bb3Zero)
	zeroF := bb3Meta(s) // zero instance: absent in dump
	s.Header.InstanceID = nil
	absentF := bb3Meta(s)
	s.Header.ClientID = pcapgen.Ptr("")
	emptyF, _ := s.RoundTrip(pcapgen.Metadata(1, "orders"), pcapgen.MetadataResponse(1, "h", 1)) // header v1, empty client ID
	_, csF := s.Request(kmsg.NewPtrControlledShutdownRequest())
	cn.Close()
	objs := bb3Dump(t, bbCaptureFile(t, c, "dump.pcap"))
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
	chk(avF, "instance_id", bb3J(bb3X), true)
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
	chk(nullF, "instance_id", bb3J(bb3X), true)
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
func TestBlackbox3DumpBodyFields(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{Client: bb3ClientA, Broker: bb3BrokerA})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("body-app"), CorrelationID: 1})
	m := bb3J(bb3X)
	avF, _ := s.RoundTrip(pcapgen.APIVersions(4, "librdkafka", "2.6.0"), pcapgen.APIVersionsResponse(4))
	cgF, cgRF := s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(1, "cg", m, 0), pcapgen.ConsumerGroupHeartbeatResponse(1, 0, &m, 5))
	shF, shRF := s.RoundTrip(pcapgen.ShareGroupHeartbeat(1, "sg", m, 3), pcapgen.ShareGroupHeartbeatResponse(1, 25, nil, 3))
	stF, stRF := s.RoundTrip(pcapgen.StreamsGroupHeartbeat(0, "st", m, -1), pcapgen.StreamsGroupHeartbeatResponse(0, 0, m, -1))
	gF, gRF := s.RoundTrip(pcapgen.GetTelemetrySubscriptions(bb3Zero), pcapgen.GetTelemetrySubscriptionsResponse(0, bb3Y, 77))
	pF, pRF := s.RoundTrip(pcapgen.PushTelemetry(bb3Y, 77), pcapgen.PushTelemetryResponse(0))
	_, saRF := s.RoundTrip(pcapgen.SaslHandshake(1, "PLAIN"), pcapgen.SaslHandshakeResponse(1, "PLAIN"))
	cn.Close()
	objs := bb3Dump(t, bbCaptureFile(t, c, "bodies.pcap"))
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
		gF:   {"api": "GetTelemetrySubscriptions", "api_key": 71, "telemetry_instance_id": bb3J(bb3Zero)},
		gRF:  {"telemetry_instance_id": bb3J(bb3Y), "subscription_id": 77, "error_code": 0},
		pF:   {"api": "PushTelemetry", "api_key": 72, "telemetry_instance_id": bb3J(bb3Y), "subscription_id": 77},
		pRF:  {"api": "PushTelemetry", "error_code": 0},
		saRF: {"api": "SaslHandshake", "api_key": 17, "error_code": 0},
	}
	for frame, kvs := range want {
		o := byFrame[int64(frame)]
		if o == nil {
			t.Errorf("no dump object at frame %d", frame)
			continue
		}
		for k, w := range kvs {
			v, ok := o[k]
			if !ok {
				t.Errorf("frame %d %v %v lacks %q: %v", frame, o["kind"], o["api"], k, o)
				continue
			}
			if fmt.Sprint(v) != fmt.Sprint(w) {
				t.Errorf("frame %d %v %v: %s = %v, want %v", frame, o["kind"], o["api"], k, v, w)
			}
		}
	}
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
func TestBlackbox3DumpEvents(t *testing.T) {
	cases := []struct {
		event string
		build func(c *pcapgen.Capture)
		opts  pcapgen.Options
	}{
		{"midstream-join", func(c *pcapgen.Capture) {
			cn := c.Conn(pcapgen.ConnOptions{Client: bb3ClientA, Broker: bb3BrokerA, NoSYN: true})
			bb3Meta(cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("a"), CorrelationID: 1}))
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
			bb3Meta(s)
			s.Respond(999, pcapgen.MetadataResponse(12, "h", 1))
			cn.Close()
		}, pcapgen.Options{}},
		{"framing-error", func(c *pcapgen.Capture) {
			cn := c.Conn(pcapgen.ConnOptions{Client: bb3ClientA, Broker: bb3BrokerA})
			s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("a"), CorrelationID: 1})
			bb3Meta(s)
			cn.Raw(pcapgen.ToBroker, []byte{0, 0, 0, 3, 1, 2, 3})
			cn.Close()
		}, pcapgen.Options{}},
		{"sasl-raw-tokens", func(c *pcapgen.Capture) {
			cn := c.Conn(pcapgen.ConnOptions{Client: bb3ClientA, Broker: bb3BrokerA})
			s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("a"), CorrelationID: 1})
			s.RoundTrip(pcapgen.SaslHandshake(0, "PLAIN"), pcapgen.SaslHandshakeResponse(0, "PLAIN"))
			cn.Raw(pcapgen.ToBroker, pcapgen.SASLToken([]byte("\x00alice\x00secret")))
			cn.Raw(pcapgen.ToClient, pcapgen.SASLToken(nil))
			bb3Meta(s)
			cn.Close()
		}, pcapgen.Options{}},
		{"stream-gap", func(c *pcapgen.Capture) {
			cn := c.Conn(pcapgen.ConnOptions{Client: bb3ClientA, Broker: bb3BrokerA, Perturb: &pcapgen.Perturb{Drop: []int{3}}})
			s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("a"), CorrelationID: 1})
			for i := 0; i < 4; i++ {
				bb3Meta(s)
			}
			cn.Close()
		}, pcapgen.Options{}},
		{"truncated-packet", func(c *pcapgen.Capture) {
			cn := c.Conn(pcapgen.ConnOptions{Client: bb3ClientA, Broker: bb3BrokerA})
			bb3Meta(cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("a"), CorrelationID: 1}))
			cn.Close()
		}, pcapgen.Options{Snaplen: 70}},
	}
	for _, tc := range cases {
		t.Run(tc.event, func(t *testing.T) {
			c := pcapgen.New(tc.opts)
			tc.build(c)
			path := bbCaptureFile(t, c, "ev.pcap")
			objs := bb3Dump(t, path)
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
func TestBlackbox3DumpJSONMatchesNDJSON(t *testing.T) {
	c, _ := bb3Fleet()
	path := bbCaptureFile(t, c, "fleet.pcap")
	nd := bb3Dump(t, path)
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
func TestBlackbox3ReadNDJSON(t *testing.T) {
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
func TestBlackbox3ReadNDJSONNoFindings(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	bb3Meta(cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("ok"), CorrelationID: 1}))
	cn.Close()
	code, out, errOut := runKwatch("read", "--format", "ndjson", bbCaptureFile(t, c, "ok.pcap"))
	if code != 0 || out != "" {
		t.Errorf("exit %d, stdout %q, want 0 and nothing (stderr %q)", code, out, errOut)
	}
}

// SPEC 5 exit status: "0 when no finding reaches --fail-on (default error),
// 1 when one does"; text is the default format and stdout holds the report
// only (no JSON, nothing on stderr on success).
func TestBlackbox3TextFormatAndExit(t *testing.T) {
	c, _, _ := bb3Changed(pcapgen.Options{})
	path := bbCaptureFile(t, c, "changed.pcap")
	code, out, errOut := runKwatch("read", path)
	if code != 1 {
		t.Errorf("default fail-on with an error finding: exit %d, want 1", code)
	}
	if !strings.Contains(out, "instance-id-changed") {
		t.Errorf("text report lacks the finding:\n%s", out)
	}
	if strings.HasPrefix(strings.TrimSpace(out), "{") {
		t.Errorf("default format is JSON, want text")
	}
	if errOut != "" {
		t.Errorf("stderr on a readable capture: %q", errOut)
	}
	code2, out2, _ := runKwatch("read", "--format", "text", path)
	if code2 != code || out2 != out {
		t.Errorf("--format text differs from the default")
	}
}

// SPEC 6 --fail-on error|warn|info|never against a warn-only capture
// (client-id-changed is warn) and an info-only capture (member-id-empty
// below the required version is info).
func TestBlackbox3FailOnLevels(t *testing.T) {
	warnC := pcapgen.New(pcapgen.Options{})
	cn := warnC.Conn(pcapgen.ConnOptions{})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("a"), CorrelationID: 1})
	s.RoundTrip(pcapgen.Metadata(1, "t"), pcapgen.MetadataResponse(1, "h", 1))
	s.Header.ClientID = pcapgen.Ptr("b")
	s.RoundTrip(pcapgen.Metadata(1, "t"), pcapgen.MetadataResponse(1, "h", 1))
	cn.Close()
	infoC := pcapgen.New(pcapgen.Options{})
	cn = infoC.Conn(pcapgen.ConnOptions{})
	s = cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("a"), CorrelationID: 1})
	s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(0, "g", "", 0), pcapgen.ConsumerGroupHeartbeatResponse(0, 0, pcapgen.Ptr(bb3J(bb3X)), 1))
	cn.Close()
	warn, info := bbCaptureFile(t, warnC, "warn.pcap"), bbCaptureFile(t, infoC, "info.pcap")
	rep := bb3ReadJSON(t, info)
	bb3One(t, bb3Findings(t, rep), "member-id-empty")
	for _, tc := range []struct {
		file, failOn string
		want         int
	}{
		{warn, "", 0}, {warn, "error", 0}, {warn, "warn", 1}, {warn, "info", 1}, {warn, "never", 0},
		{info, "", 0}, {info, "warn", 0}, {info, "info", 1}, {info, "never", 0},
	} {
		args := []string{"read"}
		if tc.failOn != "" {
			args = append(args, "--fail-on", tc.failOn)
		}
		code, _, errOut := runKwatch(append(args, tc.file)...)
		if code != tc.want {
			t.Errorf("%s --fail-on %q: exit %d, want %d (%s)", filepath.Base(tc.file), tc.failOn, code, tc.want, errOut)
		}
	}
}

// SPEC 5: "2 when the input cannot be read or the command line is wrong
// (with a one-line reason on stderr)".
func TestBlackbox3CommandLineErrors(t *testing.T) {
	c, _, _ := bb3Changed(pcapgen.Options{})
	path := bbCaptureFile(t, c, "ok.pcap")
	for _, args := range [][]string{
		{"read", "--fail-on", "fatal", path},
		{"read", "--format", "xml", path},
		{"read", "--profile", "seed-2030", path},
		{"read", "--port", "notaport", path},
		{"read", "--port", "70000", path},
		{"read", "--max-frame", "-5", path},
		{"read", "--no-such-flag", path},
		{"read"},
		{"dump", "--format", "xml", path},
	} {
		code, out, errOut := runKwatch(args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
		if n := strings.Count(strings.TrimRight(errOut, "\n"), "\n"); errOut == "" || n != 0 {
			t.Errorf("%v: stderr %q, want one line", args, errOut)
		}
		if out != "" {
			t.Errorf("%v: stdout %q on a usage error", args, out)
		}
	}
}

// SPEC 5: exit 2 "when the input cannot be read": a missing file and a
// garbage file, each with a one-line reason on stderr and no report.
func TestBlackbox3UnreadableInput(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.pcap")
	os.WriteFile(garbage, bytes.Repeat([]byte("not a capture at all\n"), 20), 0o600)
	for _, p := range []string{filepath.Join(dir, "missing.pcap"), garbage} {
		for _, cmd := range []string{"read", "dump"} {
			code, out, errOut := runKwatch(cmd, p)
			if code != 2 {
				t.Errorf("%s %s: exit %d, want 2", cmd, filepath.Base(p), code)
			}
			if errOut == "" || strings.Count(strings.TrimRight(errOut, "\n"), "\n") != 0 {
				t.Errorf("%s %s: stderr %q, want one line", cmd, filepath.Base(p), errOut)
			}
			if out != "" {
				t.Errorf("%s %s: stdout %q", cmd, filepath.Base(p), out)
			}
		}
	}
}

// README: "A file that breaks after some packets (truncated, corrupt) is
// reported on stderr and what was read before it stands."
func TestBlackbox3TruncatedFile(t *testing.T) {
	c, frame, _ := bb3Changed(pcapgen.Options{})
	b, err := c.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	// Cut in the middle of the packet after the offending request.
	cut := 24
	for i := 0; i < frame; i++ {
		cut += 16 + len(c.Packets()[i].Data)
	}
	cut += 16 + len(c.Packets()[frame].Data)/2
	p := filepath.Join(t.TempDir(), "cut.pcap")
	os.WriteFile(p, b[:cut], 0o600)
	code, out, errOut := runKwatch("read", "--format", "json", p)
	if code != 1 {
		t.Errorf("exit %d, want 1 (the error finding before the cut stands); stderr %q", code, errOut)
	}
	if errOut == "" {
		t.Errorf("the truncation is not reported on stderr")
	}
	if !strings.Contains(out, `"instance-id-changed"`) {
		t.Errorf("finding read before the cut is lost:\n%s", out)
	}
}

// SPEC 6: "--port N (repeatable; default: every TCP port, Kafka recognised
// by content)".
func TestBlackbox3PortFlag(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	for i, port := range []int{9092, 19092, 29092} {
		cn := c.Conn(pcapgen.ConnOptions{Broker: netip.AddrPortFrom(netip.MustParseAddr("10.0.0.1"), uint16(port))})
		s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr(fmt.Sprintf("app-%d", i)), CorrelationID: 1})
		s.RoundTrip(pcapgen.Metadata(1, "t"), pcapgen.MetadataResponse(1, "h", 1))
		s.Header.ClientID = pcapgen.Ptr("other")
		s.RoundTrip(pcapgen.Metadata(1, "t"), pcapgen.MetadataResponse(1, "h", 1))
		cn.Close()
	}
	path := bbCaptureFile(t, c, "ports.pcap")
	brokers := func(args ...string) []string {
		rep := bb3ReadJSON(t, append(args, path)...)
		var out []string
		for _, f := range bb3Rule(bb3Findings(t, rep), "client-id-changed") {
			out = append(out, fmt.Sprint(f["conn"].(map[string]any)["broker"]))
		}
		sort.Strings(out)
		return out
	}
	bb3Eq(t, "default (every port)", brokers(), []string{"10.0.0.1:19092", "10.0.0.1:29092", "10.0.0.1:9092"})
	bb3Eq(t, "--port 19092", brokers("--port", "19092"), []string{"10.0.0.1:19092"})
	bb3Eq(t, "--port 9092 --port 29092", brokers("--port", "9092", "--port", "29092"), []string{"10.0.0.1:29092", "10.0.0.1:9092"})
}

// SPEC 1: "A frame size < 8 or > 100 MiB (configurable) is a framing error,
// never a panic"; SPEC 6 "--max-frame BYTES".
func TestBlackbox3MaxFrame(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("big-app"), CorrelationID: 1})
	// The first request is small so that the connection is recognised as
	// Kafka (README 13); the second is a 4 KB Produce.
	bb3Meta(s)
	s.RoundTrip(pcapgen.Produce(7, "orders", bb3Zero, bytes.Repeat([]byte{7}, 4000)), pcapgen.ProduceResponse(7, "orders", bb3Zero))
	bb3Meta(s)
	cn.Close()
	path := bbCaptureFile(t, c, "big.pcap")
	cov := func(args ...string) int64 {
		rep := bb3ReadJSON(t, append(args, path)...)
		return bb3Int(t, rep["totals"].(map[string]any)["coverage"].(map[string]any)["framing-error"], "framing-error")
	}
	if n := cov(); n != 0 {
		t.Errorf("default max-frame: framing-error %d on a 4 KB Produce", n)
	}
	if n := cov("--max-frame", "1000"); n < 1 {
		t.Errorf("--max-frame 1000: framing-error %d on a 4 KB Produce, want >= 1", n)
	}
	if n := cov("--max-frame", "100000"); n != 0 {
		t.Errorf("--max-frame 100000: framing-error %d", n)
	}
}

// SPEC 6 "--profile seed|accepted-2026"; SPEC 4: "Under this profile
// instance-id-dropped and instance-id-late are off".
func TestBlackbox3ProfileFlag(t *testing.T) {
	c, _ := bb3Fleet()
	path := bbCaptureFile(t, c, "fleet.pcap")
	seed := bb3ReadJSON(t, path)
	if len(bb3Rule(bb3Findings(t, seed), "instance-id-dropped")) != 1 {
		t.Errorf("seed profile: no instance-id-dropped")
	}
	if p, ok := seed["profile"]; ok {
		bb3Eq(t, "profile", p, "seed")
	}
	acc := bb3ReadJSON(t, "--profile", "accepted-2026", path)
	if n := len(bb3Rule(bb3Findings(t, acc), "instance-id-dropped")); n != 0 {
		t.Errorf("accepted-2026: %d instance-id-dropped findings, rule is off", n)
	}
	if p, ok := acc["profile"]; ok {
		bb3Eq(t, "profile", p, "accepted-2026")
	}
}

// SPEC 6 "kwatch read [flags] FILE..." with README: "Several files are read
// in order as one capture ...: frame numbers continue from one file to the
// next, as mergecap -a numbers them".
func TestBlackbox3MultipleFiles(t *testing.T) {
	c1, f1, _ := bb3Changed(pcapgen.Options{})
	c2, f2, _ := bb3Changed(pcapgen.Options{Start: pcapgen.BaseTime().Add(time.Minute)})
	p1, p2 := bbCaptureFile(t, c1, "a.pcap"), bbCaptureFile(t, c2, "b.pcap")
	rep := bb3ReadJSON(t, p1, p2)
	fs := bb3Rule(bb3Findings(t, rep), "instance-id-changed")
	if len(fs) != 2 {
		t.Fatalf("%d instance-id-changed over two files, want 2", len(fs))
	}
	bb3Eq(t, "first file's frame", bb3Int(t, fs[0]["frame"], "frame"), f1)
	bb3Eq(t, "second file's frame", bb3Int(t, fs[1]["frame"], "frame"), c1.Frames()+f2)
	bb3Eq(t, "packets", bb3Int(t, rep["totals"].(map[string]any)["packets"], "packets"), c1.Frames()+c2.Frames())
}

// SPEC 6: "offline: pcap or pcapng (also .gz)"; also '-' (README: reads a
// capture from standard input). Every input form gives the same findings.
func TestBlackbox3InputForms(t *testing.T) {
	c, _, _ := bb3Changed(pcapgen.Options{})
	base := bb3Findings(t, bb3ReadJSON(t, bbCaptureFile(t, c, "x.pcap")))
	if len(base) == 0 {
		t.Fatal("no findings")
	}
	for _, name := range []string{"x.pcap.gz", "x.pcapng", "x.pcapng.gz"} {
		got := bb3Findings(t, bb3ReadJSON(t, bbCaptureFile(t, c, name)))
		if !reflect.DeepEqual(got, base) {
			t.Errorf("%s: findings differ from pcap:\n%v\n%v", name, got, base)
		}
	}
	raw, err := os.ReadFile(bbCaptureFile(t, c, "stdin.pcapng.gz"))
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := runWith([]string{"read", "--format", "json", "--fail-on", "never", "-"}, bytes.NewReader(raw), &out, &errOut); code != 0 {
		t.Fatalf("stdin: exit %d (%s)", code, errOut.String())
	}
	got := bb3Findings(t, bb3Decode(t, out.String()).(map[string]any))
	if !reflect.DeepEqual(got, base) {
		t.Errorf("stdin: findings differ from pcap")
	}
}

// SPEC 5 time format with a nanosecond pcapng capture: the spec's
// "2026-11-29T16:49:25.123456Z" form (microseconds, UTC, 'Z').
func TestBlackbox3TimeFormatNanos(t *testing.T) {
	start := time.Date(2026, 11, 29, 16, 49, 25, 123456789, time.FixedZone("X", 3600))
	c, frame, _ := bb3Changed(pcapgen.Options{Start: start})
	rep := bb3ReadJSON(t, bbCaptureFile(t, c, "ns.pcapng"))
	f := bb3One(t, bb3Findings(t, rep), "instance-id-changed")
	want := c.Packets()[frame-1].Time.UTC().Truncate(time.Microsecond).Format("2006-01-02T15:04:05.000000Z")
	bb3Eq(t, "time", f["time"], want)
}

// SPEC 6: "kwatch rules [RULE] every rule with its severity, KIP and
// explanation"; severities from the tables of section 3 and 4.
func TestBlackbox3RulesCommand(t *testing.T) {
	code, out, errOut := runKwatch("rules")
	if code != 0 {
		t.Fatalf("rules: exit %d (%s)", code, errOut)
	}
	sev := map[string]string{
		"instance-id-dropped": "error", "instance-id-changed": "error", "instance-id-late": "error",
		"instance-id-malformed": "error", "instance-id-reserved": "warn", "instance-id-shared": "warn",
		"client-id-changed": "warn", "client-id-missing-first": "warn", "client-id-repeated": "info",
		"telemetry-id-requested-with-header": "error", "telemetry-id-mismatch": "error",
		"telemetry-id-zero-push": "error", "telemetry-id-not-adopted": "warn",
		"member-id-empty": "error", "leave-without-member-id": "error", "member-id-changed": "warn",
		"ghost-member": "error", "member-id-collision": "error", "member-id-not-uuid": "warn",
		"member-id-not-v4": "info", "member-id-misaligned": "warn", "member-id-alignment-encoding": "info",
		"broker-accepted-invalid": "warn", "broker-generated-member-id": "warn",
		"broker-telemetry-id-echo": "info", "broker-telemetry-id-missing": "error",
		"instance-id-missing-first": "error", "instance-id-repeated": "info",
	}
	lines := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 1 {
			lines[f[0]] = l
		}
	}
	for r, s := range sev {
		l, ok := lines[r]
		if !ok {
			t.Errorf("rules does not list %s", r)
			continue
		}
		if f := strings.Fields(l); f[1] != s {
			t.Errorf("rules: %s severity %s, spec says %s", r, f[1], s)
		}
	}
	if _, ok := lines["member-id-encoding"]; !ok {
		t.Errorf("rules does not list member-id-encoding")
	}
	code, out, errOut = runKwatch("rules", "ghost-member")
	if code != 0 || !strings.Contains(out, "ghost-member") || !strings.Contains(out, "KIP-1082") {
		t.Errorf("rules ghost-member: exit %d, %q", code, out)
	}
	code, _, errOut = runKwatch("rules", "no-such-rule")
	if code != 2 || strings.Count(strings.TrimRight(errOut, "\n"), "\n") != 0 || errOut == "" {
		t.Errorf("rules no-such-rule: exit %d, stderr %q; want 2 and one line", code, errOut)
	}
}

// SPEC 6 "offline: pcap or pcapng": every link layer a capture may have
// (Ethernet, 802.1Q, Linux cooked v1/v2 from `tcpdump -i any`, BSD
// loopback, raw IP) and every classic pcap variant give the same findings.
func TestBlackbox3LinkTypesAndFormats(t *testing.T) {
	base := func(o pcapgen.Options) []map[string]any {
		c, _, _ := bb3Changed(o)
		b, err := c.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), "cap")
		os.WriteFile(p, b, 0o600)
		return bb3Findings(t, bb3ReadJSON(t, p))
	}
	want := base(pcapgen.Options{})
	for _, l := range []pcapgen.Link{pcapgen.LinkVLAN, pcapgen.LinkSLL, pcapgen.LinkSLL2, pcapgen.LinkNull, pcapgen.LinkRaw} {
		if got := base(pcapgen.Options{Link: l}); !reflect.DeepEqual(got, want) {
			t.Errorf("link %s: findings differ:\n%v\n%v", l, got, want)
		}
	}
	for _, f := range []pcapgen.Format{pcapgen.FormatPCAPNanos, pcapgen.FormatPCAPBigEndian, pcapgen.FormatPCAPNanosBigEndian, pcapgen.FormatPCAPNG} {
		if got := base(pcapgen.Options{Format: f}); !reflect.DeepEqual(got, want) {
			t.Errorf("format %s: findings differ:\n%v\n%v", f, got, want)
		}
	}
}

// SPEC 5 conn object "client":"10.0.0.5:53122": an IPv6 endpoint is
// written so that it still parses as ip:port ("[addr]:port").
func TestBlackbox3IPv6Conn(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cl, br := netip.MustParseAddrPort("[fd00::5]:53122"), netip.MustParseAddrPort("[fd00::9]:9092")
	cn := c.Conn(pcapgen.ConnOptions{Client: cl, Broker: br})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("v6-app"), InstanceID: bb3P(bb3X), CorrelationID: 1})
	bb3Meta(s)
	s.Header.ClientID = nil
	s.Header.InstanceID = bb3P(bb3Y)
	bb3Meta(s)
	cn.Close()
	path := bbCaptureFile(t, c, "v6.pcap")
	f := bb3One(t, bb3Findings(t, bb3ReadJSON(t, path)), "instance-id-changed")
	bb3CheckFinding(t, c, f, map[string]any{"conn.client": cl.String(), "conn.broker": br.String()})
	objs := bb3Dump(t, path)
	if len(objs) == 0 || objs[0]["conn"].(map[string]any)["client"] != cl.String() {
		t.Errorf("dump conn %v, want client %s", objs, cl)
	}
}

// SPEC 5 row "telemetry ID" and "findings by rule" for a client without
// instance ID (README 11 legacy row): 3.3 row 1 "remember B as the
// connection's telemetry ID".
func TestBlackbox3LegacyRowTelemetryAndFindings(t *testing.T) {
	b := pcapgen.SeqUUID(0x40)
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{Client: bb3ClientA, Broker: bb3BrokerA})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("legacy-tele"), CorrelationID: 1})
	s.RoundTrip(pcapgen.APIVersions(3, "librdkafka", "2.6.0"), pcapgen.APIVersionsResponse(3))
	s.RoundTrip(pcapgen.GetTelemetrySubscriptions(bb3Zero), pcapgen.GetTelemetrySubscriptionsResponse(0, b, 7))
	s.RoundTrip(pcapgen.PushTelemetry(b, 7), pcapgen.PushTelemetryResponse(0))
	s.Header.ClientID = pcapgen.Ptr("renamed")
	bb3Meta(s)
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
	bb3Eq(t, "telemetry_id", row["telemetry_id"], bb3J(b))
	bb3Eq(t, "software_name", row["software_name"], "librdkafka")
	bb3Eq(t, "software_version", row["software_version"], "2.6.0")
	by, _ := row["findings"].(map[string]any)
	bb3Eq(t, "findings.client-id-changed", by["client-id-changed"], json.Number("1"))
	bb3Eq(t, "client_ids[0] (first client ID)", bb3Strings(row["client_ids"])[0] != "", true)
}

// SPEC 4 / README 10: under accepted-2026 the header version comes from a
// table ("the first v3 user is OffsetDelete v1"); SPEC 5 totals count
// "requests by header version", so the v3 requests are counted as v3.
func TestBlackbox3Accepted2026HeaderV3Counted(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("od-app"), CorrelationID: 1})
	for i := 0; i < 2; i++ {
		s.Header.HeaderVersion = 3
		if i == 0 {
			s.Header.InstanceID = bb3P(bb3X)
		} else {
			s.Header.InstanceID = nil
			s.Header.ClientID = nil
		}
		r := kmsg.NewPtrOffsetDeleteRequest()
		r.Version = 1
		r.Group = "g"
		s.Request(r)
	}
	s.Header.HeaderVersion = pcapgen.HeaderAuto
	bb3Meta(s)
	cn.Close()
	rep := bb3ReadJSON(t, "--profile", "accepted-2026", bbCaptureFile(t, c, "v3.pcap"))
	hv := rep["totals"].(map[string]any)["requests_by_header_version"].(map[string]any)
	bb3Eq(t, "requests_by_header_version.v3", hv["v3"], json.Number("2"))
	bb3Eq(t, "requests_by_header_version.v2", hv["v2"], json.Number("1"))
	if fs := bb3Findings(t, rep); len(fs) != 0 {
		t.Errorf("compliant accepted-2026 client has findings: %v", fs)
	}
}

// SPEC 6 dump takes FILE... like read: frames continue across files
// (README), and --port limits what is decoded.
func TestBlackbox3DumpFilesAndPort(t *testing.T) {
	mk := func(port uint16, start time.Time) *pcapgen.Capture {
		c := pcapgen.New(pcapgen.Options{Start: start})
		cn := c.Conn(pcapgen.ConnOptions{Client: bb3ClientA, Broker: netip.AddrPortFrom(bb3BrokerA.Addr(), port)})
		bb3Meta(cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("a"), CorrelationID: 1}))
		cn.Close()
		return c
	}
	c1, c2 := mk(9092, pcapgen.BaseTime()), mk(19092, pcapgen.BaseTime().Add(time.Second))
	p1, p2 := bbCaptureFile(t, c1, "1.pcap"), bbCaptureFile(t, c2, "2.pcap")
	objs := bb3Dump(t, p1, p2)
	reqs := bb3Kind(objs, "request", "")
	if len(reqs) != 2 {
		t.Fatalf("%d requests over two files, want 2", len(reqs))
	}
	bb3Eq(t, "second file's request frame", bb3Int(t, reqs[1]["frame"], "frame"), c1.Frames()+4)
	only := bb3Kind(bb3Dump(t, "--port", "19092", p1, p2), "request", "")
	if len(only) != 1 || only[0]["conn"].(map[string]any)["broker"] != "10.0.0.9:19092" {
		t.Errorf("dump --port 19092: %v", only)
	}
}

// SPEC 5 exit status applies to every --format: ndjson exits 1 on an
// error finding with the default --fail-on.
func TestBlackbox3NDJSONExitStatus(t *testing.T) {
	c, _, _ := bb3Changed(pcapgen.Options{})
	path := bbCaptureFile(t, c, "x.pcap")
	for _, format := range []string{"ndjson", "json", "text"} {
		if code, _, errOut := runKwatch("read", "--format", format, path); code != 1 {
			t.Errorf("--format %s: exit %d, want 1 (%s)", format, code, errOut)
		}
	}
}

// README: "A file that breaks after some packets (truncated, corrupt) is
// reported on stderr and what was read before it stands", also for a
// gzipped capture cut short; SPEC 6 '-' (README: standard input) for dump.
func TestBlackbox3TruncatedGzAndDumpStdin(t *testing.T) {
	c, _, _ := bb3Changed(pcapgen.Options{})
	// Pad the capture so the cut lands well after the finding.
	for i := 0; i < 5; i++ {
		cn := c.Conn(pcapgen.ConnOptions{})
		bb3Meta(cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr(strings.Repeat("p", 200)), CorrelationID: 1}))
		cn.Close()
	}
	gz := bbCaptureFile(t, c, "x.pcap.gz")
	b, _ := os.ReadFile(gz)
	cut := filepath.Join(t.TempDir(), "cut.pcap.gz")
	os.WriteFile(cut, b[:len(b)*3/4], 0o600)
	code, out, errOut := runKwatch("read", "--format", "json", cut)
	if code != 1 || !strings.Contains(out, `"instance-id-changed"`) || errOut == "" {
		t.Errorf("truncated gz: exit %d, finding kept %v, stderr %q; want 1, true, a reason", code, strings.Contains(out, `"instance-id-changed"`), errOut)
	}
	raw, _ := c.Bytes()
	var o1, e1 bytes.Buffer
	if code := runWith([]string{"dump", "--format", "ndjson", "-"}, bytes.NewReader(raw), &o1, &e1); code != 0 {
		t.Fatalf("dump -: exit %d (%s)", code, e1.String())
	}
	_, o2, _ := runKwatch("dump", "--format", "ndjson", bbCaptureFile(t, c, "x.pcap"))
	if o1.String() != o2 {
		t.Errorf("dump - differs from dump FILE")
	}
}
