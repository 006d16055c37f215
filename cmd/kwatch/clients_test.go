package main

// Whole sessions of real client libraries (Java with and without KIP-1313,
// librdkafka, kgo, Streams, share groups) over several connections and
// brokers: bootstrap, coordinator moves, fencing, static membership,
// telemetry, restarts, admin churn, a busy cluster. A well-behaved client must
// give exactly the findings SPEC.md requires (usually none), and each variant
// that breaks one rule gives that rule only.
// Expectations come from SPEC.md and README.md's "Rules: where SPEC.md is
// silent" only, never from kwatch's implementation.

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kwatch/kwatch/internal/pcapgen"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestClientReference: the clean reference conversation. SPEC 3.1
// instance-id-changed "a later v2 request carries a non-zero instance ID
// different from the first"; 3.2 client-id-changed "a later request carries
// a non-null client ID different from the first request's"; 3.3 row 5
// "H | R != H | INVALID_REQUEST | telemetry-id-mismatch"; 3.5
// broker-accepted-invalid "answered without INVALID_REQUEST"; 3.4
// member-id-empty "a join carries an empty member ID" (error from v1).
func TestClientReference(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	bb4Ref(c, pcapgen.ConnOptions{}).Close()
	rep := bbRun(t, c)
	bbExpect(t, rep, bb4RefRules)
	for _, f := range rep.Findings {
		if f["confidence"] != "full" {
			t.Errorf("%v confidence %v on a clean capture observed from start", f["rule"], f["confidence"])
		}
	}
	if rep.Totals.Requests != bb4RefRequests || rep.Totals.Responses != bb4RefRequests {
		t.Errorf("requests %d responses %d, want %d each", rep.Totals.Requests, rep.Totals.Responses, bb4RefRequests)
	}
	for ev, n := range rep.Totals.Coverage {
		if n != 0 {
			t.Errorf("coverage %s = %d on a clean capture", ev, n)
		}
	}
}

// TestClientInterleaved: SPEC 2 "The audit state is per TCP connection
// (client ip:port to broker ip:port)". Three clients whose packets
// interleave request by request each give exactly their own findings:
// the reference client, a compliant one, and one whose only fault is
// instance-id-late (from its 6th request on).
func TestClientInterleaved(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{Perturb: pcapgen.Perturb{MSS: 64, RetransmitEvery: 5}})
	ref := c.Conn(pcapgen.ConnOptions{})
	good := c.Conn(pcapgen.ConnOptions{})
	late := c.Conn(pcapgen.ConnOptions{})
	gs := bb4Sess(good, pcapgen.Ptr("good-app"), bbID(bb4Z))
	ls := bb4Sess(late, pcapgen.Ptr("late-app"), nil)
	steps := bb4RefSteps()
	for i, st := range steps {
		q, r := bb4Encode(i, st)
		ref.Send(q)
		_, gq := gs.Encode(pcapgen.Metadata(12, "orders"))
		good.Send(gq)
		if i == 5 {
			ls.Header.InstanceID = bbID(pcapgen.SeqUUID(0xd0))
		}
		_, lq := ls.Encode(pcapgen.Metadata(12, "orders"))
		late.Send(lq)
		ref.Reply(r)
		good.Reply(pcapgen.EncodeResponse(gs.Header.CorrelationID-1, 12, pcapgen.MetadataResponse(12, "10.0.0.1", 9092)))
		late.Reply(pcapgen.EncodeResponse(ls.Header.CorrelationID-1, 12, pcapgen.MetadataResponse(12, "10.0.0.1", 9092)))
		gs.Header.ClientID = nil
		ls.Header.ClientID = nil
	}
	ref.Close()
	good.Close()
	late.Close()
	rep := bbRun(t, c)
	want := map[string]int{}
	for r, n := range bb4RefRules {
		want[r] = n
	}
	want["instance-id-late"] = 6 // 3.7: once per offending request (6..11)
	bbExpect(t, rep, want)
	for _, f := range rep.Findings {
		conn := f["conn"].(map[string]any)
		wantClient := ref.Client().String()
		if f["rule"] == "instance-id-late" {
			wantClient = late.Client().String()
		}
		if conn["client"] != wantClient {
			t.Errorf("%v on %v, want %v", f["rule"], conn["client"], wantClient)
		}
	}
	if rep.Totals.Requests != 3*len(steps) || rep.Totals.Responses != 3*len(steps) {
		t.Errorf("requests %d responses %d, want %d", rep.Totals.Requests, rep.Totals.Responses, 3*len(steps))
	}
	bb4Cov(t, rep, "unmatched-response", 0)
}

// TestClientSeveralBrokers: SPEC 2 "The audit state is per TCP
// connection (client ip:port to broker ip:port)", and 3.1
// instance-id-shared "one instance ID is used from two different client
// hosts, or with two different client IDs". One process (same host, same
// client ID, same instance ID) talking to three brokers is consistent on
// each connection: no finding. A fourth connection whose first request
// omits the instance ID is instance-id-late on that connection only.
func TestClientSeveralBrokers(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	host := netip.MustParseAddr("10.7.0.5")
	var conns []*pcapgen.Conn
	var sess []*pcapgen.Session
	for i := range 4 {
		cn := c.Conn(pcapgen.ConnOptions{
			Client: netip.AddrPortFrom(host, uint16(50000+i)),
			Broker: netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 0, byte(1 + i)}), 9092),
		})
		var id *[16]byte
		if i < 3 {
			id = bbID(bb4X)
		}
		s := bb4Sess(cn, pcapgen.Ptr("orders-app"), id)
		conns = append(conns, cn)
		sess = append(sess, s)
	}
	for round := range 3 {
		for i, s := range sess {
			if i == 3 && round == 2 {
				s.Header.InstanceID = bbID(bb4X)
			}
			bbMeta(s)
			s.Header.ClientID = nil
		}
	}
	for _, cn := range conns {
		cn.Close()
	}
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"instance-id-late": 1})
	if fs := bbOf(rep, "instance-id-late"); len(fs) == 1 {
		if got := fs[0]["conn"].(map[string]any)["broker"]; got != "10.0.0.4:9092" {
			t.Errorf("instance-id-late on broker %v, want 10.0.0.4:9092", got)
		}
	}
}

// TestClientReconnect: SPEC 2 "The audit state is per TCP connection".
// The same client reconnecting from a new port starts a new connection: its
// first request there sets the state anew, so a consistent run with another
// instance ID (a restarted process) is no instance-id-changed, and a first
// request without an instance ID followed by none is compliant. The old
// connection's client-id does not carry over either (client-id-changed
// needs the same connection).
func TestClientReconnect(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	host := netip.MustParseAddr("10.7.0.6")
	broker := netip.MustParseAddrPort("10.0.0.1:9092")
	ids := []*[16]byte{bbID(bb4X), bbID(bb4Y), nil}
	cids := []string{"a-app", "b-app", "c-app"}
	for i, id := range ids {
		cn := c.Conn(pcapgen.ConnOptions{Client: netip.AddrPortFrom(host, uint16(51000+i)), Broker: broker})
		s := bb4Sess(cn, pcapgen.Ptr(cids[i]), id)
		bbMeta(s)
		s.Header.ClientID = nil
		bbMeta(s)
		bbMeta(s)
		cn.Close()
	}
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{})
	if rep.Totals.KafkaConnections != 3 {
		t.Errorf("kafka_connections %d, want 3", rep.Totals.KafkaConnections)
	}
}

// ------------------------------------------------------------------ helpers

var (
	bb6B1 = netip.MustParseAddrPort("10.0.0.1:9092")
	bb6B2 = netip.MustParseAddrPort("10.0.0.2:9092")
	bb6B3 = netip.MustParseAddrPort("10.0.0.3:9092")

	bb6TopicID = pcapgen.SeqUUID(0xe0)
)

const bb6Group = "payments"

