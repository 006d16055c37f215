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
func (a *ConnAuditor) headerVersion(e *decode.Event) int8 {
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
	a     *ConnAuditor
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

func (q *reqCheck) fire(r ruleID, d *Verdict) {
	q.a.fire(q.c, q.e, r, d)
	if !q.hasInvalid && r.rule().BrokerRejects && cmp.Or(d.Severity, r.rule().Severity) == SeverityError && r.runsUnder(q.a.o.Profile) {
		q.invalid, q.hasInvalid = r, true
	}
}

func (a *ConnAuditor) request(c *connState, e *decode.Event) {
	q := reqCheck{a: a, c: c, e: e, hv: a.headerVersion(e)}
	if q.hv >= 0 && int(q.hv) < len(a.n.requests) {
		a.n.requests[q.hv]++
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
		q.invalid, q.hasInvalid = a.req.invalid, a.req.hasInvalid
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
	response func(*ConnAuditor, *connState, *decode.Event, *pending)
	unread   func(*ConnAuditor, *connState, *decode.Event, *pending)
	// rememberInvalid: a request whose own check remembers nothing is
	// still remembered when it broke a rule a conforming broker rejects,
	// so that broker-accepted-invalid judges the answer's error code.
	rememberInvalid bool
}

// apiChecks is indexed by API key (an array: it is read for every
// request); keys outside it have no check.
var apiChecks = apiCheckTable()

func apiCheckTable() (t [decode.KeyStreamsGroupHeartbeat + 1]apiCheck) {
	heartbeat := apiCheck{request: (*reqCheck).heartbeat, response: (*ConnAuditor).heartbeatResponse, unread: (*ConnAuditor).joinAnswered}
	t[decode.KeySASLHandshake] = apiCheck{rememberInvalid: true}
	t[decode.KeyAPIVersions] = apiCheck{request: (*reqCheck).software, rememberInvalid: true}
	t[decode.KeyGetTelemetrySubscriptions] = apiCheck{request: (*reqCheck).getTelemetry, response: (*ConnAuditor).telemetryResponse}
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

// observe hands the per-instance part a step of this request.
func (q *reqCheck) observe(step Step) {
	o := q.a.observation(q.c, q.e, step)
	q.a.next.Observe(o)
}

// telemetry hands the per-instance part a use of telemetry ID id.
func (q *reqCheck) telemetry(id decode.UUID, set, adoptedHere bool) {
	o := q.a.observation(q.c, q.e, StepTelemetry)
	o.Telemetry, o.Set, o.AdoptedHere = id, set, adoptedHere
	q.a.next.Observe(o)
}

// software: ApiVersions names the client's software.
func (q *reqCheck) software() {
	b := &q.e.Body
	if b.ClientSoftwareName == "" && b.ClientSoftwareVersion == "" {
		return
	}
	o := q.a.observation(q.c, q.e, StepSoftware)
	o.Software, o.SwVersion = b.ClientSoftwareName, b.ClientSoftwareVersion
	q.a.next.Observe(o)
}

func (q *reqCheck) remember(p pending) {
	p.corr, p.frame, p.time = q.e.CorrelationID, q.e.Frame, q.e.Time
	p.invalid, p.hasInvalid = q.invalid, q.hasInvalid
	if q.c.addPending(p) {
		q.a.n.pendingEvicted++
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
			q.fire(rClientIDMissingFirst, &Verdict{Expected: "client ID on the first request",
				Observed: string(e.ClientID),
				Message:  "the connection's first request had no client ID; the broker keeps it and ignores this one"})
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
			q.a.n.cidRepeats++
			q.a.n.cidRepeatBytes += n
		}
		if string(e.ClientID) != c.firstCID {
			q.fire(rClientIDChanged, &Verdict{Expected: c.firstCID, Observed: string(e.ClientID),
				Message: "client ID differs from the connection's first; the broker attributes this request to the first"})
		}
	}
}

// instanceChanged fires instance-id-changed (SPEC.md 3.1, and section 4
// for v3 headers): the request's instance ID is not the connection's first.
func (q *reqCheck) instanceChanged() {
	q.fire(rInstanceChanged, &Verdict{Expected: JavaString(q.c.instID), Observed: JavaString(q.id),
		Message: "instance ID changed mid-connection; a conforming broker rejects this request with INVALID_REQUEST"})
}

// instanceID applies SPEC.md 3.1 (or section 4) to a v2+ header.
func (q *reqCheck) instanceID() {
	e := q.e
	if e.TagProblem != decode.TagOK {
		q.fire(rInstanceMalformed, &Verdict{Expected: "tag 0 of 16 bytes, tags ascending and within the header",
			Observed: e.TagProblem.String(),
			Message:  "malformed request header tagged fields (" + e.TagProblem.String() + "); a conforming broker rejects this request"})
		return
	}
	if q.hasID {
		q.c.claimed = true
		// A connection's client row is its first instance ID's: an ID
		// it changes to shows in the findings, not as a client of its own.
		if q.c.inst != idSet || q.c.instID == q.id {
			q.a.next.Observe(q.a.instanceObservation(q.c, q.e, q.id))
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
			c.setInstance(q.id)
		} else {
			c.inst = idNone
		}
	case idSet:
		if !q.hasID {
			q.fire(rInstanceDropped, &Verdict{Expected: c.instIDText(), Observed: "none",
				Message: "instance ID dropped mid-connection; a conforming broker rejects this request with INVALID_REQUEST"})
		} else if q.id != c.instID {
			q.instanceChanged()
		}
	case idNone:
		if q.hasID {
			q.fire(rInstanceLate, &Verdict{Expected: "none", Observed: JavaString(q.id), Instance: q.id,
				Message: "instance ID set after a first v2 request without one; a conforming broker rejects this request with INVALID_REQUEST"})
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
			q.a.n.unobservable++
			c.inst = idUnobservable
			if q.hasID {
				c.setInstance(q.id)
			}
		case q.hasID:
			c.setInstance(q.id)
		default:
			c.inst = idNone
			q.fire(rInstanceMissingFirst, &Verdict{Expected: "an instance ID", Observed: "none",
				Message: "the connection's first v3-header request carries no instance ID"})
		}
	case idUnobservable:
		if q.hasID {
			c.setInstance(q.id)
		}
	case idSet:
		if !q.hasID {
			return
		}
		if q.id != c.instID {
			q.instanceChanged()
		} else if !c.instRepeat {
			c.instRepeat = true
			q.fire(rInstanceRepeated, &Verdict{Expected: "none after the first request", Observed: JavaString(q.id),
				Message: "the instance ID is repeated after the connection's first request (" + strconv.Itoa(instanceTagBytes) + " header bytes per request)"})
		}
	}
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
		// Asking again on a connection that was given B: B is not used
		// (only this connection: a legacy client on another one may be a
		// restarted process).
		q.telemetry(r, false, true)
	case h.IsZero():
		tableRow = telemetryLegacyLater
		q.telemetry(r, true, false)
	case r == h:
		tableRow = telemetryAligned
		q.telemetry(r, true, false)
	case r.IsZero():
		tableRow = telemetryRequested
		q.fire(rTelemetryRequestedWithHeader, &Verdict{Expected: JavaString(h), Observed: "0",
			Message: "GetTelemetrySubscriptions asks the broker for a telemetry ID while sending header instance ID; a conforming broker answers INVALID_REQUEST"})
	default:
		tableRow = telemetryMismatch
		q.fire(rTelemetryMismatch, &Verdict{Expected: JavaString(h), Observed: JavaString(r),
			Message: "telemetry ClientInstanceId differs from the header instance ID; a conforming broker answers INVALID_REQUEST"})
	}
	q.remember(pending{key: decode.KeyGetTelemetrySubscriptions, telemetryRow: tableRow})
}

func (q *reqCheck) pushTelemetry() {
	r := q.e.Body.TelemetryInstanceID
	switch {
	case r.IsZero():
		q.fire(rTelemetryZeroPush, &Verdict{Expected: "a non-zero ClientInstanceId", Observed: "0",
			Message: "PushTelemetry with a zero ClientInstanceId; a conforming broker rejects it"})
	case q.hasID && r != q.id:
		q.fire(rTelemetryMismatch, &Verdict{Expected: JavaString(q.id), Observed: JavaString(r),
			Message: "PushTelemetry ClientInstanceId differs from the header instance ID"})
	default:
		q.telemetry(r, true, false)
	}
	q.remember(pending{key: decode.KeyPushTelemetry})
}

// memberRequired: is a client-generated member ID required at this version?
func (a *ConnAuditor) memberRequired(key decode.APIKey, version int16) bool {
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
			q.fire(rMemberEmpty, &Verdict{Severity: sev, Group: group, Expected: "a client-generated UUID", Observed: "\"\"",
				Message: "group join with an empty member ID; " + why})
		case leave:
			q.fire(rLeaveWithoutMember, &Verdict{Group: group, Expected: "the member ID of the join", Observed: "\"\"",
				Message: "leave with an empty member ID; the broker answers UNKNOWN_MEMBER_ID and a ghost member stays until its session times out"})
		}
		q.remember(p)
		return
	}
	o := q.a.lazyObservation(q.c, q.e, StepHeartbeat)
	o.Group, o.MemberID, o.MemberEpoch = group, member, epoch
	q.a.next.Observe(o)
	q.remember(p)
}

