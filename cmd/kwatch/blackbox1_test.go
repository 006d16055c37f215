package main

// Black-box scenarios for SPEC.md sections 3.1, 3.2, 3.3, the 3.5 broker
// rules that follow from them, 3.7, the accepted-2026 profile (section 4)
// and the exit statuses of section 5. Expectations come from SPEC.md only.

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kwatch/kwatch/internal/pcapgen"
)

type bbReport struct {
	Profile string `json:"profile"`
	Totals  struct {
		Packets          int            `json:"packets"`
		Bytes            int            `json:"bytes"`
		Connections      int            `json:"connections"`
		Requests         int            `json:"requests"`
		ByHeaderVersion  map[string]int `json:"requests_by_header_version"`
		Coverage         map[string]int `json:"coverage"`
		Findings         int            `json:"findings"`
		BySeverity       map[string]int `json:"findings_by_severity"`
		ByRule           map[string]int `json:"findings_by_rule"`
		Unobservable     int            `json:"unobservable_connections"`
		KafkaConnections int            `json:"kafka_connections"`
	} `json:"totals"`
	Instances []map[string]any `json:"instances"`
	Findings  []map[string]any `json:"findings"`
}

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

func bbSummary(rep bbReport) string {
	var b strings.Builder
	for _, f := range rep.Findings {
		fmt.Fprintf(&b, "  %v %v frame=%v conf=%v exp=%v obs=%v inst=%v cid=%v\n", f["rule"], f["severity"], f["frame"], f["confidence"], f["expected"], f["observed"], f["instance_id"], f["client_id"])
	}
	return b.String()
}

// bbExpect asserts the exact multiset of rules in the report.
func bbExpect(t *testing.T, rep bbReport, want map[string]int) {
	t.Helper()
	got := map[string]int{}
	for _, f := range rep.Findings {
		got[f["rule"].(string)]++
	}
	bbCompareCounts(t, "", got, want, func() string { return bbSummary(rep) })
}

// bbOf returns the findings of rule, in report order.
func bbOf(rep bbReport, rule string) []map[string]any {
	var out []map[string]any
	for _, f := range rep.Findings {
		if f["rule"] == rule {
			out = append(out, f)
		}
	}
	return out
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

// ---------------------------------------------------------------- 3.1

// SPEC 3.1: "If its first v2-header request specifies one, every later
// v2-header request specifies the same value". A compliant modern client
// (client ID once, instance ID on every request, aligned telemetry, row 3
// of 3.3 answered "0, NONE") gives no finding at all, exit 0 even with
// --fail-on info.
func TestBlackboxCompliantModern(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bbSession(cn, pcapgen.Ptr("orders-app"), bbID(bbX))
	bbAPIV(s, 0)
	s.Header.ClientID = nil
	bbMeta(s)
	bbGTS(s, bbX, 0, bbZero)
	bbPush(s, bbX, 0)
	bbMeta(s)
	cn.Close()
	path := bbCaptureFile(t, c, "")
	rep := bbRead(t, path)
	bbExpect(t, rep, map[string]int{})
	if code, _, stderr := runKwatch("read", "--fail-on", "info", path); code != 0 {
		t.Errorf("compliant capture with --fail-on info: exit %d, want 0 (%s)", code, stderr)
	}
	// Section 5: one row per client instance with ... telemetry ID.
	found := false
	for _, in := range rep.Instances {
		if in["instance_id"] == bbJ(bbX) {
			found = true
			if in["telemetry_id"] != bbJ(bbX) {
				t.Errorf("instance row telemetry_id %v, want %s", in["telemetry_id"], bbJ(bbX))
			}
		}
	}
	if !found {
		t.Errorf("no instance row for %s", bbJ(bbX))
	}
}

// SPEC 3.1 instance-id-dropped: "the first v2 request carried an instance
// ID; a later v2 request carries none (absent or zero)"; 3.7: "Request rules
// (3.1 dropped/...) fire once per offending request". Section 5: frame is
// the packet that completed the request.
func TestBlackboxDroppedAbsentAndZero(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bbSession(cn, pcapgen.Ptr("orders-app"), bbID(bbX))
	bbMeta(s)
	s.Header.ClientID = nil
	s.Header.InstanceID = nil
	f1 := bbMeta(s)
	s.Header.InstanceID = bbID(bbZero)
	f2 := bbMeta(s)
	cn.Close()
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"instance-id-dropped": 2})
	fs := bbOf(rep, "instance-id-dropped")
	if len(fs) == 2 {
		for i, f := range fs {
			bbField(t, f, "severity", "error")
			bbField(t, f, "kip", "KIP-1313")
			bbField(t, f, "confidence", "full")
			bbField(t, f, "expected", bbJ(bbX))
			bbField(t, f, "frame", []int{f1, f2}[i])
			bbField(t, f, "api", "Metadata")
			bbField(t, f, "api_key", 3)
		}
	}
}

// SPEC 3.1 instance-id-changed: "a later v2 request carries a non-zero
// instance ID different from the first"; once per offending request. A
// later request that goes back to the first value is compliant.
func TestBlackboxChangedPerRequest(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bbSession(cn, pcapgen.Ptr("orders-app"), bbID(bbX))
	bbMeta(s)
	s.Header.ClientID = nil
	s.Header.InstanceID = bbID(bbY)
	f1 := bbMeta(s)
	s.Header.InstanceID = bbID(bbX)
	bbMeta(s)
	s.Header.InstanceID = bbID(bbZ)
	f2 := bbMeta(s)
	cn.Close()
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"instance-id-changed": 2})
	fs := bbOf(rep, "instance-id-changed")
	if len(fs) == 2 {
		bbField(t, fs[0], "expected", bbJ(bbX))
		bbField(t, fs[0], "observed", bbJ(bbY))
		bbField(t, fs[0], "frame", f1)
		bbField(t, fs[1], "expected", bbJ(bbX))
		bbField(t, fs[1], "observed", bbJ(bbZ))
		bbField(t, fs[1], "frame", f2)
		bbField(t, fs[0], "severity", "error")
	}
}

// SPEC 3.1 instance-id-late: "the first v2 request carried none; a later v2
// request carries one", once per offending request (3.7). "A zero UUID and
// an absent tag mean the same thing" (section 1): a zero first ID is none.
func TestBlackboxLate(t *testing.T) {
	for _, first := range []struct {
		name string
		id   *[16]byte
	}{{"absent", nil}, {"zero", bbID(bbZero)}} {
		t.Run(first.name, func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			cn := c.Conn(pcapgen.ConnOptions{})
			s := bbSession(cn, pcapgen.Ptr("orders-app"), first.id)
			bbMeta(s)
			s.Header.ClientID = nil
			s.Header.InstanceID = bbID(bbX)
			f1 := bbMeta(s)
			bbMeta(s)
			cn.Close()
			rep := bbRun(t, c)
			bbExpect(t, rep, map[string]int{"instance-id-late": 2})
			f := bbFirst(t, rep, "instance-id-late")
			bbField(t, f, "severity", "error")
			bbField(t, f, "frame", f1)
			bbField(t, f, "observed", bbJ(bbX))
		})
	}
}

