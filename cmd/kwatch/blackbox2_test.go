package main

// Black-box scenarios for SPEC.md sections 2, 3.4, 3.5 (member rules), 3.6
// and the member-rule sentences of 3.7. Expectations come from SPEC.md only.

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/kwatch/kwatch/internal/pcapgen"
)

type bbReport2 struct {
	Totals struct {
		Packets                 int            `json:"packets"`
		Connections             int            `json:"connections"`
		KafkaConnections        int            `json:"kafka_connections"`
		Requests                int            `json:"requests"`
		Responses               int            `json:"responses"`
		RequestsByHeaderVersion map[string]int `json:"requests_by_header_version"`
		Coverage                map[string]int `json:"coverage"`
		Findings                int            `json:"findings"`
		FindingsBySeverity      map[string]int `json:"findings_by_severity"`
		FindingsByRule          map[string]int `json:"findings_by_rule"`
	} `json:"totals"`
	Findings []bbFinding `json:"findings"`
	raw      string
}

// bbRun2 writes c and analyses it with `kwatch read --format json`.
func bbRun2(t *testing.T, c *pcapgen.Capture, extra ...string) bbReport2 {
	t.Helper()
	path := bbCaptureFile(t, c, "scenario.pcap")
	rep, out := bbReadAs[bbReport2](t, path, extra...)
	rep.raw = out
	if rep.Totals.Packets != c.Frames() {
		t.Errorf("totals.packets %d, capture has %d", rep.Totals.Packets, c.Frames())
	}
	return rep
}

func (r bbReport2) summary() string {
	var b strings.Builder
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "  %s %s conf=%s frame=%d conn=%s exp=%q obs=%q\n", f.Rule, f.Severity, f.Confidence, f.Frame, f.Conn.Client, f.Expected, f.Observed)
	}
	return b.String()
}

// bbExpect2 asserts exactly these rule counts (every other rule: zero).
func bbExpect2(t *testing.T, rep bbReport2, want map[string]int) {
	t.Helper()
	got := map[string]int{}
	for _, f := range rep.Findings {
		got[f.Rule]++
	}
	bbCompareCounts(t, "", got, want, rep.summary)
}

// bbAll returns the findings of rule.
func bbAll(rep bbReport2, rule string) []bbFinding {
	var out []bbFinding
	for _, f := range rep.Findings {
		if f.Rule == rule {
			out = append(out, f)
		}
	}
	return out
}

// bbCheck asserts severity (and frame, confidence when non-zero) of every
// finding of rule.
func bbCheck(t *testing.T, rep bbReport2, rule, severity, confidence string, frame int) {
	t.Helper()
	for _, f := range bbAll(rep, rule) {
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

const (
	errNone                 = 0
	errCoordNotAvailable    = 15
	errUnknownMemberID      = 25
	errInvalidRequest       = 42
	errFencedMemberEpoch    = 110
	errUnreleasedInstanceID = 111
)

// ---------------------------------------------------------------- compliant

// 3.4 + KIP-1313: "member-id-misaligned | the member ID is not the Java
// string form of the same connection's header instance ID (KIP-1313: SHOULD
// be equal)". A KIP-1313 + KIP-1082 consumer whose member ID is the Java form
// of its instance ID, joining at v1, heartbeating and leaving, is compliant.
func TestBlackboxCompliantAlignedConsumer(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	inst := pcapgen.SeqUUID(0x30)
	m := pcapgen.JavaString(inst)
	cn, s := bbModern(c, pcapgen.ConnOptions{}, inst)
	cgJoin(s, 1, bbGroup, m)
	cgBeat(s, 1, bbGroup, m, 1)
	cgBeat(s, 1, bbGroup, m, 1)
	cgLeave(s, 1, bbGroup, m, -1)
	// A rejoin with the same member ID after leaving is what KIP-1082 asks.
	cgJoin(s, 1, bbGroup, m)
	cn.Close()
	rep := bbRun2(t, c)
	bbExpect2(t, rep, nil)
	if rep.Totals.Requests != 6 || rep.Totals.Responses != 6 {
		t.Errorf("requests %d responses %d, want 6 and 6", rep.Totals.Requests, rep.Totals.Responses)
	}
	if rep.Totals.RequestsByHeaderVersion["v2"] != 6 {
		t.Errorf("requests_by_header_version %v, want 6 v2", rep.Totals.RequestsByHeaderVersion)
	}
	if rep.Totals.Connections != 1 || rep.Totals.KafkaConnections != 1 {
		t.Errorf("connections %d kafka %d, want 1", rep.Totals.Connections, rep.Totals.KafkaConnections)
	}
	for ev, n := range rep.Totals.Coverage {
		if n != 0 {
			t.Errorf("coverage %s = %d on a clean capture", ev, n)
		}
	}
}

// Share (76) and streams (88) groups: "Share and streams groups require it
// from v0". Aligned member IDs at v0/v1 are compliant.
func TestBlackboxCompliantShareStreams(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	inst := pcapgen.SeqUUID(0x31)
	m := pcapgen.JavaString(inst)
	cn, s := bbModern(c, pcapgen.ConnOptions{}, inst)
	s.RoundTrip(pcapgen.ShareGroupHeartbeat(1, "share-g", m, 0), pcapgen.ShareGroupHeartbeatResponse(1, 0, pcapgen.Ptr(m), 1))
	s.RoundTrip(pcapgen.ShareGroupHeartbeat(1, "share-g", m, 1), pcapgen.ShareGroupHeartbeatResponse(1, 0, pcapgen.Ptr(m), 1))
	s.RoundTrip(pcapgen.StreamsGroupHeartbeat(0, "streams-g", m, 0), pcapgen.StreamsGroupHeartbeatResponse(0, 0, m, 1))
	s.RoundTrip(pcapgen.StreamsGroupHeartbeat(0, "streams-g", m, -1), pcapgen.StreamsGroupHeartbeatResponse(0, 0, m, -1))
	cn.Close()
	bbExpect2(t, bbRun2(t, c), nil)
}

// 3.7: "Without a header instance ID, member-id-misaligned cannot fire."
// and "A zero header instance ID is no claim of KIP-1313 support." A legacy
// client and a client sending a zero tag 0 with a Java v4 member ID: nothing.
func TestBlackboxNoMisalignedWithoutInstanceID(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn, s := bbLegacy(c, pcapgen.ConnOptions{})
	m := pcapgen.JavaString(pcapgen.SeqUUID(0x40))
	cgJoin(s, 1, bbGroup, m)
	cgBeat(s, 1, bbGroup, m, 1)
	cn.Close()

	var zero [16]byte
	cn2 := c.Conn(pcapgen.ConnOptions{})
	s2 := cn2.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("zero-app"), InstanceID: &zero, CorrelationID: 1})
	s2.RoundTrip(pcapgen.APIVersions(4, "x", "1"), pcapgen.APIVersionsResponse(4))
	m2 := pcapgen.JavaString(pcapgen.SeqUUID(0x50))
	cgJoin(s2, 1, bbGroup, m2)
	cgBeat(s2, 1, bbGroup, m2, 1)
	cn2.Close()
	bbExpect2(t, bbRun2(t, c), nil)
}

// 3.4 member-id-changed: "a member ID lives as long as the process, across
// leave and rejoin and after fencing". Rejoining with the same ID after a
// fenced heartbeat and after a static leave is compliant; a join retried with
// the same ID after an error is compliant (not ghost-member).
func TestBlackboxCompliantRejoinSameID(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn, s := bbLegacy(c, pcapgen.ConnOptions{})
	m := pcapgen.JavaString(pcapgen.SeqUUID(0x41))
	// join errors, retried with the same ID
	s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(1, bbGroup, m, 0), pcapgen.ConsumerGroupHeartbeatResponse(1, errCoordNotAvailable, nil, 0))
	cgJoin(s, 1, bbGroup, m)
	// fenced, rejoin with same ID
	s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(1, bbGroup, m, 3), pcapgen.ConsumerGroupHeartbeatResponse(1, errFencedMemberEpoch, nil, 0))
	cgJoin(s, 1, bbGroup, m)
	// static leave, rejoin with same ID
	cgLeave(s, 1, bbGroup, m, -2)
	cgJoin(s, 1, bbGroup, m)
	// join with no response, retried with the same ID
	s.Request(pcapgen.ConsumerGroupHeartbeat(1, bbGroup, m, 0))
	cgJoin(s, 1, bbGroup, m)
	cn.Close()
	bbExpect2(t, bbRun2(t, c), nil)
}

