package main

// Black-box scenarios (batch 8b): the report's per-client-instance rows and
// totals (JSON and text) for realistic multi-connection, multi-broker
// sessions of KIP-1313 and legacy clients, variants of such a session that
// each break one rule, collisions decided by claim lifetimes, the
// accepted-2026 profile end to end, dump fields of every decoded body,
// `kwatch rules RULE`, --fail-on levels, and several FILE arguments (a
// connection rotated across files, .gz). Expectations come from SPEC.md and
// README.md's "Rules: where SPEC.md is silent" only, never from kwatch's
// implementation.

import (
	"compress/gzip"
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

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kwatch/kwatch/internal/pcapgen"
)

// ------------------------------------------------------------------ helpers

// Kafka error codes (kerr).
const (
	bb8bNone           = 0
	bb8bCoordLoading   = 14
	bb8bUnknownMember  = 25
	bb8bInvalidRequest = 42
	bb8bFenced         = 110
	bb8bUnknownSub     = 117
)

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

func bb8bJ(id [16]byte) string { return pcapgen.JavaString(id) }

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

type bb8bReport struct {
	Profile string `json:"profile"`
	Totals  struct {
		Packets             int            `json:"packets"`
		Bytes               int            `json:"bytes"`
		Connections         int            `json:"connections"`
		KafkaConnections    int            `json:"kafka_connections"`
		Requests            int            `json:"requests"`
		Responses           int            `json:"responses"`
		ByHeaderVersion     map[string]int `json:"requests_by_header_version"`
		Coverage            map[string]int `json:"coverage"`
		Findings            int            `json:"findings"`
		ClientIDRepeats     int            `json:"client_id_repeats"`
		ClientIDRepeatBytes int            `json:"client_id_repeat_bytes"`
		Unobservable        int            `json:"unobservable_connections"`
	} `json:"totals"`
	Instances []bb8bRow   `json:"instances"`
	Findings  []bbFinding `json:"findings"`
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

func (r bb8bReport) summary() string {
	var b strings.Builder
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "  %s %s conf=%s frame=%d corr=%d conn=%s api=%s kip=%s exp=%q obs=%q\n",
			f.Rule, f.Severity, f.Confidence, f.Frame, f.CorrelationID, f.Conn.Client, f.API, f.KIP, f.Expected, f.Observed)
	}
	return b.String()
}

// bb8bExpect asserts exactly these rule counts (every other rule: zero).
func bb8bExpect(t *testing.T, rep bb8bReport, want map[string]int) {
	t.Helper()
	got := map[string]int{}
	for _, f := range rep.Findings {
		got[f.Rule]++
	}
	bbCompareCounts(t, "", got, want, rep.summary)
}

func bb8bOne(t *testing.T, rep bb8bReport, rule string) bbFinding {
	t.Helper()
	var out []bbFinding
	for _, f := range rep.Findings {
		if f.Rule == rule {
			out = append(out, f)
		}
	}
	if len(out) != 1 {
		t.Fatalf("%d %s findings, want 1:\n%s", len(out), rule, rep.summary())
	}
	return out[0]
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
		if r.InstanceID == bb8bJ(id) {
			return r
		}
	}
	t.Fatalf("no instance row %s among %d rows", bb8bJ(id), len(rep.Instances))
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

func bb8bMeta(s *pcapgen.Session) int {
	f, _ := s.RoundTrip(pcapgen.Metadata(12, "orders"), pcapgen.MetadataResponse(12, "10.0.0.1", 9092))
	return f
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

// bb8bCG is a ConsumerGroupHeartbeat v1 round trip; on success the answer
// echoes the member ID, as a coordinator does.
func bb8bCG(s *pcapgen.Session, group, member string, epoch int32, code int16, respEpoch int32) int {
	var m *string
	if code == bb8bNone {
		m = pcapgen.Ptr(member)
	}
	f, _ := s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(1, group, member, epoch), pcapgen.ConsumerGroupHeartbeatResponse(1, code, m, respEpoch))
	return f
}

func bb8bSG(s *pcapgen.Session, group, member string, epoch int32, code int16, respEpoch int32) int {
	var m *string
	if code == bb8bNone {
		m = pcapgen.Ptr(member)
	}
	f, _ := s.RoundTrip(pcapgen.ShareGroupHeartbeat(1, group, member, epoch), pcapgen.ShareGroupHeartbeatResponse(1, code, m, respEpoch))
	return f
}

func bb8bST(s *pcapgen.Session, group, member string, epoch int32, code int16, respEpoch int32) int {
	m := ""
	if code == bb8bNone {
		m = member
	}
	f, _ := s.RoundTrip(pcapgen.StreamsGroupHeartbeat(0, group, member, epoch), pcapgen.StreamsGroupHeartbeatResponse(0, code, m, respEpoch))
	return f
}

func bb8bGTS(s *pcapgen.Session, body [16]byte, code int16, assigned [16]byte, sub int32) int {
	f, _ := s.RoundTrip(pcapgen.GetTelemetrySubscriptions(body), pcapgen.GetTelemetrySubscriptionsResponse(code, assigned, sub))
	return f
}

