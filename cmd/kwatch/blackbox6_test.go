package main

// Black-box scenarios (batch 6): realistic client LIFECYCLES of the Kafka
// client libraries kwatch will meet in the field (Java 3.x/4.x with and
// without KIP-1313, librdkafka, kgo), each played end to end on several
// connections: bootstrap, node and coordinator connections, coordinator
// moves, fencing, static membership, telemetry, share and streams groups,
// broker restarts and short-lived admin connections. A well-behaved client
// must give exactly the findings SPEC.md requires (usually none): a false
// positive on such traffic is as bad as a miss. Expectations come from
// SPEC.md, the KIP seeds and how the real clients behave, not from kwatch's
// implementation.

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kwatch/kwatch/internal/pcapgen"
)

// ------------------------------------------------------------------ helpers

// Kafka error codes used by the lifecycles (kerr).
const (
	bb6ErrNone                = 0
	bb6ErrCoordLoading        = 14
	bb6ErrNotCoordinator      = 16
	bb6ErrUnknownMemberID     = 25
	bb6ErrFencedMemberEpoch   = 110
	bb6ErrUnknownSubscription = 117
)

var (
	bb6B1 = netip.MustParseAddrPort("10.0.0.1:9092")
	bb6B2 = netip.MustParseAddrPort("10.0.0.2:9092")
	bb6B3 = netip.MustParseAddrPort("10.0.0.3:9092")

	bb6TopicID = pcapgen.SeqUUID(0xe0)
)

const bb6Group = "payments"

type bb6Report struct {
	Totals struct {
		Packets             int            `json:"packets"`
		Connections         int            `json:"connections"`
		KafkaConnections    int            `json:"kafka_connections"`
		Requests            int            `json:"requests"`
		Responses           int            `json:"responses"`
		ByHeaderVersion     map[string]int `json:"requests_by_header_version"`
		Coverage            map[string]int `json:"coverage"`
		Findings            int            `json:"findings"`
		ByRule              map[string]int `json:"findings_by_rule"`
		ClientIDRepeats     int            `json:"client_id_repeats"`
		ClientIDRepeatBytes int            `json:"client_id_repeat_bytes"`
	} `json:"totals"`
	Instances []map[string]any `json:"instances"`
	Findings  []map[string]any `json:"findings"`
}

// bb6Run writes c and analyses it with `kwatch read --format json`.
func bb6Run(t *testing.T, c *pcapgen.Capture) bb6Report {
	t.Helper()
	if err := c.Err(); err != nil {
		t.Fatalf("scenario: %v", err)
	}
	rep, _ := bbReadAs[bb6Report](t, bbCaptureFile(t, c, "lifecycle.pcap"))
	if rep.Totals.Packets != c.Frames() {
		t.Errorf("totals.packets %d, capture has %d", rep.Totals.Packets, c.Frames())
	}
	// A clean generated capture loses nothing: every coverage event is 0.
	for ev, n := range rep.Totals.Coverage {
		if n != 0 {
			t.Errorf("coverage %s = %d on a clean capture", ev, n)
		}
	}
	if rep.Totals.Requests != rep.Totals.Responses {
		t.Errorf("requests %d, responses %d: every request of these lifecycles is answered unless the test says so",
			rep.Totals.Requests, rep.Totals.Responses)
	}
	return rep
}

func bb6Sum(rep bb6Report) string {
	var b strings.Builder
	for _, f := range rep.Findings {
		fmt.Fprintf(&b, "  %v %v frame=%v conf=%v conn=%v api=%v corr=%v exp=%v obs=%v\n", f["rule"], f["severity"], f["frame"],
			f["confidence"], f["conn"], f["api"], f["correlation_id"], f["expected"], f["observed"])
	}
	return b.String()
}

// bb6Expect asserts the exact multiset of rules (nil = no finding at all).
func bb6Expect(t *testing.T, rep bb6Report, want map[string]int) {
	t.Helper()
	got := map[string]int{}
	for _, f := range rep.Findings {
		got[fmt.Sprint(f["rule"])]++
	}
	bbCompareCounts(t, "", got, want, func() string { return bb6Sum(rep) })
}

// bb6Sev asserts the severity of every finding of rule.
func bb6Sev(t *testing.T, rep bb6Report, rule, sev string) {
	t.Helper()
	for _, f := range rep.Findings {
		if f["rule"] == rule && f["severity"] != sev {
			t.Errorf("%s severity %v, want %s", rule, f["severity"], sev)
		}
	}
}

// bb6Hdr asserts requests_by_header_version.
func bb6Hdr(t *testing.T, rep bb6Report, v0, v1, v2 int) {
	t.Helper()
	h := rep.Totals.ByHeaderVersion
	if h["v0"] != v0 || h["v1"] != v1 || h["v2"] != v2 {
		t.Errorf("requests_by_header_version %v, want v0:%d v1:%d v2:%d", h, v0, v1, v2)
	}
	if rep.Totals.Requests != v0+v1+v2 {
		t.Errorf("requests %d, want %d", rep.Totals.Requests, v0+v1+v2)
	}
}

func bb6Conns(t *testing.T, rep bb6Report, n int) {
	t.Helper()
	if rep.Totals.Connections != n || rep.Totals.KafkaConnections != n {
		t.Errorf("connections %d kafka_connections %d, want %d", rep.Totals.Connections, rep.Totals.KafkaConnections, n)
	}
}

func bb6Strs(v any) []string {
	arr, _ := v.([]any)
	var out []string
	for _, x := range arr {
		out = append(out, fmt.Sprint(x))
	}
	sort.Strings(out)
	return out
}

// bb6Row returns the instance row of id (Java form), failing if absent.
func bb6Row(t *testing.T, rep bb6Report, id [16]byte) map[string]any {
	t.Helper()
	want := pcapgen.JavaString(id)
	for _, in := range rep.Instances {
		if in["instance_id"] == want {
			return in
		}
	}
	t.Fatalf("no instance row %s", want)
	return nil
}

// bb6Legacy returns the legacy rows (no header instance ID).
func bb6Legacy(rep bb6Report) []map[string]any {
	var out []map[string]any
	for _, in := range rep.Instances {
		if in["legacy"] == true {
			out = append(out, in)
		}
	}
	return out
}

func bb6Num(v any) int {
	f, _ := v.(float64)
	return int(f)
}

// bb6Proc is one client process: a host, a client ID, the software it names
// in ApiVersions v3+, and (KIP-1313) the instance ID created when the
// client was constructed. dial opens connections from ephemeral ports.
type bb6Proc struct {
	c        *pcapgen.Capture
	host     netip.Addr
	port     uint16
	clientID string
	inst     *[16]byte
	sw, swv  string
	apiV     int16
}

func bb6Java(c *pcapgen.Capture, host string, port uint16, clientID, version string, inst *[16]byte) *bb6Proc {
	return &bb6Proc{c: c, host: netip.MustParseAddr(host), port: port, clientID: clientID, inst: inst,
		sw: "apache-kafka-java", swv: version, apiV: 4}
}

