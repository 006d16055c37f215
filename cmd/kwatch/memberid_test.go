package main

// SPEC.md section 3.4: member IDs (KIP-1082) and their alignment with the
// instance ID (KIP-1313): empty, changed, ghost, collision, encodings, not-uuid,
// not-v4 and misaligned, on all three heartbeat APIs.
// Expectations come from SPEC.md and README.md's "Rules: where SPEC.md is
// silent" only, never from kwatch's implementation.

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"
	"testing"

	"github.com/kwatch/kwatch/internal/pcapgen"
)

// ---------------------------------------------------------------- compliant

// 3.4 + KIP-1313: "member-id-misaligned | the member ID is not the Java
// string form of the same connection's header instance ID (KIP-1313: SHOULD
// be equal)". A KIP-1313 + KIP-1082 consumer whose member ID is the Java form
// of its instance ID, joining at v1, heartbeating and leaving, is compliant.
func TestMemberIDCompliantAlignedConsumer(t *testing.T) {
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
	bbExpect(t, rep, nil)
	if rep.Totals.Requests != 6 || rep.Totals.Responses != 6 {
		t.Errorf("requests %d responses %d, want 6 and 6", rep.Totals.Requests, rep.Totals.Responses)
	}
	if rep.Totals.ByHeaderVersion["v2"] != 6 {
		t.Errorf("requests_by_header_version %v, want 6 v2", rep.Totals.ByHeaderVersion)
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
func TestMemberIDCompliantShareStreams(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	inst := pcapgen.SeqUUID(0x31)
	m := pcapgen.JavaString(inst)
	cn, s := bbModern(c, pcapgen.ConnOptions{}, inst)
	s.RoundTrip(pcapgen.ShareGroupHeartbeat(1, "share-g", m, 0), pcapgen.ShareGroupHeartbeatResponse(1, 0, pcapgen.Ptr(m), 1))
	s.RoundTrip(pcapgen.ShareGroupHeartbeat(1, "share-g", m, 1), pcapgen.ShareGroupHeartbeatResponse(1, 0, pcapgen.Ptr(m), 1))
	s.RoundTrip(pcapgen.StreamsGroupHeartbeat(0, "streams-g", m, 0), pcapgen.StreamsGroupHeartbeatResponse(0, 0, m, 1))
	s.RoundTrip(pcapgen.StreamsGroupHeartbeat(0, "streams-g", m, -1), pcapgen.StreamsGroupHeartbeatResponse(0, 0, m, -1))
	cn.Close()
	bbExpect(t, bbRun2(t, c), nil)
}

// 3.7: "Without a header instance ID, member-id-misaligned cannot fire."
// and "A zero header instance ID is no claim of KIP-1313 support." A legacy
// client and a client sending a zero tag 0 with a Java v4 member ID: nothing.
func TestMemberIDNoMisalignedWithoutInstanceID(t *testing.T) {
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
	bbExpect(t, bbRun2(t, c), nil)
}

// 3.4 member-id-changed: "a member ID lives as long as the process, across
// leave and rejoin and after fencing". Rejoining with the same ID after a
// fenced heartbeat and after a static leave is compliant; a join retried with
// the same ID after an error is compliant (not ghost-member).
func TestMemberIDCompliantRejoinSameID(t *testing.T) {
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
	bbExpect(t, bbRun2(t, c), nil)
}

// 3.4 member-id-changed is per "same client (connection, or instance ID
// across connections)"; collision needs "different client host:port without
// instance IDs, alive at the same time". Two legacy connections from the same
// host, one after the other, with different member IDs are two clients that
// never overlap: no finding.
func TestMemberIDLegacySequentialDifferentIDs(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	host := netip.MustParseAddr("10.9.0.1")
	cn, s := bbLegacy(c, pcapgen.ConnOptions{Client: netip.AddrPortFrom(host, 50001)})
	cgJoin(s, 1, bbGroup, pcapgen.JavaString(pcapgen.SeqUUID(0x42)))
	cn.Close()
	cn2, s2 := bbLegacy(c, pcapgen.ConnOptions{Client: netip.AddrPortFrom(host, 50002)})
	cgJoin(s2, 1, bbGroup, pcapgen.JavaString(pcapgen.SeqUUID(0x43)))
	cn2.Close()
	bbExpect(t, bbRun2(t, c), nil)
}

// Below the required version (ConsumerGroupHeartbeat v0) an empty join is
// info, and the broker assigning an ID is how v0 works: neither
// broker-generated-member-id nor broker-accepted-invalid (both are "at or
// above the required version"). The broker's ID is not judged (3.7).
func TestMemberIDEmptyJoinV0Info(t *testing.T) {
	assigned := "consumer-1-9f8e"
	var jf int
	rep := bbLegacyConn(t, func(s *pcapgen.Session) {
		jf, _ = s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(0, bbGroup, "", 0), pcapgen.ConsumerGroupHeartbeatResponse(0, errNone, pcapgen.Ptr(assigned), 1))
		cgBeat(s, 0, bbGroup, assigned, 1)
	})
	bbExpect(t, rep, map[string]int{"member-id-empty": 1})
	bbCheck(t, rep, "member-id-empty", "info", "full", jf)
}

// A conforming broker rejecting the empty v1 join with INVALID_REQUEST: only
// member-id-empty (error), no 3.5 finding.
func TestMemberIDEmptyJoinV1Rejected(t *testing.T) {
	rep := bbLegacyConn(t, func(s *pcapgen.Session) {
		s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(1, bbGroup, "", 0), pcapgen.ConsumerGroupHeartbeatResponse(1, errInvalidRequest, nil, 0))
	})
	bbExpect(t, rep, map[string]int{"member-id-empty": 1})
	bbCheck(t, rep, "member-id-empty", "error", "", 0)
}

