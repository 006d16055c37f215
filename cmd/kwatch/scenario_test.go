package main

// Helpers shared by the black-box scenario tests: captures built with
// internal/pcapgen (or by hand) and run through the CLI in-process with
// runKwatch, asserting on the JSON report or the dump.

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kwatch/kwatch/internal/pcapgen"
	"github.com/twmb/franz-go/pkg/kmsg"
)

var (
	bbX    = pcapgen.SeqUUID(0x10)
	bbY    = pcapgen.SeqUUID(0x20)
	bbZ    = pcapgen.SeqUUID(0x30)
	bbB    = pcapgen.SeqUUID(0x40) // broker-assigned telemetry ID
	bbC    = pcapgen.SeqUUID(0x50)
	bbZero = [16]byte{}
)

func bbJ(id [16]byte) string { return pcapgen.JavaString(id) }

// bbRead runs kwatch read --format json --fail-on never over path.
func bbRead(t *testing.T, path string, extra ...string) bbReport {
	t.Helper()
	rep, _ := bbReadAs[bbReport](t, path, extra...)
	return rep
}

func bbRun(t *testing.T, c *pcapgen.Capture, extra ...string) bbReport {
	t.Helper()
	return bbRead(t, bbCaptureFile(t, c, ""), extra...)
}

// bbField checks f[key] == want (numbers compared as float64).
func bbField(t *testing.T, f map[string]any, key string, want any) {
	t.Helper()
	if f == nil {
		return
	}
	got := f[key]
	if n, ok := want.(int); ok {
		want = float64(n)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s finding: %s = %v, spec requires %v", f["rule"], key, got, want)
	}
}

// bbFirst returns the first finding of rule or fails.
func bbFirst(t *testing.T, rep bbReport, rule string) map[string]any {
	t.Helper()
	fs := bbOf(rep, rule)
	if len(fs) == 0 {
		t.Errorf("no %s finding", rule)
		return nil
	}
	return fs[0]
}

// bbMeta is a Metadata v12 round trip (header v2; Metadata has no
// top-level error code in its response).
func bbMeta(s *pcapgen.Session) int {
	f, _ := s.RoundTrip(pcapgen.Metadata(12, "orders"), pcapgen.MetadataResponse(12, "10.0.0.1", 9092))
	return f
}

// bbAPIV is an ApiVersions v3 round trip (header v2) answered with code.
func bbAPIV(s *pcapgen.Session, code int16) int {
	r := pcapgen.APIVersionsResponse(3)
	r.ErrorCode = code
	f, _ := s.RoundTrip(pcapgen.APIVersions(3, "apache-kafka-java", "4.2.0"), r)
	return f
}

// bbGTS is a GetTelemetrySubscriptions round trip: body R, answered code, B.
func bbGTS(s *pcapgen.Session, r [16]byte, code int16, b [16]byte) int {
	f, _ := s.RoundTrip(pcapgen.GetTelemetrySubscriptions(r), pcapgen.GetTelemetrySubscriptionsResponse(code, b, 7))
	return f
}

// bbPush is a PushTelemetry round trip with body ID r answered with code.
func bbPush(s *pcapgen.Session, r [16]byte, code int16) int {
	f, _ := s.RoundTrip(pcapgen.PushTelemetry(r, 7), pcapgen.PushTelemetryResponse(code))
	return f
}

func bbID(id [16]byte) *[16]byte { return &id }

// bbModern starts a session whose first request carries client ID cid and
// instance ID id (nil = absent). Callers null the client ID after the first
// request when they want a KIP-1313-compliant client.
func bbSession(cn *pcapgen.Conn, cid *string, id *[16]byte) *pcapgen.Session {
	return cn.Session(pcapgen.RequestHeader{ClientID: cid, InstanceID: id, CorrelationID: 1})
}

// ---------------------------------------------------------------- section 4

// bbOffsetDelete sends OffsetDelete v1, the first request header v3 user
// (section 4), with a v3 header carrying id (nil = none).
func bbOffsetDelete(s *pcapgen.Session, id *[16]byte) int {
	s.Header.HeaderVersion = 3
	s.Header.InstanceID = id
	r := kmsg.NewPtrOffsetDeleteRequest()
	r.Version = 1
	r.Group = "orders-group"
	_, f := s.Request(r)
	s.Header.HeaderVersion = pcapgen.HeaderAuto
	return f
}

type bbStep struct {
	cid  *string
	id   *[16]byte
	raw  []byte
	kind string // m metadata, g<...> gts, p push, a apiversions
	r    [16]byte
	code int16
	b    [16]byte
	v1   bool
}

func bbPlay(c *pcapgen.Capture, o pcapgen.ConnOptions, steps []bbStep) {
	cn := c.Conn(o)
	s := bbSession(cn, nil, nil)
	for _, st := range steps {
		s.Header.ClientID, s.Header.InstanceID, s.Header.RawTags = st.cid, st.id, st.raw
		switch st.kind {
		case "m":
			if st.v1 {
				s.RoundTrip(pcapgen.Metadata(8, "orders"), pcapgen.MetadataResponse(8, "10.0.0.1", 9092))
			} else {
				bbMeta(s)
			}
		case "g":
			bbGTS(s, st.r, st.code, st.b)
		case "p":
			bbPush(s, st.r, st.code)
		case "a":
			bbAPIV(s, st.code)
		case "od":
			bbOffsetDelete(s, st.id)
		}
	}
	cn.Close()
}

// bbRun2 writes c and analyses it with `kwatch read --format json`.
func bbRun2(t *testing.T, c *pcapgen.Capture, extra ...string) bbFindingsReport {
	t.Helper()
	path := bbCaptureFile(t, c, "scenario.pcap")
	rep, _ := bbReadAs[bbFindingsReport](t, path, extra...)
	if rep.Totals.Packets != c.Frames() {
		t.Errorf("totals.packets %d, capture has %d", rep.Totals.Packets, c.Frames())
	}
	return rep
}

// bbCheck asserts severity (and frame, confidence when non-zero) of every
// finding of rule.
func bbCheck(t *testing.T, rep bbFindingsReport, rule, severity, confidence string, frame int) {
	t.Helper()
	for _, f := range bbOf(rep, rule) {
		if f.Severity != severity {
			t.Errorf("%s severity %q, want %q", rule, f.Severity, severity)
		}
		if confidence != "" && f.Confidence != confidence {
			t.Errorf("%s confidence %q, want %q", rule, f.Confidence, confidence)
		}
		if frame != 0 && f.Frame != frame {
			t.Errorf("%s frame %d, want %d", rule, f.Frame, frame)
		}
	}
}

const bbGroup = "orders-group"

// bbModern opens a connection for a KIP-1313 client with header instance ID
// inst: ApiVersions v4 round trip with the client ID, then null client IDs
// (so that client-id-repeated does not apply).
func bbModern(c *pcapgen.Capture, o pcapgen.ConnOptions, inst [16]byte) (*pcapgen.Conn, *pcapgen.Session) {
	cn := c.Conn(o)
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("modern-app"), InstanceID: &inst, CorrelationID: 1})
	s.RoundTrip(pcapgen.APIVersions(4, "apache-kafka-java", "4.2.0"), pcapgen.APIVersionsResponse(4))
	s.Header.ClientID = nil
	return cn, s
}

// bbLegacy opens a connection for a client without header instance IDs.
func bbLegacy(c *pcapgen.Capture, o pcapgen.ConnOptions) (*pcapgen.Conn, *pcapgen.Session) {
	cn := c.Conn(o)
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("legacy-app"), CorrelationID: 1})
	s.RoundTrip(pcapgen.APIVersions(3, "librdkafka", "2.6.0"), pcapgen.APIVersionsResponse(3))
	return cn, s
}

// cgJoin sends a ConsumerGroupHeartbeat join (epoch 0) answered NONE with
// the same member ID; returns the request frame.
func cgJoin(s *pcapgen.Session, v int16, group, member string) int {
	f, _ := s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(v, group, member, 0), pcapgen.ConsumerGroupHeartbeatResponse(v, 0, pcapgen.Ptr(member), 1))
	return f
}

func cgBeat(s *pcapgen.Session, v int16, group, member string, epoch int32) int {
	f, _ := s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(v, group, member, epoch), pcapgen.ConsumerGroupHeartbeatResponse(v, 0, pcapgen.Ptr(member), epoch))
	return f
}

func cgLeave(s *pcapgen.Session, v int16, group, member string, epoch int32) int {
	f, _ := s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(v, group, member, epoch), pcapgen.ConsumerGroupHeartbeatResponse(v, 0, pcapgen.Ptr(member), epoch))
	return f
}

// withVersion returns id with its UUID version nibble set to v.
func withVersion(id [16]byte, v byte) [16]byte {
	id[6] = id[6]&0x0f | v<<4
	return id
}

// Kafka error codes (kerr) the scenarios answer with.
const (
	errUnknownServer        = -1
	errNone                 = 0
	errCoordLoading         = 14
	errCoordNotAvailable    = 15
	errNotCoordinator       = 16
	errUnknownMemberID      = 25
	errUnsupportedMech      = 33
	errUnsupportedVersion   = 35
	errInvalidRequest       = 42
	errFencedMemberEpoch    = 110
	errUnreleasedInstanceID = 111
	errUnknownSubscription  = 117
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

func bb3Eq(t *testing.T, what string, got, want any) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s = %v, spec requires %v", what, got, want)
	}
}

// bbMeta9 is a Metadata v12 round trip (header v2).
func bbMeta9(s *pcapgen.Session) int {
	f, _ := s.RoundTrip(pcapgen.Metadata(12, "orders"), pcapgen.MetadataResponse(12, "10.0.0.9", 9092))
	return f
}

// bb3Changed builds one connection with an instance-id-changed request and
// returns the capture, the offending frame and correlation ID.
func bb3Changed(opts pcapgen.Options) (*pcapgen.Capture, int, int32) {
	c := pcapgen.New(opts)
	cn := c.Conn(pcapgen.ConnOptions{Client: bb3ClientA, Broker: bb3BrokerA})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("orders-app"), InstanceID: bbID(bb3X), CorrelationID: 1})
	s.RoundTrip(pcapgen.APIVersions(3, "apache-kafka-java", "4.2.0"), pcapgen.APIVersionsResponse(3))
	s.Header.ClientID = nil
	bbMeta9(s)
	s.Header.InstanceID = bbID(bb3Y)
	corr := s.Header.CorrelationID
	f := bbMeta9(s)
	cn.Close()
	return c, f, corr
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
	m := bbJ(bb3X)
	cn := c.Conn(pcapgen.ConnOptions{Client: bb3ClientA, Broker: bb3BrokerA})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("orders-app"), InstanceID: bbID(bb3X), CorrelationID: 1})
	s.RoundTrip(pcapgen.APIVersions(3, "apache-kafka-java", "4.2.0"), pcapgen.APIVersionsResponse(3))
	s.Header.ClientID = nil
	s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(1, "g1", m, 0), pcapgen.ConsumerGroupHeartbeatResponse(1, 0, &m, 1))
	s.RoundTrip(pcapgen.GetTelemetrySubscriptions(bb3X), pcapgen.GetTelemetrySubscriptionsResponse(0, bb3Zero, 7))
	s.Header.InstanceID = nil
	info.droppedAt = bbMeta9(s) // instance-id-dropped
	info.requests["v2"] += 4
	cn.Close()

	cn2 := c.Conn(pcapgen.ConnOptions{Client: netip.MustParseAddrPort("10.0.0.5:53123"), Broker: bb3BrokerB})
	s2 := cn2.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("orders-app"), InstanceID: bbID(bb3X), CorrelationID: 1})
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
	bbMeta9(s3)
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

// ------------------------------------------------------------------- dump

