package tui

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/kwatch/kwatch/audit"
)

// Meta is what the caller knows about a feed that a report does not.
type Meta struct {
	Source string // file name, or interface name
	Live   bool   // interface capture rather than a file replay
	Done   bool   // the producer has finished: the report is final
	Err    error  // producer failure to show, nil for none
	// Counts are the packet loop's own counters (pipeline.Stats), which
	// the auditor learns only at the end; nil: use the report's.
	Counts *CaptureCounts
	// Clock is how long a live capture has run, by the caller's clock:
	// with no traffic, capture time stands still but a live screen's
	// rates must fall. Zero: rates follow capture time (a replay).
	Clock time.Duration
}

// CaptureCounts are what the packet loop read so far.
type CaptureCounts struct {
	Packets, Bytes uint64
	// TCPConns: TCP connections followed, Kafka or not.
	TCPConns uint64
	// Truncated: packets cut by the snap length.
	Truncated   uint64
	First, Last time.Time
}

// FromReport converts an audit report into the UI's view model. The
// report is only read; the Data shares none of its slices or maps.
func FromReport(r *audit.Report, m Meta) Data {
	d := Data{Source: m.Source, Live: m.Live, Done: m.Done, Err: m.Err, OpenConns: -1, TCPConns: -1}
	if r == nil {
		applyMeta(&d, &m)
		return d
	}
	t := &r.Totals
	d.Elapsed = reportElapsed(r.Start, r.End)
	d.Packets, d.Bytes, d.Requests = t.Packets, t.Bytes, t.Requests
	for i := range d.RequestsByHeader {
		d.RequestsByHeader[i] = t.RequestsByHeaderVersion["v"+string(rune('0'+i))]
	}
	d.Connections = int(t.KafkaConnections)
	d.OpenConns = int(t.OpenConnections)
	d.TCPConns = -1
	if t.Connections > 0 {
		d.TCPConns = int(t.Connections)
	}
	d.Warnings = slices.Clone(r.Warnings)
	applyMeta(&d, &m)
	d.Coverage = make(map[string]uint64, len(t.Coverage))
	for k, v := range t.Coverage {
		d.Coverage[k] = v
	}
	if t.KernelReceived > 0 || t.KernelDropped > 0 {
		// Kernel drops are a coverage figure like the others.
		d.Coverage["kernel-drops"] = t.KernelDropped
	}
	for name, n := range t.FindingsBySeverity {
		if sev, err := audit.ParseSeverity(name); err == nil {
			d.FindingsBySeverity[sev] = int(n)
		}
	}
	d.FindingsByRule = make(map[string]int, len(t.FindingsByRule))
	for k, v := range t.FindingsByRule {
		d.FindingsByRule[k] = int(v)
	}

	d.Instances = make([]InstanceRow, len(r.Instances))
	seen := make(map[string]int, len(r.Instances))
	for i := range r.Instances {
		d.Instances[i] = instanceFromReport(&r.Instances[i])
		// Two processes behind one legacy (host, client ID) are two rows:
		// keys stay unique, the first keeps the plain one findings use.
		k := d.Instances[i].Key
		if seen[k]++; seen[k] > 1 {
			d.Instances[i].Key = fmt.Sprintf("%s (process %d)", k, seen[k])
		}
	}
	d.Findings = make([]FindingRow, len(r.Findings))
	for i := range r.Findings {
		d.Findings[i] = findingFromReport(&r.Findings[i])
	}
	d.raw = r.Findings
	d.Cases, d.RuleSeverity = casesFromReport(r.Cases)
	d.Software = softwareFromReport(r.Software)
	d.Groups, d.Brokers = viewsFromReport(r)
	return d
}

