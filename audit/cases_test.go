package audit

import (
	"net/netip"
	"slices"
	"testing"

	"github.com/kwatch/kwatch/decode"
)

// TestCasesCountEveryFinding: a client that repeats its fault gives one
// case with the exact count and where it was first and last seen, also
// when the findings themselves are no longer kept; cases sort by
// severity, then count; their counts add up to the totals by rule.
func TestCasesCountEveryFinding(t *testing.T) {
	for _, maxFindings := range []int{0, 1} {
		s := newSC(Options{MaxFindings: maxFindings})
		s.start(connA, true)
		s.start(connB, true)
		s.req(connA, 3, 12, inst(v4A), cid("a"))
		s.req(connB, 3, 12, inst(v4B), cid("b"))
		var firstA, lastA uint64
		for i := range 3 {
			s.req(connA, 3, 12) // instance-id-dropped, every time
			if i == 0 {
				firstA = s.frame
			}
			lastA = s.frame
		}
		s.req(connB, 3, 12)
		s.req(connB, 3, 12, cid("b2"), inst(v4B)) // client-id-changed (warn)
		rep := s.finish()
		// b also repeats its client ID: client-id-repeated (info), last.
		if len(rep.Cases) != 4 || rep.Cases[3].Rule != "client-id-repeated" {
			t.Fatalf("max %d: %d cases, want 4: %+v", maxFindings, len(rep.Cases), rep.Cases)
		}
		a, b, w := rep.Cases[0], rep.Cases[1], rep.Cases[2]
		if a.Rule != "instance-id-dropped" || a.Count != 3 || a.InstanceID != JavaString(v4A) ||
			a.First.Frame != firstA || a.Last.Frame != lastA || a.Fix == "" || a.Severity != SeverityError {
			t.Errorf("first case %+v", a)
		}
		if b.Rule != "instance-id-dropped" || b.Count != 1 || b.InstanceID != JavaString(v4B) {
			t.Errorf("second case %+v", b)
		}
		if w.Rule != "client-id-changed" || w.Severity != SeverityWarn {
			t.Errorf("third case %+v", w)
		}
		byRule := map[string]uint64{}
		for _, c := range rep.Cases {
			byRule[c.Rule] += c.Count
		}
		for r, n := range rep.Totals.FindingsByRule {
			if byRule[r] != n {
				t.Errorf("cases count %d of %s, totals %d", byRule[r], r, n)
			}
		}
	}
}

// TestBrokerCasesNameTheBroker: a 3.5 rule's case is the broker's, and
// the client software rollup does not count it against the client.
func TestBrokerCasesNameTheBroker(t *testing.T) {
	s := newSC(Options{})
	s.start(connA, true)
	s.req(connA, 18, 3, inst(v4A), cid("a"), software("lib", "1.0"))
	corr := s.req(connA, 68, 1, inst(v4A), hb("g", "", 0)) // member-id-empty
	s.resp(connA, 68, 1, corr, errCode(0))                 // broker-accepted-invalid
	rep := s.finish()
	var broker, client *Case
	for i := range rep.Cases {
		switch rep.Cases[i].Rule {
		case "broker-accepted-invalid":
			broker = &rep.Cases[i]
		case "member-id-empty":
			client = &rep.Cases[i]
		}
	}
	if broker == nil || broker.Broker != connA.Broker.String() || broker.InstanceID != "" {
		t.Errorf("broker case %+v", broker)
	}
	if client == nil || client.InstanceID != JavaString(v4A) || client.SoftwareName != "lib" {
		t.Errorf("client case %+v", client)
	}
	if len(rep.Software) != 1 || rep.Software[0].Findings["broker-accepted-invalid"] != 0 ||
		rep.Software[0].Findings["member-id-empty"] != 1 || rep.Software[0].Breaking != 1 {
		t.Errorf("software rollup %+v", rep.Software)
	}
}