// SPEC section 1: "A zero UUID and an absent tag mean the same thing"; 3.7:
// "A zero header instance ID is no claim of KIP-1313 support"; 3.2: "For
// legacy clients this is a statistic, not a finding". A legacy client
// mixing zero and absent IDs and repeating its client ID gives nothing.
func TestBlackboxLegacyZeroAbsentMix(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bbSession(cn, pcapgen.Ptr("orders-app"), bbID(bbZero))
	bbAPIV(s, 0)
	s.Header.InstanceID = nil
	bbMeta(s)
	s.Header.InstanceID = bbID(bbZero)
	bbMeta(s)
	s.Header.InstanceID = nil
	bbMeta(s)
	cn.Close()
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{})
}

// SPEC section 2: "Requests with a v0/v1 header are exempt from the header
// instance-ID rules: they neither set nor break the connection's state."
// Section 5 totals: "requests by header version".
func TestBlackboxV0V1HeadersExempt(t *testing.T) {
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

// SPEC section 2: "The first request ... uses the v2 header": a v1 request
// first, then a v2 request without instance ID, then v2 with one, is late.
func TestBlackboxV1FirstThenLate(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bbSession(cn, pcapgen.Ptr("orders-app"), bbID(bbX))
	s.RoundTrip(pcapgen.Metadata(8, "orders"), pcapgen.MetadataResponse(8, "10.0.0.1", 9092)) // v1: no tags
	s.Header.ClientID = nil
	s.Header.InstanceID = nil
	bbMeta(s) // first v2: none
	s.Header.InstanceID = bbID(bbX)
	bbMeta(s) // late
	cn.Close()
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"instance-id-late": 1})
}

// SPEC 3.1 instance-id-malformed: "tag 0 present with size != 16"; 3.7: "A
// request whose tag 0 is malformed neither sets nor breaks the connection's
// instance-ID state." A malformed first v2 request, then X, X: only the
// malformed finding (the X request is the first that sets the state).
func TestBlackboxMalformedFirstDoesNotSet(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bbSession(cn, pcapgen.Ptr("orders-app"), nil)
	s.Header.RawTags = []byte{1, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8}
	f1 := bbMeta(s)
	s.Header.RawTags = nil
	s.Header.ClientID = nil
	s.Header.InstanceID = bbID(bbX)
	bbMeta(s)
	bbMeta(s)
	cn.Close()
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"instance-id-malformed": 1})
	f := bbFirst(t, rep, "instance-id-malformed")
	bbField(t, f, "severity", "error")
	bbField(t, f, "frame", f1)
}

// SPEC 3.7: a malformed tag 0 "neither sets nor breaks" the state: X,
// malformed, X is only malformed; a later absent ID is still dropped (the
// state is still X).
func TestBlackboxMalformedMiddleDoesNotBreak(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bbSession(cn, pcapgen.Ptr("orders-app"), bbID(bbX))
	bbMeta(s)
	s.Header.ClientID = nil
	s.Header.RawTags = []byte{1, 0, 4, 1, 2, 3, 4}
	bbMeta(s)
	s.Header.RawTags = nil
	bbMeta(s)
	s.Header.InstanceID = nil
	bbMeta(s)
	cn.Close()
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"instance-id-malformed": 1, "instance-id-dropped": 1})
	bbField(t, bbFirst(t, rep, "instance-id-dropped"), "expected", bbJ(bbX))
}

// SPEC 3.1 instance-id-malformed: "duplicate tags, descending tags, or
// tagged-field bytes that overrun the header". One connection each.
func TestBlackboxMalformedVariants(t *testing.T) {
	x := bbX[:]
	dup := append(append(append([]byte{2, 0, 16}, x...), 0, 16), x...)
	desc := append([]byte{2, 3, 1, 0xaa, 0, 16}, x...)
	for _, tc := range []struct {
		name string
		tags []byte
		raw  bool
	}{
		{"duplicate-tag0", dup, false},
		{"descending", desc, false},
		{"overrun", []byte{1, 0, 16, 1, 2, 3, 4, 5}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			cn := c.Conn(pcapgen.ConnOptions{})
			h := pcapgen.RequestHeader{APIKey: 3, APIVersion: 12, CorrelationID: 1, ClientID: pcapgen.Ptr("orders-app"), RawTags: tc.tags}
			if tc.raw {
				cn.Send(pcapgen.EncodeRequestRaw(h, nil)) // frame ends inside the tag
			} else {
				cn.Send(pcapgen.EncodeRequest(h, pcapgen.Metadata(12, "orders")))
				cn.Reply(pcapgen.EncodeResponse(1, 12, pcapgen.MetadataResponse(12, "10.0.0.1", 9092)))
			}
			cn.Close()
			rep := bbRun(t, c)
			if n := len(bbOf(rep, "instance-id-malformed")); n != 1 {
				t.Errorf("instance-id-malformed: %d findings, spec requires 1\n%s", n, bbSummary(rep))
			}
			for _, r := range []string{"instance-id-dropped", "instance-id-changed", "instance-id-late"} {
				if n := len(bbOf(rep, r)); n != 0 {
					t.Errorf("%s: %d findings, want 0", r, n)
				}
			}
		})
	}
}

// SPEC section 1: "Unknown tags are skipped, never fatal." Tag 0 = X plus
// an unknown ascending tag 5 is well-formed and consistent with X.
func TestBlackboxUnknownTagSkipped(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bbSession(cn, pcapgen.Ptr("orders-app"), bbID(bbX))
	bbMeta(s)
	s.Header.ClientID = nil
	s.Header.RawTags = append(append([]byte{2, 0, 16}, bbX[:]...), 5, 3, 'a', 'b', 'c')
	bbMeta(s)
	s.Header.RawTags = nil
	bbMeta(s)
	cn.Close()
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{})
}

// SPEC 3.1 instance-id-reserved (warn): "the instance ID is ONE_UUID"; 3.7:
// "instance-id-reserved ... once per instance ID", across connections.
func TestBlackboxReservedOncePerID(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	one := pcapgen.OneUUID()
	var first int
	for i := 0; i < 2; i++ {
		cn := c.Conn(pcapgen.ConnOptions{Client: netip.MustParseAddrPort(fmt.Sprintf("10.1.0.1:%d", 40001+i))})
		s := bbSession(cn, pcapgen.Ptr("orders-app"), &one)
		if f := bbMeta(s); i == 0 {
			first = f
		}
		s.Header.ClientID = nil
		bbMeta(s)
		cn.Close()
	}
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"instance-id-reserved": 1})
	f := bbFirst(t, rep, "instance-id-reserved")
	bbField(t, f, "severity", "warn")
	bbField(t, f, "frame", first) // "at the first request that shows it"
	bbField(t, f, "instance_id", "AAAAAAAAAAAAAAAAAAAAAQ")
}

// SPEC 3.1 instance-id-shared (warn): "one instance ID is used from two
// different client hosts"; once per instance ID (3.7), even with a third.
func TestBlackboxSharedTwoHosts(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	var shows int
	for i := 1; i <= 3; i++ {
		cn := c.Conn(pcapgen.ConnOptions{Client: netip.MustParseAddrPort(fmt.Sprintf("10.1.0.%d:40001", i))})
		s := bbSession(cn, pcapgen.Ptr("orders-app"), bbID(bbX))
		if f := bbMeta(s); i == 2 {
			shows = f // the first request that shows the sharing
		}
		s.Header.ClientID = nil
		bbMeta(s)
		cn.Close()
	}
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"instance-id-shared": 1})
	f := bbFirst(t, rep, "instance-id-shared")
	bbField(t, f, "severity", "warn")
	bbField(t, f, "instance_id", bbJ(bbX))
	bbField(t, f, "frame", shows)
	// Section 5: one row per client instance with its client hosts and
	// connections.
	for _, in := range rep.Instances {
		if in["instance_id"] == bbJ(bbX) {
			if hosts, _ := in["client_hosts"].([]any); len(hosts) != 3 {
				t.Errorf("instance row client_hosts %v, want 3 hosts", in["client_hosts"])
			}
			bbField(t, in, "connections", 3)
		}
	}
}

