package audit

import (
	"testing"
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