// "Share and streams groups require it from v0": an empty ShareGroupHeartbeat
// v0 join and an empty StreamsGroupHeartbeat v0 join are errors. The share
// join answered NONE with an assigned ID also gives both 3.5 rules; the
// streams join is rejected with INVALID_REQUEST.
func TestMemberIDEmptyJoinShareStreamsV0(t *testing.T) {
	assigned := pcapgen.JavaString(pcapgen.SeqUUID(0x44))
	var sf, tf int
	rep := bbLegacyConn(t, func(s *pcapgen.Session) {
		sf, _ = s.RoundTrip(pcapgen.ShareGroupHeartbeat(0, "share-g", "", 0), pcapgen.ShareGroupHeartbeatResponse(0, errNone, pcapgen.Ptr(assigned), 1))
		s.RoundTrip(pcapgen.ShareGroupHeartbeat(0, "share-g", assigned, 1), pcapgen.ShareGroupHeartbeatResponse(0, errNone, pcapgen.Ptr(assigned), 1))
		tf, _ = s.RoundTrip(pcapgen.StreamsGroupHeartbeat(0, "streams-g", "", 0), pcapgen.StreamsGroupHeartbeatResponse(0, errInvalidRequest, "", 0))
	})
	bbExpect(t, rep, map[string]int{"member-id-empty": 2, "broker-generated-member-id": 1, "broker-accepted-invalid": 1})
	bbCheck(t, rep, "member-id-empty", "error", "", 0)
	frames := map[int]bool{}
	for _, f := range bbOf(rep, "member-id-empty") {
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
func TestMemberIDEmptyThenAligned(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	inst := pcapgen.SeqUUID(0x33)
	m := pcapgen.JavaString(inst)
	cn, s := bbModern(c, pcapgen.ConnOptions{}, inst)
	s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(1, bbGroup, "", 0), pcapgen.ConsumerGroupHeartbeatResponse(1, errInvalidRequest, nil, 0))
	cgJoin(s, 1, bbGroup, m)
	cgBeat(s, 1, bbGroup, m, 1)
	cn.Close()
	bbExpect(t, bbRun2(t, c), map[string]int{"member-id-empty": 1})
}

// 3.4 leave-without-member-id "error | a leave carries an empty member ID";
// 3.7 "A static leave (epoch -2) is a leave." and "an empty member ID gives
// only ... leave-without-member-id". It is not version-dependent and not in
// broker-accepted-invalid's list (UNKNOWN_MEMBER_ID answer is expected).
func TestMemberIDLeaveWithoutMemberID(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	inst := pcapgen.SeqUUID(0x34)
	cn, s := bbModern(c, pcapgen.ConnOptions{}, inst)
	f1, _ := s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(1, bbGroup, "", -1), pcapgen.ConsumerGroupHeartbeatResponse(1, errUnknownMemberID, nil, 0))
	f2, _ := s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(1, "g2", "", -2), pcapgen.ConsumerGroupHeartbeatResponse(1, errUnknownMemberID, nil, 0))
	f3, _ := s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(0, "g3", "", -1), pcapgen.ConsumerGroupHeartbeatResponse(0, errUnknownMemberID, nil, 0))
	f4, _ := s.RoundTrip(pcapgen.ShareGroupHeartbeat(1, "share-g", "", -1), pcapgen.ShareGroupHeartbeatResponse(1, errUnknownMemberID, nil, 0))
	cn.Close()
	rep := bbRun2(t, c)
	bbExpect(t, rep, map[string]int{"leave-without-member-id": 4})
	bbCheck(t, rep, "leave-without-member-id", "error", "full", 0)
	want := map[int]bool{f1: true, f2: true, f3: true, f4: true}
	for _, f := range bbOf(rep, "leave-without-member-id") {
		if !want[f.Frame] {
			t.Errorf("leave-without-member-id at frame %d, want one of %v", f.Frame, want)
		}
	}
}

// 3.5 broker-accepted-invalid: "was answered without INVALID_REQUEST". An
// empty v1 join answered with another error (COORDINATOR_NOT_AVAILABLE) is
// still answered without INVALID_REQUEST; no member ID was assigned so no
// broker-generated-member-id.
func TestMemberIDEmptyJoinV1OtherError(t *testing.T) {
	rep := bbLegacyConn(t, func(s *pcapgen.Session) {
		s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(1, bbGroup, "", 0), pcapgen.ConsumerGroupHeartbeatResponse(1, errCoordNotAvailable, nil, 0))
	})
	bbExpect(t, rep, map[string]int{"member-id-empty": 1, "broker-accepted-invalid": 1})
}

// ---------------------------------------------------------- member-id-changed

// 3.4 member-id-changed "warn | the same client (connection ...) uses a
// second member ID in the same group: a member ID lives as long as the
// process, across leave and rejoin and after fencing"; 3.7 request rules
// "fire once per offending request". Leave then rejoin with B: one finding
// at the rejoin; heartbeats with B are not re-reported... but a further
// switch to C is another offending request.
func TestMemberIDChangedAcrossLeave(t *testing.T) {
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
	bbExpect(t, rep, map[string]int{"member-id-changed": 1})
	bbCheck(t, rep, "member-id-changed", "warn", "full", jf)
	// Section 5 fields of the finding.
	wantTime := c.Packets()[jf-1].Time.UTC().Format("2006-01-02T15:04:05.000000Z")
	for _, f := range bbOf(rep, "member-id-changed") {
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
	for _, f := range rep.Findings {
		if f.Time != wantTime {
			t.Errorf("finding time %v, want %s (the time of frame %d)", f.Time, wantTime, jf)
		}
	}
}

// "... after fencing": a heartbeat fenced with FENCED_MEMBER_EPOCH, the
// client rejoins with a new ID B. The join with A succeeded, so this is not
// ghost-member (which needs the join with A to get no response or an error).
func TestMemberIDChangedAfterFencing(t *testing.T) {
	a := pcapgen.JavaString(pcapgen.SeqUUID(0x47))
	b := pcapgen.JavaString(pcapgen.SeqUUID(0x48))
	var jf int
	rep := bbLegacyConn(t, func(s *pcapgen.Session) {
		cgJoin(s, 1, bbGroup, a)
		s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(1, bbGroup, a, 4), pcapgen.ConsumerGroupHeartbeatResponse(1, errFencedMemberEpoch, nil, 0))
		jf = cgJoin(s, 1, bbGroup, b)
		cgBeat(s, 1, bbGroup, b, 1)
	})
	bbExpect(t, rep, map[string]int{"member-id-changed": 1})
	bbCheck(t, rep, "member-id-changed", "warn", "", jf)
}

// "once per offending request": A -> B -> C on one connection is two
// offending requests; a different group is a different subject ("in the
// same group"), so using A in group g2 is fine.
func TestMemberIDChangedTwiceAndOtherGroup(t *testing.T) {
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
	bbExpect(t, bbRun2(t, c), map[string]int{"member-id-changed": 2})
}