// viewsFromReport converts the report's group and broker views, escaping
// the wire's strings (group and member IDs, client IDs in client names).
func viewsFromReport(r *audit.Report) ([]GroupRow, []BrokerRow) {
	groups := make([]GroupRow, len(r.Groups))
	for i, g := range r.Groups {
		row := GroupRow{Group: audit.PlainText(g.Group), Members: make([]MemberRow, len(g.Members))}
		for j, m := range g.Members {
			clients := make([]string, len(m.Clients))
			for k, c := range m.Clients {
				clients[k] = audit.PlainText(c)
			}
			row.Members[j] = MemberRow{MemberID: audit.PlainText(m.MemberID), Clients: clients, Shared: m.Shared, Epoch: m.Epoch}
		}
		groups[i] = row
	}
	brokers := make([]BrokerRow, len(r.Brokers))
	for i, b := range r.Brokers {
		row := BrokerRow{Broker: b.Broker, Clients: b.Clients, Findings: make(map[string]int, len(b.Findings))}
		for k, v := range b.Findings {
			row.Findings[k] = int(v)
		}
		brokers[i] = row
	}
	return groups, brokers
}

// applyMeta lets the packet loop's counters, which move with every
// packet, stand in for the report's, which the auditor learns at the end.
func applyMeta(d *Data, m *Meta) {
	if c := m.Counts; c != nil {
		d.Packets, d.Bytes, d.Truncated = c.Packets, c.Bytes, c.Truncated
		d.TCPConns = int(c.TCPConns)
		if !c.First.IsZero() && c.Last.After(c.First) {
			d.Elapsed = c.Last.Sub(c.First)
		}
	}
	if m.Clock > 0 {
		d.Elapsed = m.Clock
	}
}

// casesFromReport converts the report's cases, in its order (most severe
// first), and derives each rule's most severe finding from them: cases
// count every finding, kept in the list or not.
func casesFromReport(cases []audit.Case) ([]CaseRow, map[string]audit.Severity) {
	rows := make([]CaseRow, len(cases))
	worst := make(map[string]audit.Severity)
	for i := range cases {
		c := &cases[i]
		sev := c.Severity
		row := CaseRow{
			Rule: c.Rule, Severity: sev, Count: c.Count, Broker: c.Broker,
			Software:   audit.PlainText(strings.Trim(c.SoftwareName+"/"+c.SoftwareVersion, "/")),
			FirstFrame: c.First.Frame, LastFrame: c.Last.Frame,
		}
		if c.Broker == "" {
			row.InstanceKey = c.InstanceID
			row.Client = c.InstanceID
			if c.InstanceID == "" {
				host, cid := firstOf(c.ClientHosts), firstOf(c.ClientIDs)
				row.InstanceKey = legacyKey(host, cid)
				row.Client = "(no ID) " + host + " " + audit.PlainText(orDash(cid))
			}
		}
		rows[i] = row
		if s, ok := worst[c.Rule]; !ok || sev > s {
			worst[c.Rule] = sev
		}
	}
	return rows, worst
}

func softwareFromReport(sw []audit.SoftwareRollup) []SoftwareRow {
	out := make([]SoftwareRow, len(sw))
	for i := range sw {
		s := &sw[i]
		row := SoftwareRow{
			Software: audit.PlainText(strings.Trim(s.SoftwareName+"/"+s.SoftwareVersion, "/")),
			Clients:  s.Clients, Breaking: s.Breaking, Findings: make(map[string]int, len(s.Findings)),
		}
		for k, v := range s.Findings {
			row.Findings[k] = int(v)
		}
		out[i] = row
	}
	return out
}

// reportElapsed is End - Start of a report's RFC 3339 times; 0 when either
// is missing or unreadable.
func reportElapsed(start, end string) time.Duration {
	s, err1 := time.Parse(time.RFC3339Nano, start)
	e, err2 := time.Parse(time.RFC3339Nano, end)
	if err1 != nil || err2 != nil || e.Before(s) {
		return 0
	}
	return e.Sub(s)
}

// legacyKey names a client without an instance ID the way audit groups
// them: by client host and first client ID.
func legacyKey(host, clientID string) string {
	return "legacy " + host + " " + orDash(clientID)
}