// bb6Run writes c and analyses it with `kwatch read --format json`.
func bb6Run(t *testing.T, c *pcapgen.Capture) bbReport {
	t.Helper()
	if err := c.Err(); err != nil {
		t.Fatalf("scenario: %v", err)
	}
	rep, _ := bbReadAs[bbReport](t, bbCaptureFile(t, c, "lifecycle.pcap"))
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

// bb6Sev asserts the severity of every finding of rule.
func bb6Sev(t *testing.T, rep bbReport, rule, sev string) {
	t.Helper()
	for _, f := range rep.Findings {
		if f["rule"] == rule && f["severity"] != sev {
			t.Errorf("%s severity %v, want %s", rule, f["severity"], sev)
		}
	}
}

// bb6Hdr asserts requests_by_header_version.
func bb6Hdr(t *testing.T, rep bbReport, v0, v1, v2 int) {
	t.Helper()
	h := rep.Totals.ByHeaderVersion
	if h["v0"] != v0 || h["v1"] != v1 || h["v2"] != v2 {
		t.Errorf("requests_by_header_version %v, want v0:%d v1:%d v2:%d", h, v0, v1, v2)
	}
	if rep.Totals.Requests != v0+v1+v2 {
		t.Errorf("requests %d, want %d", rep.Totals.Requests, v0+v1+v2)
	}
}

func bb6Conns(t *testing.T, rep bbReport, n int) {
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
func bb6Row(t *testing.T, rep bbReport, id [16]byte) map[string]any {
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
func bb6Legacy(rep bbReport) []map[string]any {
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

// bb6CGStatic is bbCG with group.instance.id set (static membership).
func bb6CGStatic(s *pcapgen.Session, group, member, static string, epoch int32, respEpoch int32) {
	r := pcapgen.ConsumerGroupHeartbeat(1, group, member, epoch)
	r.InstanceID = pcapgen.Ptr(static)
	s.RoundTrip(r, pcapgen.ConsumerGroupHeartbeatResponse(1, errNone, pcapgen.Ptr(member), respEpoch))
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
func TestClientJavaLegacyConsumerLifecycle(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	p := bb6Java(c, "10.20.0.5", 50100, "consumer-payments-1", "3.9.0", nil)
	m := pcapgen.JavaString(pcapgen.SeqUUID(0x11))
	// Second consumer of the same group in the same JVM.
	p2 := bb6Java(c, "10.20.0.5", 50200, "consumer-payments-2", "3.9.0", nil)
	m2 := pcapgen.JavaString(pcapgen.SeqUUID(0x21))

	boot, sb := p.dial(bb6B1) // bootstrap (node -1)
	bbMeta(sb)
	n2, s2 := p.dial(bb6B2) // node 2, least loaded
	bb6FindCoord(s2, bb6Group, bb6B3, 3)
	coord, sc := p.dial(bb6B3) // coordinator connection to broker 3
	bbCG(sc, bb6Group, m, 0, errNone, 1)
	n3, s3 := p.dial(bb6B3) // node 3, partition leader: fetches
	bb6Fetch(s3)
	bbCG(sc, bb6Group, m, 1, errNone, 2)
	bb6Fetch(s3)
	bbCG(sc, bb6Group, m, 2, errNone, 3)

	// The second consumer joins through the same coordinator broker on its
	// own connections.
	c2n, c2s := p2.dial(bb6B2)
	bb6FindCoord(c2s, bb6Group, bb6B3, 3)
	c2c, c2cs := p2.dial(bb6B3)
	bbCG(c2cs, bb6Group, m2, 0, errNone, 4)
	bbCG(sc, bb6Group, m, 3, errNone, 4)

	// Fenced: rejoin with the same member ID at epoch 0.
	bbCG(sc, bb6Group, m, 4, errFencedMemberEpoch, 0)
	bbCG(sc, bb6Group, m, 0, errNone, 6)
	bb6Fetch(s3)
	bbCG(sc, bb6Group, m, 6, errNone, 6)
	bbCG(c2cs, bb6Group, m2, 4, errNone, 6)

	// Coordinator moves to broker 2: new coordinator connection, same member
	// ID, same epoch; the old coordinator connection stays open.
	bbCG(sc, bb6Group, m, 6, errNotCoordinator, 0)
	bb6FindCoord(s2, bb6Group, bb6B2, 2)
	coord2, sc2 := p.dial(bb6B2)
	bbCG(sc2, bb6Group, m, 6, errNone, 6)
	bb6Fetch(s3)
	bbCG(sc2, bb6Group, m, 6, errNone, 7)
	bbMeta(s2) // metadata refresh on the node connection

	// The second consumer's coordinator moves too.
	bbCG(c2cs, bb6Group, m2, 6, errNotCoordinator, 0)
	bb6FindCoord(c2s, bb6Group, bb6B2, 2)
	c2c2, c2cs2 := p2.dial(bb6B2)
	bbCG(c2cs2, bb6Group, m2, 6, errNone, 7)

	// close(): leave at epoch -1 on the current coordinator, then close all.
	bbCG(sc2, bb6Group, m, -1, errNone, -1)
	bbCG(c2cs2, bb6Group, m2, -1, errNone, -1)
	for _, cn := range []*pcapgen.Conn{boot, n2, coord, n3, coord2, c2n, c2c, c2c2} {
		cn.Close()
	}

	rep := bb6Run(t, c)
	bbExpect(t, rep, nil)
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
func TestClientJavaLegacyStaticMembershipRestart(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	for gen := range 2 {
		p := bb6Java(c, "10.20.0.6", uint16(50300+100*gen), "consumer-payments-static", "4.0.0", nil)
		m := pcapgen.JavaString(pcapgen.SeqUUID(byte(0x31 + 0x10*gen)))
		boot, sb := p.dial(bb6B1)
		bbMeta(sb)
		bb6FindCoord(sb, bb6Group, bb6B2, 2)
		coord, sc := p.dial(bb6B2)
		bb6CGStatic(sc, bb6Group, m, "pod-0", 0, 10+int32(gen))
		bb6CGStatic(sc, bb6Group, m, "pod-0", 10+int32(gen), 10+int32(gen))
		bbCG(sc, bb6Group, m, 10+int32(gen), errNone, 10+int32(gen))
		bb6CGStatic(sc, bb6Group, m, "pod-0", -2, -2)
		coord.Close()
		boot.Close()
	}
	rep := bb6Run(t, c)
	bbExpect(t, rep, nil)
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
func TestClientJavaKIP1313ConsumerLifecycle(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	x := pcapgen.SeqUUID(0x41)
	m := pcapgen.JavaString(x)
	p := bb6Java(c, "10.20.0.7", 50500, "consumer-payments-1", "4.2.0", &x)

	boot, sb := p.dial(bb6B1)
	bbMeta(sb)
	n2, s2 := p.dial(bb6B2)
	bb6FindCoord(s2, bb6Group, bb6B3, 3)
	bbGTSSub(s2, x, errNone, bb6Zero, 9)
	coord, sc := p.dial(bb6B3)
	bbCG(sc, bb6Group, m, 0, errCoordLoading, 0) // retriable: retried with the same ID
	bbCG(sc, bb6Group, m, 0, errNone, 1)
	n3, s3 := p.dial(bb6B3)
	bb6Fetch(s3)
	bbCG(sc, bb6Group, m, 1, errNone, 2)
	bbPushSub(s2, x, 9, false, errNone)
	bbCG(sc, bb6Group, m, 2, errFencedMemberEpoch, 0)
	bbCG(sc, bb6Group, m, 0, errNone, 4)
	bb6Fetch(s3)
	// Coordinator moves to broker 2 (new connection), then back to broker 3
	// on the coordinator connection that stayed open.
	bbCG(sc, bb6Group, m, 4, errNotCoordinator, 0)
	bb6FindCoord(s2, bb6Group, bb6B2, 2)
	coord2, sc2 := p.dial(bb6B2)
	bbCG(sc2, bb6Group, m, 4, errNone, 5)
	bbCG(sc2, bb6Group, m, 5, errNone, 5)
	bb6Fetch(s3)
	bbCG(sc2, bb6Group, m, 5, errNotCoordinator, 0)
	bb6FindCoord(s2, bb6Group, bb6B3, 3)
	bbCG(sc, bb6Group, m, 5, errNone, 6)
	bbPushSub(s2, x, 9, false, errNone)
	bbCG(sc, bb6Group, m, -1, errNone, -1)
	bbPushSub(s2, x, 9, true, errNone) // terminating push on close
	for _, cn := range []*pcapgen.Conn{boot, n2, coord, n3, coord2} {
		cn.Close()
	}

	rep := bb6Run(t, c)
	bbExpect(t, rep, nil)
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
func TestClientJavaKIP1313StaticRestart(t *testing.T) {
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
		bbCG(sc, bb6Group, m, 20+int32(gen), errNone, 20+int32(gen))
		bb6CGStatic(sc, bb6Group, m, "pod-0", -2, -2)
		coord.Close()
		boot.Close()
	}
	rep := bb6Run(t, c)
	bbExpect(t, rep, nil)
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
func TestClientSASLPlainLifecycle(t *testing.T) {
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
		bbMeta(s)
		bb6Produce(s)
		cn.Close()
	}
	rep := bb6Run(t, c)
	bbExpect(t, rep, nil)
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
func TestClientTelemetryLegacyLifecycle(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	b := pcapgen.SeqUUID(0x81)
	p := bb6Java(c, "10.20.1.5", 51000, "producer-1", "3.9.0", nil)
	c1, s1 := p.dial(bb6B1)
	bbMeta(s1)
	bbGTSSub(s1, bb6Zero, errNone, b, 3)
	c2, s2 := p.dial(bb6B2)
	bb6Produce(s2)
	bbPushSub(s2, b, 3, false, errNone)
	bbPushSub(s1, b, 3, false, errUnknownSubscription)
	bbGTSSub(s1, b, errNone, bb6Zero, 4)
	bbPushSub(s1, b, 4, false, errNone)
	bb6Produce(s2)
	bbPushSub(s2, b, 4, true, errNone)
	c1.Close()
	c2.Close()
	rep := bb6Run(t, c)
	bbExpect(t, rep, nil)
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
func TestClientTelemetryLegacyApacheBrokerEcho(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	b := pcapgen.SeqUUID(0x82)
	p := bb6Java(c, "10.20.1.6", 51100, "producer-1", "3.9.0", nil)
	c1, s1 := p.dial(bb6B1)
	bbGTSSub(s1, bb6Zero, errNone, b, 3)
	bbPushSub(s1, b, 3, false, errUnknownSubscription)
	bbGTSSub(s1, b, errNone, b, 4)
	bbPushSub(s1, b, 4, false, errNone)
	c1.Close()
	c2, s2 := p.dial(bb6B2) // broker 1 restarted; telemetry moves on
	bbGTSSub(s2, b, errNone, b, 5)
	bbPushSub(s2, b, 5, true, errNone)
	c2.Close()
	rep := bb6Run(t, c)
	bbExpect(t, rep, map[string]int{"broker-telemetry-id-echo": 2})
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
func TestClientTelemetryLegacyLostAssignment(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	b1, b2 := pcapgen.SeqUUID(0x83), pcapgen.SeqUUID(0x84)
	p := bb6Java(c, "10.20.1.7", 51200, "consumer-x", "3.9.0", nil)
	c1, s1 := p.dial(bb6B1)
	bbGTSSub(s1, bb6Zero, errNone, b1, 3)
	c1.Reset()
	c2, s2 := p.dial(bb6B2)
	bbGTSSub(s2, bb6Zero, errNone, b2, 3)
	bbPushSub(s2, b2, 3, false, errNone)
	bbPushSub(s2, b2, 3, true, errNone)
	c2.Close()
	rep := bb6Run(t, c)
	bbExpect(t, rep, nil)
}

// KIP-1313 telemetry lifecycle on two connections: GetTelemetrySubscriptions
// with body X = header X (row 3, answered 0 and NONE), pushes with X on
// another connection, UNKNOWN_SUBSCRIPTION_ID then a new subscription with
// body X, a terminating push with X. SPEC 3.3: mismatch needs "body ID
// differs from a non-zero header ID"; requested-with-header needs body 0.
// Spec requires: nothing; the row's telemetry ID is X.
func TestClientTelemetryKIP1313Lifecycle(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	x := pcapgen.SeqUUID(0x85)
	p := bb6Java(c, "10.20.1.8", 51300, "producer-2", "4.2.0", &x)
	c1, s1 := p.dial(bb6B1)
	bbMeta(s1)
	bbGTSSub(s1, x, errNone, bb6Zero, 7)
	c2, s2 := p.dial(bb6B2)
	bb6Produce(s2)
	bbPushSub(s2, x, 7, false, errNone)
	bbPushSub(s2, x, 7, false, errUnknownSubscription)
	bbGTSSub(s2, x, errNone, bb6Zero, 8)
	bbPushSub(s1, x, 8, false, errNone)
	bbPushSub(s1, x, 8, true, errNone)
	c1.Close()
	c2.Close()
	rep := bb6Run(t, c)
	bbExpect(t, rep, nil)
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
func TestClientShareGroupLifecycle(t *testing.T) {
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
		bbMeta(sb)
		bb6FindCoord(sb, g, bb6B2, 2)
		coord, sc := mc.p.dial(bb6B2)
		leader, sl := mc.p.dial(bb6B3)
		bbSG(sc, g, mc.m, 0, errNone, 1)
		bb6ShareFetch(sl, g, mc.m, 0)
		bbSG(sc, g, mc.m, 1, errNone, 2)
		bb6ShareFetch(sl, g, mc.m, 1)
		bbSG(sc, g, mc.m, 2, errUnknownMemberID, 0)
		bbSG(sc, g, mc.m, 0, errNone, 4)
		bb6ShareFetch(sl, g, mc.m, 0)
		bbSG(sc, g, mc.m, 4, errNone, 5)
		bbSG(sc, g, mc.m, -1, errNone, -1)
		all = append(all, boot, coord, leader)
	}
	for _, cn := range all {
		cn.Close()
	}
	rep := bb6Run(t, c)
	bbExpect(t, rep, nil)
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
func TestClientStreamsGroupLifecycle(t *testing.T) {
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
		bbST(sc, g, a.m, 0, errNone, 1)
		bbST(sc, g, a.m, 1, errNone, 2)
		bb6Fetch(sb)
		bbST(sc, g, a.m, 2, errFencedMemberEpoch, 0)
		bbST(sc, g, a.m, 0, errNone, 3)
		bbST(sc, g, a.m, 3, errNone, 3)
		bbST(sc, g, a.m, -1, errNone, -1)
		all = append(all, boot, coord)
	}
	for _, cn := range all {
		cn.Close()
	}
	rep := bb6Run(t, c)
	bbExpect(t, rep, nil)
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
	bbMeta(s1)
	bb6FindCoord(s1, bb6Group, bb6B1, 1)
	c2, s2 := p.dial(bb6B2)
	bbCG(s1, bb6Group, m, 0, errNone, 1)
	bb6Fetch(s2)
	bbCG(s1, bb6Group, m, 1, errNone, 2)
	bb6Fetch(s1)
	bb6Fetch(s2)
	bbCG(s1, bb6Group, m, 2, errNotCoordinator, 0)
	bb6FindCoord(s1, bb6Group, bb6B2, 2)
	bbCG(s2, bb6Group, m, 2, errNone, 3)
	bb6Fetch(s1)
	bbCG(s2, bb6Group, m, 3, errNone, 3)
	bbCG(s2, bb6Group, m, -1, errNone, -1)
	c1.Close()
	c2.Close()
	return m
}

// librdkafka with a member ID whose standard base64 holds neither '+' nor
// '/': the text is exactly Java's form. SPEC 3.2: the client ID on every
// request is, for a legacy client, "a statistic, not a finding". README 7:
// heartbeats moving to another open connection of the same host with an
// epoch past the join are the same process. Spec requires: nothing.
func TestClientLibrdkafkaLifecycle(t *testing.T) {
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
	bbExpect(t, rep, nil)
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
func TestClientLibrdkafkaSlashMemberID(t *testing.T) {
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
	bbExpect(t, rep, map[string]int{"member-id-encoding": 2})
	bb6Sev(t, rep, "member-id-encoding", "warn")
}

// franz-go's kgo spells member IDs as padded URL-safe base64 (SPEC 1:
// "URL-safe base64 with '==' padding (24 chars; franz-go's kgo spells its
// member IDs so)"). A kgo consumer with one coordinator connection: SPEC 3.4
// member-id-encoding, info (no '+' or '/'), once for its (connection, group,
// member ID) however many heartbeats. Spec requires: member-id-encoding x1,
// info.
func TestClientKgoPaddedMemberID(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	m := pcapgen.PaddedURL(pcapgen.SeqUUID(0xd1))
	p := &bb6Proc{c: c, host: netip.MustParseAddr("10.20.4.7"), port: 54100, clientID: "kgo", sw: "kgo", swv: "v1.20.0", apiV: 4}
	c1, s1 := p.dial(bb6B1)
	bbMeta(s1)
	bb6FindCoord(s1, bb6Group, bb6B2, 2)
	c2, s2 := p.dial(bb6B2)
	bbCG(s2, bb6Group, m, 0, errNone, 1)
	for e := int32(1); e <= 4; e++ {
		bbCG(s2, bb6Group, m, e, errNone, e+1)
		bb6Fetch(s1)
	}
	bbCG(s2, bb6Group, m, -1, errNone, -1)
	c1.Close()
	c2.Close()
	rep := bb6Run(t, c)
	bbExpect(t, rep, map[string]int{"member-id-encoding": 1})
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
func TestClientLegacyBrokerRestartReconnect(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	p := bb6Java(c, "10.20.5.5", 55000, "consumer-payments-1", "4.0.0", nil)
	m := pcapgen.JavaString(pcapgen.SeqUUID(0xe1))
	boot, sb := p.dial(bb6B1)
	bb6FindCoord(sb, bb6Group, bb6B2, 2)
	co1, s1 := p.dial(bb6B2)
	bbCG(s1, bb6Group, m, 0, errNone, 1)
	bbCG(s1, bb6Group, m, 1, errNone, 2)
	co1.Close() // broker 2 restarts
	co2, s2 := p.dial(bb6B2)
	bbCG(s2, bb6Group, m, 2, errNone, 2)
	bbCG(s2, bb6Group, m, 2, errFencedMemberEpoch, 0)
	bbCG(s2, bb6Group, m, 0, errNone, 5) // answered, but the client timed out
	co2.Reset()
	co3, s3 := p.dial(bb6B2)
	bbCG(s3, bb6Group, m, 0, errNone, 5) // retried join, same member ID
	bbCG(s3, bb6Group, m, 5, errNone, 5)
	bbCG(s3, bb6Group, m, -1, errNone, -1)
	co3.Close()
	boot.Close()
	rep := bb6Run(t, c)
	bbExpect(t, rep, nil)
	bb6Conns(t, rep, 4)
}

// The same broker restart under a KIP-1313 client, plus a join whose answer
// never came at all (the broker went down with the request): the retry on
// the new connection uses the same member ID (= instance ID). The new
// connections send the client ID on their first request again (seed 001:
// "on the initial request on each connection") and the same instance ID.
// Spec requires: nothing.
func TestClientKIP1313BrokerRestartReconnect(t *testing.T) {
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
	bbCG(s2, bb6Group, m, 0, errNone, 1)
	bbCG(s2, bb6Group, m, 1, errNone, 1)
	co2.Close() // broker restarts again
	co3, s3 := p.dial(bb6B2)
	bbCG(s3, bb6Group, m, 1, errNone, 2)
	bbCG(s3, bb6Group, m, -1, errNone, -1)
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
	var rep bbReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	bbExpect(t, rep, nil)
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
func TestClientShortLivedAdminConnections(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	x := pcapgen.SeqUUID(0xf1)
	legacy := bb6Java(c, "10.20.6.5", 56000, "adminclient-1", "3.9.0", nil)
	modern := bb6Java(c, "10.20.6.6", 56000, "adminclient-1", "4.2.0", &x)
	brokers := []netip.AddrPort{bb6B1, bb6B2, bb6B3}
	for i := range 20 {
		for _, p := range []*bb6Proc{legacy, modern} {
			cn, s := p.dial(brokers[i%3])
			bbMeta(s)
			cn.Close()
		}
	}
	rep := bb6Run(t, c)
	bbExpect(t, rep, nil)
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
func TestClientKIP1313ProducerAndConsumerOneJVM(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	pid, cid := pcapgen.SeqUUID(0x15), pcapgen.SeqUUID(0x25)
	prod := bb6Java(c, "10.20.7.5", 57000, "producer-1", "4.2.0", &pid)
	cons := bb6Java(c, "10.20.7.5", 57100, "consumer-payments-1", "4.2.0", &cid)
	pc, ps := prod.dial(bb6B1)
	cc, cs := cons.dial(bb6B1)
	bbMeta(ps)
	bbMeta(cs)
	bbGTSSub(ps, pid, errNone, bb6Zero, 1)
	bbGTSSub(cs, cid, errNone, bb6Zero, 1)
	bb6FindCoord(cs, bb6Group, bb6B1, 1)
	co, cos := cons.dial(bb6B1)
	m := pcapgen.JavaString(cid)
	bbCG(cos, bb6Group, m, 0, errNone, 1)
	for i := range 3 {
		bb6Produce(ps)
		bb6Fetch(cs)
		bbCG(cos, bb6Group, m, 1+int32(i), errNone, 2+int32(i))
	}
	bbPushSub(ps, pid, 1, true, errNone)
	bbCG(cos, bb6Group, m, -1, errNone, -1)
	bbPushSub(cs, cid, 1, true, errNone)
	pc.Close()
	cc.Close()
	co.Close()
	rep := bb6Run(t, c)
	bbExpect(t, rep, nil)
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
func TestClientCloseDuringJoinLeavesWithOwnID(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	m := pcapgen.JavaString(pcapgen.SeqUUID(0x35))
	p := bb6Java(c, "10.20.8.5", 58000, "consumer-payments-1", "4.0.0", nil)
	boot, sb := p.dial(bb6B1)
	bb6FindCoord(sb, bb6Group, bb6B1, 1)
	co, s := p.dial(bb6B1)
	corrs, _ := s.Pipeline(pcapgen.ConsumerGroupHeartbeat(1, bb6Group, m, 0), pcapgen.ConsumerGroupHeartbeat(1, bb6Group, m, -1))
	s.Respond(corrs[0], pcapgen.ConsumerGroupHeartbeatResponse(1, errNone, pcapgen.Ptr(m), 1))
	s.Respond(corrs[1], pcapgen.ConsumerGroupHeartbeatResponse(1, errNone, pcapgen.Ptr(m), -1))
	co.Close()
	boot.Close()
	rep := bb6Run(t, c)
	bbExpect(t, rep, nil)
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
func TestClientJavaV0BrokerAssignedLifecycle(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	assigned := "broker-assigned-member-0001"
	p := bb6Java(c, "10.20.8.6", 58100, "consumer-payments-1", "3.7.0", nil)
	boot, sb := p.dial(bb6B1)
	bb6FindCoord(sb, bb6Group, bb6B2, 2)
	co, s := p.dial(bb6B2)
	s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(0, bb6Group, "", 0), pcapgen.ConsumerGroupHeartbeatResponse(0, errNone, pcapgen.Ptr(assigned), 1))
	for e := int32(1); e <= 3; e++ {
		s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(0, bb6Group, assigned, e), pcapgen.ConsumerGroupHeartbeatResponse(0, errNone, pcapgen.Ptr(assigned), e+1))
	}
	s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(0, bb6Group, assigned, -1), pcapgen.ConsumerGroupHeartbeatResponse(0, errNone, pcapgen.Ptr(assigned), -1))
	co.Close()
	boot.Close()
	rep := bb6Run(t, c)
	bbExpect(t, rep, map[string]int{"member-id-empty": 1})
	bb6Sev(t, rep, "member-id-empty", "info")
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
func TestClientVariantSharedHost(t *testing.T) {
	c, fr := bb8bSession(map[string]bool{"shared-host": true})
	rep, _ := bb8bRun(t, c)
	bbExpect(t, rep, map[string]int{"instance-id-shared": 1})
	f := bbOne(t, rep, "instance-id-shared")
	bb8bCheck(t, f, bb8bWant{severity: "warn", confidence: "full", kip: "KIP-1313", frame: fr.hostBAV,
		client: "10.30.0.6:52000", broker: bb8bB3.String(), api: "ApiVersions"})
	if f.InstanceID != bbJ(bb8bX) {
		t.Errorf("instance_id %q, want %s", f.InstanceID, bbJ(bb8bX))
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
func TestClientVariantTelemetryBodyZero(t *testing.T) {
	c, fr := bb8bSession(map[string]bool{"telemetry-body-zero": true})
	rep, _ := bb8bRun(t, c)
	bbExpect(t, rep, map[string]int{"telemetry-id-requested-with-header": 1})
	f := bbOne(t, rep, "telemetry-id-requested-with-header")
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
func TestClientVariantRepeatClientID(t *testing.T) {
	c, fr := bb8bSession(map[string]bool{"repeat-client-id": true})
	rep, _ := bb8bRun(t, c)
	bbExpect(t, rep, map[string]int{"client-id-repeated": 1})
	f := bbOne(t, rep, "client-id-repeated")
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
func TestClientVariantStreamsLeaveEmpty(t *testing.T) {
	c, fr := bb8bSession(map[string]bool{"streams-leave-empty": true})
	rep, _ := bb8bRun(t, c)
	bbExpect(t, rep, map[string]int{"leave-without-member-id": 1})
	f := bbOne(t, rep, "leave-without-member-id")
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
func TestClientVariantRejoinNewID(t *testing.T) {
	c, fr := bb8bSession(map[string]bool{"rejoin-new-id": true})
	rep, _ := bb8bRun(t, c)
	bbExpect(t, rep, map[string]int{"member-id-changed": 1, "member-id-misaligned": 1})
	for _, r := range []string{"member-id-changed", "member-id-misaligned"} {
		f := bbOne(t, rep, r)
		bb8bCheck(t, f, bb8bWant{severity: "warn", confidence: "full", frame: fr.rejoin,
			client: "10.30.0.5:52002", broker: bb8bB3.String(), api: "ConsumerGroupHeartbeat"})
	}
	want := bb8bConsumerRow()
	want.MemberIDs[bb8bGroup] = []string{bbJ(bb8bX), bbJ(bb8bY)}
	want.Findings = map[string]int{"member-id-changed": 1, "member-id-misaligned": 1}
	bb8bCheckRow(t, "consumer", bb8bRowOf(t, rep, bb8bX), want)
}

// Variant: the producer (header P) pushes metrics with the consumer's ID X
// in the body, answered INVALID_REQUEST. SPEC 3.3 telemetry-id-mismatch
// (error): "also PushTelemetry whose body ID differs from a non-zero header
// ID"; seed 004: "It is not permitted to use one client instance ID for
// request headers and a different client instance ID for telemetry". Once
// for that request; the broker rejected it (no 3.5 finding). README 14:
// "UUIDs in expected and observed are in Java's form": expected the header
// ID P, observed the body ID X. The finding counts in the producer's row.
func TestClientVariantPushMismatch(t *testing.T) {
	c, fr := bb8bSession(map[string]bool{"push-mismatch": true})
	rep, _ := bb8bRun(t, c)
	bbExpect(t, rep, map[string]int{"telemetry-id-mismatch": 1})
	f := bbOne(t, rep, "telemetry-id-mismatch")
	bb8bCheck(t, f, bb8bWant{severity: "error", confidence: "full", frame: fr.prodPush, client: "10.30.0.5:53000",
		broker: bb8bB1.String(), api: "PushTelemetry", expected: bbJ(bb8bP), observed: bbJ(bb8bX)})
	if f.InstanceID != bbJ(bb8bP) {
		t.Errorf("instance_id %q, want the header's %s", f.InstanceID, bbJ(bb8bP))
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
func TestClientVariantFetchDropped(t *testing.T) {
	c, fr := bb8bSession(map[string]bool{"fetch-dropped": true})
	rep, _ := bb8bRun(t, c)
	bbExpect(t, rep, map[string]int{"instance-id-dropped": 1})
	bb8bCheck(t, bbOne(t, rep, "instance-id-dropped"), bb8bWant{severity: "error", confidence: "full", kip: "KIP-1313",
		frame: fr.fetch2, client: "10.30.0.5:52003", broker: bb8bB3.String(), api: "Fetch", expected: bbJ(bb8bX)})
	want := bb8bConsumerRow()
	want.Findings = map[string]int{"instance-id-dropped": 1}
	bb8bCheckRow(t, "consumer", bb8bRowOf(t, rep, bb8bX), want)
}

type bb8fClient struct {
	name     string
	java     bool // correlation IDs numbered per client across connections
	inst     *[16]byte
	clientID string
	corr     int32
	host     netip.Addr
	member   string // KIP-848 member ID ("" = none)
	group    string
	epoch    int32
	telem    [16]byte // legacy telemetry ID (body R) when non-zero
	subID    int32
}

type bb8fConn struct {
	cl      *bb8fClient
	cn      *pcapgen.Conn
	s       *pcapgen.Session
	role    string // "prod", "cons", "classic", "cgh"
	idle    bool   // silent from round idleFrom to idleTo
	started bool
}

type bb8fWorld struct {
	c       *pcapgen.Capture
	rng     *rand.Rand
	written int // requests written
	lost    int // requests whose bytes were (partly) lost
	gaps    int // losses after the connection's first captured byte
	midLost int // requests cut by the capture's start
	mids    int // mid-stream connections (including idle splits)
	per     map[string][2]int
	port    uint16
}

func (w *bb8fWorld) conn(cl *bb8fClient, broker int, role string, syn bool, p *pcapgen.Perturb) *bb8fConn {
	w.port++
	o := pcapgen.ConnOptions{
		Client:  netip.AddrPortFrom(cl.host, 40000+w.port),
		Broker:  bb8fBrokers[broker%len(bb8fBrokers)],
		NoSYN:   !syn,
		Perturb: p,
	}
	if !syn {
		w.mids++
	}
	cn := w.c.Conn(o)
	h := pcapgen.RequestHeader{InstanceID: cl.inst}
	if cl.inst == nil || syn {
		h.ClientID = pcapgen.Ptr(cl.clientID)
	}
	s := cn.Session(h)
	s.Header.CorrelationID = int32(100 + w.rng.IntN(5000))
	return &bb8fConn{cl: cl, cn: cn, s: s, role: role}
}

// after records the header template change of a KIP-1313 client after the
// connection's first request: client ID null from then on.
func (k *bb8fConn) after() {
	if k.cl.inst != nil {
		k.s.Header.ClientID = nil
	}
	k.started = true
}

func (w *bb8fWorld) pipeline(k *bb8fConn, bodies ...kmsg.Request) []int32 {
	if k.cl.java {
		k.s.Header.CorrelationID = k.cl.corr
	}
	var corrs []int32
	var frames []int
	if len(bodies) == 1 || k.s.Header.ClientID != nil && k.cl.inst != nil {
		// the first request of a KIP-1313 connection is alone in its write
		for i, b := range bodies {
			c, f := k.s.Request(b)
			corrs = append(corrs, c)
			frames = append(frames, f)
			if i == 0 {
				k.after()
			}
		}
	} else {
		corrs, frames = k.s.Pipeline(bodies...)
	}
	k.after()
	if k.cl.java {
		// other connections of the same client take numbers in between
		k.cl.corr = k.s.Header.CorrelationID + int32(w.rng.IntN(6))
	}
	if w.per == nil {
		w.per = map[string][2]int{}
	}
	pc := w.per[k.cn.Client().String()]
	for _, f := range frames {
		w.written++
		pc[0]++
		if f == 0 {
			w.lost++
			pc[1]++
		}
	}
	w.per[k.cn.Client().String()] = pc

	return corrs
}

func (w *bb8fWorld) respond(k *bb8fConn, corrs []int32, resps ...kmsg.Response) {
	var frames [][]byte
	for i, r := range resps {
		frames = append(frames, pcapgen.EncodeResponse(corrs[i], r.GetVersion(), r))
	}
	k.cn.Reply(frames...)
}

// step makes connection k do one round of its traffic.
func (w *bb8fWorld) step(k *bb8fConn, round int) {
	cl := k.cl
	modern := cl.inst != nil
	switch k.role {
	case "prod":
		n := 1 + w.rng.IntN(3)
		var bodies []kmsg.Request
		var resps []kmsg.Response
		ver := int16(7)
		if modern {
			ver = 11
		}
		for range n {
			size := []int{180, 900, 3000, 7000}[w.rng.IntN(4)]
			bodies = append(bodies, pcapgen.Produce(ver, "orders", bb8fTopicID, bb8fRecords(w.rng, size)))
			resps = append(resps, pcapgen.ProduceResponse(ver, "orders", bb8fTopicID))
		}
		corrs := w.pipeline(k, bodies...)
		w.respond(k, corrs, resps...)
	case "cons", "cgh", "classic":
		ver := int16(11)
		if modern {
			ver = 16
		}
		corrs := w.pipeline(k, pcapgen.Fetch(ver, "orders", bb8fTopicID))
		size := []int{0, 400, 5000, 20000}[w.rng.IntN(4)]
		var recs []byte
		if size > 0 {
			recs = bb8fRecords(w.rng, size)
		}
		w.respond(k, corrs, pcapgen.FetchResponse(ver, "orders", bb8fTopicID, recs))
		switch k.role {
		case "cgh":
			w.heartbeat(k)
		case "classic":
			hb := kmsg.NewPtrHeartbeatRequest()
			hb.Version = 3
			hb.Group = cl.group
			hb.Generation = 7
			hb.MemberID = cl.member
			corrs := w.pipeline(k, hb)
			r := kmsg.NewPtrHeartbeatResponse()
			r.Version = 3
			w.respond(k, corrs, r)
		}
	}
	// telemetry every 8 rounds
	if round%8 == 3 {
		switch {
		case modern:
			if cl.subID == 0 {
				cl.subID = 77
				corrs := w.pipeline(k, pcapgen.GetTelemetrySubscriptions(*cl.inst))
				w.respond(k, corrs, pcapgen.GetTelemetrySubscriptionsResponse(0, [16]byte{}, cl.subID))
			}
			corrs := w.pipeline(k, pcapgen.PushTelemetry(*cl.inst, cl.subID))
			w.respond(k, corrs, pcapgen.PushTelemetryResponse(0))
		case cl.telem != [16]byte{}:
			corrs := w.pipeline(k, pcapgen.PushTelemetry(cl.telem, 55))
			w.respond(k, corrs, pcapgen.PushTelemetryResponse(0))
		}
	}
}

func (w *bb8fWorld) heartbeat(k *bb8fConn) {
	cl := k.cl
	corrs := w.pipeline(k, pcapgen.ConsumerGroupHeartbeat(1, cl.group, cl.member, cl.epoch))
	w.respond(k, corrs, pcapgen.ConsumerGroupHeartbeatResponse(1, 0, pcapgen.Ptr(cl.member), cl.epoch))
}

type bb8fBusy struct {
	w    *bb8fWorld
	c    *pcapgen.Capture
	conn int // connections in the capture (including idle splits)
}

// bb8fBuildBusy writes the busy-cluster capture. With plant, one violation
// per rule family is hidden in it.
func bb8fBuildBusy(t *testing.T, plant bool) bb8fBusy {
	t.Helper()
	c := pcapgen.New(pcapgen.Options{Seed: 8, Step: 200 * time.Microsecond})
	w := &bb8fWorld{c: c, rng: rand.New(rand.NewPCG(8, 15))}
	var conns []*bb8fConn
	host := func(n int) netip.Addr { return netip.AddrFrom4([4]byte{10, 2, byte(n / 200), byte(n%200 + 1)}) }
	perturbs := []*pcapgen.Perturb{nil, {MSS: 536}, {Reorder: 2}, {MSS: 1448, Reorder: 3, Shuffle: true}, {MSS: 8960}, {Reorder: 2, MSS: 700}}
	pi := 0
	nextP := func() *pcapgen.Perturb { pi++; return perturbs[pi%len(perturbs)] }
	hostN := 0
	// KIP-1313 Java producers: 8 clients, 3 broker connections each.
	var javaProd []*bb8fClient
	for i := range 8 {
		hostN++
		id := pcapgen.SeqUUID(byte(0x20 + 2*i))
		cl := &bb8fClient{name: fmt.Sprintf("java-prod-%d", i), java: true, inst: &id, clientID: fmt.Sprintf("orders-producer-%d", i), corr: int32(1000 * (i + 1)), host: host(hostN)}
		javaProd = append(javaProd, cl)
		for b := range 3 {
			conns = append(conns, w.conn(cl, b, "prod", false, nextP()))
		}
	}
	// KIP-1313 Java KIP-848 consumers: 6 clients, coordinator conn + fetch conn.
	for i := range 6 {
		hostN++
		id := pcapgen.SeqUUID(byte(0x60 + 2*i))
		cl := &bb8fClient{name: fmt.Sprintf("java-cons-%d", i), java: true, inst: &id, clientID: fmt.Sprintf("orders-consumer-%d", i), corr: int32(500 * (i + 1)), host: host(hostN), member: pcapgen.JavaString(id), group: "orders-g", epoch: int32(10 + i)}
		conns = append(conns, w.conn(cl, i, "cgh", false, nextP()), w.conn(cl, i+1, "cons", false, nextP()))
	}
	// Legacy producers (librdkafka-like, per-connection correlation IDs).
	var legProd []*bb8fClient
	for i := range 5 {
		hostN++
		cl := &bb8fClient{name: fmt.Sprintf("legacy-prod-%d", i), clientID: fmt.Sprintf("rdkafka-prod-%d", i), host: host(hostN)}
		if i%2 == 0 {
			cl.telem = pcapgen.SeqUUID(byte(0xc0 + i))
		}
		legProd = append(legProd, cl)
		conns = append(conns, w.conn(cl, i, "prod", false, nextP()), w.conn(cl, i+1, "prod", false, nextP()))
	}
	// Legacy classic consumers.
	for i := range 4 {
		hostN++
		cl := &bb8fClient{name: fmt.Sprintf("classic-%d", i), clientID: fmt.Sprintf("etl-%d", i), host: host(hostN), group: "etl", member: fmt.Sprintf("etl-%d-0b5e%04d", i, i)}
		conns = append(conns, w.conn(cl, i, "classic", false, nextP()))
	}
	// Legacy KIP-848 consumers without instance IDs.
	var legCGH []*bb8fClient
	for i := range 4 {
		hostN++
		m := pcapgen.SeqUUID(byte(0xd0 + 3*i))
		cl := &bb8fClient{name: fmt.Sprintf("legacy-cgh-%d", i), clientID: fmt.Sprintf("rdkafka-cons-%d", i), host: host(hostN), member: pcapgen.JavaString(m), group: "billing", epoch: int32(4 + i)}
		legCGH = append(legCGH, cl)
		conns = append(conns, w.conn(cl, i, "cgh", false, nil))
	}
	if plant {
		// member-id-collision: two legacy hosts, both alive, one member ID.
		legCGH[1].member = legCGH[0].member
	}
	// Idle connections: a Java producer's third connection, a legacy
	// producer's second, a legacy KIP-848 consumer.
	idle := map[*bb8fConn]bool{conns[2]: true, conns[8*3+6*2+1]: true, conns[len(conns)-1]: true}
	for k := range idle {
		k.idle = true
	}
	// Losses: connections (by index) that lose one segment at a round.
	type loss struct {
		conn, round int
		toClient    bool
	}
	losses := []loss{{4, 5, false}, {7, 9, false}, {16, 12, true}, {20, 6, false}, {26, 14, false}, {31, 18, true}, {8*3 + 6*2 + 3, 8, false}, {8*3 + 6*2 + 5, 21, true}}
	// Connections whose capture starts inside a request (first write cut).
	cutStart := map[int]bool{5: true, 10: true, 8*3 + 6*2 + 2: true}
	planted := map[string]int{}
	const rounds = 42
	idleFrom, idleTo := 3, 38 // 35 rounds of 20 s: 11m40s silent
	var ghost *bb8fConn
	for r := range rounds {
		for i, k := range conns {
			if k.idle && r >= idleFrom && r < idleTo {
				continue
			}
			if k.idle && r == idleTo {
				w.mids++ // README 16: speaking again is a new mid-stream connection
				k.cl.corr += 900
				k.s.Header.CorrelationID += 900
				v := int16(12)
				if k.cl.inst == nil {
					v = 9
				}
				corrs := w.pipeline(k, pcapgen.Metadata(v, "orders"))
				w.respond(k, corrs, pcapgen.MetadataResponse(v, "10.0.0.1", 9092))
			}
			if r == 0 && !cutStart[i] && !k.started {
				// a lone small request first, so that the capture's
				// start is not inside a reordered write (README 17)
				v := int16(12)
				if k.cl.inst == nil {
					v = 9
				}
				corrs := w.pipeline(k, pcapgen.Metadata(v, "orders"))
				w.respond(k, corrs, pcapgen.MetadataResponse(v, "10.0.0.1", 9092))
			}
			if r == 0 && cutStart[i] {
				k.cn.DropNext(1)
				before := w.lost
				w.step(k, r)
				w.midLost += w.lost - before
				continue
			}
			for _, l := range losses {
				if l.conn == i && l.round == r {
					if l.toClient {
						// lose the first segment of a big Fetch answer
						corrs := w.pipeline(k, pcapgen.Fetch(16-5*b2i(k.cl.inst == nil), "orders", bb8fTopicID))
						k.cn.DropNext(1)
						v := int16(16)
						if k.cl.inst == nil {
							v = 11
						}
						w.respond(k, corrs, pcapgen.FetchResponse(v, "orders", bb8fTopicID, bb8fRecords(w.rng, 9000)))
					} else {
						k.cn.DropNext(1)
					}
					w.gaps++
				}
			}
			if plant {
				switch {
				case r == 10 && k == conns[0]:
					// instance-id-changed: one request with another ID
					y := pcapgen.SeqUUID(0xf1)
					k.s.Header.InstanceID = &y
					corrs := w.pipeline(k, pcapgen.Metadata(12, "orders"))
					w.respond(k, corrs, pcapgen.MetadataResponse(12, "10.0.0.1", 9092))
					k.s.Header.InstanceID = k.cl.inst
					planted["instance-id-changed"]++
				case r == 12 && k.cl == legProd[0] && k == conns[8*3+6*2]:
					// client-id-changed: one request names another client
					k.s.Header.ClientID = pcapgen.Ptr("rdkafka-prod-0-tmp")
					corrs := w.pipeline(k, pcapgen.Metadata(9, "orders"))
					w.respond(k, corrs, pcapgen.MetadataResponse(9, "10.0.0.1", 9092))
					k.s.Header.ClientID = pcapgen.Ptr(k.cl.clientID)
					planted["client-id-changed"]++
				case r == 20 && k == conns[3]:
					// telemetry-id-mismatch: body ID differs from the header's
					corrs := w.pipeline(k, pcapgen.GetTelemetrySubscriptions(pcapgen.SeqUUID(0xe7)))
					w.respond(k, corrs, pcapgen.GetTelemetrySubscriptionsResponse(42, [16]byte{}, 0))
					planted["telemetry-id-mismatch"]++
				}
			}
			w.step(k, r)
		}
		if r == 15 {
			// a new legacy KIP-848 consumer connects (SYN) and joins; its
			// first join gets COORDINATOR_NOT_AVAILABLE and it retries.
			hostN++
			a := pcapgen.SeqUUID(0x05)
			cl := &bb8fClient{name: "ghosty", clientID: "rdkafka-late", host: host(hostN), member: pcapgen.JavaString(a), group: "billing", epoch: 0}
			ghost = w.conn(cl, 1, "cgh", true, nil)
			corrs := w.pipeline(ghost, pcapgen.APIVersions(3, "librdkafka", "2.6.0"))
			w.respond(ghost, corrs, pcapgen.APIVersionsResponse(3))
			corrs = w.pipeline(ghost, pcapgen.ConsumerGroupHeartbeat(1, "billing", cl.member, 0))
			w.respond(ghost, corrs, pcapgen.ConsumerGroupHeartbeatResponse(1, 15, nil, 0))
			if plant {
				cl.member = pcapgen.JavaString(pcapgen.SeqUUID(0x06))
				planted["ghost-member"]++
			}
			corrs = w.pipeline(ghost, pcapgen.ConsumerGroupHeartbeat(1, "billing", cl.member, 0))
			w.respond(ghost, corrs, pcapgen.ConsumerGroupHeartbeatResponse(1, 0, pcapgen.Ptr(cl.member), 1))
			cl.epoch = 1
			conns = append(conns, ghost)
		}
		c.Sleep(20 * time.Second)
	}
	if plant {
		planted["member-id-collision"]++
	}
	if err := c.Err(); err != nil {
		t.Fatal(err)
	}
	_ = planted
	return bb8fBusy{w: w, c: c, conn: w.mids + 1}
}

func b2i(b bool) int16 {
	if b {
		return 1
	}
	return 0
}

func bb8fCheckCoverage(t *testing.T, b bb8fBusy, rep bbFindingsReport) {
	t.Helper()
	w := b.w
	if got := rep.Totals.Coverage["midstream-join"]; got != w.mids {
		t.Errorf("midstream-join %d, want %d (one per connection joined mid-stream, idle splits included)", got, w.mids)
	}
	if got := rep.Totals.Coverage["stream-gap"]; got != w.gaps {
		t.Errorf("stream-gap %d, want %d (one per lost segment)", got, w.gaps)
	}
	for _, ev := range []string{"framing-error", "tls-connection", "sasl-raw-tokens", "truncated-packet"} {
		if n := rep.Totals.Coverage[ev]; n != 0 {
			t.Errorf("coverage %s = %d, want 0", ev, n)
		}
	}
	if n := rep.Totals.Coverage["unmatched-response"]; n > w.lost {
		t.Errorf("unmatched-response %d, more than the %d requests lost", n, w.lost)
	}
	want := w.written - w.lost
	if rep.Totals.Requests != want {
		t.Errorf("totals.requests %d, want %d (%d written, %d lost with their bytes, %d of them cut by the capture's start)",
			rep.Totals.Requests, want, w.written, w.lost, w.midLost)
	}
	if rep.Totals.Connections != b.conn {
		t.Errorf("connections %d, want %d", rep.Totals.Connections, b.conn)
	}
}

// TestClientBusyClusterCompliant: a busy cluster joined mid-stream, compliant
// traffic only: zero findings, coverage only for what was lost.
func TestClientBusyClusterCompliant(t *testing.T) {
	t.Parallel()
	b := bb8fBuildBusy(t, false)
	rep := bbRunF(t, b.c)
	bbExpect(t, rep, map[string]int{})
	bb8fCheckCoverage(t, b, rep)
}

// TestClientBusyClusterPlanted: the same capture with one planted violation
// per rule family: exactly those, with SPEC/README confidence.
func TestClientBusyClusterPlanted(t *testing.T) {
	t.Parallel()
	b := bb8fBuildBusy(t, true)
	rep := bbRunF(t, b.c)
	bbExpect(t, rep, map[string]int{
		"instance-id-changed":   1,
		"client-id-changed":     1,
		"member-id-collision":   1,
		"ghost-member":          1,
		"telemetry-id-mismatch": 1,
	})
	// README 3: mid-stream + depends on the first request = partial.
	bb7Sev(t, rep, "instance-id-changed", "error", "partial")
	bb7Sev(t, rep, "client-id-changed", "warn", "partial")
	// Not first-request rules, on connections without a gap: full.
	bb7Sev(t, rep, "member-id-collision", "error", "full")
	bb7Sev(t, rep, "ghost-member", "error", "full")
	bb7Sev(t, rep, "telemetry-id-mismatch", "error", "full")
	bb8fCheckCoverage(t, b, rep)
}

// bb8gSasl is a SaslHandshake v1 (header v1, null client ID) and a
// SaslAuthenticate v2 (header v2) round trip on s.
func bb8gSasl(s *pcapgen.Session) {
	s.RoundTrip(pcapgen.SaslHandshake(1, "PLAIN"), pcapgen.SaslHandshakeResponse(1, "PLAIN"))
	a := kmsg.NewPtrSASLAuthenticateRequest()
	a.Version = 2
	a.SASLAuthBytes = []byte("\x00user\x00secret")
	ar := kmsg.NewPtrSASLAuthenticateResponse()
	s.RoundTrip(a, ar)
}

func bb8gPush(s *pcapgen.Session, body [16]byte, sub int32, code int16) int {
	f, _ := s.RoundTrip(pcapgen.PushTelemetry(body, sub), pcapgen.PushTelemetryResponse(code))
	return f
}

// TestClientJavaKIP1313FullLifecycle: the Java client after KIP-1313 end to
// end, including a reconnect to a second broker. seed 000: "If it specifies
// the value in its request headers, every request on a connection must
// specify the same value"; "(only SaslHandshake and OffsetDelete use the v1
// request header for their latest versions)"; seed 001: "sending the client
// ID only on the initial request on each connection, and then sending a null
// client ID for all subsequent requests"; seed 004 row 3: "header = UUID-H
// request = UUID-H | response.ClientInstanceId = 0 NONE | This is what we
// expect from the Apache Kafka Java client after this KIP"; seed 000:
// "when a client-generated member ID is required for the group protocol, it
// uses the client instance ID"; seed 003: "should not be reset or changed,
// even if the consumer leaves and rejoins the group". Nothing to report.
func TestClientJavaKIP1313FullLifecycle(t *testing.T) {
	c := bb8gNew()
	m := bbJ(bb8gH)
	_, s := bb7Modern(c, pcapgen.ConnOptions{Client: bb7Host("10.1.0.9", 40001)}, "orders-app", bb8gH)
	bb8gSasl(s)
	bbMeta(s)
	bbGTSSub(s, bb8gH, errNone, bb7Zero, 7)
	bb8gPush(s, bb8gH, 7, errNone)
	// subscription changed: re-fetch with the same ID, push again.
	bb8gPush(s, bb8gH, 7, errUnknownSubscription)
	bbGTSSub(s, bb8gH, errNone, bb7Zero, 8)
	bb8gPush(s, bb8gH, 8, errNone)
	// coordinator on a second broker: new connection, client ID again once.
	_, g := bb7Modern(c, pcapgen.ConnOptions{Client: bb7Host("10.1.0.9", 40002), Broker: bb7Host("10.0.0.2", 9092)}, "orders-app", bb8gH)
	bb8gSasl(g)
	bb7CG.join(g, "orders-group", m)
	bb7CG.beat(g, "orders-group", m, 1)
	// fenced: rejoin with epoch 0 and the same member ID.
	bb7CG.rt(g, "orders-group", m, 1, errFencedMemberEpoch, pcapgen.Ptr(m), 1)
	bb7CG.join(g, "orders-group", m)
	bb7CG.beat(g, "orders-group", m, 2)
	bb7CG.leave(g, "orders-group", m)
	bb7CG.join(g, "orders-group", m)
	bb7CG.leave(g, "orders-group", m)
	rep := bbRunF(t, c)
	bbExpect(t, rep, map[string]int{})
}

// TestClientTelemetryHeaderClientVariants: seed 004 (KIP-1313 GTS section):
// "If the client sends a zero ClientInstanceId in the request body, it must
// not send a ClientInstanceId in the request header"; "It is not permitted
// to use one client instance ID for request headers and a different client
// instance ID for telemetry"; the table's rows 4 and 5 are INVALID_REQUEST.
// The superseded revision ("the broker will respond with the
// ClientInstanceId from the request header") is a broker that accepts: SPEC
// 3.3 "kwatch follows the table", so that answer is broker-accepted-invalid
// (SPEC wins over the earlier seed revision).
func TestClientTelemetryHeaderClientVariants(t *testing.T) {
	cases := []struct {
		name string
		run  func(s *pcapgen.Session)
		want map[string]int
	}{
		{"row4-rejected", func(s *pcapgen.Session) {
			bbGTSSub(s, bb7Zero, errInvalidRequest, bb7Zero, 0)
		}, map[string]int{"telemetry-id-requested-with-header": 1}},
		{"row4-old-revision-echo", func(s *pcapgen.Session) {
			bbGTSSub(s, bb7Zero, errNone, bb8gH, 3)
		}, map[string]int{"telemetry-id-requested-with-header": 1, "broker-accepted-invalid": 1}},
		{"row5-rejected", func(s *pcapgen.Session) {
			bbGTSSub(s, bb8gR, errInvalidRequest, bb7Zero, 0)
		}, map[string]int{"telemetry-id-mismatch": 1}},
		{"row3-then-push-other-id", func(s *pcapgen.Session) {
			bbGTSSub(s, bb8gH, errNone, bb7Zero, 3)
			bb8gPush(s, bb8gR, 3, errInvalidRequest)
		}, map[string]int{"telemetry-id-mismatch": 1}},
		{"row3-then-push-zero", func(s *pcapgen.Session) {
			bbGTSSub(s, bb8gH, errNone, bb7Zero, 3)
			bb8gPush(s, bb7Zero, 3, errInvalidRequest)
		}, map[string]int{"telemetry-id-zero-push": 1}},
		{"refetch-after-subscription-change-asks-zero", func(s *pcapgen.Session) {
			bbGTSSub(s, bb8gH, errNone, bb7Zero, 3)
			bb8gPush(s, bb8gH, 3, errUnknownSubscription)
			bbGTSSub(s, bb7Zero, errInvalidRequest, bb7Zero, 0)
		}, map[string]int{"telemetry-id-requested-with-header": 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := bb8gNew()
			_, s := bb7Modern(c, pcapgen.ConnOptions{}, "orders-app", bb8gH)
			bbMeta(s)
			tc.run(s)
			rep := bbRunF(t, c)
			bbExpect(t, rep, tc.want)
		})
	}
}

// TestClientTelemetryLegacyResubscribe: a pre-KIP-1313 client. seed 004 row 1:
// "request.ClientInstanceId = 0 | response.ClientInstanceId = UUID-B ... The
// client will henceforth use UUID-B for client telemetry"; row 2:
// "request.ClientInstanceId = UUID-R | response.ClientInstanceId = 0". After
// a subscription change (push answered UNKNOWN_SUBSCRIPTION_ID) the client
// re-fetches with B. Variants: README rule 5, "so is asking again with body
// 0 on the connection that was given B", and a re-fetch with another ID.
func TestClientTelemetryLegacyResubscribe(t *testing.T) {
	cases := []struct {
		name  string
		refID [16]byte
		want  map[string]int
	}{
		{"conforming", bb8gB, map[string]int{}},
		{"asks-again-with-zero", bb7Zero, map[string]int{"telemetry-id-not-adopted": 1}},
		{"other-id", bb8gR, map[string]int{"telemetry-id-not-adopted": 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := bb8gNew()
			_, s := bb7Legacy(c, pcapgen.ConnOptions{}, "legacy-app")
			bbMeta(s)
			bbGTSSub(s, bb7Zero, errNone, bb8gB, 4)
			bb8gPush(s, bb8gB, 4, errNone)
			bb8gPush(s, bb8gB, 4, errUnknownSubscription)
			ans := bb7Zero
			if tc.refID == bb7Zero {
				ans = bb8gB // a broker answers a row-1 request with an ID
			}
			bbGTSSub(s, tc.refID, errNone, ans, 5)
			if tc.refID == bb8gB {
				bb8gPush(s, bb8gB, 5, errNone)
			}
			rep := bbRunF(t, c)
			bbExpect(t, rep, tc.want)
		})
	}
}

// TestClientJoinResponseLostRetry: seed 003 test plan, "Ensure the client
// retries with the same UUID member ID if a heartbeat request fails"; the
// join answered with an error (COORDINATOR_NOT_AVAILABLE) is retried with
// the same ID: nothing. Variant: "the client will retry the heartbeat
// request, leading potentially creating a new member each time" with a new
// ID: ghost-member (SPEC 3.4), on all three heartbeat APIs.
func TestClientJoinResponseLostRetry(t *testing.T) {
	for _, h := range []bb7HB{bb7CG, bb7SG, bb7ST} {
		for _, ghost := range []bool{false, true} {
			name := h.name + "/same-id"
			if ghost {
				name = h.name + "/new-id"
			}
			t.Run(name, func(t *testing.T) {
				c := bb8gNew()
				_, s := bb7Modern(c, pcapgen.ConnOptions{}, "orders-app", bb8gH)
				m := bbJ(bb8gH)
				h.send(s, "g1", m, 0) // answer lost
				h.rt(s, "g1", m, 0, errCoordNotAvailable, nil, 0)
				retry := m
				if ghost {
					retry = bbJ(bb8gH2)
				}
				h.join(s, "g1", retry)
				h.beat(s, "g1", retry, 1)
				rep := bbRunF(t, c)
				want := map[string]int{}
				if ghost {
					// the retried ID is not the header instance ID either.
					want = map[string]int{"ghost-member": 1, "member-id-misaligned": 1}
				}
				bbExpect(t, rep, want)
			})
		}
	}
}

// TestClientCloseBeforeJoinAnswerV0: seed 003 Motivation: "When an
// AsyncKafkaConsumer sends a join group heartbeat but closes before
// receiving the response, it may attempt to send a leave group heartbeat
// without a member ID. This results in ... UNKNOWN_MEMBER_ID". At
// ConsumerGroupHeartbeat v0 (below the required version) the empty join is
// member-id-empty at info (SPEC 3.4) and the leave is
// leave-without-member-id (error), with no broker rule (the leave is not in
// SPEC 3.5's list).
func TestClientCloseBeforeJoinAnswerV0(t *testing.T) {
	c := bb8gNew()
	_, s := bb7Legacy(c, pcapgen.ConnOptions{}, "old-consumer")
	h := bb7CG.at(0)
	h.send(s, "g1", "", 0)
	h.rt(s, "g1", "", -1, errUnknownMemberID, nil, -1)
	rep := bbRunF(t, c)
	bbExpect(t, rep, map[string]int{"member-id-empty": 1, "leave-without-member-id": 1})
	bb7Sev(t, rep, "member-id-empty", "info", "")
	bb7Sev(t, rep, "leave-without-member-id", "error", "")
}

// TestClientStaticMembershipRestart: static membership (group.instance.id).
// seed 003: "The consumer instance must generate a member ID when it starts
// ... It must remain the same until the process is completely stopped";
// SPEC 3.7 "A static leave (epoch -2) is a leave". A restarted process has a
// new instance ID and a new member ID under the same group.instance.id:
// nothing. Variants: the static leave without a member ID
// (leave-without-member-id), and the same process rejoining after its static
// leave with a new member ID (member-id-changed, plus misaligned).
func TestClientStaticMembershipRestart(t *testing.T) {
	static := func(h bb7HB, s *pcapgen.Session, member string, epoch int32, code int16) {
		req := h.req("static-g", member, epoch)
		switch r := req.(type) {
		case *kmsg.ConsumerGroupHeartbeatRequest:
			r.InstanceID = pcapgen.Ptr("pod-0")
		case *kmsg.StreamsGroupHeartbeatRequest:
			r.InstanceID = pcapgen.Ptr("pod-0")
		}
		resp := h.resp(code, pcapgen.Ptr(member), epoch)
		s.RoundTrip(req, resp)
	}
	for _, h := range []bb7HB{bb7CG, bb7ST} {
		t.Run(h.name+"/restart", func(t *testing.T) {
			c := bb8gNew()
			cn, s := bb7Modern(c, pcapgen.ConnOptions{Client: bb7Host("10.1.0.5", 40001)}, "orders-app", bb8gH)
			static(h, s, bbJ(bb8gH), 0, errNone)
			static(h, s, bbJ(bb8gH), 1, errNone)
			static(h, s, bbJ(bb8gH), -2, errNone)
			cn.Close()
			_, s2 := bb7Modern(c, pcapgen.ConnOptions{Client: bb7Host("10.1.0.5", 40002)}, "orders-app", bb8gH2)
			static(h, s2, bbJ(bb8gH2), 0, errNone)
			static(h, s2, bbJ(bb8gH2), 1, errNone)
			bbExpect(t, bbRunF(t, c), map[string]int{})
		})
		t.Run(h.name+"/static-leave-empty", func(t *testing.T) {
			c := bb8gNew()
			_, s := bb7Modern(c, pcapgen.ConnOptions{}, "orders-app", bb8gH)
			static(h, s, bbJ(bb8gH), 0, errNone)
			static(h, s, "", -2, errUnknownMemberID)
			bbExpect(t, bbRunF(t, c), map[string]int{"leave-without-member-id": 1})
		})
		t.Run(h.name+"/same-process-new-id", func(t *testing.T) {
			c := bb8gNew()
			_, s := bb7Modern(c, pcapgen.ConnOptions{}, "orders-app", bb8gH)
			static(h, s, bbJ(bb8gH), 0, errNone)
			static(h, s, bbJ(bb8gH), -2, errNone)
			static(h, s, bbJ(bb8gR), 0, errNone)
			bbExpect(t, bbRunF(t, c), map[string]int{"member-id-changed": 1, "member-id-misaligned": 1})
		})
	}
}

// TestClientFencedRejoinNewIDStreamsShare: seed 003 "should not be reset or
// changed, even if the consumer leaves and rejoins the group"; SPEC 3.4
// member-id-changed "across leave and rejoin and after fencing". Streams and
// share groups (the consumer case is pinned elsewhere); one finding plus
// misaligned (the new ID is not the header ID).
func TestClientFencedRejoinNewIDStreamsShare(t *testing.T) {
	for _, h := range []bb7HB{bb7SG, bb7ST} {
		t.Run(h.name, func(t *testing.T) {
			c := bb8gNew()
			_, s := bb7Modern(c, pcapgen.ConnOptions{}, "orders-app", bb8gH)
			m := bbJ(bb8gH)
			h.join(s, "g1", m)
			h.rt(s, "g1", m, 1, errFencedMemberEpoch, pcapgen.Ptr(m), 1)
			h.join(s, "g1", bbJ(bb8gR))
			rep := bbRunF(t, c)
			bbExpect(t, rep, map[string]int{"member-id-changed": 1, "member-id-misaligned": 1})
			bb7Sev(t, rep, "member-id-changed", "warn", "full")
		})
	}
}

// TestClientShareStdBase64Aligned: seed 000 "at least one other Kafka client
// implementation uses a slightly different string encoding of the member ID
// ... This is valid"; SPEC 3.4 member-id-encoding "warn if it holds '+' or
// '/'" (share fetches broke before KAFKA-19846) and 3.7 "a member ID that
// spells the instance ID's bytes in another encoding is
// member-id-alignment-encoding (plus member-id-encoding), never
// member-id-misaligned". Once per (connection, group, member ID) over a
// whole share lifecycle.
func TestClientShareStdBase64Aligned(t *testing.T) {
	c := bb8gNew()
	_, s := bb7Modern(c, pcapgen.ConnOptions{}, "share-app", bb8gPlus)
	m := pcapgen.StdBase64(bb8gPlus)
	h := bb7SG
	h.join(s, "sg", m)
	h.beat(s, "sg", m, 1)
	h.beat(s, "sg", m, 2)
	h.leave(s, "sg", m)
	h.join(s, "sg", m)
	rep := bbRunF(t, c)
	bbExpect(t, rep, map[string]int{"member-id-encoding": 1, "member-id-alignment-encoding": 1})
	bb7Sev(t, rep, "member-id-encoding", "warn", "")
	bb7Sev(t, rep, "member-id-alignment-encoding", "info", "")
}

// TestClientReconnectVariants: seed 000 "The initial client instance ID for
// each connection will be cached by the broker": state is per connection.
// A reconnect whose first request carries no instance ID and that then sends
// one is instance-id-late on the new connection only; a reconnect that sends
// its client ID only on a later request is client-id-missing-first (seed
// 001 "sending the client ID only on the initial request on each
// connection").
func TestClientReconnectVariants(t *testing.T) {
	t.Run("late-on-second-connection", func(t *testing.T) {
		c := bb8gNew()
		cn, s := bb7Modern(c, pcapgen.ConnOptions{Client: bb7Host("10.1.0.9", 40001)}, "orders-app", bb8gH)
		bbMeta(s)
		cn.Close()
		cn2 := c.Conn(pcapgen.ConnOptions{Client: bb7Host("10.1.0.9", 40002)})
		s2 := cn2.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("orders-app"), CorrelationID: 1})
		s2.RoundTrip(pcapgen.APIVersions(4, "apache-kafka-java", "4.2.0"), pcapgen.APIVersionsResponse(4))
		s2.Header.ClientID = nil
		s2.Header.InstanceID = &bb8gH
		bbMeta(s2)
		bbExpect(t, bbRunF(t, c), map[string]int{"instance-id-late": 1})
	})
	t.Run("client-id-on-second-request", func(t *testing.T) {
		c := bb8gNew()
		cn, s := bb7Modern(c, pcapgen.ConnOptions{Client: bb7Host("10.1.0.9", 40001)}, "orders-app", bb8gH)
		bbMeta(s)
		cn.Close()
		cn2 := c.Conn(pcapgen.ConnOptions{Client: bb7Host("10.1.0.9", 40002)})
		s2 := cn2.Session(pcapgen.RequestHeader{InstanceID: &bb8gH, CorrelationID: 1})
		s2.RoundTrip(pcapgen.APIVersions(4, "apache-kafka-java", "4.2.0"), pcapgen.APIVersionsResponse(4))
		s2.Header.ClientID = pcapgen.Ptr("orders-app")
		bbMeta(s2)
		bbExpect(t, bbRunF(t, c), map[string]int{"client-id-missing-first": 1})
	})
}

// TestClientSaslFlowDroppedOnAuthenticate: seed 000 "any subsequent requests
// which are missing the client instance ID (with the exception of requests
// using the v1 request header) ... will be rejected with error code
// INVALID_REQUEST". SaslHandshake v1 (v1 header) without an ID is exempt;
// SaslAuthenticate v2 (v2 header) without it is instance-id-dropped only:
// SaslAuthenticate is not among SPEC section 1's decoded bodies, so README
// rule 9 judges no broker-accepted-invalid on its answer.
func TestClientSaslFlowDroppedOnAuthenticate(t *testing.T) {
	c := bb8gNew()
	_, s := bb7Modern(c, pcapgen.ConnOptions{}, "orders-app", bb8gH)
	s.Header.InstanceID = nil
	bb8gSasl(s)
	s.Header.InstanceID = &bb8gH
	bbMeta(s)
	bbExpect(t, bbRunF(t, c), map[string]int{"instance-id-dropped": 1})
}

// TestClientTelemetryLegacyReconnect: seed 004 row 1 "The client will
// henceforth use UUID-B for client telemetry" and row 2 (non-initial, body
// UUID-R, answer 0 NONE). A legacy client reconnects (same host, no header
// ID) and re-fetches with B: nothing. Asking with body 0 on the new
// connection is README rule 5's "on another connection of a client without
// instance ID it may be a restarted process": nothing either.
func TestClientTelemetryLegacyReconnect(t *testing.T) {
	for _, again := range []bool{false, true} {
		name := "refetch-with-B"
		if again {
			name = "ask-zero-on-new-connection"
		}
		t.Run(name, func(t *testing.T) {
			c := bb8gNew()
			cn, s := bb7Legacy(c, pcapgen.ConnOptions{Client: bb7Host("10.1.0.7", 40001)}, "legacy-app")
			bbGTSSub(s, bb7Zero, errNone, bb8gB, 4)
			bb8gPush(s, bb8gB, 4, errNone)
			cn.Close()
			_, s2 := bb7Legacy(c, pcapgen.ConnOptions{Client: bb7Host("10.1.0.7", 40002)}, "legacy-app")
			if again {
				bbGTSSub(s2, bb7Zero, errNone, bb8gR, 5)
				bb8gPush(s2, bb8gR, 5, errNone)
			} else {
				bbGTSSub(s2, bb8gB, errNone, bb7Zero, 5)
				bb8gPush(s2, bb8gB, 5, errNone)
			}
			bbExpect(t, bbRunF(t, c), map[string]int{})
		})
	}
}

// TestClientPreKIPBrokerEchoesAlignedID: seed 004 "Pre-KIP-1313 - broker does
// not expect ClientInstanceId in request header and ignores it"; row 3
// expects "response.ClientInstanceId = 0". A broker that answers the
// Java client's aligned request (H, H) with a non-zero ID is
// broker-telemetry-id-echo (info, SPEC 3.5); the client itself conforms.
func TestClientPreKIPBrokerEchoesAlignedID(t *testing.T) {
	c := bb8gNew()
	_, s := bb7Modern(c, pcapgen.ConnOptions{}, "orders-app", bb8gH)
	bbGTSSub(s, bb8gH, errNone, bb8gH, 3)
	bb8gPush(s, bb8gH, 3, errNone)
	rep := bbRunF(t, c)
	bbExpect(t, rep, map[string]int{"broker-telemetry-id-echo": 1})
	bb7Sev(t, rep, "broker-telemetry-id-echo", "info", "")
}

// TestClientHeartbeatEmptyMidSession: README rule 6, "An empty member ID on a
// heartbeat that is neither a join nor a leave gives no finding"; SPEC 3.7
// "an empty member ID gives only member-id-empty or
// leave-without-member-id". A KIP-1313 consumer's session with one such
// heartbeat (answered UNKNOWN_MEMBER_ID) then a proper leave: nothing.
func TestClientHeartbeatEmptyMidSession(t *testing.T) {
	c := bb8gNew()
	_, s := bb7Modern(c, pcapgen.ConnOptions{}, "orders-app", bb8gH)
	m := bbJ(bb8gH)
	bb7CG.join(s, "g1", m)
	bb7CG.rt(s, "g1", "", 1, errUnknownMemberID, nil, 1)
	bb7CG.leave(s, "g1", m)
	bbExpect(t, bbRunF(t, c), map[string]int{})
}

var (
	bb8hBroker1 = netip.MustParseAddrPort("10.0.0.1:9092")
	bb8hBroker2 = netip.MustParseAddrPort("10.0.0.2:9092")
	bb8hBroker3 = netip.MustParseAddrPort("10.0.0.3:9092")
	bb8hTopicID = pcapgen.SeqUUID(0x21)
)

type bb8hRow struct {
	InstanceID  string              `json:"instance_id"`
	Legacy      bool                `json:"legacy"`
	ClientIDs   []string            `json:"client_ids"`
	ClientHosts []string            `json:"client_hosts"`
	Brokers     []string            `json:"brokers"`
	Connections int                 `json:"connections"`
	MemberIDs   map[string][]string `json:"member_ids"`
	Findings    map[string]int      `json:"findings"`
}

// bb8hRun writes c, reads it and checks exact rule counts and totals.
func bb8hRun(t *testing.T, c *pcapgen.Capture, want map[string]int, conns, reqs, resps int) bb8hReport {
	t.Helper()
	if err := c.Err(); err != nil {
		t.Fatal(err)
	}
	rep, _ := bbReadAs[bb8hReport](t, bbCaptureFile(t, c, ""))
	got := map[string]int{}
	for _, f := range rep.Findings {
		got[f.Rule]++
	}
	bbCompareCounts(t, "", got, want, rep.summary)
	tt := rep.Totals
	if tt.Connections != conns || tt.KafkaConnections != conns || tt.Requests != reqs || tt.Responses != resps {
		t.Errorf("totals: connections %d kafka %d requests %d responses %d; want %d/%d/%d/%d",
			tt.Connections, tt.KafkaConnections, tt.Requests, tt.Responses, conns, conns, reqs, resps)
	}
	for ev, n := range tt.Coverage {
		if n != 0 {
			t.Errorf("coverage %s = %d, want 0 (every connection observed from its SYN, nothing lost)", ev, n)
		}
	}
	return rep
}

// bb8hClient is one connection of a process: KIP-1313 clients name
// themselves once per connection (client ID on the first request, null
// after).
type bb8hClient struct {
	cn    *pcapgen.Conn
	s     *pcapgen.Session
	kip   bool
	reqs  int
	resps int
}

func bb8hConn(c *pcapgen.Capture, client, broker netip.AddrPort, clientID string, inst *[16]byte, corr int32) *bb8hClient {
	cn := c.Conn(pcapgen.ConnOptions{Client: client, Broker: broker})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr(clientID), InstanceID: inst, CorrelationID: corr})
	return &bb8hClient{cn: cn, s: s, kip: inst != nil}
}

func (k *bb8hClient) rt(req kmsg.Request, resp kmsg.Response) {
	k.s.RoundTrip(req, resp)
	if k.kip {
		k.s.Header.ClientID = nil
	}
	k.reqs++
	k.resps++
}

func (k *bb8hClient) hello() {
	k.rt(pcapgen.APIVersions(3, "apache-kafka-java", "4.2.0"), pcapgen.APIVersionsResponse(3))
	k.rt(pcapgen.Metadata(12, "orders"), pcapgen.MetadataResponse(12, "10.0.0.1", 9092))
}

func (k *bb8hClient) hb(group, member string, epoch int32, errCode int16, respEpoch int32) {
	k.rt(pcapgen.ConsumerGroupHeartbeat(1, group, member, epoch),
		pcapgen.ConsumerGroupHeartbeatResponse(1, errCode, pcapgen.Ptr(member), respEpoch))
}

func (k *bb8hClient) fetch() {
	k.rt(pcapgen.Fetch(16, "orders", bb8hTopicID), pcapgen.FetchResponse(16, "orders", bb8hTopicID, nil))
}

func bb8hNew() *pcapgen.Capture {
	return pcapgen.New(pcapgen.Options{Seed: 0x8a8, Step: 2 * time.Millisecond})
}

// Scenario 1: a KIP-1313 consumer whose coordinator connection is reset
// reconnects from the same host (new port) with the same instance ID,
// heartbeats with its member ID at its epoch, is fenced and rejoins with the
// same member ID. One process, one member ID (3.4, rule 6), one claimant
// (rule 7: the claimant is the instance ID), one host and client ID (3.1
// instance-id-shared: no).
func TestClientKIPConsumerResetReconnect(t *testing.T) {
	c := bb8hNew()
	x := pcapgen.SeqUUID(0x31)
	m := pcapgen.JavaString(x)
	host := netip.MustParseAddr("10.5.0.7")
	a := bb8hConn(c, netip.AddrPortFrom(host, 51000), bb8hBroker1, "orders-consumer", &x, 1)
	a.hello()
	a.hb("g1", m, 0, errNone, 1)
	a.hb("g1", m, 1, errNone, 1)
	a.hb("g1", m, 1, errNone, 1)
	// the broker's half of a heartbeat never comes: the client resets
	a.s.Request(pcapgen.ConsumerGroupHeartbeat(1, "g1", m, 1))
	a.reqs++
	a.cn.Reset()
	c.Sleep(3 * time.Second)
	b := bb8hConn(c, netip.AddrPortFrom(host, 51001), bb8hBroker1, "orders-consumer", &x, 1000)
	b.hello()
	b.hb("g1", m, 1, errNone, 1)
	b.hb("g1", m, 1, errFencedMemberEpoch, -1)
	b.hb("g1", m, 0, errNone, 2)
	b.hb("g1", m, 2, errNone, 2)
	b.cn.Close()
	rep := bb8hRun(t, c, map[string]int{}, 2, a.reqs+b.reqs, a.resps+b.resps)
	if len(rep.Instances) != 1 || rep.Instances[0].Connections != 2 {
		t.Errorf("want one instance row with 2 connections, got %+v", rep.Instances)
	}
}

// Scenario 2: the coordinator moves: the same instance heartbeats on a
// second broker's connection while the old one (also fetching) stays open,
// then closes. Same instance = same claimant (rule 7), same member ID.
func TestClientKIPCoordinatorMoves(t *testing.T) {
	c := bb8hNew()
	x := pcapgen.SeqUUID(0x41)
	m := pcapgen.JavaString(x)
	host := netip.MustParseAddr("10.5.0.8")
	a := bb8hConn(c, netip.AddrPortFrom(host, 52000), bb8hBroker1, "billing", &x, 1)
	a.hello()
	a.hb("g2", m, 0, errNone, 5)
	a.fetch()
	a.hb("g2", m, 5, errNone, 5)
	a.hb("g2", m, 5, errNotCoordinator, 5)
	b := bb8hConn(c, netip.AddrPortFrom(host, 52001), bb8hBroker2, "billing", &x, 100)
	b.hello()
	b.hb("g2", m, 5, errNone, 5)
	a.fetch()
	b.hb("g2", m, 5, errNone, 6)
	a.fetch()
	b.hb("g2", m, 6, errNone, 6)
	a.cn.Close()
	b.hb("g2", m, 6, errNone, 6)
	b.fetch()
	b.cn.Close()
	rep := bb8hRun(t, c, map[string]int{}, 2, a.reqs+b.reqs, a.resps+b.resps)
	if len(rep.Instances) != 1 {
		t.Errorf("want one instance row, got %+v", rep.Instances)
	}
}

// Scenario 3: a producer instance with three broker connections open at
// once, each naming itself once then sending null client IDs.
func TestClientKIPProducerThreeBrokers(t *testing.T) {
	c := bb8hNew()
	x := pcapgen.SeqUUID(0x51)
	host := netip.MustParseAddr("10.5.0.9")
	var ks []*bb8hClient
	for i, br := range []netip.AddrPort{bb8hBroker1, bb8hBroker2, bb8hBroker3} {
		k := bb8hConn(c, netip.AddrPortFrom(host, uint16(53000+i)), br, "orders-producer", &x, int32(1+i*50))
		k.hello()
		ks = append(ks, k)
	}
	for range 3 {
		for _, k := range ks {
			k.rt(pcapgen.Produce(11, "orders", bb8hTopicID, []byte("0123456789abcdef")),
				pcapgen.ProduceResponse(11, "orders", bb8hTopicID))
		}
	}
	reqs, resps := 0, 0
	for _, k := range ks {
		k.cn.Close()
		reqs += k.reqs
		resps += k.resps
	}
	rep := bb8hRun(t, c, map[string]int{}, 3, reqs, resps)
	if len(rep.Instances) != 1 || rep.Instances[0].Connections != 3 {
		t.Errorf("want one instance row with 3 connections, got %+v", rep.Instances)
	}
}

// Scenario 4: 30 short-lived legacy admin connections from one host, one
// after the other, same client ID. One legacy row (rule 11), no finding.
func TestClientLegacyAdminChurn(t *testing.T) {
	c := bb8hNew()
	host := netip.MustParseAddr("10.5.0.10")
	reqs := 0
	for i := range 30 {
		k := bb8hConn(c, netip.AddrPortFrom(host, uint16(54000+i)), bb8hBroker1, "admin-tool", nil, 1)
		k.hello()
		k.cn.Close()
		reqs += k.reqs
		c.Sleep(time.Second)
	}
	rep := bb8hRun(t, c, map[string]int{}, 30, reqs, reqs)
	if len(rep.Instances) != 1 || !rep.Instances[0].Legacy || rep.Instances[0].Connections != 30 {
		t.Errorf("want one legacy row with 30 connections, got %+v", rep.Instances)
	}
}

// Scenario 5: a legacy (no instance ID) KIP-848 consumer below the required
// version (v0) joins with an empty member ID (member-id-empty, info: the one
// expected finding), learns "<clientid>-<uuid>" from the join response,
// then its coordinator moves and it continues with that broker-assigned ID
// on a new connection from the same host while the first stays open
// (librdkafka keeps one connection per broker): 3.7 the ID is the broker's
// (no property rules, no member-id-changed), rule 7 one process.
func TestClientLegacyBrokerAssignedCoordinatorMove(t *testing.T) {
	for _, closeFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("closeFirst=%v", closeFirst), func(t *testing.T) {
			c := bb8hNew()
			host := netip.MustParseAddr("10.5.0.11")
			assigned := "rdkafka-consumer-5b8f2f6e-2c41-4f0e-9d7a-1e2f3a4b5c6d"
			a := bb8hConn(c, netip.AddrPortFrom(host, 55000), bb8hBroker1, "rdkafka-consumer", nil, 1)
			a.hello()
			a.rt(pcapgen.ConsumerGroupHeartbeat(0, "g5", "", 0),
				pcapgen.ConsumerGroupHeartbeatResponse(0, errNone, pcapgen.Ptr(assigned), 3))
			a.rt(pcapgen.ConsumerGroupHeartbeat(0, "g5", assigned, 3),
				pcapgen.ConsumerGroupHeartbeatResponse(0, errNone, pcapgen.Ptr(assigned), 3))
			a.rt(pcapgen.ConsumerGroupHeartbeat(0, "g5", assigned, 3),
				pcapgen.ConsumerGroupHeartbeatResponse(0, errNotCoordinator, nil, 3))
			if closeFirst {
				a.cn.Close()
			}
			b := bb8hConn(c, netip.AddrPortFrom(host, 55001), bb8hBroker2, "rdkafka-consumer", nil, 1)
			b.hello()
			for e := int32(3); e < 6; e++ {
				b.rt(pcapgen.ConsumerGroupHeartbeat(0, "g5", assigned, e),
					pcapgen.ConsumerGroupHeartbeatResponse(0, errNone, pcapgen.Ptr(assigned), e+1))
				if !closeFirst {
					a.fetch()
				}
			}
			a.cn.Close()
			b.cn.Close()
			bb8hRun(t, c, map[string]int{"member-id-empty": 1}, 2, a.reqs+b.reqs, a.resps+b.resps)
		})
	}
}

// Scenario 6: two legacy processes on one host (different ports), in
// different groups at the same time, with the same member-ID string: a
// collision needs the same group (3.4).
func TestClientLegacySameMemberDifferentGroups(t *testing.T) {
	c := bb8hNew()
	host := netip.MustParseAddr("10.5.0.12")
	m := pcapgen.JavaString(pcapgen.MustUUID("0f1e2d3c-4b5a-4697-8877-665544332211"))
	a := bb8hConn(c, netip.AddrPortFrom(host, 56000), bb8hBroker1, "svc-a", nil, 1)
	b := bb8hConn(c, netip.AddrPortFrom(host, 56001), bb8hBroker1, "svc-b", nil, 1)
	a.hello()
	b.hello()
	a.hb("group-a", m, 0, errNone, 1)
	b.hb("group-b", m, 0, errNone, 1)
	for range 3 {
		a.hb("group-a", m, 1, errNone, 1)
		b.hb("group-b", m, 1, errNone, 1)
	}
	a.cn.Close()
	b.cn.Close()
	bb8hRun(t, c, map[string]int{}, 2, a.reqs+b.reqs, a.resps+b.resps)
}

// Scenario 7: a KIP-1313 client restarts: the old process's connections
// close, then a new process on the same host, same client ID, with a NEW
// instance ID and a new member ID. Two instances, never alive together,
// each with one member ID: no instance-id-shared (the two IDs differ), no
// collision, no member-id-changed (different clients).
func TestClientKIPRestartNewInstance(t *testing.T) {
	c := bb8hNew()
	host := netip.MustParseAddr("10.5.0.13")
	x1, x2 := pcapgen.SeqUUID(0x61), pcapgen.SeqUUID(0x71)
	m1, m2 := pcapgen.JavaString(x1), pcapgen.JavaString(x2)
	a := bb8hConn(c, netip.AddrPortFrom(host, 57000), bb8hBroker1, "stream-app", &x1, 1)
	f := bb8hConn(c, netip.AddrPortFrom(host, 57001), bb8hBroker2, "stream-app", &x1, 2)
	a.hello()
	f.hello()
	a.hb("g7", m1, 0, errNone, 1)
	f.fetch()
	a.hb("g7", m1, 1, errNone, 1)
	a.hb("g7", m1, -1, errNone, -1)
	a.cn.Close()
	f.cn.Close()
	c.Sleep(5 * time.Second)
	b := bb8hConn(c, netip.AddrPortFrom(host, 57002), bb8hBroker1, "stream-app", &x2, 1)
	g := bb8hConn(c, netip.AddrPortFrom(host, 57003), bb8hBroker2, "stream-app", &x2, 2)
	b.hello()
	g.hello()
	b.hb("g7", m2, 0, errNone, 2)
	g.fetch()
	b.hb("g7", m2, 2, errNone, 2)
	b.cn.Close()
	g.cn.Close()
	rep := bb8hRun(t, c, map[string]int{}, 4, a.reqs+f.reqs+b.reqs+g.reqs, a.resps+f.resps+b.resps+g.resps)
	if len(rep.Instances) != 2 {
		t.Errorf("want two instance rows, got %+v", rep.Instances)
	}
}

// Scenario 5b: as 5 without the broker-assigned wrinkle: a legacy KIP-848
// consumer with a client-generated v4 UUID member ID moves its coordinator
// to a second broker and back again (rule 7: "moving back is one process
// too"), its first connection open throughout.
func TestClientLegacyCoordinatorMoveAndBack(t *testing.T) {
	c := bb8hNew()
	host := netip.MustParseAddr("10.5.0.14")
	m := pcapgen.JavaString(pcapgen.MustUUID("1a2b3c4d-5e6f-4a0b-8c1d-2e3f40516273"))
	a := bb8hConn(c, netip.AddrPortFrom(host, 58000), bb8hBroker1, "rd-cons", nil, 1)
	a.hello()
	a.hb("g8", m, 0, errNone, 1)
	a.hb("g8", m, 1, errNotCoordinator, 1)
	b := bb8hConn(c, netip.AddrPortFrom(host, 58001), bb8hBroker2, "rd-cons", nil, 1)
	b.hello()
	b.hb("g8", m, 1, errNone, 1)
	b.hb("g8", m, 1, errNotCoordinator, 1)
	a.hb("g8", m, 1, errNone, 2)
	a.hb("g8", m, 2, errNone, 2)
	a.cn.Close()
	b.cn.Close()
	bb8hRun(t, c, map[string]int{}, 2, a.reqs+b.reqs, a.resps+b.resps)
}