// 3.4 member-id-changed is per "same client (connection, or instance ID
// across connections)"; collision needs "different client host:port without
// instance IDs, alive at the same time". Two legacy connections from the same
// host, one after the other, with different member IDs are two clients that
// never overlap: no finding.
func TestBlackboxLegacySequentialDifferentIDs(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	host := netip.MustParseAddr("10.9.0.1")
	cn, s := bbLegacy(c, pcapgen.ConnOptions{Client: netip.AddrPortFrom(host, 50001)})
	cgJoin(s, 1, bbGroup, pcapgen.JavaString(pcapgen.SeqUUID(0x42)))
	cn.Close()
	cn2, s2 := bbLegacy(c, pcapgen.ConnOptions{Client: netip.AddrPortFrom(host, 50002)})
	cgJoin(s2, 1, bbGroup, pcapgen.JavaString(pcapgen.SeqUUID(0x43)))
	cn2.Close()
	bbExpect2(t, bbRun2(t, c), nil)
}

// ------------------------------------------------------------ member-id-empty

// 3.4 member-id-empty "error (info below the required version)", threshold
// "CONSUMER_GENERATED_MEMBER_ID_REQUIRED_VERSION = 1" by default; 3.5
// broker-generated-member-id "a join with an empty member ID at or above the
// required version was answered with a broker-assigned member ID" and
// broker-accepted-invalid "member-id-empty at or above the required version
// ... answered without INVALID_REQUEST". 3.7: "A member ID that a broker
// assigned ... moving from an empty member ID to it is no member-id-changed,
// and the member-ID property rules (-not-uuid, -encoding, -not-v4,
// -misaligned) do not judge it."
func TestBlackboxEmptyJoinV1BrokerAssigns(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	inst := pcapgen.SeqUUID(0x32)
	cn, s := bbModern(c, pcapgen.ConnOptions{}, inst)
	assigned := "broker-assigned-member-1" // not a UUID, not aligned
	jf, _ := s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(1, bbGroup, "", 0), pcapgen.ConsumerGroupHeartbeatResponse(1, errNone, pcapgen.Ptr(assigned), 1))
	cgBeat(s, 1, bbGroup, assigned, 1)
	cgBeat(s, 1, bbGroup, assigned, 1)
	cgLeave(s, 1, bbGroup, assigned, -1)
	cn.Close()
	rep := bbRun2(t, c)
	bbExpect2(t, rep, map[string]int{"member-id-empty": 1, "broker-generated-member-id": 1, "broker-accepted-invalid": 1})
	bbCheck(t, rep, "member-id-empty", "error", "full", jf)
	bbCheck(t, rep, "broker-generated-member-id", "warn", "", 0)
	bbCheck(t, rep, "broker-accepted-invalid", "warn", "", 0)
	for _, f := range bbAll(rep, "member-id-empty") {
		if f.APIKey != 68 || f.APIVersion != 1 || f.API != "ConsumerGroupHeartbeat" || f.KIP != "KIP-1082" {
			t.Errorf("member-id-empty api %s/%d v%d kip %s", f.API, f.APIKey, f.APIVersion, f.KIP)
		}
	}
}

// Below the required version (ConsumerGroupHeartbeat v0) an empty join is
// info, and the broker assigning an ID is how v0 works: neither
// broker-generated-member-id nor broker-accepted-invalid (both are "at or
// above the required version"). The broker's ID is not judged (3.7).
func TestBlackboxEmptyJoinV0Info(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn, s := bbLegacy(c, pcapgen.ConnOptions{})
	assigned := "consumer-1-9f8e"
	jf, _ := s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(0, bbGroup, "", 0), pcapgen.ConsumerGroupHeartbeatResponse(0, errNone, pcapgen.Ptr(assigned), 1))
	cgBeat(s, 0, bbGroup, assigned, 1)
	cn.Close()
	rep := bbRun2(t, c)
	bbExpect2(t, rep, map[string]int{"member-id-empty": 1})
	bbCheck(t, rep, "member-id-empty", "info", "full", jf)
}

// A conforming broker rejecting the empty v1 join with INVALID_REQUEST: only
// member-id-empty (error), no 3.5 finding.
func TestBlackboxEmptyJoinV1Rejected(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn, s := bbLegacy(c, pcapgen.ConnOptions{})
	s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(1, bbGroup, "", 0), pcapgen.ConsumerGroupHeartbeatResponse(1, errInvalidRequest, nil, 0))
	cn.Close()
	rep := bbRun2(t, c)
	bbExpect2(t, rep, map[string]int{"member-id-empty": 1})
	bbCheck(t, rep, "member-id-empty", "error", "", 0)
}

// "Share and streams groups require it from v0": an empty ShareGroupHeartbeat
// v0 join and an empty StreamsGroupHeartbeat v0 join are errors. The share
// join answered NONE with an assigned ID also gives both 3.5 rules; the
// streams join is rejected with INVALID_REQUEST.
func TestBlackboxEmptyJoinShareStreamsV0(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn, s := bbLegacy(c, pcapgen.ConnOptions{})
	assigned := pcapgen.JavaString(pcapgen.SeqUUID(0x44))
	sf, _ := s.RoundTrip(pcapgen.ShareGroupHeartbeat(0, "share-g", "", 0), pcapgen.ShareGroupHeartbeatResponse(0, errNone, pcapgen.Ptr(assigned), 1))
	s.RoundTrip(pcapgen.ShareGroupHeartbeat(0, "share-g", assigned, 1), pcapgen.ShareGroupHeartbeatResponse(0, errNone, pcapgen.Ptr(assigned), 1))
	tf, _ := s.RoundTrip(pcapgen.StreamsGroupHeartbeat(0, "streams-g", "", 0), pcapgen.StreamsGroupHeartbeatResponse(0, errInvalidRequest, "", 0))
	cn.Close()
	rep := bbRun2(t, c)
	bbExpect2(t, rep, map[string]int{"member-id-empty": 2, "broker-generated-member-id": 1, "broker-accepted-invalid": 1})
	bbCheck(t, rep, "member-id-empty", "error", "", 0)
	frames := map[int]bool{}
	for _, f := range bbAll(rep, "member-id-empty") {
		frames[f.Frame] = true
	}
	if !frames[sf] || !frames[tf] {
		t.Errorf("member-id-empty frames %v, want %d and %d", frames, sf, tf)
	}
}

// 3.7: "an empty member ID gives only member-id-empty or
// leave-without-member-id (and 3.5 rules), no other member rule". A KIP-1313
// client (so misaligned could apply) joining empty, rejected, then joining
// with its aligned ID: only member-id-empty; the move from empty to an ID
// is no member-id-changed and no ghost-member (the empty join is no "member
// ID A").
func TestBlackboxEmptyThenAligned(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	inst := pcapgen.SeqUUID(0x33)
	m := pcapgen.JavaString(inst)
	cn, s := bbModern(c, pcapgen.ConnOptions{}, inst)
	s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(1, bbGroup, "", 0), pcapgen.ConsumerGroupHeartbeatResponse(1, errInvalidRequest, nil, 0))
	cgJoin(s, 1, bbGroup, m)
	cgBeat(s, 1, bbGroup, m, 1)
	cn.Close()
	bbExpect2(t, bbRun2(t, c), map[string]int{"member-id-empty": 1})
}

// 3.4 leave-without-member-id "error | a leave carries an empty member ID";
// 3.7 "A static leave (epoch -2) is a leave." and "an empty member ID gives
// only ... leave-without-member-id". It is not version-dependent and not in
// broker-accepted-invalid's list (UNKNOWN_MEMBER_ID answer is expected).
func TestBlackboxLeaveWithoutMemberID(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	inst := pcapgen.SeqUUID(0x34)
	cn, s := bbModern(c, pcapgen.ConnOptions{}, inst)
	f1, _ := s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(1, bbGroup, "", -1), pcapgen.ConsumerGroupHeartbeatResponse(1, errUnknownMemberID, nil, 0))
	f2, _ := s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(1, "g2", "", -2), pcapgen.ConsumerGroupHeartbeatResponse(1, errUnknownMemberID, nil, 0))
	f3, _ := s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(0, "g3", "", -1), pcapgen.ConsumerGroupHeartbeatResponse(0, errUnknownMemberID, nil, 0))
	f4, _ := s.RoundTrip(pcapgen.ShareGroupHeartbeat(1, "share-g", "", -1), pcapgen.ShareGroupHeartbeatResponse(1, errUnknownMemberID, nil, 0))
	cn.Close()
	rep := bbRun2(t, c)
	bbExpect2(t, rep, map[string]int{"leave-without-member-id": 4})
	bbCheck(t, rep, "leave-without-member-id", "error", "full", 0)
	want := map[int]bool{f1: true, f2: true, f3: true, f4: true}
	for _, f := range bbAll(rep, "leave-without-member-id") {
		if !want[f.Frame] {
			t.Errorf("leave-without-member-id at frame %d, want one of %v", f.Frame, want)
		}
	}
}

