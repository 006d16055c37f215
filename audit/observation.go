package audit

import (
	"time"

	"github.com/kwatch/kwatch/decode"
	"github.com/kwatch/kwatch/flow"
)

// The auditor has two parts (docs/architecture.md). The per-connection
// part (checks.go) follows one TCP connection: its first request, client
// ID, header instance ID, requests awaiting answers, and judges the rules
// that need nothing else (SPEC.md 3.1 but instance-id-reserved and
// -shared, 3.2, the telemetry table's rows, member-id-empty,
// leave-without-member-id, 3.5). The per-instance part (instance.go) keeps
// the report's rows, the member IDs of each client across its connections
// and who claims which member ID, and judges what spans connections:
// instance-id-reserved and -shared, member-id-changed and ghost-member
// (across a client instance's connections), the member-ID property rules
// (a member ID a broker assigned on any connection is not judged),
// member-id-collision and telemetry-id-not-adopted. It also attributes
// every finding to its row and case. The per-connection part hands it one
// Observation per step, in event order, and it reads nothing else of the
// connection: Observations are the seam at which fleet mode can send an
// agent's audit to the aggregator.

// Observer takes the steps of a per-connection part (ConnAuditor), in
// event order: an InstanceAuditor in the same process, or a fleet agent's
// publisher. o is the ConnAuditor's, refilled for its next step: valid
// only during the call (call o.Complete before reading what it fills
// lazily). v is likewise the ConnAuditor's.
type Observer interface {
	// Observe takes a step that is not a verdict.
	Observe(o *Observation)
	// Judge takes a StepVerdict: the finding the per-connection part
	// judged on the event o describes.
	Judge(o *Observation, v *Verdict)
}

// Tee hands every step to each Observer in turn (a live fleet agent: its
// local report and its publisher).
type Tee []Observer

// Observe hands o to each Observer.
func (t Tee) Observe(o *Observation) {
	for _, x := range t {
		x.Observe(o)
	}
}

// Judge hands o and v to each Observer.
func (t Tee) Judge(o *Observation, v *Verdict) {
	for _, x := range t {
		x.Judge(o, v)
	}
}

// Step says what an Observation reports.
type Step uint8

const (
	// StepVerdict: the per-connection part judged a rule; the finding
	// comes with the Observation (Auditor.verdict), to be attributed to
	// its client's row and case.
	StepVerdict Step = iota + 1
	// StepInstance: a request carried the header instance ID HeaderID and
	// the connection counts as that instance's (its first ID, or its
	// first non-malformed one).
	StepInstance
	// StepSoftware: ApiVersions named the client's software.
	StepSoftware
	// StepTelemetry: a telemetry request used the ID Telemetry; Set says
	// it is now the client's telemetry ID; AdoptedHere limits the
	// telemetry-id-not-adopted check to an ID this connection was given.
	StepTelemetry
	// StepTelemetryAssigned: the broker assigned Telemetry in answer to
	// a legacy first GetTelemetrySubscriptions.
	StepTelemetryAssigned
	// StepHeartbeat: a group heartbeat with a non-empty member ID.
	StepHeartbeat
	// StepHeartbeatAnswer: the decoded answer to a heartbeat (Group, MemberID
	// the request's, Join whether it was a join, Assigned the member ID
	// the broker assigned in it, OK no error).
	StepHeartbeatAnswer
	// StepJoinAnswered: the answer to a join with MemberID did not decode.
	StepJoinAnswered
	// StepConnEnd: the connection ended (Kafka: it was recognised);
	// StepConnClosed follows once its own last findings are made.
	StepConnEnd
	StepConnClosed
)

// Observation is what the per-connection part of the audit tells the
// per-instance part: a step, the event it comes from, and what the
// connection knows of its own identity at that moment. It holds values
// only (strings are owned) and is self-contained: the per-instance part
// needs no other state of the connection.
type Observation struct {
	Step Step

	// The event: its connection, packet, and PDU (PDU is KindRequest,
	// KindResponse, or KindConnEnd for a connection-level step).
	Conn          flow.ConnID
	Frame         uint64
	Time          time.Time
	PDU           decode.Kind
	APIKey        decode.APIKey
	APIVersion    int16
	CorrelationID int32

	// The connection's identity as its part knows it: its first client
	// ID (HasClientID false when the first was null or empty, or none was
	// seen), its first header instance ID (Instance, when InstanceFixed),
	// whether its first relevant request carried none (NoInstance), and
	// this request's well-formed non-zero header instance ID (HeaderID,
	// zero when none).
	ClientID      string
	HasClientID   bool
	Instance      decode.UUID
	InstanceFixed bool
	NoInstance    bool
	HeaderID      decode.UUID
	// FromStart: the connection was seen from its start; Partial: bytes
	// were lost before this event (or it was decoded after a resync).
	FromStart bool
	Partial   bool
	Kafka     bool

	Payload

	// book is where the per-instance part keeps its state of the
	// connection. In one process it lives beside the connection's own
	// state (one allocation, no lookup per event); a per-instance part fed
	// from elsewhere would keep books in a map by Conn.
	book *connBook
	// connOf: the connection Conn was filled for (fillRest).
	// lazyConn and lazyEvent: what complete fills the rest from;
	// lazyIdentity: the instance-ID fields too (instanceObservation).
	connOf       *connBook
	lazyConn     *connState
	lazyEvent    *decode.Event
	lazyIdentity bool
}