// bbCheckDumpFields checks that the dump object at each frame of want (at
// finds it) has every field of want's map, values compared as text.
func bbCheckDumpFields(t *testing.T, at func(frame int) map[string]any, want map[int]map[string]any) {
	t.Helper()
	for frame, kvs := range want {
		o := at(frame)
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
}

// bbDump runs kwatch dump --format ndjson with args (flags and files) and
// returns its objects, numbers kept as json.Number.
func bbDump(t *testing.T, args ...string) []map[string]any {
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

var (
	bb4X = pcapgen.SeqUUID(0xa0)
	bb4Y = pcapgen.SeqUUID(0xb0)
	bb4Z = pcapgen.SeqUUID(0xc0)
)

// bb4Path writes c under a temp dir with the given file name.
func bb4Path(t *testing.T, c *pcapgen.Capture, name string) string {
	t.Helper()
	if name == "" {
		name = "scenario.pcap"
	}
	return bbCaptureFile(t, c, name)
}

// bb4Dump writes c and returns the objects of kwatch dump over it.
func bb4Dump(t *testing.T, c *pcapgen.Capture, extra ...string) []map[string]any {
	t.Helper()
	return bbDumpObjs(t, bb4Path(t, c, ""), extra...)
}

// bb4Rules is the multiset of rules, each suffixed with its confidence when
// withConf.
func bb4Rules(rep bbReport, withConf bool) map[string]int {
	m := map[string]int{}
	for _, f := range rep.Findings {
		k := f["rule"].(string)
		if withConf {
			k += "/" + fmt.Sprint(f["confidence"])
		}
		m[k]++
	}
	return m
}

// bb4ExpectConf asserts the exact multiset of rule/confidence pairs.
func bb4ExpectConf(t *testing.T, rep bbReport, want map[string]int) {
	t.Helper()
	bbCompareCounts(t, "rule/confidence", bb4Rules(rep, true), want, rep.summary)
}

func bb4Cov(t *testing.T, rep bbReport, event string, want int) {
	t.Helper()
	if got := rep.Totals.Coverage[event]; got != want {
		t.Errorf("coverage %s = %d, want %d\n%s", event, got, want, rep.summary())
	}
}

func bb4CovAtLeast(t *testing.T, rep bbReport, event string, want int) {
	t.Helper()
	if got := rep.Totals.Coverage[event]; got < want {
		t.Errorf("coverage %s = %d, want >= %d\n%s", event, got, want, rep.summary())
	}
}

func bb4Sess(cn *pcapgen.Conn, cid *string, id *[16]byte) *pcapgen.Session {
	return cn.Session(pcapgen.RequestHeader{ClientID: cid, InstanceID: id, CorrelationID: 1})
}

func bb4Records(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + i%26)
	}
	return b
}

// bb4Ref plays the reference conversation on one connection: a KIP-1313
// client (client ID once, instance ID X on every v2 request) that commits
// four known violations.
//
//	instance-id-changed   (Metadata with Y)
//	client-id-changed     (Metadata with "payments-app")
//	telemetry-id-mismatch (GTS with header X, body Z) + broker-accepted-invalid (answered NONE)
//	member-id-empty       (CGH v1 join, empty member ID, answered INVALID_REQUEST)
//
// plus a compliant aligned join, heartbeat, a Produce with a body larger
// than one segment and an aligned PushTelemetry.
func bb4Ref(c *pcapgen.Capture, o pcapgen.ConnOptions) *pcapgen.Conn {
	cn := c.Conn(o)
	s := bb4Sess(cn, pcapgen.Ptr("orders-app"), bbID(bb4X))
	s.RoundTrip(pcapgen.APIVersions(3, "apache-kafka-java", "4.2.0"), pcapgen.APIVersionsResponse(3))
	s.Header.ClientID = nil
	bbMeta(s)
	s.Header.InstanceID = bbID(bb4Y)
	bbMeta(s) // instance-id-changed
	s.Header.InstanceID = bbID(bb4X)
	s.Header.ClientID = pcapgen.Ptr("payments-app")
	bbMeta(s) // client-id-changed
	s.Header.ClientID = nil
	s.RoundTrip(pcapgen.GetTelemetrySubscriptions(bb4Z), pcapgen.GetTelemetrySubscriptionsResponse(0, [16]byte{}, 7)) // mismatch, accepted
	s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(1, "g-empty", "", 0), pcapgen.ConsumerGroupHeartbeatResponse(1, 42, nil, 0))
	m := pcapgen.JavaString(bb4X)
	s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(1, "g1", m, 0), pcapgen.ConsumerGroupHeartbeatResponse(1, 0, &m, 1))
	s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(1, "g1", m, 1), pcapgen.ConsumerGroupHeartbeatResponse(1, 0, &m, 1))
	s.RoundTrip(pcapgen.Produce(9, "orders", [16]byte{}, bb4Records(3000)), pcapgen.ProduceResponse(9, "orders", [16]byte{}))
	s.RoundTrip(pcapgen.PushTelemetry(bb4X, 7), pcapgen.PushTelemetryResponse(0))
	bbMeta(s)
	return cn
}

// bb4RefRules are the findings the reference conversation must give.
var bb4RefRules = map[string]int{
	"instance-id-changed":     1,
	"client-id-changed":       1,
	"telemetry-id-mismatch":   1,
	"broker-accepted-invalid": 1,
	"member-id-empty":         1,
	// 3.2 client-id-repeated: "a client that sends header instance IDs ...
	// still repeats the client ID on later requests" ("payments-app").
	"client-id-repeated": 1,
}

const bb4RefRequests = 11

// bb4Same checks that a variant of the reference capture gives the same
// rules with the same confidence, the same request/response counts and no
// coverage event but those in allowed.
func bb4Same(t *testing.T, rep bbReport, allowed ...string) {
	t.Helper()
	want := map[string]int{}
	for r, n := range bb4RefRules {
		want[r+"/full"] = n
	}
	bb4ExpectConf(t, rep, want)
	if rep.Totals.Requests != bb4RefRequests || rep.Totals.Responses != bb4RefRequests {
		t.Errorf("requests %d responses %d, want %d each", rep.Totals.Requests, rep.Totals.Responses, bb4RefRequests)
	}
	ok := map[string]bool{}
	for _, a := range allowed {
		ok[a] = true
	}
	for ev, n := range rep.Totals.Coverage {
		if n != 0 && !ok[ev] {
			t.Errorf("coverage %s = %d on a lossless variant", ev, n)
		}
	}
}

// bb4Step is one request of the reference conversation with the header it
// uses and its answer.
type bb4Step struct {
	cid  *string
	id   *[16]byte
	req  kmsg.Request
	resp kmsg.Response
}

// bb4RefSteps is bb4Ref as a list of steps.
func bb4RefSteps() []bb4Step {
	m := pcapgen.JavaString(bb4X)
	x, y := bbID(bb4X), bbID(bb4Y)
	return []bb4Step{
		{pcapgen.Ptr("orders-app"), x, pcapgen.APIVersions(3, "apache-kafka-java", "4.2.0"), pcapgen.APIVersionsResponse(3)},
		{nil, x, pcapgen.Metadata(12, "orders"), pcapgen.MetadataResponse(12, "10.0.0.1", 9092)},
		{nil, y, pcapgen.Metadata(12, "orders"), pcapgen.MetadataResponse(12, "10.0.0.1", 9092)},
		{pcapgen.Ptr("payments-app"), x, pcapgen.Metadata(12, "orders"), pcapgen.MetadataResponse(12, "10.0.0.1", 9092)},
		{nil, x, pcapgen.GetTelemetrySubscriptions(bb4Z), pcapgen.GetTelemetrySubscriptionsResponse(0, [16]byte{}, 7)},
		{nil, x, pcapgen.ConsumerGroupHeartbeat(1, "g-empty", "", 0), pcapgen.ConsumerGroupHeartbeatResponse(1, 42, nil, 0)},
		{nil, x, pcapgen.ConsumerGroupHeartbeat(1, "g1", m, 0), pcapgen.ConsumerGroupHeartbeatResponse(1, 0, &m, 1)},
		{nil, x, pcapgen.ConsumerGroupHeartbeat(1, "g1", m, 1), pcapgen.ConsumerGroupHeartbeatResponse(1, 0, &m, 1)},
		{nil, x, pcapgen.Produce(9, "orders", [16]byte{}, bb4Records(3000)), pcapgen.ProduceResponse(9, "orders", [16]byte{})},
		{nil, x, pcapgen.PushTelemetry(bb4X, 7), pcapgen.PushTelemetryResponse(0)},
		{nil, x, pcapgen.Metadata(12, "orders"), pcapgen.MetadataResponse(12, "10.0.0.1", 9092)},
	}
}

// bb4Encode encodes step i (correlation ID i+1) as request and response.
func bb4Encode(i int, st bb4Step) (req, resp []byte) {
	h := pcapgen.RequestHeader{ClientID: st.cid, InstanceID: st.id, CorrelationID: int32(i + 1), APIVersion: st.req.GetVersion()}
	req = pcapgen.EncodeRequest(h, st.req)
	resp = pcapgen.EncodeResponse(int32(i+1), st.req.GetVersion(), st.resp)
	return req, resp
}

// bb4EncodeAll encodes every step: requests q and responses r.
func bb4EncodeAll(steps []bb4Step) (q, r [][]byte) {
	for i, st := range steps {
		a, b := bb4Encode(i, st)
		q, r = append(q, a), append(r, b)
	}
	return q, r
}

// bb4AfterBad plays, on s, three requests that give exactly one
// instance-id-changed (X, Y, X), each answered.
func bb4AfterBad(s *pcapgen.Session) {
	s.Header.InstanceID = bbID(bb4X)
	bbMeta(s)
	s.Header.InstanceID = bbID(bb4Y)
	bbMeta(s)
	s.Header.InstanceID = bbID(bb4X)
	bbMeta(s)
}

const bb5Acc = "accepted-2026"

var (
	bb5X   = pcapgen.SeqUUID(0x11)
	bb5Y   = pcapgen.SeqUUID(0x22)
	bb5App = pcapgen.Ptr("orders-app")
)

// bb5Host is client port 51000+i on one host, 10.7.0.1.
func bb5Host(i int) netip.AddrPort {
	return netip.AddrPortFrom(netip.MustParseAddr("10.7.0.1"), uint16(51000+i))
}

// bb5Read runs kwatch read --format json --fail-on never [--profile p].
func bb5Read(t *testing.T, path, profile string) bbReport {
	t.Helper()
	var args []string
	if profile != "" {
		args = append(args, "--profile", profile)
	}
	rep, _ := bbReadAs[bbReport](t, path, args...)
	return rep
}

func bb5Exit(path string, extra ...string) int {
	code, _, _ := runKwatch(append(append([]string{"read"}, extra...), path)...)
	return code
}

// bb5Expect asserts the exact multiset of rules.
func bb5Expect(t *testing.T, label string, rep bbReport, want map[string]int) {
	t.Helper()
	bbCompareCounts(t, label, bbCounts(rep), want, rep.summary)
}

func bb5Field(t *testing.T, f map[string]any, key string, want any) {
	t.Helper()
	if f == nil {
		t.Errorf("no finding to check %s on", key)
		return
	}
	if n, ok := want.(int); ok {
		want = float64(n)
	}
	if fmt.Sprint(f[key]) != fmt.Sprint(want) {
		t.Errorf("%s finding: %s = %v, spec requires %v", f["rule"], key, f[key], want)
	}
}

func bb5First(rep bbReport, rule string) map[string]any {
	if fs := bbOf(rep, rule); len(fs) > 0 {
		return fs[0]
	}
	return nil
}

// bb5Sess starts a session with client ID cid and no instance ID.
func bb5Sess(cn *pcapgen.Conn, cid *string) *pcapgen.Session {
	return cn.Session(pcapgen.RequestHeader{ClientID: cid, CorrelationID: 1})
}

// bb5OD sends OffsetDelete v1 (the first header-v3 user, SPEC section 4) with
// a v3 header carrying id (nil = absent) and, if raw is non-nil, those tagged
// bytes instead. It returns the correlation ID and completing frame.
func bb5OD(s *pcapgen.Session, id *[16]byte, raw []byte) (int32, int) {
	s.Header.HeaderVersion = 3
	s.Header.InstanceID, s.Header.RawTags = id, raw
	r := kmsg.NewPtrOffsetDeleteRequest()
	r.Version = 1
	r.Group = "orders-group"
	corr, f := s.Request(r)
	s.Header.HeaderVersion = pcapgen.HeaderAuto
	s.Header.InstanceID, s.Header.RawTags = nil, nil
	return corr, f
}

// ------------------------------------------------------------------ helpers

var (
	bb7X    = pcapgen.SeqUUID(0x81)
	bb7Y    = pcapgen.SeqUUID(0x91)
	bb7B    = pcapgen.SeqUUID(0xa1) // broker-assigned telemetry ID
	bb7C    = pcapgen.SeqUUID(0xb1)
	bb7Zero [16]byte
)

func bbRunF(t *testing.T, c *pcapgen.Capture, extra ...string) bbFindingsReport {
	t.Helper()
	return bbReadF(t, bbCaptureFile(t, c, ""), extra...)
}

