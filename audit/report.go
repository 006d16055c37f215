package audit

import (
	"cmp"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/kwatch/kwatch/decode"
)

// Report is the audit's result: totals, one row per client, the findings.
// It is a snapshot: the Auditor does not touch it after returning it.
type Report struct {
	Profile string `json:"profile"`
	// Complete is false when the audit could not see what it was asked to
	// (SPEC.md section 5): Warnings then says why, one sentence each.
	Complete bool     `json:"complete"`
	Warnings []string `json:"warnings"`
	Start    string   `json:"start,omitempty"` // time of the first event
	End      string   `json:"end,omitempty"`   // time of the last event
	Totals   Totals   `json:"totals"`
	// Cases and Software are the compliance summary: every finding
	// counted by (rule, client), and the clients by software version.
	Cases    []Case           `json:"cases"`
	Software []SoftwareRollup `json:"software"`
	// Groups and Brokers are the same clients seen by group and by broker.
	Groups  []GroupView  `json:"groups"`
	Brokers []BrokerView `json:"brokers"`
	// Suppressed lists the cases a baseline suppressed (--show-suppressed).
	Suppressed []Case     `json:"suppressed,omitempty"`
	Instances  []Instance `json:"instances"`
	Findings   []Finding  `json:"findings"`

	maxSev Severity
}

// Totals counts what the audit saw.
type Totals struct {
	Packets          uint64 `json:"packets"`
	Bytes            uint64 `json:"bytes"`
	Connections      uint64 `json:"connections"`
	KafkaConnections uint64 `json:"kafka_connections"`
	// NotKafkaConnections: TCP connections that carried data judged not
	// to be Kafka (ZooKeeper, PostgreSQL, HTTP...).
	NotKafkaConnections uint64 `json:"not_kafka_connections"`
	// EvictedConnections: connections the connection table's cap
	// (--max-connections) evicted; written only when not zero.
	EvictedConnections uint64 `json:"evicted_connections,omitempty"`
	Requests           uint64 `json:"requests"`
	// RequestsByHeaderVersion: "v0".."v3" (v3 only under accepted-2026).
	RequestsByHeaderVersion map[string]uint64 `json:"requests_by_header_version"`
	Responses               uint64            `json:"responses"`
	// Coverage: every event name of SPEC.md 3.6, zero or not.
	Coverage           map[string]uint64 `json:"coverage"`
	Findings           uint64            `json:"findings"`
	FindingsBySeverity map[string]uint64 `json:"findings_by_severity"`
	FindingsByRule     map[string]uint64 `json:"findings_by_rule"`
	// FindingsNotKept: findings counted but beyond Options.MaxFindings.
	FindingsNotKept  uint64 `json:"findings_not_kept"`
	EvictedInstances uint64 `json:"evicted_instances"`
	// ClientIDRepeats / ClientIDRepeatBytes: later requests of all
	// connections that repeated the first client ID, and their client ID
	// bytes (what sending null would save; a statistic for legacy clients).
	ClientIDRepeats     uint64 `json:"client_id_repeats"`
	ClientIDRepeatBytes uint64 `json:"client_id_repeat_bytes"`
	// UnobservableConnections: accepted-2026, first request not seen.
	UnobservableConnections uint64 `json:"unobservable_connections"`
	// StateLimited counts judgements skipped because a state bound was hit.
	StateLimited uint64 `json:"state_limited"`
	// OpenConnections: Kafka connections not yet ended (live mode).
	OpenConnections uint64 `json:"open_connections"`
	// KernelReceived and KernelDropped: live capture's PACKET_STATISTICS,
	// packets the kernel delivered and dropped (a coverage figure).
	KernelReceived uint64 `json:"kernel_received,omitempty"`
	KernelDropped  uint64 `json:"kernel_dropped,omitempty"`
	// Suppressed counts findings of the cases a baseline lists.
	Suppressed uint64 `json:"suppressed,omitempty"`
	// Unwrapped counts what the capture layers took apart on the way to
	// TCP: tunnels by kind, IP fragments reassembled and dropped.
	Unwrapped map[string]uint64 `json:"unwrapped,omitempty"`
}

// Instance is one client: a client instance (non-zero header instance ID)
// or, with Legacy set, the clients without one grouped by (client host,
// first client ID).
type Instance struct {
	InstanceID      string              `json:"instance_id,omitempty"`
	InstanceIDHex   string              `json:"instance_id_hex,omitempty"`
	Legacy          bool                `json:"legacy"`
	ClientIDs       []string            `json:"client_ids"`
	SoftwareName    string              `json:"software_name,omitempty"`
	SoftwareVersion string              `json:"software_version,omitempty"`
	ClientHosts     []string            `json:"client_hosts"`
	Brokers         []string            `json:"brokers"`
	Connections     int                 `json:"connections"`
	ConnectionList  []ConnSummary       `json:"connection_list"`
	MemberIDs       map[string][]string `json:"member_ids"`
	TelemetryID     string              `json:"telemetry_id,omitempty"`
	Findings        map[string]uint64   `json:"findings"`
	// Capture and FirstFrame: where the row was first seen (Capture only
	// when several captures are read as one).
	Capture    string `json:"capture,omitempty"`
	FirstFrame uint64 `json:"first_frame"`

	firstSeq  uint64             // orders rows across captures (Finding.seq)
	epochs    map[string][]int32 // epochs[g][i]: the last epoch of MemberIDs[g][i]
	firstTime time.Time
}