// firstOf is v's first element, "" when empty: a legacy client is named by
// its first host and first client ID.
func firstOf(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

func instanceFromReport(in *audit.Instance) InstanceRow {
	row := InstanceRow{
		Key:         in.InstanceID,
		InstanceID:  in.InstanceID,
		ClientIDs:   slices.Clone(in.ClientIDs),
		Software:    strings.Trim(in.SoftwareName+"/"+in.SoftwareVersion, "/"),
		Hosts:       slices.Clone(in.ClientHosts),
		Brokers:     slices.Clone(in.Brokers),
		Connections: in.Connections,
		MemberIDs:   make(map[string][]string, len(in.MemberIDs)),
		TelemetryID: in.TelemetryID,
		Findings:    make(map[string]int, len(in.Findings)),
	}
	if in.Legacy || row.Key == "" {
		row.Key = legacyKey(firstOf(in.ClientHosts), firstOf(in.ClientIDs))
	}
	// Text from the wire is shown escaped (audit.PlainText): a control
	// character would drive the terminal the UI draws on. Keys stay raw.
	for i, cid := range row.ClientIDs {
		row.ClientIDs[i] = audit.PlainText(cid)
	}
	row.Software = audit.PlainText(row.Software)
	for g, ids := range in.MemberIDs {
		shown := make([]string, len(ids))
		for i, m := range ids {
			shown[i] = audit.PlainText(m)
		}
		row.MemberIDs[audit.PlainText(g)] = shown
	}
	for rule, n := range in.Findings {
		row.Findings[rule] = int(n)
	}
	for _, c := range in.ConnectionList {
		row.Conns = append(row.Conns, ConnRow{Client: c.Client, Broker: c.Broker, StartFrame: c.StartFrame})
	}
	return row
}

func findingFromReport(f *audit.Finding) FindingRow {
	row := FindingRow{
		Rule: f.Rule, Severity: f.Severity, KIP: f.KIP, Confidence: f.Confidence.String(),
		Frame: f.Frame, Time: f.Time,
		Client: addrString(f.Conn.Client), Broker: addrString(f.Conn.Broker),
		API: f.API, APIKey: f.APIKey, APIVersion: f.APIVersion, CorrelationID: f.CorrelationID,
		ClientID: audit.PlainText(f.ClientID), Expected: audit.PlainText(f.Expected), Observed: audit.PlainText(f.Observed),
		Message: audit.PlainText(f.Message), Group: audit.PlainText(f.Group), MemberID: audit.PlainText(f.MemberID),
	}
	if !f.InstanceID.IsZero() {
		row.InstanceID = audit.JavaString(f.InstanceID)
		row.InstanceKey = row.InstanceID
	} else if f.Conn.Client.IsValid() {
		row.InstanceKey = legacyKey(f.Conn.Client.Addr().String(), f.ClientID)
	}
	return row
}

// addrString is ap's ip:port, "" when unset (netip spells it "invalid AddrPort").
func addrString(ap netip.AddrPort) string {
	if !ap.IsValid() {
		return ""
	}
	return ap.String()
}

// ReportFeed is a Feed over an audit report source, typically
// (*audit.Auditor).Snapshot, with meta saying what the report does not
// (source, done, error).
type ReportFeed struct {
	Snapshot func() *audit.Report
	Meta     func() Meta
}

// Data reads meta first, then the snapshot: a Meta that says Done thus
// always pairs with the final report.
func (f ReportFeed) Data() Data {
	var m Meta
	if f.Meta != nil {
		m = f.Meta()
	}
	var r *audit.Report
	if f.Snapshot != nil {
		r = f.Snapshot()
	}
	return FromReport(r, m)
}

// ExplainRule returns a rule's summary and explanation from audit's rule
// table, the text `kwatch rules RULE` prints; use it as Options.Explain.
func ExplainRule(id string) (title, explanation string) {
	r, ok := audit.LookupRule(id)
	if !ok {
		return "", ""
	}
	return r.Summary, r.Explanation
}