// dial connects to broker and does the ApiVersions round trip every client
// starts a connection with. A KIP-1313 client sends its instance ID on every
// v2 request and its client ID on the connection's first request only
// (seed 001: "sending the client ID only on the initial request on each
// connection, and then sending a null client ID for all subsequent
// requests"); a legacy client repeats the client ID on every request.
func (p *bb6Proc) dial(broker netip.AddrPort) (*pcapgen.Conn, *pcapgen.Session) {
	cn := p.c.Conn(pcapgen.ConnOptions{Client: netip.AddrPortFrom(p.host, p.port), Broker: broker})
	p.port++
	var inst *[16]byte
	if p.inst != nil {
		id := *p.inst
		inst = &id
	}
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr(p.clientID), InstanceID: inst, CorrelationID: 1})
	s.RoundTrip(pcapgen.APIVersions(p.apiV, p.sw, p.swv), pcapgen.APIVersionsResponse(p.apiV))
	if p.inst != nil {
		s.Header.ClientID = nil
	}
	return cn, s
}

func bb6Meta(s *pcapgen.Session) {
	s.RoundTrip(pcapgen.Metadata(12, "orders"), pcapgen.MetadataResponse(12, "10.0.0.1", 9092))
}

// bb6FindCoord asks (FindCoordinator v6, flexible) where group's coordinator is.
func bb6FindCoord(s *pcapgen.Session, group string, coord netip.AddrPort, node int32) {
	r := kmsg.NewPtrFindCoordinatorRequest()
	r.Version = 6
	r.CoordinatorKeys = []string{group}
	resp := kmsg.NewPtrFindCoordinatorResponse()
	co := kmsg.NewFindCoordinatorResponseCoordinator()
	co.Key, co.NodeID, co.Host, co.Port = group, node, coord.Addr().String(), int32(coord.Port())
	resp.Coordinators = append(resp.Coordinators, co)
	s.RoundTrip(r, resp)
}

func bb6Fetch(s *pcapgen.Session) {
	s.RoundTrip(pcapgen.Fetch(17, "orders", bb6TopicID), pcapgen.FetchResponse(17, "orders", bb6TopicID, []byte("batch")))
}

func bb6Produce(s *pcapgen.Session) {
	s.RoundTrip(pcapgen.Produce(11, "orders", bb6TopicID, []byte("records")), pcapgen.ProduceResponse(11, "orders", bb6TopicID))
}

// bb6CG is one ConsumerGroupHeartbeat v1 round trip; the broker answers code
// and, on success, the member ID and respEpoch (a real coordinator echoes
// the member ID in every successful response).
func bb6CG(s *pcapgen.Session, group, member string, epoch int32, code int16, respEpoch int32) int {
	var m *string
	if code == bb6ErrNone {
		m = pcapgen.Ptr(member)
	}
	f, _ := s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(1, group, member, epoch), pcapgen.ConsumerGroupHeartbeatResponse(1, code, m, respEpoch))
	return f
}

// bb6CGStatic is bb6CG with group.instance.id set (static membership).
func bb6CGStatic(s *pcapgen.Session, group, member, static string, epoch int32, respEpoch int32) {
	r := pcapgen.ConsumerGroupHeartbeat(1, group, member, epoch)
	r.InstanceID = pcapgen.Ptr(static)
	s.RoundTrip(r, pcapgen.ConsumerGroupHeartbeatResponse(1, bb6ErrNone, pcapgen.Ptr(member), respEpoch))
}

func bb6SG(s *pcapgen.Session, group, member string, epoch int32, code int16, respEpoch int32) {
	var m *string
	if code == bb6ErrNone {
		m = pcapgen.Ptr(member)
	}
	s.RoundTrip(pcapgen.ShareGroupHeartbeat(1, group, member, epoch), pcapgen.ShareGroupHeartbeatResponse(1, code, m, respEpoch))
}

func bb6ShareFetch(s *pcapgen.Session, group, member string, sessEpoch int32) {
	r := kmsg.NewPtrShareFetchRequest()
	r.Version = 1
	r.GroupID = pcapgen.Ptr(group)
	r.MemberID = pcapgen.Ptr(member)
	r.ShareSessionEpoch = sessEpoch
	r.MaxWaitMillis, r.MinBytes, r.MaxBytes, r.MaxRecords, r.BatchSize = 500, 1, 1<<20, 500, 500
	tp := kmsg.NewShareFetchRequestTopic()
	tp.TopicID = bb6TopicID
	tp.Partitions = append(tp.Partitions, kmsg.NewShareFetchRequestTopicPartition())
	r.Topics = append(r.Topics, tp)
	s.RoundTrip(r, kmsg.NewPtrShareFetchResponse())
}

func bb6ST(s *pcapgen.Session, group, member string, epoch int32, code int16, respEpoch int32) {
	m := ""
	if code == bb6ErrNone {
		m = member
	}
	s.RoundTrip(pcapgen.StreamsGroupHeartbeat(0, group, member, epoch), pcapgen.StreamsGroupHeartbeatResponse(0, code, m, respEpoch))
}

// bb6GTS is a GetTelemetrySubscriptions round trip: body r, answer code with
// ID b and subscription sub.
func bb6GTS(s *pcapgen.Session, r [16]byte, code int16, b [16]byte, sub int32) {
	s.RoundTrip(pcapgen.GetTelemetrySubscriptions(r), pcapgen.GetTelemetrySubscriptionsResponse(code, b, sub))
}

func bb6Push(s *pcapgen.Session, id [16]byte, sub int32, terminating bool, code int16) {
	r := pcapgen.PushTelemetry(id, sub)
	r.Terminating = terminating
	s.RoundTrip(r, pcapgen.PushTelemetryResponse(code))
}

var bb6Zero [16]byte

// ------------------------------------------------- (1) Java KIP-848 consumer

