package audit

import (
	"cmp"
	"strconv"

	"github.com/kwatch/kwatch/decode"
	"github.com/twmb/franz-go/pkg/kerr"
)

const (
	errInvalidRequest = 42
	instanceTagBytes  = 18 // uvarint tag 0, uvarint 16, 16 bytes
)

// headerV3 is the accepted-2026 override list: requests of these API keys
// from version From on use request header v3 (SPEC.md section 4). Extend it
// as Kafka declares more; everything else keeps kmsg's flexible knowledge
// (the decoder's HeaderVersion).
var headerV3 = []struct {
	Key  decode.APIKey
	From int16
}{
	{Key: decode.KeyOffsetDelete, From: 1}, // OffsetDelete v1 (open pull request, 2026)
}

// HeaderV3 returns, for the decoder (decode.Options.HeaderV3), which API
// versions use request header v3 under profile p: nil under seed, where no
// request does.
func HeaderV3(p Profile) func(key, version int16) bool {
	if p != ProfileAccepted2026 {
		return nil
	}
	return func(key, version int16) bool { return isHeaderV3(decode.APIKey(key), version) }
}

func isHeaderV3(key decode.APIKey, version int16) bool {
	for _, o := range headerV3 {
		if key == o.Key && version >= o.From {
			return true
		}
	}
	return false
}

// headerVersion is the header version a request is audited under.
func (a *Auditor) headerVersion(e *decode.Event) int8 {
	if a.o.Profile == ProfileAccepted2026 && e.HeaderVersion > 0 && isHeaderV3(e.APIKey, e.APIVersion) {
		return 3
	}
	return e.HeaderVersion
}

func errName(code int16) string {
	name := ErrorName(code)
	if name == "UNKNOWN" {
		return "error " + strconv.Itoa(int(code))
	}
	return name + " (" + strconv.Itoa(int(code)) + ")"
}

// ErrorName is the name Kafka gives an error code (kerr): "NONE" for 0,
// "UNKNOWN" for a code kerr does not know. Every output names error codes
// through it.
func ErrorName(code int16) string {
	if code == 0 {
		return "NONE"
	}
	if err := kerr.ErrorForCode(code); err != nil {
		if ke, ok := err.(*kerr.Error); ok {
			return ke.Message
		}
	}
	return "UNKNOWN"
}

func plural(n uint64, unit string) string {
	s := strconv.FormatUint(n, 10) + " " + unit
	if n != 1 {
		s += "s"
	}
	return s
}

func idOrNone(u decode.UUID) string {
	if u.IsZero() {
		return "none"
	}
	return JavaString(u)
}

// reqCheck carries what the checks of one request share.
type reqCheck struct {
	a     *Auditor
	c     *connState
	e     *decode.Event
	hv    int8
	hasID bool // a well-formed, non-zero header instance ID
	id    decode.UUID
	// invalid: the first rule fired on this request that a conforming broker
	// rejects with INVALID_REQUEST (for broker-accepted-invalid).
	invalid    ruleID
	hasInvalid bool
}

func (q *reqCheck) fire(r ruleID, d detail) {
	q.a.fire(q.c, q.e, r, d)
	if !q.hasInvalid && r.rule().BrokerRejects && cmp.Or(d.sev, r.rule().Severity) == SeverityError && r.runsUnder(q.a.o.Profile) {
		q.invalid, q.hasInvalid = r, true
	}
}

func (a *Auditor) request(c *connState, e *decode.Event) {
	q := reqCheck{a: a, c: c, e: e, hv: a.headerVersion(e)}
	if q.hv >= 0 && int(q.hv) < len(a.t.requests) {
		a.t.requests[q.hv]++
	}
	q.hasID = e.HasInstanceID && e.TagProblem == decode.TagOK && !e.InstanceID.IsZero() && q.hv >= 2
	q.id = e.InstanceID
	// A field the snap length cut is not judged (SPEC.md 2.1).
	if q.hv >= 1 && e.Cut < decode.CutClientID {
		q.clientID()
	}
	if q.hv >= 2 && e.Cut < decode.CutTags {
		q.instanceID()
	}
	decoded := e.Body.Decoded && !e.Body.BodyError
	if !decoded && !q.hasInvalid {
		return // most requests: no body of interest, nothing to remember
	}
	check := checkFor(e.APIKey)
	if check.request != nil && decoded {
		// Through a.req: passed to a function value, q would move to
		// the heap for every request, these rare ones or not.
		a.req = q
		check.request(&a.req)
		q = a.req
		a.req = reqCheck{}
	}
	if q.hasInvalid && check.rememberInvalid {
		q.remember(pending{key: e.APIKey})
	}
}