// SPEC 3.1 instance-id-shared: "or with two different client IDs".
func TestBlackboxSharedTwoClientIDs(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	for i, cid := range []string{"orders-app", "payments-app"} {
		cn := c.Conn(pcapgen.ConnOptions{Client: netip.MustParseAddrPort(fmt.Sprintf("10.1.0.1:%d", 40001+i))})
		s := bbSession(cn, pcapgen.Ptr(cid), bbID(bbX))
		bbMeta(s)
		s.Header.ClientID = nil
		bbMeta(s)
		cn.Close()
	}
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"instance-id-shared": 1})
}

// SPEC 3.1 instance-id-shared, negative: one process (one host, one client
// ID) on several connections, to several brokers, is not sharing.
func TestBlackboxNotSharedSameProcess(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	for i := 0; i < 3; i++ {
		cn := c.Conn(pcapgen.ConnOptions{
			Client: netip.MustParseAddrPort(fmt.Sprintf("10.1.0.1:%d", 40001+i)),
			Broker: netip.MustParseAddrPort(fmt.Sprintf("10.0.0.%d:9092", 1+i%2)),
		})
		s := bbSession(cn, pcapgen.Ptr("orders-app"), bbID(bbX))
		bbMeta(s)
		s.Header.ClientID = nil
		bbMeta(s)
		cn.Close()
	}
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{})
}

// SPEC section 2: "A connection joined mid-stream still yields findings, but
// any finding that depends on the first request carries "confidence":
// "partial"." Also client-id-changed depends on the first request.
func TestBlackboxMidstreamPartial(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{NoSYN: true})
	s := bbSession(cn, pcapgen.Ptr("orders-app"), bbID(bbX))
	bbMeta(s)
	s.Header.InstanceID = bbID(bbY)
	s.Header.ClientID = pcapgen.Ptr("payments-app")
	bbMeta(s)
	cn.Close()
	rep := bbRun(t, c)
	if n := len(bbOf(rep, "instance-id-changed")); n != 1 {
		t.Errorf("instance-id-changed: %d findings, want 1\n%s", n, bbSummary(rep))
	}
	if n := len(bbOf(rep, "client-id-changed")); n != 1 {
		t.Errorf("client-id-changed: %d findings, want 1\n%s", n, bbSummary(rep))
	}
	for _, f := range rep.Findings {
		if f["rule"] == "instance-id-changed" || f["rule"] == "client-id-changed" {
			bbField(t, f, "confidence", "partial")
		}
	}
	if rep.Totals.Coverage["midstream-join"] != 1 {
		t.Errorf("coverage midstream-join %d, want 1", rep.Totals.Coverage["midstream-join"])
	}
}

// SPEC 3.7: "A connection is observed from its start when its SYN or its
// SYN-ACK was captured": without the SYN but with the SYN-ACK, findings
// are "full" and there is no midstream join.
func TestBlackboxSynAckIsStart(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{SkipSYN: true})
	s := bbSession(cn, pcapgen.Ptr("orders-app"), bbID(bbX))
	bbMeta(s)
	s.Header.ClientID = nil
	s.Header.InstanceID = bbID(bbY)
	bbMeta(s)
	cn.Close()
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"instance-id-changed": 1})
	bbField(t, bbFirst(t, rep, "instance-id-changed"), "confidence", "full")
	if rep.Totals.Coverage["midstream-join"] != 0 {
		t.Errorf("coverage midstream-join %d, want 0", rep.Totals.Coverage["midstream-join"])
	}
}

// SPEC section 2: "A connection with lost bytes resyncs to the next
// plausible frame; findings after a gap carry partial too." A finding
// before the gap stays full.
func TestBlackboxGapPartial(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bbSession(cn, pcapgen.Ptr("orders-app"), bbID(bbX))
	bbMeta(s)
	s.Header.ClientID = nil
	s.Header.InstanceID = bbID(bbY)
	bbMeta(s) // changed, full
	s.Header.InstanceID = bbID(bbX)
	cn.DropNext(1)
	s.Request(pcapgen.Metadata(12, "orders")) // lost
	s.Header.InstanceID = bbID(bbY)
	bbMeta(s) // changed, after the gap: partial
	cn.Close()
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"instance-id-changed": 2})
	fs := bbOf(rep, "instance-id-changed")
	if len(fs) == 2 {
		bbField(t, fs[0], "confidence", "full")
		bbField(t, fs[1], "confidence", "partial")
	}
	if rep.Totals.Coverage["stream-gap"] < 1 {
		t.Errorf("coverage stream-gap %d, want >= 1", rep.Totals.Coverage["stream-gap"])
	}
}

// ---------------------------------------------------------------- 3.2

// SPEC 3.2 client-id-changed (warn): "a later request carries a non-null
// client ID different from the first request's". A later null client ID
// and a later repeat of the first are not changes; legacy repeats are no
// finding ("For legacy clients this is a statistic").
func TestBlackboxClientIDChanged(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bbSession(cn, pcapgen.Ptr("orders-app"), nil)
	bbMeta(s)
	bbMeta(s)
	s.Header.ClientID = nil
	bbMeta(s)
	s.Header.ClientID = pcapgen.Ptr("payments-app")
	f1 := bbMeta(s)
	cn.Close()
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"client-id-changed": 1})
	f := bbFirst(t, rep, "client-id-changed")
	bbField(t, f, "severity", "warn")
	bbField(t, f, "frame", f1)
	bbField(t, f, "expected", "orders-app")
	bbField(t, f, "observed", "payments-app")
}

// SPEC 3.2 client-id-missing-first (warn): "the first request's client ID is
// null or empty but a later request sets one"; 3.7: "a null first client
// ID followed by a set one is client-id-missing-first only".
func TestBlackboxClientIDMissingFirst(t *testing.T) {
	for _, first := range []struct {
		name string
		cid  *string
	}{{"null", nil}, {"empty", pcapgen.Ptr("")}} {
		t.Run(first.name, func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			cn := c.Conn(pcapgen.ConnOptions{})
			s := bbSession(cn, first.cid, nil)
			bbMeta(s)
			s.Header.ClientID = pcapgen.Ptr("orders-app")
			f1 := bbMeta(s)
			cn.Close()
			rep := bbRun(t, c)
			bbExpect(t, rep, map[string]int{"client-id-missing-first": 1})
			f := bbFirst(t, rep, "client-id-missing-first")
			bbField(t, f, "severity", "warn")
			bbField(t, f, "frame", f1)
		})
	}
}

// SPEC 3.2, negative: null client IDs throughout are neither missing-first
// nor changed (no later request sets one).
func TestBlackboxClientIDAllNull(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bbSession(cn, nil, nil)
	bbMeta(s)
	bbMeta(s)
	bbMeta(s)
	cn.Close()
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{})
}