// A legacy Java 3.9 AsyncKafkaConsumer (group.protocol=consumer, no KIP-1313)
// over its whole life, and a second consumer of the same group in the same
// JVM. Real Java traffic: a bootstrap connection, one connection per broker
// node, and a separate coordinator connection (node id MAX_VALUE - id), all
// repeating the client ID. The member ID is Uuid.randomUuid().toString()
// (KIP-1082: "The consumer instance must generate a member ID when it
// starts, and this ID should remain consistent for the entire lifetime of
// the process ... even if the consumer leaves and rejoins the group").
//
//   - FENCED_MEMBER_EPOCH, then a rejoin at epoch 0 with the SAME member ID:
//     SPEC 3.4 member-id-changed exists because "a member ID lives as long
//     as the process, across leave and rejoin and after fencing" -- keeping
//     it is the conforming behaviour.
//   - NOT_COORDINATOR, FindCoordinator, then heartbeats (epoch unchanged, no
//     rejoin) to the new coordinator on a NEW connection while the old
//     coordinator connection stays open: same process, so no
//     member-id-collision ("two different client instances ... alive at the
//     same time"; README rule 7: a heartbeat past the join from the same
//     host while the other connection is open is the coordinator moving).
//   - leave at epoch -1 on close. SPEC 3.2: client-id-repeated "For legacy
//     clients this is a statistic, not a finding".
//
// Spec requires: no finding at all.
func TestBlackbox6JavaLegacyConsumerLifecycle(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	p := bb6Java(c, "10.20.0.5", 50100, "consumer-payments-1", "3.9.0", nil)
	m := pcapgen.JavaString(pcapgen.SeqUUID(0x11))
	// Second consumer of the same group in the same JVM.
	p2 := bb6Java(c, "10.20.0.5", 50200, "consumer-payments-2", "3.9.0", nil)
	m2 := pcapgen.JavaString(pcapgen.SeqUUID(0x21))

	boot, sb := p.dial(bb6B1) // bootstrap (node -1)
	bb6Meta(sb)
	n2, s2 := p.dial(bb6B2) // node 2, least loaded
	bb6FindCoord(s2, bb6Group, bb6B3, 3)
	coord, sc := p.dial(bb6B3) // coordinator connection to broker 3
	bb6CG(sc, bb6Group, m, 0, bb6ErrNone, 1)
	n3, s3 := p.dial(bb6B3) // node 3, partition leader: fetches
	bb6Fetch(s3)
	bb6CG(sc, bb6Group, m, 1, bb6ErrNone, 2)
	bb6Fetch(s3)
	bb6CG(sc, bb6Group, m, 2, bb6ErrNone, 3)

	// The second consumer joins through the same coordinator broker on its
	// own connections.
	c2n, c2s := p2.dial(bb6B2)
	bb6FindCoord(c2s, bb6Group, bb6B3, 3)
	c2c, c2cs := p2.dial(bb6B3)
	bb6CG(c2cs, bb6Group, m2, 0, bb6ErrNone, 4)
	bb6CG(sc, bb6Group, m, 3, bb6ErrNone, 4)

	// Fenced: rejoin with the same member ID at epoch 0.
	bb6CG(sc, bb6Group, m, 4, bb6ErrFencedMemberEpoch, 0)
	bb6CG(sc, bb6Group, m, 0, bb6ErrNone, 6)
	bb6Fetch(s3)
	bb6CG(sc, bb6Group, m, 6, bb6ErrNone, 6)
	bb6CG(c2cs, bb6Group, m2, 4, bb6ErrNone, 6)

	// Coordinator moves to broker 2: new coordinator connection, same member
	// ID, same epoch; the old coordinator connection stays open.
	bb6CG(sc, bb6Group, m, 6, bb6ErrNotCoordinator, 0)
	bb6FindCoord(s2, bb6Group, bb6B2, 2)
	coord2, sc2 := p.dial(bb6B2)
	bb6CG(sc2, bb6Group, m, 6, bb6ErrNone, 6)
	bb6Fetch(s3)
	bb6CG(sc2, bb6Group, m, 6, bb6ErrNone, 7)
	bb6Meta(s2) // metadata refresh on the node connection

	// The second consumer's coordinator moves too.
	bb6CG(c2cs, bb6Group, m2, 6, bb6ErrNotCoordinator, 0)
	bb6FindCoord(c2s, bb6Group, bb6B2, 2)
	c2c2, c2cs2 := p2.dial(bb6B2)
	bb6CG(c2cs2, bb6Group, m2, 6, bb6ErrNone, 7)

	// close(): leave at epoch -1 on the current coordinator, then close all.
	bb6CG(sc2, bb6Group, m, -1, bb6ErrNone, -1)
	bb6CG(c2cs2, bb6Group, m2, -1, bb6ErrNone, -1)
	for _, cn := range []*pcapgen.Conn{boot, n2, coord, n3, coord2, c2n, c2c, c2c2} {
		cn.Close()
	}

	rep := bb6Run(t, c)
	bb6Expect(t, rep, nil)
	bb6Conns(t, rep, 8)
	// Every request of these versions is flexible: header v2. 8 ApiVersions,
	// 2 Metadata, 4 FindCoordinator, 4 Fetch, 16 heartbeats.
	bb6Hdr(t, rep, 0, 0, 34)
	if rep.Totals.ClientIDRepeats != 34-8 {
		t.Errorf("client_id_repeats %d, want %d (every request after the first of each connection)", rep.Totals.ClientIDRepeats, 34-8)
	}
	// README 11: legacy rows per (client IP, first client ID): two rows.
	rows := bb6Legacy(rep)
	if len(rows) != 2 {
		t.Fatalf("legacy rows %d, want 2 (one per consumer)", len(rows))
	}
	for _, r := range rows {
		cid := bb6Strs(r["client_ids"])
		want := map[string]int{"consumer-payments-1": 5, "consumer-payments-2": 3}
		if len(cid) != 1 || want[cid[0]] == 0 {
			t.Errorf("legacy row client_ids %v", cid)
			continue
		}
		if n := bb6Num(r["connections"]); n != want[cid[0]] {
			t.Errorf("row %s connections %d, want %d", cid[0], n, want[cid[0]])
		}
		if r["software_name"] != "apache-kafka-java" || r["software_version"] != "3.9.0" {
			t.Errorf("row %s software %v %v", cid[0], r["software_name"], r["software_version"])
		}
	}
}

// Static membership (group.instance.id) with a legacy Java consumer:
// join, heartbeats, static leave at epoch -2 on close (SPEC 3.7: "A static
// leave (epoch -2) is a leave"), then the process is restarted on the same
// host: a new process generates a new member ID (KIP-1082: the member ID "must
// remain the same until the process is completely stopped or terminated")
// and joins with the same group.instance.id from a new connection. Two
// processes one after the other: no member-id-changed (not the same client),
// no collision (different member IDs). Spec requires: nothing.
func TestBlackbox6JavaLegacyStaticMembershipRestart(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	for gen := range 2 {
		p := bb6Java(c, "10.20.0.6", uint16(50300+100*gen), "consumer-payments-static", "4.0.0", nil)
		m := pcapgen.JavaString(pcapgen.SeqUUID(byte(0x31 + 0x10*gen)))
		boot, sb := p.dial(bb6B1)
		bb6Meta(sb)
		bb6FindCoord(sb, bb6Group, bb6B2, 2)
		coord, sc := p.dial(bb6B2)
		bb6CGStatic(sc, bb6Group, m, "pod-0", 0, 10+int32(gen))
		bb6CGStatic(sc, bb6Group, m, "pod-0", 10+int32(gen), 10+int32(gen))
		bb6CG(sc, bb6Group, m, 10+int32(gen), bb6ErrNone, 10+int32(gen))
		bb6CGStatic(sc, bb6Group, m, "pod-0", -2, -2)
		coord.Close()
		boot.Close()
	}
	rep := bb6Run(t, c)
	bb6Expect(t, rep, nil)
	bb6Conns(t, rep, 4)
}