// 3.5 broker-accepted-invalid: "was answered without INVALID_REQUEST". An
// empty v1 join answered with another error (COORDINATOR_NOT_AVAILABLE) is
// still answered without INVALID_REQUEST; no member ID was assigned so no
// broker-generated-member-id.
func TestBlackboxEmptyJoinV1OtherError(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn, s := bbLegacy(c, pcapgen.ConnOptions{})
	s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(1, bbGroup, "", 0), pcapgen.ConsumerGroupHeartbeatResponse(1, errCoordNotAvailable, nil, 0))
	cn.Close()
	rep := bbRun2(t, c)
	bbExpect2(t, rep, map[string]int{"member-id-empty": 1, "broker-accepted-invalid": 1})
}

// ---------------------------------------------------------- member-id-changed

// 3.4 member-id-changed "warn | the same client (connection ...) uses a
// second member ID in the same group: a member ID lives as long as the
// process, across leave and rejoin and after fencing"; 3.7 request rules
// "fire once per offending request". Leave then rejoin with B: one finding
// at the rejoin; heartbeats with B are not re-reported... but a further
// switch to C is another offending request.
func TestBlackboxChangedAcrossLeave(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn, s := bbLegacy(c, pcapgen.ConnOptions{})
	a := pcapgen.JavaString(pcapgen.SeqUUID(0x45))
	b := pcapgen.JavaString(pcapgen.SeqUUID(0x46))
	cgJoin(s, 1, bbGroup, a)
	cgBeat(s, 1, bbGroup, a, 1)
	cgLeave(s, 1, bbGroup, a, -1)
	corr := s.Header.CorrelationID
	jf := cgJoin(s, 1, bbGroup, b)
	cn.Close()
	rep := bbRun2(t, c)
	bbExpect2(t, rep, map[string]int{"member-id-changed": 1})
	bbCheck(t, rep, "member-id-changed", "warn", "full", jf)
	// Section 5 fields of the finding.
	wantTime := c.Packets()[jf-1].Time.UTC().Format("2006-01-02T15:04:05.000000Z")
	for _, f := range bbAll(rep, "member-id-changed") {
		if !strings.Contains(f.Observed, b) {
			t.Errorf("member-id-changed observed %q, want the new member ID %s", f.Observed, b)
		}
		if f.Conn.Client != cn.Client().String() || f.Conn.Broker != cn.Broker().String() {
			t.Errorf("conn %+v, want %s -> %s", f.Conn, cn.Client(), cn.Broker())
		}
		if f.CorrelationID != corr || f.APIKey != 68 || f.API != "ConsumerGroupHeartbeat" || f.APIVersion != 1 {
			t.Errorf("finding request %s/%d v%d corr %d, want ConsumerGroupHeartbeat/68 v1 corr %d", f.API, f.APIKey, f.APIVersion, f.CorrelationID, corr)
		}
		if f.ClientID == nil || *f.ClientID != "legacy-app" {
			t.Errorf("client_id %v, want legacy-app", f.ClientID)
		}
		if f.KIP != "KIP-1082" {
			t.Errorf("kip %q", f.KIP)
		}
	}
	var whole struct {
		Findings []map[string]any `json:"findings"`
	}
	json.Unmarshal([]byte(rep.raw), &whole)
	for _, f := range whole.Findings {
		if f["time"] != wantTime {
			t.Errorf("finding time %v, want %s (the time of frame %d)", f["time"], wantTime, jf)
		}
	}
}

// "... after fencing": a heartbeat fenced with FENCED_MEMBER_EPOCH, the
// client rejoins with a new ID B. The join with A succeeded, so this is not
// ghost-member (which needs the join with A to get no response or an error).
func TestBlackboxChangedAfterFencing(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn, s := bbLegacy(c, pcapgen.ConnOptions{})
	a := pcapgen.JavaString(pcapgen.SeqUUID(0x47))
	b := pcapgen.JavaString(pcapgen.SeqUUID(0x48))
	cgJoin(s, 1, bbGroup, a)
	s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(1, bbGroup, a, 4), pcapgen.ConsumerGroupHeartbeatResponse(1, errFencedMemberEpoch, nil, 0))
	jf := cgJoin(s, 1, bbGroup, b)
	cgBeat(s, 1, bbGroup, b, 1)
	cn.Close()
	rep := bbRun2(t, c)
	bbExpect2(t, rep, map[string]int{"member-id-changed": 1})
	bbCheck(t, rep, "member-id-changed", "warn", "", jf)
}

// "once per offending request": A -> B -> C on one connection is two
// offending requests; a different group is a different subject ("in the
// same group"), so using A in group g2 is fine.
func TestBlackboxChangedTwiceAndOtherGroup(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn, s := bbLegacy(c, pcapgen.ConnOptions{})
	a := pcapgen.JavaString(pcapgen.SeqUUID(0x49))
	b := pcapgen.JavaString(pcapgen.SeqUUID(0x4a))
	cc := pcapgen.JavaString(pcapgen.SeqUUID(0x4b))
	cgJoin(s, 1, bbGroup, a)
	cgLeave(s, 1, bbGroup, a, -1)
	cgJoin(s, 1, bbGroup, b)
	cgBeat(s, 1, bbGroup, b, 1)
	cgLeave(s, 1, bbGroup, b, -1)
	cgJoin(s, 1, bbGroup, cc)
	cgJoin(s, 1, "other-group", b)
	cn.Close()
	bbExpect2(t, bbRun2(t, c), map[string]int{"member-id-changed": 2})
}

// "the same client (connection, or instance ID across connections)": the
// same instance ID on a second connection uses a new member ID after leave
// and reconnect: member-id-changed (plus member-id-misaligned, since the new
// ID is not the Java form of the instance ID).
func TestBlackboxChangedAcrossConnectionsByInstance(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	inst := pcapgen.SeqUUID(0x35)
	a := pcapgen.JavaString(inst)
	b := pcapgen.JavaString(pcapgen.SeqUUID(0x4c))
	cn, s := bbModern(c, pcapgen.ConnOptions{}, inst)
	cgJoin(s, 1, bbGroup, a)
	cgLeave(s, 1, bbGroup, a, -1)
	cn.Close()
	cn2, s2 := bbModern(c, pcapgen.ConnOptions{Client: netip.MustParseAddrPort("10.1.0.1:40999")}, inst)
	jf := cgJoin(s2, 1, bbGroup, b)
	cn2.Close()
	rep := bbRun2(t, c)
	bbExpect2(t, rep, map[string]int{"member-id-changed": 1, "member-id-misaligned": 1})
	bbCheck(t, rep, "member-id-changed", "warn", "", jf)
	bbCheck(t, rep, "member-id-misaligned", "warn", "", jf)
}

// ------------------------------------------------------------- ghost-member

// 3.4 ghost-member "error | a join with member ID A got no response ... and
// the client retried the join with a different ID B"; 3.7 "a retried join
// that is a ghost-member is not also reported as member-id-changed".
func TestBlackboxGhostNoResponse(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn, s := bbLegacy(c, pcapgen.ConnOptions{})
	a := pcapgen.JavaString(pcapgen.SeqUUID(0x4d))
	b := pcapgen.JavaString(pcapgen.SeqUUID(0x4e))
	s.Request(pcapgen.ConsumerGroupHeartbeat(1, bbGroup, a, 0))
	jf := cgJoin(s, 1, bbGroup, b)
	cgBeat(s, 1, bbGroup, b, 1)
	cn.Close()
	rep := bbRun2(t, c)
	bbExpect2(t, rep, map[string]int{"ghost-member": 1})
	bbCheck(t, rep, "ghost-member", "error", "full", jf)
}

