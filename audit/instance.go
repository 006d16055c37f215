package audit

import (
	"strconv"

	"github.com/kwatch/kwatch/decode"
)

// The per-instance part of the auditor (observation.go): it reads only
// Observations and its own state (rows, claims, connection books).

// observe takes one step of a connection's audit.
func (a *Auditor) observe(o *Observation) {
	if a.o.Observer != nil {
		a.handOut(o, nil) // the per-instance part is elsewhere (split.go)
		return
	}
	b := o.book
	switch o.Step {
	case StepInstance:
		a.touchInstance(b, o)
	case StepSoftware:
		b.software = a.softwareOf(o.Software, o.SwVersion)
		for i := 0; i < int(b.nTouched); i++ {
			b.touched[i].software = b.software
		}
	case StepTelemetry:
		a.telemetryUse(b, o)
	case StepTelemetryAssigned:
		id := o.Telemetry
		b.assignedB = &id
		r := a.telemetryOwner(b, o, a.ensureRow(b, o, o.Time, o.Frame), o.Telemetry)
		t := r.telemetry()
		t.assigned, t.hasAssigned, t.id = o.Telemetry, true, o.Telemetry
	case StepHeartbeat:
		a.memberHeartbeat(b, o)
	case StepHeartbeatAnswer:
		a.heartbeatAnswer(b, o)
	case StepJoinAnswered:
		// Whether the join succeeded cannot be told: no ghost can be
		// claimed on it.
		if g := b.tracker(o).group(o.Group, o.Frame); g.join == o.MemberID && g.joinState == joinPending {
			g.joinState = joinAnswered
		}
	case StepConnEnd:
		o.complete()
		if o.Kafka && b.row == nil {
			a.ensureRow(b, o, o.Time, o.Frame)
		}
	case StepConnClosed:
		b.unregister()
		b.closed = true
	}
}

// verdict takes a finding the per-connection part made on the event o
// describes (StepVerdict).
func (a *Auditor) verdict(o *Observation, f *Finding) { a.record(o, f) }

// fireAt judges a per-instance rule on the event o describes.
func (a *Auditor) fireAt(o *Observation, r ruleID, d detail) {
	var f Finding
	if a.finding(&f, o, r, &d) {
		a.record(o, &f)
	}
}

// touchInstance records the request on its instance's row and applies the
// property rules of the instance ID (reserved, shared).
func (a *Auditor) touchInstance(c *connBook, o *Observation) {
	id := o.HeaderID
	r := c.lastInst
	if r == nil || r.evicted || r.id != id {
		var created bool
		r, created = a.instanceRow(id, o.Frame, o.Time)
		c.lastInst = r
		if created && id == oneUUID && !r.reservedFired {
			r.reservedFired = true
			a.fireAt(o, rInstanceReserved, detail{inst: id, expected: "a random version-4 UUID", observed: JavaString(id),
				msg: "the instance ID is ONE_UUID (" + HexString(id) + "), which Kafka reserves"})
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
		o.complete() // done by register already, which found the new host or ID
		what := "client host " + o.Conn.Client.Addr().String()
		if !newHost {
			what = "client ID " + strconv.Quote(o.ClientID)
		}
		a.fireAt(o, rInstanceShared, detail{inst: id, expected: "one client process per instance ID", observed: what,
			msg: "instance ID " + uuidText(id) + " is also used with " + what + ": two processes share a UUID"})
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
func (a *Auditor) telemetryUse(c *connBook, o *Observation) {
	id := o.Telemetry
	if !o.AdoptedHere || c.assignedB != nil {
		if b, ok := c.telemetryB(); ok && id != b {
			a.fireAt(o, rTelemetryNotAdopted, detail{expected: JavaString(b), observed: JavaString(id),
				msg: "the broker assigned telemetry ID " + uuidText(b) + " but the client uses another"})
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
func (a *Auditor) memberHeartbeat(c *connBook, o *Observation) {
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
		a.fireAt(o, rGhostMember, detail{group: group, member: member, expected: g.join, observed: member,
			msg: "join retried with a new member ID after the join with " + memberText(g.join) + " got " + state + "; the first may stay as a ghost member"})
	}
	if !ghost && !assigned && g.current != "" && g.current != member {
		a.fireAt(o, rMemberChanged, detail{group: group, member: member, expected: g.current, observed: member,
			msg: "the client uses a second member ID in group " + strconv.Quote(group) + "; a member ID lives as long as the process"})
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
func (a *Auditor) heartbeatAnswer(c *connBook, o *Observation) {
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
func (a *Auditor) memberProperties(c *connBook, o *Observation) {
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
	d := detail{group: group, member: member}
	switch enc {
	case encNone:
		d.expected, d.observed = "a UUID (Java string form)", member
		d.msg = "member ID is not a UUID in any known encoding"
		a.fireAt(o, rMemberNotUUID, d)
	case encJava:
	default:
		d.sev = SeverityInfo
		if hasStdChars(member) {
			d.sev = SeverityWarn
		}
		d.expected, d.observed = JavaString(u), member
		d.msg = "member ID is a UUID spelled as " + enc.String() + ", not Java's URL-safe base64 without padding"
		a.fireAt(o, rMemberEncoding, d)
		d.sev = 0
	}
	if enc != encNone && !isV4(u) {
		d.expected, d.observed = "a version-4 UUID", JavaString(u)
		d.msg = "member ID's UUID " + HexString(u) + " is not version 4 or is reserved"
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
		d.expected, d.observed = JavaString(inst), member
		d.msg = "member ID holds the instance ID's bytes spelled as " + enc.String() + ": aligned in value, not in text"
		a.fireAt(o, rMemberAlignmentEncoding, d)
	default:
		d.expected, d.observed = JavaString(inst), member
		d.msg = "member ID is not the header instance ID (KIP-1313: SHOULD be equal)"
		a.fireAt(o, rMemberMisaligned, d)
	}
}