// The same consumer life with a KIP-1313 Java client: one instance ID X per
// client, in the header of every v2 request on every connection, client ID
// only on each connection's first request, member ID = Java string of X
// (seed 000: "it simply creates a single UUID when a client is constructed,
// and when a client-generated member ID is required for the group
// protocol, it uses the client instance ID"; seed 004: "The client MUST use
// the same UUID in request headers as it uses for the client telemetry
// client instance ID"). Includes telemetry on the least-loaded node (body X,
// header X: table row 3, "This is what we expect from the Apache Kafka Java
// client after this KIP"), fencing, a coordinator move to a new connection
// and back to the old, still-open coordinator connection (claimants are
// instance IDs: one instance cannot collide with itself), leave -1.
// Spec requires: nothing; one instance row naming everything.
func TestBlackbox6JavaKIP1313ConsumerLifecycle(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	x := pcapgen.SeqUUID(0x41)
	m := pcapgen.JavaString(x)
	p := bb6Java(c, "10.20.0.7", 50500, "consumer-payments-1", "4.2.0", &x)

	boot, sb := p.dial(bb6B1)
	bb6Meta(sb)
	n2, s2 := p.dial(bb6B2)
	bb6FindCoord(s2, bb6Group, bb6B3, 3)
	bb6GTS(s2, x, bb6ErrNone, bb6Zero, 9)
	coord, sc := p.dial(bb6B3)
	bb6CG(sc, bb6Group, m, 0, bb6ErrCoordLoading, 0) // retriable: retried with the same ID
	bb6CG(sc, bb6Group, m, 0, bb6ErrNone, 1)
	n3, s3 := p.dial(bb6B3)
	bb6Fetch(s3)
	bb6CG(sc, bb6Group, m, 1, bb6ErrNone, 2)
	bb6Push(s2, x, 9, false, bb6ErrNone)
	bb6CG(sc, bb6Group, m, 2, bb6ErrFencedMemberEpoch, 0)
	bb6CG(sc, bb6Group, m, 0, bb6ErrNone, 4)
	bb6Fetch(s3)
	// Coordinator moves to broker 2 (new connection), then back to broker 3
	// on the coordinator connection that stayed open.
	bb6CG(sc, bb6Group, m, 4, bb6ErrNotCoordinator, 0)
	bb6FindCoord(s2, bb6Group, bb6B2, 2)
	coord2, sc2 := p.dial(bb6B2)
	bb6CG(sc2, bb6Group, m, 4, bb6ErrNone, 5)
	bb6CG(sc2, bb6Group, m, 5, bb6ErrNone, 5)
	bb6Fetch(s3)
	bb6CG(sc2, bb6Group, m, 5, bb6ErrNotCoordinator, 0)
	bb6FindCoord(s2, bb6Group, bb6B3, 3)
	bb6CG(sc, bb6Group, m, 5, bb6ErrNone, 6)
	bb6Push(s2, x, 9, false, bb6ErrNone)
	bb6CG(sc, bb6Group, m, -1, bb6ErrNone, -1)
	bb6Push(s2, x, 9, true, bb6ErrNone) // terminating push on close
	for _, cn := range []*pcapgen.Conn{boot, n2, coord, n3, coord2} {
		cn.Close()
	}

	rep := bb6Run(t, c)
	bb6Expect(t, rep, nil)
	bb6Conns(t, rep, 5)
	// 5 ApiVersions, 1 Metadata, 3 FindCoordinator, 1 GTS, 3 Push, 3 Fetch,
	// 11 heartbeats: all flexible.
	bb6Hdr(t, rep, 0, 0, 27)
	if len(rep.Instances) != 1 {
		t.Errorf("instance rows %d, want 1 (one client)", len(rep.Instances))
	}
	row := bb6Row(t, rep, x)
	if got := bb6Strs(row["client_ids"]); len(got) != 1 || got[0] != "consumer-payments-1" {
		t.Errorf("client_ids %v", got)
	}
	if got := bb6Strs(row["client_hosts"]); len(got) != 1 || got[0] != "10.20.0.7" {
		t.Errorf("client_hosts %v", got)
	}
	if got := bb6Strs(row["brokers"]); strings.Join(got, ",") != "10.0.0.1:9092,10.0.0.2:9092,10.0.0.3:9092" {
		t.Errorf("brokers %v", got)
	}
	if n := bb6Num(row["connections"]); n != 5 {
		t.Errorf("connections %d, want 5", n)
	}
	if mids, _ := row["member_ids"].(map[string]any); fmt.Sprint(bb6Strs(mids[bb6Group])) != fmt.Sprint([]string{m}) {
		t.Errorf("member_ids %v, want %s: [%s]", row["member_ids"], bb6Group, m)
	}
	if row["telemetry_id"] != m {
		t.Errorf("telemetry_id %v, want %s", row["telemetry_id"], m)
	}
	if row["software_name"] != "apache-kafka-java" || row["software_version"] != "4.2.0" {
		t.Errorf("software %v %v", row["software_name"], row["software_version"])
	}
	if f, _ := row["findings"].(map[string]any); len(f) != 0 {
		t.Errorf("row findings %v, want none", f)
	}
	if rep.Totals.ClientIDRepeats != 0 {
		t.Errorf("client_id_repeats %d: a KIP-1313 client sends null after the first request", rep.Totals.ClientIDRepeats)
	}
}

// KIP-1313 static member restarted: the first process leaves at epoch -2
// and exits; the new process (a new client, so a new instance ID Y and
// member ID = Y) rejoins with the same group.instance.id from the same host
// and client ID. instance-id-shared is about ONE instance ID seen from two
// hosts or client IDs: two instance IDs with the same client ID on one host
// are two processes, not a shared UUID. Spec requires: nothing.
func TestBlackbox6JavaKIP1313StaticRestart(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	ids := [][16]byte{pcapgen.SeqUUID(0x51), pcapgen.SeqUUID(0x61)}
	for gen, id := range ids {
		id := id
		p := bb6Java(c, "10.20.0.8", uint16(50600+100*gen), "consumer-payments-static", "4.2.0", &id)
		m := pcapgen.JavaString(id)
		boot, sb := p.dial(bb6B1)
		bb6FindCoord(sb, bb6Group, bb6B2, 2)
		coord, sc := p.dial(bb6B2)
		bb6CGStatic(sc, bb6Group, m, "pod-0", 0, 20+int32(gen))
		bb6CG(sc, bb6Group, m, 20+int32(gen), bb6ErrNone, 20+int32(gen))
		bb6CGStatic(sc, bb6Group, m, "pod-0", -2, -2)
		coord.Close()
		boot.Close()
	}
	rep := bb6Run(t, c)
	bb6Expect(t, rep, nil)
	if len(rep.Instances) != 2 {
		t.Errorf("instance rows %d, want 2", len(rep.Instances))
	}
	for _, id := range ids {
		if n := bb6Num(bb6Row(t, rep, id)["connections"]); n != 2 {
			t.Errorf("row %s connections %d, want 2", pcapgen.JavaString(id), n)
		}
	}
}

// KIP-1313 Java client with SASL/PLAIN: ApiVersions (first request: client
// ID + instance ID), SaslHandshake v1 (header v1: "Requests with a v0/v1
// header are exempt from the header instance-ID rules: they neither set
// nor break the connection's state"; its client ID is null, the connection
// already named itself), SaslAuthenticate v2 and Metadata with the instance
// ID. And a legacy client doing the same with its client ID everywhere.
// Spec requires: nothing.
func TestBlackbox6SASLPlainLifecycle(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	x := pcapgen.SeqUUID(0x71)
	for _, inst := range []*[16]byte{&x, nil} {
		p := bb6Java(c, "10.20.0.9", 50700, "producer-1", "4.2.0", inst)
		if inst == nil {
			p.port = 50800
			p.swv = "3.8.1"
		}
		cn, s := p.dial(bb6B1)
		s.RoundTrip(pcapgen.SaslHandshake(1, "PLAIN"), pcapgen.SaslHandshakeResponse(1, "PLAIN"))
		auth := kmsg.NewPtrSASLAuthenticateRequest()
		auth.Version = 2
		auth.SASLAuthBytes = []byte("\x00alice\x00secret")
		s.RoundTrip(auth, kmsg.NewPtrSASLAuthenticateResponse())
		bb6Meta(s)
		bb6Produce(s)
		cn.Close()
	}
	rep := bb6Run(t, c)
	bb6Expect(t, rep, nil)
	bb6Hdr(t, rep, 0, 2, 8)
	if rep.Totals.Coverage["sasl-raw-tokens"] != 0 {
		t.Errorf("sasl-raw-tokens after a v1 handshake")
	}
}

