package audit

import (
	"testing"

	"github.com/kwatch/kwatch/decode"
)

// Cases an independent reading of SPEC.md found: each states what the spec
// (or, where it is silent, an operator) requires.

// SPEC.md 3.2: "`client-id-changed` | warn | a later request carries a
// non-null client ID different from the first request's". An empty string
// is not null (the spec says "null or empty" where it means both, e.g. for
// client-id-missing-first), and "" differs from "orders".
func TestSpecClientIDChangedToEmpty(t *testing.T) {
	s := newSC(Options{})
	s.req(connA, kAPIVer, 4, cid("orders"))
	s.req(connA, kMetadata, 12, cid("")) // non-null, empty
	s.finish()
	mustEqualCounts(t, counts(s.got), map[string]int{"client-id-changed": 1})
}

// SPEC.md 3.5: "`broker-telemetry-id-echo` | info | GetTelemetrySubscriptions
// with non-zero body ID answered with a non-zero ID (KIP-714 says 0)".
// Row 5 of 3.3 (H, R != H) has a non-zero body ID; a pre-KIP-1313 broker that
// accepts it and echoes R is both broker-accepted-invalid and an echo.
func TestSpecTelemetryEchoRow5(t *testing.T) {
	s := newSC(Options{})
	c := s.req(connA, kGTS, 0, inst(idA), tel(idB))
	s.resp(connA, kGTS, 0, c, errCode(0), tel(idB))
	s.finish()
	mustEqualCounts(t, counts(s.got), map[string]int{
		"telemetry-id-mismatch": 1, "broker-accepted-invalid": 1, "broker-telemetry-id-echo": 1,
	})
}

// SPEC.md 3.4: "`member-id-collision` | error | two different client
// instances (different instance IDs, ...alive at the same time) use the same
// member ID in the same group". Instance A's coordinator connection closes,
// B starts using A's member ID (no collision yet: A's connection is closed),
// then A reconnects and heartbeats with the same member ID while B is alive:
// two instances alive at the same time with one member ID, yet no finding.
func TestSpecCollisionWhenFirstClaimantReturns(t *testing.T) {
	m := JavaString(v4A)
	s := newSC(Options{})
	s.req(connA, kCGHB, 1, inst(idA), hb("g", m, 0))
	s.end(connA)
	s.req(connB, kCGHB, 1, inst(idB), hb("g", m, 0))  // A closed: not yet a collision
	s.req(connA2, kCGHB, 1, inst(idA), hb("g", m, 7)) // A back, B alive
	s.finish()
	if n := counts(s.got)["member-id-collision"]; n != 1 {
		t.Errorf("member-id-collision: got %d, want 1 (all: %v)", n, counts(s.got))
	}
}

// SPEC.md silent case (operator view). 3.4 ghost-member: "a join with member
// ID A got no response or an error, and the client retried the join with a
// different ID B"; member-id-changed: "...a member ID lives as long as the
// process, across leave and rejoin and after fencing". Here the join's
// response was lost in a stream gap, but the broker then accepted heartbeats
// of member A (epoch 1 answered NONE), so A's join succeeded; after fencing
// the client rejoins with B. That is member-id-changed (warn), not a ghost
// member (error): the join must not stay "pending" for ever.
func TestSpecGhostAfterJoinProvenByHeartbeat(t *testing.T) {
	jA, jB := JavaString(v4A), JavaString(v4B)
	s := newSC(Options{})
	s.req(connA, kCGHB, 1, hb("g", jA, 0)) // join; its response is lost
	s.cover(connA, decode.StreamGap)
	c := s.req(connA, kCGHB, 1, hb("g", jA, 1))
	s.resp(connA, kCGHB, 1, c, errCode(0), respMember(jA)) // broker knows A
	c = s.req(connA, kCGHB, 1, hb("g", jA, 1))
	s.resp(connA, kCGHB, 1, c, errCode(110)) // FENCED_MEMBER_EPOCH
	s.req(connA, kCGHB, 1, hb("g", jB, 0))   // rejoin with a new ID
	s.finish()
	mustEqualCounts(t, counts(s.got), map[string]int{"member-id-changed": 1})
}