func bb8bPush(s *pcapgen.Session, id [16]byte, sub int32, terminating bool, code int16) int {
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
	m := bb8bJ(x)
	cons := &bb8bProc{c: c, host: netip.MustParseAddr(bb8bHost), port: 52000, clientID: "orders-svc", inst: &x, sw: "apache-kafka-java", swv: "4.2.0"}
	prod := &bb8bProc{c: c, host: netip.MustParseAddr(bb8bHost), port: 53000, clientID: "orders-svc-producer", inst: &p, sw: "apache-kafka-java", swv: "4.2.0"}

	boot, sb, f := cons.dial(bb8bB1, 4)
	fr.bootAV = f
	bb8bMeta(sb)
	fr.n2Start = c.Frames() + 1
	n2, s2, f := cons.dial(bb8bB2, 5)
	fr.n2AV = f
	bb8bFindCoord(s2, bb8bGroup, bb8bB3)
	if vary["telemetry-body-zero"] {
		fr.gts = bb8bGTS(s2, bb8bZero, bb8bInvalidRequest, bb8bZero, 0)
		fr.gts2 = bb8bGTS(s2, x, bb8bNone, bb8bZero, 5)
	} else {
		fr.gts = bb8bGTS(s2, x, bb8bNone, bb8bZero, 5)
	}
	boot.Close()

	fr.prodStart = c.Frames() + 1
	pc, ps, f := prod.dial(bb8bB1, 5)
	fr.prodAV = f
	bb8bMeta(ps)
	bb8bGTS(ps, p, bb8bNone, bb8bZero, 6)
	bb8bProduce(ps)

	fr.coordStart = c.Frames() + 1
	co, sc, f := cons.dial(bb8bB3, 4)
	fr.coordAV = f
	bb8bCG(sc, bb8bGroup, m, 0, bb8bCoordLoading, 0)
	bb8bCG(sc, bb8bGroup, m, 0, bb8bNone, 1)
	fr.fetchStart = c.Frames() + 1
	if vary["repeat-client-id"] {
		cons.repeat = true
	}
	n3, s3, f := cons.dial(bb8bB3, 4)
	cons.repeat = false
	fr.n3AV = f
	fr.fetch = bb8bFetch(s3)
	bb8bCG(sc, bb8bGroup, m, 1, bb8bNone, 2)
	fr.push = bb8bPush(s2, x, 5, false, bb8bNone)
	if vary["push-mismatch"] {
		// The producer pushes its metrics with the consumer's ID.
		fr.prodPush = bb8bPush(ps, x, 6, false, bb8bInvalidRequest)
	}
	bb8bProduce(ps)
	bb8bCG(sc, bb8bGroup, m, 2, bb8bFenced, 0)
	rejoin := m
	if vary["rejoin-new-id"] {
		rejoin = bb8bJ(bb8bY)
	}
	fr.rejoin = bb8bCG(sc, bb8bGroup, rejoin, 0, bb8bNone, 4)
	bb8bSG(sc, bb8bShare, m, 0, bb8bNone, 1)
	bb8bST(sc, bb8bStreams, m, 0, bb8bNone, 1)
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
		fr.hostBJoin = bb8bCG(ts, bb8bGroup, m, 0, bb8bNone, 5)
		bb8bCG(ts, bb8bGroup, m, 5, bb8bNone, 5)
		bb8bCG(ts, bb8bGroup, m, -1, bb8bNone, -1)
		tc.Close()
	}
	bb8bCG(sc, bb8bGroup, rejoin, 4, bb8bNone, 5)
	bb8bSG(sc, bb8bShare, m, 1, bb8bNone, 1)
	bb8bST(sc, bb8bStreams, m, 1, bb8bNone, 1)
	fr.produceV8 = bb8bProduceV8(s3)
	bb8bCG(sc, bb8bGroup, rejoin, -1, bb8bNone, -1)
	bb8bSG(sc, bb8bShare, m, -1, bb8bNone, -1)
	if vary["streams-leave-empty"] {
		fr.stLeave = bb8bST(sc, bb8bStreams, "", -1, bb8bUnknownMember, 0)
	} else {
		fr.stLeave = bb8bST(sc, bb8bStreams, m, -1, bb8bNone, -1)
	}
	bb8bPush(s2, x, 5, true, bb8bNone)
	bb8bPush(ps, p, 6, true, bb8bNone)
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
	m := bb8bJ(bb8bX)
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
		MemberIDs: map[string][]string{}, TelemetryID: bb8bJ(bb8bP),
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
func TestBB8BReferenceSessionRows(t *testing.T) {
	c, _ := bb8bSession(nil)
	rep, path := bb8bRun(t, c)
	bb8bExpect(t, rep, nil)
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
func TestBB8BReferenceSessionText(t *testing.T) {
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
		blk := bb8bTextBlock(out, bb8bJ(id))
		if blk == "" {
			t.Errorf("text report has no row for %s:\n%s", bb8bJ(id), out)
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
				t.Errorf("row %s lacks %q:\n%s", bb8bJ(id), s, blk)
			}
		}
		if !regexp.MustCompile(fmt.Sprintf(`connections\s+%d\b`, want.Connections)).MatchString(blk) {
			t.Errorf("row %s does not give %d connections:\n%s", bb8bJ(id), want.Connections, blk)
		}
	}
}

// ------------------------------------------- (1) one finding per variant

// Variant: a copy of the consumer runs on a second host with the same
// instance ID (and client ID) and joins the group with the same member ID.
// SPEC 3.1 instance-id-shared (warn): "one instance ID is used from two
// different client hosts"; 3.7: "once per instance ID", "at the first
// request that shows it" (the copy's ApiVersions). SPEC 3.4
// member-id-collision needs "two different client instances (different
// instance IDs ...)" and README 7: "Claimants are instance IDs": one
// instance ID is one claimant, so no collision. Exactly one finding; the
// row of X names both hosts, five connections, and the finding.
func TestBB8BVariantSharedHost(t *testing.T) {
	c, fr := bb8bSession(map[string]bool{"shared-host": true})
	rep, _ := bb8bRun(t, c)
	bb8bExpect(t, rep, map[string]int{"instance-id-shared": 1})
	f := bb8bOne(t, rep, "instance-id-shared")
	bb8bCheck(t, f, bb8bWant{severity: "warn", confidence: "full", kip: "KIP-1313", frame: fr.hostBAV,
		client: "10.30.0.6:52000", broker: bb8bB3.String(), api: "ApiVersions"})
	if f.InstanceID != bb8bJ(bb8bX) {
		t.Errorf("instance_id %q, want %s", f.InstanceID, bb8bJ(bb8bX))
	}
	want := bb8bConsumerRow()
	want.ClientHosts = append(want.ClientHosts, "10.30.0.6")
	want.Connections = 5
	want.Findings = map[string]int{"instance-id-shared": 1}
	bb8bCheckRow(t, "consumer", bb8bRowOf(t, rep, bb8bX), want)
	bb8bCheckRow(t, "producer", bb8bRowOf(t, rep, bb8bP), bb8bProducerRow())
}

// Variant: the node connection's first GetTelemetrySubscriptions has header
// X and body 0, answered INVALID_REQUEST; the retry has body X. SPEC 3.3
// table row 4 ("H | 0 | INVALID_REQUEST"): telemetry-id-requested-with-header
// (error), once for that request (3.7); the broker rejected it, so no
// broker-accepted-invalid (3.5). The retry is row 3, aligned.
func TestBB8BVariantTelemetryBodyZero(t *testing.T) {
	c, fr := bb8bSession(map[string]bool{"telemetry-body-zero": true})
	rep, _ := bb8bRun(t, c)
	bb8bExpect(t, rep, map[string]int{"telemetry-id-requested-with-header": 1})
	f := bb8bOne(t, rep, "telemetry-id-requested-with-header")
	bb8bCheck(t, f, bb8bWant{severity: "error", confidence: "full", frame: fr.gts,
		client: "10.30.0.5:52001", broker: bb8bB2.String(), api: "GetTelemetrySubscriptions"})
	if f.APIKey != 71 {
		t.Errorf("api_key %d, want 71", f.APIKey)
	}
	want := bb8bConsumerRow()
	want.Findings = map[string]int{"telemetry-id-requested-with-header": 1}
	bb8bCheckRow(t, "consumer", bb8bRowOf(t, rep, bb8bX), want)
}

// Variant: on the fetch connection the consumer repeats its client ID on
// its three later requests (Fetch, Fetch and a header-v1 Produce). SPEC 3.2
// client-id-repeated (info): a client that sends header instance IDs "still
// repeats the client ID on later requests; the finding counts the bytes
// that sending null would save"; 3.7 "once per connection, when the
// connection ends"; README 12: its api is empty, api_key, api_version and
// correlation_id -1, frame the packet that ended the connection (its second
// FIN); README 4: "its observed value gives the request count and the bytes
// null would save" (3 requests, 3 x 10 bytes of "orders-svc").
func TestBB8BVariantRepeatClientID(t *testing.T) {
	c, fr := bb8bSession(map[string]bool{"repeat-client-id": true})
	rep, _ := bb8bRun(t, c)
	bb8bExpect(t, rep, map[string]int{"client-id-repeated": 1})
	f := bb8bOne(t, rep, "client-id-repeated")
	bb8bCheck(t, f, bb8bWant{severity: "info", confidence: "full", kip: "KIP-1313", frame: fr.n3End,
		client: "10.30.0.5:52003", broker: bb8bB3.String()})
	if f.API != "" || f.APIKey != -1 || f.APIVersion != -1 || f.CorrelationID != -1 {
		t.Errorf("api %q api_key %d api_version %d correlation_id %d, README 12 requires \"\", -1, -1, -1", f.API, f.APIKey, f.APIVersion, f.CorrelationID)
	}
	if nums := regexp.MustCompile(`\d+`).FindAllString(f.Observed, -1); fmt.Sprint(nums) != "[3 30]" {
		t.Errorf("observed %q: numbers %v, want 3 requests and 30 bytes", f.Observed, nums)
	}
	if rep.Totals.ClientIDRepeats != 3 || rep.Totals.ClientIDRepeatBytes != 30 {
		t.Errorf("totals client_id_repeats %d bytes %d, want 3 and 30", rep.Totals.ClientIDRepeats, rep.Totals.ClientIDRepeatBytes)
	}
	want := bb8bConsumerRow()
	want.Findings = map[string]int{"client-id-repeated": 1}
	bb8bCheckRow(t, "consumer", bb8bRowOf(t, rep, bb8bX), want)
}