// --------------------------------------------------------- (2) telemetry

// KIP-714 legacy client (no header instance ID), SPEC 3.3 table rows 1
// and 2: the first GetTelemetrySubscriptions has body 0 and the broker
// assigns B; the client then uses B everywhere, on every connection (Java
// pushes to the least-loaded node, not necessarily where it subscribed).
// A push answered UNKNOWN_SUBSCRIPTION_ID makes it fetch subscriptions again
// with body B ("non-initial ... The client is using UUID-R for client
// telemetry", answered 0 and NONE), and close() sends a terminating push
// with B. Spec requires: nothing.
func TestBlackbox6TelemetryLegacyLifecycle(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	b := pcapgen.SeqUUID(0x81)
	p := bb6Java(c, "10.20.1.5", 51000, "producer-1", "3.9.0", nil)
	c1, s1 := p.dial(bb6B1)
	bb6Meta(s1)
	bb6GTS(s1, bb6Zero, bb6ErrNone, b, 3)
	c2, s2 := p.dial(bb6B2)
	bb6Produce(s2)
	bb6Push(s2, b, 3, false, bb6ErrNone)
	bb6Push(s1, b, 3, false, bb6ErrUnknownSubscription)
	bb6GTS(s1, b, bb6ErrNone, bb6Zero, 4)
	bb6Push(s1, b, 4, false, bb6ErrNone)
	bb6Produce(s2)
	bb6Push(s2, b, 4, true, bb6ErrNone)
	c1.Close()
	c2.Close()
	rep := bb6Run(t, c)
	bb6Expect(t, rep, nil)
	rows := bb6Legacy(rep)
	if len(rows) != 1 {
		t.Fatalf("legacy rows %d, want 1", len(rows))
	}
	if v, ok := rows[0]["telemetry_id"]; ok && v != pcapgen.JavaString(b) {
		t.Errorf("legacy row telemetry_id %v, want the broker-assigned %s", v, pcapgen.JavaString(b))
	}
}

// The same legacy client against a deployed Apache Kafka broker, whose
// ClientMetricsManager answers every GetTelemetrySubscriptions with the
// client instance ID it used (B again on the non-initial request).
// SPEC 3.5 broker-telemetry-id-echo (info): "GetTelemetrySubscriptions with
// non-zero body ID answered with a non-zero ID (KIP-714 says 0)", once per
// request (3.7). Nothing about the client: the echo is B, the client keeps
// using B. Spec requires: broker-telemetry-id-echo x2, info.
func TestBlackbox6TelemetryLegacyApacheBrokerEcho(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	b := pcapgen.SeqUUID(0x82)
	p := bb6Java(c, "10.20.1.6", 51100, "producer-1", "3.9.0", nil)
	c1, s1 := p.dial(bb6B1)
	bb6GTS(s1, bb6Zero, bb6ErrNone, b, 3)
	bb6Push(s1, b, 3, false, bb6ErrUnknownSubscription)
	bb6GTS(s1, b, bb6ErrNone, b, 4)
	bb6Push(s1, b, 4, false, bb6ErrNone)
	c1.Close()
	c2, s2 := p.dial(bb6B2) // broker 1 restarted; telemetry moves on
	bb6GTS(s2, b, bb6ErrNone, b, 5)
	bb6Push(s2, b, 5, true, bb6ErrNone)
	c2.Close()
	rep := bb6Run(t, c)
	bb6Expect(t, rep, map[string]int{"broker-telemetry-id-echo": 2})
	bb6Sev(t, rep, "broker-telemetry-id-echo", "info")
}

// A legacy client's first GetTelemetrySubscriptions (body 0) was answered
// with B, but the client gave up on the connection before reading it
// (request timeout: the Java NetworkClient disconnects); it still has no
// subscription, so on its next connection it asks again with body 0 (Java's
// ClientTelemetryReporter sends ZERO_UUID while it has no subscription),
// gets B2 and uses B2. README rule 5: body 0 again is not-adopted only "on
// the connection that was given B (on another connection of a client
// without instance ID it may be a restarted process)". Spec requires:
// nothing.
func TestBlackbox6TelemetryLegacyLostAssignment(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	b1, b2 := pcapgen.SeqUUID(0x83), pcapgen.SeqUUID(0x84)
	p := bb6Java(c, "10.20.1.7", 51200, "consumer-x", "3.9.0", nil)
	c1, s1 := p.dial(bb6B1)
	bb6GTS(s1, bb6Zero, bb6ErrNone, b1, 3)
	c1.Reset()
	c2, s2 := p.dial(bb6B2)
	bb6GTS(s2, bb6Zero, bb6ErrNone, b2, 3)
	bb6Push(s2, b2, 3, false, bb6ErrNone)
	bb6Push(s2, b2, 3, true, bb6ErrNone)
	c2.Close()
	rep := bb6Run(t, c)
	bb6Expect(t, rep, nil)
}

// KIP-1313 telemetry lifecycle on two connections: GetTelemetrySubscriptions
// with body X = header X (row 3, answered 0 and NONE), pushes with X on
// another connection, UNKNOWN_SUBSCRIPTION_ID then a new subscription with
// body X, a terminating push with X. SPEC 3.3: mismatch needs "body ID
// differs from a non-zero header ID"; requested-with-header needs body 0.
// Spec requires: nothing; the row's telemetry ID is X.
func TestBlackbox6TelemetryKIP1313Lifecycle(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	x := pcapgen.SeqUUID(0x85)
	p := bb6Java(c, "10.20.1.8", 51300, "producer-2", "4.2.0", &x)
	c1, s1 := p.dial(bb6B1)
	bb6Meta(s1)
	bb6GTS(s1, x, bb6ErrNone, bb6Zero, 7)
	c2, s2 := p.dial(bb6B2)
	bb6Produce(s2)
	bb6Push(s2, x, 7, false, bb6ErrNone)
	bb6Push(s2, x, 7, false, bb6ErrUnknownSubscription)
	bb6GTS(s2, x, bb6ErrNone, bb6Zero, 8)
	bb6Push(s1, x, 8, false, bb6ErrNone)
	bb6Push(s1, x, 8, true, bb6ErrNone)
	c1.Close()
	c2.Close()
	rep := bb6Run(t, c)
	bb6Expect(t, rep, nil)
	if v := bb6Row(t, rep, x)["telemetry_id"]; v != pcapgen.JavaString(x) {
		t.Errorf("telemetry_id %v, want %s", v, pcapgen.JavaString(x))
	}
}

// ------------------------------------------------ (3) share and streams

