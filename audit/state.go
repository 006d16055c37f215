package audit

import (
	"container/list"
	"math/bits"
	"net/netip"
	"slices"
	"time"

	"github.com/kwatch/kwatch/decode"
	"github.com/kwatch/kwatch/flow"
)

// Bounds on per-connection and per-row state, so that memory does not grow
// with the number of requests (only with connections and client instances).
const (
	maxPending       = 16  // requests of interest awaiting a response, per connection (<= 16: pendingTable.used)
	maxJudged        = 256 // (group, member ID) pairs judged by property rules, per connection
	maxGroups        = 128 // groups tracked per member tracker (least recently used dropped)
	maxAssigned      = 4   // broker-assigned member IDs remembered per group
	maxRowList       = 16  // hosts, client IDs, brokers per row
	maxRowConns      = 32  // connections listed per row (all are counted)
	maxRowMemberIDs  = 64  // member IDs listed per group per row
	maxTouched       = 4   // rows one connection registered with
	maxClaimants     = 64  // claimants remembered per (group, member ID)
	claimsPerInstCap = 4   // claims map cap = claimsPerInstCap * MaxInstances
)

// allPending is pendingTable.used with every slot in use.
const allPending = 1<<maxPending - 1

type idState uint8

const (
	idUnknown      idState = iota // no request of the relevant header version yet
	idNone                        // the first one carried no instance ID
	idSet                         // the first one carried instID
	idUnobservable                // accepted-2026: the first request was not seen
)

type cidState uint8

const (
	cidUnseen cidState = iota // no v1+ request yet
	cidEmpty                  // the first one's client ID was null or empty
	cidSet                    // the first one's client ID is firstCID
)

type joinState uint8

const (
	joinNone    joinState = iota
	joinPending           // sent, no response yet (or never: connection lost)
	joinOK
	joinAnswered // answered with a body that could not be decoded
	joinFailed   // answered with an error
)

// groupTrack follows one client's member ID in one group.
type groupTrack struct {
	lastUse   uint64 // frame of the last request or response about the group
	current   string // last member ID the client used (or was assigned)
	join      string // member ID of the last join
	joinState joinState
	assigned  [maxAssigned]string // broker-assigned member IDs (ring)
	nAssigned int
}

func (g *groupTrack) isAssigned(m string) bool {
	for i := 0; i < g.nAssigned && i < maxAssigned; i++ {
		if g.assigned[i] == m {
			return true
		}
	}
	return false
}

func (g *groupTrack) addAssigned(m string) {
	if g.isAssigned(m) {
		return
	}
	g.assigned[g.nAssigned%maxAssigned] = m
	g.nAssigned++
}

// memberTrack is the member-ID history of one client: a connection, or an
// instance ID across its connections.
type memberTrack map[string]*groupTrack

// group returns the client's track of group name, used at frame. Past
// maxGroups the least recently used group is forgotten: which one depends
// on the capture only (frames, then names), never on map order, so that
// the same capture gives the same report.
func (t *memberTrack) group(name string, frame uint64) *groupTrack {
	if *t == nil {
		*t = make(memberTrack)
	}
	g := (*t)[name]
	if g == nil {
		if len(*t) >= maxGroups {
			var oldest string
			var o *groupTrack
			for k, v := range *t {
				if o == nil || v.lastUse < o.lastUse || v.lastUse == o.lastUse && k < oldest {
					oldest, o = k, v
				}
			}
			delete(*t, oldest)
		}
		g = &groupTrack{}
		(*t)[name] = g
	}
	if frame > g.lastUse {
		g.lastUse = frame
	}
	return g
}

// pending is a request of interest awaiting its response.
type pending struct {
	used  bool
	seq   uint64
	corr  int32
	key   decode.APIKey
	frame uint64
	time  time.Time
	// invalid: the request broke a rule a conforming broker rejects.
	invalid    ruleID
	hasInvalid bool
	// heartbeats
	group, member string
	join          bool
	emptyRequired bool
	// GetTelemetrySubscriptions: row of SPEC.md 3.3's table (1-5), 0 otherwise.
	telemetryRow telemetryCase
}

type memberKey struct{ group, member string }

