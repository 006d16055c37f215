package audit

import (
	"net/netip"
	"testing"

	"github.com/kwatch/kwatch/decode"
	"github.com/kwatch/kwatch/flow"
)

// TestSpecSelfCollisionViaEarlierEntry: instance A heartbeats on connA,
// which closes; on connA2 its first heartbeat's tag 0 is malformed (claimed
// by host:port), the next carries A's ID. The who-match on connA's entry is
// found before connA2's own entry, so connA2 collides with itself.
func TestSpecSelfCollisionViaEarlierEntry(t *testing.T) {
	m := JavaString(v4A)
	s := newSC(Options{})
	s.req(connA, kCGHB, 1, inst(idA), hb("g", m, 0))
	s.end(connA)
	s.req(connA2, kCGHB, 1, inst(idA), tagProblem(decode.TagBadSize), hb("g", m, 5))
	s.req(connA2, kCGHB, 1, inst(idA), hb("g", m, 5))
	s.finish()
	if n := counts(s.got)["member-id-collision"]; n != 0 {
		f := findRule(s.got, "member-id-collision")
		t.Errorf("member-id-collision x%d: %s", n, f.Message)
	}
}

// TestSpecSameHostCollisionMissed: two legacy processes on one host use
// one member ID (librdkafka 5263); the capture starts after both joined, so
// the second is first seen at epoch > 0. SPEC 3.4: different host:port
// without instance IDs, alive at the same time: a collision.
func TestSpecSameHostCollisionMissed(t *testing.T) {
	m := JavaString(v4A)
	p1 := flow.ConnID{Client: netip.MustParseAddrPort("10.0.0.5:40001"), Broker: netip.MustParseAddrPort("10.0.0.9:9092"), StartFrame: 1}
	p2 := flow.ConnID{Client: netip.MustParseAddrPort("10.0.0.5:40002"), Broker: netip.MustParseAddrPort("10.0.0.9:9092"), StartFrame: 2}
	s := newSC(Options{})
	s.req(p1, kCGHB, 1, hb("g", m, 3))
	s.req(p2, kCGHB, 1, hb("g", m, 3))
	s.req(p1, kCGHB, 1, hb("g", m, 3))
	s.req(p2, kCGHB, 1, hb("g", m, 3))
	s.finish()
	if n := counts(s.got)["member-id-collision"]; n != 1 {
		t.Errorf("member-id-collision: got %d, want 1 (all %v)", n, counts(s.got))
	}
}