// apiCheck is what the audit does with one API's decoded bodies (SPEC.md
// section 1). A new identity body adds a row to apiChecks.
type apiCheck struct {
	// request judges a decoded request body; it remembers the request
	// itself (reqCheck.remember) when the answer matters.
	request func(*reqCheck)
	// response judges the decoded answer to a remembered request;
	// unread is told of an answer whose body did not decode.
	response func(*Auditor, *connState, *decode.Event, *pending)
	unread   func(*connState, *decode.Event, *pending)
	// rememberInvalid: a request whose own check remembers nothing is
	// still remembered when it broke a rule a conforming broker rejects,
	// so that broker-accepted-invalid judges the answer's error code.
	rememberInvalid bool
}

// apiChecks is indexed by API key (an array: it is read for every
// request); keys outside it have no check.
var apiChecks = apiCheckTable()

func apiCheckTable() (t [decode.KeyStreamsGroupHeartbeat + 1]apiCheck) {
	heartbeat := apiCheck{request: (*reqCheck).heartbeat, response: (*Auditor).heartbeatResponse, unread: markJoinAnswered}
	t[decode.KeySASLHandshake] = apiCheck{rememberInvalid: true}
	t[decode.KeyAPIVersions] = apiCheck{request: (*reqCheck).software, rememberInvalid: true}
	t[decode.KeyGetTelemetrySubscriptions] = apiCheck{request: (*reqCheck).getTelemetry, response: (*Auditor).telemetryResponse}
	t[decode.KeyPushTelemetry] = apiCheck{request: (*reqCheck).pushTelemetry}
	t[decode.KeyConsumerGroupHeartbeat] = heartbeat
	t[decode.KeyShareGroupHeartbeat] = heartbeat
	t[decode.KeyStreamsGroupHeartbeat] = heartbeat
	return t
}

// checkFor returns key's row of apiChecks (the zero apiCheck outside it).
func checkFor(key decode.APIKey) apiCheck {
	if key < 0 || int(key) >= len(apiChecks) {
		return apiCheck{}
	}
	return apiChecks[key]
}

func (q *reqCheck) remember(p pending) {
	p.corr, p.frame, p.time = q.e.CorrelationID, q.e.Frame, q.e.Time
	p.invalid, p.hasInvalid = q.invalid, q.hasInvalid
	if q.c.addPending(p) {
		q.a.t.pendingEvicted++
	}
}

// clientID applies SPEC.md 3.2 to a v1+ header.
func (q *reqCheck) clientID() {
	c, e := q.c, q.e
	empty := e.ClientIDNull || len(e.ClientID) == 0
	switch c.cid {
	case cidUnseen:
		if empty {
			c.cid = cidEmpty
		} else {
			c.cid, c.firstCID = cidSet, string(e.ClientID)
		}
	case cidEmpty:
		if !empty {
			q.fire(rClientIDMissingFirst, detail{expected: "client ID on the first request",
				observed: string(e.ClientID),
				msg:      "the connection's first request had no client ID; the broker keeps it and ignores this one"})
		}
	case cidSet:
		if e.ClientIDNull {
			return
		}
		// An empty client ID is no repeat (nothing to save), but it is a
		// non-null one that differs from the first (SPEC.md 3.2).
		if n := uint64(len(e.ClientID)); n > 0 {
			c.cidRepeats++
			c.cidRepeatBytes += n
			q.a.t.cidRepeats++
			q.a.t.cidRepeatBytes += n
		}
		if string(e.ClientID) != c.firstCID {
			q.fire(rClientIDChanged, detail{expected: c.firstCID, observed: string(e.ClientID),
				msg: "client ID differs from the connection's first; the broker attributes this request to the first"})
		}
	}
}