// SPEC 3.7: "The client-ID rules' "first request" is the connection's first
// request with header v1 or higher (the first that has a client ID
// field)." A v0-header ControlledShutdown first is no null first client ID:
// the first client ID is the Metadata request's, and a later different one
// is client-id-changed, not client-id-missing-first.
func TestBlackboxClientIDFirstIsFirstV1(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bbSession(cn, nil, nil)
	cs := kmsg.NewPtrControlledShutdownRequest()
	cs.Version = 0
	s.RoundTrip(cs, kmsg.NewPtrControlledShutdownResponse())
	s.Header.ClientID = pcapgen.Ptr("orders-app")
	bbMeta(s)
	bbMeta(s)
	s.Header.ClientID = pcapgen.Ptr("payments-app")
	bbMeta(s)
	cn.Close()
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"client-id-changed": 1})
	bbField(t, bbFirst(t, rep, "client-id-changed"), "expected", "orders-app")
}

// SPEC 3.2 client-id-repeated (info): "a client that sends header instance
// IDs ... still repeats the client ID on later requests; the finding counts
// the bytes that sending null would save"; 3.7: "once per connection, when
// the connection ends, with the bytes saved". 3 later requests x 10 bytes.
func TestBlackboxClientIDRepeated(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	for i := 0; i < 2; i++ {
		cn := c.Conn(pcapgen.ConnOptions{Client: netip.MustParseAddrPort(fmt.Sprintf("10.1.0.1:%d", 40001+i))})
		s := bbSession(cn, pcapgen.Ptr("orders-app"), bbID(bbX))
		bbAPIV(s, 0)
		bbMeta(s)
		bbMeta(s)
		bbMeta(s)
		cn.Close()
	}
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"client-id-repeated": 2})
	for _, f := range bbOf(rep, "client-id-repeated") {
		bbField(t, f, "severity", "info")
		if !strings.Contains(fmt.Sprint(f["observed"], " ", f["message"]), "30 bytes") {
			t.Errorf("client-id-repeated does not count 30 bytes saved: observed %v, message %v", f["observed"], f["message"])
		}
	}
}

// SPEC 3.2 client-id-repeated, negative: a KIP-1313 client that sends null
// after its first request saves nothing; no finding.
func TestBlackboxClientIDNotRepeated(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bbSession(cn, pcapgen.Ptr("orders-app"), bbID(bbX))
	bbMeta(s)
	s.Header.ClientID = nil
	bbMeta(s)
	bbMeta(s)
	cn.Close()
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{})
}

// ---------------------------------------------------------------- 3.3

// SPEC 3.3 rows 1 and 2: "absent or 0 | 0 | B != 0, NONE | legacy first
// request: remember B"; "absent or 0 | R != 0 | 0, NONE | legacy later
// request". Pushing with B is compliant.
func TestBlackboxTelemetryLegacyCompliant(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bbSession(cn, pcapgen.Ptr("orders-app"), nil)
	bbGTS(s, bbZero, 0, bbB)
	bbPush(s, bbB, 0)
	bbGTS(s, bbB, 0, bbZero)
	bbPush(s, bbB, 0)
	cn.Close()
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{})
}

// SPEC 3.3 row 4: "H | 0 | INVALID_REQUEST | telemetry-id-requested-with-
// header (error)". Answered 42: no broker rule.
func TestBlackboxTelemetryRequestedWithHeader(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bbSession(cn, pcapgen.Ptr("orders-app"), bbID(bbX))
	s.Header.ClientID = nil
	bbMeta(s)
	f1 := bbGTS(s, bbZero, 42, bbZero)
	cn.Close()
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"telemetry-id-requested-with-header": 1})
	f := bbFirst(t, rep, "telemetry-id-requested-with-header")
	bbField(t, f, "severity", "error")
	bbField(t, f, "frame", f1)
	bbField(t, f, "api_key", 71)
}

// SPEC 3.5 broker-accepted-invalid (warn): a request a conforming broker
// rejects (the error rules of 3.3) "was answered without INVALID_REQUEST".
// Row 4 answered NONE (with a B, or with 0): the row is not the legacy
// first request, so no broker-telemetry-id-missing ("rows ... are
// exclusive") and no echo (body ID is 0).
func TestBlackboxTelemetryRequestedWithHeaderAccepted(t *testing.T) {
	for _, b := range []struct {
		name string
		id   [16]byte
	}{{"assigned", bbB}, {"zero", bbZero}} {
		t.Run(b.name, func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			cn := c.Conn(pcapgen.ConnOptions{})
			s := bbSession(cn, pcapgen.Ptr("orders-app"), bbID(bbX))
			s.Header.ClientID = nil
			bbMeta(s)
			bbGTS(s, bbZero, 0, b.id)
			cn.Close()
			rep := bbRun(t, c)
			bbExpect(t, rep, map[string]int{"telemetry-id-requested-with-header": 1, "broker-accepted-invalid": 1})
			bbField(t, bbFirst(t, rep, "broker-accepted-invalid"), "severity", "warn")
		})
	}
}

// SPEC 3.3 row 5: "H | R != H | INVALID_REQUEST | telemetry-id-mismatch".
func TestBlackboxTelemetryMismatchGTS(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bbSession(cn, pcapgen.Ptr("orders-app"), bbID(bbX))
	s.Header.ClientID = nil
	bbMeta(s)
	bbGTS(s, bbY, 42, bbZero)
	cn.Close()
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"telemetry-id-mismatch": 1})
	f := bbFirst(t, rep, "telemetry-id-mismatch")
	bbField(t, f, "severity", "error")
	bbField(t, f, "expected", bbJ(bbX))
	bbField(t, f, "observed", bbJ(bbY))
}

// SPEC 3.5: row 5 answered NONE with 0 is broker-accepted-invalid too.
func TestBlackboxTelemetryMismatchAccepted(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bbSession(cn, pcapgen.Ptr("orders-app"), bbID(bbX))
	s.Header.ClientID = nil
	bbMeta(s)
	bbGTS(s, bbY, 0, bbZero)
	cn.Close()
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"telemetry-id-mismatch": 1, "broker-accepted-invalid": 1})
}

// SPEC 3.5 broker-telemetry-id-echo (info): "GetTelemetrySubscriptions with
// non-zero body ID answered with a non-zero ID (KIP-714 says 0)": aligned
// row 3 and legacy row 2 both.
func TestBlackboxBrokerTelemetryEcho(t *testing.T) {
	t.Run("aligned", func(t *testing.T) {
		c := pcapgen.New(pcapgen.Options{})
		cn := c.Conn(pcapgen.ConnOptions{})
		s := bbSession(cn, pcapgen.Ptr("orders-app"), bbID(bbX))
		s.Header.ClientID = nil
		bbMeta(s)
		bbGTS(s, bbX, 0, bbX)
		cn.Close()
		rep := bbRun(t, c)
		bbExpect(t, rep, map[string]int{"broker-telemetry-id-echo": 1})
		bbField(t, bbFirst(t, rep, "broker-telemetry-id-echo"), "severity", "info")
	})
	t.Run("legacy", func(t *testing.T) {
		c := pcapgen.New(pcapgen.Options{})
		cn := c.Conn(pcapgen.ConnOptions{})
		s := bbSession(cn, pcapgen.Ptr("orders-app"), nil)
		bbGTS(s, bbZero, 0, bbB)
		bbGTS(s, bbB, 0, bbB)
		cn.Close()
		rep := bbRun(t, c)
		bbExpect(t, rep, map[string]int{"broker-telemetry-id-echo": 1})
	})
}

