package main

// Black-box scenarios (batch 8h): false-positive hunt in reconnect flows.
// Real clients reconnect from the SAME host (new port): after an RST, when
// the group coordinator moves, with several broker connections open at
// once, with short-lived admin connections, and when a process restarts.
// Every scenario is compliant (SPEC.md sections 2, 3, 3.7; README rules 6,
// 7, 11, 16, 17) unless its comment says otherwise. Expectations come from
// SPEC.md and README.md only.

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kwatch/kwatch/internal/pcapgen"
)

const (
	bb8hErrNone           = 0
	bb8hErrNotCoordinator = 16
	bb8hErrFencedEpoch    = 110
)

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

type bb8hReport struct {
	Totals struct {
		Packets          int            `json:"packets"`
		Connections      int            `json:"connections"`
		KafkaConnections int            `json:"kafka_connections"`
		Requests         int            `json:"requests"`
		Responses        int            `json:"responses"`
		Coverage         map[string]int `json:"coverage"`
		Findings         int            `json:"findings"`
	} `json:"totals"`
	Instances []bb8hRow   `json:"instances"`
	Findings  []bbFinding `json:"findings"`
}

func (r bb8hReport) summary() string {
	var b strings.Builder
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "  %s %s conf=%s frame=%d api=%s corr=%d conn=%s->%s inst=%q exp=%q obs=%q msg=%q\n",
			f.Rule, f.Severity, f.Confidence, f.Frame, f.API, f.CorrelationID, f.Conn.Client, f.Conn.Broker,
			f.InstanceID, f.Expected, f.Observed, f.Message)
	}
	return b.String()
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
func TestBB8HKIPConsumerResetReconnect(t *testing.T) {
	c := bb8hNew()
	x := pcapgen.SeqUUID(0x31)
	m := pcapgen.JavaString(x)
	host := netip.MustParseAddr("10.5.0.7")
	a := bb8hConn(c, netip.AddrPortFrom(host, 51000), bb8hBroker1, "orders-consumer", &x, 1)
	a.hello()
	a.hb("g1", m, 0, bb8hErrNone, 1)
	a.hb("g1", m, 1, bb8hErrNone, 1)
	a.hb("g1", m, 1, bb8hErrNone, 1)
	// the broker's half of a heartbeat never comes: the client resets
	a.s.Request(pcapgen.ConsumerGroupHeartbeat(1, "g1", m, 1))
	a.reqs++
	a.cn.Reset()
	c.Sleep(3 * time.Second)
	b := bb8hConn(c, netip.AddrPortFrom(host, 51001), bb8hBroker1, "orders-consumer", &x, 1000)
	b.hello()
	b.hb("g1", m, 1, bb8hErrNone, 1)
	b.hb("g1", m, 1, bb8hErrFencedEpoch, -1)
	b.hb("g1", m, 0, bb8hErrNone, 2)
	b.hb("g1", m, 2, bb8hErrNone, 2)
	b.cn.Close()
	rep := bb8hRun(t, c, map[string]int{}, 2, a.reqs+b.reqs, a.resps+b.resps)
	if len(rep.Instances) != 1 || rep.Instances[0].Connections != 2 {
		t.Errorf("want one instance row with 2 connections, got %+v", rep.Instances)
	}
}

// Scenario 2: the coordinator moves: the same instance heartbeats on a
// second broker's connection while the old one (also fetching) stays open,
// then closes. Same instance = same claimant (rule 7), same member ID.
func TestBB8HKIPCoordinatorMoves(t *testing.T) {
	c := bb8hNew()
	x := pcapgen.SeqUUID(0x41)
	m := pcapgen.JavaString(x)
	host := netip.MustParseAddr("10.5.0.8")
	a := bb8hConn(c, netip.AddrPortFrom(host, 52000), bb8hBroker1, "billing", &x, 1)
	a.hello()
	a.hb("g2", m, 0, bb8hErrNone, 5)
	a.fetch()
	a.hb("g2", m, 5, bb8hErrNone, 5)
	a.hb("g2", m, 5, bb8hErrNotCoordinator, 5)
	b := bb8hConn(c, netip.AddrPortFrom(host, 52001), bb8hBroker2, "billing", &x, 100)
	b.hello()
	b.hb("g2", m, 5, bb8hErrNone, 5)
	a.fetch()
	b.hb("g2", m, 5, bb8hErrNone, 6)
	a.fetch()
	b.hb("g2", m, 6, bb8hErrNone, 6)
	a.cn.Close()
	b.hb("g2", m, 6, bb8hErrNone, 6)
	b.fetch()
	b.cn.Close()
	rep := bb8hRun(t, c, map[string]int{}, 2, a.reqs+b.reqs, a.resps+b.resps)
	if len(rep.Instances) != 1 {
		t.Errorf("want one instance row, got %+v", rep.Instances)
	}
}

