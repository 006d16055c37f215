package audit

import (
	"encoding/base64"
	"net/netip"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/kwatch/kwatch/decode"
	"github.com/kwatch/kwatch/flow"
)

var (
	t0 = time.Date(2026, 11, 29, 16, 49, 25, 123456789, time.UTC)

	connA  = flow.ConnID{Client: netip.MustParseAddrPort("10.0.0.5:53122"), Broker: netip.MustParseAddrPort("10.0.0.9:9092"), StartFrame: 1}
	connA2 = flow.ConnID{Client: netip.MustParseAddrPort("10.0.0.5:53123"), Broker: netip.MustParseAddrPort("10.0.0.9:9092"), StartFrame: 2}
	connB  = flow.ConnID{Client: netip.MustParseAddrPort("10.0.0.6:40000"), Broker: netip.MustParseAddrPort("10.0.0.9:9092"), StartFrame: 3}
	connC  = flow.ConnID{Client: netip.MustParseAddrPort("10.0.0.7:40000"), Broker: netip.MustParseAddrPort("10.0.0.10:9092"), StartFrame: 4}

	idA  = decode.UUID{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
	idB  = decode.UUID{15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0}
	v4A  = decode.UUID(uuid.MustParse("3b241101-e2bb-4255-8caf-4136c566a962"))
	v4B  = decode.UUID(uuid.MustParse("16fd2706-8baf-433b-82eb-259fcb5ce0a2"))
	v4FF = decode.UUID{0xff, 0xff, 0xff, 0xfb, 0xef, 0xbe, 0x4f, 0xff, 0x8f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	v1U  = decode.UUID(uuid.MustParse("c232ab00-9414-11ec-b3c8-9f6bdeced846"))
)

func padded(u decode.UUID) string { return base64.URLEncoding.EncodeToString(u[:]) }
func stdRaw(u decode.UUID) string { return base64.RawStdEncoding.EncodeToString(u[:]) }

// sc builds an event sequence by hand, as the decoder would deliver it.
type sc struct {
	a     *Auditor
	frame uint64
	corr  map[flow.ConnID]int32
	now   time.Time
	got   []Finding // from OnFinding
	// slots, when not nil, gives each connection an Event.Slot, as the
	// decoder does; else events have none and the Auditor looks them up.
	slots map[flow.ConnID]*any
	// also receive every event after a (sinks sharing the Slots).
	also []*Auditor
}

// withSlots makes s's events carry a Slot per connection.
func (s *sc) withSlots() *sc {
	s.slots = map[flow.ConnID]*any{}
	return s
}

// emit hands e, with c's Slot if s has slots, to the Auditor.
func (s *sc) emit(e *decode.Event) {
	if s.slots != nil {
		if s.slots[e.Conn] == nil {
			s.slots[e.Conn] = new(any)
		}
		e.Slot = s.slots[e.Conn]
	}
	s.a.Event(e)
	for _, o := range s.also {
		o.Event(e)
	}
}

func newSC(o Options) *sc {
	s := &sc{corr: map[flow.ConnID]int32{}, now: t0}
	o.OnFinding = func(f Finding) { s.got = append(s.got, f) }
	s.a = New(o)
	return s
}

type opt func(*decode.Event)

func cid(v string) opt {
	return func(e *decode.Event) { e.ClientID, e.ClientIDNull = []byte(v), false }
}
func nullCID() opt      { return func(e *decode.Event) { e.ClientID, e.ClientIDNull = nil, true } }
func hv(v int8) opt     { return func(e *decode.Event) { e.HeaderVersion = v } }
func partialEv() opt    { return func(e *decode.Event) { e.Partial = true } }
func notFromStart() opt { return func(e *decode.Event) { e.FromStart = false } }
func inst(u decode.UUID) opt {
	return func(e *decode.Event) { e.InstanceID, e.HasInstanceID = u, true }
}
func tagProblem(p decode.TagProblem) opt { return func(e *decode.Event) { e.TagProblem = p } }
func hb(group, member string, epoch int32) opt {
	return func(e *decode.Event) {
		e.Body.Decoded, e.Body.Group, e.Body.MemberID, e.Body.HasMemberID, e.Body.MemberEpoch = true, group, member, true, epoch
	}
}
func tel(u decode.UUID) opt {
	return func(e *decode.Event) {
		e.Body.Decoded, e.Body.TelemetryInstanceID, e.Body.HasTelemetryInstanceID = true, u, true
	}
}
func errCode(c int16) opt {
	return func(e *decode.Event) { e.Body.Decoded, e.Body.ErrorCode, e.Body.HasErrorCode = true, c, true }
}
func respMember(m string) opt {
	return func(e *decode.Event) { e.Body.Decoded, e.Body.MemberID, e.Body.HasMemberID = true, m, true }
}
func software(n, v string) opt {
	return func(e *decode.Event) {
		e.Body.Decoded, e.Body.ClientSoftwareName, e.Body.ClientSoftwareVersion = true, n, v
	}
}

func (s *sc) tick() {
	s.frame++
	s.now = s.now.Add(time.Millisecond)
}

func (s *sc) start(c flow.ConnID, fromStart bool) {
	s.tick()
	s.emit(&decode.Event{Kind: decode.KindConnStart, Conn: c, Frame: s.frame, Time: s.now, FromStart: fromStart})
}

// req sends a request (default: header v2, null client ID, no instance
// ID, from start) and returns its correlation ID.
func (s *sc) req(c flow.ConnID, key decode.APIKey, ver int16, opts ...opt) int32 {
	s.tick()
	s.corr[c]++
	e := &decode.Event{Kind: decode.KindRequest, Conn: c, Frame: s.frame, Time: s.now, FromStart: true,
		APIKey: key, APIVersion: ver, HeaderVersion: 2, CorrelationID: s.corr[c], ClientIDNull: true}
	for _, o := range opts {
		o(e)
	}
	s.emit(e)
	return e.CorrelationID
}

func (s *sc) resp(c flow.ConnID, key decode.APIKey, ver int16, corr int32, opts ...opt) {
	s.tick()
	e := &decode.Event{Kind: decode.KindResponse, Conn: c, Frame: s.frame, Time: s.now, FromStart: true,
		APIKey: key, APIVersion: ver, HeaderVersion: 1, CorrelationID: corr}
	for _, o := range opts {
		o(e)
	}
	s.emit(e)
}

func (s *sc) cover(c flow.ConnID, cv decode.Coverage) {
	s.tick()
	s.emit(&decode.Event{Kind: decode.KindCoverage, Conn: c, Frame: s.frame, Time: s.now, Coverage: cv})
}

func (s *sc) end(c flow.ConnID) {
	s.tick()
	s.emit(&decode.Event{Kind: decode.KindConnEnd, Conn: c, Frame: s.frame, Time: s.now})
}

func (s *sc) finish() *Report { return s.a.Finish(s.now) }

// counts tallies findings by rule.
func counts(fs []Finding) map[string]int {
	m := map[string]int{}
	for _, f := range fs {
		m[f.Rule]++
	}
	return m
}

func findRule(fs []Finding, rule string) *Finding {
	for i := range fs {
		if fs[i].Rule == rule {
			return &fs[i]
		}
	}
	return nil
}

func mustEqualCounts(t *testing.T, got map[string]int, want map[string]int) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("rule %s: got %d findings, want %d (all: %v)", k, got[k], v, got)
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected rule %s x%d (all: %v)", k, v, got)
		}
	}
}
