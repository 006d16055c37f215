package audit

import (
	"strconv"

	"github.com/kwatch/kwatch/decode"
)

// The per-instance part of the auditor (observation.go): it reads only
// Observations and its own state (rows, claims, connection books).

// touchInstance records the request on its instance's row and applies the
// property rules of the instance ID (reserved, shared).
func (a *InstanceAuditor) touchInstance(c *connBook, o *Observation) {
	id := o.HeaderID
	r := c.lastInst
	if r == nil || r.evicted || r.id != id {
		var created bool
		r, created = a.instanceRow(id, o.Frame, o.Time)
		c.lastInst = r
		if created && id == oneUUID && !r.reservedFired {
			r.reservedFired = true
			a.fireAt(o, rInstanceReserved, Verdict{Instance: id, Expected: "a random version-4 UUID", Observed: JavaString(id),
				Message: "the instance ID is ONE_UUID (" + HexString(id) + "), which Kafka reserves"})
		}
	} else {
		a.touchLRU(r, o.Time)
	}
	if c.row == nil || c.row.evicted || (c.row.legacy && !o.NoInstance) {
		c.row = r
	}
	newHost, newCID := a.register(c, o, r)
	if (newHost || newCID) && !r.sharedFired {
		r.sharedFired = true
		o.Complete() // done by register already, which found the new host or ID
		what := "client host " + o.Conn.Client.Addr().String()
		if !newHost {
			what = "client ID " + strconv.Quote(o.ClientID)
		}
		a.fireAt(o, rInstanceShared, Verdict{Instance: id, Expected: "one client process per instance ID", Observed: what,
			Message: "instance ID " + uuidText(id) + " is also used with " + what + ": two processes share a UUID"})
	}
}

// telemetryB is the broker-assigned telemetry ID the client must use, if any.
func (c *connBook) telemetryB() (decode.UUID, bool) {
	if c.assignedB != nil {
		return *c.assignedB, true
	}
	if r := c.instRow(); r != nil && r.tel != nil && r.tel.hasAssigned {
		return r.tel.assigned, true
	}
	return decode.UUID{}, false
}

// telemetryUse: telemetry-id-not-adopted, then the ID becomes the client's.
func (a *InstanceAuditor) telemetryUse(c *connBook, o *Observation) {
	id := o.Telemetry
	if !o.AdoptedHere || c.assignedB != nil {
		if b, ok := c.telemetryB(); ok && id != b {
			a.fireAt(o, rTelemetryNotAdopted, Verdict{Expected: JavaString(b), Observed: JavaString(id),
				Message: "the broker assigned telemetry ID " + uuidText(b) + " but the client uses another"})
		}
	}
	if !o.Set || id.IsZero() {
		return
	}
	// The row whose telemetry ID the request sets: that of its header
	// instance ID, else the connection's.
	var r *row
	if !o.HeaderID.IsZero() {
		r = a.instances[o.HeaderID]
	}
	if r == nil {
		r = a.ensureRow(c, o, o.Time, o.Frame)
	}
	if r.legacy {
		r = a.telemetryOwner(c, o, r, id)
	}
	r.telemetry().id = id
}

// memberHeartbeat applies the member rules that span connections to a
// heartbeat with a non-empty member ID (SPEC.md 3.4).
func (a *InstanceAuditor) memberHeartbeat(c *connBook, o *Observation) {
	group, member, epoch := o.Group, o.MemberID, o.MemberEpoch
	join, leave := epoch == 0, epoch == -1 || epoch == -2
	g := c.tracker(o).group(group, o.Frame)
	assigned := g.isAssigned(member)
	ghost := false
	if join && !assigned && g.join != "" && g.join != member && (g.joinState == joinPending || g.joinState == joinFailed) {
		ghost = true
		state := "no response"
		if g.joinState == joinFailed {
			state = "an error"
		}
		a.fireAt(o, rGhostMember, Verdict{Group: group, MemberID: member, Expected: g.join, Observed: member,
			Message: "join retried with a new member ID after the join with " + memberText(g.join) + " got " + state + "; the first may stay as a ghost member"})
	}
	if !ghost && !assigned && g.current != "" && g.current != member {
		a.fireAt(o, rMemberChanged, Verdict{Group: group, MemberID: member, Expected: g.current, Observed: member,
			Message: "the client uses a second member ID in group " + strconv.Quote(group) + "; a member ID lives as long as the process"})
	}
	g.current = member
	switch {
	case join:
		g.join, g.joinState = member, joinPending
	case leave && member == g.join:
		// A join after a leave is a rejoin, not a retry of this join.
		g.join, g.joinState = "", joinNone
	}
	// One lookup of the member ID's claims for both: it was a tenth of a
	// heartbeat's time twice.
	cs := a.claimSet(group, member)
	if !assigned && (cs == nil || !cs.brokerAssigned) {
		a.memberProperties(c, o)
	}
	a.collision(c, o, cs)
	for i := range int(c.nTouched) {
		c.touched[i].addMemberID(group, member, epoch)
	}
	if c.nTouched == 0 {
		a.ensureRow(c, o, o.Time, o.Frame).addMemberID(group, member, epoch)
	}
}