// ghost-member "... got ... an error": the join with A answered
// COORDINATOR_NOT_AVAILABLE, retried with B; on a share group too.
func TestBlackboxGhostAfterError(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn, s := bbLegacy(c, pcapgen.ConnOptions{})
	a := pcapgen.JavaString(pcapgen.SeqUUID(0x4f))
	b := pcapgen.JavaString(pcapgen.SeqUUID(0x50))
	s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(1, bbGroup, a, 0), pcapgen.ConsumerGroupHeartbeatResponse(1, errCoordNotAvailable, nil, 0))
	jf := cgJoin(s, 1, bbGroup, b)
	s.RoundTrip(pcapgen.ShareGroupHeartbeat(1, "share-g", a, 0), pcapgen.ShareGroupHeartbeatResponse(1, errCoordNotAvailable, nil, 0))
	sf, _ := s.RoundTrip(pcapgen.ShareGroupHeartbeat(1, "share-g", b, 0), pcapgen.ShareGroupHeartbeatResponse(1, errNone, pcapgen.Ptr(b), 1))
	cn.Close()
	rep := bbRun2(t, c)
	bbExpect2(t, rep, map[string]int{"ghost-member": 2})
	got := map[int]bool{}
	for _, f := range bbAll(rep, "ghost-member") {
		got[f.Frame] = true
	}
	if !got[jf] || !got[sf] {
		t.Errorf("ghost-member frames %v, want %d and %d", got, jf, sf)
	}
}

// ------------------------------------------------------ member-id-collision

// 3.4 member-id-collision "error | two different client instances (...
// different client host:port without instance IDs, alive at the same time)
// use the same member ID in the same group"; 3.7 "member-id-collision once
// per (group, member ID, second claimant)". Two overlapping legacy
// connections from different hosts, the second heartbeating several times:
// one finding; a third claimant: a second finding.
func TestBlackboxCollisionLegacy(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	m := pcapgen.JavaString(pcapgen.SeqUUID(0x51))
	cn1, s1 := bbLegacy(c, pcapgen.ConnOptions{})
	cn2, s2 := bbLegacy(c, pcapgen.ConnOptions{})
	cgJoin(s1, 1, bbGroup, m)
	jf := cgJoin(s2, 1, bbGroup, m)
	cgBeat(s1, 1, bbGroup, m, 1)
	cgBeat(s2, 1, bbGroup, m, 1)
	cgBeat(s2, 1, bbGroup, m, 1)
	cn3, s3 := bbLegacy(c, pcapgen.ConnOptions{})
	jf3 := cgJoin(s3, 1, bbGroup, m)
	cgBeat(s3, 1, bbGroup, m, 1)
	cn1.Close()
	cn2.Close()
	cn3.Close()
	rep := bbRun2(t, c)
	bbExpect2(t, rep, map[string]int{"member-id-collision": 2})
	bbCheck(t, rep, "member-id-collision", "error", "", 0)
	got := map[int]bool{}
	for _, f := range bbAll(rep, "member-id-collision") {
		got[f.Frame] = true
	}
	if !got[jf] || !got[jf3] {
		t.Errorf("collision frames %v, want %d and %d", got, jf, jf3)
	}
}

// Collision between two instance IDs using the same member ID at once; the
// second claimant is also misaligned (its member ID is the first's instance
// ID). The same member ID in a different group is no collision.
func TestBlackboxCollisionInstances(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	i1, i2 := pcapgen.SeqUUID(0x36), pcapgen.SeqUUID(0x37)
	m := pcapgen.JavaString(i1)
	cn1, s1 := bbModern(c, pcapgen.ConnOptions{}, i1)
	cn2, s2 := bbModern(c, pcapgen.ConnOptions{}, i2)
	cgJoin(s1, 1, bbGroup, m)
	jf := cgJoin(s2, 1, bbGroup, m)
	cgBeat(s1, 1, bbGroup, m, 1)
	cgBeat(s2, 1, bbGroup, m, 1)
	cgJoin(s1, 1, "g-other", m)
	cn1.Close()
	cn2.Close()
	rep := bbRun2(t, c)
	bbExpect2(t, rep, map[string]int{"member-id-collision": 1, "member-id-misaligned": 1})
	bbCheck(t, rep, "member-id-collision", "error", "", jf)
	bbCheck(t, rep, "member-id-misaligned", "warn", "", jf)
}

// Not alive at the same time: the first legacy connection closed before the
// second one opened; the same member ID is no collision (the spec's legacy
// claimants must be "alive at the same time").
func TestBlackboxNoCollisionSequentialLegacy(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	m := pcapgen.JavaString(pcapgen.SeqUUID(0x52))
	cn1, s1 := bbLegacy(c, pcapgen.ConnOptions{})
	cgJoin(s1, 1, bbGroup, m)
	cgLeave(s1, 1, bbGroup, m, -1)
	cn1.Close()
	cn2, s2 := bbLegacy(c, pcapgen.ConnOptions{})
	cgJoin(s2, 1, bbGroup, m)
	cn2.Close()
	bbExpect2(t, bbRun2(t, c), nil)
}

// Same instance ID on two concurrent connections with the same (aligned)
// member ID: one client instance, no collision ("two different client
// instances").
func TestBlackboxNoCollisionSameInstance(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	inst := pcapgen.SeqUUID(0x38)
	m := pcapgen.JavaString(inst)
	cn1, s1 := bbModern(c, pcapgen.ConnOptions{Client: netip.MustParseAddrPort("10.7.0.1:41001")}, inst)
	cn2, s2 := bbModern(c, pcapgen.ConnOptions{Client: netip.MustParseAddrPort("10.7.0.1:41002"), Broker: netip.MustParseAddrPort("10.0.0.2:9092")}, inst)
	cgJoin(s1, 1, bbGroup, m)
	cgBeat(s2, 1, bbGroup, m, 1)
	cgBeat(s1, 1, bbGroup, m, 1)
	cn1.Close()
	cn2.Close()
	bbExpect2(t, bbRun2(t, c), nil)
}

// ------------------------------------------------------- property rules

// 3.4 member-id-not-uuid "warn | the member ID decodes to 16 bytes in none
// of the known encodings"; 3.7 "once per (connection, group, member ID)".
// Same ID in two groups on one connection = 2; repeated heartbeats add none;
// another connection (sequential, different host) = 1 more.
func TestBlackboxNotUUIDOncePerSubject(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	m := "consumer-7-1732894512"
	cn, s := bbLegacy(c, pcapgen.ConnOptions{})
	jf := cgJoin(s, 1, bbGroup, m)
	cgBeat(s, 1, bbGroup, m, 1)
	cgBeat(s, 1, bbGroup, m, 1)
	cgJoin(s, 1, "g2", m)
	cgLeave(s, 1, bbGroup, m, -1)
	cgLeave(s, 1, "g2", m, -1)
	cn.Close()
	cn2, s2 := bbLegacy(c, pcapgen.ConnOptions{})
	cgJoin(s2, 1, bbGroup, m)
	cn2.Close()
	rep := bbRun2(t, c)
	bbExpect2(t, rep, map[string]int{"member-id-not-uuid": 3})
	bbCheck(t, rep, "member-id-not-uuid", "warn", "full", 0)
	if fs := bbAll(rep, "member-id-not-uuid"); len(fs) > 0 && fs[0].Frame != jf {
		t.Errorf("first member-id-not-uuid frame %d, want %d (the first request that shows it)", fs[0].Frame, jf)
	}
}