// instanceChanged fires instance-id-changed (SPEC.md 3.1, and section 4
// for v3 headers): the request's instance ID is not the connection's first.
func (q *reqCheck) instanceChanged() {
	q.fire(rInstanceChanged, detail{expected: JavaString(q.c.instID), observed: JavaString(q.id),
		msg: "instance ID changed mid-connection; a conforming broker rejects this request with INVALID_REQUEST"})
}

// instanceID applies SPEC.md 3.1 (or section 4) to a v2+ header.
func (q *reqCheck) instanceID() {
	e := q.e
	if e.TagProblem != decode.TagOK {
		q.fire(rInstanceMalformed, detail{expected: "tag 0 of 16 bytes, tags ascending and within the header",
			observed: e.TagProblem.String(),
			msg:      "malformed request header tagged fields (" + e.TagProblem.String() + "); a conforming broker rejects this request"})
		return
	}
	if q.hasID {
		q.c.claimed = true
		// A connection's client row is its first instance ID's: an ID
		// it changes to shows in the findings, not as a client of its own.
		if q.c.inst != idSet || q.c.instID == q.id {
			q.touchInstance()
		}
	}
	if q.a.o.Profile == ProfileAccepted2026 {
		if q.hv == 3 {
			q.acceptedConsistency()
		}
		return
	}
	q.seedConsistency()
}

// seedConsistency: the first v2 request fixes the connection's instance ID.
func (q *reqCheck) seedConsistency() {
	c := q.c
	switch c.inst {
	case idUnknown:
		if q.hasID {
			c.inst, c.instID = idSet, q.id
		} else {
			c.inst = idNone
		}
	case idSet:
		if !q.hasID {
			q.fire(rInstanceDropped, detail{expected: JavaString(c.instID), observed: "none",
				msg: "instance ID dropped mid-connection; a conforming broker rejects this request with INVALID_REQUEST"})
		} else if q.id != c.instID {
			q.instanceChanged()
		}
	case idNone:
		if q.hasID {
			q.fire(rInstanceLate, detail{expected: "none", observed: JavaString(q.id), inst: q.id,
				msg: "instance ID set after a first v2 request without one; a conforming broker rejects this request with INVALID_REQUEST"})
		}
	}
}

// acceptedConsistency: header v3 carries the ID on the first request only.
func (q *reqCheck) acceptedConsistency() {
	c := q.c
	switch c.inst {
	case idUnknown:
		switch {
		case !c.fromStart || c.gap || q.e.Partial:
			// Identity unobservable: the first request was not seen.
			q.a.t.unobservable++
			c.inst = idUnobservable
			if q.hasID {
				c.inst, c.instID = idSet, q.id
			}
		case q.hasID:
			c.inst, c.instID = idSet, q.id
		default:
			c.inst = idNone
			q.fire(rInstanceMissingFirst, detail{expected: "an instance ID", observed: "none",
				msg: "the connection's first v3-header request carries no instance ID"})
		}
	case idUnobservable:
		if q.hasID {
			c.inst, c.instID = idSet, q.id
		}
	case idSet:
		if !q.hasID {
			return
		}
		if q.id != c.instID {
			q.instanceChanged()
		} else if !c.instRepeat {
			c.instRepeat = true
			q.fire(rInstanceRepeated, detail{expected: "none after the first request", observed: JavaString(q.id),
				msg: "the instance ID is repeated after the connection's first request (" + strconv.Itoa(instanceTagBytes) + " header bytes per request)"})
		}
	}
}