// SPEC 3.5 broker-telemetry-id-missing (error): "a legacy first
// GetTelemetrySubscriptions (body 0) answered NONE with a zero ID". A zero
// header counts as "absent or 0". An error answer is no NONE answer.
func TestBlackboxBrokerTelemetryMissing(t *testing.T) {
	for _, h := range []struct {
		name string
		id   *[16]byte
	}{{"absent", nil}, {"zero", bbID(bbZero)}} {
		t.Run(h.name, func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			cn := c.Conn(pcapgen.ConnOptions{})
			s := bbSession(cn, pcapgen.Ptr("orders-app"), h.id)
			bbGTS(s, bbZero, 0, bbZero)
			cn.Close()
			rep := bbRun(t, c)
			bbExpect(t, rep, map[string]int{"broker-telemetry-id-missing": 1})
			f := bbFirst(t, rep, "broker-telemetry-id-missing")
			bbField(t, f, "severity", "error")
			// frame: kwatch gives the response's packet for broker rules
			// (section 5 speaks of "the packet that completed the request";
			// ambiguous for findings seen from responses), not asserted.
		})
	}
	t.Run("error-answer", func(t *testing.T) {
		c := pcapgen.New(pcapgen.Options{})
		cn := c.Conn(pcapgen.ConnOptions{})
		s := bbSession(cn, pcapgen.Ptr("orders-app"), nil)
		bbGTS(s, bbZero, 35, bbZero) // UNSUPPORTED_VERSION
		cn.Close()
		rep := bbRun(t, c)
		bbExpect(t, rep, map[string]int{})
	})
}

// SPEC 3.3 telemetry-id-mismatch: "also PushTelemetry whose body ID differs
// from a non-zero header ID"; telemetry-id-zero-push: "PushTelemetry with a
// zero ClientInstanceId"; 3.7: "PushTelemetry with a zero body ID is
// telemetry-id-zero-push only". Answered 42: no broker rule.
func TestBlackboxPushTelemetryRejected(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bbSession(cn, pcapgen.Ptr("orders-app"), bbID(bbX))
	s.Header.ClientID = nil
	bbGTS(s, bbX, 0, bbZero)
	fm := bbPush(s, bbY, 42)
	fz := bbPush(s, bbZero, 42)
	cn.Close()
	// Legacy zero push on another connection.
	cn2 := c.Conn(pcapgen.ConnOptions{})
	s2 := bbSession(cn2, pcapgen.Ptr("orders-app"), nil)
	bbPush(s2, bbZero, 42)
	cn2.Close()
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"telemetry-id-mismatch": 1, "telemetry-id-zero-push": 2})
	bbField(t, bbFirst(t, rep, "telemetry-id-mismatch"), "frame", fm)
	bbField(t, bbFirst(t, rep, "telemetry-id-mismatch"), "observed", bbJ(bbY))
	bbField(t, bbFirst(t, rep, "telemetry-id-zero-push"), "frame", fz)
	bbField(t, bbFirst(t, rep, "telemetry-id-zero-push"), "severity", "error")
}

// SPEC 3.5: the same PushTelemetry violations answered NONE are
// broker-accepted-invalid, once per offending request (3.7).
func TestBlackboxPushTelemetryAccepted(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bbSession(cn, pcapgen.Ptr("orders-app"), bbID(bbX))
	s.Header.ClientID = nil
	bbGTS(s, bbX, 0, bbZero)
	bbPush(s, bbY, 0)
	bbPush(s, bbZero, 0)
	cn.Close()
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"telemetry-id-mismatch": 1, "telemetry-id-zero-push": 1, "broker-accepted-invalid": 2})
}

// SPEC 3.3 telemetry-id-not-adopted (warn): "after the broker assigned B
// (legacy flow), a later telemetry request from the same client instance
// uses an ID other than B"; a request rule of 3.3, once per offending
// request.
func TestBlackboxTelemetryNotAdopted(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bbSession(cn, pcapgen.Ptr("orders-app"), nil)
	bbGTS(s, bbZero, 0, bbB)
	bbPush(s, bbB, 0)
	f1 := bbPush(s, bbC, 0)
	f2 := bbGTS(s, bbC, 0, bbZero)
	cn.Close()
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"telemetry-id-not-adopted": 2})
	fs := bbOf(rep, "telemetry-id-not-adopted")
	if len(fs) == 2 {
		bbField(t, fs[0], "severity", "warn")
		bbField(t, fs[0], "frame", f1)
		bbField(t, fs[0], "expected", bbJ(bbB))
		bbField(t, fs[0], "observed", bbJ(bbC))
		bbField(t, fs[1], "frame", f2)
	}
}

// ---------------------------------------------------------------- 3.5 / 3.1

// SPEC 3.5 broker-accepted-invalid: "(the error rules of 3.1 ...) was
// answered without INVALID_REQUEST, where the response has a top-level
// error code (APIs of section 1)". ApiVersions has one; Metadata does not.
func TestBlackboxAcceptedInvalidHeader(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	// changed on ApiVersions answered NONE: changed + accepted-invalid.
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bbSession(cn, pcapgen.Ptr("orders-app"), bbID(bbX))
	bbMeta(s)
	s.Header.ClientID = nil
	s.Header.InstanceID = bbID(bbY)
	corrA := s.Header.CorrelationID
	bbAPIV(s, 0)
	// changed on ApiVersions answered 42: changed only.
	bbAPIV(s, 42)
	// dropped on Metadata (no top-level error code): dropped only.
	s.Header.InstanceID = nil
	bbMeta(s)
	cn.Close()
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"instance-id-changed": 2, "instance-id-dropped": 1, "broker-accepted-invalid": 1})
	f := bbFirst(t, rep, "broker-accepted-invalid")
	bbField(t, f, "api_key", 18)
	bbField(t, f, "correlation_id", corrA)
}

// SPEC 3.5 broker-accepted-invalid for instance-id-late and
// instance-id-malformed (error rules of 3.1) on APIs with a top-level
// error code answered NONE.
func TestBlackboxAcceptedInvalidLateMalformed(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bbSession(cn, pcapgen.Ptr("orders-app"), nil)
	bbMeta(s)
	s.Header.ClientID = nil
	s.Header.InstanceID = bbID(bbX)
	bbGTS(s, bbX, 0, bbZero) // late; telemetry row 3 aligned
	cn.Close()
	cn2 := c.Conn(pcapgen.ConnOptions{})
	s2 := bbSession(cn2, pcapgen.Ptr("orders-app"), nil)
	s2.Header.RawTags = []byte{1, 0, 2, 0xab, 0xcd}
	bbAPIV(s2, 0) // malformed
	cn2.Close()
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"instance-id-late": 1, "instance-id-malformed": 1, "broker-accepted-invalid": 2})
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

