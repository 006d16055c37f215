package audit

import (
	"cmp"
	"net/netip"
	"slices"
	"strings"
	"time"
)

// A client that breaks a rule usually breaks it on every request: a fleet
// gives thousands of findings for a handful of problems. A case is every
// finding of one rule for one client (report row), counted exactly, with
// where it was first and last seen: the unit an operator takes to the
// client's owner. Cases are kept for every finding, kept or not.

// maxCases bounds the cases an Auditor follows; findings of a (rule,
// client) pair beyond it count in the totals and in state_limited.
const maxCases = 100_000

// caseKey: a client rule's case is the client's (its report row); a
// broker rule's (SPEC.md 3.5) is the broker's.
type caseKey struct {
	row    *row
	broker netip.AddrPort
	rule   ruleID
}

type caseState struct {
	count       uint64
	sev         Severity // the most severe finding of the case
	first, last frameAt  // formatted at export: a case takes every repeat of its finding
	example     Finding  // the first finding, for its connection and values
	entry       BaselineEntry
}

// frameAt is a FrameRef before its time is written out.
type frameAt struct {
	time    time.Time
	capture string
	frame   uint64
}

func (f frameAt) ref() FrameRef {
	return FrameRef{Time: timeString(f.time), Capture: f.capture, Frame: f.frame}
}

// FrameRef names a packet: its time, its capture (several read as one)
// and its frame number there.
type FrameRef struct {
	Time    string `json:"time"`
	Capture string `json:"capture,omitempty"`
	Frame   uint64 `json:"frame"`
}

// Case is every finding of one rule for one client (SPEC.md 3.7 counts,
// grouped): what the compliance summary lists.
type Case struct {
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	KIP      string   `json:"kip"`
	Count    uint64   `json:"count"`
	// Broker is the broker of a broker rule's case (SPEC.md 3.5); the
	// other fields name the client of a client rule's case (its report
	// row: the instance ID, or none for a legacy client).
	Broker          string   `json:"broker,omitempty"`
	InstanceID      string   `json:"instance_id,omitempty"`
	ClientIDs       []string `json:"client_ids"`
	ClientHosts     []string `json:"client_hosts"`
	SoftwareName    string   `json:"software_name,omitempty"`
	SoftwareVersion string   `json:"software_version,omitempty"`
	First           FrameRef `json:"first"`
	Last            FrameRef `json:"last"`
	// Example is the first finding's message.
	Example string `json:"example"`
	Fix     string `json:"fix"`

	rule     ruleID
	firstSeq uint64
	entry    BaselineEntry
}

// addCase counts f, a finding on row r, in its case in cases, which it
// returns (nil: a new case beyond maxCases, not followed).
func (a *InstanceAuditor) addCase(cases *map[caseKey]*caseState, r *row, f *Finding) *caseState {
	rule := f.rule.rule()
	k := caseKey{row: r, rule: f.rule}
	if rule.AboutBroker() {
		k = caseKey{broker: f.Conn.Broker, rule: f.rule}
	}
	cs := (*cases)[k]
	ref := frameAt{time: f.Time, capture: f.Capture, frame: f.Frame}
	if cs == nil {
		if len(*cases) >= maxCases {
			a.t.stateLimited++
			return nil
		}
		if *cases == nil {
			*cases = map[caseKey]*caseState{}
		}
		cs = &caseState{first: ref, example: *f, entry: caseEntry(rule, r, f)}
		(*cases)[k] = cs
	}
	cs.add(f.Severity, ref)
	return cs
}

// add counts a finding of severity sev at ref in the case.
func (cs *caseState) add(sev Severity, ref frameAt) {
	cs.count++
	cs.sev = max(cs.sev, sev)
	cs.last = ref
}

// exportCases lists cases, most severe first, then by count, rule table
// order and where they were first seen.
func exportCases(cases map[caseKey]*caseState, o *Options) []Case {
	out := make([]Case, 0, len(cases))
	for k, cs := range cases {
		rule := k.rule.rule()
		c := Case{
			Rule: rule.ID, Severity: cs.sev, KIP: cs.example.KIP, Count: cs.count,
			ClientIDs: []string{}, ClientHosts: []string{},
			First: cs.first.ref(), Last: cs.last.ref(), Example: cs.example.Message, Fix: rule.Fix,
			rule: k.rule, firstSeq: cs.example.seq, entry: cs.entry,
		}
		if k.row != nil {
			in := k.row.export(o)
			c.InstanceID, c.ClientIDs, c.ClientHosts = in.InstanceID, in.ClientIDs, in.ClientHosts
			c.SoftwareName, c.SoftwareVersion = in.SoftwareName, in.SoftwareVersion
		} else {
			c.Broker = k.broker.String()
		}
		out = append(out, c)
	}
	slices.SortFunc(out, compareCases)
	return out
}

func compareCases(x, y Case) int {
	if c := cmp.Compare(y.Severity, x.Severity); c != 0 {
		return c
	}
	if c := cmp.Compare(y.Count, x.Count); c != 0 {
		return c
	}
	if c := cmp.Compare(x.rule, y.rule); c != 0 {
		return c
	}
	if c := strings.Compare(x.First.Time, y.First.Time); c != 0 {
		return c
	}
	if c := cmp.Compare(x.firstSeq, y.firstSeq); c != 0 {
		return c
	}
	return strings.Compare(x.Broker+x.InstanceID+strings.Join(x.ClientHosts, ","), y.Broker+y.InstanceID+strings.Join(y.ClientHosts, ","))
}

// SoftwareRollup is one client software and version across the report's
// clients: how many there are, and which rules they break, with counts.
type SoftwareRollup struct {
	SoftwareName    string            `json:"software_name"`
	SoftwareVersion string            `json:"software_version"`
	Clients         int               `json:"clients"`
	Breaking        int               `json:"clients_breaking_rules"`
	Findings        map[string]uint64 `json:"findings"`
}

// rollup groups the report's rows by client software and version
// ("" when the client sent no ApiVersions v3), most findings first; the
// findings are the client rules' (a broker's are not the client's fault).
func rollup(rows []Instance) []SoftwareRollup {
	idx := map[[2]string]int{}
	var out []SoftwareRollup
	for i := range rows {
		in := &rows[i]
		k := [2]string{in.SoftwareName, in.SoftwareVersion}
		j, ok := idx[k]
		if !ok {
			j = len(out)
			idx[k] = j
			out = append(out, SoftwareRollup{SoftwareName: k[0], SoftwareVersion: k[1], Findings: map[string]uint64{}})
		}
		s := &out[j]
		s.Clients++
		breaking := false
		for id, n := range in.Findings {
			if r, ok := LookupRule(id); ok && !r.AboutBroker() {
				s.Findings[id] += n
				breaking = true
			}
		}
		if breaking {
			s.Breaking++
		}
	}
	slices.SortStableFunc(out, func(x, y SoftwareRollup) int {
		if c := cmp.Compare(sum(y.Findings), sum(x.Findings)); c != 0 {
			return c
		}
		if c := cmp.Compare(y.Clients, x.Clients); c != 0 {
			return c
		}
		return strings.Compare(x.SoftwareName+"/"+x.SoftwareVersion, y.SoftwareName+"/"+y.SoftwareVersion)
	})
	return out
}

func sum(m map[string]uint64) (n uint64) {
	for _, v := range m {
		n += v
	}
	return n
}