// bb7Frames returns the frames of rule's findings, sorted.
func bb7Frames(rep bbFindingsReport, rule string) []int {
	var fs []int
	for _, f := range bbOf(rep, rule) {
		fs = append(fs, f.Frame)
	}
	sort.Ints(fs)
	return fs
}

func bb7EqInts(t *testing.T, what string, got, want []int) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s: got %v, spec requires %v", what, got, want)
	}
}

// bb7Sev asserts the severity (and confidence unless "") of every finding
// of rule.
func bb7Sev(t *testing.T, rep bbFindingsReport, rule, severity, confidence string) {
	t.Helper()
	for _, f := range bbOf(rep, rule) {
		if f.Severity != severity {
			t.Errorf("%s at frame %d: severity %q, spec requires %q", rule, f.Frame, f.Severity, severity)
		}
		if confidence != "" && f.Confidence != confidence {
			t.Errorf("%s at frame %d: confidence %q, spec requires %q", rule, f.Frame, f.Confidence, confidence)
		}
	}
}

// bb7Time is the section 5 time of a packet.
func bb7Time(c *pcapgen.Capture, frame int) string {
	return c.Packets()[frame-1].Time.UTC().Format("2006-01-02T15:04:05.000000Z")
}

func bb7Host(host string, port uint16) netip.AddrPort {
	return netip.AddrPortFrom(netip.MustParseAddr(host), port)
}

// bb7Legacy opens a connection of a client without header instance IDs: an
// ApiVersions v3 round trip with client ID cid, which the session keeps
// repeating (legacy clients do; "a statistic, not a finding").
func bb7Legacy(c *pcapgen.Capture, o pcapgen.ConnOptions, cid string) (*pcapgen.Conn, *pcapgen.Session) {
	cn := c.Conn(o)
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr(cid), CorrelationID: 1})
	s.RoundTrip(pcapgen.APIVersions(3, "librdkafka", "2.6.0"), pcapgen.APIVersionsResponse(3))
	return cn, s
}

// bb7Modern opens a connection of a KIP-1313 client: instance ID inst on
// every v2 request, client ID cid on the first request only.
func bb7Modern(c *pcapgen.Capture, o pcapgen.ConnOptions, cid string, inst [16]byte) (*pcapgen.Conn, *pcapgen.Session) {
	cn := c.Conn(o)
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr(cid), InstanceID: &inst, CorrelationID: 1})
	s.RoundTrip(pcapgen.APIVersions(4, "apache-kafka-java", "4.2.0"), pcapgen.APIVersionsResponse(4))
	s.Header.ClientID = nil
	return cn, s
}

// bb7HB is one of the three heartbeat APIs of SPEC 3.4 at a version where a
// client-generated member ID is required (ConsumerGroupHeartbeat from v1 by
// default, share and streams from v0).
type bb7HB struct {
	name string
	key  int16
	ver  int16
}

var (
	bb7CG = bb7HB{"ConsumerGroupHeartbeat", 68, 1}
	bb7SG = bb7HB{"ShareGroupHeartbeat", 76, 1}
	bb7ST = bb7HB{"StreamsGroupHeartbeat", 88, 0}
)

func (h bb7HB) at(v int16) bb7HB { h.ver = v; return h }

func (h bb7HB) req(group, member string, epoch int32) kmsg.Request {
	switch h.key {
	case 76:
		return pcapgen.ShareGroupHeartbeat(h.ver, group, member, epoch)
	case 88:
		return pcapgen.StreamsGroupHeartbeat(h.ver, group, member, epoch)
	}
	return pcapgen.ConsumerGroupHeartbeat(h.ver, group, member, epoch)
}

func (h bb7HB) resp(code int16, member *string, epoch int32) kmsg.Response {
	switch h.key {
	case 76:
		return pcapgen.ShareGroupHeartbeatResponse(h.ver, code, member, epoch)
	case 88:
		m := ""
		if member != nil {
			m = *member
		}
		return pcapgen.StreamsGroupHeartbeatResponse(h.ver, code, m, epoch)
	}
	return pcapgen.ConsumerGroupHeartbeatResponse(h.ver, code, member, epoch)
}

// rt sends a heartbeat and its answer; returns the request's frame.
func (h bb7HB) rt(s *pcapgen.Session, group, member string, epoch int32, code int16, respMember *string, respEpoch int32) int {
	f, _ := s.RoundTrip(h.req(group, member, epoch), h.resp(code, respMember, respEpoch))
	return f
}

// join is a join (epoch 0) answered NONE with the same member ID.
func (h bb7HB) join(s *pcapgen.Session, group, member string) int {
	return h.rt(s, group, member, 0, errNone, pcapgen.Ptr(member), 1)
}

func (h bb7HB) beat(s *pcapgen.Session, group, member string, epoch int32) int {
	return h.rt(s, group, member, epoch, errNone, pcapgen.Ptr(member), epoch)
}

func (h bb7HB) leave(s *pcapgen.Session, group, member string) int {
	return h.rt(s, group, member, -1, errNone, pcapgen.Ptr(member), -1)
}

// send sends a heartbeat that never gets an answer.
func (h bb7HB) send(s *pcapgen.Session, group, member string, epoch int32) int {
	_, f := s.Request(h.req(group, member, epoch))
	return f
}

// ------------------------------------------------------------------ packets

// TCP flags.
const (
	bb8aFIN = 0x01
	bb8aSYN = 0x02
	bb8aRST = 0x04
	bb8aPSH = 0x08
	bb8aACK = 0x10
	bb8aECE = 0x40
	bb8aCWR = 0x80
)

// Directions: requests go to the broker, responses to the client.
const (
	bb8aToBroker = 0
	bb8aToClient = 1
)

// bb8aPkt is one captured packet: an IP packet and how it is framed.
type bb8aPkt struct {
	t  time.Time
	ip []byte
	// link framing inside an Ethernet capture: "" (plain), "vlan", "qinq";
	// other captures frame by the file's link (see bb8aFrame).
	tags []uint16 // Ethernet: 802.1Q/802.1ad tags, outermost first (tag 0x88a8 for the outer of two)
	// out marks a packet the capturing host sent (SLL packet type).
	out   bool
	iface int // pcapng interface
	// trailer follows the IP packet in an Ethernet frame (an FCS).
	trailer []byte
	// etherType, when set, frames ip as the payload of this Ethernet type
	// (a non-IP frame).
	etherType uint16
}

// bb8aCap is a capture built packet by packet.
type bb8aCap struct {
	now  time.Time
	step time.Duration
	pkts []bb8aPkt
	ipID uint16
}

func bb8aNew() *bb8aCap { return &bb8aCap{now: pcapgen.BaseTime(), step: time.Millisecond} }

func (c *bb8aCap) add(p bb8aPkt) int {
	p.t = c.now
	c.now = c.now.Add(c.step)
	c.pkts = append(c.pkts, p)
	return len(c.pkts)
}

func (c *bb8aCap) sleep(d time.Duration) { c.now = c.now.Add(d) }

func (c *bb8aCap) frames() int { return len(c.pkts) }

// bb8aSum is the Internet checksum of the concatenation of bs.
func bb8aSum(bs ...[]byte) uint16 {
	var all []byte
	for _, b := range bs {
		all = append(all, b...)
	}
	var s uint32
	for i := 0; i+1 < len(all); i += 2 {
		s += uint32(binary.BigEndian.Uint16(all[i:]))
	}
	if len(all)%2 == 1 {
		s += uint32(all[len(all)-1]) << 8
	}
	for s > 0xffff {
		s = s>>16 + s&0xffff
	}
	return ^uint16(s)
}

// bb8aTCP builds a TCP segment (header, options padded to 4 bytes, payload)
// with its checksum over the pseudo-header of src and dst.
func bb8aTCP(src, dst netip.AddrPort, seq, ack uint32, flags uint8, win uint16, opts, payload []byte) []byte {
	for len(opts)%4 != 0 {
		opts = append(opts, 0)
	}
	hl := 20 + len(opts)
	b := make([]byte, hl, hl+len(payload))
	binary.BigEndian.PutUint16(b[0:], src.Port())
	binary.BigEndian.PutUint16(b[2:], dst.Port())
	binary.BigEndian.PutUint32(b[4:], seq)
	binary.BigEndian.PutUint32(b[8:], ack)
	b[12] = byte(hl/4) << 4
	b[13] = flags
	binary.BigEndian.PutUint16(b[14:], win)
	copy(b[20:], opts)
	b = append(b, payload...)
	var ps []byte
	if src.Addr().Is4() {
		a, d := src.Addr().As4(), dst.Addr().As4()
		ps = append(append(ps, a[:]...), d[:]...)
		ps = append(ps, 0, 6)
		ps = binary.BigEndian.AppendUint16(ps, uint16(len(b)))
	} else {
		a, d := src.Addr().As16(), dst.Addr().As16()
		ps = append(append(ps, a[:]...), d[:]...)
		ps = binary.BigEndian.AppendUint32(ps, uint32(len(b)))
		ps = append(ps, 0, 0, 0, 6)
	}
	binary.BigEndian.PutUint16(b[16:], bb8aSum(ps, b))
	return b
}

// bb8aIPv4 wraps l4 (a TCP segment) in an IPv4 header with options opts
// (padded to 4 bytes), DF set.
func bb8aIPv4(src, dst netip.Addr, id uint16, opts, l4 []byte) []byte {
	for len(opts)%4 != 0 {
		opts = append(opts, 0)
	}
	hl := 20 + len(opts)
	h := make([]byte, hl, hl+len(l4))
	h[0] = 0x40 | byte(hl/4)
	binary.BigEndian.PutUint16(h[2:], uint16(hl+len(l4)))
	binary.BigEndian.PutUint16(h[4:], id)
	h[6] = 0x40
	h[8] = 64
	h[9] = 6
	a, d := src.As4(), dst.As4()
	copy(h[12:], a[:])
	copy(h[16:], d[:])
	copy(h[20:], opts)
	binary.BigEndian.PutUint16(h[10:], bb8aSum(h))
	return append(h, l4...)
}

// bb8aIPv6 wraps l4 in an IPv6 header, with a hop-by-hop and a destination
// options header (8 bytes each, PadN) before it when ext.
func bb8aIPv6(src, dst netip.Addr, ext bool, l4 []byte) []byte {
	var exts []byte
	next := byte(6)
	if ext {
		next = 0                                     // hop-by-hop
		exts = append(exts, 60, 0, 1, 4, 0, 0, 0, 0) // then destination options; PadN 4
		exts = append(exts, 6, 0, 1, 4, 0, 0, 0, 0)  // then TCP
	}
	h := make([]byte, 40, 40+len(exts)+len(l4))
	h[0] = 0x60
	binary.BigEndian.PutUint16(h[4:], uint16(len(exts)+len(l4)))
	h[6] = next
	h[7] = 64
	a, d := src.As16(), dst.As16()
	copy(h[8:], a[:])
	copy(h[24:], d[:])
	return append(append(h, exts...), l4...)
}

// ------------------------------------------------------------------ flows

// bb8aFlow is one TCP connection whose every segment the test places.
type bb8aFlow struct {
	c        *bb8aCap
	cli, brk netip.AddrPort
	// next is the next sequence number per direction.
	next [2]uint32
	isn  [2]uint32
	// tcpOpts, if set, gives the TCP options of each segment.
	tcpOpts func(flags uint8) []byte
	// ipOpts are IPv4 options on every packet; v6ext adds IPv6 extension
	// headers.
	ipOpts []byte
	v6ext  bool
	// tags are the Ethernet VLAN tags per direction.
	tags [2][]uint16
	// flagsOr is ORed into the flags of data segments per direction.
	flagsOr [2]uint8
}

func (c *bb8aCap) flow(client, broker string, isnC, isnB uint32) *bb8aFlow {
	return &bb8aFlow{
		c: c, cli: netip.MustParseAddrPort(client), brk: netip.MustParseAddrPort(broker),
		next: [2]uint32{isnC + 1, isnB + 1}, isn: [2]uint32{isnC, isnB},
	}
}

// seg places one segment in direction d.
func (f *bb8aFlow) seg(d int, seq, ack uint32, flags uint8, win uint16, payload []byte) int {
	src, dst := f.cli, f.brk
	if d == bb8aToClient {
		src, dst = f.brk, f.cli
	}
	var opts []byte
	if f.tcpOpts != nil {
		opts = f.tcpOpts(flags)
	}
	l4 := bb8aTCP(src, dst, seq, ack, flags, win, opts, payload)
	var ip []byte
	if src.Addr().Is4() {
		f.c.ipID++
		ip = bb8aIPv4(src.Addr(), dst.Addr(), f.c.ipID, f.ipOpts, l4)
	} else {
		ip = bb8aIPv6(src.Addr(), dst.Addr(), f.v6ext, l4)
	}
	return f.c.add(bb8aPkt{ip: ip, tags: f.tags[d], out: d == bb8aToBroker})
}

