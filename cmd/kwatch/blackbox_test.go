package main

import (
	"encoding/json"
	"path/filepath"
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