// maxMemberMoves is how many times a member ID may move between
// connections of one host (see collision) before the switching says two
// processes: a move and a move back are one process; a third switch, and
// every heartbeat of two processes is one, is not.
const maxMemberMoves = 3

// response matches a response with its remembered request.
func (a *ConnAuditor) response(c *connState, e *decode.Event) {
	p, ok := c.takePending(e.CorrelationID)
	if !ok {
		return
	}
	a.answer(c, e, p)
	*p = pending{}
}

// answer judges response e to the remembered request p.
func (a *ConnAuditor) answer(c *connState, e *decode.Event, p *pending) {
	if e.RequestAmbiguous {
		// Two requests shared the correlation ID: judging the broker by
		// an answer that may be the other request's could be wrong.
		a.n.stateLimited++
		return
	}
	b := &e.Body
	decoded := b.Decoded && !b.BodyError
	if p.hasInvalid && decoded && b.HasErrorCode && b.ErrorCode != errInvalidRequest {
		answered := p.invalid.rule()
		a.fire(c, e, rBrokerAcceptedInvalid, &Verdict{RequestFrame: p.frame, RequestTime: p.time, KIP: answered.KIP, Expected: errName(errInvalidRequest),
			Observed: errName(b.ErrorCode),
			Message:  "the broker accepted a request that breaks " + answered.ID + a.answeredAt(e) + "; a conforming broker answers INVALID_REQUEST"})
	}
	check := checkFor(p.key)
	switch {
	case !decoded && check.unread != nil:
		check.unread(a, c, e, p)
	case decoded && check.response != nil:
		check.response(a, c, e, p)
	}
}