func (f *bb8aFlow) syn() int {
	return f.seg(bb8aToBroker, f.isn[0], 0, bb8aSYN, 64240, nil)
}

func (f *bb8aFlow) synAck() int {
	return f.seg(bb8aToClient, f.isn[1], f.isn[0]+1, bb8aSYN|bb8aACK, 65160, nil)
}

// ack sends a pure ACK in direction d for everything the other side sent.
func (f *bb8aFlow) ack(d int) int {
	return f.seg(d, f.next[d], f.next[1-d], bb8aACK, 502, nil)
}

// open is the three-way handshake.
func (f *bb8aFlow) open() {
	f.syn()
	f.synAck()
	f.ack(bb8aToBroker)
}

// send writes data in direction d in segments of at most mss bytes (0 =
// 1460) and returns their frames.
func (f *bb8aFlow) send(d int, data []byte, mss int) []int {
	if mss <= 0 {
		mss = 1460
	}
	var frames []int
	for off := 0; off < len(data); off += mss {
		end := min(off+mss, len(data))
		flags := uint8(bb8aACK) | f.flagsOr[d]
		if end == len(data) {
			flags |= bb8aPSH
		}
		frames = append(frames, f.seg(d, f.next[d]+uint32(off), f.next[1-d], flags, 502, data[off:end]))
	}
	f.next[d] += uint32(len(data))
	return frames
}

// at sends bytes [a, b) of data whose first byte has sequence number base,
// in direction d, without moving next.
func (f *bb8aFlow) at(d int, base uint32, data []byte, a, b int) int {
	return f.seg(d, base+uint32(a), f.next[1-d], bb8aACK|bb8aPSH, 502, data[a:b])
}

// fin sends a FIN (with ACK) in direction d.
func (f *bb8aFlow) fin(d int) int {
	fr := f.seg(d, f.next[d], f.next[1-d], bb8aFIN|bb8aACK, 502, nil)
	f.next[d]++
	return fr
}

func (f *bb8aFlow) rst(d int) int {
	return f.seg(d, f.next[d], f.next[1-d], bb8aRST|bb8aACK, 0, nil)
}

// close is the usual client-first close; it returns the second FIN's frame.
func (f *bb8aFlow) close() int {
	f.fin(bb8aToBroker)
	second := f.fin(bb8aToClient)
	f.ack(bb8aToBroker)
	return second
}

// ------------------------------------------------------------------ Kafka

// bb8aKafka is a Kafka client on a flow: it numbers correlation IDs and
// fills request headers from a template (as pcapgen.Session does).
type bb8aKafka struct {
	f   *bb8aFlow
	h   pcapgen.RequestHeader
	mss int
}

var (
	bb8aX = pcapgen.SeqUUID(0x11)
	bb8aY = pcapgen.SeqUUID(0x21)
	bb8aZ = pcapgen.SeqUUID(0x31)
)

// kafka starts a client with client ID cid (nil = null) and instance ID inst
// (nil = none).
func (f *bb8aFlow) kafka(cid *string, inst *[16]byte) *bb8aKafka {
	return &bb8aKafka{f: f, h: pcapgen.RequestHeader{ClientID: cid, InstanceID: inst, CorrelationID: 1}}
}

func (k *bb8aKafka) enc(body kmsg.Request) (int32, []byte) {
	h := k.h
	h.APIVersion = body.GetVersion()
	k.h.CorrelationID++
	return h.CorrelationID, pcapgen.EncodeRequest(h, body)
}

// req sends a request and returns its correlation ID and the frame of its
// last segment.
func (k *bb8aKafka) req(body kmsg.Request) (int32, int) {
	corr, b := k.enc(body)
	fr := k.f.send(bb8aToBroker, b, k.mss)
	return corr, fr[len(fr)-1]
}

// resp answers corr with body at version v.
func (k *bb8aKafka) resp(corr int32, v int16, body kmsg.Response) int {
	fr := k.f.send(bb8aToClient, pcapgen.EncodeResponse(corr, v, body), k.mss)
	return fr[len(fr)-1]
}

func (k *bb8aKafka) rt(req kmsg.Request, resp kmsg.Response) (int, int) {
	corr, rf := k.req(req)
	return rf, k.resp(corr, req.GetVersion(), resp)
}

// hello is the first round trip of a client: ApiVersions v4.
func (k *bb8aKafka) hello() int {
	f, _ := k.rt(pcapgen.APIVersions(4, "apache-kafka-java", "4.2.0"), pcapgen.APIVersionsResponse(4))
	return f
}

// meta is a Metadata v12 round trip; it returns the request's frame.
func (k *bb8aKafka) meta() int {
	f, _ := k.rt(pcapgen.Metadata(12, "orders"), pcapgen.MetadataResponse(12, "10.0.0.1", 9092))
	return f
}

// metaWith is a Metadata v12 round trip with instance ID id on this request
// only.
func (k *bb8aKafka) metaWith(id [16]byte) int {
	saved := k.h.InstanceID
	k.h.InstanceID = &id
	defer func() { k.h.InstanceID = saved }()
	return k.meta()
}

// ------------------------------------------------------------------ files

// bb8aFrame frames p for a capture of link type link ("eth", "sll", "sll2",
// "null", "raw"); Ethernet frames under 60 bytes are padded as on the wire
// when pad.
func bb8aFrame(link string, p bb8aPkt, pad bool) []byte {
	v6 := p.ip[0]>>4 == 6
	et := uint16(0x0800)
	if v6 {
		et = 0x86dd
	}
	if p.etherType != 0 {
		et = p.etherType
	}
	var b []byte
	switch link {
	case "eth":
		b = append(b, 0x02, 0, 0, 0, 0, 0x01, 0x02, 0, 0, 0, 0, 0x02)
		if p.out {
			b[5], b[11] = 0x02, 0x01
		}
		for i, tag := range p.tags {
			tpid := uint16(0x8100)
			if i == 0 && len(p.tags) > 1 {
				tpid = 0x88a8
			}
			b = binary.BigEndian.AppendUint16(b, tpid)
			b = binary.BigEndian.AppendUint16(b, tag)
		}
		b = binary.BigEndian.AppendUint16(b, et)
		b = append(b, p.ip...)
		if pad && len(b) < 60 {
			b = append(b, make([]byte, 60-len(b))...)
		}
		return append(b, p.trailer...)
	case "sll":
		pt := uint16(0)
		if p.out {
			pt = 4
		}
		b = binary.BigEndian.AppendUint16(b, pt)
		b = binary.BigEndian.AppendUint16(b, 772) // ARPHRD_LOOPBACK
		b = binary.BigEndian.AppendUint16(b, 6)
		b = append(b, 0, 0, 0, 0, 0, 0, 0, 0)
		b = binary.BigEndian.AppendUint16(b, et)
	case "sll2":
		b = binary.BigEndian.AppendUint16(b, et)
		b = append(b, 0, 0)
		b = binary.BigEndian.AppendUint32(b, 3)
		b = binary.BigEndian.AppendUint16(b, 1)
		pt := byte(0)
		if p.out {
			pt = 4
		}
		b = append(b, pt, 6, 0x02, 0, 0, 0, 0, 0x07, 0, 0)
	case "null":
		fam := uint32(2)
		if v6 {
			fam = 30
		}
		b = binary.LittleEndian.AppendUint32(b, fam)
	case "raw", "wifi": // wifi: ip holds the whole 802.11 frame
	default:
		panic("unknown link " + link)
	}
	return append(b, p.ip...)
}

var bb8aLinkTypes = map[string]uint32{"eth": 1, "null": 0, "raw": 101, "sll": 113, "sll2": 276, "wifi": 105}

// bb8aWritePcap writes pkts as a little-endian pcap of link, cut at snap
// bytes (0 = 262144), with nanosecond timestamps when nanos.
func bb8aWritePcap(t *testing.T, pkts []bb8aPkt, link string, snap int, nanos, pad bool) string {
	t.Helper()
	if snap <= 0 {
		snap = 262144
	}
	var b []byte
	magic := uint32(0xa1b2c3d4)
	if nanos {
		magic = 0xa1b23c4d
	}
	b = binary.LittleEndian.AppendUint32(b, magic)
	b = binary.LittleEndian.AppendUint16(b, 2)
	b = binary.LittleEndian.AppendUint16(b, 4)
	b = append(b, 0, 0, 0, 0, 0, 0, 0, 0)
	b = binary.LittleEndian.AppendUint32(b, uint32(snap))
	b = binary.LittleEndian.AppendUint32(b, bb8aLinkTypes[link])
	for _, p := range pkts {
		data := bb8aFrame(link, p, pad)
		cl := min(len(data), snap)
		frac := p.t.Nanosecond()
		if !nanos {
			frac /= 1000
		}
		b = binary.LittleEndian.AppendUint32(b, uint32(p.t.Unix()))
		b = binary.LittleEndian.AppendUint32(b, uint32(frac))
		b = binary.LittleEndian.AppendUint32(b, uint32(cl))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(data)))
		b = append(b, data[:cl]...)
	}
	path := filepath.Join(t.TempDir(), "capture.pcap")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// ------------------------------------------------------------------ reports

// bb8aRun writes c as an Ethernet pcap (padded as on the wire) and reads it.
func bb8aRun(t *testing.T, c *bb8aCap) bbFindingsReport {
	t.Helper()
	return bbReadF(t, bb8aWritePcap(t, c.pkts, "eth", 0, false, true))
}

func bb8aCovString(m map[string]int) string {
	var parts []string
	for k, v := range m {
		if v != 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", k, v))
		}
	}
	sort.Strings(parts)
	return "{" + strings.Join(parts, " ") + "}"
}

// bb8aF is an expected finding: rule, frame, confidence and client.
type bb8aF struct {
	rule   string
	frame  int
	conf   string
	client string // "" = not checked
}

// bb8aExpect asserts exactly these findings (as a multiset).
func bb8aExpect(t *testing.T, rep bbFindingsReport, want ...bb8aF) {
	t.Helper()
	key := func(rule string, frame int, conf string) string {
		return fmt.Sprintf("%s@%d/%s", rule, frame, conf)
	}
	var got, exp []string
	clients := map[string]string{}
	for _, f := range rep.Findings {
		k := key(f.Rule, f.Frame, f.Confidence)
		got = append(got, k)
		clients[k] = f.Conn.Client
	}
	for _, w := range want {
		exp = append(exp, key(w.rule, w.frame, w.conf))
	}
	sort.Strings(got)
	sort.Strings(exp)
	if !slices.Equal(got, exp) {
		t.Errorf("findings (rule@frame/confidence):\n  got  %v\n  want %v\nreport:\n%s", got, exp, rep.summary())
		return
	}
	for _, w := range want {
		if w.client != "" {
			if c := clients[key(w.rule, w.frame, w.conf)]; c != w.client {
				t.Errorf("%s at frame %d: conn.client %s, want %s", w.rule, w.frame, c, w.client)
			}
		}
	}
}

// bb8aCheck reads c and checks its findings (bb8aExpect) and its totals
// (bb8aTotals) exactly.
func bb8aCheck(t *testing.T, c *bb8aCap, requests, responses int, cov map[string]int, want ...bb8aF) bbFindingsReport {
	t.Helper()
	rep := bb8aRun(t, c)
	bb8aExpect(t, rep, want...)
	bb8aTotals(t, rep, requests, responses, cov)
	return rep
}

// bb8aTotals asserts the request and response counts and every coverage
// event (those not in cov: zero).
func bb8aTotals(t *testing.T, rep bbFindingsReport, requests, responses int, cov map[string]int) {
	t.Helper()
	if rep.Totals.Requests != requests || rep.Totals.Responses != responses {
		t.Errorf("requests %d responses %d, want %d and %d\n%s", rep.Totals.Requests, rep.Totals.Responses, requests, responses, rep.summary())
	}
	for _, ev := range []string{"midstream-join", "stream-gap", "framing-error", "tls-connection", "sasl-raw-tokens", "unmatched-response", "truncated-packet"} {
		if rep.Totals.Coverage[ev] != cov[ev] {
			t.Errorf("coverage %s = %d, want %d\n%s", ev, rep.Totals.Coverage[ev], cov[ev], rep.summary())
		}
	}
}

// ------------------------------------------------------------ keepalives

