package audit

import (
	"net/netip"

	"github.com/kwatch/kwatch/decode"
)

// Claim-set storage for member-id-collision (SPEC.md 3.4, 3.7): who used
// which member ID in which group, whether they are still there, and
// whether a broker assigned the ID. The judgement (reqCheck.collision,
// checks.go) reads and writes it only through these types and methods.

// claimant tells clients apart for member-id-collision: by instance ID, or
// without one by client host:port.
type claimant struct {
	inst decode.UUID
	addr netip.AddrPort
}

type claim struct {
	who  claimant
	conn *connState
	// fired: a collision was reported with this claimant as the second.
	fired bool
	// lapsed: another claimant took the member ID while this one was gone.
	lapsed bool
	// switches counts the moves of a client without instance IDs between
	// connections of its host (see reqCheck.collision).
	switches int
}

type claimSet struct {
	list []claim
	// brokerAssigned: a broker gave this member ID to a client in a
	// heartbeat response. It is the broker's wherever it is used next,
	// on whichever connection (SPEC.md 3.7).
	brokerAssigned bool
}

// markBrokerAssigned remembers that a broker gave member to a client in
// group: a client without an instance ID is followed per connection, and
// its next connection (its coordinator moved) must not judge the ID as
// its own.
func (a *Auditor) markBrokerAssigned(group, member string) {
	if cs := a.claimSet(group, member); cs != nil {
		cs.brokerAssigned = true
	}
}

// claimSet returns what is known of member in group, made on first use;
// nil when the claims map is full even after dropping the claims whose
// claimants are all gone (counted in state_limited).
func (a *Auditor) claimSet(group, member string) *claimSet {
	k := memberKey{group, member}
	if cs := a.claims[k]; cs != nil {
		return cs
	}
	if len(a.claims) >= claimsPerInstCap*a.o.MaxInstances {
		a.pruneClaims()
		if len(a.claims) >= claimsPerInstCap*a.o.MaxInstances {
			a.t.stateLimited++
			return nil
		}
	}
	cs := &claimSet{}
	a.claims[k] = cs
	return cs
}

// brokerAssigned tells whether a broker gave member to a client in group.
func (a *Auditor) brokerAssigned(group, member string) bool {
	cs := a.claims[memberKey{group, member}]
	return cs != nil && cs.brokerAssigned
}

// markLapsed: claimant cl takes the member ID on connection c; every other
// claimant that is gone now will be back, should it use the ID again.
func (a *Auditor) markLapsed(cs *claimSet, cl *claim, c *connState) {
	for i := range cs.list {
		if o := &cs.list[i]; o != cl && !a.claimAlive(o, c) {
			o.lapsed = true
		}
	}
}

// liveOther returns a claimant other than who, on a connection other than
// c, that is alive.
func (a *Auditor) liveOther(cs *claimSet, who claimant, c *connState) *claim {
	for i := range cs.list {
		if cl := &cs.list[i]; cl.who != who && cl.conn != c && a.claimAlive(cl, c) {
			return cl
		}
	}
	return nil
}

// claimAlive tells whether cl's claimant is still there, c aside: the
// connection it last used the member ID on is open, or, for an instance,
// any other connection that carried its instance ID is (a consumer keeps
// its fetch connections when its coordinator's closes).
func (a *Auditor) claimAlive(cl *claim, c *connState) bool {
	if cl.conn != c && !cl.conn.closed {
		return true
	}
	if cl.who.inst.IsZero() {
		return false
	}
	r := a.instances[cl.who.inst]
	if r == nil {
		return false
	}
	open := r.open
	if c != nil && !c.closed && c.registered(r) {
		open--
	}
	return open > 0
}

// pruneClaims drops claims whose claimants are all gone.
func (a *Auditor) pruneClaims() {
	for k, cs := range a.claims {
		alive := false
		for i := range cs.list {
			if a.claimAlive(&cs.list[i], nil) {
				alive = true
				break
			}
		}
		if !alive {
			delete(a.claims, k)
		}
	}
}
