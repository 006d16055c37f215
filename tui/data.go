package tui

import (
	"time"

	"github.com/kwatch/kwatch/audit"
	"github.com/kwatch/kwatch/decode"
)

// Data is one snapshot of everything the UI shows. The feed builds a fresh
// one per call; the UI keeps it read-only.
type Data struct {
	// Source names the capture: a file name or "eth0 (live)".
	Source string
	// Live is true for an interface capture, false for a file replay.
	Live bool
	// Done is true once the feed will not change any more (end of the file,
	// capture stopped). The UI stops polling and says so.
	Done bool
	// Err is a producer failure to show in the status line (nil = none).
	Err error

	// Elapsed is the capture time covered so far (last packet time minus
	// first), the clock every rate is computed against.
	Elapsed time.Duration

	Packets  uint64
	Bytes    uint64
	Requests uint64
	// RequestsByHeader counts requests by request header version (v0..v3).
	RequestsByHeader [4]uint64

	// Connections is the number of Kafka connections seen, OpenConns those
	// not yet ended (-1 when the feed does not know). TCPConns counts every
	// TCP connection the pipeline followed, Kafka or not (-1: unknown).
	Connections int
	OpenConns   int
	TCPConns    int
	// Truncated counts packets cut by the capture's snap length.
	Truncated uint64
	// Warnings says why the audit is incomplete (the report's warnings),
	// one sentence each; empty when nothing is known to be missing.
	Warnings []string

	// Coverage counts coverage events by name (SPEC.md section 3.6).
	Coverage map[string]uint64

	// FindingsBySeverity and FindingsByRule are totals; they may exceed
	// len(Findings) when the feed caps the list it hands over.
	// FindingsBySeverity is indexed by audit.Severity (index 0 unused).
	FindingsBySeverity [audit.SeverityError + 1]int
	FindingsByRule     map[string]int

	// RuleSeverity is each rule's most severe finding (a rule's findings
	// need not share one severity).
	RuleSeverity map[string]audit.Severity
	// Cases is the compliance summary: findings counted by (rule, client),
	// most severe first. Software groups the clients by software version.
	Cases    []CaseRow
	Software []SoftwareRow
	// Groups and Brokers are the report's views of the same clients by
	// group (who holds which member ID) and by broker.
	Groups  []GroupRow
	Brokers []BrokerRow

	// Findings are in the feed's order: as made (AuditFeed) or as the
	// report sorts them (FromReport); the findings pane can sort them.
	Findings  []FindingRow
	Instances []InstanceRow

	// raw holds the report's findings, parallel to Findings, for export in
	// the report's own JSON shape; nil when the feed did not give them.
	raw []audit.Finding
}

// CaseRow is every finding of one rule for one client or broker.
type CaseRow struct {
	Rule     string
	Severity audit.Severity
	Count    uint64
	// Client names the client (instance ID, or host and client ID for a
	// legacy client); Broker is set instead for a broker rule's case.
	Client   string
	Broker   string
	Software string
	// InstanceKey is the InstanceRow.Key of the client ("" for a broker).
	InstanceKey string
	FirstFrame  uint64
	LastFrame   uint64
}

// GroupRow is one consumer, share or streams group.
type GroupRow struct {
	Group   string
	Members []MemberRow
}

// MemberRow is one member ID of a group and the clients that used it.
type MemberRow struct {
	MemberID string
	Clients  []string
	Shared   bool  // more than one client used it
	Epoch    int32 // the last member epoch seen with it (0 join, -1/-2 leave)
}

// BrokerRow is one broker: how many clients used it, and the findings of
// the broker rules against it, by rule.
type BrokerRow struct {
	Broker   string
	Clients  int
	Findings map[string]int
}

// SoftwareRow is one client software and version across the clients.
type SoftwareRow struct {
	Software string // "name/version", "" when the clients did not say
	Clients  int
	Breaking int            // clients breaking at least one rule
	Findings map[string]int // by rule
}

// FindingRow is one finding, in the fields of SPEC.md section 5.
type FindingRow struct {
	Rule          string
	Severity      audit.Severity
	KIP           string
	Confidence    string // "full" or "partial"
	Frame         uint64
	Time          time.Time
	Client        string // client ip:port
	Broker        string // broker ip:port
	API           string
	APIKey        decode.APIKey
	APIVersion    int16
	CorrelationID int32
	ClientID      string
	InstanceID    string
	Expected      string
	Observed      string
	Message       string
	// Group and MemberID are set for member rules.
	Group    string
	MemberID string

	// InstanceKey is the InstanceRow.Key of the client instance the finding
	// belongs to ("" when none), so findings can be filtered by instance.
	InstanceKey string
	// Around holds the requests around the finding on its connection, when
	// the feed includes them in Data (else a Detailer may provide them);
	// nil means not recorded, empty means none.
	Around []TimelineRow
}

// InstanceRow is one client instance: a non-zero header instance ID, or a
// legacy client known only by its host and client ID.
type InstanceRow struct {
	// Key identifies the row across snapshots (the instance ID, or a
	// synthetic key for clients without one). Never empty.
	Key         string
	InstanceID  string
	ClientIDs   []string
	Software    string // "name/version" from ApiVersions, "" when unknown
	Hosts       []string
	Brokers     []string
	Connections int
	// MemberIDs lists member IDs by group.
	MemberIDs   map[string][]string
	TelemetryID string
	// Findings counts findings by rule.
	Findings map[string]int

	// Conns and Timeline feed the instance's detail screen; either may be
	// nil when the feed serves them through a Detailer instead.
	Conns    []ConnRow
	Timeline []TimelineRow
}

// ConnRow is one connection of an instance.
type ConnRow struct {
	Client     string
	Broker     string
	StartFrame uint64 // frame of its first packet (0 = unknown)
	// Note is whatever else the feed knows, formatted ("open, mid-stream").
	Note string
}

// TimelineRow is one identity-bearing request (or response) in a timeline.
type TimelineRow struct {
	Time          time.Time
	Frame         uint64
	Client        string
	Broker        string
	API           string
	APIVersion    int16
	Header        int // request header version
	CorrelationID int32
	ClientID      string
	InstanceID    string
	// Note carries what the body said (group, member ID, telemetry ID,
	// error code), already formatted by the feed.
	Note string
	// Rules lists the rules this request fired, if any.
	Rules []string
}

// findingTotal is the number of findings the feed reports, capped list or not.
func (d *Data) findingTotal() int {
	return d.FindingsBySeverity[audit.SeverityInfo] + d.FindingsBySeverity[audit.SeverityWarn] + d.FindingsBySeverity[audit.SeverityError]
}

// Feed hands the UI a snapshot. Data is called from a command goroutine,
// at most once per Options.Interval, and must not block for long.
type Feed interface {
	Data() Data
}

// FeedFunc adapts a function to a Feed.
type FeedFunc func() Data

// Data calls f.
func (f FeedFunc) Data() Data { return f() }

// Excerpt is a bounded list of requests: Rows in order, of which Omitted
// more were left out after the first Gap rows (Omitted 0: none).
type Excerpt struct {
	Rows    []TimelineRow
	Gap     int
	Omitted int
}

// Detailer is implemented by feeds that serve detail screens on demand
// rather than carrying timelines in every snapshot. The UI calls it once
// when a detail screen opens (from a command goroutine).
type Detailer interface {
	// Timeline returns the identity-bearing requests of an instance.
	Timeline(instanceKey string) Excerpt
	// Around returns the requests around a finding on its connection, as
	// recorded when the finding was made.
	Around(f FindingRow) Excerpt
}