// SPEC section 4 (accepted-2026): "requires it on the first request of a
// connection and omits it afterwards"; "instance-id-dropped and
// instance-id-late are off, and instance-id-missing-first (error: the first
// v3 request has none) and instance-id-repeated (info) run instead".
func TestBlackboxAccepted2026V3(t *testing.T) {
	t.Run("compliant", func(t *testing.T) {
		c := pcapgen.New(pcapgen.Options{})
		cn := c.Conn(pcapgen.ConnOptions{})
		s := bbSession(cn, pcapgen.Ptr("orders-app"), nil)
		bbOffsetDelete(s, bbID(bbX))
		s.Header.ClientID = nil
		bbOffsetDelete(s, nil)
		bbOffsetDelete(s, nil)
		cn.Close()
		rep := bbRun(t, c, "--profile", "accepted-2026")
		bbExpect(t, rep, map[string]int{})
	})
	t.Run("missing-first", func(t *testing.T) {
		c := pcapgen.New(pcapgen.Options{})
		cn := c.Conn(pcapgen.ConnOptions{})
		s := bbSession(cn, pcapgen.Ptr("orders-app"), nil)
		f1 := bbOffsetDelete(s, nil)
		s.Header.ClientID = nil
		bbOffsetDelete(s, nil)
		cn.Close()
		path := bbCaptureFile(t, c, "")
		rep := bbRead(t, path, "--profile", "accepted-2026")
		bbExpect(t, rep, map[string]int{"instance-id-missing-first": 1})
		f := bbFirst(t, rep, "instance-id-missing-first")
		bbField(t, f, "severity", "error")
		bbField(t, f, "frame", f1)
		if code, _, _ := runKwatch("read", "--profile", "accepted-2026", path); code != 1 {
			t.Errorf("accepted-2026 missing-first: exit %d, want 1", code)
		}
		if rep.Profile != "accepted-2026" {
			t.Errorf("report profile %q", rep.Profile)
		}
	})
	t.Run("repeated", func(t *testing.T) {
		c := pcapgen.New(pcapgen.Options{})
		cn := c.Conn(pcapgen.ConnOptions{})
		s := bbSession(cn, pcapgen.Ptr("orders-app"), nil)
		bbOffsetDelete(s, bbID(bbX))
		s.Header.ClientID = nil
		bbOffsetDelete(s, bbID(bbX))
		cn.Close()
		rep := bbRun(t, c, "--profile", "accepted-2026")
		bbExpect(t, rep, map[string]int{"instance-id-repeated": 1})
		bbField(t, bbFirst(t, rep, "instance-id-repeated"), "severity", "info")
	})
}

// SPEC section 4: under accepted-2026 "instance-id-dropped and
// instance-id-late are off" (unconditionally), while the seed profile
// reports them on the same capture.
func TestBlackboxAccepted2026DroppedLateOff(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bbSession(cn, pcapgen.Ptr("orders-app"), bbID(bbX))
	bbMeta(s)
	s.Header.ClientID = nil
	s.Header.InstanceID = nil
	bbMeta(s) // seed: dropped
	cn.Close()
	cn2 := c.Conn(pcapgen.ConnOptions{})
	s2 := bbSession(cn2, pcapgen.Ptr("orders-app"), nil)
	bbMeta(s2)
	s2.Header.ClientID = nil
	s2.Header.InstanceID = bbID(bbY)
	bbMeta(s2) // seed: late
	cn2.Close()
	path := bbCaptureFile(t, c, "")
	seed := bbRead(t, path)
	bbExpect(t, seed, map[string]int{"instance-id-dropped": 1, "instance-id-late": 1})
	acc := bbRead(t, path, "--profile", "accepted-2026")
	for _, r := range []string{"instance-id-dropped", "instance-id-late"} {
		if n := len(bbOf(acc, r)); n != 0 {
			t.Errorf("accepted-2026: %s fired %d times, the profile turns it off", r, n)
		}
	}
	t.Logf("accepted-2026 findings on v2 headers:\n%s", bbSummary(acc))
}

// SPEC section 4: "A connection whose first request was not seen is
// "identity unobservable" under this profile: never non-compliant on that
// ground."
func TestBlackboxAccepted2026Unobservable(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{NoSYN: true})
	s := bbSession(cn, nil, nil)
	bbOffsetDelete(s, nil)
	bbOffsetDelete(s, nil)
	cn.Close()
	rep := bbRun(t, c, "--profile", "accepted-2026")
	bbExpect(t, rep, map[string]int{})
}

// ---------------------------------------------------------------- exit status

// SPEC section 5: "Exit status of offline analysis: 0 when no finding
// reaches --fail-on (default error), 1 when one does".
func TestBlackboxExitStatus(t *testing.T) {
	dir := t.TempDir()
	mk := func(name string, build func(c *pcapgen.Capture)) string {
		c := pcapgen.New(pcapgen.Options{})
		build(c)
		p := filepath.Join(dir, name+".pcap")
		if err := c.WriteFile(p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	errCap := mk("error", func(c *pcapgen.Capture) { // instance-id-dropped
		cn := c.Conn(pcapgen.ConnOptions{})
		s := bbSession(cn, pcapgen.Ptr("a"), bbID(bbX))
		bbMeta(s)
		s.Header.ClientID, s.Header.InstanceID = nil, nil
		bbMeta(s)
		cn.Close()
	})
	warnCap := mk("warn", func(c *pcapgen.Capture) { // client-id-changed
		cn := c.Conn(pcapgen.ConnOptions{})
		s := bbSession(cn, pcapgen.Ptr("a"), nil)
		bbMeta(s)
		s.Header.ClientID = pcapgen.Ptr("b")
		bbMeta(s)
		cn.Close()
	})
	infoCap := mk("info", func(c *pcapgen.Capture) { // client-id-repeated
		cn := c.Conn(pcapgen.ConnOptions{})
		s := bbSession(cn, pcapgen.Ptr("a"), bbID(bbX))
		bbMeta(s)
		bbMeta(s)
		cn.Close()
	})
	okCap := mk("ok", func(c *pcapgen.Capture) {
		cn := c.Conn(pcapgen.ConnOptions{})
		s := bbSession(cn, pcapgen.Ptr("a"), bbID(bbX))
		bbMeta(s)
		s.Header.ClientID = nil
		bbMeta(s)
		cn.Close()
	})
	for _, tc := range []struct {
		path   string
		failOn string
		want   int
	}{
		{errCap, "", 1}, {errCap, "error", 1}, {errCap, "warn", 1}, {errCap, "info", 1}, {errCap, "never", 0},
		{warnCap, "", 0}, {warnCap, "error", 0}, {warnCap, "warn", 1}, {warnCap, "info", 1}, {warnCap, "never", 0},
		{infoCap, "", 0}, {infoCap, "error", 0}, {infoCap, "warn", 0}, {infoCap, "info", 1}, {infoCap, "never", 0},
		{okCap, "", 0}, {okCap, "info", 0},
	} {
		for _, format := range []string{"text", "json", "ndjson"} {
			args := []string{"read", "--format", format}
			if tc.failOn != "" {
				args = append(args, "--fail-on", tc.failOn)
			}
			args = append(args, tc.path)
			if code, _, stderr := runKwatch(args...); code != tc.want {
				t.Errorf("%s --fail-on %q --format %s: exit %d, want %d (%s)", filepath.Base(tc.path), tc.failOn, format, code, tc.want, stderr)
			}
		}
	}
}

// ---------------------------------------------------------------- harder cases

// SPEC section 1: "Responses are matched to requests by correlation id per
// connection (a broker answers in order, but never rely on it alone)". Two
// pipelined ApiVersions, both instance-id-changed; the broker answers the
// second (NONE) before the first (42): only the second was accepted.
func TestBlackboxAcceptedInvalidByCorrelation(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bbSession(cn, pcapgen.Ptr("orders-app"), bbID(bbX))
	bbMeta(s)
	s.Header.ClientID = nil
	s.Header.InstanceID = bbID(bbY)
	corrs, _ := s.Pipeline(pcapgen.APIVersions(3, "apache-kafka-java", "4.2.0"), pcapgen.APIVersions(3, "apache-kafka-java", "4.2.0"))
	ok := pcapgen.APIVersionsResponse(3)
	bad := pcapgen.APIVersionsResponse(3)
	bad.ErrorCode = 42
	s.Respond(corrs[1], ok)
	s.Respond(corrs[0], bad)
	cn.Close()
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"instance-id-changed": 2, "broker-accepted-invalid": 1})
	bbField(t, bbFirst(t, rep, "broker-accepted-invalid"), "correlation_id", int(corrs[1]))
}

