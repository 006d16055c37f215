package audit

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
)

// Filter narrows a report to what an operator asks for (--rule,
// --min-severity, --client) and suppresses known problems (--baseline). A
// finding the filter does not keep is counted nowhere: the report is the
// report of the chosen rules and clients alone, its totals consistent and
// its exit status theirs. A suppressed finding is counted in
// Totals.Suppressed and, with ShowSuppressed, listed in Report.Suppressed
// as cases. The rules themselves run as always: filtering changes what is
// reported, never what is judged.
type Filter struct {
	// Rules keeps findings of these rules (empty: every rule).
	Rules []string
	// MinSeverity keeps findings of at least this severity (0: all).
	MinSeverity Severity
	// Client keeps findings of one client: its instance ID (Java or hex
	// form), its first client ID, or its host.
	Client string
	// Baseline suppresses the cases it lists.
	Baseline       *Baseline
	ShowSuppressed bool
}

// keep reports whether f passes the filter's selection (not the baseline).
func (o *Filter) keep(f *Finding) bool {
	if o == nil {
		return true
	}
	if len(o.Rules) > 0 && !slices.Contains(o.Rules, f.Rule) {
		return false
	}
	if f.Severity < o.MinSeverity {
		return false
	}
	if o.Client != "" {
		id := !f.InstanceID.IsZero() && (o.Client == JavaString(f.InstanceID) || o.Client == HexString(f.InstanceID))
		if !id && o.Client != f.ClientID && o.Client != f.Conn.Client.Addr().String() {
			return false
		}
	}
	return true
}

// BaselineEntry names one case: a rule and its subject, the broker of a
// broker rule, else the client's instance ID, else (legacy client) its host
// and first client ID. It is one line of a baseline file, as JSON.
type BaselineEntry struct {
	Rule       string `json:"rule"`
	Broker     string `json:"broker,omitempty"`
	InstanceID string `json:"instance_id,omitempty"`
	ClientHost string `json:"client_host,omitempty"`
	ClientID   string `json:"client_id,omitempty"`
}

// Baseline is a set of known cases (kwatch baseline writes one).
type Baseline struct {
	known map[BaselineEntry]bool
}

// ReadBaseline reads a baseline file: one JSON BaselineEntry per line;
// empty lines are skipped.
func ReadBaseline(r io.Reader) (*Baseline, error) {
	b := &Baseline{known: map[BaselineEntry]bool{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if len(line) == 0 {
			continue
		}
		var e BaselineEntry
		if err := json.Unmarshal(line, &e); err != nil || e.Rule == "" {
			return nil, fmt.Errorf("baseline line %d: not a case (want {\"rule\":...})", n)
		}
		b.known[e] = true
	}
	return b, sc.Err()
}

// Len is the number of cases in the baseline.
func (b *Baseline) Len() int { return len(b.known) }

// caseEntry names the case of a finding of rule on row r (or broker).
func caseEntry(rule *Rule, r *row, f *Finding) BaselineEntry {
	switch {
	case rule.AboutBroker():
		return BaselineEntry{Rule: rule.ID, Broker: f.Conn.Broker.String()}
	case !r.legacy:
		return BaselineEntry{Rule: rule.ID, InstanceID: JavaString(r.id)}
	}
	return BaselineEntry{Rule: rule.ID, ClientHost: r.lkey.host.String(), ClientID: r.lkey.clientID}
}

// WriteBaseline writes the report's cases as a baseline file.
func (r *Report) WriteBaseline(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for i := range r.Cases {
		b, err := json.Marshal(r.Cases[i].entry)
		if err != nil {
			return err
		}
		bw.Write(b)
		bw.WriteByte('\n')
	}
	return bw.Flush()
}