// Share groups (KIP-932): a KIP-1313 Java KafkaShareConsumer (member ID =
// its instance ID) and a legacy one (random Java UUID) in the same share
// group. ShareGroupHeartbeat v1 join at epoch 0, heartbeats with growing
// epochs, ShareFetch to the partition leaders (the member ID travels in
// the ShareFetch body too: not an audited API), UNKNOWN_MEMBER_ID then a
// rejoin with the same member ID, leave at -1. SPEC 3.4: share groups
// "require it from v0"; both member IDs are set and Java-form v4.
// Spec requires: nothing.
func TestBlackbox6ShareGroupLifecycle(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	const g = "share-payments"
	x := pcapgen.SeqUUID(0x91)
	mods := []struct {
		p *bb6Proc
		m string
	}{
		{bb6Java(c, "10.20.2.5", 52000, "share-consumer-1", "4.2.0", &x), pcapgen.JavaString(x)},
		{bb6Java(c, "10.20.2.6", 52000, "share-consumer-1", "4.1.0", nil), pcapgen.JavaString(pcapgen.SeqUUID(0x92))},
	}
	var all []*pcapgen.Conn
	for _, mc := range mods {
		boot, sb := mc.p.dial(bb6B1)
		bb6Meta(sb)
		bb6FindCoord(sb, g, bb6B2, 2)
		coord, sc := mc.p.dial(bb6B2)
		leader, sl := mc.p.dial(bb6B3)
		bb6SG(sc, g, mc.m, 0, bb6ErrNone, 1)
		bb6ShareFetch(sl, g, mc.m, 0)
		bb6SG(sc, g, mc.m, 1, bb6ErrNone, 2)
		bb6ShareFetch(sl, g, mc.m, 1)
		bb6SG(sc, g, mc.m, 2, bb6ErrUnknownMemberID, 0)
		bb6SG(sc, g, mc.m, 0, bb6ErrNone, 4)
		bb6ShareFetch(sl, g, mc.m, 0)
		bb6SG(sc, g, mc.m, 4, bb6ErrNone, 5)
		bb6SG(sc, g, mc.m, -1, bb6ErrNone, -1)
		all = append(all, boot, coord, leader)
	}
	for _, cn := range all {
		cn.Close()
	}
	rep := bb6Run(t, c)
	bb6Expect(t, rep, nil)
	bb6Conns(t, rep, 6)
	if mids, _ := bb6Row(t, rep, x)["member_ids"].(map[string]any); fmt.Sprint(bb6Strs(mids[g])) != fmt.Sprint([]string{pcapgen.JavaString(x)}) {
		t.Errorf("member_ids %v", mids)
	}
}

// Streams groups (KIP-1071): a Kafka Streams 4.1 app (legacy) and a
// KIP-1313 one, each StreamThread's main consumer heartbeating with
// StreamsGroupHeartbeat v0: join at epoch 0 (with process ID and topology),
// heartbeats, FENCED_MEMBER_EPOCH then rejoin with the same member ID,
// leave at -1. SPEC 3.4: streams groups "require it from v0".
// Spec requires: nothing.
func TestBlackbox6StreamsGroupLifecycle(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	const g = "payments-streams-app"
	x := pcapgen.SeqUUID(0xa1)
	apps := []struct {
		p *bb6Proc
		m string
	}{
		{bb6Java(c, "10.20.3.5", 53000, "payments-streams-app-StreamThread-1-consumer", "4.2.0", &x), pcapgen.JavaString(x)},
		{bb6Java(c, "10.20.3.6", 53000, "payments-streams-app-StreamThread-1-consumer", "4.1.0", nil), pcapgen.JavaString(pcapgen.SeqUUID(0xa2))},
	}
	var all []*pcapgen.Conn
	for _, a := range apps {
		boot, sb := a.p.dial(bb6B1)
		bb6FindCoord(sb, g, bb6B3, 3)
		coord, sc := a.p.dial(bb6B3)
		bb6ST(sc, g, a.m, 0, bb6ErrNone, 1)
		bb6ST(sc, g, a.m, 1, bb6ErrNone, 2)
		bb6Fetch(sb)
		bb6ST(sc, g, a.m, 2, bb6ErrFencedMemberEpoch, 0)
		bb6ST(sc, g, a.m, 0, bb6ErrNone, 3)
		bb6ST(sc, g, a.m, 3, bb6ErrNone, 3)
		bb6ST(sc, g, a.m, -1, bb6ErrNone, -1)
		all = append(all, boot, coord)
	}
	for _, cn := range all {
		cn.Close()
	}
	rep := bb6Run(t, c)
	bb6Expect(t, rep, nil)
}

// ------------------------------------------------------ (4) librdkafka

// bb6Rdkafka plays a librdkafka 2.10 consumer (group.protocol=consumer):
// ONE connection per broker reused for everything (bootstrap, metadata,
// fetch, the coordinator's heartbeats), the client ID "rdkafka" on every
// request, ApiVersions v3. Its member ID is rd_kafka_Uuid_base64str: STANDARD
// base64 of the UUID cut to 22 characters (no padding), so it equals Java's
// text unless it holds '+' or '/'. The coordinator moves from broker 1 to
// broker 2, whose connection has been open (fetching) all along: the
// heartbeats continue there with the same member ID and epoch.
func bb6Rdkafka(c *pcapgen.Capture, host string, id [16]byte) string {
	m := pcapgen.StdBase64NoPad(id)
	p := &bb6Proc{c: c, host: netip.MustParseAddr(host), port: 54000, clientID: "rdkafka", sw: "librdkafka", swv: "2.10.0", apiV: 3}
	c1, s1 := p.dial(bb6B1)
	bb6Meta(s1)
	bb6FindCoord(s1, bb6Group, bb6B1, 1)
	c2, s2 := p.dial(bb6B2)
	bb6CG(s1, bb6Group, m, 0, bb6ErrNone, 1)
	bb6Fetch(s2)
	bb6CG(s1, bb6Group, m, 1, bb6ErrNone, 2)
	bb6Fetch(s1)
	bb6Fetch(s2)
	bb6CG(s1, bb6Group, m, 2, bb6ErrNotCoordinator, 0)
	bb6FindCoord(s1, bb6Group, bb6B2, 2)
	bb6CG(s2, bb6Group, m, 2, bb6ErrNone, 3)
	bb6Fetch(s1)
	bb6CG(s2, bb6Group, m, 3, bb6ErrNone, 3)
	bb6CG(s2, bb6Group, m, -1, bb6ErrNone, -1)
	c1.Close()
	c2.Close()
	return m
}

// librdkafka with a member ID whose standard base64 holds neither '+' nor
// '/': the text is exactly Java's form. SPEC 3.2: the client ID on every
// request is, for a legacy client, "a statistic, not a finding". README 7:
// heartbeats moving to another open connection of the same host with an
// epoch past the join are the same process. Spec requires: nothing.
func TestBlackbox6LibrdkafkaLifecycle(t *testing.T) {
	var id [16]byte
	for n := byte(0x01); ; n++ {
		if id = pcapgen.SeqUUID(n); !strings.ContainsAny(pcapgen.StdBase64NoPad(id), "+/") {
			break
		}
	}
	if pcapgen.StdBase64NoPad(id) != pcapgen.JavaString(id) {
		t.Fatalf("without '+' or '/' librdkafka's text is Java's")
	}
	c := pcapgen.New(pcapgen.Options{})
	bb6Rdkafka(c, "10.20.4.5", id)
	rep := bb6Run(t, c)
	bb6Expect(t, rep, nil)
	bb6Conns(t, rep, 2)
	// 2 ApiVersions v3, 1 Metadata, 2 FindCoordinator, 4 Fetch, 6 heartbeats.
	bb6Hdr(t, rep, 0, 0, 15)
	if rep.Totals.ClientIDRepeats != 13 {
		t.Errorf("client_id_repeats %d, want 13 (statistic)", rep.Totals.ClientIDRepeats)
	}
	rows := bb6Legacy(rep)
	if len(rows) != 1 || rows[0]["software_name"] != "librdkafka" || bb6Num(rows[0]["connections"]) != 2 {
		t.Errorf("legacy rows %v", rows)
	}
}