// Payload is what a step says beyond the event and the connection's
// identity; each step sets every field its doc comment names and the
// per-instance part reads no other (in the Auditor's reused Observation
// the others hold what an earlier step set: clearing them for every step
// cost a heartbeat a twentieth of its time).
type Payload struct {
	Group       string
	MemberID    string
	MemberEpoch int32
	Assigned    string
	OK          bool
	Join        bool
	Telemetry   decode.UUID
	Set         bool
	AdoptedHere bool
	Software    string
	SwVersion   string
}

// observation describes e on connection c for the per-instance part. It
// is the Auditor's one Observation, refilled for every step (a request
// with an instance ID is one step, and building a whole Observation for
// it cost a fifth of an ordinary event), valid until the next step.
func (a *ConnAuditor) observation(c *connState, e *decode.Event, step Step) *Observation {
	o := a.begin(c, step)
	o.lazyConn, o.lazyEvent = nil, nil
	fillIdentity(o, c, e)
	fillRest(o, c, e)
	return o
}

// lazyObservation is observation for the steps of most requests and
// answers (StepInstance, StepHeartbeat, StepHeartbeatAnswer), filled
// lazily: the fields their common case reads (Frame, Time, the instance
// IDs) now, the rest when the per-instance part first needs them
// (complete): filling all of it cost a heartbeat a tenth of its time. It
// keeps e until the next step, so e must outlive the call (an event on
// the caller's stack would escape). An Observation from elsewhere is
// always complete.
func (a *ConnAuditor) lazyObservation(c *connState, e *decode.Event, step Step) *Observation {
	o := a.begin(c, step)
	fillIdentity(o, c, e)
	o.lazyConn, o.lazyEvent, o.lazyIdentity = c, e, false
	return o
}

// instanceObservation is lazyObservation for StepInstance, the step of
// most requests, lazier still (and inlined): touchInstance's common case
// reads only Frame, Time, HeaderID (id) and NoInstance.
func (a *ConnAuditor) instanceObservation(c *connState, e *decode.Event, id decode.UUID) *Observation {
	o := a.begin(c, StepInstance)
	o.Frame, o.Time, o.HeaderID, o.NoInstance = e.Frame, e.Time, id, c.inst == idNone
	o.lazyConn, o.lazyEvent, o.lazyIdentity = c, e, true
	return o
}

// Complete fills what the per-connection part left to fill lazily (a
// no-op otherwise): an Observer reads only Step, Frame, Time, HeaderID,
// NoInstance, InstanceFixed, Instance and the step's Payload before
// calling it; an Observation it holds past its call, or encodes, must be
// complete. An Observation from elsewhere is always complete.
func (o *Observation) Complete() {
	if o.lazyConn != nil {
		c, e := o.lazyConn, o.lazyEvent
		o.lazyConn, o.lazyEvent = nil, nil
		if o.lazyIdentity {
			fillIdentity(o, c, e)
		}
		fillRest(o, c, e)
	}
}

// begin starts the Auditor's Observation for a step on c; the caller
// sets lazyConn and lazyEvent (pointer writes are not free).
func (a *ConnAuditor) begin(c *connState, step Step) *Observation {
	o := &a.obs
	o.book, o.Step = &c.book, step
	return o
}

// fillIdentity sets o's packet and instance-ID fields from e on c: what
// the per-instance part reads on every step.
func fillIdentity(o *Observation, c *connState, e *decode.Event) {
	o.Frame, o.Time = e.Frame, e.Time
	o.InstanceFixed, o.NoInstance = c.inst == idSet, c.inst == idNone
	o.Instance = decode.UUID{}
	if o.InstanceFixed {
		o.Instance = c.instID
	}
	o.HeaderID = decode.UUID{}
	if e.Kind == decode.KindRequest && e.HasInstanceID && e.TagProblem == decode.TagOK {
		o.HeaderID = e.InstanceID
	}
}

// fillRest sets the rest of o's event and identity fields from e on c.
func fillRest(o *Observation, c *connState, e *decode.Event) {
	if o.connOf != &c.book {
		// o.connOf keeps the last connection's state alive, so no other
		// connection's can be at its address: the same book is the same
		// connection, whose ID does not change.
		o.Conn, o.connOf = c.id, &c.book
	}
	o.PDU = e.Kind
	o.APIKey, o.APIVersion, o.CorrelationID = e.APIKey, e.APIVersion, e.CorrelationID
	o.ClientID, o.HasClientID = c.firstCID, c.cid == cidSet
	o.FromStart, o.Partial, o.Kafka = c.fromStart, e.Partial || c.gap, c.kafka
}

// findingInstance is the instance a finding on o belongs to, unless the
// check names one: the connection's first, else the request's.
func (o *Observation) findingInstance() decode.UUID {
	if o.InstanceFixed {
		return o.Instance
	}
	return o.HeaderID
}