// connState is the audit state of one TCP connection. Its size does not
// depend on the number of requests it carried.
type connState struct {
	// Fields read on every event come first, so that an event touches few
	// cache lines of the state.

	// owner tells the Auditor's states from another's in an Event.Slot;
	// swept says the state left conns (a new one is made on a next event).
	owner      *ConnAuditor
	swept      bool
	fromStart  bool
	gap        bool // a stream gap was seen: later findings are partial
	kafka      bool
	closed     bool
	inst       idState
	cid        cidState
	claimed    bool // sent a non-zero header instance ID (claims KIP-1313)
	instRepeat bool // accepted-2026: instance-id-repeated fired
	lastFrame  uint64
	instID     decode.UUID // set with setInstance
	// instText is JavaString(instID) once asked (setInstance clears it):
	// a client that drops its ID drops it on every request, and each
	// finding names it.
	instText string

	firstCID       string
	cidRepeats     uint64 // later requests repeating a client ID
	cidRepeatBytes uint64

	id flow.ConnID
	// pending is allocated with the first request of interest: most
	// connections (producers, fetchers) never have one, and the table is
	// four fifths of the state, whose first-touch page faults were a
	// visible part of a run's start (200 connections: ~80 faults).
	pending *pendingTable

	// book is the per-instance part's state of the connection, kept here
	// in one process (Observation.book); the per-connection part never
	// reads it.
	book connBook
}

// pendingTable is a connection's requests of interest awaiting answers.
type pendingTable struct {
	// used has bit i set when entries[i] is in use; corr[i] is its
	// correlation ID. Responses scan these, not the large entries.
	used uint16
	corr [maxPending]int32
	seq  uint64 // of the last entry added
	// entries grows as slots are first needed: most connections have one
	// or two requests of interest in flight, and the whole table was
	// three quarters of a heartbeating connection's memory.
	entries []pending
}

// addPending takes the first free slot, else evicts the oldest request.
func (c *connState) addPending(p pending) (evicted bool) {
	t := c.pending
	if t == nil {
		t = new(pendingTable)
		c.pending = t
	}
	t.seq++
	p.used, p.seq = true, t.seq
	slot := bits.TrailingZeros16(^t.used)
	switch {
	case t.used == allPending:
		slot, evicted = 0, true
		for i := range t.entries {
			if t.entries[i].seq < t.entries[slot].seq {
				slot = i
			}
		}
	case slot == len(t.entries):
		t.entries = append(t.entries, pending{})
	}
	t.entries[slot] = p
	t.used |= 1 << slot
	t.corr[slot] = p.corr
	return evicted
}

// takePending returns the request with correlation ID corr (the one in
// the lowest slot, should two share it) and frees its slot; the caller
// clears the entry when done with it, before the next addPending.
func (c *connState) takePending(corr int32) (*pending, bool) {
	t := c.pending
	if t == nil {
		return nil, false
	}
	for m := t.used; m != 0; m &= m - 1 {
		i := bits.TrailingZeros16(m)
		if t.corr[i] == corr {
			t.used &^= 1 << i
			return &t.entries[i], true
		}
	}
	return nil, false
}

// unregister forgets the rows c registered with, which no longer count it
// as open.
func (c *connBook) unregister() {
	for i := range int(c.nTouched) {
		c.touched[i].open--
		c.touched[i] = nil
	}
	c.nTouched = 0
}

// registered tells whether c counts as one of r's open connections.
func (c *connBook) registered(r *row) bool {
	for i := range int(c.nTouched) {
		if c.touched[i] == r {
			return true
		}
	}
	return false
}

// instRow is the connection's row for its header instance ID, if any.
func (c *connBook) instRow() *row {
	if c.row != nil && !c.row.legacy && !c.row.evicted {
		return c.row
	}
	return nil
}

// tracker is where the connection's member IDs are followed: the instance
// (across connections) when the connection has an instance ID, else itself.
func (c *connBook) tracker(o *Observation) *memberTrack {
	if r := c.instRow(); r != nil && o.InstanceFixed {
		return &r.members
	}
	return &c.members
}

// connBook is what the per-instance part of the audit keeps of one
// connection, from its Observations.
//
// Its size is what every open connection costs beside its own state (100k
// open connections: issue 12), so what few connections use sits behind
// pointers, allocated when first used.
type connBook struct {
	// id is the connection's: in one process, its connState's.
	id       *flow.ConnID
	closed   bool
	nTouched uint8
	row      *row // primary row: first instance row, else legacy row
	lastInst *row // cache of the last instance row touched
	touched  [maxTouched]*row

	software *clientSoftware // ApiVersions' client software name and version

	members memberTrack // used when the connection has no instance row
	judged  map[memberKey]struct{}

	assignedB *decode.UUID // broker-assigned telemetry ID (legacy flow)

	last *repeatCache // the connection's last finding (Auditor.repeat)
}

// clientSoftware is a client's software name and version (ApiVersions), one
// for all the connections and rows that name it (Auditor.softwareOf).
type clientSoftware struct{ name, version string }

// named tells whether s has a name.
func (s *clientSoftware) named() bool { return s != nil && s.name != "" }

func (s *clientSoftware) nameOr() string {
	if s == nil {
		return ""
	}
	return s.name
}

func (s *clientSoftware) versionOr() string {
	if s == nil {
		return ""
	}
	return s.version
}