// librdkafka with a member ID whose standard base64 holds '/': SPEC 3.4
// member-id-encoding "info, warn if it holds '+' or '/'" ("standard base64
// ('+' and '/') broke share fetches on brokers before KAFKA-19846"), fired
// "once per (connection, group, member ID)" (3.7): the member ID is used on
// two connections (before and after the coordinator move), so 2 findings,
// warn, and no other rule (no misalignment without an instance ID, not
// "not-uuid": it decodes to 16 bytes in a known encoding).
func TestBlackbox6LibrdkafkaSlashMemberID(t *testing.T) {
	var id [16]byte
	for n := byte(0xc0); ; n++ {
		id = pcapgen.SeqUUID(n)
		id[0] = 0xff // "/" in the first character of the standard alphabet
		if s := pcapgen.StdBase64NoPad(id); strings.ContainsAny(s, "+/") {
			break
		}
	}
	c := pcapgen.New(pcapgen.Options{})
	bb6Rdkafka(c, "10.20.4.6", id)
	rep := bb6Run(t, c)
	bb6Expect(t, rep, map[string]int{"member-id-encoding": 2})
	bb6Sev(t, rep, "member-id-encoding", "warn")
}

// franz-go's kgo spells member IDs as padded URL-safe base64 (SPEC 1:
// "URL-safe base64 with '==' padding (24 chars; franz-go's kgo spells its
// member IDs so)"). A kgo consumer with one coordinator connection: SPEC 3.4
// member-id-encoding, info (no '+' or '/'), once for its (connection, group,
// member ID) however many heartbeats. Spec requires: member-id-encoding x1,
// info.
func TestBlackbox6KgoPaddedMemberID(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	m := pcapgen.PaddedURL(pcapgen.SeqUUID(0xd1))
	p := &bb6Proc{c: c, host: netip.MustParseAddr("10.20.4.7"), port: 54100, clientID: "kgo", sw: "kgo", swv: "v1.20.0", apiV: 4}
	c1, s1 := p.dial(bb6B1)
	bb6Meta(s1)
	bb6FindCoord(s1, bb6Group, bb6B2, 2)
	c2, s2 := p.dial(bb6B2)
	bb6CG(s2, bb6Group, m, 0, bb6ErrNone, 1)
	for e := int32(1); e <= 4; e++ {
		bb6CG(s2, bb6Group, m, e, bb6ErrNone, e+1)
		bb6Fetch(s1)
	}
	bb6CG(s2, bb6Group, m, -1, bb6ErrNone, -1)
	c1.Close()
	c2.Close()
	rep := bb6Run(t, c)
	bb6Expect(t, rep, map[string]int{"member-id-encoding": 1})
	bb6Sev(t, rep, "member-id-encoding", "info")
}

// ------------------------------------------- (5) reconnects, admin clients

// A broker restart under a legacy Java consumer: the coordinator connection
// is closed, the client reconnects to the same broker address from a new
// port (same process, same member ID) and carries on heartbeating at its
// epoch. Later its join is retried after a lost response: the coordinator
// answered the join (the answer is in the capture) but the client timed the
// request out and dropped the connection (Java NetworkClient closes a
// connection on request timeout), then retried the join with the SAME
// member ID on a new connection (KIP-1082 test plan: "Ensure the client
// retries with the same UUID member ID if a heartbeat request fails").
// ghost-member needs "a different ID B"; member-id-collision needs the two
// claimants "alive at the same time" (the old connection is closed).
// Spec requires: nothing.
func TestBlackbox6LegacyBrokerRestartReconnect(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	p := bb6Java(c, "10.20.5.5", 55000, "consumer-payments-1", "4.0.0", nil)
	m := pcapgen.JavaString(pcapgen.SeqUUID(0xe1))
	boot, sb := p.dial(bb6B1)
	bb6FindCoord(sb, bb6Group, bb6B2, 2)
	co1, s1 := p.dial(bb6B2)
	bb6CG(s1, bb6Group, m, 0, bb6ErrNone, 1)
	bb6CG(s1, bb6Group, m, 1, bb6ErrNone, 2)
	co1.Close() // broker 2 restarts
	co2, s2 := p.dial(bb6B2)
	bb6CG(s2, bb6Group, m, 2, bb6ErrNone, 2)
	bb6CG(s2, bb6Group, m, 2, bb6ErrFencedMemberEpoch, 0)
	bb6CG(s2, bb6Group, m, 0, bb6ErrNone, 5) // answered, but the client timed out
	co2.Reset()
	co3, s3 := p.dial(bb6B2)
	bb6CG(s3, bb6Group, m, 0, bb6ErrNone, 5) // retried join, same member ID
	bb6CG(s3, bb6Group, m, 5, bb6ErrNone, 5)
	bb6CG(s3, bb6Group, m, -1, bb6ErrNone, -1)
	co3.Close()
	boot.Close()
	rep := bb6Run(t, c)
	bb6Expect(t, rep, nil)
	bb6Conns(t, rep, 4)
}