// compareSeq orders two things by where the pipeline saw them: by sequence
// (the pipeline's frame) within one capture, and by time first when
// several captures are read as one, since they were merged by time and the
// packed frames order them by file.
func compareSeq(merged bool, xt, yt time.Time, x, y uint64) int {
	if merged {
		if c := xt.Compare(yt); c != 0 {
			return c
		}
	}
	return cmp.Compare(x, y)
}

// ConnSummary names one connection of an instance.
type ConnSummary struct {
	Client     string `json:"client"`
	Broker     string `json:"broker"`
	Capture    string `json:"capture,omitempty"`
	StartFrame uint64 `json:"start_frame"`
}

func timeString(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(TimeFormat)
}

// report builds a Report; a.mu is held.
// report copies the state into a Report, but for the kept findings, which
// the caller sets (Finish hands them over); the caller holds a.mu and sorts
// the copy (r.sort) after releasing it, so that a TUI's snapshots keep the
// capture goroutine waiting as little as possible. It changes no state:
// when and how often snapshots are taken must not change the result.
func (a *InstanceAuditor) report() *Report {
	n := a.counts
	r := &Report{Profile: a.o.Profile.String(), Complete: true, Warnings: []string{}, Start: timeString(n.first), End: timeString(n.last)}
	r.Totals, r.maxSev = a.totals()
	r.Instances = make([]Instance, 0, a.lru.Len())
	for el := a.lru.Front(); el != nil; el = el.Next() {
		r.Instances = append(r.Instances, el.Value.(*row).export(&a.o))
	}
	r.Cases = exportCases(a.cases, &a.o)
	if len(a.suppressed) > 0 {
		r.Suppressed = exportCases(a.suppressed, &a.o)
	}
	return r
}

// Counts returns the report's totals and its number of client rows,
// without copying rows or findings: what a metrics scrape reads.
func (a *InstanceAuditor) Counts() (Totals, int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	t, _ := a.totals()
	return t, a.lru.Len()
}

// totals copies the counters into Totals and says the highest severity
// found; a.mu is held.
func (a *InstanceAuditor) totals() (Totals, Severity) {
	t, n := &a.t, a.counts
	var maxSev Severity
	out := Totals{
		Packets: t.packets, Bytes: t.bytes, Connections: max(n.connections, t.tcpConns), KafkaConnections: n.kafkaConns, NotKafkaConnections: t.notKafka, EvictedConnections: t.evictedConns,
		RequestsByHeaderVersion: map[string]uint64{}, Responses: n.responses,
		Coverage: map[string]uint64{}, FindingsBySeverity: map[string]uint64{}, FindingsByRule: map[string]uint64{},
		FindingsNotKept: t.findingsDropped, EvictedInstances: t.evicted,
		ClientIDRepeats: n.cidRepeats, ClientIDRepeatBytes: n.cidRepeatBytes,
		UnobservableConnections: n.unobservable, StateLimited: n.stateLimited + n.pendingEvicted + t.stateLimited,
		KernelReceived: t.kernelReceived, KernelDropped: t.kernelDropped, Suppressed: t.suppressed, Unwrapped: maps.Clone(t.unwrapped),
		OpenConnections: n.open,
	}
	for v, c := range n.requests {
		out.Requests += c
		if v < 3 || a.o.Profile == ProfileAccepted2026 {
			out.RequestsByHeaderVersion["v"+string(rune('0'+v))] = c
		}
	}
	for _, cv := range decode.Coverages() {
		out.Coverage[cv.String()] = n.coverage[cv]
	}
	for s := SeverityInfo; s <= SeverityError; s++ {
		out.FindingsBySeverity[s.String()] = t.bySeverity[s]
		out.Findings += t.bySeverity[s]
		if t.bySeverity[s] > 0 {
			maxSev = s
		}
	}
	for i, n := range t.byRule {
		if n > 0 {
			out.FindingsByRule[ruleTable[i].ID] = n
		}
	}
	return out, maxSev
}

// sort puts the rows and findings of a report copied by report in their
// deterministic order.
func (r *Report) sort() {
	slices.SortFunc(r.Instances, func(x, y Instance) int {
		if x.Legacy != y.Legacy {
			if !x.Legacy {
				return -1
			}
			return 1
		}
		if c := compareSeq(x.Capture != "", x.firstTime, y.firstTime, x.firstSeq, y.firstSeq); c != 0 {
			return c
		}
		if x.FirstFrame != y.FirstFrame {
			if x.FirstFrame < y.FirstFrame {
				return -1
			}
			return 1
		}
		if c := strings.Compare(x.InstanceID, y.InstanceID); c != 0 {
			return c
		}
		return strings.Compare(strings.Join(x.ClientHosts, ","), strings.Join(y.ClientHosts, ","))
	})
	sortFindings(r.Findings)
	r.Software = rollup(r.Instances)
	r.Groups = groupViews(r.Instances)
	r.Brokers = brokerViews(r.Instances, r.Cases)
}

