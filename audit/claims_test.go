package audit

import (
	"fmt"
	"net/netip"
	"slices"
	"testing"

	"github.com/kwatch/kwatch/flow"
)

// hostConn is the connection of the i-th client host to one broker.
func hostConn(i int, port uint16) flow.ConnID {
	return flow.ConnID{
		Client:     netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 1, byte(i >> 8), byte(i)}), port),
		Broker:     netip.MustParseAddrPort("10.0.0.9:9092"),
		StartFrame: uint64(100 + i),
	}
}

// An instance is alive while any connection that carried its instance ID is
// open, not only the one it last heartbeated on: a consumer keeps its fetch
// connections when its coordinator's connection closes. A second instance
// that joins with its member ID then collides, once; the first heartbeating
// again on the connection it kept open is the same overlap, not a second
// finding.
func TestCollisionInstanceAliveThroughOtherConnection(t *testing.T) {
	m := JavaString(v4A)
	fetchA, coordA := hostConn(1, 1000), hostConn(1, 1001)
	coordB := hostConn(2, 1000)
	tests := []struct {
		name      string
		fetchOpen bool // A's fetch connection stays open
		want      int
	}{
		{"fetch connection open", true, 1},
		{"every connection closed", false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSC(Options{})
			s.req(fetchA, kMetadata, 12, inst(idA))
			s.req(coordA, kCGHB, 1, inst(idA), hb("g", m, 0))
			s.end(coordA)
			if !tt.fetchOpen {
				s.end(fetchA)
			}
			s.req(coordB, kCGHB, 1, inst(idB), hb("g", m, 0))
			s.req(coordB, kCGHB, 1, inst(idB), hb("g", m, 1))
			if tt.fetchOpen {
				s.req(fetchA, kCGHB, 1, inst(idA), hb("g", m, 5)) // the coordinator moved here
			}
			s.finish()
			if n := counts(s.got)["member-id-collision"]; n != tt.want {
				t.Errorf("member-id-collision: got %d, want %d (all: %v)", n, tt.want, counts(s.got))
			}
		})
	}
}

// SPEC.md 3.4's example (librdkafka issue 5263): many pods join with the
// same member ID at once. 3.7: once per (group, member ID, second
// claimant), so n claimants give n-1 findings however long they heartbeat,
// up to the claimants kwatch remembers; those beyond are counted as
// state-limited, not reported again and again.
func TestCollisionManyClaimants(t *testing.T) {
	m := JavaString(v4A)
	for _, pods := range []int{2, 6, maxClaimants, maxClaimants + 6} {
		t.Run(fmt.Sprint(pods), func(t *testing.T) {
			s := newSC(Options{})
			for i := range pods {
				s.req(hostConn(i, 40000), kCGHB, 1, cid("rdkafka"), hb("g", m, 0))
			}
			for round := range 3 {
				for i := range pods {
					s.req(hostConn(i, 40000), kCGHB, 1, cid("rdkafka"), hb("g", m, int32(round+1)))
				}
			}
			rep := s.finish()
			want := min(pods, maxClaimants) - 1
			if n := counts(s.got)["member-id-collision"]; n != want {
				t.Errorf("member-id-collision: got %d, want %d", n, want)
			}
			if extra := pods - maxClaimants; extra > 0 && rep.Totals.StateLimited == 0 {
				t.Errorf("%d claimants beyond the bound, state_limited is 0", extra)
			}
		})
	}
}

// Past maxGroups groups, a client's least recently used group is forgotten:
// the same capture must give the same findings every time (map order must
// not choose), and groups used recently must be kept.
func TestMemberTrackBoundDeterministic(t *testing.T) {
	jX, jY := JavaString(v4A), JavaString(v4B)
	run := func(groups int) []Finding {
		s := newSC(Options{})
		for g := range groups {
			c := s.req(connA, kCGHB, 1, inst(v4A), hb(fmt.Sprintf("g%03d", g), jX, 0))
			s.resp(connA, kCGHB, 1, c, errCode(0), respMember(jX))
		}
		// The newest groups first: they are the ones still remembered.
		for g := groups - 1; g >= 0; g-- {
			s.req(connA, kCGHB, 1, inst(v4A), hb(fmt.Sprintf("g%03d", g), jY, 0))
		}
		s.finish()
		return s.got
	}
	for _, groups := range []int{maxGroups, maxGroups + 40} {
		t.Run(fmt.Sprint(groups), func(t *testing.T) {
			first := run(groups)
			for range 5 {
				if again := run(groups); !slices.EqualFunc(first, again, func(x, y Finding) bool {
					return x.Rule == y.Rule && x.Frame == y.Frame && x.Group == y.Group
				}) {
					t.Fatalf("two runs of one capture gave different findings")
				}
			}
			// Rejoining newest first, each forgotten group comes back by
			// evicting the least recently used: the maxGroups newest are
			// all seen as changed, none of the older ones can be.
			want := min(groups, maxGroups)
			if n := counts(first)["member-id-changed"]; n != want {
				t.Errorf("member-id-changed: got %d, want %d", n, want)
			}
		})
	}
}

// A member ID the broker assigned is the broker's on whichever connection
// it is used next (SPEC.md 3.7): a client without an instance ID, followed
// per connection, takes it to its new coordinator's connection, where the
// property rules must not judge it as its own.
func TestBrokerAssignedIDFollowsToNextConnection(t *testing.T) {
	m := "rdkafka-consumer-5b8f2f6e-2c41-4f0e-9d7a-1e2f3a4b5c6d"
	for _, closeFirst := range []bool{false, true} {
		t.Run(fmt.Sprint("closeFirst=", closeFirst), func(t *testing.T) {
			s := newSC(Options{})
			c := s.req(connA, kCGHB, 0, hb("g", "", 0))
			s.resp(connA, kCGHB, 0, c, errCode(0), respMember(m))
			s.req(connA, kCGHB, 0, hb("g", m, 1))
			if closeFirst {
				s.end(connA)
			}
			s.req(connA2, kCGHB, 0, hb("g", m, 2)) // the coordinator moved
			s.req(connA2, kCGHB, 0, hb("g", m, 3))
			s.finish()
			got := counts(s.got)
			delete(got, "member-id-empty") // the join's, at v0: info
			mustEqualCounts(t, got, map[string]int{})
		})
	}
}