// touchInstance records the request on its instance's row and applies the
// property rules of the instance ID (reserved, shared).
func (q *reqCheck) touchInstance() {
	a, c, e := q.a, q.c, q.e
	r := c.lastInst
	if r == nil || r.evicted || r.id != q.id {
		var created bool
		r, created = a.instanceRow(q.id, e)
		c.lastInst = r
		if created && q.id == oneUUID && !r.reservedFired {
			r.reservedFired = true
			q.fire(rInstanceReserved, detail{inst: q.id, expected: "a random version-4 UUID", observed: JavaString(q.id),
				msg: "the instance ID is ONE_UUID (" + HexString(q.id) + "), which Kafka reserves"})
		}
	} else {
		a.touchLRU(r, e.Time)
	}
	if c.row == nil || c.row.evicted || (c.row.legacy && c.inst != idNone) {
		c.row = r
	}
	newHost, newCID := a.register(c, r)
	if (newHost || newCID) && !r.sharedFired {
		r.sharedFired = true
		what := "client host " + hostOf(c).String()
		if !newHost {
			what = "client ID " + strconv.Quote(c.firstCID)
		}
		q.fire(rInstanceShared, detail{inst: q.id, expected: "one client process per instance ID", observed: what,
			msg: "instance ID " + uuidText(q.id) + " is also used with " + what + ": two processes share a UUID"})
	}
}

func (q *reqCheck) software() {
	b := &q.e.Body
	if b.ClientSoftwareName == "" && b.ClientSoftwareVersion == "" {
		return
	}
	c := q.c
	c.software, c.softwareVersion = b.ClientSoftwareName, b.ClientSoftwareVersion
	for i := 0; i < c.nTouched; i++ {
		c.touched[i].software, c.touched[i].swVersion = c.software, c.softwareVersion
	}
}

// telemetryB is the broker-assigned telemetry ID the client must use, if any.
func (q *reqCheck) telemetryB() (decode.UUID, bool) {
	if q.c.hasAssigned {
		return q.c.assignedB, true
	}
	if r := q.c.instRow(); r != nil && r.hasAssigned {
		return r.assignedB, true
	}
	return decode.UUID{}, false
}

func (q *reqCheck) notAdopted(id decode.UUID) {
	if b, ok := q.telemetryB(); ok && id != b {
		q.fire(rTelemetryNotAdopted, detail{expected: JavaString(b), observed: JavaString(id),
			msg: "the broker assigned telemetry ID " + uuidText(b) + " but the client uses another"})
	}
}

func (q *reqCheck) setTelemetry(id decode.UUID) {
	if id.IsZero() {
		return
	}
	r := q.telemetryRow()
	if r.legacy {
		r = q.a.telemetryOwner(q.c, r, id)
	}
	r.telemetry = id
}

// telemetryRow is the row whose telemetry ID a request sets: that of its
// header instance ID, else the connection's.
func (q *reqCheck) telemetryRow() *row {
	if q.hasID {
		if r := q.a.instances[q.id]; r != nil {
			return r
		}
	}
	return q.a.ensureRow(q.c, q.e.Time, q.e.Frame)
}

// getTelemetry applies SPEC.md 3.3's table; its rows are exclusive.
func (q *reqCheck) getTelemetry() {
	r := q.e.Body.TelemetryInstanceID
	var h decode.UUID
	if q.hasID {
		h = q.id
	}
	var tableRow telemetryCase
	switch {
	case h.IsZero() && r.IsZero():
		tableRow = telemetryLegacyFirst
		if q.c.hasAssigned {
			// Asking again on a connection that was given B: B is not
			// used (only this connection: a legacy client on another
			// one may be a restarted process).
			q.notAdopted(r)
		}
	case h.IsZero():
		tableRow = telemetryLegacyLater
		q.notAdopted(r)
		q.setTelemetry(r)
	case r == h:
		tableRow = telemetryAligned
		q.notAdopted(r)
		q.setTelemetry(r)
	case r.IsZero():
		tableRow = telemetryRequested
		q.fire(rTelemetryRequestedWithHeader, detail{expected: JavaString(h), observed: "0",
			msg: "GetTelemetrySubscriptions asks the broker for a telemetry ID while sending header instance ID; a conforming broker answers INVALID_REQUEST"})
	default:
		tableRow = telemetryMismatch
		q.fire(rTelemetryMismatch, detail{expected: JavaString(h), observed: JavaString(r),
			msg: "telemetry ClientInstanceId differs from the header instance ID; a conforming broker answers INVALID_REQUEST"})
	}
	q.remember(pending{key: decode.KeyGetTelemetrySubscriptions, telemetryRow: tableRow})
}