// "the same client (connection, or instance ID across connections)": the
// same instance ID on a second connection uses a new member ID after leave
// and reconnect: member-id-changed (plus member-id-misaligned, since the new
// ID is not the Java form of the instance ID).
func TestMemberIDChangedAcrossConnectionsByInstance(t *testing.T) {
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
	bbExpect(t, rep, map[string]int{"member-id-changed": 1, "member-id-misaligned": 1})
	bbCheck(t, rep, "member-id-changed", "warn", "", jf)
	bbCheck(t, rep, "member-id-misaligned", "warn", "", jf)
}

// ------------------------------------------------------------- ghost-member

// 3.4 ghost-member "error | a join with member ID A got no response ... and
// the client retried the join with a different ID B"; 3.7 "a retried join
// that is a ghost-member is not also reported as member-id-changed".
func TestMemberIDGhostNoResponse(t *testing.T) {
	a := pcapgen.JavaString(pcapgen.SeqUUID(0x4d))
	b := pcapgen.JavaString(pcapgen.SeqUUID(0x4e))
	var jf int
	rep := bbLegacyConn(t, func(s *pcapgen.Session) {
		s.Request(pcapgen.ConsumerGroupHeartbeat(1, bbGroup, a, 0))
		jf = cgJoin(s, 1, bbGroup, b)
		cgBeat(s, 1, bbGroup, b, 1)
	})
	bbExpect(t, rep, map[string]int{"ghost-member": 1})
	bbCheck(t, rep, "ghost-member", "error", "full", jf)
}

// ghost-member "... got ... an error": the join with A answered
// COORDINATOR_NOT_AVAILABLE, retried with B; on a share group too.
func TestMemberIDGhostAfterError(t *testing.T) {
	a := pcapgen.JavaString(pcapgen.SeqUUID(0x4f))
	b := pcapgen.JavaString(pcapgen.SeqUUID(0x50))
	var jf, sf int
	rep := bbLegacyConn(t, func(s *pcapgen.Session) {
		s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(1, bbGroup, a, 0), pcapgen.ConsumerGroupHeartbeatResponse(1, errCoordNotAvailable, nil, 0))
		jf = cgJoin(s, 1, bbGroup, b)
		s.RoundTrip(pcapgen.ShareGroupHeartbeat(1, "share-g", a, 0), pcapgen.ShareGroupHeartbeatResponse(1, errCoordNotAvailable, nil, 0))
		sf, _ = s.RoundTrip(pcapgen.ShareGroupHeartbeat(1, "share-g", b, 0), pcapgen.ShareGroupHeartbeatResponse(1, errNone, pcapgen.Ptr(b), 1))
	})
	bbExpect(t, rep, map[string]int{"ghost-member": 2})
	got := map[int]bool{}
	for _, f := range bbOf(rep, "ghost-member") {
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
func TestMemberIDCollisionLegacy(t *testing.T) {
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
	bbExpect(t, rep, map[string]int{"member-id-collision": 2})
	bbCheck(t, rep, "member-id-collision", "error", "", 0)
	got := map[int]bool{}
	for _, f := range bbOf(rep, "member-id-collision") {
		got[f.Frame] = true
	}
	if !got[jf] || !got[jf3] {
		t.Errorf("collision frames %v, want %d and %d", got, jf, jf3)
	}
}

// Collision between two instance IDs using the same member ID at once; the
// second claimant is also misaligned (its member ID is the first's instance
// ID). The same member ID in a different group is no collision.
func TestMemberIDCollisionInstances(t *testing.T) {
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
	bbExpect(t, rep, map[string]int{"member-id-collision": 1, "member-id-misaligned": 1})
	bbCheck(t, rep, "member-id-collision", "error", "", jf)
	bbCheck(t, rep, "member-id-misaligned", "warn", "", jf)
}

// Not alive at the same time: the first legacy connection closed before the
// second one opened; the same member ID is no collision (the spec's legacy
// claimants must be "alive at the same time").
func TestMemberIDNoCollisionSequentialLegacy(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	m := pcapgen.JavaString(pcapgen.SeqUUID(0x52))
	cn1, s1 := bbLegacy(c, pcapgen.ConnOptions{})
	cgJoin(s1, 1, bbGroup, m)
	cgLeave(s1, 1, bbGroup, m, -1)
	cn1.Close()
	cn2, s2 := bbLegacy(c, pcapgen.ConnOptions{})
	cgJoin(s2, 1, bbGroup, m)
	cn2.Close()
	bbExpect(t, bbRun2(t, c), nil)
}

// Same instance ID on two concurrent connections with the same (aligned)
// member ID: one client instance, no collision ("two different client
// instances").
func TestMemberIDNoCollisionSameInstance(t *testing.T) {
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
	bbExpect(t, bbRun2(t, c), nil)
}

// 3.4 member-id-encoding "info, warn if it holds '+' or '/' | the member ID
// is 16 bytes in one of the other encodings of section 1, not Java's: padded
// URL-safe base64, standard base64 ..., or hex". Each encoding on its own
// legacy connection (no instance ID, so no alignment rules).
func TestMemberIDEncodings(t *testing.T) {
	t.Parallel()
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
				bbExpect(t, rep, nil)
				return
			}
			bbExpect(t, rep, map[string]int{"member-id-encoding": 1})
			bbCheck(t, rep, "member-id-encoding", tc.severity, "full", jf)
		})
	}
}

// 3.4 member-id-not-v4 "info | the UUID is not version 4, or is reserved".
// A version-1 UUID, ONE_UUID and the zero UUID in Java form, each on its own
// connection (legacy, so nothing else applies).
func TestMemberIDNotV4(t *testing.T) {
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
			bbExpect(t, rep, map[string]int{"member-id-not-v4": 1})
			bbCheck(t, rep, "member-id-not-v4", "info", "full", jf)
		})
	}
}

// An aligned member ID whose instance ID is a version-1 UUID: aligned (no
// misaligned), but member-id-not-v4 (info) once.
func TestMemberIDAlignedButNotV4(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	inst := withVersion(pcapgen.SeqUUID(0x39), 1)
	m := pcapgen.JavaString(inst)
	cn, s := bbModern(c, pcapgen.ConnOptions{}, inst)
	cgJoin(s, 1, bbGroup, m)
	cgBeat(s, 1, bbGroup, m, 1)
	cn.Close()
	bbExpect(t, bbRun2(t, c), map[string]int{"member-id-not-v4": 1})
}

