package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type filteredReport struct {
	Totals struct {
		Findings   int            `json:"findings"`
		ByRule     map[string]int `json:"findings_by_rule"`
		Suppressed int            `json:"suppressed"`
	} `json:"totals"`
	Cases      []struct{ Rule string } `json:"cases"`
	Suppressed []struct{ Rule string } `json:"suppressed"`
	Findings   []struct {
		Rule       string `json:"rule"`
		Severity   string `json:"severity"`
		InstanceID string `json:"instance_id"`
		ClientID   string `json:"client_id"`
	} `json:"findings"`
}

func readFiltered(t *testing.T, wantCode int, args ...string) filteredReport {
	t.Helper()
	code, stdout, stderr := runKwatch(append([]string{"read", "--format", "json"}, args...)...)
	if code != wantCode {
		t.Fatalf("kwatch read %v: exit %d, want %d: %s", args, code, wantCode, stderr)
	}
	var r filteredReport
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatal(err)
	}
	if r.Totals.Findings != len(r.Findings) {
		t.Errorf("totals say %d findings, the report lists %d", r.Totals.Findings, len(r.Findings))
	}
	return r
}

// TestFilters: --rule, --min-severity and --client narrow the report to
// the findings they select, totals and exit status included.
func TestFilters(t *testing.T) {
	capture := shipped("fleet-mixed.pcapng")
	all := readFiltered(t, 1, capture)
	if len(all.Findings) < 10 {
		t.Fatalf("only %d findings to filter", len(all.Findings))
	}
	byRule := readFiltered(t, 0, "--rule", "member-id-encoding", capture) // info only: exit 0
	if len(byRule.Findings) != all.Totals.ByRule["member-id-encoding"] || len(byRule.Findings) == 0 {
		t.Errorf("--rule: %d findings, want %d", len(byRule.Findings), all.Totals.ByRule["member-id-encoding"])
	}
	errs := readFiltered(t, 1, "--min-severity", "error", capture)
	for _, f := range errs.Findings {
		if f.Severity != "error" {
			t.Errorf("--min-severity error kept a %s finding", f.Severity)
		}
	}
	warns := readFiltered(t, 0, "--min-severity", "warn", "--fail-on", "error", "--rule", "instance-id-reserved", capture)
	if len(warns.Findings) != 1 {
		t.Errorf("--rule instance-id-reserved: %d findings", len(warns.Findings))
	}
	var id string
	for _, f := range all.Findings {
		if f.InstanceID != "" {
			id = f.InstanceID
			break
		}
	}
	one := readFiltered(t, 0, "--fail-on", "never", "--client", id, capture)
	if len(one.Findings) == 0 {
		t.Fatal("--client: no findings")
	}
	for _, f := range one.Findings {
		if f.InstanceID != id {
			t.Errorf("--client %s kept a finding of %q", id, f.InstanceID)
		}
	}
	if code, _, stderr := runKwatch("read", "--rule", "no-such-rule", capture); code != 2 || !strings.Contains(stderr, "no such rule") {
		t.Errorf("--rule no-such-rule: exit %d, %q", code, stderr)
	}
}

// TestBaselineRoundTrip: kwatch baseline writes today's cases; read with
// --baseline then reports none of them (counted as suppressed, exit 0),
// and a case missing from the baseline is reported again.
func TestBaselineRoundTrip(t *testing.T) {
	capture := shipped("fleet-mixed.pcapng")
	code, lines, stderr := runKwatch("baseline", capture)
	if code != 0 {
		t.Fatalf("baseline: exit %d: %s", code, stderr)
	}
	all := readFiltered(t, 1, capture)
	entries := strings.Split(strings.TrimSpace(lines), "\n")
	if len(entries) != len(all.Cases) {
		t.Fatalf("baseline has %d lines, the report %d cases", len(entries), len(all.Cases))
	}
	dir := t.TempDir()
	full := filepath.Join(dir, "kwatch.baseline")
	os.WriteFile(full, []byte(lines), 0o600)
	quiet := readFiltered(t, 0, "--baseline", full, "--show-suppressed", capture)
	if len(quiet.Findings) != 0 || quiet.Totals.Suppressed != all.Totals.Findings || len(quiet.Suppressed) != len(all.Cases) {
		t.Errorf("with the full baseline: %d findings, %d suppressed of %d, %d suppressed cases of %d",
			len(quiet.Findings), quiet.Totals.Suppressed, all.Totals.Findings, len(quiet.Suppressed), len(all.Cases))
	}
	// The first case (the most severe) is new: it alone is reported.
	partial := filepath.Join(dir, "partial.baseline")
	os.WriteFile(partial, []byte(strings.Join(entries[1:], "\n")+"\n"), 0o600)
	one := readFiltered(t, 1, "--baseline", partial, capture)
	if len(one.Cases) != 1 || one.Cases[0].Rule != all.Cases[0].Rule {
		t.Errorf("with a partial baseline: cases %+v, want only %s", one.Cases, all.Cases[0].Rule)
	}
	bad := filepath.Join(dir, "bad.baseline")
	os.WriteFile(bad, []byte("not json\n"), 0o600)
	if code, _, stderr := runKwatch("read", "--baseline", bad, capture); code != 2 || !strings.Contains(stderr, "baseline") {
		t.Errorf("a bad baseline: exit %d, %q", code, stderr)
	}
}