// 3.4 member-id-encoding "info, warn if it holds '+' or '/' | the member ID
// is 16 bytes in one of the other encodings of section 1, not Java's: padded
// URL-safe base64, standard base64 ..., or hex". Each encoding on its own
// legacy connection (no instance ID, so no alignment rules).
func TestBlackboxEncodings(t *testing.T) {
	slash := pcapgen.SeqUUID(0x53)
	slash[0] = 0xff // standard base64 starts with '/', URL-safe with '_'
	plus := pcapgen.SeqUUID(0x54)
	plus[0] = 0xfb // 111110 11 -> '+'
	cases := []struct {
		name, member, severity string
	}{
		{"padded-url", pcapgen.PaddedURL(pcapgen.SeqUUID(0x55)), "info"},
		{"hex32", pcapgen.Hex(pcapgen.SeqUUID(0x56)), "info"},
		{"dashed", pcapgen.Dashed(pcapgen.SeqUUID(0x57)), "info"},
		{"std-padded-slash", pcapgen.StdBase64(slash), "warn"},
		{"std-nopad-slash", pcapgen.StdBase64NoPad(slash), "warn"},
		{"std-nopad-plus", pcapgen.StdBase64NoPad(plus), "warn"},
		{"std-padded-plus", pcapgen.StdBase64(plus), "warn"},
		{"std-padded-plain", pcapgen.StdBase64(pcapgen.SeqUUID(0x10)), "info"},
		{"java", pcapgen.JavaString(slash), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if strings.HasPrefix(tc.name, "std") && strings.HasSuffix(tc.name, "slash") && !strings.Contains(tc.member, "/") {
				t.Fatalf("scenario bug: %q", tc.member)
			}
			if strings.HasSuffix(tc.name, "plus") && !strings.Contains(tc.member, "+") {
				t.Fatalf("scenario bug: %q", tc.member)
			}
			c := pcapgen.New(pcapgen.Options{})
			cn, s := bbLegacy(c, pcapgen.ConnOptions{})
			jf := cgJoin(s, 1, bbGroup, tc.member)
			cgBeat(s, 1, bbGroup, tc.member, 1)
			cn.Close()
			rep := bbRun2(t, c)
			if tc.severity == "" {
				bbExpect2(t, rep, nil)
				return
			}
			bbExpect2(t, rep, map[string]int{"member-id-encoding": 1})
			bbCheck(t, rep, "member-id-encoding", tc.severity, "full", jf)
		})
	}
}

// 3.4 member-id-not-v4 "info | the UUID is not version 4, or is reserved".
// A version-1 UUID, ONE_UUID and the zero UUID in Java form, each on its own
// connection (legacy, so nothing else applies).
func TestBlackboxNotV4(t *testing.T) {
	for name, id := range map[string][16]byte{
		"v1":   withVersion(pcapgen.SeqUUID(0x59), 1),
		"v7":   withVersion(pcapgen.SeqUUID(0x5a), 7),
		"one":  pcapgen.OneUUID(),
		"zero": {},
	} {
		t.Run(name, func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			cn, s := bbLegacy(c, pcapgen.ConnOptions{})
			m := pcapgen.JavaString(id)
			jf := cgJoin(s, 1, bbGroup, m)
			cgBeat(s, 1, bbGroup, m, 1)
			cn.Close()
			rep := bbRun2(t, c)
			bbExpect2(t, rep, map[string]int{"member-id-not-v4": 1})
			bbCheck(t, rep, "member-id-not-v4", "info", "full", jf)
		})
	}
}

// An aligned member ID whose instance ID is a version-1 UUID: aligned (no
// misaligned), but member-id-not-v4 (info) once.
func TestBlackboxAlignedButNotV4(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	inst := withVersion(pcapgen.SeqUUID(0x39), 1)
	m := pcapgen.JavaString(inst)
	cn, s := bbModern(c, pcapgen.ConnOptions{}, inst)
	cgJoin(s, 1, bbGroup, m)
	cgBeat(s, 1, bbGroup, m, 1)
	cn.Close()
	bbExpect2(t, bbRun2(t, c), map[string]int{"member-id-not-v4": 1})
}

// 3.4 member-id-misaligned "warn | the member ID is not the Java string
// form of the same connection's header instance ID"; once per (connection,
// group, member ID).
func TestBlackboxMisaligned(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	inst := pcapgen.SeqUUID(0x3a)
	m := pcapgen.JavaString(pcapgen.SeqUUID(0x5b))
	cn, s := bbModern(c, pcapgen.ConnOptions{}, inst)
	jf := cgJoin(s, 1, bbGroup, m)
	cgBeat(s, 1, bbGroup, m, 1)
	cgBeat(s, 1, bbGroup, m, 1)
	cn.Close()
	rep := bbRun2(t, c)
	bbExpect2(t, rep, map[string]int{"member-id-misaligned": 1})
	bbCheck(t, rep, "member-id-misaligned", "warn", "full", jf)
	for _, f := range bbAll(rep, "member-id-misaligned") {
		if f.InstanceID != pcapgen.JavaString(inst) {
			t.Errorf("finding instance_id %q, want %s", f.InstanceID, pcapgen.JavaString(inst))
		}
	}
}

// 3.4 member-id-alignment-encoding "info | the member ID decodes to the same
// 16 bytes as the instance ID but is spelled in another encoding"; 3.7 "a
// member ID that spells the instance ID's bytes in another encoding is
// member-id-alignment-encoding (plus member-id-encoding), never
// member-id-misaligned".
func TestBlackboxAlignmentEncoding(t *testing.T) {
	slash := pcapgen.SeqUUID(0x3b)
	slash[0] = 0xff
	cases := []struct {
		name   string
		inst   [16]byte
		member func([16]byte) string
		encSev string
	}{
		{"padded-url", pcapgen.SeqUUID(0x3c), pcapgen.PaddedURL, "info"},
		{"dashed", pcapgen.SeqUUID(0x3d), pcapgen.Dashed, "info"},
		{"hex", pcapgen.SeqUUID(0x3e), pcapgen.Hex, "info"},
		{"std-slash", slash, pcapgen.StdBase64, "warn"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			m := tc.member(tc.inst)
			cn, s := bbModern(c, pcapgen.ConnOptions{}, tc.inst)
			jf := cgJoin(s, 1, bbGroup, m)
			cgBeat(s, 1, bbGroup, m, 1)
			cn.Close()
			rep := bbRun2(t, c)
			bbExpect2(t, rep, map[string]int{"member-id-alignment-encoding": 1, "member-id-encoding": 1})
			bbCheck(t, rep, "member-id-alignment-encoding", "info", "", jf)
			bbCheck(t, rep, "member-id-encoding", tc.encSev, "", jf)
		})
	}
}

// An instance ID that is ONE_UUID with the aligned member ID: instance-id-
// reserved (warn, 3.1) and member-id-not-v4 (info, "or is reserved"), no
// misaligned.
func TestBlackboxReservedInstanceAligned(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	inst := pcapgen.OneUUID()
	m := pcapgen.JavaString(inst)
	cn, s := bbModern(c, pcapgen.ConnOptions{}, inst)
	cgJoin(s, 1, bbGroup, m)
	cn.Close()
	rep := bbRun2(t, c)
	bbExpect2(t, rep, map[string]int{"instance-id-reserved": 1, "member-id-not-v4": 1})
	bbCheck(t, rep, "member-id-not-v4", "info", "", 0)
}

// 3.7 "the member-ID property rules (-not-uuid, -encoding, -not-v4,
// -misaligned) do not judge" a broker-assigned member ID; below the required
// version (v0) the assignment is legitimate. A KIP-1313 client at v0 gets a
// padded, non-v4, misaligned ID from the broker: only member-id-empty (info).
func TestBlackboxBrokerAssignedNotJudged(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	inst := pcapgen.SeqUUID(0x3f)
	assigned := pcapgen.PaddedURL(withVersion(pcapgen.SeqUUID(0x5c), 1))
	cn, s := bbModern(c, pcapgen.ConnOptions{}, inst)
	s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(0, bbGroup, "", 0), pcapgen.ConsumerGroupHeartbeatResponse(0, errNone, pcapgen.Ptr(assigned), 1))
	cgBeat(s, 0, bbGroup, assigned, 1)
	cgLeave(s, 0, bbGroup, assigned, -1)
	cn.Close()
	rep := bbRun2(t, c)
	bbExpect2(t, rep, map[string]int{"member-id-empty": 1})
	bbCheck(t, rep, "member-id-empty", "info", "", 0)
}

// ---------------------------------------------------- coverage and section 2

// Section 2: "A connection is observed from its start when its SYN or
// SYN-ACK was seen". With only the SYN-ACK (SkipSYN) there is no
// midstream-join, and a finding depending on the first request
// (instance-id-late) is "full".
func TestBlackboxMSynAckIsStart(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{SkipSYN: true})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("app"), CorrelationID: 1})
	s.RoundTrip(pcapgen.APIVersions(4, "x", "1"), pcapgen.APIVersionsResponse(4))
	inst := pcapgen.SeqUUID(0x60)
	s.Header.InstanceID = &inst
	s.Header.ClientID = nil
	lf, _ := s.RoundTrip(pcapgen.Metadata(12, "t"), pcapgen.MetadataResponse(12, "10.0.0.1", 9092))
	cn.Close()
	rep := bbRun2(t, c)
	bbExpect2(t, rep, map[string]int{"instance-id-late": 1})
	bbCheck(t, rep, "instance-id-late", "error", "full", lf)
	if n := rep.Totals.Coverage["midstream-join"]; n != 0 {
		t.Errorf("midstream-join %d with a SYN-ACK seen, want 0", n)
	}
}