// answeredAt names the answer's frame in the message of a finding about
// its request (SPEC.md 3.5 findings carry the request's frame).
func (a *ConnAuditor) answeredAt(e *decode.Event) string {
	capture, n := a.o.nameFrame(e.Frame)
	if capture != "" {
		return " (answered at frame " + strconv.FormatUint(n, 10) + " of " + capture + ")"
	}
	return " (answered at frame " + strconv.FormatUint(n, 10) + ")"
}

func (a *ConnAuditor) heartbeatResponse(c *connState, e *decode.Event, p *pending) {
	b := &e.Body
	o := a.lazyObservation(c, e, StepHeartbeatAnswer)
	o.Group, o.MemberID, o.Join = p.group, p.member, p.join
	o.OK = !b.HasErrorCode || b.ErrorCode == 0
	o.Assigned = ""
	if o.OK && b.HasMemberID && b.MemberID != "" && b.MemberID != p.member {
		o.Assigned = b.MemberID
	}
	a.next.Observe(o)
	if o.Assigned != "" && p.emptyRequired {
		a.fire(c, e, rBrokerGeneratedMember, &Verdict{RequestFrame: p.frame, RequestTime: p.time, Group: p.group, MemberID: b.MemberID,
			Expected: errName(errInvalidRequest), Observed: b.MemberID,
			Message: "the broker generated a member ID for a join without one, at a version that requires a client-generated ID" + a.answeredAt(e)})
	}
}

// joinAnswered: a join was answered, whether with success or an error
// cannot be told (the body did not decode).
func (a *ConnAuditor) joinAnswered(c *connState, e *decode.Event, p *pending) {
	if !p.join || p.member == "" {
		return
	}
	o := a.observation(c, e, StepJoinAnswered)
	o.Group, o.MemberID = p.group, p.member
	a.next.Observe(o)
}

func (a *ConnAuditor) telemetryResponse(c *connState, e *decode.Event, p *pending) {
	b := &e.Body
	ok := !b.HasErrorCode || b.ErrorCode == 0
	id := b.TelemetryInstanceID
	switch {
	case p.telemetryRow == telemetryLegacyFirst:
		if !ok {
			return
		}
		if id.IsZero() {
			a.fire(c, e, rBrokerTelemetryMissing, &Verdict{RequestFrame: p.frame, RequestTime: p.time, Expected: "a new non-zero ClientInstanceId", Observed: "0",
				Message: "the broker answered a first GetTelemetrySubscriptions with NONE and a zero ClientInstanceId" + a.answeredAt(e)})
			return
		}
		o := a.observation(c, e, StepTelemetryAssigned)
		o.Telemetry = id
		a.next.Observe(o)
	case p.telemetryRow.bodyIDSet():
		if !id.IsZero() {
			a.fire(c, e, rBrokerTelemetryEcho, &Verdict{RequestFrame: p.frame, RequestTime: p.time, Expected: "0", Observed: JavaString(id),
				Message: "the broker answered a GetTelemetrySubscriptions that carried its ID with a non-zero ID (KIP-714 says 0)" + a.answeredAt(e)})
		}
	}
}