// The same broker restart under a KIP-1313 client, plus a join whose answer
// never came at all (the broker went down with the request): the retry on
// the new connection uses the same member ID (= instance ID). The new
// connections send the client ID on their first request again (seed 001:
// "on the initial request on each connection") and the same instance ID.
// Spec requires: nothing.
func TestBlackbox6KIP1313BrokerRestartReconnect(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	x := pcapgen.SeqUUID(0xe2)
	m := pcapgen.JavaString(x)
	p := bb6Java(c, "10.20.5.6", 55100, "consumer-payments-1", "4.2.0", &x)
	boot, sb := p.dial(bb6B1)
	bb6FindCoord(sb, bb6Group, bb6B2, 2)
	co1, s1 := p.dial(bb6B2)
	s1.Request(pcapgen.ConsumerGroupHeartbeat(1, bb6Group, m, 0)) // broker dies before answering
	co1.Reset()
	co2, s2 := p.dial(bb6B2)
	bb6CG(s2, bb6Group, m, 0, bb6ErrNone, 1)
	bb6CG(s2, bb6Group, m, 1, bb6ErrNone, 1)
	co2.Close() // broker restarts again
	co3, s3 := p.dial(bb6B2)
	bb6CG(s3, bb6Group, m, 1, bb6ErrNone, 2)
	bb6CG(s3, bb6Group, m, -1, bb6ErrNone, -1)
	co3.Close()
	boot.Close()

	path := filepath.Join(t.TempDir(), "x.pcap")
	if err := c.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runKwatch("read", "--format", "json", "--fail-on", "never", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep bb6Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	bb6Expect(t, rep, nil)
	if rep.Totals.Requests != rep.Totals.Responses+1 {
		t.Errorf("requests %d responses %d: one join is unanswered", rep.Totals.Requests, rep.Totals.Responses)
	}
	if n := bb6Num(bb6Row(t, rep, x)["connections"]); n != 4 {
		t.Errorf("instance connections %d, want 4", n)
	}
}

// Many short-lived admin connections (an AdminClient per CLI call, or
// kafka-topics.sh in a loop): ApiVersions + Metadata + close, 20 times, by a
// legacy admin client (client ID on both requests) and by a KIP-1313 admin
// client created once and reconnecting (same instance ID on every
// connection, client ID on each connection's first request). SPEC 2: "The
// audit state is per TCP connection ... plus per client instance (a
// non-zero header instance ID) across connections"; 3.1
// instance-id-shared needs two hosts or two client IDs.
// Spec requires: nothing; one legacy row and one instance row of 20
// connections each.
func TestBlackbox6ShortLivedAdminConnections(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	x := pcapgen.SeqUUID(0xf1)
	legacy := bb6Java(c, "10.20.6.5", 56000, "adminclient-1", "3.9.0", nil)
	modern := bb6Java(c, "10.20.6.6", 56000, "adminclient-1", "4.2.0", &x)
	brokers := []netip.AddrPort{bb6B1, bb6B2, bb6B3}
	for i := range 20 {
		for _, p := range []*bb6Proc{legacy, modern} {
			cn, s := p.dial(brokers[i%3])
			bb6Meta(s)
			cn.Close()
		}
	}
	rep := bb6Run(t, c)
	bb6Expect(t, rep, nil)
	bb6Conns(t, rep, 40)
	bb6Hdr(t, rep, 0, 0, 80)
	if rep.Totals.ClientIDRepeats != 20 {
		t.Errorf("client_id_repeats %d, want 20 (the legacy Metadata requests)", rep.Totals.ClientIDRepeats)
	}
	if n := bb6Num(bb6Row(t, rep, x)["connections"]); n != 20 {
		t.Errorf("instance connections %d, want 20", n)
	}
	rows := bb6Legacy(rep)
	if len(rows) != 1 || bb6Num(rows[0]["connections"]) != 20 {
		t.Errorf("legacy rows %v, want one of 20 connections", rows)
	}
	if len(rep.Instances) != 2 {
		t.Errorf("instance rows %d, want 2", len(rep.Instances))
	}
}

// A KIP-1313 JVM running a producer and a consumer (two clients, so two
// instance IDs P and C, client IDs "producer-1" and "consumer-payments-1"),
// both talking to broker 1 from the same host; the producer has telemetry
// (body P) and the consumer a group (member ID = C) and telemetry (body C).
// Each instance is consistent with itself: no instance-id-shared (one ID,
// one host, one client ID), no misalignment, no collision.
// Spec requires: nothing; two rows with the right client IDs.
func TestBlackbox6KIP1313ProducerAndConsumerOneJVM(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	pid, cid := pcapgen.SeqUUID(0x15), pcapgen.SeqUUID(0x25)
	prod := bb6Java(c, "10.20.7.5", 57000, "producer-1", "4.2.0", &pid)
	cons := bb6Java(c, "10.20.7.5", 57100, "consumer-payments-1", "4.2.0", &cid)
	pc, ps := prod.dial(bb6B1)
	cc, cs := cons.dial(bb6B1)
	bb6Meta(ps)
	bb6Meta(cs)
	bb6GTS(ps, pid, bb6ErrNone, bb6Zero, 1)
	bb6GTS(cs, cid, bb6ErrNone, bb6Zero, 1)
	bb6FindCoord(cs, bb6Group, bb6B1, 1)
	co, cos := cons.dial(bb6B1)
	m := pcapgen.JavaString(cid)
	bb6CG(cos, bb6Group, m, 0, bb6ErrNone, 1)
	for i := range 3 {
		bb6Produce(ps)
		bb6Fetch(cs)
		bb6CG(cos, bb6Group, m, 1+int32(i), bb6ErrNone, 2+int32(i))
	}
	bb6Push(ps, pid, 1, true, bb6ErrNone)
	bb6CG(cos, bb6Group, m, -1, bb6ErrNone, -1)
	bb6Push(cs, cid, 1, true, bb6ErrNone)
	pc.Close()
	cc.Close()
	co.Close()
	rep := bb6Run(t, c)
	bb6Expect(t, rep, nil)
	if got := bb6Strs(bb6Row(t, rep, pid)["client_ids"]); fmt.Sprint(got) != "[producer-1]" {
		t.Errorf("producer client_ids %v", got)
	}
	if got := bb6Strs(bb6Row(t, rep, cid)["client_ids"]); fmt.Sprint(got) != "[consumer-payments-1]" {
		t.Errorf("consumer client_ids %v", got)
	}
}

// KIP-1082's motivating case, handled the KIP-1082 way: an AsyncKafkaConsumer
// sends its join and is closed before the answer arrives; it sends the leave
// with the member ID it generated (non-empty), so the broker can remove the
// member. SPEC 3.4: leave-without-member-id needs an empty member ID;
// ghost-member needs a retried join with a different ID. The answers come
// back in order. Spec requires: nothing.
func TestBlackbox6CloseDuringJoinLeavesWithOwnID(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	m := pcapgen.JavaString(pcapgen.SeqUUID(0x35))
	p := bb6Java(c, "10.20.8.5", 58000, "consumer-payments-1", "4.0.0", nil)
	boot, sb := p.dial(bb6B1)
	bb6FindCoord(sb, bb6Group, bb6B1, 1)
	co, s := p.dial(bb6B1)
	corrs, _ := s.Pipeline(pcapgen.ConsumerGroupHeartbeat(1, bb6Group, m, 0), pcapgen.ConsumerGroupHeartbeat(1, bb6Group, m, -1))
	s.Respond(corrs[0], pcapgen.ConsumerGroupHeartbeatResponse(1, bb6ErrNone, pcapgen.Ptr(m), 1))
	s.Respond(corrs[1], pcapgen.ConsumerGroupHeartbeatResponse(1, bb6ErrNone, pcapgen.Ptr(m), -1))
	co.Close()
	boot.Close()
	rep := bb6Run(t, c)
	bb6Expect(t, rep, nil)
}

// A Java 3.7 consumer (group.protocol=consumer, early access) against a
// broker whose ConsumerGroupHeartbeat stops at v0: the join carries an
// empty member ID and the broker assigns one (KIP-1082: "If a client using
// an older version ... it will still follow the rules" of KIP-848).
// SPEC 3.4 member-id-empty: "error (info below the required version)", the
// required version being 1; 3.5 broker-generated-member-id and
// broker-accepted-invalid only "at or above the required version"; 3.7:
// "moving from an empty member ID to it is no member-id-changed, and the
// member-ID property rules ... do not judge it". Spec requires:
// member-id-empty x1, info.
func TestBlackbox6JavaV0BrokerAssignedLifecycle(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	assigned := "broker-assigned-member-0001"
	p := bb6Java(c, "10.20.8.6", 58100, "consumer-payments-1", "3.7.0", nil)
	boot, sb := p.dial(bb6B1)
	bb6FindCoord(sb, bb6Group, bb6B2, 2)
	co, s := p.dial(bb6B2)
	s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(0, bb6Group, "", 0), pcapgen.ConsumerGroupHeartbeatResponse(0, bb6ErrNone, pcapgen.Ptr(assigned), 1))
	for e := int32(1); e <= 3; e++ {
		s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(0, bb6Group, assigned, e), pcapgen.ConsumerGroupHeartbeatResponse(0, bb6ErrNone, pcapgen.Ptr(assigned), e+1))
	}
	s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(0, bb6Group, assigned, -1), pcapgen.ConsumerGroupHeartbeatResponse(0, bb6ErrNone, pcapgen.Ptr(assigned), -1))
	co.Close()
	boot.Close()
	rep := bb6Run(t, c)
	bb6Expect(t, rep, map[string]int{"member-id-empty": 1})
	bb6Sev(t, rep, "member-id-empty", "info")
}