// Section 2: "A connection joined mid-stream still yields findings, but any
// finding that depends on the first request carries confidence partial";
// 3.6 midstream-join is counted.
func TestBlackboxMMidstreamPartial(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{NoSYN: true})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("app"), CorrelationID: 100})
	s.RoundTrip(pcapgen.Metadata(12, "t"), pcapgen.MetadataResponse(12, "10.0.0.1", 9092))
	inst := pcapgen.SeqUUID(0x61)
	s.Header.InstanceID = &inst
	s.Header.ClientID = nil
	lf, _ := s.RoundTrip(pcapgen.Metadata(12, "t"), pcapgen.MetadataResponse(12, "10.0.0.1", 9092))
	cn.Close()
	// Member rules still run on a mid-stream connection (legacy client).
	cn2 := c.Conn(pcapgen.ConnOptions{NoSYN: true})
	s2 := cn2.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("legacy-app"), CorrelationID: 50})
	nf := cgJoin(s2, 1, bbGroup, "not-a-uuid-member")
	cn2.Close()
	rep := bbRun2(t, c)
	bbExpect2(t, rep, map[string]int{"instance-id-late": 1, "member-id-not-uuid": 1})
	bbCheck(t, rep, "instance-id-late", "error", "partial", lf)
	bbCheck(t, rep, "member-id-not-uuid", "warn", "", nf)
	if n := rep.Totals.Coverage["midstream-join"]; n != 2 {
		t.Errorf("midstream-join %d, want 2", n)
	}
}

// Section 2: "A connection with lost bytes resyncs to the next plausible
// frame; findings after a gap carry partial too"; 3.6 stream-gap counted.
func TestBlackboxMGapPartial(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn, s := bbLegacy(c, pcapgen.ConnOptions{})
	a := pcapgen.JavaString(pcapgen.SeqUUID(0x62))
	b := pcapgen.JavaString(pcapgen.SeqUUID(0x63))
	cgJoin(s, 1, bbGroup, a)
	cgLeave(s, 1, bbGroup, a, -1)
	cn.DropNext(1)
	s.Request(pcapgen.Metadata(12, "lost")) // never seen, never answered
	jf := cgJoin(s, 1, bbGroup, b)
	cn.Close()
	rep := bbRun2(t, c)
	bbExpect2(t, rep, map[string]int{"member-id-changed": 1})
	bbCheck(t, rep, "member-id-changed", "warn", "partial", jf)
	if n := rep.Totals.Coverage["stream-gap"]; n != 1 {
		t.Errorf("stream-gap %d, want 1", n)
	}
	// The join with B (corr 5) and its answer were both captured.
	if n := rep.Totals.Coverage["unmatched-response"]; n != 0 {
		t.Errorf("unmatched-response %d, want 0: the answer to the join with B matches a captured request", n)
	}
}

// Section 1: "A frame size < 8 ... is a framing error, never a panic"; 3.6
// framing-error counted.
func TestBlackboxFramingError(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn, s := bbLegacy(c, pcapgen.ConnOptions{})
	cgJoin(s, 1, bbGroup, pcapgen.JavaString(pcapgen.SeqUUID(0x64)))
	cn.Raw(pcapgen.ToBroker, []byte{0, 0, 0, 3, 1, 2, 3})
	cn.Close()
	rep := bbRun2(t, c)
	bbExpect2(t, rep, nil)
	if n := rep.Totals.Coverage["framing-error"]; n != 1 {
		t.Errorf("framing-error %d, want 1", n)
	}
}

// Section 2: "TLS traffic (first client byte 0x16) cannot be audited: it is
// counted and reported, never decoded as Kafka."
func TestBlackboxTLS(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{Broker: netip.MustParseAddrPort("10.0.0.1:9093")})
	cn.Raw(pcapgen.ToBroker, pcapgen.TLSClientHello())
	cn.Raw(pcapgen.ToClient, append([]byte{0x16, 0x03, 0x03, 0x00, 0x10}, make([]byte, 16)...))
	cn.Close()
	rep := bbRun2(t, c)
	bbExpect2(t, rep, nil)
	if n := rep.Totals.Coverage["tls-connection"]; n != 1 {
		t.Errorf("tls-connection %d, want 1", n)
	}
	if rep.Totals.Requests != 0 {
		t.Errorf("requests %d from a TLS connection, want 0", rep.Totals.Requests)
	}
}

// Section 1: "after a v0 handshake the client sends raw SASL tokens without
// Kafka headers until authentication ends: skip them, do not flag them";
// 3.6 sasl-raw-tokens. The broker's empty (size 0) token answer must not be
// a framing error; member rules run after authentication.
func TestBlackboxSaslV0RawTokens(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("sasl-app"), CorrelationID: 1})
	s.RoundTrip(pcapgen.SaslHandshake(0, "PLAIN"), pcapgen.SaslHandshakeResponse(0, "PLAIN"))
	cn.Raw(pcapgen.ToBroker, pcapgen.SASLToken([]byte("\x00alice\x00alice-secret")))
	cn.Raw(pcapgen.ToClient, pcapgen.SASLToken(nil))
	s.RoundTrip(pcapgen.APIVersions(3, "librdkafka", "2.6.0"), pcapgen.APIVersionsResponse(3))
	m := pcapgen.JavaString(pcapgen.SeqUUID(0x65))
	cgJoin(s, 1, bbGroup, m)
	cgLeave(s, 1, bbGroup, m, -1)
	cgJoin(s, 1, bbGroup, pcapgen.JavaString(pcapgen.SeqUUID(0x66)))
	cn.Close()
	rep := bbRun2(t, c)
	bbExpect2(t, rep, map[string]int{"member-id-changed": 1})
	bbCheck(t, rep, "member-id-changed", "warn", "full", 0)
	if n := rep.Totals.Coverage["sasl-raw-tokens"]; n < 1 {
		t.Errorf("sasl-raw-tokens %d, want at least 1", n)
	}
	for _, ev := range []string{"framing-error", "stream-gap", "unmatched-response", "midstream-join"} {
		if n := rep.Totals.Coverage[ev]; n != 0 {
			t.Errorf("coverage %s = %d after raw SASL tokens, want 0", ev, n)
		}
	}
}

// 3.6 unmatched-response: "Responses are matched to requests by correlation
// id per connection"; a response to no request is counted.
func TestBlackboxUnmatchedResponse(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn, s := bbLegacy(c, pcapgen.ConnOptions{})
	s.Respond(999, pcapgen.MetadataResponse(12, "10.0.0.1", 9092))
	cgJoin(s, 1, bbGroup, pcapgen.JavaString(pcapgen.SeqUUID(0x67)))
	cn.Close()
	rep := bbRun2(t, c)
	bbExpect2(t, rep, nil)
	if n := rep.Totals.Coverage["unmatched-response"]; n != 1 {
		t.Errorf("unmatched-response %d, want 1", n)
	}
}

// 3.6 truncated-packet (snaplen): packets cut by the snaplen are counted.
func TestBlackboxTruncatedPacket(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{Snaplen: 80})
	cn, s := bbLegacy(c, pcapgen.ConnOptions{})
	cgJoin(s, 1, bbGroup, pcapgen.JavaString(pcapgen.SeqUUID(0x68)))
	cn.Close()
	rep := bbRun2(t, c)
	if n := rep.Totals.Coverage["truncated-packet"]; n < 1 {
		t.Errorf("truncated-packet %d, want at least 1", n)
	}
}

// Section 5: "frame is the 1-based packet number ... of the packet that
// completed the request". With 20-byte segments, retransmissions and a
// pipelined pair, the ghost-member finding points at the completing packet.
func TestBlackboxFrameOfSegmentedRequest(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{Perturb: pcapgen.Perturb{MSS: 20, RetransmitEvery: 3, ACKs: true}})
	cn, s := bbLegacy(c, pcapgen.ConnOptions{})
	a := pcapgen.JavaString(pcapgen.SeqUUID(0x69))
	b := pcapgen.JavaString(pcapgen.SeqUUID(0x6a))
	_, frames := s.Pipeline(pcapgen.ConsumerGroupHeartbeat(1, bbGroup, a, 0), pcapgen.ConsumerGroupHeartbeat(1, bbGroup, b, 0))
	cn.Close()
	rep := bbRun2(t, c)
	bbExpect2(t, rep, map[string]int{"ghost-member": 1})
	bbCheck(t, rep, "ghost-member", "error", "full", frames[1])
}