// bb8aModern opens f and plays a KIP-1313 client's start: ApiVersions with
// client ID "orders-app" and instance ID X, then the client ID goes null.
func bb8aModern(f *bb8aFlow) *bb8aKafka {
	k := f.kafka(pcapgen.Ptr("orders-app"), &bb8aX)
	k.hello()
	k.h.ClientID = nil
	return k
}

// ------------------------------------------------------------------ helpers

var (
	bb8bB1 = netip.MustParseAddrPort("10.0.0.1:9092")
	bb8bB2 = netip.MustParseAddrPort("10.0.0.2:9092")
	bb8bB3 = netip.MustParseAddrPort("10.0.0.3:9092")

	bb8bX     = pcapgen.SeqUUID(0x31) // the consumer's instance ID
	bb8bP     = pcapgen.SeqUUID(0x52) // the producer's instance ID (same JVM)
	bb8bY     = pcapgen.SeqUUID(0x63) // some other UUID
	bb8bB     = pcapgen.SeqUUID(0x74) // a broker-assigned telemetry ID
	bb8bZero  [16]byte
	bb8bTopic = pcapgen.SeqUUID(0xe7)
)

type bb8bRow struct {
	InstanceID      string              `json:"instance_id"`
	Legacy          bool                `json:"legacy"`
	ClientIDs       []string            `json:"client_ids"`
	SoftwareName    string              `json:"software_name"`
	SoftwareVersion string              `json:"software_version"`
	ClientHosts     []string            `json:"client_hosts"`
	Brokers         []string            `json:"brokers"`
	Connections     int                 `json:"connections"`
	MemberIDs       map[string][]string `json:"member_ids"`
	TelemetryID     string              `json:"telemetry_id"`
	Findings        map[string]int      `json:"findings"`
}

func bb8bRead(t *testing.T, args ...string) bb8bReport {
	t.Helper()
	out := bbReadJSON(t, args...)
	var rep bb8bReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("report is not JSON: %v\n%s", err, out)
	}
	return rep
}

func bb8bRun(t *testing.T, c *pcapgen.Capture, extra ...string) (bb8bReport, string) {
	t.Helper()
	if err := c.Err(); err != nil {
		t.Fatalf("scenario: %v", err)
	}
	path := bbCaptureFile(t, c, "")
	return bb8bRead(t, append(extra[:len(extra):len(extra)], path)...), path
}

// bb8bWant is what a test asserts of one finding ("" / 0 = not asserted).
type bb8bWant struct {
	severity, confidence, kip string
	frame                     int
	client, broker            string
	api                       string
	expected, observed        string
}

func bb8bCheck(t *testing.T, f bbFinding, w bb8bWant) {
	t.Helper()
	chk := func(what, got, want string) {
		t.Helper()
		if want != "" && got != want {
			t.Errorf("%s %s = %q, spec requires %q", f.Rule, what, got, want)
		}
	}
	chk("severity", f.Severity, w.severity)
	chk("confidence", f.Confidence, w.confidence)
	chk("kip", f.KIP, w.kip)
	chk("conn.client", f.Conn.Client, w.client)
	chk("conn.broker", f.Conn.Broker, w.broker)
	chk("api", f.API, w.api)
	chk("expected", f.Expected, w.expected)
	chk("observed", f.Observed, w.observed)
	if w.frame != 0 && f.Frame != w.frame {
		t.Errorf("%s frame = %d, spec requires %d", f.Rule, f.Frame, w.frame)
	}
}

func bb8bRowOf(t *testing.T, rep bb8bReport, id [16]byte) bb8bRow {
	t.Helper()
	for _, r := range rep.Instances {
		if r.InstanceID == bbJ(id) {
			return r
		}
	}
	t.Fatalf("no instance row %s among %d rows", bbJ(id), len(rep.Instances))
	return bb8bRow{}
}

func bb8bSorted(s []string) string {
	c := append([]string(nil), s...)
	sort.Strings(c)
	return strings.Join(c, ",")
}

// bb8bCheckRow compares a row with the values SPEC 5 lists for it.
func bb8bCheckRow(t *testing.T, label string, got bb8bRow, want bb8bRow) {
	t.Helper()
	eq := func(what string, g, w any) {
		t.Helper()
		if fmt.Sprint(g) != fmt.Sprint(w) {
			t.Errorf("%s row: %s = %v, spec requires %v", label, what, g, w)
		}
	}
	eq("legacy", got.Legacy, want.Legacy)
	eq("client_ids", bb8bSorted(got.ClientIDs), bb8bSorted(want.ClientIDs))
	eq("software_name", got.SoftwareName, want.SoftwareName)
	eq("software_version", got.SoftwareVersion, want.SoftwareVersion)
	eq("client_hosts", bb8bSorted(got.ClientHosts), bb8bSorted(want.ClientHosts))
	eq("brokers", bb8bSorted(got.Brokers), bb8bSorted(want.Brokers))
	eq("connections", got.Connections, want.Connections)
	gm, wm := map[string]string{}, map[string]string{}
	for g, ids := range got.MemberIDs {
		gm[g] = bb8bSorted(ids)
	}
	for g, ids := range want.MemberIDs {
		wm[g] = bb8bSorted(ids)
	}
	eq("member_ids", gm, wm)
	eq("telemetry_id", got.TelemetryID, want.TelemetryID)
	gf := map[string]int{}
	for r, n := range got.Findings {
		if n != 0 {
			gf[r] = n
		}
	}
	if want.Findings == nil {
		want.Findings = map[string]int{}
	}
	eq("findings", gf, want.Findings)
}

// bb8bProc is one client process on a host: its client ID, the software it
// names in ApiVersions v3+, and (KIP-1313) the instance ID it created when
// it was constructed.
type bb8bProc struct {
	c        *pcapgen.Capture
	host     netip.Addr
	port     uint16
	clientID string
	inst     *[16]byte
	sw, swv  string
	// repeat makes a KIP-1313 client repeat its client ID on every request.
	repeat bool
}

// dial opens a connection to broker and sends the ApiVersions (version
// apiV) every client starts a connection with. A KIP-1313 client (seed 001)
// sends "the client ID only on the initial request on each connection, and
// then ... a null client ID for all subsequent requests", and its instance
// ID in every v2 header; a legacy client repeats its client ID.
func (p *bb8bProc) dial(broker netip.AddrPort, apiV int16, o ...pcapgen.ConnOptions) (*pcapgen.Conn, *pcapgen.Session, int) {
	var co pcapgen.ConnOptions
	if len(o) > 0 {
		co = o[0]
	}
	co.Client, co.Broker = netip.AddrPortFrom(p.host, p.port), broker
	p.port++
	cn := p.c.Conn(co)
	var inst *[16]byte
	if p.inst != nil {
		id := *p.inst
		inst = &id
	}
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr(p.clientID), InstanceID: inst, CorrelationID: 1})
	f, _ := s.RoundTrip(pcapgen.APIVersions(apiV, p.sw, p.swv), pcapgen.APIVersionsResponse(apiV))
	if p.inst != nil && !p.repeat {
		s.Header.ClientID = nil
	}
	return cn, s, f
}

func bb8bFindCoord(s *pcapgen.Session, group string, coord netip.AddrPort) {
	r := kmsg.NewPtrFindCoordinatorRequest()
	r.Version = 6
	r.CoordinatorKeys = []string{group}
	resp := kmsg.NewPtrFindCoordinatorResponse()
	co := kmsg.NewFindCoordinatorResponseCoordinator()
	co.Key, co.NodeID, co.Host, co.Port = group, 3, coord.Addr().String(), int32(coord.Port())
	resp.Coordinators = append(resp.Coordinators, co)
	s.RoundTrip(r, resp)
}

func bb8bFetch(s *pcapgen.Session) int {
	f, _ := s.RoundTrip(pcapgen.Fetch(17, "orders", bb8bTopic), pcapgen.FetchResponse(17, "orders", bb8bTopic, []byte("batch")))
	return f
}

// bb8bProduceV8 is a Produce v8: not flexible, so header v1 (SPEC 1).
func bb8bProduceV8(s *pcapgen.Session) int {
	f, _ := s.RoundTrip(pcapgen.Produce(8, "orders", bb8bZero, []byte("records")), pcapgen.ProduceResponse(8, "orders", bb8bZero))
	return f
}

func bb8bProduce(s *pcapgen.Session) int {
	f, _ := s.RoundTrip(pcapgen.Produce(11, "orders", bb8bZero, []byte("records")), pcapgen.ProduceResponse(11, "orders", bb8bZero))
	return f
}

// bbCG is one ConsumerGroupHeartbeat v1 round trip; the broker answers code
// and, on success, the member ID and respEpoch (a real coordinator echoes
// the member ID in every successful response).
func bbCG(s *pcapgen.Session, group, member string, epoch int32, code int16, respEpoch int32) int {
	var m *string
	if code == errNone {
		m = pcapgen.Ptr(member)
	}
	f, _ := s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(1, group, member, epoch), pcapgen.ConsumerGroupHeartbeatResponse(1, code, m, respEpoch))
	return f
}

// bbSG is bbCG for ShareGroupHeartbeat v1.
func bbSG(s *pcapgen.Session, group, member string, epoch int32, code int16, respEpoch int32) int {
	var m *string
	if code == errNone {
		m = pcapgen.Ptr(member)
	}
	f, _ := s.RoundTrip(pcapgen.ShareGroupHeartbeat(1, group, member, epoch), pcapgen.ShareGroupHeartbeatResponse(1, code, m, respEpoch))
	return f
}

// bbST is bbCG for StreamsGroupHeartbeat v0.
func bbST(s *pcapgen.Session, group, member string, epoch int32, code int16, respEpoch int32) int {
	m := ""
	if code == errNone {
		m = member
	}
	f, _ := s.RoundTrip(pcapgen.StreamsGroupHeartbeat(0, group, member, epoch), pcapgen.StreamsGroupHeartbeatResponse(0, code, m, respEpoch))
	return f
}

// bbGTSSub is a GetTelemetrySubscriptions round trip: body ID body, answer
// code with ID assigned and subscription sub.
func bbGTSSub(s *pcapgen.Session, body [16]byte, code int16, assigned [16]byte, sub int32) int {
	f, _ := s.RoundTrip(pcapgen.GetTelemetrySubscriptions(body), pcapgen.GetTelemetrySubscriptionsResponse(code, assigned, sub))
	return f
}

// bbPushSub is a PushTelemetry round trip with ID id and subscription sub.
func bbPushSub(s *pcapgen.Session, id [16]byte, sub int32, terminating bool, code int16) int {
	r := pcapgen.PushTelemetry(id, sub)
	r.Terminating = terminating
	f, _ := s.RoundTrip(r, pcapgen.PushTelemetryResponse(code))
	return f
}

// ------------------------------------------- the reference KIP-1313 session

const (
	bb8bGroup   = "orders"
	bb8bShare   = "orders-share"
	bb8bStreams = "orders-streams"
	bb8bHost    = "10.30.0.5"
)

// bb8bSession is the reference capture: one JVM on 10.30.0.5 with two
// KIP-1313 Java clients.
//
// The consumer (instance X, client ID "orders-svc") connects to the
// bootstrap broker B1 (ApiVersions v4, Metadata), then to B2 (ApiVersions
// v5, FindCoordinator, telemetry with header X and body X, "This is what we
// expect from the Apache Kafka Java client after this KIP"), then opens a
// coordinator connection and a fetch connection to B3. Its member ID is
// Java(X) (seed 000: "when a client-generated member ID is required for the
// group protocol, it uses the client instance ID"): a join, a retried join
// after COORDINATOR_LOAD_IN_PROGRESS with the same ID, a heartbeat, fencing
// and a rejoin with the same ID (SPEC 3.4: "a member ID lives as long as
// the process, across leave and rejoin and after fencing"), a share group
// and a streams group joined with the same ID, a Produce v8 (header v1,
// null client ID) and leaves in all three groups, then telemetry's
// terminating push.
//
// The producer (instance P, client ID "orders-svc-producer") has one
// connection to B1, named by ApiVersions v5 only, producing with telemetry
// aligned to P.
//
// vary names variants that each break one thing (see the tests).
type bb8bFrames struct {
	n2Start, coordStart, fetchStart, prodStart        int // first frame (SYN)
	bootAV, n2AV, n3AV, coordAV, prodAV               int // ApiVersions requests
	gts, gts2, rejoin, stLeave, fetch, produceV8      int
	n3End, hostBAV, hostBJoin, push, prodPush, fetch2 int
}

