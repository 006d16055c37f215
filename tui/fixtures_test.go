package tui

import (
	"errors"
	"fmt"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/kwatch/kwatch/audit"
)

// t0 is the fixtures' capture start: fixed, so screens are reproducible.
var t0 = time.Date(2026, 11, 29, 16, 49, 25, 123456000, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// fixtureData is a small finished replay: three instances (one legacy),
// five findings of every severity.
func fixtureData() Data {
	const (
		orders  = "AAECAwQFBgcICQoLDA0ODw"
		billing = "EBESExQVFhcYGRobHB0eHw"
	)
	timeline := []TimelineRow{
		{Time: at(10), Frame: 4, Client: "10.0.0.5:53122", Broker: "10.0.0.9:9092", API: "ApiVersions", APIVersion: 4, Header: 2, CorrelationID: 0, ClientID: "orders-app", InstanceID: orders, Note: "software=apache-kafka-java/4.2.0"},
		{Time: at(20), Frame: 8, Client: "10.0.0.5:53122", Broker: "10.0.0.9:9092", API: "Metadata", APIVersion: 12, Header: 2, CorrelationID: 1, ClientID: "orders-app", InstanceID: orders},
		{Time: at(1500), Frame: 40, Client: "10.0.0.5:53122", Broker: "10.0.0.9:9092", API: "ConsumerGroupHeartbeat", APIVersion: 1, Header: 2, CorrelationID: 7, ClientID: "orders-app", InstanceID: "Dw4NDAsKCQgHBgUEAwIBAA", Note: "group=orders member=AAECAwQFBgcICQoLDA0ODw epoch=0", Rules: []string{"instance-id-changed"}},
		{Time: at(1600), Frame: 44, Client: "10.0.0.5:53122", Broker: "10.0.0.9:9092", API: "ConsumerGroupHeartbeat", APIVersion: 1, Header: 2, CorrelationID: 8, ClientID: "orders-app", InstanceID: orders, Note: "group=orders epoch=1"},
	}
	return Data{
		Source:           "testdata/orders.pcapng",
		Done:             true,
		Elapsed:          83456 * time.Millisecond,
		Packets:          12345,
		Bytes:            4_718_592,
		Requests:         2345,
		RequestsByHeader: [4]uint64{0, 45, 2300, 0},
		Connections:      7,
		OpenConns:        2,
		TCPConns:         9,
		Coverage:         map[string]uint64{"midstream-join": 1, "stream-gap": 2, "tls-connection": 0},
		FindingsBySeverity: [audit.SeverityError + 1]int{
			audit.SeverityInfo: 1, audit.SeverityWarn: 2, audit.SeverityError: 2,
		},
		FindingsByRule: map[string]int{
			"instance-id-changed": 1, "instance-id-dropped": 1, "client-id-changed": 1,
			"member-id-encoding": 1, "member-id-not-uuid": 1,
		},
		RuleSeverity: map[string]audit.Severity{
			"instance-id-changed": audit.SeverityError, "instance-id-dropped": audit.SeverityError, "client-id-changed": audit.SeverityWarn,
			"member-id-encoding": audit.SeverityInfo, "member-id-not-uuid": audit.SeverityWarn,
		},
		Cases: []CaseRow{
			{Rule: "instance-id-changed", Severity: audit.SeverityError, Count: 1, Client: orders, InstanceKey: orders, Software: "apache-kafka-java/4.2.0", FirstFrame: 40, LastFrame: 40},
			{Rule: "instance-id-dropped", Severity: audit.SeverityError, Count: 1, Client: billing, InstanceKey: billing, Software: "franz-go/1.22.3", FirstFrame: 90, LastFrame: 90},
			{Rule: "client-id-changed", Severity: audit.SeverityWarn, Count: 1, Client: billing, InstanceKey: billing, Software: "franz-go/1.22.3", FirstFrame: 77, LastFrame: 77},
			{Rule: "member-id-not-uuid", Severity: audit.SeverityWarn, Count: 1, Client: "(no ID) 10.0.0.8 rdkafka", InstanceKey: "legacy 10.0.0.8 rdkafka", FirstFrame: 130, LastFrame: 130},
			{Rule: "member-id-encoding", Severity: audit.SeverityInfo, Count: 1, Client: orders, InstanceKey: orders, Software: "apache-kafka-java/4.2.0", FirstFrame: 52, LastFrame: 52},
		},
		Software: []SoftwareRow{
			{Software: "franz-go/1.22.3", Clients: 1, Breaking: 1, Findings: map[string]int{"client-id-changed": 1, "instance-id-dropped": 1}},
			{Software: "apache-kafka-java/4.2.0", Clients: 1, Breaking: 1, Findings: map[string]int{"instance-id-changed": 1, "member-id-encoding": 1}},
			{Software: "", Clients: 1, Breaking: 1, Findings: map[string]int{"member-id-not-uuid": 1}},
		},
		Groups: []GroupRow{
			{Group: "orders", Members: []MemberRow{{MemberID: orders, Clients: []string{orders}}, {MemberID: orders + "==", Clients: []string{orders}}}},
			{Group: "shares", Members: []MemberRow{{MemberID: "rdkafka-3f2a9c", Clients: []string{`10.0.0.8 "rdkafka"`}}}},
		},
		Brokers: []BrokerRow{
			{Broker: "10.0.0.9:9092", Clients: 3, Findings: map[string]int{}},
			{Broker: "10.0.0.10:9092", Clients: 1, Findings: map[string]int{}},
		},
		Findings: []FindingRow{
			{Rule: "instance-id-changed", Severity: audit.SeverityError, KIP: "KIP-1313", Confidence: "full", Frame: 40, Time: at(1500),
				Client: "10.0.0.5:53122", Broker: "10.0.0.9:9092", API: "ConsumerGroupHeartbeat", APIKey: 68, APIVersion: 1, CorrelationID: 7,
				ClientID: "orders-app", InstanceID: "Dw4NDAsKCQgHBgUEAwIBAA", Expected: orders, Observed: "Dw4NDAsKCQgHBgUEAwIBAA",
				Message:     "instance ID changed mid-connection; a conforming broker rejects this request with INVALID_REQUEST",
				InstanceKey: orders, Around: timeline[1:]},
			{Rule: "member-id-encoding", Severity: audit.SeverityInfo, KIP: "KIP-1082", Confidence: "full", Frame: 52, Time: at(2100),
				Client: "10.0.0.5:53123", Broker: "10.0.0.9:9092", API: "ConsumerGroupHeartbeat", APIKey: 68, APIVersion: 1, CorrelationID: 3,
				ClientID: "orders-app", InstanceID: orders, Expected: "AAECAwQFBgcICQoLDA0ODw", Observed: "AAECAwQFBgcICQoLDA0ODw==",
				Group: "orders", MemberID: "AAECAwQFBgcICQoLDA0ODw==",
				Message: "member ID is padded URL-safe base64, not Java's form", InstanceKey: orders},
			{Rule: "client-id-changed", Severity: audit.SeverityWarn, KIP: "KIP-1313", Confidence: "partial", Frame: 77, Time: at(3050),
				Client: "10.0.0.7:40001", Broker: "10.0.0.10:9092", API: "Fetch", APIKey: 1, APIVersion: 17, CorrelationID: 12,
				ClientID: "billing-2", InstanceID: billing, Expected: "billing", Observed: "billing-2",
				Message: "client ID changed; the broker attributes the request to the first", InstanceKey: billing},
			{Rule: "instance-id-dropped", Severity: audit.SeverityError, KIP: "KIP-1313", Confidence: "full", Frame: 90, Time: at(4000),
				Client: "10.0.0.7:40001", Broker: "10.0.0.10:9092", API: "Produce", APIKey: 0, APIVersion: 12, CorrelationID: 15,
				ClientID: "billing", Expected: billing, Observed: "(none)",
				Message: "instance ID dropped mid-connection; a conforming broker rejects this request with INVALID_REQUEST", InstanceKey: billing},
			{Rule: "member-id-not-uuid", Severity: audit.SeverityWarn, KIP: "KIP-1082", Confidence: "full", Frame: 130, Time: at(9000),
				Client: "10.0.0.8:51000", Broker: "10.0.0.9:9092", API: "ShareGroupHeartbeat", APIKey: 76, APIVersion: 1, CorrelationID: 2,
				ClientID: "rdkafka", Observed: "rdkafka-3f2a9c",
				Message: "member ID is not 16 bytes in any known encoding", InstanceKey: "legacy 10.0.0.8 rdkafka"},
		},
		Instances: []InstanceRow{
			{Key: orders, InstanceID: orders, ClientIDs: []string{"orders-app"}, Software: "apache-kafka-java/4.2.0",
				Hosts: []string{"10.0.0.5"}, Brokers: []string{"10.0.0.9:9092"}, Connections: 2,
				MemberIDs:   map[string][]string{"orders": {"AAECAwQFBgcICQoLDA0ODw", "AAECAwQFBgcICQoLDA0ODw=="}},
				TelemetryID: orders, Findings: map[string]int{"instance-id-changed": 1, "member-id-encoding": 1},
				Conns: []ConnRow{
					{Client: "10.0.0.5:53122", Broker: "10.0.0.9:9092", StartFrame: 1, Note: "open"},
					{Client: "10.0.0.5:53123", Broker: "10.0.0.9:9092", StartFrame: 48},
				},
				Timeline: timeline},
			{Key: billing, InstanceID: billing, ClientIDs: []string{"billing", "billing-2"}, Software: "franz-go/1.22.3",
				Hosts: []string{"10.0.0.7"}, Brokers: []string{"10.0.0.10:9092", "10.0.0.9:9092"}, Connections: 4,
				Findings: map[string]int{"client-id-changed": 1, "instance-id-dropped": 1},
				Conns:    []ConnRow{{Client: "10.0.0.7:40001", Broker: "10.0.0.10:9092", StartFrame: 60, Note: "mid-stream"}}},
			{Key: "legacy 10.0.0.8 rdkafka", ClientIDs: []string{"rdkafka"}, Software: "",
				Hosts: []string{"10.0.0.8"}, Brokers: []string{"10.0.0.9:9092"}, Connections: 1,
				MemberIDs: map[string][]string{"shares": {"rdkafka-3f2a9c"}},
				Findings:  map[string]int{"member-id-not-uuid": 1}},
		},
	}
}

// bigData is a large snapshot for benchmarks and scrolling tests.
func bigData(instances, findings int) Data {
	d := fixtureData()
	d.Done = false
	base := d.Findings
	d.Findings = make([]FindingRow, 0, findings)
	for i := range findings {
		f := base[i%len(base)]
		f.Frame = uint64(i + 1)
		f.Time = at(i)
		d.Findings = append(d.Findings, f)
	}
	d.Instances = make([]InstanceRow, 0, instances)
	for i := range instances {
		d.Instances = append(d.Instances, InstanceRow{
			Key: fmt.Sprintf("inst-%05d", i), InstanceID: fmt.Sprintf("inst-%05d", i), ClientIDs: []string{"app"},
			Hosts: []string{"10.1.0.1"}, Connections: i % 7, Findings: map[string]int{"client-id-changed": i % 5},
		})
	}
	return d
}

func explainFixture(rule string) (string, string) {
	if rule == "instance-id-changed" {
		return "the header instance ID changed mid-connection",
			"KIP-1313 makes a connection consistent in its use of the header instance ID: once the first v2-header request carried one, every later request carries the same value. A conforming broker rejects a request that changes it with INVALID_REQUEST (error code 42)."
	}
	return "", ""
}

// staticFeed always returns the same snapshot.
type staticFeed struct{ d Data }

func (f staticFeed) Data() Data { return f.d }

// detailFeed also serves timelines on demand.
type detailFeed struct {
	staticFeed
	timeline []TimelineRow
}

func (f detailFeed) Timeline(string) Excerpt   { return Excerpt{Rows: f.timeline} }
func (f detailFeed) Around(FindingRow) Excerpt { return Excerpt{Rows: f.timeline} }

var errFixture = errors.New("capture: interface went down")

// keyMsg builds the key press Bubble Tea would deliver for a key name.
func keyMsg(s string) tea.KeyPressMsg {
	switch s {
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "shift+tab":
		return tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	case "space":
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	}
	r := []rune(s)[0]
	return tea.KeyPressMsg{Code: r, Text: s}
}