// Scenario 3: a producer instance with three broker connections open at
// once, each naming itself once then sending null client IDs.
func TestBB8HKIPProducerThreeBrokers(t *testing.T) {
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
func TestBB8HLegacyAdminChurn(t *testing.T) {
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
func TestBB8HLegacyBrokerAssignedCoordinatorMove(t *testing.T) {
	for _, closeFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("closeFirst=%v", closeFirst), func(t *testing.T) {
			c := bb8hNew()
			host := netip.MustParseAddr("10.5.0.11")
			assigned := "rdkafka-consumer-5b8f2f6e-2c41-4f0e-9d7a-1e2f3a4b5c6d"
			a := bb8hConn(c, netip.AddrPortFrom(host, 55000), bb8hBroker1, "rdkafka-consumer", nil, 1)
			a.hello()
			a.rt(pcapgen.ConsumerGroupHeartbeat(0, "g5", "", 0),
				pcapgen.ConsumerGroupHeartbeatResponse(0, bb8hErrNone, pcapgen.Ptr(assigned), 3))
			a.rt(pcapgen.ConsumerGroupHeartbeat(0, "g5", assigned, 3),
				pcapgen.ConsumerGroupHeartbeatResponse(0, bb8hErrNone, pcapgen.Ptr(assigned), 3))
			a.rt(pcapgen.ConsumerGroupHeartbeat(0, "g5", assigned, 3),
				pcapgen.ConsumerGroupHeartbeatResponse(0, bb8hErrNotCoordinator, nil, 3))
			if closeFirst {
				a.cn.Close()
			}
			b := bb8hConn(c, netip.AddrPortFrom(host, 55001), bb8hBroker2, "rdkafka-consumer", nil, 1)
			b.hello()
			for e := int32(3); e < 6; e++ {
				b.rt(pcapgen.ConsumerGroupHeartbeat(0, "g5", assigned, e),
					pcapgen.ConsumerGroupHeartbeatResponse(0, bb8hErrNone, pcapgen.Ptr(assigned), e+1))
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
func TestBB8HLegacySameMemberDifferentGroups(t *testing.T) {
	c := bb8hNew()
	host := netip.MustParseAddr("10.5.0.12")
	m := pcapgen.JavaString(pcapgen.MustUUID("0f1e2d3c-4b5a-4697-8877-665544332211"))
	a := bb8hConn(c, netip.AddrPortFrom(host, 56000), bb8hBroker1, "svc-a", nil, 1)
	b := bb8hConn(c, netip.AddrPortFrom(host, 56001), bb8hBroker1, "svc-b", nil, 1)
	a.hello()
	b.hello()
	a.hb("group-a", m, 0, bb8hErrNone, 1)
	b.hb("group-b", m, 0, bb8hErrNone, 1)
	for range 3 {
		a.hb("group-a", m, 1, bb8hErrNone, 1)
		b.hb("group-b", m, 1, bb8hErrNone, 1)
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
func TestBB8HKIPRestartNewInstance(t *testing.T) {
	c := bb8hNew()
	host := netip.MustParseAddr("10.5.0.13")
	x1, x2 := pcapgen.SeqUUID(0x61), pcapgen.SeqUUID(0x71)
	m1, m2 := pcapgen.JavaString(x1), pcapgen.JavaString(x2)
	a := bb8hConn(c, netip.AddrPortFrom(host, 57000), bb8hBroker1, "stream-app", &x1, 1)
	f := bb8hConn(c, netip.AddrPortFrom(host, 57001), bb8hBroker2, "stream-app", &x1, 2)
	a.hello()
	f.hello()
	a.hb("g7", m1, 0, bb8hErrNone, 1)
	f.fetch()
	a.hb("g7", m1, 1, bb8hErrNone, 1)
	a.hb("g7", m1, -1, bb8hErrNone, -1)
	a.cn.Close()
	f.cn.Close()
	c.Sleep(5 * time.Second)
	b := bb8hConn(c, netip.AddrPortFrom(host, 57002), bb8hBroker1, "stream-app", &x2, 1)
	g := bb8hConn(c, netip.AddrPortFrom(host, 57003), bb8hBroker2, "stream-app", &x2, 2)
	b.hello()
	g.hello()
	b.hb("g7", m2, 0, bb8hErrNone, 2)
	g.fetch()
	b.hb("g7", m2, 2, bb8hErrNone, 2)
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
func TestBB8HLegacyCoordinatorMoveAndBack(t *testing.T) {
	c := bb8hNew()
	host := netip.MustParseAddr("10.5.0.14")
	m := pcapgen.JavaString(pcapgen.MustUUID("1a2b3c4d-5e6f-4a0b-8c1d-2e3f40516273"))
	a := bb8hConn(c, netip.AddrPortFrom(host, 58000), bb8hBroker1, "rd-cons", nil, 1)
	a.hello()
	a.hb("g8", m, 0, bb8hErrNone, 1)
	a.hb("g8", m, 1, bb8hErrNotCoordinator, 1)
	b := bb8hConn(c, netip.AddrPortFrom(host, 58001), bb8hBroker2, "rd-cons", nil, 1)
	b.hello()
	b.hb("g8", m, 1, bb8hErrNone, 1)
	b.hb("g8", m, 1, bb8hErrNotCoordinator, 1)
	a.hb("g8", m, 1, bb8hErrNone, 2)
	a.hb("g8", m, 2, bb8hErrNone, 2)
	a.cn.Close()
	b.cn.Close()
	bb8hRun(t, c, map[string]int{}, 2, a.reqs+b.reqs, a.resps+b.resps)
}
