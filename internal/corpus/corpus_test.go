package corpus

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kwatch/kwatch/audit"
	"github.com/kwatch/kwatch/capture"
	"github.com/kwatch/kwatch/pipeline"
)

var update = flag.Bool("update", false, "rewrite the committed corpus captures and expectations")

// pcapDir is the committed corpus, relative to this package.
const pcapDir = "../../testdata/pcaps"

// ownPrefixes are the file name prefixes of testdata/pcaps this package owns.
var ownPrefixes = []string{"rule-", "compliant-", "fleet-", "quickstart"}

// TestScenarioTable checks the table itself: unique names, valid
// expectations, and for every rule of SPEC.md a rule capture that fires it
// with a twin that does not.
func TestScenarioTable(t *testing.T) {
	all := Scenarios()
	byName := map[string]Scenario{}
	for _, s := range all {
		if _, dup := byName[s.Name]; dup {
			t.Errorf("scenario %s defined twice", s.Name)
		}
		byName[s.Name] = s
		if _, err := s.Expectation(); err != nil {
			t.Error(err)
		}
	}
	has := func(s Scenario, rule string) bool {
		return slices.ContainsFunc(s.Expect, func(e Expected) bool { return e.Rule == rule })
	}
	for _, rule := range SpecRules() {
		t.Run(rule, func(t *testing.T) {
			pairs := 0
			for _, s := range all {
				if !strings.HasPrefix(s.Name, "rule-"+rule) || strings.HasSuffix(s.Name, "-ok") || !has(s, rule) {
					continue
				}
				ok, found := byName[s.Name+"-ok"]
				if !found {
					t.Errorf("%s has no -ok twin", s.Name)
					continue
				}
				if has(ok, rule) {
					t.Errorf("%s expects %s", ok.Name, rule)
				}
				pairs++
			}
			if pairs == 0 {
				t.Errorf("no rule-%s capture fires it", rule)
			}
		})
	}
	for _, name := range []string{"compliant-modern", "compliant-legacy"} {
		if s, ok := byName[name]; !ok || len(s.Expect) != 0 {
			t.Errorf("%s: missing or expects findings", name)
		}
	}
}

// TestCommittedFilesCurrent regenerates every scenario in memory and
// compares it with the committed files (-update rewrites them).
func TestCommittedFilesCurrent(t *testing.T) {
	want := map[string]bool{}
	for _, s := range Scenarios() {
		want[s.FileName()] = true
		want[s.ExpectedFileName()] = true
		t.Run(s.Name, func(t *testing.T) {
			if *update {
				if err := s.Write(pcapDir); err != nil {
					t.Fatal(err)
				}
			}
			capBytes, err := s.Capture()
			if err != nil {
				t.Fatal(err)
			}
			expBytes, err := s.ExpectedJSON()
			if err != nil {
				t.Fatal(err)
			}
			if len(capBytes) > 64<<10 {
				t.Errorf("capture is %d bytes: keep corpus captures small", len(capBytes))
			}
			for name, gen := range map[string][]byte{s.FileName(): capBytes, s.ExpectedFileName(): expBytes} {
				got, err := os.ReadFile(filepath.Join(pcapDir, name))
				if err != nil {
					t.Fatalf("%v: run go test ./internal/corpus -update", err)
				}
				if !bytes.Equal(got, gen) {
					t.Errorf("%s is stale: run go test ./internal/corpus -update", name)
				}
			}
		})
	}
	entries, err := os.ReadDir(pcapDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		n := e.Name()
		own := slices.ContainsFunc(ownPrefixes, func(p string) bool { return strings.HasPrefix(n, p) })
		if own && !want[n] {
			t.Errorf("%s belongs to no scenario: delete it", n)
		}
	}
}

// TestFindings runs kwatch's pipeline and auditor over every committed
// capture and asserts that the findings are exactly the expected ones:
// per rule the count, the sorted correlation IDs, the severity and the
// confidence.
func TestFindings(t *testing.T) {
	for _, s := range Scenarios() {
		t.Run(s.Name, func(t *testing.T) {
			want := readExpected(t, filepath.Join(pcapDir, s.ExpectedFileName()))
			opts, err := auditOptions(want.Profile, want.Args)
			if err != nil {
				t.Fatal(err)
			}
			findings := runAudit(t, filepath.Join(pcapDir, s.FileName()), opts)
			got := summarize(findings)
			for _, diff := range compare(want.Findings, got) {
				t.Error(diff)
			}
			if t.Failed() {
				for _, f := range findings {
					t.Logf("  got frame %d corr %d %s %s/%s: %s", f.Frame, f.CorrelationID, f.Rule, f.Severity, f.Confidence, f.Message)
				}
			}
		})
	}
}