// heartbeatAnswer follows the join's fate and broker-assigned member IDs.
func (a *InstanceAuditor) heartbeatAnswer(c *connBook, o *Observation) {
	g := c.tracker(o).group(o.Group, o.Frame)
	if o.MemberID != "" && g.join == o.MemberID {
		switch {
		case o.OK:
			// The join's own answer, or a later heartbeat's (the join's
			// may have been lost in a gap): the broker knows the member.
			g.joinState = joinOK
		case o.Join:
			g.joinState = joinFailed
		}
	}
	if o.Assigned == "" {
		return
	}
	// The broker assigned a member ID: it is the broker's, not the client's.
	g.addAssigned(o.Assigned)
	a.markBrokerAssigned(o.Group, o.Assigned)
	if o.MemberID == "" {
		g.current = o.Assigned
	}
}

// memberProperties: the property rules, once per (connection, group, member ID).
func (a *InstanceAuditor) memberProperties(c *connBook, o *Observation) {
	group, member := o.Group, o.MemberID
	k := memberKey{group, member}
	if _, done := c.judged[k]; done {
		return
	}
	if c.judged == nil {
		c.judged = make(map[memberKey]struct{})
	}
	if len(c.judged) >= maxJudged {
		a.t.stateLimited++
		return
	}
	c.judged[k] = struct{}{}
	enc, u := decodeMemberID(member)
	d := Verdict{Group: group, MemberID: member}
	switch enc {
	case encNone:
		d.Expected, d.Observed = "a UUID (Java string form)", member
		d.Message = "member ID is not a UUID in any known encoding"
		a.fireAt(o, rMemberNotUUID, d)
	case encJava:
	default:
		d.Severity = SeverityInfo
		if hasStdChars(member) {
			d.Severity = SeverityWarn
		}
		d.Expected, d.Observed = JavaString(u), member
		d.Message = "member ID is a UUID spelled as " + enc.String() + ", not Java's URL-safe base64 without padding"
		a.fireAt(o, rMemberEncoding, d)
		d.Severity = 0
	}
	if enc != encNone && !isV4(u) {
		d.Expected, d.Observed = "a version-4 UUID", JavaString(u)
		d.Message = "member ID's UUID " + HexString(u) + " is not version 4 or is reserved"
		a.fireAt(o, rMemberNotV4, d)
	}
	// Alignment with the header instance ID of this connection.
	var inst decode.UUID
	switch {
	case !o.HeaderID.IsZero():
		inst = o.HeaderID
	case o.InstanceFixed:
		inst = o.Instance
	default:
		return // no header instance ID: misaligned cannot fire
	}
	switch {
	case isJavaString(member, inst):
	case enc != encNone && u == inst:
		d.Expected, d.Observed = JavaString(inst), member
		d.Message = "member ID holds the instance ID's bytes spelled as " + enc.String() + ": aligned in value, not in text"
		a.fireAt(o, rMemberAlignmentEncoding, d)
	default:
		d.Expected, d.Observed = JavaString(inst), member
		d.Message = "member ID is not the header instance ID (KIP-1313: SHOULD be equal)"
		a.fireAt(o, rMemberMisaligned, d)
	}
}