// SPEC 3.5: "was answered without INVALID_REQUEST": a violating request
// that got no response at all was not answered: no broker rule.
func TestBlackboxUnansweredNoBrokerRule(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bbSession(cn, pcapgen.Ptr("orders-app"), bbID(bbX))
	bbMeta(s)
	s.Header.ClientID = nil
	s.Header.InstanceID = bbID(bbY)
	s.Request(pcapgen.APIVersions(3, "apache-kafka-java", "4.2.0"))
	s.Request(pcapgen.GetTelemetrySubscriptions(bbZ))
	cn.Close()
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"instance-id-changed": 2, "telemetry-id-mismatch": 1})
}

// SPEC 3.7: request rules "fire once per offending request", and 3.5 is one
// of them: a GetTelemetrySubscriptions that is both instance-id-changed and
// telemetry-id-mismatch, answered NONE, is one broker-accepted-invalid.
func TestBlackboxAcceptedInvalidOncePerRequest(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bbSession(cn, pcapgen.Ptr("orders-app"), bbID(bbX))
	bbMeta(s)
	s.Header.ClientID = nil
	s.Header.InstanceID = bbID(bbY)
	bbGTS(s, bbZ, 0, bbZero) // H=Y changed; R=Z != H mismatch
	cn.Close()
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"instance-id-changed": 1, "telemetry-id-mismatch": 1, "broker-accepted-invalid": 1})
}

// SPEC 3.3 row 3 with a changed header: H=Y, R=Y is aligned for telemetry
// (no 3.3 finding), but the header is instance-id-changed (3.1).
func TestBlackboxChangedHeaderAlignedTelemetry(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bbSession(cn, pcapgen.Ptr("orders-app"), bbID(bbX))
	bbMeta(s)
	s.Header.ClientID = nil
	s.Header.InstanceID = bbID(bbY)
	bbGTS(s, bbY, 42, bbZero)
	cn.Close()
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"instance-id-changed": 1})
}

// SPEC 3.1 dropped on PushTelemetry: first X, a push with no header ID and
// body X answered NONE: dropped + broker-accepted-invalid; no mismatch
// ("needs two non-zero IDs") and no zero-push.
func TestBlackboxDroppedOnPush(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bbSession(cn, pcapgen.Ptr("orders-app"), bbID(bbX))
	bbGTS(s, bbX, 0, bbZero)
	s.Header.ClientID = nil
	s.Header.InstanceID = nil
	bbPush(s, bbX, 0)
	cn.Close()
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"instance-id-dropped": 1, "broker-accepted-invalid": 1})
}

// SPEC 3.5 broker-telemetry-id-missing then a zero push: the client had no
// ID to push with; both findings stand (answered 42: no broker-accepted).
func TestBlackboxMissingThenZeroPush(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bbSession(cn, pcapgen.Ptr("orders-app"), nil)
	bbGTS(s, bbZero, 0, bbZero)
	bbPush(s, bbZero, 42)
	cn.Close()
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"broker-telemetry-id-missing": 1, "telemetry-id-zero-push": 1})
}

// SPEC 3.3 row 2 without a prior assignment: "legacy later request: R is
// the telemetry ID": no finding (nothing was assigned, so nothing to adopt).
func TestBlackboxLegacyLaterWithoutAssignment(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bbSession(cn, pcapgen.Ptr("orders-app"), nil)
	bbGTS(s, bbC, 0, bbZero)
	bbPush(s, bbC, 0)
	cn.Close()
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{})
}

// SPEC section 1 SaslHandshake: "after a v0 handshake the client sends raw
// SASL tokens without Kafka headers until authentication ends: skip them,
// do not flag them". The tokens are no requests and do not touch the
// instance-ID state: a later request without the ID is still dropped.
func TestBlackboxSaslTokensSkipped(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bbSession(cn, pcapgen.Ptr("orders-app"), bbID(bbX))
	bbAPIV(s, 0)
	s.Header.ClientID = nil
	s.RoundTrip(pcapgen.SaslHandshake(0, "PLAIN"), pcapgen.SaslHandshakeResponse(0, "PLAIN"))
	cn.Send(pcapgen.SASLToken([]byte("\x00user\x00password-is-long-enough")))
	cn.Reply(pcapgen.SASLToken(nil))
	bbMeta(s)
	s.Header.InstanceID = nil
	bbMeta(s)
	cn.Close()
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"instance-id-dropped": 1})
	if rep.Totals.Requests != 4 {
		t.Errorf("totals.requests %d, want 4 (tokens are not requests)", rep.Totals.Requests)
	}
}

// SPEC 3.2 client-id-repeated: "repeats the client ID on later requests";
// 3.7: the client-ID rules' requests are those "with header v1 or higher".
// Later requests: null, v1 repeat, null, v2 repeat = 2 repeats x 10 bytes.
func TestBlackboxClientIDRepeatedBytes(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bbSession(cn, pcapgen.Ptr("orders-app"), bbID(bbX))
	bbAPIV(s, 0)
	s.Header.ClientID = nil
	bbMeta(s)
	s.Header.ClientID = pcapgen.Ptr("orders-app")
	s.RoundTrip(pcapgen.Metadata(8, "orders"), pcapgen.MetadataResponse(8, "10.0.0.1", 9092))
	s.Header.ClientID = nil
	bbMeta(s)
	s.Header.ClientID = pcapgen.Ptr("orders-app")
	bbMeta(s)
	cn.Close()
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"client-id-repeated": 1})
	f := bbFirst(t, rep, "client-id-repeated")
	if f != nil && !strings.Contains(fmt.Sprint(f["observed"], " ", f["message"]), "20 bytes") {
		t.Errorf("client-id-repeated: observed %v, message %v; want 20 bytes saved (2 requests)", f["observed"], f["message"])
	}
}

// SPEC section 2: "any finding that depends on the first request carries
// partial": findings that depend only on the request itself (reserved,
// malformed, PushTelemetry mismatch) stay full on a mid-stream connection.
func TestBlackboxMidstreamIndependentFull(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{NoSYN: true})
	one := pcapgen.OneUUID()
	s := bbSession(cn, pcapgen.Ptr("orders-app"), &one)
	bbMeta(s)
	s.Header.ClientID = nil
	s.Header.RawTags = []byte{1, 0, 3, 1, 2, 3}
	bbMeta(s)
	s.Header.RawTags = nil
	bbPush(s, bbY, 42)
	cn.Close()
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"instance-id-reserved": 1, "instance-id-malformed": 1, "telemetry-id-mismatch": 1})
	for _, f := range rep.Findings {
		bbField(t, f, "confidence", "full")
	}
}

// SPEC section 2: "findings after a gap carry partial too": a zero push
// after lost bytes.
func TestBlackboxGapPartialTelemetry(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bbSession(cn, pcapgen.Ptr("orders-app"), nil)
	bbMeta(s)
	cn.DropNext(1)
	s.Request(pcapgen.Metadata(12, "orders"))
	bbPush(s, bbZero, 42)
	cn.Close()
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"telemetry-id-zero-push": 1})
	bbField(t, bbFirst(t, rep, "telemetry-id-zero-push"), "confidence", "partial")
}