// Variant: the streams leave is sent with an empty member ID and answered
// UNKNOWN_MEMBER_ID. SPEC 3.4 leave-without-member-id (error): "a leave
// carries an empty member ID"; 3.7: "an empty member ID gives only
// member-id-empty or leave-without-member-id (and 3.5 rules), no other
// member rule"; 3.5 broker-accepted-invalid covers "the error rules of 3.1,
// 3.3, member-id-empty", not leaves (and the broker did reject it).
func TestBB8BVariantStreamsLeaveEmpty(t *testing.T) {
	c, fr := bb8bSession(map[string]bool{"streams-leave-empty": true})
	rep, _ := bb8bRun(t, c)
	bb8bExpect(t, rep, map[string]int{"leave-without-member-id": 1})
	f := bb8bOne(t, rep, "leave-without-member-id")
	bb8bCheck(t, f, bb8bWant{severity: "error", confidence: "full", kip: "KIP-1082", frame: fr.stLeave,
		client: "10.30.0.5:52002", broker: bb8bB3.String(), api: "StreamsGroupHeartbeat"})
	want := bb8bConsumerRow()
	want.Findings = map[string]int{"leave-without-member-id": 1}
	bb8bCheckRow(t, "consumer", bb8bRowOf(t, rep, bb8bX), want)
}

// Variant: after FENCED_MEMBER_EPOCH the consumer rejoins with a new member
// ID (Java form of another UUID). SPEC 3.4 member-id-changed (warn): "a
// member ID lives as long as the process, across leave and rejoin and after
// fencing"; README 6: "A successful answer to any heartbeat of A proves A's
// join ... a join with B after either is a rejoin, member-id-changed" (no
// ghost-member). The new ID is not Java(X): member-id-misaligned (warn),
// once for its (connection, group, member ID). The row's member IDs by
// group list both IDs of group "orders".
func TestBB8BVariantRejoinNewID(t *testing.T) {
	c, fr := bb8bSession(map[string]bool{"rejoin-new-id": true})
	rep, _ := bb8bRun(t, c)
	bb8bExpect(t, rep, map[string]int{"member-id-changed": 1, "member-id-misaligned": 1})
	for _, r := range []string{"member-id-changed", "member-id-misaligned"} {
		f := bb8bOne(t, rep, r)
		bb8bCheck(t, f, bb8bWant{severity: "warn", confidence: "full", frame: fr.rejoin,
			client: "10.30.0.5:52002", broker: bb8bB3.String(), api: "ConsumerGroupHeartbeat"})
	}
	want := bb8bConsumerRow()
	want.MemberIDs[bb8bGroup] = []string{bb8bJ(bb8bX), bb8bJ(bb8bY)}
	want.Findings = map[string]int{"member-id-changed": 1, "member-id-misaligned": 1}
	bb8bCheckRow(t, "consumer", bb8bRowOf(t, rep, bb8bX), want)
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
	m1, m2 := bb8bJ(pcapgen.SeqUUID(0x85)), bb8bJ(pcapgen.SeqUUID(0x96))
	c1 := &bb8bProc{c: c, host: netip.MustParseAddr("10.40.0.5"), port: 41000, clientID: "legacy-c", sw: "apache-kafka-java", swv: "3.9.0"}
	pr := &bb8bProc{c: c, host: netip.MustParseAddr("10.40.0.5"), port: 42000, clientID: "legacy-p", sw: "librdkafka", swv: "2.6.0"}
	c2 := &bb8bProc{c: c, host: netip.MustParseAddr("10.40.0.6"), port: 41000, clientID: "legacy-c", sw: "apache-kafka-java", swv: "3.9.0"}

	boot, sb, _ := c1.dial(bb8bB1, 3)
	bb8bMeta(sb) // 1 repeat
	n2, s2, _ := c1.dial(bb8bB2, 3)
	bb8bFindCoord(s2, bb8bGroup, bb8bB3)
	bb8bGTS(s2, bb8bZero, bb8bNone, bb8bB, 7)
	bb8bPush(s2, bb8bB, 7, false, bb8bNone) // 3 repeats
	boot.Close()
	pc, ps, _ := pr.dial(bb8bB1, 3)
	co1, sc1, _ := c1.dial(bb8bB3, 3)
	co2, sc2, _ := c2.dial(bb8bB3, 3)
	bb8bCG(sc1, bb8bGroup, m1, 0, bb8bNone, 1)
	bb8bCG(sc2, bb8bGroup, m2, 0, bb8bNone, 2)
	bb8bProduce(ps)
	bb8bCG(sc1, bb8bGroup, m1, 1, bb8bNone, 3)
	bb8bCG(sc2, bb8bGroup, m2, 2, bb8bNone, 3)
	bb8bProduce(ps)                              // 2 repeats
	bb8bCG(sc1, bb8bGroup, m1, -1, bb8bNone, -1) // 3 repeats
	bb8bCG(sc2, bb8bGroup, m2, -1, bb8bNone, -1) // 3 repeats
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
func TestBB8BLegacyRowsByHostAndClientID(t *testing.T) {
	c, m1, m2 := bb8bLegacyFleet()
	rep, _ := bb8bRun(t, c)
	bb8bExpect(t, rep, nil)
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
			MemberIDs: map[string][]string{bb8bGroup: {m1}}, TelemetryID: bb8bJ(bb8bB)},
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

// ------------------------------------ (2) collisions and claim lifetimes

// SPEC 3.4 member-id-collision: "two different client instances (different
// instance IDs ...) alive at the same time use the same member ID in the
// same group"; README 7: "a claim is alive while the claimant's latest
// connection is open". Instance X joins with Java(X) on its coordinator
// connection, then opens a fetch connection; the coordinator connection
// closes (the coordinator moved) while the fetch connection stays open, so
// X is alive. Instance Y (another host) then joins with the same member ID:
// one collision (error) at Y's join, plus member-id-misaligned there (the
// ID is not Java(Y)). Case "gone": X's fetch connection closed too before
// Y's join: X is not alive, no collision, only the misalignment.
func TestBB8BCollisionClaimLivesOnLatestConnection(t *testing.T) {
	for _, gone := range []bool{false, true} {
		t.Run(fmt.Sprintf("gone=%v", gone), func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			x, y := bb8bX, bb8bY
			m := bb8bJ(x)
			px := &bb8bProc{c: c, host: netip.MustParseAddr("10.50.0.5"), port: 43000, clientID: "app-x", inst: &x, sw: "apache-kafka-java", swv: "4.2.0"}
			py := &bb8bProc{c: c, host: netip.MustParseAddr("10.50.0.6"), port: 43000, clientID: "app-y", inst: &y, sw: "apache-kafka-java", swv: "4.2.0"}
			co, sc, _ := px.dial(bb8bB3, 4)
			bb8bCG(sc, bb8bGroup, m, 0, bb8bNone, 1)
			fc, sf, _ := px.dial(bb8bB2, 4)
			bb8bFetch(sf)
			bb8bCG(sc, bb8bGroup, m, 1, bb8bNone, 2)
			co.Close()
			bb8bFetch(sf)
			if gone {
				fc.Close()
			}
			cy, sy, _ := py.dial(bb8bB3, 4)
			jf := bb8bCG(sy, bb8bGroup, m, 0, bb8bNone, 3)
			bb8bCG(sy, bb8bGroup, m, 3, bb8bNone, 3)
			if !gone {
				bb8bFetch(sf)
				fc.Close()
			}
			cy.Close()
			rep, _ := bb8bRun(t, c)
			want := map[string]int{"member-id-misaligned": 1}
			if !gone {
				want["member-id-collision"] = 1
			}
			bb8bExpect(t, rep, want)
			for r := range want {
				f := bb8bOne(t, rep, r)
				bb8bCheck(t, f, bb8bWant{frame: jf, client: "10.50.0.6:43000", broker: bb8bB3.String(), confidence: "full"})
			}
			if !gone {
				bb8bCheck(t, bb8bOne(t, rep, "member-id-collision"), bb8bWant{severity: "error", kip: "KIP-1082"})
			}
		})
	}
}