// 3.4 member-id-misaligned "warn | the member ID is not the Java string
// form of the same connection's header instance ID"; once per (connection,
// group, member ID).
func TestMemberIDMisaligned(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	inst := pcapgen.SeqUUID(0x3a)
	m := pcapgen.JavaString(pcapgen.SeqUUID(0x5b))
	cn, s := bbModern(c, pcapgen.ConnOptions{}, inst)
	jf := cgJoin(s, 1, bbGroup, m)
	cgBeat(s, 1, bbGroup, m, 1)
	cgBeat(s, 1, bbGroup, m, 1)
	cn.Close()
	rep := bbRun2(t, c)
	bbExpect(t, rep, map[string]int{"member-id-misaligned": 1})
	bbCheck(t, rep, "member-id-misaligned", "warn", "full", jf)
	for _, f := range bbOf(rep, "member-id-misaligned") {
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
func TestMemberIDAlignmentEncoding(t *testing.T) {
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
			bbExpect(t, rep, map[string]int{"member-id-alignment-encoding": 1, "member-id-encoding": 1})
			bbCheck(t, rep, "member-id-alignment-encoding", "info", "", jf)
			bbCheck(t, rep, "member-id-encoding", tc.encSev, "", jf)
		})
	}
}

// An instance ID that is ONE_UUID with the aligned member ID: instance-id-
// reserved (warn, 3.1) and member-id-not-v4 (info, "or is reserved"), no
// misaligned.
func TestMemberIDReservedInstanceAligned(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	inst := pcapgen.OneUUID()
	m := pcapgen.JavaString(inst)
	cn, s := bbModern(c, pcapgen.ConnOptions{}, inst)
	cgJoin(s, 1, bbGroup, m)
	cn.Close()
	rep := bbRun2(t, c)
	bbExpect(t, rep, map[string]int{"instance-id-reserved": 1, "member-id-not-v4": 1})
	bbCheck(t, rep, "member-id-not-v4", "info", "", 0)
}

// 3.7 "Request rules (... member-id-empty ...) fire once per offending
// request": an empty v1 join with no response, retried empty, is two
// member-id-empty findings; with no response there is no 3.5 finding.
func TestMemberIDEmptyJoinRetriedNoResponse(t *testing.T) {
	rep := bbLegacyConn(t, func(s *pcapgen.Session) {
		s.Request(pcapgen.ConsumerGroupHeartbeat(1, bbGroup, "", 0))
		s.Request(pcapgen.ConsumerGroupHeartbeat(1, bbGroup, "", 0))
	})
	bbExpect(t, rep, map[string]int{"member-id-empty": 2})
	bbCheck(t, rep, "member-id-empty", "error", "", 0)
}

// member-id-changed "uses a second member ID in the same group" also when the
// switch happens in a plain heartbeat (epoch > 0), not a join.
func TestMemberIDChangedInHeartbeat(t *testing.T) {
	a := pcapgen.JavaString(pcapgen.SeqUUID(0x71))
	b := pcapgen.JavaString(pcapgen.SeqUUID(0x72))
	var hf int
	rep := bbLegacyConn(t, func(s *pcapgen.Session) {
		cgJoin(s, 1, bbGroup, a)
		hf = cgBeat(s, 1, bbGroup, b, 2)
	})
	bbExpect(t, rep, map[string]int{"member-id-changed": 1})
	bbCheck(t, rep, "member-id-changed", "warn", "", hf)
}

// 3.7 property rules "once per (connection, group, member ID)": the same
// instance on two connections, both using the same misaligned member ID, is
// two member-id-misaligned findings and no member-id-changed.
func TestMemberIDMisalignedPerConnection(t *testing.T) {
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
	bbExpect(t, rep, map[string]int{"member-id-misaligned": 2})
}

// 3.7 "A request whose tag 0 is malformed neither sets nor breaks the
// connection's instance-ID state." The first v2 request, a join, has a tag 0
// of 8 bytes (instance-id-malformed) and is rejected with INVALID_REQUEST;
// the client retries the join on the same connection with instance ID I and
// member ID Java(I): aligned, not instance-id-late, and no collision (one
// connection is one client; 3.4 collision needs "two different client
// instances").
func TestMemberIDMalformedTagThenAligned(t *testing.T) {
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
	bbExpect(t, rep, map[string]int{"instance-id-malformed": 1})
	bbCheck(t, rep, "instance-id-malformed", "error", "", mf)
}

// member-id-not-uuid for strings that look like an encoding but do not
// decode to 16 bytes.
func TestMemberIDNotUUIDShapes(t *testing.T) {
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
			bbExpect(t, rep, map[string]int{"member-id-not-uuid": 1})
			bbCheck(t, rep, "member-id-not-uuid", "warn", "", 0)
		})
	}
}

// A connection whose first v2 request carried no instance ID joins with
// member ID M, then (instance-id-late, once per offending request) sends
// instance ID I with the same member ID M = Java(I). One connection is one
// client: no member-id-collision with itself, no member-id-changed.
func TestMemberIDLateInstanceNoSelfCollision(t *testing.T) {
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
	bbExpect(t, rep, map[string]int{"instance-id-late": 1})
	bbCheck(t, rep, "instance-id-late", "error", "", lf)
}

// Same as above with the instance ID dropped mid-connection
// (instance-id-dropped, rejected with INVALID_REQUEST): the connection is
// still one client, so its member ID does not collide with itself.
func TestMemberIDDroppedInstanceNoSelfCollision(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	inst := pcapgen.SeqUUID(0x78)
	m := pcapgen.JavaString(inst)
	cn, s := bbModern(c, pcapgen.ConnOptions{}, inst)
	cgJoin(s, 1, bbGroup, m)
	s.Header.InstanceID = nil
	df, _ := s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(1, bbGroup, m, 1), pcapgen.ConsumerGroupHeartbeatResponse(1, errInvalidRequest, nil, 0))
	cn.Close()
	rep := bbRun2(t, c)
	bbExpect(t, rep, map[string]int{"instance-id-dropped": 1})
	bbCheck(t, rep, "instance-id-dropped", "error", "", df)
}

// Collision between a KIP-1313 instance and a legacy host:port claimant,
// both alive: "two different client instances (different instance IDs, or
// different client host:port without instance IDs ...)".
func TestMemberIDCollisionInstanceAndLegacy(t *testing.T) {
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
	bbExpect(t, rep, map[string]int{"member-id-collision": 1})
	bbCheck(t, rep, "member-id-collision", "error", "", jf)
}