func bb8bSession(vary map[string]bool) (*pcapgen.Capture, bb8bFrames) {
	var fr bb8bFrames
	c := pcapgen.New(pcapgen.Options{})
	x, p := bb8bX, bb8bP
	m := bbJ(x)
	cons := &bb8bProc{c: c, host: netip.MustParseAddr(bb8bHost), port: 52000, clientID: "orders-svc", inst: &x, sw: "apache-kafka-java", swv: "4.2.0"}
	prod := &bb8bProc{c: c, host: netip.MustParseAddr(bb8bHost), port: 53000, clientID: "orders-svc-producer", inst: &p, sw: "apache-kafka-java", swv: "4.2.0"}

	boot, sb, f := cons.dial(bb8bB1, 4)
	fr.bootAV = f
	bbMeta(sb)
	fr.n2Start = c.Frames() + 1
	n2, s2, f := cons.dial(bb8bB2, 5)
	fr.n2AV = f
	bb8bFindCoord(s2, bb8bGroup, bb8bB3)
	if vary["telemetry-body-zero"] {
		fr.gts = bbGTSSub(s2, bb8bZero, errInvalidRequest, bb8bZero, 0)
		fr.gts2 = bbGTSSub(s2, x, errNone, bb8bZero, 5)
	} else {
		fr.gts = bbGTSSub(s2, x, errNone, bb8bZero, 5)
	}
	boot.Close()

	fr.prodStart = c.Frames() + 1
	pc, ps, f := prod.dial(bb8bB1, 5)
	fr.prodAV = f
	bbMeta(ps)
	bbGTSSub(ps, p, errNone, bb8bZero, 6)
	bb8bProduce(ps)

	fr.coordStart = c.Frames() + 1
	co, sc, f := cons.dial(bb8bB3, 4)
	fr.coordAV = f
	bbCG(sc, bb8bGroup, m, 0, errCoordLoading, 0)
	bbCG(sc, bb8bGroup, m, 0, errNone, 1)
	fr.fetchStart = c.Frames() + 1
	if vary["repeat-client-id"] {
		cons.repeat = true
	}
	n3, s3, f := cons.dial(bb8bB3, 4)
	cons.repeat = false
	fr.n3AV = f
	fr.fetch = bb8bFetch(s3)
	bbCG(sc, bb8bGroup, m, 1, errNone, 2)
	fr.push = bbPushSub(s2, x, 5, false, errNone)
	if vary["push-mismatch"] {
		// The producer pushes its metrics with the consumer's ID.
		fr.prodPush = bbPushSub(ps, x, 6, false, errInvalidRequest)
	}
	bb8bProduce(ps)
	bbCG(sc, bb8bGroup, m, 2, errFencedMemberEpoch, 0)
	rejoin := m
	if vary["rejoin-new-id"] {
		rejoin = bbJ(bb8bY)
	}
	fr.rejoin = bbCG(sc, bb8bGroup, rejoin, 0, errNone, 4)
	bbSG(sc, bb8bShare, m, 0, errNone, 1)
	bbST(sc, bb8bStreams, m, 0, errNone, 1)
	if vary["fetch-dropped"] {
		s3.Header.InstanceID = nil
		fr.fetch2 = bb8bFetch(s3)
		s3.Header.InstanceID = &x
	} else {
		fr.fetch2 = bb8bFetch(s3)
	}
	if vary["shared-host"] {
		// The same instance ID in a second process on another host (a
		// container image built with a baked-in UUID).
		twin := &bb8bProc{c: c, host: netip.MustParseAddr("10.30.0.6"), port: 52000, clientID: "orders-svc", inst: &x, sw: "apache-kafka-java", swv: "4.2.0"}
		tc, ts, f := twin.dial(bb8bB3, 4)
		fr.hostBAV = f
		fr.hostBJoin = bbCG(ts, bb8bGroup, m, 0, errNone, 5)
		bbCG(ts, bb8bGroup, m, 5, errNone, 5)
		bbCG(ts, bb8bGroup, m, -1, errNone, -1)
		tc.Close()
	}
	bbCG(sc, bb8bGroup, rejoin, 4, errNone, 5)
	bbSG(sc, bb8bShare, m, 1, errNone, 1)
	bbST(sc, bb8bStreams, m, 1, errNone, 1)
	fr.produceV8 = bb8bProduceV8(s3)
	bbCG(sc, bb8bGroup, rejoin, -1, errNone, -1)
	bbSG(sc, bb8bShare, m, -1, errNone, -1)
	if vary["streams-leave-empty"] {
		fr.stLeave = bbST(sc, bb8bStreams, "", -1, errUnknownMemberID, 0)
	} else {
		fr.stLeave = bbST(sc, bb8bStreams, m, -1, errNone, -1)
	}
	bbPushSub(s2, x, 5, true, errNone)
	bbPushSub(ps, p, 6, true, errNone)
	n2.Close()
	co.Close()
	n3.Close()
	fr.n3End = c.Frames() - 1 // the broker's FIN: the second FIN of the close
	pc.Close()
	return c, fr
}

// bb8bConsumerRow and bb8bProducerRow are the rows SPEC 5 requires for the
// reference session: "instance ID, client IDs, client software
// name/version, client hosts, brokers, connections, member IDs by group,
// telemetry ID, findings by rule".
func bb8bConsumerRow() bb8bRow {
	m := bbJ(bb8bX)
	return bb8bRow{
		ClientIDs: []string{"orders-svc"}, SoftwareName: "apache-kafka-java", SoftwareVersion: "4.2.0",
		ClientHosts: []string{bb8bHost}, Brokers: []string{bb8bB1.String(), bb8bB2.String(), bb8bB3.String()},
		Connections: 4,
		MemberIDs:   map[string][]string{bb8bGroup: {m}, bb8bShare: {m}, bb8bStreams: {m}},
		TelemetryID: m,
	}
}

func bb8bProducerRow() bb8bRow {
	return bb8bRow{
		ClientIDs: []string{"orders-svc-producer"}, SoftwareName: "apache-kafka-java", SoftwareVersion: "4.2.0",
		ClientHosts: []string{bb8bHost}, Brokers: []string{bb8bB1.String()}, Connections: 1,
		MemberIDs: map[string][]string{}, TelemetryID: bbJ(bb8bP),
	}
}

// ---------------------------------------------------------------- (4) dump

// ------------------------------------------------------------------ helpers

var (
	bb8cX    = pcapgen.SeqUUID(0xc1)
	bb8cY    = pcapgen.SeqUUID(0xd1)
	bb8cB    = pcapgen.SeqUUID(0xe1)
	bb8cR    = pcapgen.SeqUUID(0xf1)
	bb8cZero [16]byte
)

// bb8cW is one expected finding: conf "" and frame 0 are not checked.
type bb8cW struct {
	rule, sev, conf string
	frame           int
}

func (w bb8cW) String() string { return fmt.Sprintf("%s/%s/%s@%d", w.rule, w.sev, w.conf, w.frame) }

// bb8cExact asserts that the report's findings are exactly want (as a
// multiset; conf "" and frame 0 match anything).
func bb8cExact(t *testing.T, rep bbFindingsReport, want ...bb8cW) {
	t.Helper()
	used := make([]bool, len(rep.Findings))
	var missing []string
	for _, w := range want {
		found := false
		for i, f := range rep.Findings {
			if used[i] || f.Rule != w.rule || f.Severity != w.sev {
				continue
			}
			if (w.conf != "" && f.Confidence != w.conf) || (w.frame != 0 && f.Frame != w.frame) {
				continue
			}
			used[i], found = true, true
			break
		}
		if !found {
			missing = append(missing, w.String())
		}
	}
	var extra []string
	for i, f := range rep.Findings {
		if !used[i] {
			extra = append(extra, fmt.Sprintf("%s/%s/%s@%d", f.Rule, f.Severity, f.Confidence, f.Frame))
		}
	}
	if len(missing) > 0 || len(extra) > 0 {
		t.Errorf("findings differ from the spec:\n  missing (spec requires): %v\n  unexpected (kwatch gave): %v\nreport:\n%s", missing, extra, rep.summary())
	}
}

// bb8cCov asserts exact coverage-event counts for the named events.
func bb8cCov(t *testing.T, rep bbFindingsReport, want map[string]int) {
	t.Helper()
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range want {
			if !yield(k) {
				return
			}
		}
	}) {
		if got := rep.Totals.Coverage[k]; got != want[k] {
			t.Errorf("coverage %s = %d, spec requires %d\n%s", k, got, want[k], rep.summary())
		}
	}
}

// bb8cTotals asserts the request and response counts (-1: not checked).
func bb8cTotals(t *testing.T, rep bbFindingsReport, requests, responses int) {
	t.Helper()
	if requests >= 0 && rep.Totals.Requests != requests {
		t.Errorf("totals.requests = %d, spec requires %d\n%s", rep.Totals.Requests, requests, rep.summary())
	}
	if responses >= 0 && rep.Totals.Responses != responses {
		t.Errorf("totals.responses = %d, spec requires %d\n%s", rep.Totals.Responses, responses, rep.summary())
	}
}

// bbDumpObjs runs kwatch dump --format ndjson, extra flags first, over path
// and returns its objects (numbers as float64).
func bbDumpObjs(t *testing.T, path string, extra ...string) []map[string]any {
	t.Helper()
	args := append(append([]string{"dump", "--format", "ndjson"}, extra...), path)
	code, stdout, stderr := runKwatch(args...)
	if code != 0 {
		t.Fatalf("kwatch %v: exit %d: %s", args, code, stderr)
	}
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimRight(stdout, "\n"), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("dump line is not JSON: %q", l)
		}
		out = append(out, m)
	}
	return out
}

// bb8cPDUs returns the dump objects of kind with correlation ID corr.
func bb8cPDUs(d []map[string]any, kind string, corr int32) []map[string]any {
	var out []map[string]any
	for _, o := range d {
		if o["kind"] == kind && o["correlation_id"] == float64(corr) {
			out = append(out, o)
		}
	}
	return out
}

func bb8cDumpLines(d []map[string]any) string {
	var b strings.Builder
	for _, o := range d {
		switch o["kind"] {
		case "event":
			fmt.Fprintf(&b, "  event %v frame=%v\n", o["event"], o["frame"])
		default:
			fmt.Fprintf(&b, "  %v %v v%v hv%v corr=%v frame=%v req_frame=%v cid=%v inst=%v err=%v\n", o["kind"], o["api"], o["api_version"],
				o["header_version"], o["correlation_id"], o["frame"], o["request_frame"], o["client_id"], o["instance_id"], o["error_code"])
		}
	}
	return b.String()
}

// bb8cMatched asserts that the dump has exactly one request with corr,
// completed at reqFrame, and exactly one response with corr naming that
// request (request_frame), with error code code when code >= 0.
func bb8cMatched(t *testing.T, d []map[string]any, corr int32, reqFrame int, code int) {
	t.Helper()
	reqs, resps := bb8cPDUs(d, "request", corr), bb8cPDUs(d, "response", corr)
	if len(reqs) != 1 || reqs[0]["frame"] != float64(reqFrame) {
		t.Errorf("corr %d: want one request at frame %d, dump has %d:\n%s", corr, reqFrame, len(reqs), bb8cDumpLines(d))
		return
	}
	if len(resps) != 1 || resps[0]["request_frame"] != float64(reqFrame) {
		t.Errorf("corr %d: want one response matched to the request at frame %d, dump has %d:\n%s", corr, reqFrame, len(resps), bb8cDumpLines(d))
		return
	}
	if code >= 0 && resps[0]["error_code"] != float64(code) {
		t.Errorf("corr %d: response error_code %v, want %d", corr, resps[0]["error_code"], code)
	}
}

// bb8cModern opens a connection of a KIP-1313 client: ApiVersions v3 with
// client ID cid and instance ID inst, then null client IDs.
func bb8cModern(c *pcapgen.Capture, o pcapgen.ConnOptions, cid string, inst [16]byte) (*pcapgen.Conn, *pcapgen.Session) {
	cn := c.Conn(o)
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr(cid), InstanceID: bbID(inst), CorrelationID: 1})
	s.RoundTrip(pcapgen.APIVersions(3, "apache-kafka-java", "4.2.0"), pcapgen.APIVersionsResponse(3))
	s.Header.ClientID = nil
	return cn, s
}

// bb8cMetaWith is bbMeta with the header instance ID id for this request
// only.
func bb8cMetaWith(s *pcapgen.Session, id *[16]byte) int {
	old := s.Header.InstanceID
	s.Header.InstanceID = id
	f := bbMeta(s)
	s.Header.InstanceID = old
	return f
}