// A join whose answer was lost, then a leave with the same member ID: the
// next join with another ID is a rejoin (member-id-changed), not a retry of
// the lost join (ghost-member).
func TestSpecLeaveEndsPendingJoin(t *testing.T) {
	jA, jB := JavaString(v4A), JavaString(v4B)
	s := newSC(Options{})
	s.req(connA, kCGHB, 1, hb("g", jA, 0)) // no response
	s.req(connA, kCGHB, 1, hb("g", jA, -1))
	s.req(connA, kCGHB, 1, hb("g", jB, 0))
	s.finish()
	mustEqualCounts(t, counts(s.got), map[string]int{"member-id-changed": 1})
}

// Clients without instance IDs are claimants by host:port (SPEC.md 3.4). One
// process that moves its heartbeats to another connection (its coordinator
// moved) while the old connection stays open is no collision: its first
// request there is a heartbeat past the join, or a join retried after the
// old connection's join failed; moving back is one process too. A second
// process on the same host joins with the member ID while the first holds
// it, or keeps heartbeating beside the first: a collision.
func TestSpecLegacyCollisionSameHost(t *testing.T) {
	m := JavaString(v4A)
	tests := []struct {
		name       string
		joinErr    int16 // the answer to connA's join
		epoch      int32 // connA2's first request for m
		moveBack   bool  // connA takes m back, then connA2 stays silent
		sideBySide bool  // both go on heartbeating
		want       map[string]int
	}{
		{name: "moved heartbeats", epoch: 5, want: map[string]int{}},
		{name: "moved and moved back", epoch: 5, moveBack: true, want: map[string]int{}},
		{name: "join retried after NOT_COORDINATOR", joinErr: 16, epoch: 0, want: map[string]int{}},
		{name: "second process joins", epoch: 0, want: map[string]int{"member-id-collision": 1}},
		{name: "both go on heartbeating", epoch: 5, sideBySide: true, want: map[string]int{"member-id-collision": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSC(Options{})
			c := s.req(connA, kCGHB, 1, hb("g", m, 0))
			if tt.joinErr != 0 {
				s.resp(connA, kCGHB, 1, c, errCode(tt.joinErr))
			} else {
				s.resp(connA, kCGHB, 1, c, errCode(0), respMember(m))
				s.req(connA, kCGHB, 1, hb("g", m, 4))
			}
			s.req(connA2, kCGHB, 1, hb("g", m, tt.epoch)) // same host, connA still open
			s.req(connA2, kCGHB, 1, hb("g", m, tt.epoch+1))
			if tt.moveBack {
				s.req(connA, kCGHB, 1, hb("g", m, 7))
				s.req(connA, kCGHB, 1, hb("g", m, 8))
			}
			if tt.sideBySide {
				for range 3 {
					s.req(connA, kCGHB, 1, hb("g", m, 6))
					s.req(connA2, kCGHB, 1, hb("g", m, tt.epoch+2))
				}
			}
			s.finish()
			got := counts(s.got)
			delete(got, "member-id-changed") // not the subject here
			mustEqualCounts(t, got, tt.want)
		})
	}
}

// A join answered with a body kwatch cannot decode (a schema newer than
// its copy) got an answer: a join with another ID after it is a rejoin
// (member-id-changed), not a retry of an unanswered join (ghost-member).
func TestSpecUndecodedJoinAnswerIsNoGhost(t *testing.T) {
	jA, jB := JavaString(v4A), JavaString(v4B)
	for _, decoded := range []bool{false, true} {
		s := newSC(Options{})
		c := s.req(connA, kCGHB, 1, hb("g", jA, 0))
		if decoded {
			s.resp(connA, kCGHB, 1, c, errCode(25)) // UNKNOWN_MEMBER_ID: an error
		} else {
			s.resp(connA, kCGHB, 1, c, func(e *decode.Event) { e.Body.BodyError = true })
		}
		s.req(connA, kCGHB, 1, hb("g", jB, 0))
		s.finish()
		want := map[string]int{"member-id-changed": 1}
		if decoded {
			want = map[string]int{"ghost-member": 1}
		}
		mustEqualCounts(t, counts(s.got), want)
	}
}

// One connection is one client: a member ID it used before its instance ID
// appeared (instance-id-late) is not claimed by a second instance.
func TestSpecNoSelfCollision(t *testing.T) {
	m := JavaString(v4A)
	s := newSC(Options{})
	s.req(connA, kCGHB, 1, hb("g", m, 0))
	s.req(connA, kCGHB, 1, inst(idA), hb("g", m, 1))
	s.finish()
	got := counts(s.got)
	if got["member-id-collision"] != 0 || got["instance-id-late"] != 1 {
		t.Errorf("findings %v, want instance-id-late and no member-id-collision", got)
	}
}