// Section 2 "findings after a gap carry partial"; 3.7 "A member ID that a
// broker assigned (the client learned it from a heartbeat response) is the
// broker's ... the member-ID property rules ... do not judge it"; 3.5
// broker-generated-member-id. After a lost segment kwatch must resync and
// keep matching responses by correlation ID ("Responses are matched to
// requests by correlation id per connection"): the empty v1 join after the
// gap is answered with a broker-assigned, non-UUID member ID, which the
// client then uses.
func TestBlackboxGapThenBrokerAssigned(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn, s := bbLegacy(c, pcapgen.ConnOptions{})
	s.RoundTrip(pcapgen.Metadata(12, "t"), pcapgen.MetadataResponse(12, "10.0.0.1", 9092))
	cn.DropNext(1)
	s.Request(pcapgen.Metadata(12, "lost")) // never seen, never answered
	assigned := "broker-assigned-member-2"
	jf, _ := s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(1, bbGroup, "", 0), pcapgen.ConsumerGroupHeartbeatResponse(1, errNone, pcapgen.Ptr(assigned), 1))
	cgBeat(s, 1, bbGroup, assigned, 1)
	cgBeat(s, 1, bbGroup, assigned, 1)
	cn.Close()
	rep := bbRun2(t, c)
	bbExpect2(t, rep, map[string]int{"member-id-empty": 1, "broker-generated-member-id": 1, "broker-accepted-invalid": 1})
	bbCheck(t, rep, "member-id-empty", "error", "partial", jf)
	if n := rep.Totals.Coverage["unmatched-response"]; n != 0 {
		t.Errorf("unmatched-response %d: every response after the gap answers a request that was seen", n)
	}
	if rep.Totals.Responses != 5 {
		t.Errorf("responses %d, want 5 (ApiVersions, Metadata, 3 heartbeats)", rep.Totals.Responses)
	}
}

// 3.7 "Request rules (... member-id-empty ...) fire once per offending
// request": an empty v1 join with no response, retried empty, is two
// member-id-empty findings; with no response there is no 3.5 finding.
func TestBlackboxEmptyJoinRetriedNoResponse(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn, s := bbLegacy(c, pcapgen.ConnOptions{})
	s.Request(pcapgen.ConsumerGroupHeartbeat(1, bbGroup, "", 0))
	s.Request(pcapgen.ConsumerGroupHeartbeat(1, bbGroup, "", 0))
	cn.Close()
	rep := bbRun2(t, c)
	bbExpect2(t, rep, map[string]int{"member-id-empty": 2})
	bbCheck(t, rep, "member-id-empty", "error", "", 0)
}

// 3.5 for streams: an empty StreamsGroupHeartbeat v0 join (required from v0)
// answered NONE with an assigned member ID: member-id-empty error plus both
// broker rules.
func TestBlackboxStreamsBrokerAssigned(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn, s := bbLegacy(c, pcapgen.ConnOptions{})
	assigned := pcapgen.JavaString(pcapgen.SeqUUID(0x70))
	s.RoundTrip(pcapgen.StreamsGroupHeartbeat(0, "streams-g", "", 0), pcapgen.StreamsGroupHeartbeatResponse(0, errNone, assigned, 1))
	s.RoundTrip(pcapgen.StreamsGroupHeartbeat(0, "streams-g", assigned, 1), pcapgen.StreamsGroupHeartbeatResponse(0, errNone, assigned, 1))
	cn.Close()
	rep := bbRun2(t, c)
	bbExpect2(t, rep, map[string]int{"member-id-empty": 1, "broker-generated-member-id": 1, "broker-accepted-invalid": 1})
	bbCheck(t, rep, "member-id-empty", "error", "", 0)
}

// member-id-changed "uses a second member ID in the same group" also when the
// switch happens in a plain heartbeat (epoch > 0), not a join.
func TestBlackboxChangedInHeartbeat(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn, s := bbLegacy(c, pcapgen.ConnOptions{})
	a := pcapgen.JavaString(pcapgen.SeqUUID(0x71))
	b := pcapgen.JavaString(pcapgen.SeqUUID(0x72))
	cgJoin(s, 1, bbGroup, a)
	hf := cgBeat(s, 1, bbGroup, b, 2)
	cn.Close()
	rep := bbRun2(t, c)
	bbExpect2(t, rep, map[string]int{"member-id-changed": 1})
	bbCheck(t, rep, "member-id-changed", "warn", "", hf)
}

// 3.7 property rules "once per (connection, group, member ID)": the same
// instance on two connections, both using the same misaligned member ID, is
// two member-id-misaligned findings and no member-id-changed.
func TestBlackboxMisalignedPerConnection(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	inst := pcapgen.SeqUUID(0x73)
	m := pcapgen.JavaString(pcapgen.SeqUUID(0x74))
	cn, s := bbModern(c, pcapgen.ConnOptions{}, inst)
	cgJoin(s, 1, bbGroup, m)
	cgLeave(s, 1, bbGroup, m, -1)
	cn.Close()
	cn2, s2 := bbModern(c, pcapgen.ConnOptions{Client: netip.MustParseAddrPort("10.1.0.1:40555")}, inst)
	cgJoin(s2, 1, bbGroup, m)
	cn2.Close()
	rep := bbRun2(t, c)
	bbExpect2(t, rep, map[string]int{"member-id-misaligned": 2})
}

// 3.7 "A request whose tag 0 is malformed neither sets nor breaks the
// connection's instance-ID state." The first v2 request, a join, has a tag 0
// of 8 bytes (instance-id-malformed) and is rejected with INVALID_REQUEST;
// the client retries the join on the same connection with instance ID I and
// member ID Java(I): aligned, not instance-id-late, and no collision (one
// connection is one client; 3.4 collision needs "two different client
// instances").
func TestBlackboxMalformedTagThenAligned(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	inst := pcapgen.SeqUUID(0x75)
	m := pcapgen.JavaString(inst)
	cn := c.Conn(pcapgen.ConnOptions{})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("app"), CorrelationID: 1,
		RawTags: []byte{1, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8}})
	mf, _ := s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(1, bbGroup, m, 0), pcapgen.ConsumerGroupHeartbeatResponse(1, errInvalidRequest, nil, 0))
	s.Header.RawTags = nil
	s.Header.InstanceID = &inst
	s.Header.ClientID = nil
	cgJoin(s, 1, bbGroup, m)
	cgBeat(s, 1, bbGroup, m, 1)
	cn.Close()
	rep := bbRun2(t, c)
	bbExpect2(t, rep, map[string]int{"instance-id-malformed": 1})
	bbCheck(t, rep, "instance-id-malformed", "error", "", mf)
}

// member-id-not-uuid for strings that look like an encoding but do not
// decode to 16 bytes.
func TestBlackboxNotUUIDShapes(t *testing.T) {
	for name, m := range map[string]string{
		"32-non-hex":       strings.Repeat("z", 32),
		"36-dashed-nonhex": "zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz",
		"short":            "m1",
		"uuid-with-suffix": pcapgen.JavaString(pcapgen.SeqUUID(0x76)) + "-1",
	} {
		t.Run(name, func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			cn, s := bbLegacy(c, pcapgen.ConnOptions{})
			cgJoin(s, 1, bbGroup, m)
			cn.Close()
			rep := bbRun2(t, c)
			bbExpect2(t, rep, map[string]int{"member-id-not-uuid": 1})
			bbCheck(t, rep, "member-id-not-uuid", "warn", "", 0)
		})
	}
}

// A connection whose first v2 request carried no instance ID joins with
// member ID M, then (instance-id-late, once per offending request) sends
// instance ID I with the same member ID M = Java(I). One connection is one
// client: no member-id-collision with itself, no member-id-changed.
func TestBlackboxLateInstanceNoSelfCollision(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	inst := pcapgen.SeqUUID(0x77)
	m := pcapgen.JavaString(inst)
	cn, s := bbLegacy(c, pcapgen.ConnOptions{})
	s.Header.ClientID = nil // sent once, on ApiVersions
	cgJoin(s, 1, bbGroup, m)
	s.Header.InstanceID = &inst
	// a conforming broker rejects it (so no broker-accepted-invalid)
	lf, _ := s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(1, bbGroup, m, 1), pcapgen.ConsumerGroupHeartbeatResponse(1, errInvalidRequest, nil, 0))
	cn.Close()
	rep := bbRun2(t, c)
	bbExpect2(t, rep, map[string]int{"instance-id-late": 1})
	bbCheck(t, rep, "instance-id-late", "error", "", lf)
}