// SPEC 3.4 member-id-collision between clients without instance IDs:
// claimants are "different client host:port without instance IDs, alive at
// the same time"; README 7: "a claim is alive while the claimant's latest
// connection is open". Host A joins with M, heartbeats and leaves the group
// (epoch -1) but keeps its connection open; host B then joins with M while
// A's connection is open: both alive, one collision at B's join. Case
// "closed": A's connection closed before B connected: "not alive at the
// same time", nothing.
func TestBB8BCollisionLegacyLeftButOpen(t *testing.T) {
	for _, closed := range []bool{false, true} {
		t.Run(fmt.Sprintf("closed=%v", closed), func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			m := bb8bJ(pcapgen.SeqUUID(0xa7))
			pa := &bb8bProc{c: c, host: netip.MustParseAddr("10.60.0.5"), port: 44000, clientID: "rdk", sw: "librdkafka", swv: "2.3.0"}
			pb := &bb8bProc{c: c, host: netip.MustParseAddr("10.60.0.6"), port: 44000, clientID: "rdk", sw: "librdkafka", swv: "2.3.0"}
			ca, sa, _ := pa.dial(bb8bB3, 3)
			bb8bCG(sa, bb8bGroup, m, 0, bb8bNone, 1)
			bb8bCG(sa, bb8bGroup, m, 1, bb8bNone, 1)
			bb8bCG(sa, bb8bGroup, m, -1, bb8bNone, -1)
			if closed {
				ca.Close()
			}
			cb, sb, _ := pb.dial(bb8bB3, 3)
			jf := bb8bCG(sb, bb8bGroup, m, 0, bb8bNone, 2)
			bb8bCG(sb, bb8bGroup, m, 2, bb8bNone, 2)
			if !closed {
				bb8bMeta(sa)
				ca.Close()
			}
			cb.Close()
			rep, _ := bb8bRun(t, c)
			if closed {
				bb8bExpect(t, rep, nil)
				return
			}
			bb8bExpect(t, rep, map[string]int{"member-id-collision": 1})
			bb8bCheck(t, bb8bOne(t, rep, "member-id-collision"), bb8bWant{severity: "error", confidence: "full", frame: jf,
				client: "10.60.0.6:44000", broker: bb8bB3.String(), api: "ConsumerGroupHeartbeat"})
		})
	}
}

// ------------------------------------------------------ (3) accepted-2026

// SPEC 4: under accepted-2026 "instance-id-dropped and instance-id-late are
// off", and the header version "must come from a table keyed by API key and
// version, with kmsg's flexible/non-flexible knowledge as the default and an
// override list for v3"; README 10: "Only v3 requests feed the instance-ID
// state". The reference session (compliant under seed) has no v3 request
// (no OffsetDelete), so under accepted-2026 no header rule can fire; its
// telemetry is aligned (3.3 row 3, or row 2 if the v2 header ID is ignored)
// and no client ID is repeated. SPEC 3: profiles "may change which rules run
// and their severity, never their meaning": still no finding, exit 0 with
// --fail-on info, the same totals, no connection unobservable (all start
// with a SYN).
func TestBB8BAccepted2026ReferenceSession(t *testing.T) {
	c, _ := bb8bSession(nil)
	rep, path := bb8bRun(t, c, "--profile", "accepted-2026")
	bb8bExpect(t, rep, nil)
	if rep.Profile != "accepted-2026" {
		t.Errorf("profile %q", rep.Profile)
	}
	if code, _, errOut := runKwatch("read", "--profile", "accepted-2026", "--fail-on", "info", path); code != 0 {
		t.Errorf("accepted-2026 --fail-on info: exit %d (%s)", code, errOut)
	}
	if hv := rep.Totals.ByHeaderVersion; hv["v1"] != 1 || hv["v2"] != 30 || hv["v3"] != 0 {
		t.Errorf("requests_by_header_version %v, want v1:1 v2:30 v3:0", hv)
	}
	if rep.Totals.Unobservable != 0 {
		t.Errorf("unobservable_connections %d, want 0", rep.Totals.Unobservable)
	}
}

// bb8bOffsetDelete sends OffsetDelete v1 (SPEC 4: "the first v3 user is
// OffsetDelete v1") with a v3 header carrying id (nil: absent) and returns
// the completing frame; the broker answers NONE.
func bb8bOffsetDelete(s *pcapgen.Session, id *[16]byte) int {
	s.Header.HeaderVersion = 3
	s.Header.InstanceID = id
	r := kmsg.NewPtrOffsetDeleteRequest()
	r.Version = 1
	r.Group = bb8bGroup
	corr, f := s.Request(r)
	s.Header.HeaderVersion = pcapgen.HeaderAuto
	s.Header.InstanceID = nil
	resp := kmsg.NewPtrOffsetDeleteResponse()
	resp.Version = 1
	s.Respond(corr, resp)
	return f
}

