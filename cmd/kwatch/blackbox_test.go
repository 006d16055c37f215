package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kwatch/kwatch/internal/pcapgen"
)

// Helpers shared by the black-box scenario tests (blackbox*_test.go):
// captures written from SPEC.md alone and run through the CLI in-process.

// bbCaptureFile writes c to a temporary file named name, or after the test
// when name is "" (the extension picks the format).
func bbCaptureFile(t *testing.T, c *pcapgen.Capture, name string) string {
	t.Helper()
	if name == "" {
		name = strings.ReplaceAll(t.Name(), "/", "_") + ".pcap"
	}
	path := filepath.Join(t.TempDir(), name)
	if err := c.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// bbReadJSON runs `kwatch read --format json --fail-on never` with args
// (flags and files), fails the test unless it exits 0, checks what every
// report holds (SPEC.md section 5: its totals count its findings, by rule
// and by severity) and returns the report's text.
func bbReadJSON(t *testing.T, args ...string) string {
	t.Helper()
	all := append([]string{"read", "--format", "json", "--fail-on", "never"}, args...)
	code, stdout, stderr := runKwatch(all...)
	if code != 0 {
		t.Fatalf("kwatch %v: exit %d: %s", all, code, stderr)
	}
	var rep struct {
		Totals struct {
			Findings   int            `json:"findings"`
			BySeverity map[string]int `json:"findings_by_severity"`
			ByRule     map[string]int `json:"findings_by_rule"`
		} `json:"totals"`
		Findings []struct {
			Rule     string `json:"rule"`
			Severity string `json:"severity"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("report is not JSON: %v\n%s", err, stdout)
	}
	byRule, bySev := map[string]int{}, map[string]int{}
	for _, f := range rep.Findings {
		byRule[f.Rule]++
		bySev[f.Severity]++
	}
	if rep.Totals.Findings != len(rep.Findings) {
		t.Errorf("totals.findings %d, findings array has %d", rep.Totals.Findings, len(rep.Findings))
	}
	for r, n := range byRule {
		if rep.Totals.ByRule[r] != n {
			t.Errorf("totals.findings_by_rule[%s] = %d, findings array has %d", r, rep.Totals.ByRule[r], n)
		}
	}
	for s, n := range bySev {
		if rep.Totals.BySeverity[s] != n {
			t.Errorf("totals.findings_by_severity[%s] = %d, findings array has %d", s, rep.Totals.BySeverity[s], n)
		}
	}
	return stdout
}

// bbReadAs runs bbReadJSON over path, extra flags first, and decodes the
// report into R, the shape the calling test file reads it in. It also
// returns the report's text.
func bbReadAs[R any](t *testing.T, path string, extra ...string) (R, string) {
	t.Helper()
	out := bbReadJSON(t, append(extra[:len(extra):len(extra)], path)...)
	var rep R
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("report is not JSON: %v\n%s", err, out)
	}
	return rep, out
}

// bbCompareCounts fails t when the rule counts got and want differ (a
// rule absent from one counts 0 there), naming every rule that differs,
// in order, then the findings as summary lists them. label, if not
// empty, starts the message.
func bbCompareCounts(t *testing.T, label string, got, want map[string]int, summary func() string) {
	t.Helper()
	keys := map[string]bool{}
	for k := range got {
		keys[k] = true
	}
	for k := range want {
		keys[k] = true
	}
	var bad []string
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if got[k] != want[k] {
			bad = append(bad, fmt.Sprintf("%s: got %d, spec requires %d", k, got[k], want[k]))
		}
	}
	if len(bad) > 0 {
		if label != "" {
			label += ": "
		}
		t.Errorf("%srule counts differ:\n  %s\nfindings:\n%s", label, strings.Join(bad, "\n  "), summary())
	}
}

// bbFinding is a finding of the JSON report (SPEC.md section 5).
type bbFinding struct {
	Time          string  `json:"time"`
	Rule          string  `json:"rule"`
	Severity      string  `json:"severity"`
	KIP           string  `json:"kip"`
	Confidence    string  `json:"confidence"`
	Frame         int     `json:"frame"`
	Conn          bbConn  `json:"conn"`
	API           string  `json:"api"`
	APIKey        int     `json:"api_key"`
	APIVersion    int     `json:"api_version"`
	CorrelationID int32   `json:"correlation_id"`
	ClientID      *string `json:"client_id"`
	InstanceID    string  `json:"instance_id"`
	Expected      string  `json:"expected"`
	Observed      string  `json:"observed"`
	Message       string  `json:"message"`
}

type bbConn struct {
	Client string `json:"client"`
	Broker string `json:"broker"`
}