// bb8cFiller is n bytes no Kafka decoder can take for a header: 'x' read as
// a frame size is 2 GB.
func bb8cFiller(n int) []byte { return bytes.Repeat([]byte{'x'}, n) }

func bb8cSaslAuth(data string) *kmsg.SASLAuthenticateRequest {
	r := kmsg.NewPtrSASLAuthenticateRequest()
	r.Version = 2
	r.SASLAuthBytes = []byte(data)
	return r
}

func bb8cSaslAuthResp(data string) *kmsg.SASLAuthenticateResponse {
	r := kmsg.NewPtrSASLAuthenticateResponse()
	r.Version = 2
	r.SASLAuthBytes = []byte(data)
	r.SessionLifetimeMillis = 3600000
	return r
}

// ------------------------------------------------------------------ helpers

var (
	bb8dX    = pcapgen.SeqUUID(0x31)
	bb8dY    = pcapgen.SeqUUID(0x41)
	bb8dB    = pcapgen.SeqUUID(0x51) // broker-assigned telemetry ID
	bb8dC    = pcapgen.SeqUUID(0x61)
	bb8dZ    = pcapgen.SeqUUID(0x71)
	bb8dZero [16]byte

	bb8dTimeRE  = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$`)
	bb8dPanicRE = regexp.MustCompile(`(?m)^(panic: |fatal error: |goroutine \d+ \[)`)
)

func bb8dAP(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }

// bb8dExec runs kwatch with args in a child process (stdin from stdin when
// not nil) and returns its exit status, stdout and stderr. A panic or a
// fatal runtime error fails the test.
func bb8dExec(t *testing.T, stdin []byte, args ...string) (int, string, string) {
	t.Helper()
	enc, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^TestCaptureFileHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "BB8D_HELPER_ARGS="+string(enc))
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("run %v: %v", args, err)
		}
		code = ee.ExitCode()
	}
	if bb8dPanicRE.MatchString(errb.String()) {
		lines := strings.SplitN(errb.String(), "\n", 25)
		t.Errorf("kwatch %v crashed (exit %d), standard: \"never a panic\":\n%s", bb8dArgs(args), code, strings.Join(lines[:min(len(lines), 24)], "\n"))
	}
	return code, out.String(), errb.String()
}

// bb8dArgs shortens temporary paths in args for messages.
func bb8dArgs(args []string) string {
	var out []string
	for _, a := range args {
		if filepath.IsAbs(a) {
			a = filepath.Base(a)
		}
		out = append(out, a)
	}
	return strings.Join(out, " ")
}

// bb8dOneLine asserts a non-empty, one-line stderr.
func bb8dOneLine(t *testing.T, what, stderr string) {
	t.Helper()
	s := strings.TrimRight(stderr, "\n")
	if s == "" || strings.Contains(s, "\n") {
		t.Errorf("%s: stderr %q, want a clear one-line reason", what, stderr)
	}
}

// bb8dParse decodes a JSON report; an unreadable one fails the test.
func bb8dParse(t *testing.T, what, stdout string) (bbFindingsReport, bool) {
	t.Helper()
	var rep bbFindingsReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Errorf("%s: stdout is no JSON report (%v):\n%.600s", what, err, stdout)
		return rep, false
	}
	return rep, true
}

// bb8dFrames lists "rule@frame" of every finding, in report order.
func bb8dFrames(rep bbFindingsReport) []string {
	var out []string
	for _, f := range rep.Findings {
		out = append(out, fmt.Sprintf("%s@%d", f.Rule, f.Frame))
	}
	return out
}

func bb8dHas(rep bbFindingsReport, rule string, frame int) bool {
	for _, f := range rep.Findings {
		if f.Rule == rule && (frame == 0 || f.Frame == frame) {
			return true
		}
	}
	return false
}

// bb8dBase is a capture of 22 connections: an instance-id-changed (error)
// early, at frame early, 20 clean legacy connections, and a
// client-id-changed (warn) near the end, at frame late.
func bb8dBase(o pcapgen.Options) (c *pcapgen.Capture, early, late int) {
	c = pcapgen.New(o)
	x, y := bb8dX, bb8dY
	cn := c.Conn(pcapgen.ConnOptions{Client: bb8dAP("10.8.1.1:41000"), Broker: bb8dAP("10.0.0.9:9092")})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("orders-app"), InstanceID: &x, CorrelationID: 1})
	s.RoundTrip(pcapgen.APIVersions(4, "apache-kafka-java", "4.2.0"), pcapgen.APIVersionsResponse(4))
	s.Header.ClientID = nil
	bbMeta9(s)
	s.Header.InstanceID = &y
	early = bbMeta9(s)
	cn.Close()
	for i := 0; i < 20; i++ {
		cn := c.Conn(pcapgen.ConnOptions{Client: bb8dAP(fmt.Sprintf("10.8.2.%d:42000", i+1)), Broker: bb8dAP("10.0.0.9:9092")})
		s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr(fmt.Sprintf("pad-%d", i)), CorrelationID: 1})
		s.RoundTrip(pcapgen.APIVersions(3, "librdkafka", "2.6.0"), pcapgen.APIVersionsResponse(3))
		for j := 0; j < 3; j++ {
			bbMeta9(s)
		}
		cn.Close()
	}
	cn = c.Conn(pcapgen.ConnOptions{Client: bb8dAP("10.8.3.1:43000"), Broker: bb8dAP("10.0.0.9:9092")})
	s = cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("a"), CorrelationID: 1})
	bbMeta9(s)
	s.Header.ClientID = pcapgen.Ptr("b")
	late = bbMeta9(s)
	cn.Close()
	return c, early, late
}

// bb8dBytes is c as a pcap file and the offset of every record in it.
func bb8dBytes(t *testing.T, c *pcapgen.Capture) ([]byte, []int) {
	t.Helper()
	whole, err := c.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return whole, bb8dPcapOffsets(c)
}

// bb8dPcapOffsets returns the byte offset of every record of c written as
// little-endian microsecond pcap (offs[i] = frame i+1's record header;
// offs[n] = the file's length).
func bb8dPcapOffsets(c *pcapgen.Capture) []int {
	offs := []int{24}
	for _, p := range c.Packets() {
		offs = append(offs, offs[len(offs)-1]+16+len(p.Data))
	}
	return offs
}

// bb8dRec is one packet record of a hand-written capture.
type bb8dRec struct {
	t     time.Time
	iface int
	data  []byte
}

func bb8dRecs(c *pcapgen.Capture) []bb8dRec {
	var out []bb8dRec
	for _, p := range c.Packets() {
		out = append(out, bb8dRec{t: p.Time, data: p.Data})
	}
	return out
}

// bb8dPcap writes a little-endian microsecond pcap of link type link.
func bb8dPcap(link, snaplen uint32, recs []bb8dRec) []byte {
	le := binary.LittleEndian
	b := le.AppendUint32(nil, 0xa1b2c3d4)
	b = le.AppendUint16(b, 2)
	b = le.AppendUint16(b, 4)
	b = le.AppendUint32(b, 0)
	b = le.AppendUint32(b, 0)
	b = le.AppendUint32(b, snaplen)
	b = le.AppendUint32(b, link)
	for _, r := range recs {
		b = bb8dPcapRec(b, r.t, uint32(len(r.data)), uint32(len(r.data)))
		b = append(b, r.data...)
	}
	return b
}

func bb8dPcapRec(b []byte, t time.Time, incl, orig uint32) []byte {
	le := binary.LittleEndian
	b = le.AppendUint32(b, uint32(t.Unix()))
	b = le.AppendUint32(b, uint32(t.Nanosecond()/1000))
	b = le.AppendUint32(b, incl)
	return le.AppendUint32(b, orig)
}

// bb8dReadFile runs `kwatch read --format json` (plus extra) on the files
// in a child process.
func bb8dReadFile(t *testing.T, extra []string, files ...string) (int, string, string) {
	t.Helper()
	args := append([]string{"read", "--format", "json"}, extra...)
	return bb8dExec(t, nil, append(args, files...)...)
}

func bb8dWrite(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// bb8dCheckKept asserts what the standards require of a file that breaks
// after some packets: README "reported on stderr and what was read before
// it stands", so the early error finding is in the report and the exit
// status is 1 (SPEC 5: "1 when one does"), with one line on stderr.
func bb8dCheckKept(t *testing.T, what string, code int, stdout, stderr string, early int) (bbFindingsReport, bool) {
	t.Helper()
	if code != 1 {
		t.Errorf("%s: exit %d, want 1 (the error finding before the damage stands); stderr %q", what, code, stderr)
	}
	bb8dOneLine(t, what, stderr)
	rep, ok := bb8dParse(t, what, stdout)
	if ok && !bb8dHas(rep, "instance-id-changed", early) {
		t.Errorf("%s: instance-id-changed at frame %d (read before the damage) is lost; findings %v", what, early, bb8dFrames(rep))
	}
	return rep, ok
}

// bb8dDiff shows the first differing line of a and b.
func bb8dDiff(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < max(len(la), len(lb)); i++ {
		var x, y string
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if x != y {
			return "line " + strconv.Itoa(i+1) + ":\n  want " + fmt.Sprintf("%.300q", x) + "\n  got  " + fmt.Sprintf("%.300q", y)
		}
	}
	return "(same lines)"
}

var bb8fBrokers = []netip.AddrPort{
	netip.MustParseAddrPort("10.0.0.1:9092"),
	netip.MustParseAddrPort("10.0.0.2:9092"),
	netip.MustParseAddrPort("10.0.0.3:9092"),
}

func bb8fRecords(rng *rand.Rand, n int) []byte {
	// a v2 record batch header, then JSON-like record values with varints
	b := make([]byte, 0, n+64)
	b = append(b, 0, 0, 0, 0, 0, 0, 0x12, 0x34) // base offset
	b = append(b, 0, 0, 0, 0)                   // length (not checked)
	b = append(b, 0, 0, 0, 3, 2)                // leader epoch, magic
	b = append(b, 0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 0, 0, 9)
	for len(b) < n {
		v := fmt.Sprintf(`{"order":%d,"sku":"SKU-%05d","qty":%d,"ts":"2026-11-29T16:%02d:%02d"}`,
			rng.IntN(1e6), rng.IntN(99999), rng.IntN(9)+1, rng.IntN(60), rng.IntN(60))
		b = append(b, byte(len(v)*2), 0, byte(rng.IntN(128)), 0, byte(len(v)*2))
		b = append(b, v...)
		b = append(b, 0)
	}
	return b[:n]
}

var bb8fTopicID = pcapgen.SeqUUID(0x11)

type bb8fPlan struct {
	plant bool
}

var (
	bb8gH  = pcapgen.SeqUUID(0x31)
	bb8gH2 = pcapgen.SeqUUID(0x41)
	bb8gB  = pcapgen.SeqUUID(0x51)
	bb8gR  = pcapgen.SeqUUID(0x61)
	// bb8gPlus is a v4 UUID whose standard base64 holds '+' and '/'.
	bb8gPlus = [16]byte{0xfb, 0xef, 0xbe, 0xfb, 0xff, 0xff, 0x4f, 0xbf, 0xbb, 0xef, 0xff, 0xfb, 0xef, 0xbe, 0xfb, 0xef}
)

func bb8gNew() *pcapgen.Capture { return pcapgen.New(pcapgen.Options{Seed: 0x8a}) }

var (
	bb8iX    = pcapgen.SeqUUID(0x31)
	bb8iY    = pcapgen.SeqUUID(0x32)
	bb8iR    = pcapgen.SeqUUID(0x33)
	bb8iB    = pcapgen.SeqUUID(0x34)
	bb8iZero [16]byte
)

// bb8iExpectNoMisaligned is bbExpect ignoring member-id-misaligned (on a
// request whose header ID changed, "the same connection's header instance
// ID" may be read as the first or the request's: SPEC is ambiguous).
func bb8iExpectNoMisaligned(t *testing.T, rep bbFindingsReport, want map[string]int) {
	t.Helper()
	var r bbFindingsReport
	for _, f := range rep.Findings {
		if f.Rule != "member-id-misaligned" {
			r.Findings = append(r.Findings, f)
		}
	}
	bbExpect(t, r, want)
}

func bb8iUnmatched(t *testing.T, rep bbFindingsReport, want int) {
	t.Helper()
	if n := rep.Totals.Coverage["unmatched-response"]; n != want {
		t.Errorf("totals.coverage[unmatched-response] = %d, want %d\n%s", n, want, rep.summary())
	}
}

// bb8iModern is a connection whose first request (Metadata, answered) carries
// client ID and header instance ID X; later requests carry a null client ID.
func bb8iModern(c *pcapgen.Capture) (*pcapgen.Conn, *pcapgen.Session) {
	cn := c.Conn(pcapgen.ConnOptions{})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("orders-app"), InstanceID: bbID(bb8iX), CorrelationID: 1})
	s.RoundTrip(pcapgen.Metadata(12, "orders"), pcapgen.MetadataResponse(12, "10.0.0.1", 9092))
	s.Header.ClientID = nil
	return cn, s
}

func bb8iLegacy(c *pcapgen.Capture) (*pcapgen.Conn, *pcapgen.Session) {
	cn := c.Conn(pcapgen.ConnOptions{})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("legacy-app"), CorrelationID: 1})
	s.RoundTrip(pcapgen.Metadata(12, "orders"), pcapgen.MetadataResponse(12, "10.0.0.1", 9092))
	return cn, s
}

func bb8iAPIVResp(code int16) *kmsg.ApiVersionsResponse {
	r := pcapgen.APIVersionsResponse(3)
	r.ErrorCode = code
	return r
}

func bb8iAPIV() *kmsg.ApiVersionsRequest {
	return pcapgen.APIVersions(3, "apache-kafka-java", "4.2.0")
}

func bb8iGTSBody(code int16, id [16]byte) []byte {
	r := pcapgen.GetTelemetrySubscriptionsResponse(code, id, 7)
	r.SetVersion(0)
	return r.AppendTo(nil)
}

// bbCaptureFile writes c to a temporary file named name, or after the test
// when name is "" (the extension picks the format).
func bbCaptureFile(t *testing.T, c *pcapgen.Capture, name string) string {
	t.Helper()
	if name == "" {
		name = strings.ReplaceAll(t.Name(), "/", "_") + ".pcap"
	}
	path := filepath.Join(t.TempDir(), name)
	if err := c.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// bbReadJSON runs `kwatch read --format json --fail-on never` with args
// (flags and files), fails the test unless it exits 0, checks what every
// report holds (SPEC.md section 5: its totals count its findings, by rule
// and by severity) and returns the report's text.
func bbReadJSON(t *testing.T, args ...string) string {
	t.Helper()
	all := append([]string{"read", "--format", "json", "--fail-on", "never"}, args...)
	code, stdout, stderr := runKwatch(all...)
	if code != 0 {
		t.Fatalf("kwatch %v: exit %d: %s", all, code, stderr)
	}
	var rep struct {
		Totals struct {
			Findings   int            `json:"findings"`
			BySeverity map[string]int `json:"findings_by_severity"`
			ByRule     map[string]int `json:"findings_by_rule"`
		} `json:"totals"`
		Findings []struct {
			Rule     string `json:"rule"`
			Severity string `json:"severity"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("report is not JSON: %v\n%s", err, stdout)
	}
	byRule, bySev := map[string]int{}, map[string]int{}
	for _, f := range rep.Findings {
		byRule[f.Rule]++
		bySev[f.Severity]++
	}
	if rep.Totals.Findings != len(rep.Findings) {
		t.Errorf("totals.findings %d, findings array has %d", rep.Totals.Findings, len(rep.Findings))
	}
	for r, n := range byRule {
		if rep.Totals.ByRule[r] != n {
			t.Errorf("totals.findings_by_rule[%s] = %d, findings array has %d", r, rep.Totals.ByRule[r], n)
		}
	}
	for s, n := range bySev {
		if rep.Totals.BySeverity[s] != n {
			t.Errorf("totals.findings_by_severity[%s] = %d, findings array has %d", s, rep.Totals.BySeverity[s], n)
		}
	}
	return stdout
}

