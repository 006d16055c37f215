package audit

import (
	"net/netip"
	"strconv"

	"github.com/kwatch/kwatch/decode"
)

// Claim-set storage for member-id-collision (SPEC.md 3.4, 3.7): who used
// which member ID in which group, whether they are still there, and
// whether a broker assigned the ID. The judgement (reqCheck.collision,
// below) reads and writes it only through these types and methods.

// claimant tells clients apart for member-id-collision: by instance ID, or
// without one by client host:port.
type claimant struct {
	inst decode.UUID
	addr netip.AddrPort
}

type claim struct {
	who  claimant
	conn *connBook
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
func (a *InstanceAuditor) markBrokerAssigned(group, member string) {
	if cs := a.claimSet(group, member); cs != nil {
		cs.brokerAssigned = true
	}
}

// claimSet returns what is known of member in group, made on first use;
// nil when the claims map is full even after dropping the claims whose
// claimants are all gone (counted in state_limited).
func (a *InstanceAuditor) claimSet(group, member string) *claimSet {
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

// markLapsed: claimant cl takes the member ID on connection c; every other
// claimant that is gone now will be back, should it use the ID again.
func (a *InstanceAuditor) markLapsed(cs *claimSet, cl *claim, c *connBook) {
	for i := range cs.list {
		if o := &cs.list[i]; o != cl && !a.claimAlive(o, c) {
			o.lapsed = true
		}
	}
}

// liveOther returns a claimant other than who, on a connection other than
// c, that is alive.
func (a *InstanceAuditor) liveOther(cs *claimSet, who claimant, c *connBook) *claim {
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
func (a *InstanceAuditor) claimAlive(cl *claim, c *connBook) bool {
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
func (a *InstanceAuditor) pruneClaims() {
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

// collision: member-id-collision once per (group, member ID, second claimant);
// cs is the claims of o.MemberID in o.Group (nil: none could be kept).
func (a *InstanceAuditor) collision(c *connBook, o *Observation, cs *claimSet) {
	var who claimant
	switch {
	case o.InstanceFixed:
		who = claimant{inst: o.Instance}
	case !o.HeaderID.IsZero():
		who = claimant{inst: o.HeaderID}
	default:
		o.Complete()
		who = claimant{addr: o.Conn.Client}
	}
	if cs == nil {
		return
	}
	// One connection is one client, whatever it called itself before (an
	// instance ID that came late, or after a request whose tag 0 was
	// malformed): its own claim first.
	for i := range cs.list {
		if cl := &cs.list[i]; cl.conn == c {
			cl.who = who
			return
		}
	}
	var other *claim
	for i := range cs.list {
		cl := &cs.list[i]
		if cl.who == who {
			// The claimant on another connection. If another claimant took
			// the ID while it was gone, it is back: a collision if another
			// claimant is alive now.
			back := cl.lapsed
			cl.conn, cl.lapsed = c, false
			a.markLapsed(cs, cl, c)
			if back && !cl.fired {
				if other2 := a.liveOther(cs, who, c); other2 != nil {
					a.fireCollision(o, who, other2)
					cl.fired = true
				}
			}
			return
		}
		if other == nil && a.claimAlive(cl, c) {
			other = cl
		}
	}
	if other != nil && who.inst.IsZero() && other.who.inst.IsZero() &&
		other.who.addr.Addr() == who.addr.Addr() && movedMember(o, other) {
		// A client without instance IDs is known by host:port, so one
		// process that moves its heartbeats to another connection (its
		// group coordinator moved; librdkafka keeps one connection per
		// broker, so the old one stays open) looks like a second claimant.
		// Moving, and moving back, is one process; a member that keeps
		// switching between two connections is two processes heartbeating
		// side by side.
		if other.switches++; other.switches < maxMemberMoves {
			other.who, other.conn = who, c
			return
		}
	}
	slot := len(cs.list)
	if slot == maxClaimants {
		slot = -1
		for i := range cs.list { // replace a claimant that is gone
			if !a.claimAlive(&cs.list[i], c) {
				slot = i
				break
			}
		}
		if slot < 0 {
			// Every remembered claimant is alive: this one cannot be
			// remembered, so it is not judged (it would fire again on each
			// of its heartbeats).
			a.t.stateLimited++
			return
		}
	} else {
		cs.list = append(cs.list, claim{})
	}
	fired := false
	if other != nil {
		a.fireCollision(o, who, other)
		fired = true
	}
	cs.list[slot] = claim{who: who, conn: c, fired: fired}
	a.markLapsed(cs, &cs.list[slot], c)
}

// movedMember reports whether this request, the first for member on its
// connection while other (on the same host) holds it, may come from the
// same process that moved: a heartbeat past the join, or a join retried
// after the join on other's connection failed or got no answer (the
// coordinator moved under it).
func movedMember(o *Observation, other *claim) bool {
	if o.MemberEpoch != 0 {
		return true
	}
	g := other.conn.members[o.Group]
	return g != nil && g.join == o.MemberID && (g.joinState == joinPending || g.joinState == joinFailed)
}

// fireCollision reports who using member in group while other holds it.
func (a *InstanceAuditor) fireCollision(o *Observation, who claimant, other *claim) {
	group, member := o.Group, o.MemberID
	// observed names UUIDs in Java's form only, the message with hex too
	// (README, rule 14).
	other1 := other.conn.id.Client.String()
	other2 := other1
	if !other.who.inst.IsZero() {
		other1 = "instance " + JavaString(other.who.inst) + " (" + other1 + ")"
		other2 = "instance " + uuidText(other.who.inst) + ", " + other2
	}
	a.fireAt(o, rMemberCollision, Verdict{Group: group, MemberID: member, Instance: who.inst,
		Expected: "a member ID unique to one client", Observed: "also used by " + other1,
		Message: "member ID " + memberText(member) + " in group " + strconv.Quote(group) + " is used at the same time by another client: " + other2})
}