// SPEC 3.1 reserved + changed: ONE_UUID first, later X: instance-id-changed
// (X differs from the first) and instance-id-reserved once.
func TestBlackboxReservedThenChanged(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	one := pcapgen.OneUUID()
	s := bbSession(cn, pcapgen.Ptr("orders-app"), &one)
	bbMeta(s)
	s.Header.ClientID = nil
	bbMeta(s)
	s.Header.InstanceID = bbID(bbX)
	bbMeta(s)
	cn.Close()
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"instance-id-reserved": 1, "instance-id-changed": 1})
}

// SPEC 5: "ndjson = one finding per line, the summary on stderr": the same
// findings as the json report.
func TestBlackboxNDJSONSameFindings(t *testing.T) {
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
	t.Logf("findings:\n%s", bbSummary(rep))
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

// SPEC 3.1/3.7: the state compares with the first v2 request, once per
// offending request: X,Y,Y is changed twice; X,Y,none is changed then
// dropped (expected X both times); none,X,Y is late twice (never changed:
// the first carried none).
func TestBlackboxStateIsTheFirstRequest(t *testing.T) {
	a := pcapgen.Ptr("orders-app")
	X, Y := bbID(bbX), bbID(bbY)
	for _, tc := range []struct {
		name  string
		steps []bbStep
		want  map[string]int
	}{
		{"X,Y,Y", []bbStep{{cid: a, id: X, kind: "m"}, {id: Y, kind: "m"}, {id: Y, kind: "m"}}, map[string]int{"instance-id-changed": 2}},
		{"X,Y,none", []bbStep{{cid: a, id: X, kind: "m"}, {id: Y, kind: "m"}, {kind: "m"}}, map[string]int{"instance-id-changed": 1, "instance-id-dropped": 1}},
		{"none,X,Y", []bbStep{{cid: a, kind: "m"}, {id: X, kind: "m"}, {id: Y, kind: "m"}}, map[string]int{"instance-id-late": 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			bbPlay(c, pcapgen.ConnOptions{}, tc.steps)
			rep := bbRun(t, c)
			bbExpect(t, rep, tc.want)
			for _, f := range rep.Findings {
				if f["rule"] != "instance-id-late" {
					bbField(t, f, "expected", bbJ(bbX))
				}
			}
		})
	}
}

// SPEC 3.5 broker-telemetry-id-echo "GetTelemetrySubscriptions with
// non-zero body ID answered with a non-zero ID" holds on row 5 too: a row-5
// request answered NONE with Y is mismatch + broker-accepted-invalid +
// broker-telemetry-id-echo.
func TestBlackboxRow5AcceptedWithEcho(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	bbPlay(c, pcapgen.ConnOptions{}, []bbStep{{cid: pcapgen.Ptr("orders-app"), id: bbID(bbX), kind: "g", r: bbY, b: bbY}})
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"telemetry-id-mismatch": 1, "broker-accepted-invalid": 1, "broker-telemetry-id-echo": 1})
}

// SPEC section 5: "frame is the 1-based packet number ... of the packet that
// completed the request". Requests cut into 20-byte segments, reordered and
// retransmitted: the frame is the one pcapgen reports as completing the
// request, and retransmitted bytes never count a request twice (3.7 "once
// per offending request").
func TestBlackboxFrameUnderSegmentation(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{Seed: 3, Perturb: pcapgen.Perturb{MSS: 20, Reorder: 3, RetransmitEvery: 2, OverlapEvery: 5}})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bbSession(cn, pcapgen.Ptr("orders-app"), bbID(bbX))
	bbAPIV(s, 0)
	s.Header.ClientID = nil
	s.Header.InstanceID = bbID(bbY)
	f1 := bbMeta(s)
	s.Header.InstanceID = nil
	f2 := bbMeta(s)
	cn.Close()
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"instance-id-changed": 1, "instance-id-dropped": 1})
	bbField(t, bbFirst(t, rep, "instance-id-changed"), "frame", f1)
	bbField(t, bbFirst(t, rep, "instance-id-dropped"), "frame", f2)
}

// SPEC section 2: "A connection joined mid-stream still yields findings";
// section 5: frame is "the packet that completed the request"; 3.5/3.7:
// broker-accepted-invalid once per offending request answered without 42.
// A KIP-1313 client joined mid-stream sends null client IDs (it sent its
// client ID once, before the capture started). Three PushTelemetry with
// header X and body Y (telemetry-id-mismatch, which does not depend on the
// first request), each answered NONE.
func TestBlackboxMidstreamNullClientIDFrames(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{NoSYN: true})
	s := bbSession(cn, nil, bbID(bbX))
	var frames []int
	for i := 0; i < 3; i++ {
		frames = append(frames, bbPush(s, bbY, 0))
	}
	cn.Close()
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"telemetry-id-mismatch": 3, "broker-accepted-invalid": 3})
	for i, f := range bbOf(rep, "telemetry-id-mismatch") {
		if i < len(frames) {
			bbField(t, f, "frame", frames[i])
		}
	}
}

// SPEC section 2: "A connection joined mid-stream still yields findings".
// A mid-stream connection with one request (null client ID, header X, body
// Y: telemetry-id-mismatch) answered NONE; with --port naming the broker
// port it is Kafka by configuration, not by guess.
func TestBlackboxMidstreamSingleRequest(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{NoSYN: true})
	s := bbSession(cn, nil, bbID(bbX))
	bbPush(s, bbY, 0)
	cn.Close()
	path := bbCaptureFile(t, c, "")
	for _, extra := range [][]string{nil, {"--port", "9092"}} {
		rep := bbRead(t, path, extra...)
		if n := len(bbOf(rep, "telemetry-id-mismatch")); n != 1 {
			t.Errorf("%v: telemetry-id-mismatch %d, spec requires 1 (requests decoded: %d)", extra, n, rep.Totals.Requests)
		}
		if n := len(bbOf(rep, "broker-accepted-invalid")); n != 1 {
			t.Errorf("%v: broker-accepted-invalid %d, spec requires 1", extra, n)
		}
	}
}

// SPEC 3.1 instance-id-malformed on a mid-stream connection of a KIP-1313
// client (null client IDs): "A connection joined mid-stream still yields
// findings".
func TestBlackboxMidstreamMalformed(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	bbPlay(c, pcapgen.ConnOptions{NoSYN: true}, []bbStep{
		{id: bbID(bbX), kind: "m"},
		{raw: []byte{1, 0, 3, 1, 2, 3}, kind: "m"},
		{id: bbID(bbX), kind: "p", r: bbX},
	})
	path := bbCaptureFile(t, c, "")
	for _, extra := range [][]string{nil, {"--port", "9092"}} {
		rep := bbRead(t, path, extra...)
		if n := len(bbOf(rep, "instance-id-malformed")); n != 1 {
			t.Errorf("%v: instance-id-malformed %d, spec requires 1 (requests decoded: %d of 3)", extra, n, rep.Totals.Requests)
		}
	}
}

// SPEC 3.7: "a null first client ID followed by a set one is
// client-id-missing-first only" -- also for a KIP-1313 client (header
// instance IDs), where the later set client ID must not also count as
// client-id-repeated or client-id-changed.
func TestBlackboxMissingFirstOnlyWithInstanceID(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	bbPlay(c, pcapgen.ConnOptions{}, []bbStep{
		{id: bbID(bbX), kind: "m"},
		{cid: pcapgen.Ptr("orders-app"), id: bbID(bbX), kind: "m"},
		{id: bbID(bbX), kind: "m"},
	})
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"client-id-missing-first": 1})
}