// TestGroupAndBrokerViews: the groups view names who holds each member ID
// and marks one held by two clients; the brokers view counts clients and
// the broker rules' findings.
func TestGroupAndBrokerViews(t *testing.T) {
	s := newSC(Options{})
	s.start(connA, true)
	s.start(connB, true)
	s.req(connA, 68, 1, inst(v4A), hb("g", "shared-member", 0))
	s.req(connB, 68, 1, cid("b"), hb("g", "shared-member", 0))
	corr := s.req(connB, 68, 1, cid("b"), hb("g2", "", 0)) // member-id-empty
	s.resp(connB, 68, 1, corr, errCode(0))                 // broker-accepted-invalid
	rep := s.finish()
	// An empty member ID (group g2) holds nothing: only g shows.
	if len(rep.Groups) != 1 || rep.Groups[0].Group != "g" {
		t.Fatalf("groups %+v", rep.Groups)
	}
	m := rep.Groups[0].Members
	if len(m) != 1 || m[0].MemberID != "shared-member" || !m[0].Shared || len(m[0].Clients) != 2 {
		t.Errorf("group g members %+v", m)
	}
	if len(rep.Brokers) != 1 || rep.Brokers[0].Clients != 2 || rep.Brokers[0].Findings["broker-accepted-invalid"] != 1 {
		t.Errorf("brokers %+v", rep.Brokers)
	}
}

// TestGroupViewEpochs: each member ID in the groups view shows the last
// epoch a heartbeat carried with it, member IDs of one row apart.
func TestGroupViewEpochs(t *testing.T) {
	tests := []struct {
		name, member string
		beats        []opt
		want         int32 // member's epoch
	}{
		{name: "join only", beats: []opt{hb("g", "m1", 0)}, member: "m1", want: 0},
		{name: "join then heartbeats", beats: []opt{hb("g", "m1", 0), hb("g", "m1", 4), hb("g", "m1", 7)}, member: "m1", want: 7},
		{name: "leave last", beats: []opt{hb("g", "m1", 0), hb("g", "m1", 3), hb("g", "m1", -1)}, member: "m1", want: -1},
		{name: "second member keeps its own", beats: []opt{hb("g", "m1", 5), hb("g", "m2", 9), hb("g", "m1", 6)}, member: "m2", want: 9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSC(Options{})
			s.start(connA, true)
			for _, beat := range tt.beats {
				s.req(connA, 68, 1, inst(v4A), beat)
			}
			rep := s.finish()
			if len(rep.Groups) != 1 {
				t.Fatalf("groups %+v", rep.Groups)
			}
			i := slices.IndexFunc(rep.Groups[0].Members, func(m GroupMember) bool { return m.MemberID == tt.member })
			if i < 0 || rep.Groups[0].Members[i].Epoch != tt.want {
				t.Errorf("members %+v, want %s at epoch %d", rep.Groups[0].Members, tt.member, tt.want)
			}
		})
	}
}

// TestLegacyRowsSplitByTelemetry: two processes on one host with one
// client ID and no instance IDs (two consumer handles) get their own
// telemetry IDs from the broker: while both connections are open they are
// two rows, each with its own telemetry ID. One process after the other (a
// restart) stays one row.
func TestLegacyRowsSplitByTelemetry(t *testing.T) {
	connC := connB
	connC.Client = netip.AddrPortFrom(connB.Client.Addr(), 40001)
	connC.StartFrame = 9
	b1, b2 := v4A, v4B
	run := func(overlap bool) *Report {
		s := newSC(Options{})
		s.start(connB, true)
		corr := s.req(connB, 71, 0, cid("app"), tel(decode.UUID{}))
		s.resp(connB, 71, 0, corr, tel(b1))
		if !overlap {
			s.end(connB)
		}
		s.start(connC, true)
		corr = s.req(connC, 71, 0, cid("app"), tel(decode.UUID{}))
		s.resp(connC, 71, 0, corr, tel(b2))
		return s.finish()
	}
	two := run(true)
	var ids []string
	for _, in := range two.Instances {
		if in.Legacy {
			ids = append(ids, in.TelemetryID)
		}
	}
	slices.Sort(ids)
	want := []string{JavaString(b1), JavaString(b2)}
	slices.Sort(want)
	if !slices.Equal(ids, want) {
		t.Errorf("overlapping processes: legacy rows with telemetry IDs %v, want %v", ids, want)
	}
	if one := run(false); len(one.Instances) != 1 || one.Instances[0].Connections != 2 {
		t.Errorf("a restart: %d rows (%+v), want one with 2 connections", len(one.Instances), one.Instances)
	}
}