// An accepted-2026 admin client end to end on three connections.
//   - A (from its SYN): ApiVersions (v2 header, client ID, no instance ID),
//     OffsetDelete v1 with X (its first v3 request: compliant), OffsetDelete
//     v1 with X again: instance-id-repeated (info) (SPEC 4: the ID is
//     required on the first request "and omits it afterwards").
//   - B (joined mid-stream, no handshake): OffsetDelete v1 without an ID:
//     "A connection whose first request was not seen is "identity
//     unobservable" under this profile: never non-compliant on that
//     ground"; README 10: "counted in the totals and never
//     instance-id-missing-first"; SPEC 3.6 midstream-join.
//   - C (from its SYN): OffsetDelete v1 without an ID first:
//     instance-id-missing-first ("error: the first v3 request has none"),
//     full confidence; then OffsetDelete with X: late is off, no finding.
//
// Exit 1 by default (an error finding), 0 with --fail-on never. Under seed
// OffsetDelete v1 is non-flexible, header v1 (exempt, SPEC 2): no finding.
func TestBB8BAccepted2026AdminEndToEnd(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	x := bb8bX
	host := netip.MustParseAddr("10.70.0.5")
	ca := c.Conn(pcapgen.ConnOptions{Client: netip.AddrPortFrom(host, 45001), Broker: bb8bB1})
	sa := ca.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("admin-1"), CorrelationID: 1})
	sa.RoundTrip(pcapgen.APIVersions(4, "apache-kafka-java", "4.3.0"), pcapgen.APIVersionsResponse(4))
	sa.Header.ClientID = nil
	bb8bOffsetDelete(sa, &x)
	repF := bb8bOffsetDelete(sa, &x)
	cb := c.Conn(pcapgen.ConnOptions{Client: netip.AddrPortFrom(host, 45002), Broker: bb8bB2, NoSYN: true})
	sb := cb.Session(pcapgen.RequestHeader{ClientID: nil, CorrelationID: 40})
	bb8bOffsetDelete(sb, nil)
	bb8bOffsetDelete(sb, nil)
	cc := c.Conn(pcapgen.ConnOptions{Client: netip.AddrPortFrom(host, 45003), Broker: bb8bB3})
	sc := cc.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("admin-1"), CorrelationID: 1})
	missF := bb8bOffsetDelete(sc, nil)
	sc.Header.ClientID = nil
	bb8bOffsetDelete(sc, &x)
	ca.Close()
	cb.Close()
	cc.Close()
	rep, path := bb8bRun(t, c, "--profile", "accepted-2026")
	bb8bExpect(t, rep, map[string]int{"instance-id-repeated": 1, "instance-id-missing-first": 1})
	bb8bCheck(t, bb8bOne(t, rep, "instance-id-repeated"), bb8bWant{severity: "info", confidence: "full", frame: repF,
		client: "10.70.0.5:45001", broker: bb8bB1.String(), api: "OffsetDelete"})
	bb8bCheck(t, bb8bOne(t, rep, "instance-id-missing-first"), bb8bWant{severity: "error", confidence: "full", frame: missF,
		client: "10.70.0.5:45003", broker: bb8bB3.String(), api: "OffsetDelete"})
	if rep.Totals.Unobservable != 1 {
		t.Errorf("unobservable_connections %d, want 1 (connection B)", rep.Totals.Unobservable)
	}
	if rep.Totals.Coverage["midstream-join"] != 1 {
		t.Errorf("coverage midstream-join %d, want 1", rep.Totals.Coverage["midstream-join"])
	}
	if hv := rep.Totals.ByHeaderVersion; hv["v2"] != 1 || hv["v3"] != 6 {
		t.Errorf("requests_by_header_version %v, want v2:1 v3:6", hv)
	}
	if code, _, _ := runKwatch("read", "--profile", "accepted-2026", path); code != 1 {
		t.Errorf("accepted-2026 default --fail-on: exit %d, want 1", code)
	}
	if code, _, _ := runKwatch("read", "--profile", "accepted-2026", "--fail-on", "never", path); code != 0 {
		t.Errorf("accepted-2026 --fail-on never: exit %d, want 0", code)
	}
	seed := bb8bRead(t, path)
	bb8bExpect(t, seed, nil)
	if code, _, _ := runKwatch("read", path); code != 0 {
		t.Errorf("seed: exit %d, want 0", code)
	}
}

// ---------------------------------------------------------------- (4) dump

// bb8bDump runs `kwatch dump --format ndjson` and returns its objects by
// kind and frame.
func bb8bDump(t *testing.T, args ...string) []map[string]any {
	t.Helper()
	all := append([]string{"dump", "--format", "ndjson"}, args...)
	code, out, errOut := runKwatch(all...)
	if code != 0 {
		t.Fatalf("kwatch %v: exit %d (%s)", all, code, errOut)
	}
	var objs []map[string]any
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if line == "" {
			continue
		}
		objs = append(objs, bb3Decode(t, line).(map[string]any))
	}
	return objs
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
func TestBB8BDumpBodyFieldsEveryBody(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	x := bb8bX
	m := bb8bJ(x)
	cn := c.Conn(pcapgen.ConnOptions{Client: netip.MustParseAddrPort("10.80.0.5:46000"), Broker: bb8bB1})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("dump-8b"), InstanceID: &x, CorrelationID: 1})
	avResp := pcapgen.APIVersionsResponse(5)
	avResp.ErrorCode = 35
	avF, avRF := s.RoundTrip(pcapgen.APIVersions(5, "apache-kafka-java", "4.3.0-rc1"), avResp)
	s.Header.ClientID = nil
	cgF, cgRF := s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(1, "cg8", m, 7), pcapgen.ConsumerGroupHeartbeatResponse(1, bb8bFenced, nil, 0))
	sgF, sgRF := s.RoundTrip(pcapgen.ShareGroupHeartbeat(1, "sg8", m, 0), pcapgen.ShareGroupHeartbeatResponse(1, bb8bNone, &m, 4))
	stF, stRF := s.RoundTrip(pcapgen.StreamsGroupHeartbeat(0, "st8", m, 0), pcapgen.StreamsGroupHeartbeatResponse(0, bb8bNone, m, 9))
	gtF, gtRF := s.RoundTrip(pcapgen.GetTelemetrySubscriptions(x), pcapgen.GetTelemetrySubscriptionsResponse(bb8bInvalidRequest, bb8bZero, 0))
	puF, puRF := s.RoundTrip(pcapgen.PushTelemetry(x, 12), pcapgen.PushTelemetryResponse(bb8bUnknownSub))
	saResp := pcapgen.SaslHandshakeResponse(1, "PLAIN")
	saResp.ErrorCode = 33
	_, saRF := s.RoundTrip(pcapgen.SaslHandshake(1, "GSSAPI"), saResp)
	cn.Close()
	objs := bb8bDump(t, bbCaptureFile(t, c, "dump8b.pcap"))
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
	for frame, kvs := range want {
		o := byFrame[frame]
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
				t.Errorf("frame %d %v %v: %s = %v, spec requires %v", frame, o["kind"], o["api"], k, v, w)
			}
		}
	}
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

// --------------------------------------------------------------- (4) rules