// sortFindings orders findings by compareFindings.
func sortFindings(fs []Finding) {
	if !findingsSorted(fs) {
		slices.SortStableFunc(fs, func(x, y Finding) int { return compareFindings(&x, &y) })
	}
}

// findingsSorted reports whether fs is in compareFindings order (as kept
// findings mostly are), comparing in place: a Finding is large.
func findingsSorted(fs []Finding) bool {
	for i := 1; i < len(fs); i++ {
		if compareFindings(&fs[i-1], &fs[i]) > 0 {
			return false
		}
	}
	return true
}

// compareFindings orders findings by frame, then rule table order, then
// correlation ID; ties keep event order (a stable sort).
func compareFindings(x, y *Finding) int {
	switch {
	case compareSeq(x.Capture != "", x.Time, y.Time, x.seq, y.seq) != 0:
		return compareSeq(x.Capture != "", x.Time, y.Time, x.seq, y.seq)
	case x.Frame != y.Frame:
		if x.Frame < y.Frame {
			return -1
		}
		return 1
	case x.rule != y.rule:
		return int(x.rule) - int(y.rule)
	case x.CorrelationID != y.CorrelationID:
		if x.CorrelationID < y.CorrelationID {
			return -1
		}
		return 1
	}
	return 0
}

func (r *row) export(o *Options) Instance {
	in := Instance{
		Legacy: r.legacy, ClientIDs: slices.Clone(r.clientIDs), SoftwareName: r.software.nameOr(), SoftwareVersion: r.software.versionOr(),
		Connections: r.conns, MemberIDs: map[string][]string{}, Findings: map[string]uint64{}, firstSeq: r.firstFrame, firstTime: r.firstSeen,
	}
	in.Capture, in.FirstFrame = o.nameFrame(r.firstFrame)
	if in.ClientIDs == nil {
		in.ClientIDs = []string{}
	}
	if !r.legacy {
		in.InstanceID, in.InstanceIDHex = JavaString(r.id), HexString(r.id)
	}
	for _, h := range r.hosts {
		in.ClientHosts = append(in.ClientHosts, h.String())
	}
	for _, b := range r.brokers {
		in.Brokers = append(in.Brokers, b.String())
	}
	if in.ClientHosts == nil {
		in.ClientHosts = []string{}
	}
	if in.Brokers == nil {
		in.Brokers = []string{}
	}
	for _, c := range r.connList {
		capture, start := o.nameFrame(c.StartFrame)
		in.ConnectionList = append(in.ConnectionList, ConnSummary{Client: c.Client.String(), Broker: c.Broker.String(), Capture: capture, StartFrame: start})
	}
	if in.ConnectionList == nil {
		in.ConnectionList = []ConnSummary{}
	}
	if len(r.memberIDs) > 0 {
		in.epochs = make(map[string][]int32, len(r.memberIDs))
	}
	for g, m := range r.memberIDs {
		in.MemberIDs[g], in.epochs[g] = slices.Clone(m.ids), slices.Clone(m.epochs)
	}
	if t := r.telemetryID(); !t.IsZero() {
		in.TelemetryID = JavaString(t)
	}
	if r.findings != nil {
		for i, n := range r.findings {
			if n > 0 {
				in.Findings[ruleTable[i].ID] = n
			}
		}
	}
	return in
}

// MaxSeverity returns the highest severity of any finding (counted, kept
// or not), for --fail-on; false when there is none.
func (r *Report) MaxSeverity() (Severity, bool) {
	if r.maxSev == 0 {
		for s := SeverityError; s >= SeverityInfo; s-- {
			if r.Totals.FindingsBySeverity[s.String()] > 0 {
				return s, true
			}
		}
		return 0, false
	}
	return r.maxSev, true
}

// WriteJSON writes the report as one indented JSON object and a newline,
// in one Write: what a json.Encoder with SetIndent("", "  ") and
// SetEscapeHTML(false) writes, byte for byte.
// WriteJSON writes the report as one indented JSON object, streaming: it
// holds at most about spillAt bytes of it at a time.
func (r *Report) WriteJSON(w io.Writer) error {
	jw := jsonWriter{indent: true, out: w, buf: make([]byte, 0, spillAt+4096)}
	jw.report(r)
	jw.buf = append(jw.buf, '\n')
	if _, err := w.Write(jw.buf); err != nil && jw.err == nil {
		jw.err = err
	}
	return jw.err
}

// Incomplete marks the report incomplete (SPEC.md section 5) and says why.
func (r *Report) Incomplete(why string) {
	r.Complete = false
	r.Warnings = append(r.Warnings, why)
}