// ghost-member across a reconnect of the same instance ID (kwatch's reading:
// "the client" is the connection or the instance ID, as for
// member-id-changed): the join with A got no response (connection reset),
// the same instance rejoins with B on a new connection. ghost-member, not
// member-id-changed ("a retried join that is a ghost-member is not also
// reported as member-id-changed"); B is also misaligned.
func TestMemberIDGhostAcrossReconnect(t *testing.T) {
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
	bbExpect(t, rep, map[string]int{"ghost-member": 1, "member-id-misaligned": 1})
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
func TestMemberIDCollisionLegacySameHostHeartbeat(t *testing.T) {
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
			bbExpect(t, rep, want)
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
func TestMemberIDFirstIsFirstV2(t *testing.T) {
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
	bbExpect(t, rep, nil)
	if rep.Totals.ByHeaderVersion["v1"] != 1 || rep.Totals.ByHeaderVersion["v2"] != 3 {
		t.Errorf("requests_by_header_version %v, want v1:1 v2:3", rep.Totals.ByHeaderVersion)
	}
	if n := rep.Totals.Coverage["sasl-raw-tokens"]; n != 0 {
		t.Errorf("sasl-raw-tokens %d after a v1 handshake, want 0", n)
	}
}

// ---------------------------------------------- member rules on every API

// SPEC 3.4: the member rules "apply to ConsumerGroupHeartbeat (68),
// ShareGroupHeartbeat (76) and StreamsGroupHeartbeat (88)"; "Share and
// streams groups require it from v0". The same scenario gives the same
// findings, with the severities of the 3.4 table, on each API.
func TestMemberIDRulesOnAllHeartbeatAPIs(t *testing.T) {
	t.Parallel()
	a, b := bbJ(pcapgen.SeqUUID(0x01)), bbJ(pcapgen.SeqUUID(0x41))
	scenarios := []struct {
		name string
		play func(c *pcapgen.Capture, h bb7HB)
		want map[string]int
		sev  string
	}{
		{"aligned-compliant", func(c *pcapgen.Capture, h bb7HB) {
			cn, s := bb7Modern(c, pcapgen.ConnOptions{}, "orders-app", bb7X)
			h.join(s, "g", bbJ(bb7X))
			h.beat(s, "g", bbJ(bb7X), 1)
			h.leave(s, "g", bbJ(bb7X))
			cn.Close()
		}, nil, ""},
		{"member-id-changed", func(c *pcapgen.Capture, h bb7HB) {
			cn, s := bb7Legacy(c, pcapgen.ConnOptions{}, "legacy-app")
			h.join(s, "g", a)
			h.leave(s, "g", a)
			h.join(s, "g", b)
			h.beat(s, "g", b, 1)
			cn.Close()
		}, map[string]int{"member-id-changed": 1}, "warn"},
		{"member-id-not-uuid", func(c *pcapgen.Capture, h bb7HB) {
			cn, s := bb7Legacy(c, pcapgen.ConnOptions{}, "legacy-app")
			h.join(s, "g", "consumer-1-1732894512")
			h.beat(s, "g", "consumer-1-1732894512", 1)
			cn.Close()
		}, map[string]int{"member-id-not-uuid": 1}, "warn"},
		{"member-id-misaligned", func(c *pcapgen.Capture, h bb7HB) {
			cn, s := bb7Modern(c, pcapgen.ConnOptions{}, "orders-app", bb7X)
			h.join(s, "g", bbJ(bb7Y))
			h.beat(s, "g", bbJ(bb7Y), 1)
			cn.Close()
		}, map[string]int{"member-id-misaligned": 1}, "warn"},
		{"ghost-member", func(c *pcapgen.Capture, h bb7HB) {
			cn, s := bb7Legacy(c, pcapgen.ConnOptions{}, "legacy-app")
			h.rt(s, "g", a, 0, errCoordNotAvailable, nil, 0)
			h.join(s, "g", b)
			cn.Close()
		}, map[string]int{"ghost-member": 1}, "error"},
		{"leave-without-member-id", func(c *pcapgen.Capture, h bb7HB) {
			cn, s := bb7Legacy(c, pcapgen.ConnOptions{}, "legacy-app")
			h.rt(s, "g", "", -1, errUnknownMemberID, nil, 0)
			cn.Close()
		}, map[string]int{"leave-without-member-id": 1}, "error"},
		{"member-id-empty-rejected", func(c *pcapgen.Capture, h bb7HB) {
			cn, s := bb7Legacy(c, pcapgen.ConnOptions{}, "legacy-app")
			h.rt(s, "g", "", 0, errInvalidRequest, nil, 0)
			cn.Close()
		}, map[string]int{"member-id-empty": 1}, "error"},
	}
	for _, h := range []bb7HB{bb7CG, bb7SG, bb7ST} {
		for _, sc := range scenarios {
			t.Run(h.name+"/"+sc.name, func(t *testing.T) {
				c := pcapgen.New(pcapgen.Options{})
				sc.play(c, h)
				rep := bbRunF(t, c)
				bbExpect(t, rep, sc.want)
				for r := range sc.want {
					bb7Sev(t, rep, r, sc.sev, "full")
					for _, f := range bbOf(rep, r) {
						if f.APIKey != int(h.key) || f.API != h.name {
							t.Errorf("%s: api %q/%d, want %s/%d", r, f.API, f.APIKey, h.name, h.key)
						}
					}
				}
			})
		}
	}
}

// README "where SPEC.md is silent" 6: "An empty member ID on a heartbeat that
// is neither a join nor a leave gives no finding"; SPEC 3.7 "an empty member
// ID gives only member-id-empty or leave-without-member-id (and 3.5 rules),
// no other member rule" (so no member-id-changed either). Answered
// UNKNOWN_MEMBER_ID (as a broker does) or NONE: no rule fired, so no 3.5
// finding.
func TestMemberIDEmptyOnPlainHeartbeat(t *testing.T) {
	t.Parallel()
	m := bbJ(pcapgen.SeqUUID(0x02))
	for _, h := range []bb7HB{bb7CG, bb7CG.at(0), bb7SG, bb7ST} {
		for _, code := range []int16{errUnknownMemberID, errNone} {
			t.Run(fmt.Sprintf("%s-v%d/answer-%d", h.name, h.ver, code), func(t *testing.T) {
				c := pcapgen.New(pcapgen.Options{})
				cn, s := bb7Legacy(c, pcapgen.ConnOptions{}, "legacy-app")
				h.join(s, "g", m)
				h.beat(s, "g", m, 1)
				h.rt(s, "g", "", 5, code, nil, 5)
				h.beat(s, "g", m, 5)
				h.leave(s, "g", m)
				cn.Close()
				bbExpect(t, bbRunF(t, c), nil)
			})
		}
	}
}

// ------------------------------------------------------------- ghost-member

// SPEC 3.4 ghost-member: "a join with member ID A got no response or an
// error, and the client retried the join with a different ID B"; 3.7 "a
// retried join that is a ghost-member is not also reported as
// member-id-changed", request rules "once per offending request", "an empty
// member ID gives only member-id-empty ...". README 6: "A successful answer
// to any heartbeat of A proves A's join ..., and a leave with A ends it: a
// join with B after either is a rejoin, member-id-changed."
func TestMemberIDGhostMemberBoundaries(t *testing.T) {
	a := bbJ(pcapgen.SeqUUID(0x03))
	b := bbJ(pcapgen.SeqUUID(0x13))
	cc := bbJ(pcapgen.SeqUUID(0x23))
	cases := []struct {
		name string
		play func(s *pcapgen.Session) []int // frames of the expected findings
		want map[string]int
	}{
		{"join-proved-by-heartbeat-answer", func(s *pcapgen.Session) []int {
			bb7CG.send(s, "g", a, 0)
			bb7CG.beat(s, "g", a, 1)
			return []int{bb7CG.join(s, "g", b)}
		}, map[string]int{"member-id-changed": 1}},
		{"join-ended-by-leave", func(s *pcapgen.Session) []int {
			bb7CG.send(s, "g", a, 0)
			bb7CG.leave(s, "g", a)
			return []int{bb7CG.join(s, "g", b)}
		}, map[string]int{"member-id-changed": 1}},
		{"chain-of-unanswered-joins", func(s *pcapgen.Session) []int {
			bb7CG.send(s, "g", a, 0)
			fb := bb7CG.send(s, "g", b, 0)
			return []int{fb, bb7CG.join(s, "g", cc)}
		}, map[string]int{"ghost-member": 2}},
		{"retry-with-same-id", func(s *pcapgen.Session) []int {
			bb7CG.send(s, "g", a, 0)
			bb7CG.join(s, "g", a)
			return nil
		}, nil},
		{"retry-with-empty-id", func(s *pcapgen.Session) []int {
			bb7CG.send(s, "g", a, 0)
			return []int{bb7CG.rt(s, "g", "", 0, errInvalidRequest, nil, 0)}
		}, map[string]int{"member-id-empty": 1}},
		{"streams-join-error", func(s *pcapgen.Session) []int {
			bb7ST.rt(s, "g", a, 0, errCoordNotAvailable, nil, 0)
			return []int{bb7ST.join(s, "g", b)}
		}, map[string]int{"ghost-member": 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			cn, s := bb7Legacy(c, pcapgen.ConnOptions{}, "legacy-app")
			frames := tc.play(s)
			cn.Close()
			rep := bbRunF(t, c)
			bbExpect(t, rep, tc.want)
			var got []int
			for _, f := range rep.Findings {
				got = append(got, f.Frame)
			}
			sort.Ints(got)
			bb7EqInts(t, "finding frames", got, frames)
		})
	}
}

// SPEC 3.7: "an empty member ID gives only member-id-empty or
// leave-without-member-id (and 3.5 rules), no other member rule". After the
// client used A in the group, an empty join or an empty leave is no
// member-id-changed; a KIP-1313 client's empty join is no
// member-id-misaligned.
func TestMemberIDEmptyAfterAnID(t *testing.T) {
	a := bbJ(pcapgen.SeqUUID(0x04))
	t.Run("empty-join-after-leave", func(t *testing.T) {
		c := pcapgen.New(pcapgen.Options{})
		cn, s := bb7Legacy(c, pcapgen.ConnOptions{}, "legacy-app")
		bb7CG.join(s, "g", a)
		bb7CG.leave(s, "g", a)
		bb7CG.rt(s, "g", "", 0, errInvalidRequest, nil, 0)
		cn.Close()
		bbExpect(t, bbRunF(t, c), map[string]int{"member-id-empty": 1})
	})
	t.Run("empty-leave-after-join", func(t *testing.T) {
		c := pcapgen.New(pcapgen.Options{})
		cn, s := bb7Legacy(c, pcapgen.ConnOptions{}, "legacy-app")
		bb7CG.join(s, "g", a)
		bb7CG.beat(s, "g", a, 1)
		bb7CG.rt(s, "g", "", -1, errUnknownMemberID, nil, 0)
		cn.Close()
		bbExpect(t, bbRunF(t, c), map[string]int{"leave-without-member-id": 1})
	})
	t.Run("kip1313-empty-join", func(t *testing.T) {
		c := pcapgen.New(pcapgen.Options{})
		cn, s := bb7Modern(c, pcapgen.ConnOptions{}, "orders-app", bb7X)
		bb7SG.rt(s, "g", "", 0, errInvalidRequest, nil, 0)
		cn.Close()
		bbExpect(t, bbRunF(t, c), map[string]int{"member-id-empty": 1})
	})
}

// ------------------------------------------------------ member-id-collision

// SPEC 3.4 member-id-collision: "two different client instances (different
// instance IDs, ...) alive at the same time use the same member ID in the
// same group"; 3.7 "once per (group, member ID, second claimant)". README 7:
// "a claim is alive while the claimant's latest connection is open"; "A
// claimant whose connections had all closed and that comes back while
// another claimant holds the ID collides too (once)". The member ID is
// Java(I1), so I2 is also member-id-misaligned once per group.
func TestMemberIDCollisionClaims(t *testing.T) {
	i1, i2 := pcapgen.SeqUUID(0x0a), pcapgen.SeqUUID(0x1a)
	m := bbJ(i1)
	h1 := func(p uint16) pcapgen.ConnOptions { return pcapgen.ConnOptions{Client: bb7Host("10.7.2.1", p)} }
	h2 := func(p uint16) pcapgen.ConnOptions { return pcapgen.ConnOptions{Client: bb7Host("10.7.2.2", p)} }
	t.Run("two-groups-two-findings", func(t *testing.T) {
		c := pcapgen.New(pcapgen.Options{})
		cn1, s1 := bb7Modern(c, h1(41001), "app-1", i1)
		cn2, s2 := bb7Modern(c, h2(41001), "app-2", i2)
		for _, g := range []string{"g1", "g2"} {
			bb7CG.join(s1, g, m)
			bb7CG.join(s2, g, m)
			bb7CG.beat(s1, g, m, 1)
			bb7CG.beat(s2, g, m, 1)
		}
		cn1.Close()
		cn2.Close()
		bbExpect(t, bbRunF(t, c), map[string]int{"member-id-collision": 2, "member-id-misaligned": 2})
	})
	t.Run("not-alive-at-the-same-time", func(t *testing.T) {
		c := pcapgen.New(pcapgen.Options{})
		cn1, s1 := bb7Modern(c, h1(41001), "app-1", i1)
		bb7CG.join(s1, "g", m)
		bb7CG.leave(s1, "g", m)
		cn1.Close()
		cn2, s2 := bb7Modern(c, h2(41001), "app-2", i2)
		bb7CG.join(s2, "g", m)
		cn2.Close()
		bbExpect(t, bbRunF(t, c), map[string]int{"member-id-misaligned": 1})
	})
	t.Run("claimant-comes-back", func(t *testing.T) {
		c := pcapgen.New(pcapgen.Options{})
		cn1, s1 := bb7Modern(c, h1(41001), "app-1", i1)
		bb7CG.join(s1, "g", m)
		cn1.Close()
		cn2, s2 := bb7Modern(c, h2(41001), "app-2", i2)
		bb7CG.join(s2, "g", m) // i1 is gone: no collision yet
		cn3, s3 := bb7Modern(c, h1(41002), "app-1", i1)
		back := bb7CG.join(s3, "g", m)
		bb7CG.beat(s2, "g", m, 1)
		bb7CG.beat(s3, "g", m, 1)
		bb7CG.beat(s3, "g", m, 1)
		cn2.Close()
		cn3.Close()
		rep := bbRunF(t, c)
		bbExpect(t, rep, map[string]int{"member-id-collision": 1, "member-id-misaligned": 1})
		bb7EqInts(t, "member-id-collision frame", bb7Frames(rep, "member-id-collision"), []int{back})
	})
}

// README 6: ghost-member is "a join with B while the client's previous join
// with A != B has no response yet (or never gets one) or got an error (an
// answer whose body kwatch cannot decode is neither: no ghost is claimed on
// it)". Two joins pipelined in one write (A, then B before A's answer), both
// answered afterwards: ghost-member at B. A join with A whose answer is
// undecodable (a truncated body), then a join with B: no ghost-member; the
// client still uses a second member ID (SPEC 3.4 member-id-changed).
func TestMemberIDGhostPipelinedAndUndecodable(t *testing.T) {
	a := bbJ(pcapgen.SeqUUID(0x0d))
	b := bbJ(pcapgen.SeqUUID(0x1d))
	t.Run("pipelined", func(t *testing.T) {
		c := pcapgen.New(pcapgen.Options{})
		cn, s := bb7Legacy(c, pcapgen.ConnOptions{}, "legacy-app")
		corrs, frames := s.Pipeline(bb7CG.req("g", a, 0), bb7CG.req("g", b, 0))
		s.Respond(corrs[0], bb7CG.resp(errNone, &a, 1))
		s.Respond(corrs[1], bb7CG.resp(errNone, &b, 1))
		cn.Close()
		rep := bbRunF(t, c)
		bbExpect(t, rep, map[string]int{"ghost-member": 1})
		bb7EqInts(t, "ghost-member frame", bb7Frames(rep, "ghost-member"), []int{frames[1]})
	})
	t.Run("undecodable-answer", func(t *testing.T) {
		c := pcapgen.New(pcapgen.Options{})
		cn, s := bb7Legacy(c, pcapgen.ConnOptions{}, "legacy-app")
		corr, _ := s.Request(bb7CG.req("g", a, 0))
		cn.Reply(pcapgen.EncodeResponseRaw(corr, 1, []byte{0, 0}))
		jf := bb7CG.join(s, "g", b)
		cn.Close()
		rep := bbRunF(t, c)
		bbExpect(t, rep, map[string]int{"member-id-changed": 1})
		bb7EqInts(t, "member-id-changed frame", bb7Frames(rep, "member-id-changed"), []int{jf})
	})
}

// README 7: member-id-collision claimants are "instance IDs, or client
// host:port without one"; "Broker-assigned IDs count too". Two legacy
// consumers on two hosts, both below the required version (v0: empty joins
// are member-id-empty, info), are given the same member ID by the broker
// and heartbeat with it at the same time: one collision.
func TestMemberIDBrokerAssignedCollision(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	dup := "broker-assigned-dup"
	cn1, s1 := bb7Legacy(c, pcapgen.ConnOptions{Client: bb7Host("10.7.7.1", 41001)}, "app-1")
	cn2, s2 := bb7Legacy(c, pcapgen.ConnOptions{Client: bb7Host("10.7.7.2", 41001)}, "app-2")
	v0 := bb7CG.at(0)
	v0.rt(s1, "g", "", 0, errNone, &dup, 1)
	v0.rt(s2, "g", "", 0, errNone, &dup, 1)
	v0.beat(s1, "g", dup, 1)
	v0.beat(s2, "g", dup, 1)
	cn1.Close()
	cn2.Close()
	rep := bbRunF(t, c)
	bbExpect(t, rep, map[string]int{"member-id-empty": 2, "member-id-collision": 1})
	bb7Sev(t, rep, "member-id-empty", "info", "")
	bb7Sev(t, rep, "member-id-collision", "error", "")
}

// SPEC 3.4 member-id-changed: "the same client (connection, or instance ID
// across connections) uses a second member ID in the same group";
// member-id-collision needs "two different client instances". One instance
// on two open connections (same host) with two member IDs in one group is a
// change, not a collision; the second ID is also misaligned. (Whether the
// first connection's next heartbeat with the first ID is a second
// member-id-changed -- "A, B, A" -- SPEC leaves open: not asserted.)
func TestMemberIDSameInstanceTwoMemberIDsAtOnce(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn1, s1 := bb7Modern(c, pcapgen.ConnOptions{Client: bb7Host("10.7.8.1", 41001)}, "app", bb7X)
	cn2, s2 := bb7Modern(c, pcapgen.ConnOptions{Client: bb7Host("10.7.8.1", 41002), Broker: bb7Host("10.0.0.2", 9092)}, "app", bb7X)
	bb7CG.join(s1, "g", bbJ(bb7X))
	jf := bb7CG.join(s2, "g", bbJ(bb7Y))
	bb7CG.beat(s1, "g", bbJ(bb7X), 1)
	cn1.Close()
	cn2.Close()
	rep := bbRunF(t, c)
	got := bbCounts(rep)
	if got["member-id-collision"] != 0 || got["member-id-misaligned"] != 1 || got["member-id-changed"] < 1 || len(got) != 2 {
		t.Errorf("want member-id-changed (>= 1), member-id-misaligned 1, no collision\n%s", rep.summary())
	}
	if fs := bb7Frames(rep, "member-id-changed"); len(fs) == 0 || fs[0] != jf {
		t.Errorf("member-id-changed frames %v, want the first at %d", fs, jf)
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
func TestMemberIDCollisionClaimLivesOnLatestConnection(t *testing.T) {
	for _, gone := range []bool{false, true} {
		t.Run(fmt.Sprintf("gone=%v", gone), func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			x, y := bb8bX, bb8bY
			m := bbJ(x)
			px := &bb8bProc{c: c, host: netip.MustParseAddr("10.50.0.5"), port: 43000, clientID: "app-x", inst: &x, sw: "apache-kafka-java", swv: "4.2.0"}
			py := &bb8bProc{c: c, host: netip.MustParseAddr("10.50.0.6"), port: 43000, clientID: "app-y", inst: &y, sw: "apache-kafka-java", swv: "4.2.0"}
			co, sc, _ := px.dial(bb8bB3, 4)
			bbCG(sc, bb8bGroup, m, 0, errNone, 1)
			fc, sf, _ := px.dial(bb8bB2, 4)
			bb8bFetch(sf)
			bbCG(sc, bb8bGroup, m, 1, errNone, 2)
			co.Close()
			bb8bFetch(sf)
			if gone {
				fc.Close()
			}
			cy, sy, _ := py.dial(bb8bB3, 4)
			jf := bbCG(sy, bb8bGroup, m, 0, errNone, 3)
			bbCG(sy, bb8bGroup, m, 3, errNone, 3)
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
			bbExpect(t, rep, want)
			for r := range want {
				f := bbOne(t, rep, r)
				bb8bCheck(t, f, bb8bWant{frame: jf, client: "10.50.0.6:43000", broker: bb8bB3.String(), confidence: "full"})
			}
			if !gone {
				bb8bCheck(t, bbOne(t, rep, "member-id-collision"), bb8bWant{severity: "error", kip: "KIP-1082"})
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
func TestMemberIDCollisionLegacyLeftButOpen(t *testing.T) {
	for _, closed := range []bool{false, true} {
		t.Run(fmt.Sprintf("closed=%v", closed), func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			m := bbJ(pcapgen.SeqUUID(0xa7))
			pa := &bb8bProc{c: c, host: netip.MustParseAddr("10.60.0.5"), port: 44000, clientID: "rdk", sw: "librdkafka", swv: "2.3.0"}
			pb := &bb8bProc{c: c, host: netip.MustParseAddr("10.60.0.6"), port: 44000, clientID: "rdk", sw: "librdkafka", swv: "2.3.0"}
			ca, sa, _ := pa.dial(bb8bB3, 3)
			bbCG(sa, bb8bGroup, m, 0, errNone, 1)
			bbCG(sa, bb8bGroup, m, 1, errNone, 1)
			bbCG(sa, bb8bGroup, m, -1, errNone, -1)
			if closed {
				ca.Close()
			}
			cb, sb, _ := pb.dial(bb8bB3, 3)
			jf := bbCG(sb, bb8bGroup, m, 0, errNone, 2)
			bbCG(sb, bb8bGroup, m, 2, errNone, 2)
			if !closed {
				bbMeta(sa)
				ca.Close()
			}
			cb.Close()
			rep, _ := bb8bRun(t, c)
			if closed {
				bbExpect(t, rep, nil)
				return
			}
			bbExpect(t, rep, map[string]int{"member-id-collision": 1})
			bb8bCheck(t, bbOne(t, rep, "member-id-collision"), bb8bWant{severity: "error", confidence: "full", frame: jf,
				client: "10.60.0.6:44000", broker: bb8bB3.String(), api: "ConsumerGroupHeartbeat"})
		})
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
func TestMemberIDCollisionClaimantComesBack(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	x, y := bb8bX, bb8bY
	m := bbJ(x)
	px := &bb8bProc{c: c, host: netip.MustParseAddr("10.51.0.5"), port: 43000, clientID: "app-x", inst: &x, sw: "apache-kafka-java", swv: "4.2.0"}
	py := &bb8bProc{c: c, host: netip.MustParseAddr("10.51.0.6"), port: 43000, clientID: "app-y", inst: &y, sw: "apache-kafka-java", swv: "4.2.0"}
	c1, s1, _ := px.dial(bb8bB3, 4)
	bbCG(s1, bb8bGroup, m, 0, errNone, 1)
	bbCG(s1, bb8bGroup, m, 1, errNone, 2)
	c1.Close()
	cy, sy, _ := py.dial(bb8bB3, 4)
	yj := bbCG(sy, bb8bGroup, m, 0, errNone, 3)
	c2, s2, _ := px.dial(bb8bB3, 4)
	back := bbCG(s2, bb8bGroup, m, 2, errNone, 3)
	bbCG(sy, bb8bGroup, m, 3, errNone, 3)
	bbCG(s2, bb8bGroup, m, 3, errNone, 3)
	c2.Close()
	cy.Close()
	rep, _ := bb8bRun(t, c)
	bbExpect(t, rep, map[string]int{"member-id-misaligned": 1, "member-id-collision": 1})
	bb8bCheck(t, bbOne(t, rep, "member-id-misaligned"), bb8bWant{frame: yj, client: "10.51.0.6:43000"})
	f := bbOne(t, rep, "member-id-collision")
	bb8bCheck(t, f, bb8bWant{severity: "error", confidence: "full", frame: back, client: "10.51.0.5:43001", broker: bb8bB3.String()})
	if f.InstanceID != bbJ(x) {
		t.Errorf("collision instance_id %q, want the returning claimant %s", f.InstanceID, bbJ(x))
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
func TestMemberIDCollisionSixPodsSameSecond(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	m := bbJ(pcapgen.SeqUUID(0xb3))
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
		f := bbCG(s, bb8bGroup, m, 0, errNone, int32(i+1))
		if i > 0 {
			joins = append(joins, f)
		}
	}
	for round := 0; round < 2; round++ {
		for i, p := range pods {
			bbCG(p.s, bb8bGroup, m, int32(i+1), errNone, int32(i+1))
		}
	}
	for _, p := range pods {
		p.cn.Close()
	}
	rep, _ := bb8bRun(t, c)
	bbExpect(t, rep, map[string]int{"member-id-collision": 5})
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