func (q *reqCheck) pushTelemetry() {
	r := q.e.Body.TelemetryInstanceID
	switch {
	case r.IsZero():
		q.fire(rTelemetryZeroPush, detail{expected: "a non-zero ClientInstanceId", observed: "0",
			msg: "PushTelemetry with a zero ClientInstanceId; a conforming broker rejects it"})
	case q.hasID && r != q.id:
		q.fire(rTelemetryMismatch, detail{expected: JavaString(q.id), observed: JavaString(r),
			msg: "PushTelemetry ClientInstanceId differs from the header instance ID"})
	default:
		q.notAdopted(r)
		q.setTelemetry(r)
	}
	q.remember(pending{key: decode.KeyPushTelemetry})
}

// memberRequired: is a client-generated member ID required at this version?
func (a *Auditor) memberRequired(key decode.APIKey, version int16) bool {
	return key != decode.KeyConsumerGroupHeartbeat || version >= a.reqFrom
}

// heartbeat applies SPEC.md 3.4 to a group heartbeat request.
func (q *reqCheck) heartbeat() {
	b := &q.e.Body
	group, member, epoch := b.Group, b.MemberID, b.MemberEpoch
	join, leave := epoch == 0, epoch == -1 || epoch == -2
	required := q.a.memberRequired(q.e.APIKey, q.e.APIVersion)
	p := pending{key: q.e.APIKey, group: group, member: member, join: join}
	if member == "" {
		// An empty member ID gives only these (and 3.5 rules).
		switch {
		case join:
			sev, why := SeverityInfo, "below the version that requires it the broker generates one"
			if required {
				sev, why = SeverityError, "a conforming broker rejects it with INVALID_REQUEST"
				p.emptyRequired = true
			}
			q.fire(rMemberEmpty, detail{sev: sev, group: group, expected: "a client-generated UUID", observed: "\"\"",
				msg: "group join with an empty member ID; " + why})
		case leave:
			q.fire(rLeaveWithoutMember, detail{group: group, expected: "the member ID of the join", observed: "\"\"",
				msg: "leave with an empty member ID; the broker answers UNKNOWN_MEMBER_ID and a ghost member stays until its session times out"})
		}
		q.remember(p)
		return
	}
	g := q.c.tracker().group(group, q.e.Frame)
	assigned := g.isAssigned(member)
	ghost := false
	if join && !assigned && g.join != "" && g.join != member && (g.joinState == joinPending || g.joinState == joinFailed) {
		ghost = true
		state := "no response"
		if g.joinState == joinFailed {
			state = "an error"
		}
		q.fire(rGhostMember, detail{group: group, member: member, expected: g.join, observed: member,
			msg: "join retried with a new member ID after the join with " + memberText(g.join) + " got " + state + "; the first may stay as a ghost member"})
	}
	if !ghost && !assigned && g.current != "" && g.current != member {
		q.fire(rMemberChanged, detail{group: group, member: member, expected: g.current, observed: member,
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
	if !assigned && !q.a.brokerAssigned(group, member) {
		q.memberProperties(group, member)
	}
	q.collision(group, member)
	for i := 0; i < q.c.nTouched; i++ {
		q.c.touched[i].addMemberID(group, member, q.e.Body.MemberEpoch)
	}
	if q.c.nTouched == 0 {
		q.a.ensureRow(q.c, q.e.Time, q.e.Frame).addMemberID(group, member, q.e.Body.MemberEpoch)
	}
	q.remember(p)
}

// memberProperties: the property rules, once per (connection, group, member ID).
func (q *reqCheck) memberProperties(group, member string) {
	c := q.c
	k := memberKey{group, member}
	if _, done := c.judged[k]; done {
		return
	}
	if c.judged == nil {
		c.judged = make(map[memberKey]struct{})
	}
	if len(c.judged) >= maxJudged {
		q.a.t.stateLimited++
		return
	}
	c.judged[k] = struct{}{}
	enc, u := decodeMemberID(member)
	d := detail{group: group, member: member}
	switch enc {
	case encNone:
		d.expected, d.observed = "a UUID (Java string form)", member
		d.msg = "member ID is not a UUID in any known encoding"
		q.fire(rMemberNotUUID, d)
	case encJava:
	default:
		d.sev = SeverityInfo
		if hasStdChars(member) {
			d.sev = SeverityWarn
		}
		d.expected, d.observed = JavaString(u), member
		d.msg = "member ID is a UUID spelled as " + enc.String() + ", not Java's URL-safe base64 without padding"
		q.fire(rMemberEncoding, d)
		d.sev = 0
	}
	if enc != encNone && !isV4(u) {
		d.expected, d.observed = "a version-4 UUID", JavaString(u)
		d.msg = "member ID's UUID " + HexString(u) + " is not version 4 or is reserved"
		q.fire(rMemberNotV4, d)
	}
	// Alignment with the header instance ID of this connection.
	var inst decode.UUID
	switch {
	case q.hasID:
		inst = q.id
	case c.inst == idSet:
		inst = c.instID
	default:
		return // no header instance ID: misaligned cannot fire
	}
	switch {
	case isJavaString(member, inst):
	case enc != encNone && u == inst:
		d.expected, d.observed = JavaString(inst), member
		d.msg = "member ID holds the instance ID's bytes spelled as " + enc.String() + ": aligned in value, not in text"
		q.fire(rMemberAlignmentEncoding, d)
	default:
		d.expected, d.observed = JavaString(inst), member
		d.msg = "member ID is not the header instance ID (KIP-1313: SHOULD be equal)"
		q.fire(rMemberMisaligned, d)
	}
}

// collision: member-id-collision once per (group, member ID, second claimant).
func (q *reqCheck) collision(group, member string) {
	a, c := q.a, q.c
	who := claimant{addr: c.id.Client}
	if c.inst == idSet {
		who = claimant{inst: c.instID}
	} else if q.hasID {
		who = claimant{inst: q.id}
	}
	cs := a.claimSet(group, member)
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
				if o := a.liveOther(cs, who, c); o != nil {
					q.fireCollision(group, member, who, o)
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
		other.who.addr.Addr() == who.addr.Addr() && q.movedMember(other, group, member) {
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
		q.fireCollision(group, member, who, other)
		fired = true
	}
	cs.list[slot] = claim{who: who, conn: c, fired: fired}
	a.markLapsed(cs, &cs.list[slot], c)
}

// maxMemberMoves is how many times a member ID may move between
// connections of one host (see collision) before the switching says two
// processes: a move and a move back are one process; a third switch, and
// every heartbeat of two processes is one, is not.
const maxMemberMoves = 3

// movedMember reports whether this request, the first for member on its
// connection while other (on the same host) holds it, may come from the
// same process that moved: a heartbeat past the join, or a join retried
// after the join on other's connection failed or got no answer (the
// coordinator moved under it).
func (q *reqCheck) movedMember(other *claim, group, member string) bool {
	if q.e.Body.MemberEpoch != 0 {
		return true
	}
	g := other.conn.members[group]
	return g != nil && g.join == member && (g.joinState == joinPending || g.joinState == joinFailed)
}

// fireCollision reports who using member in group while other holds it.
func (q *reqCheck) fireCollision(group, member string, who claimant, other *claim) {
	// observed names UUIDs in Java's form only, the message with hex too
	// (README, rule 14).
	other1 := other.conn.id.Client.String()
	other2 := other1
	if !other.who.inst.IsZero() {
		other1 = "instance " + JavaString(other.who.inst) + " (" + other1 + ")"
		other2 = "instance " + uuidText(other.who.inst) + ", " + other2
	}
	q.fire(rMemberCollision, detail{group: group, member: member, inst: who.inst,
		expected: "a member ID unique to one client", observed: "also used by " + other1,
		msg: "member ID " + memberText(member) + " in group " + strconv.Quote(group) + " is used at the same time by another client: " + other2})
}

// response matches a response with its remembered request.
func (a *Auditor) response(c *connState, e *decode.Event) {
	p, ok := c.takePending(e.CorrelationID)
	if !ok {
		return
	}
	if e.RequestAmbiguous {
		// Two requests shared the correlation ID: judging the broker by
		// an answer that may be the other request's could be wrong.
		a.t.stateLimited++
		return
	}
	b := &e.Body
	decoded := b.Decoded && !b.BodyError
	if p.hasInvalid && decoded && b.HasErrorCode && b.ErrorCode != errInvalidRequest {
		answered := p.invalid.rule()
		a.fire(c, e, rBrokerAcceptedInvalid, detail{reqFrame: p.frame, reqTime: p.time, kip: answered.KIP, expected: errName(errInvalidRequest),
			observed: errName(b.ErrorCode),
			msg:      "the broker accepted a request that breaks " + answered.ID + a.answeredAt(e) + "; a conforming broker answers INVALID_REQUEST"})
	}
	check := checkFor(p.key)
	switch {
	case !decoded && check.unread != nil:
		a.answer = p
		check.unread(c, e, &a.answer)
	case decoded && check.response != nil:
		a.answer = p
		check.response(a, c, e, &a.answer)
	}
}

// markJoinAnswered: a join was answered, whether with success or an error
// cannot be told (the body did not decode): no ghost can be claimed on it.
func markJoinAnswered(c *connState, e *decode.Event, p *pending) {
	if !p.join || p.member == "" {
		return
	}
	if g := c.tracker().group(p.group, e.Frame); g.join == p.member && g.joinState == joinPending {
		g.joinState = joinAnswered
	}
}

// answeredAt names the answer's frame in the message of a finding about
// its request (SPEC.md 3.5 findings carry the request's frame).
func (a *Auditor) answeredAt(e *decode.Event) string {
	capture, n := a.o.nameFrame(e.Frame)
	if capture != "" {
		return " (answered at frame " + strconv.FormatUint(n, 10) + " of " + capture + ")"
	}
	return " (answered at frame " + strconv.FormatUint(n, 10) + ")"
}

func (a *Auditor) heartbeatResponse(c *connState, e *decode.Event, p *pending) {
	b := &e.Body
	ok := !b.HasErrorCode || b.ErrorCode == 0
	g := c.tracker().group(p.group, e.Frame)
	if p.member != "" && g.join == p.member {
		switch {
		case ok:
			// The join's own answer, or a later heartbeat's (the join's
			// may have been lost in a gap): the broker knows the member.
			g.joinState = joinOK
		case p.join:
			g.joinState = joinFailed
		}
	}
	if !ok || !b.HasMemberID || b.MemberID == "" || b.MemberID == p.member {
		return
	}
	// The broker assigned a member ID: it is the broker's, not the client's.
	g.addAssigned(b.MemberID)
	a.markBrokerAssigned(p.group, b.MemberID)
	if p.member == "" {
		g.current = b.MemberID
	}
	if p.emptyRequired {
		a.fire(c, e, rBrokerGeneratedMember, detail{reqFrame: p.frame, reqTime: p.time, group: p.group, member: b.MemberID,
			expected: errName(errInvalidRequest), observed: b.MemberID,
			msg: "the broker generated a member ID for a join without one, at a version that requires a client-generated ID" + a.answeredAt(e)})
	}
}

func (a *Auditor) telemetryResponse(c *connState, e *decode.Event, p *pending) {
	b := &e.Body
	ok := !b.HasErrorCode || b.ErrorCode == 0
	id := b.TelemetryInstanceID
	switch {
	case p.telemetryRow == telemetryLegacyFirst:
		if !ok {
			return
		}
		if id.IsZero() {
			a.fire(c, e, rBrokerTelemetryMissing, detail{reqFrame: p.frame, reqTime: p.time, expected: "a new non-zero ClientInstanceId", observed: "0",
				msg: "the broker answered a first GetTelemetrySubscriptions with NONE and a zero ClientInstanceId" + a.answeredAt(e)})
			return
		}
		c.assignedB, c.hasAssigned = id, true
		r := a.telemetryOwner(c, a.ensureRow(c, e.Time, e.Frame), id)
		r.assignedB, r.hasAssigned, r.telemetry = id, true, id
	case p.telemetryRow.bodyIDSet():
		if !id.IsZero() {
			a.fire(c, e, rBrokerTelemetryEcho, detail{reqFrame: p.frame, reqTime: p.time, expected: "0", observed: JavaString(id),
				msg: "the broker answered a GetTelemetrySubscriptions that carried its ID with a non-zero ID (KIP-714 says 0)" + a.answeredAt(e)})
		}
	}
}