// maxSoftware bounds the distinct software names and versions shared;
// past it each connection keeps its own.
const maxSoftware = 1024

// softwareOf is the shared software of that name and version.
func (a *InstanceAuditor) softwareOf(name, version string) *clientSoftware {
	k := clientSoftware{name, version}
	if s := a.software[k]; s != nil {
		return s
	}
	s := &k
	if len(a.software) < maxSoftware {
		a.software[k] = s
	}
	return s
}

type legacyKey struct {
	host     netip.Addr
	clientID string
	// process tells apart processes of one host and client ID that the
	// capture shows to be several (legacy.go); 0 for the first.
	process uint16
}

// row is one line of the report: a client instance (non-zero header
// instance ID) or a legacy client (client IP, first client ID).
type row struct {
	// What every request of the row touches comes first.
	legacy   bool
	evicted  bool
	id       decode.UUID
	elem     *list.Element
	lastSeen time.Time

	lkey       legacyKey
	firstFrame uint64
	firstSeen  time.Time

	hosts     []netip.Addr
	clientIDs []string
	brokers   []netip.AddrPort
	software  *clientSoftware
	conns     int
	open      int // connections registered with the row and not yet ended
	connList  []flow.ConnID
	memberIDs map[string]*rowMembers
	// findings counts the row's findings by rule, allocated with its
	// first: most rows have none, and the counts were a third of a row.
	findings *[numRules]uint64
	tel      *rowTelemetry // nil until the row meets a telemetry ID
	members  memberTrack

	reservedFired, sharedFired bool
}

// rowTelemetry is what a row knows of telemetry IDs (SPEC.md 3.3), apart
// from the row: most clients never send GetTelemetrySubscriptions, and
// with 100k open connections a row per client is most of the audit's
// memory.
type rowTelemetry struct {
	id          decode.UUID // the client's telemetry ID
	by          flow.ConnID // the connection that set id (legacy.go)
	assigned    decode.UUID // the ID the broker assigned, if hasAssigned
	hasAssigned bool
}

// telemetry is r's telemetry state, made on first use.
func (r *row) telemetry() *rowTelemetry {
	if r.tel == nil {
		r.tel = new(rowTelemetry)
	}
	return r.tel
}

// telemetryID is r's telemetry ID (zero: none).
func (r *row) telemetryID() decode.UUID {
	if r.tel == nil {
		return decode.UUID{}
	}
	return r.tel.id
}

// rowMembers are the member IDs a row used in one group, each with its
// last epoch (the groups view shows it). The epochs sit beside the IDs so
// that a heartbeat updates one in place: a map keyed group NUL member cost
// a heartbeat a string concatenation, an allocation and a map write.
type rowMembers struct {
	ids    []string
	epochs []int32 // epochs[i] is the last epoch of ids[i]
}

// addMemberID records that the row used member in group, last with
// epoch.
func (r *row) addMemberID(group, member string, epoch int32) {
	if r.memberIDs == nil {
		r.memberIDs = make(map[string]*rowMembers)
	}
	m := r.memberIDs[group]
	if m == nil {
		if len(r.memberIDs) >= maxGroups {
			return
		}
		m = &rowMembers{}
		r.memberIDs[group] = m
	}
	if i := slices.Index(m.ids, member); i >= 0 {
		m.epochs[i] = epoch
		return
	}
	if len(m.ids) < maxRowMemberIDs {
		m.ids, m.epochs = append(m.ids, member), append(m.epochs, epoch)
	}
}

// telemetryCase is the row of SPEC.md 3.3's GetTelemetrySubscriptions
// table a request falls in (H: header instance ID, R: body ID).
type telemetryCase uint8

const (
	telemetryNone        telemetryCase = iota
	telemetryLegacyFirst               // H absent, R = 0: the broker assigns B
	telemetryLegacyLater               // H absent, R != 0: R is the telemetry ID
	telemetryAligned                   // R = H: compliant
	telemetryRequested                 // H, R = 0: INVALID_REQUEST
	telemetryMismatch                  // H, R != H: INVALID_REQUEST
)

// bodyIDSet: the rows whose request carries a non-zero body ID, which a
// KIP-714 broker answers with a zero ID.
func (t telemetryCase) bodyIDSet() bool {
	return t == telemetryLegacyLater || t == telemetryAligned || t == telemetryMismatch
}

// setInstance fixes the connection's instance ID.
func (c *connState) setInstance(id decode.UUID) {
	c.inst, c.instID, c.instText = idSet, id, ""
}

// instIDText is JavaString(c.instID), spelled once per ID.
func (c *connState) instIDText() string {
	if c.instText == "" {
		c.instText = JavaString(c.instID)
	}
	return c.instText
}
