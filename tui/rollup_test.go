package tui

import (
	"strings"
	"testing"

	"github.com/kwatch/kwatch/audit"
)

// TestRollups: the groups pane counts the member IDs the report marks as
// shared and colours the group; the brokers pane shows a broker's own
// cases, not its clients' findings.
func TestRollups(t *testing.T) {
	d := fixtureData()
	// billing reuses orders' member ID; the broker accepted invalid requests.
	d.Groups[0].Members[0] = MemberRow{MemberID: "AAECAwQFBgcICQoLDA0ODw", Clients: []string{"AAECAwQFBgcICQoLDA0ODw", "EBESExQVFhcYGRobHB0eHw"}, Shared: true}
	d.Cases = append(d.Cases, CaseRow{Rule: "broker-accepted-invalid", Severity: audit.SeverityWarn, Count: 3, Broker: "10.0.0.9:9092", FirstFrame: 41, LastFrame: 95})
	d.Brokers[0].Findings = map[string]int{"broker-accepted-invalid": 3}
	tests := []struct {
		name   string
		rows   []rollupRow
		key    string
		nums   map[int]int
		sev    audit.Severity // audit.SeverityInfo: not coloured
		detail []string
	}{
		{"group with a collision", buildGroups(&d), "group orders",
			map[int]int{gcMembers: 2, gcClients: 2, gcShared: 1, gcFindings: 1}, audit.SeverityWarn,
			[]string{"AAECAwQFBgcICQoLDA0ODw    ", "shared: one member ID, several clients", "AAECAwQFBgcICQoLDA0ODw, EBESExQVFhcYGRobHB0eHw"}},
		{"group without", buildGroups(&d), "group shares",
			map[int]int{gcMembers: 1, gcClients: 1, gcShared: 0, gcFindings: 0}, audit.SeverityInfo, []string{"rdkafka-3f2a9c"}},
		{"broker with a case", buildBrokers(&d), "broker 10.0.0.9:9092",
			map[int]int{bcClients: 3, bcFindings: 3}, audit.SeverityWarn, []string{"broker-accepted-invalid  frames 41–95"}},
		{"broker without", buildBrokers(&d), "broker 10.0.0.10:9092",
			map[int]int{bcClients: 1, bcFindings: 0}, audit.SeverityInfo, []string{"none: it answered as a conforming broker would"}},
	}
	st := DefaultStyles()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r *rollupRow
			for i := range tt.rows {
				if tt.rows[i].key == tt.key {
					r = &tt.rows[i]
				}
			}
			if r == nil {
				t.Fatalf("no row %q", tt.key)
			}
			for c, n := range tt.nums {
				if r.nums[c] != n {
					t.Errorf("column %d = %d, want %d", c, r.nums[c], n)
				}
			}
			sev := audit.SeverityInfo
			if r.sev != nil {
				sev = *r.sev
			}
			if sev != tt.sev {
				t.Errorf("coloured %v, want %v", sev, tt.sev)
			}
			det := r.detail(&st, 160)
			for _, w := range tt.detail {
				if !strings.Contains(det, w) {
					t.Errorf("detail lacks %q:\n%s", w, det)
				}
			}
		})
	}
}