// SPEC 6: "kwatch rules [RULE]   every rule with its severity, KIP and
// explanation". For every rule of sections 3 and 4, `kwatch rules RULE`
// exits 0 and names the rule, the severity of its table (member-id-encoding:
// "info, warn if it holds '+' or '/'"), its KIP (3.1, 3.2 and section 4:
// KIP-1313; 3.4 "Member IDs (KIP-1082, seed 003) and their alignment
// (KIP-1313)"; 3.3 "KIP-714 as changed by KIP-1313"; 3.5 the KIP of what it
// judges), and the same severity and KIP as the `kwatch rules` listing.
func TestBB8BRulesEveryRule(t *testing.T) {
	type r struct{ sev, kip string }
	any3 := "KIP-714|KIP-1313|KIP-1082"
	rules := map[string]r{
		"instance-id-dropped": {"error", "KIP-1313"}, "instance-id-changed": {"error", "KIP-1313"},
		"instance-id-late": {"error", "KIP-1313"}, "instance-id-malformed": {"error", "KIP-1313"},
		"instance-id-reserved": {"warn", "KIP-1313"}, "instance-id-shared": {"warn", "KIP-1313"},
		"client-id-changed": {"warn", "KIP-1313"}, "client-id-missing-first": {"warn", "KIP-1313"},
		"client-id-repeated":                 {"info", "KIP-1313"},
		"telemetry-id-requested-with-header": {"error", "KIP-714|KIP-1313"}, "telemetry-id-mismatch": {"error", "KIP-714|KIP-1313"},
		"telemetry-id-zero-push": {"error", "KIP-714|KIP-1313"}, "telemetry-id-not-adopted": {"warn", "KIP-714|KIP-1313"},
		"member-id-empty": {"error", "KIP-1082"}, "leave-without-member-id": {"error", "KIP-1082"},
		"member-id-changed": {"warn", "KIP-1082"}, "ghost-member": {"error", "KIP-1082"},
		"member-id-collision": {"error", "KIP-1082"}, "member-id-not-uuid": {"warn", "KIP-1082"},
		"member-id-encoding": {"info", "KIP-1082"}, "member-id-not-v4": {"info", "KIP-1082"},
		"member-id-misaligned": {"warn", "KIP-1313"}, "member-id-alignment-encoding": {"info", "KIP-1313"},
		"broker-accepted-invalid": {"warn", any3}, "broker-generated-member-id": {"warn", "KIP-1082"},
		"broker-telemetry-id-echo": {"info", "KIP-714|KIP-1313"}, "broker-telemetry-id-missing": {"error", "KIP-714|KIP-1313"},
		"instance-id-missing-first": {"error", "KIP-1313"}, "instance-id-repeated": {"info", "KIP-1313"},
	}
	code, list, errOut := runKwatch("rules")
	if code != 0 {
		t.Fatalf("rules: exit %d (%s)", code, errOut)
	}
	listed := map[string][]string{}
	for _, l := range strings.Split(list, "\n") {
		if f := strings.Fields(l); len(f) >= 3 {
			listed[f[0]] = f
		}
	}
	for id, w := range rules {
		code, out, errOut := runKwatch("rules", id)
		if code != 0 || errOut != "" {
			t.Errorf("rules %s: exit %d stderr %q", id, code, errOut)
			continue
		}
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(id) + `\b`).MatchString(out) {
			t.Errorf("rules %s does not name the rule:\n%s", id, out)
		}
		if !regexp.MustCompile(`\b` + w.sev + `\b`).MatchString(out) {
			t.Errorf("rules %s does not give severity %s:\n%s", id, w.sev, out)
		}
		kipRE := regexp.MustCompile(`\b(` + w.kip + `)\b`)
		if !kipRE.MatchString(out) {
			t.Errorf("rules %s does not name %s:\n%s", id, w.kip, out)
		}
		if len(strings.TrimSpace(out)) < len(id)+40 {
			t.Errorf("rules %s gives no explanation:\n%s", id, out)
		}
		f := listed[id]
		if f == nil {
			t.Errorf("rules listing lacks %s", id)
			continue
		}
		if f[1] != w.sev || !kipRE.MatchString(f[2]) {
			t.Errorf("rules listing %s: severity %s KIP %s, want %s %s", id, f[1], f[2], w.sev, w.kip)
		}
		if m := kipRE.FindString(out); m != "" && m != f[2] {
			t.Errorf("rules %s names %s, the listing %s", id, m, f[2])
		}
	}
}

// ---------------------------------------------------- (4) --fail-on levels

// SPEC 5: "Exit status of offline analysis: 0 when no finding reaches
// --fail-on (default error), 1 when one does"; SPEC 6 --fail-on
// error|warn|info|never and --format text|json|ndjson. Four variants of the
// reference session whose only finding is of a known severity: none,
// error (leave-without-member-id), warn (instance-id-shared), info
// (client-id-repeated).
func TestBB8BFailOnEveryLevel(t *testing.T) {
	rank := map[string]int{"": 0, "info": 1, "warn": 2, "error": 3}
	caps := []struct {
		vary string
		top  string
	}{{"", ""}, {"streams-leave-empty", "error"}, {"shared-host", "warn"}, {"repeat-client-id", "info"}}
	for _, cp := range caps {
		c, _ := bb8bSession(map[string]bool{cp.vary: cp.vary != ""})
		path := bbCaptureFile(t, c, "v-"+cp.vary+".pcap")
		for _, level := range []string{"", "error", "warn", "info", "never"} {
			want := 0
			lv := level
			if lv == "" {
				lv = "error"
			}
			if lv != "never" && cp.top != "" && rank[cp.top] >= rank[lv] {
				want = 1
			}
			for _, format := range []string{"text", "json", "ndjson"} {
				args := []string{"read", "--format", format}
				if level != "" {
					args = append(args, "--fail-on", level)
				}
				code, _, errOut := runKwatch(append(args, path)...)
				if code != want {
					t.Errorf("%q capture (top severity %q), --fail-on %q --format %s: exit %d, want %d (%s)", cp.vary, cp.top, level, format, code, want, errOut)
				}
			}
		}
	}
}

// ---------------------------------------------- (4) several FILE arguments