func readExpected(t *testing.T, path string) ExpectedFile {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v: run go test ./internal/corpus -update", err)
	}
	var f ExpectedFile
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return f
}

// auditOptions maps an expectation's profile and kwatch read flags to the
// auditor's options, as cmd/kwatch does.
func auditOptions(profile string, args []string) (audit.Options, error) {
	p, err := audit.ParseProfile(profile)
	if err != nil {
		return audit.Options{}, err
	}
	fs := flag.NewFlagSet("args", flag.ContinueOnError)
	from := fs.Int("member-id-required-from", 1, "")
	if err := fs.Parse(args); err != nil {
		return audit.Options{}, err
	}
	o := audit.Options{Profile: p, MemberIDRequiredFrom: int16(*from)}
	if *from == 0 {
		o.MemberIDRequiredFrom = -1 // every version
	}
	return o, nil
}

func runAudit(t *testing.T, path string, opts audit.Options) []audit.Finding {
	t.Helper()
	src, err := capture.OpenFiles([]string{path}, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	a := audit.New(opts)
	st, err := pipeline.Run(context.Background(), src, pipeline.Options{HeaderV3: audit.HeaderV3(opts.Profile)}, a)
	if err != nil {
		t.Fatalf("pipeline: %v", err)
	}
	a.AddCapture(st.Packets, st.Bytes, st.Connections)
	rep := a.Finish(st.LastTime)
	if rep.Totals.FindingsNotKept != 0 {
		t.Fatalf("%d findings not kept", rep.Totals.FindingsNotKept)
	}
	return rep.Findings
}

// summarize groups findings by rule in the expectation's shape. A finding
// that belongs to no request (API "") contributes no correlation ID.
func summarize(fs []audit.Finding) map[string]Expected {
	got := map[string]Expected{}
	for _, f := range fs {
		e := got[f.Rule]
		e.Rule = f.Rule
		e.Count++
		if f.API != "" {
			e.CorrelationIDs = append(e.CorrelationIDs, f.CorrelationID)
		}
		for _, v := range []struct {
			dst *string
			val string
		}{{&e.Severity, f.Severity.String()}, {&e.Confidence, f.Confidence.String()}} {
			switch *v.dst {
			case "":
				*v.dst = v.val
			case v.val:
			default:
				*v.dst = mixed
			}
		}
		got[f.Rule] = e
	}
	for r, e := range got {
		slices.Sort(e.CorrelationIDs)
		got[r] = e
	}
	return got
}

// compare lists every difference between the expectation and the findings.
func compare(want []Expected, got map[string]Expected) []string {
	var diffs []string
	seen := map[string]bool{}
	for _, w := range want {
		seen[w.Rule] = true
		g, ok := got[w.Rule]
		if !ok {
			diffs = append(diffs, fmt.Sprintf("%s: want %d finding(s) at corr %v, got none", w.Rule, w.Count, w.CorrelationIDs))
			continue
		}
		if g.Count != w.Count || !slices.Equal(g.CorrelationIDs, w.CorrelationIDs) {
			diffs = append(diffs, fmt.Sprintf("%s: want %d finding(s) at corr %v, got %d at corr %v", w.Rule, w.Count, w.CorrelationIDs, g.Count, g.CorrelationIDs))
		}
		if w.Severity != mixed && g.Severity != w.Severity {
			diffs = append(diffs, fmt.Sprintf("%s: want severity %s, got %s", w.Rule, w.Severity, g.Severity))
		}
		if w.Confidence != mixed && g.Confidence != w.Confidence {
			diffs = append(diffs, fmt.Sprintf("%s: want confidence %s, got %s", w.Rule, w.Confidence, g.Confidence))
		}
	}
	var extra []string
	for r, g := range got {
		if !seen[r] {
			extra = append(extra, fmt.Sprintf("%s: unexpected %d finding(s) at corr %v", r, g.Count, g.CorrelationIDs))
		}
	}
	slices.Sort(extra)
	return append(diffs, extra...)
}