// bbReadAs runs bbReadJSON over path, extra flags first, and decodes the
// report into R, the shape the calling test file reads it in. It also
// returns the report's text.
func bbReadAs[R any](t *testing.T, path string, extra ...string) (R, string) {
	t.Helper()
	out := bbReadJSON(t, append(extra[:len(extra):len(extra)], path)...)
	var rep R
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("report is not JSON: %v\n%s", err, out)
	}
	return rep, out
}

// bbCompareCounts fails t when the rule counts got and want differ (a
// rule absent from one counts 0 there), naming every rule that differs,
// in order, then the findings as summary lists them. label, if not
// empty, starts the message.
func bbCompareCounts(t *testing.T, label string, got, want map[string]int, summary func() string) {
	t.Helper()
	keys := map[string]bool{}
	for k := range got {
		keys[k] = true
	}
	for k := range want {
		keys[k] = true
	}
	var bad []string
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if got[k] != want[k] {
			bad = append(bad, fmt.Sprintf("%s: got %d, spec requires %d", k, got[k], want[k]))
		}
	}
	if len(bad) > 0 {
		if label != "" {
			label += ": "
		}
		t.Errorf("%srule counts differ:\n  %s\nfindings:\n%s", label, strings.Join(bad, "\n  "), summary())
	}
}

// bbTotals is the totals object of the JSON report (SPEC.md section 5):
// every field a scenario test reads.
type bbTotals struct {
	Packets             int            `json:"packets"`
	Bytes               int            `json:"bytes"`
	Connections         int            `json:"connections"`
	KafkaConnections    int            `json:"kafka_connections"`
	Requests            int            `json:"requests"`
	Responses           int            `json:"responses"`
	ByHeaderVersion     map[string]int `json:"requests_by_header_version"`
	Coverage            map[string]int `json:"coverage"`
	Findings            int            `json:"findings"`
	BySeverity          map[string]int `json:"findings_by_severity"`
	ByRule              map[string]int `json:"findings_by_rule"`
	ClientIDRepeats     int            `json:"client_id_repeats"`
	ClientIDRepeatBytes int            `json:"client_id_repeat_bytes"`
	Unobservable        int            `json:"unobservable_connections"`
	StateLimited        int            `json:"state_limited"`
}

// bbReportOf is the JSON report of kwatch read (SPEC.md section 5) with its
// findings read as F and its client instance rows as I: generic maps where
// a test looks at keys, typed structs where it compares fields.
type bbReportOf[F, I any] struct {
	Profile   string   `json:"profile"`
	Totals    bbTotals `json:"totals"`
	Instances []I      `json:"instances"`
	Findings  []F      `json:"findings"`
}

// bbReport reads findings and rows as maps.
type bbReport = bbReportOf[map[string]any, map[string]any]

// bbFindingsReport reads findings as bbFinding.
type bbFindingsReport = bbReportOf[bbFinding, map[string]any]

// bb8bReport and bb8hReport read the instance rows as typed rows too.
type (
	bb8bReport = bbReportOf[bbFinding, bb8bRow]
	bb8hReport = bbReportOf[bbFinding, bb8hRow]
)

// summary lists the findings and the totals for a failure message.
func (r bbReportOf[F, I]) summary() string {
	var b strings.Builder
	for _, f := range r.Findings {
		switch f := any(f).(type) {
		case bbFinding:
			fmt.Fprintf(&b, "  %s %s conf=%s frame=%d time=%s api=%s corr=%d conn=%s->%s kip=%s inst=%q exp=%q obs=%q msg=%q\n",
				f.Rule, f.Severity, f.Confidence, f.Frame, f.Time, f.API, f.CorrelationID, f.Conn.Client, f.Conn.Broker,
				f.KIP, f.InstanceID, f.Expected, f.Observed, f.Message)
		case map[string]any:
			fmt.Fprintf(&b, "  %v %v conf=%v frame=%v time=%v api=%v corr=%v conn=%v kip=%v inst=%v cid=%v exp=%v obs=%v\n",
				f["rule"], f["severity"], f["confidence"], f["frame"], f["time"], f["api"], f["correlation_id"], f["conn"],
				f["kip"], f["instance_id"], f["client_id"], f["expected"], f["observed"])
		default:
			fmt.Fprintf(&b, "  %v\n", f)
		}
	}
	if len(r.Findings) == 0 {
		b.WriteString("  (none)\n")
	}
	fmt.Fprintf(&b, "  totals: requests=%d responses=%d by_header=%v coverage=%v\n",
		r.Totals.Requests, r.Totals.Responses, r.Totals.ByHeaderVersion, r.Totals.Coverage)
	return b.String()
}

// bbReadF runs kwatch read --format json --fail-on never over path and
// reads the findings as bbFinding.
func bbReadF(t *testing.T, path string, extra ...string) bbFindingsReport {
	t.Helper()
	rep, _ := bbReadAs[bbFindingsReport](t, path, extra...)
	return rep
}

// bbRuleOf is the rule of a finding read as a map or as a bbFinding.
func bbRuleOf(f any) string {
	switch f := f.(type) {
	case bbFinding:
		return f.Rule
	case map[string]any:
		return f["rule"].(string)
	}
	panic(fmt.Sprintf("finding of type %T", f))
}

// bbCounts counts the report's findings by rule.
func bbCounts[F, I any](rep bbReportOf[F, I]) map[string]int {
	got := map[string]int{}
	for _, f := range rep.Findings {
		got[bbRuleOf(f)]++
	}
	return got
}

// bbExpect asserts exactly these rule counts (every other rule: zero).
func bbExpect[F, I any](t *testing.T, rep bbReportOf[F, I], want map[string]int) {
	t.Helper()
	bbCompareCounts(t, "", bbCounts(rep), want, rep.summary)
}

// bbOf is the report's findings of rule, in report order.
func bbOf[F, I any](rep bbReportOf[F, I], rule string) []F {
	var out []F
	for _, f := range rep.Findings {
		if bbRuleOf(f) == rule {
			out = append(out, f)
		}
	}
	return out
}

// bbOne is the one finding of rule; the test stops unless there is exactly one.
func bbOne[I any](t *testing.T, rep bbReportOf[bbFinding, I], rule string) bbFinding {
	t.Helper()
	fs := bbOf(rep, rule)
	if len(fs) != 1 {
		t.Fatalf("%s: %d findings, want 1\n%s", rule, len(fs), rep.summary())
	}
	return fs[0]
}

// bbFinding is a finding of the JSON report (SPEC.md section 5).
type bbFinding struct {
	Time          string  `json:"time"`
	Rule          string  `json:"rule"`
	Severity      string  `json:"severity"`
	KIP           string  `json:"kip"`
	Confidence    string  `json:"confidence"`
	Frame         int     `json:"frame"`
	Capture       string  `json:"capture"`
	Conn          bbConn  `json:"conn"`
	API           string  `json:"api"`
	APIKey        int     `json:"api_key"`
	APIVersion    int     `json:"api_version"`
	CorrelationID int32   `json:"correlation_id"`
	ClientID      *string `json:"client_id"`
	InstanceID    string  `json:"instance_id"`
	Expected      string  `json:"expected"`
	Observed      string  `json:"observed"`
	Message       string  `json:"message"`
}

type bbConn struct {
	Client string `json:"client"`
	Broker string `json:"broker"`
}

// bbOneConn plays one connection (pcapgen's default addresses) whose first
// request carries client ID cid and instance ID id (nil: none), closes it
// and reads the capture with the extra flags.
func bbOneConn(t *testing.T, cid *string, id *[16]byte, play func(s *pcapgen.Session), extra ...string) bbReport {
	t.Helper()
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	play(bbSession(cn, cid, id))
	cn.Close()
	return bbRun(t, c, extra...)
}

// bbLegacyConn plays one legacy connection (bbLegacy, pcapgen's default
// addresses), closes it and reads the capture with bbRun2.
func bbLegacyConn(t *testing.T, play func(s *pcapgen.Session), extra ...string) bbFindingsReport {
	t.Helper()
	c := pcapgen.New(pcapgen.Options{})
	cn, s := bbLegacy(c, pcapgen.ConnOptions{})
	play(s)
	cn.Close()
	return bbRun2(t, c, extra...)
}

// bb8cPortArgs is --port 9092 when port, else no flag.
func bb8cPortArgs(port bool) []string {
	if port {
		return []string{"--port", "9092"}
	}
	return nil
}

// bb7Client opens a connection of a KIP-1313 client (orders-app, X) when
// modern, else of a legacy client (legacy-app).
func bb7Client(c *pcapgen.Capture, modern bool) (*pcapgen.Conn, *pcapgen.Session) {
	if modern {
		return bb7Modern(c, pcapgen.ConnOptions{}, "orders-app", bb7X)
	}
	return bb7Legacy(c, pcapgen.ConnOptions{}, "legacy-app")
}