// bb8bWritePart writes packets[from:to] of c as one file: pcapng when the
// name says so, else pcap; gzipped when it ends in ".gz".
func bb8bWritePart(t *testing.T, c *pcapgen.Capture, name string, from, to int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var w interface{ Write([]byte) (int, error) } = f
	var zw *gzip.Writer
	if strings.HasSuffix(name, ".gz") {
		zw = gzip.NewWriter(f)
		w = zw
	}
	pk := c.Packets()[from:to]
	if strings.Contains(name, ".pcapng") {
		ng, err := pcapgo.NewNgWriter(w, layers.LinkTypeEthernet)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pk {
			ci := gopacket.CaptureInfo{Timestamp: p.Time, CaptureLength: len(p.Data), Length: len(p.Data)}
			if err := ng.WritePacket(ci, p.Data); err != nil {
				t.Fatal(err)
			}
		}
		if err := ng.Flush(); err != nil {
			t.Fatal(err)
		}
	} else {
		pw := pcapgo.NewWriter(w)
		if err := pw.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
			t.Fatal(err)
		}
		for _, p := range pk {
			ci := gopacket.CaptureInfo{Timestamp: p.Time, CaptureLength: len(p.Data), Length: len(p.Data)}
			if err := pw.WritePacket(ci, p.Data); err != nil {
				t.Fatal(err)
			}
		}
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// README: "Several files are read in order as one capture (rotated tcpdump
// -C files): frame numbers continue from one file to the next, as mergecap
// -a numbers them"; SPEC 6: "pcap or pcapng (also .gz)". tcpdump -C rotates
// in the middle of connections, so reading the rotated files must give the
// report of the unrotated capture: the same findings (frames, times,
// confidence: no midstream-join for connections continuing in the next
// file), rows and totals. The reference session with two variants
// (client-id-repeated, member-id-changed + misaligned) is cut into three
// files (pcapng, pcap.gz, pcapng.gz), each cut falling inside open
// connections; dump gives the same objects too.
func TestBB8BRotatedFilesAreOneCapture(t *testing.T) {
	c, fr := bb8bSession(map[string]bool{"repeat-client-id": true, "rejoin-new-id": true})
	whole := bbCaptureFile(t, c, "whole.pcap")
	cut1, cut2 := fr.fetch, fr.rejoin+3 // inside the fetch and coordinator connections
	p1 := bb8bWritePart(t, c, "rot.pcapng", 0, cut1)
	p2 := bb8bWritePart(t, c, "rot1.pcap.gz", cut1, cut2)
	p3 := bb8bWritePart(t, c, "rot2.pcapng.gz", cut2, c.Frames())
	want := bb8bRead(t, whole)
	got := bb8bRead(t, p1, p2, p3)
	bb8bExpect(t, got, map[string]int{"client-id-repeated": 1, "member-id-changed": 1, "member-id-misaligned": 1})
	if !reflect.DeepEqual(got.Findings, want.Findings) {
		t.Errorf("findings over rotated files differ from the single file:\nrotated:\n%s\nsingle:\n%s", got.summary(), want.summary())
	}
	if !reflect.DeepEqual(got.Instances, want.Instances) {
		t.Errorf("rows over rotated files differ:\nrotated %+v\nsingle  %+v", got.Instances, want.Instances)
	}
	if !reflect.DeepEqual(got.Totals, want.Totals) {
		t.Errorf("totals over rotated files differ:\nrotated %+v\nsingle  %+v", got.Totals, want.Totals)
	}
	if got.Totals.Coverage["midstream-join"] != 0 {
		t.Errorf("midstream-join %d: connections continuing in the next file are not joined mid-stream", got.Totals.Coverage["midstream-join"])
	}
	dw, dr := bb8bDump(t, whole), bb8bDump(t, p1, p2, p3)
	if !reflect.DeepEqual(dw, dr) {
		n := min(len(dw), len(dr))
		for i := 0; i < n; i++ {
			if !reflect.DeepEqual(dw[i], dr[i]) {
				t.Errorf("dump object %d differs:\nsingle  %v\nrotated %v", i, dw[i], dr[i])
				break
			}
		}
		if len(dw) != len(dr) {
			t.Errorf("dump: %d objects from the single file, %d from the rotated files", len(dw), len(dr))
		}
	}
}

// SPEC 5: exit 2 "when the input cannot be read ... (with a one-line reason
// on stderr)": one of several FILE arguments is missing.
func TestBB8BSeveralFilesOneMissing(t *testing.T) {
	c, _ := bb8bSession(nil)
	ok := bbCaptureFile(t, c, "ok.pcap.gz")
	missing := filepath.Join(t.TempDir(), "rotated-away.pcap")
	for _, cmd := range []string{"read", "dump"} {
		for _, files := range [][]string{{ok, missing}, {missing, ok}} {
			code, _, errOut := runKwatch(append([]string{cmd}, files...)...)
			if code != 2 {
				t.Errorf("%s %v: exit %d, want 2", cmd, files, code)
			}
			if errOut == "" || strings.Count(strings.TrimRight(errOut, "\n"), "\n") != 0 {
				t.Errorf("%s %v: stderr %q, want one line", cmd, files, errOut)
			}
		}
	}
}

// README 7: "A claimant whose connections had all closed and that comes
// back while another claimant holds the ID collides too (once)". Instance X
// joins with Java(X) and closes its only connection (not alive); instance Y
// then joins with the same member ID: no collision (SPEC 3.4: "alive at the
// same time"), only member-id-misaligned (Java(X) is not Java(Y)). X comes
// back on a new connection and heartbeats with its ID while Y holds it:
// one member-id-collision at X's first heartbeat there, claimant X; 3.7
// "once per (group, member ID, second claimant)": Y's and X's later
// heartbeats add nothing.
func TestBB8BCollisionClaimantComesBack(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	x, y := bb8bX, bb8bY
	m := bb8bJ(x)
	px := &bb8bProc{c: c, host: netip.MustParseAddr("10.51.0.5"), port: 43000, clientID: "app-x", inst: &x, sw: "apache-kafka-java", swv: "4.2.0"}
	py := &bb8bProc{c: c, host: netip.MustParseAddr("10.51.0.6"), port: 43000, clientID: "app-y", inst: &y, sw: "apache-kafka-java", swv: "4.2.0"}
	c1, s1, _ := px.dial(bb8bB3, 4)
	bb8bCG(s1, bb8bGroup, m, 0, bb8bNone, 1)
	bb8bCG(s1, bb8bGroup, m, 1, bb8bNone, 2)
	c1.Close()
	cy, sy, _ := py.dial(bb8bB3, 4)
	yj := bb8bCG(sy, bb8bGroup, m, 0, bb8bNone, 3)
	c2, s2, _ := px.dial(bb8bB3, 4)
	back := bb8bCG(s2, bb8bGroup, m, 2, bb8bNone, 3)
	bb8bCG(sy, bb8bGroup, m, 3, bb8bNone, 3)
	bb8bCG(s2, bb8bGroup, m, 3, bb8bNone, 3)
	c2.Close()
	cy.Close()
	rep, _ := bb8bRun(t, c)
	bb8bExpect(t, rep, map[string]int{"member-id-misaligned": 1, "member-id-collision": 1})
	bb8bCheck(t, bb8bOne(t, rep, "member-id-misaligned"), bb8bWant{frame: yj, client: "10.51.0.6:43000"})
	f := bb8bOne(t, rep, "member-id-collision")
	bb8bCheck(t, f, bb8bWant{severity: "error", confidence: "full", frame: back, client: "10.51.0.5:43001", broker: bb8bB3.String()})
	if f.InstanceID != bb8bJ(x) {
		t.Errorf("collision instance_id %q, want the returning claimant %s", f.InstanceID, bb8bJ(x))
	}
}

// SPEC 6: the profile selects the header versions (dump takes --profile
// too: "--profile seed|accepted-2026"); SPEC 4: "the header version must
// come from a table keyed by API key and version ... an override list for
// v3 (the first v3 user is OffsetDelete v1)"; "decode v3 as the v2 layout
// with the instance ID as tag 0". Under accepted-2026 dump shows
// OffsetDelete v1 with header_version 3 and its instance_id; OffsetDelete v0
// keeps header v1; under seed OffsetDelete v1 is header v1 (non-flexible),
// so no instance_id, and the client ID is read all the same (SPEC 1: "v1 =
// v0 + client_id").
func TestBB8BDumpHeaderV3ByProfile(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	x := bb8bX
	cn := c.Conn(pcapgen.ConnOptions{Client: netip.MustParseAddrPort("10.81.0.5:46100"), Broker: bb8bB1})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("admin-od"), CorrelationID: 1})
	od0 := kmsg.NewPtrOffsetDeleteRequest()
	od0.Version = 0
	od0.Group = bb8bGroup
	f0, _ := s.RoundTrip(od0, kmsg.NewPtrOffsetDeleteResponse())
	f1 := bb8bOffsetDelete(s, &x)
	cn.Close()
	path := bbCaptureFile(t, c, "")
	for _, tc := range []struct {
		profile string
		hv1     int
		inst    bool
	}{{"accepted-2026", 3, true}, {"seed", 1, false}} {
		objs := bb8bDump(t, "--profile", tc.profile, path)
		by := map[string]map[string]any{}
		for _, o := range objs {
			if o["kind"] == "request" {
				by[fmt.Sprint(o["frame"])] = o
			}
		}
		o0, o1 := by[fmt.Sprint(f0)], by[fmt.Sprint(f1)]
		if o0 == nil || o1 == nil {
			t.Fatalf("%s: requests at frames %d and %d not dumped: %v", tc.profile, f0, f1, objs)
		}
		if fmt.Sprint(o0["header_version"]) != "1" || o0["client_id"] != "admin-od" {
			t.Errorf("%s: OffsetDelete v0 header_version %v client_id %v, want 1 and admin-od", tc.profile, o0["header_version"], o0["client_id"])
		}
		if fmt.Sprint(o1["header_version"]) != fmt.Sprint(tc.hv1) || o1["client_id"] != "admin-od" {
			t.Errorf("%s: OffsetDelete v1 header_version %v client_id %v, want %d and admin-od", tc.profile, o1["header_version"], o1["client_id"], tc.hv1)
		}
		if v, ok := o1["instance_id"]; ok != tc.inst || (ok && v != bb8bJ(x)) {
			t.Errorf("%s: OffsetDelete v1 instance_id %v (present %v), want present=%v %s", tc.profile, v, ok, tc.inst, bb8bJ(x))
		}
	}
}