// Same as above with the instance ID dropped mid-connection
// (instance-id-dropped, rejected with INVALID_REQUEST): the connection is
// still one client, so its member ID does not collide with itself.
func TestBlackboxDroppedInstanceNoSelfCollision(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	inst := pcapgen.SeqUUID(0x78)
	m := pcapgen.JavaString(inst)
	cn, s := bbModern(c, pcapgen.ConnOptions{}, inst)
	cgJoin(s, 1, bbGroup, m)
	s.Header.InstanceID = nil
	df, _ := s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(1, bbGroup, m, 1), pcapgen.ConsumerGroupHeartbeatResponse(1, errInvalidRequest, nil, 0))
	cn.Close()
	rep := bbRun2(t, c)
	bbExpect2(t, rep, map[string]int{"instance-id-dropped": 1})
	bbCheck(t, rep, "instance-id-dropped", "error", "", df)
}

// Same root cause as TestBlackboxGapThenBrokerAssigned, seen through
// ghost-member: "a join with member ID A got no response or an error, and
// the client retried the join with a different ID B". After an early lost
// segment the join with A is answered NONE (the capture holds the answer),
// a heartbeat is fenced, and the client rejoins with B: that is
// member-id-changed (warn, partial after the gap), not ghost-member (error).
func TestBlackboxGapNoFalseGhost(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn, s := bbLegacy(c, pcapgen.ConnOptions{})
	cn.DropNext(1)
	s.Request(pcapgen.Metadata(12, "lost")) // never seen, never answered
	a := pcapgen.JavaString(pcapgen.SeqUUID(0x62))
	b := pcapgen.JavaString(pcapgen.SeqUUID(0x63))
	cgJoin(s, 1, bbGroup, a)
	s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(1, bbGroup, a, 4), pcapgen.ConsumerGroupHeartbeatResponse(1, errFencedMemberEpoch, nil, 0))
	jf := cgJoin(s, 1, bbGroup, b)
	cn.Close()
	rep := bbRun2(t, c)
	bbExpect2(t, rep, map[string]int{"member-id-changed": 1})
	bbCheck(t, rep, "member-id-changed", "warn", "partial", jf)
}

// Collision between a KIP-1313 instance and a legacy host:port claimant,
// both alive: "two different client instances (different instance IDs, or
// different client host:port without instance IDs ...)".
func TestBlackboxCollisionInstanceAndLegacy(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	inst := pcapgen.SeqUUID(0x36)
	m := pcapgen.JavaString(inst)
	cn1, s1 := bbModern(c, pcapgen.ConnOptions{}, inst)
	cn2, s2 := bbLegacy(c, pcapgen.ConnOptions{})
	cgJoin(s1, 1, bbGroup, m)
	jf := cgJoin(s2, 1, bbGroup, m)
	cgBeat(s1, 1, bbGroup, m, 1)
	cgBeat(s2, 1, bbGroup, m, 1)
	cn1.Close()
	cn2.Close()
	rep := bbRun2(t, c)
	bbExpect2(t, rep, map[string]int{"member-id-collision": 1})
	bbCheck(t, rep, "member-id-collision", "error", "", jf)
}

// ghost-member across a reconnect of the same instance ID (kwatch's reading:
// "the client" is the connection or the instance ID, as for
// member-id-changed): the join with A got no response (connection reset),
// the same instance rejoins with B on a new connection. ghost-member, not
// member-id-changed ("a retried join that is a ghost-member is not also
// reported as member-id-changed"); B is also misaligned.
func TestBlackboxGhostAcrossReconnect(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	inst := pcapgen.SeqUUID(0x79)
	a := pcapgen.JavaString(inst)
	b := pcapgen.JavaString(pcapgen.SeqUUID(0x7a))
	cn, s := bbModern(c, pcapgen.ConnOptions{}, inst)
	s.Request(pcapgen.ConsumerGroupHeartbeat(1, bbGroup, a, 0))
	cn.Reset()
	cn2, s2 := bbModern(c, pcapgen.ConnOptions{Client: netip.MustParseAddrPort("10.1.0.1:41234")}, inst)
	jf := cgJoin(s2, 1, bbGroup, b)
	cn2.Close()
	rep := bbRun2(t, c)
	bbExpect2(t, rep, map[string]int{"ghost-member": 1, "member-id-misaligned": 1})
	bbCheck(t, rep, "ghost-member", "error", "", jf)
}

// 3.4 member-id-collision: "two different client instances (different
// instance IDs, or different client host:port without instance IDs, alive
// at the same time) use the same member ID in the same group". Two legacy
// connections from the same host but different ports, both open: the first
// joins with M, the second heartbeats (epoch 3) with M without joining and
// the first falls silent. kwatch reads this as one process whose
// heartbeats moved to another connection (its coordinator moved; README,
// rules where SPEC.md is silent, 7). With a join on the second while the
// first holds M, or both heartbeating on, it is a collision.
func TestBlackboxCollisionLegacySameHostHeartbeat(t *testing.T) {
	for _, tc := range []struct {
		name       string
		join, both bool
		want       int
	}{
		{name: "moved", want: 0},
		{name: "second joins", join: true, want: 1},
		{name: "both heartbeat", both: true, want: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			host := netip.MustParseAddr("10.8.0.1")
			m := pcapgen.JavaString(pcapgen.SeqUUID(0x7b))
			cn1, s1 := bbLegacy(c, pcapgen.ConnOptions{Client: netip.AddrPortFrom(host, 45001)})
			cn2, s2 := bbLegacy(c, pcapgen.ConnOptions{Client: netip.AddrPortFrom(host, 45002)})
			cgJoin(s1, 1, bbGroup, m)
			cgBeat(s1, 1, bbGroup, m, 3)
			var hf int
			if tc.join {
				hf = cgJoin(s2, 1, bbGroup, m)
			} else {
				cgBeat(s2, 1, bbGroup, m, 3)
			}
			if tc.both {
				// The member switches back and forth: at the third switch
				// it is two processes, not one that moved and moved back.
				cgBeat(s1, 1, bbGroup, m, 3)
				hf = cgBeat(s2, 1, bbGroup, m, 3)
			}
			cn1.Close()
			cn2.Close()
			rep := bbRun2(t, c)
			want := map[string]int{}
			if tc.want > 0 {
				want["member-id-collision"] = tc.want
			}
			bbExpect2(t, rep, want)
			if tc.want > 0 {
				bbCheck(t, rep, "member-id-collision", "error", "", hf)
			}
		})
	}
}

// Section 2: "'The first request' of a rule is the first request of the
// connection that uses the v2 header. Requests with a v0/v1 header are
// exempt from the header instance-ID rules". A SaslHandshake v1 (header v1)
// precedes the KIP-1313 requests: no instance-id-late; the aligned consumer
// is compliant.
func TestBlackboxFirstIsFirstV2(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	inst := pcapgen.SeqUUID(0x12)
	m := pcapgen.JavaString(inst)
	cn := c.Conn(pcapgen.ConnOptions{})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("app"), CorrelationID: 1})
	s.RoundTrip(pcapgen.SaslHandshake(1, "PLAIN"), pcapgen.SaslHandshakeResponse(1, "PLAIN"))
	s.Header.InstanceID = &inst
	s.Header.ClientID = nil
	s.RoundTrip(pcapgen.APIVersions(4, "apache-kafka-java", "4.2.0"), pcapgen.APIVersionsResponse(4))
	cgJoin(s, 1, bbGroup, m)
	cgBeat(s, 1, bbGroup, m, 1)
	cn.Close()
	rep := bbRun2(t, c)
	bbExpect2(t, rep, nil)
	if rep.Totals.RequestsByHeaderVersion["v1"] != 1 || rep.Totals.RequestsByHeaderVersion["v2"] != 3 {
		t.Errorf("requests_by_header_version %v, want v1:1 v2:3", rep.Totals.RequestsByHeaderVersion)
	}
	if n := rep.Totals.Coverage["sasl-raw-tokens"]; n != 0 {
		t.Errorf("sasl-raw-tokens %d after a v1 handshake, want 0", n)
	}
}