// SPEC 3.4's own example of member-id-collision: "librdkafka issue 5263, a
// PRNG seeded per second": six pods of one deployment start in the same
// second and all generate the same member ID M; they join one after the
// other while all are alive, then keep heartbeating side by side. SPEC 3.7:
// "member-id-collision once per (group, member ID, second claimant)": the
// first claimant is no second claimant, each of the five others collides
// once, at its join (claimants are "client host:port without instance
// IDs", README 7). Nothing else (no instance ID: no misalignment; M is a
// Java-form v4 UUID).
func TestBB8BCollisionSixPodsSameSecond(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	m := bb8bJ(pcapgen.SeqUUID(0xb3))
	type pod struct {
		cn *pcapgen.Conn
		s  *pcapgen.Session
	}
	var pods []pod
	var joins []int
	for i := 0; i < 6; i++ {
		p := &bb8bProc{c: c, host: netip.AddrFrom4([4]byte{10, 61, 0, byte(10 + i)}), port: 48000, clientID: "rdkafka", sw: "librdkafka", swv: "2.3.0"}
		cn, s, _ := p.dial(bb8bB3, 3)
		pods = append(pods, pod{cn, s})
		f := bb8bCG(s, bb8bGroup, m, 0, bb8bNone, int32(i+1))
		if i > 0 {
			joins = append(joins, f)
		}
	}
	for round := 0; round < 2; round++ {
		for i, p := range pods {
			bb8bCG(p.s, bb8bGroup, m, int32(i+1), bb8bNone, int32(i+1))
		}
	}
	for _, p := range pods {
		p.cn.Close()
	}
	rep, _ := bb8bRun(t, c)
	bb8bExpect(t, rep, map[string]int{"member-id-collision": 5})
	var got []int
	for _, f := range rep.Findings {
		if f.Rule == "member-id-collision" {
			got = append(got, f.Frame)
		}
	}
	sort.Ints(got)
	if fmt.Sprint(got) != fmt.Sprint(joins) {
		t.Errorf("member-id-collision frames %v, want the joins of pods 2-6 %v", got, joins)
	}
}

// Variant: the producer (header P) pushes metrics with the consumer's ID X
// in the body, answered INVALID_REQUEST. SPEC 3.3 telemetry-id-mismatch
// (error): "also PushTelemetry whose body ID differs from a non-zero header
// ID"; seed 004: "It is not permitted to use one client instance ID for
// request headers and a different client instance ID for telemetry". Once
// for that request; the broker rejected it (no 3.5 finding). README 14:
// "UUIDs in expected and observed are in Java's form": expected the header
// ID P, observed the body ID X. The finding counts in the producer's row.
func TestBB8BVariantPushMismatch(t *testing.T) {
	c, fr := bb8bSession(map[string]bool{"push-mismatch": true})
	rep, _ := bb8bRun(t, c)
	bb8bExpect(t, rep, map[string]int{"telemetry-id-mismatch": 1})
	f := bb8bOne(t, rep, "telemetry-id-mismatch")
	bb8bCheck(t, f, bb8bWant{severity: "error", confidence: "full", frame: fr.prodPush, client: "10.30.0.5:53000",
		broker: bb8bB1.String(), api: "PushTelemetry", expected: bb8bJ(bb8bP), observed: bb8bJ(bb8bX)})
	if f.InstanceID != bb8bJ(bb8bP) {
		t.Errorf("instance_id %q, want the header's %s", f.InstanceID, bb8bJ(bb8bP))
	}
	want := bb8bProducerRow()
	want.Findings = map[string]int{"telemetry-id-mismatch": 1}
	bb8bCheckRow(t, "producer", bb8bRowOf(t, rep, bb8bP), want)
	bb8bCheckRow(t, "consumer", bb8bRowOf(t, rep, bb8bX), bb8bConsumerRow())
}

// Variant: on the fetch connection the second Fetch omits the header
// instance ID. SPEC 3.1 instance-id-dropped (error): "the first v2 request
// carried an instance ID; a later v2 request carries none"; once for that
// request (3.7); expected the connection's ID in Java form (README 14).
// Fetch answers have no top-level error code among section 1's APIs, so no
// 3.5 finding.
func TestBB8BVariantFetchDropped(t *testing.T) {
	c, fr := bb8bSession(map[string]bool{"fetch-dropped": true})
	rep, _ := bb8bRun(t, c)
	bb8bExpect(t, rep, map[string]int{"instance-id-dropped": 1})
	bb8bCheck(t, bb8bOne(t, rep, "instance-id-dropped"), bb8bWant{severity: "error", confidence: "full", kip: "KIP-1313",
		frame: fr.fetch2, client: "10.30.0.5:52003", broker: bb8bB3.String(), api: "Fetch", expected: bb8bJ(bb8bX)})
	want := bb8bConsumerRow()
	want.Findings = map[string]int{"instance-id-dropped": 1}
	bb8bCheckRow(t, "consumer", bb8bRowOf(t, rep, bb8bX), want)
}

// SPEC 6: "kwatch read [flags] FILE... offline: pcap or pcapng". A pcapng
// capture may hold several interfaces of different link types (dumpcap -i
// eth0 -i any): packets of interface 0 (Ethernet) and interface 1 (Linux
// cooked, SLL) interleave in one file. Each interface here carries one
// connection with an instance-id-changed (error); both are reported, at the
// frame numbers of the merged file (SPEC 5: "the 1-based packet number in
// the capture file (as Wireshark numbers it)").
func TestBB8BPcapngTwoInterfaces(t *testing.T) {
	mk := func(link pcapgen.Link, host string, x, y [16]byte) (*pcapgen.Capture, int) {
		c := pcapgen.New(pcapgen.Options{Link: link, Start: pcapgen.BaseTime(), Step: 2 * time.Millisecond})
		cn := c.Conn(pcapgen.ConnOptions{Client: netip.MustParseAddrPort(host), Broker: bb8bB1})
		s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("two-if"), InstanceID: &x, CorrelationID: 1})
		bb8bMeta(s)
		s.Header.ClientID = nil
		s.Header.InstanceID = &y
		f := bb8bMeta(s)
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
	bb8bExpect(t, rep, map[string]int{"instance-id-changed": 2})
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
func TestBB8BLegacyRowCronConsumers(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	var ids []string
	for i := 0; i < 12; i++ {
		u := pcapgen.SeqUUID(0xc0)
		u[0] = byte(i)
		m := bb8bJ(u)
		ids = append(ids, m)
		p := &bb8bProc{c: c, host: netip.MustParseAddr("10.62.0.5"), port: uint16(49000 + i), clientID: "rdkafka", sw: "librdkafka", swv: "2.6.0"}
		cn, s, _ := p.dial(bb8bB3, 3)
		bb8bCG(s, bb8bGroup, m, 0, bb8bNone, int32(2*i+1))
		bb8bFetch(s)
		bb8bCG(s, bb8bGroup, m, -1, bb8bNone, -1)
		cn.Close()
		c.Sleep(time.Minute)
	}
	rep, _ := bb8bRun(t, c)
	bb8bExpect(t, rep, nil)
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
func TestBB8BManyGroupsDeterministic(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	x := bb8bX
	p := &bb8bProc{c: c, host: netip.MustParseAddr("10.63.0.5"), port: 49500, clientID: "hb-proxy", inst: &x, sw: "apache-kafka-java", swv: "4.2.0"}
	cn, s, _ := p.dial(bb8bB3, 4)
	for _, m := range []string{bb8bJ(x), bb8bJ(bb8bY)} {
		for g := 0; g < 40; g++ {
			bb8bCG(s, fmt.Sprintf("group-%02d", g), m, 0, bb8bNone, 1)
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
	bb8bExpect(t, rep, map[string]int{"member-id-changed": 40, "member-id-misaligned": 40})
}
