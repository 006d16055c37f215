// Package corpus owns kwatch's compliance corpus (issue 3): a table of
// scenario captures, each built with internal/pcapgen, together with the
// findings SPEC.md says kwatch must report for it. cmd/writecorpus writes
// every scenario as testdata/pcaps/NAME.pcap (or .pcapng) plus
// NAME.expected.json; corpus_test.go checks that the committed files are
// current and that kwatch's pipeline and auditor report exactly the expected
// findings.
//
// The expectations are written from SPEC.md sections 3, 3.7 and 4, not
// copied from what the auditor prints: where the two disagree, the test
// fails and the auditor is the suspect.
//
// For each rule of SPEC.md section 3 (and the accepted-2026 rules of section
// 4) there is a capture rule-<rule>[-variant] that makes it fire and a twin
// rule-<rule>[-variant]-ok built by the same function with the offending
// detail flipped, which yields none of that rule's findings. compliant-*
// captures yield no finding at all; fleet-mixed and quickstart mix clients.
//
// Concurrency: Scenarios returns a fresh table on every call; a Scenario's
// Build writes into the Capture it is given and keeps no state, so scenarios
// may be built concurrently on different Captures. Buffers: Capture and
// ExpectedJSON return new slices owned by the caller.
package corpus

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kwatch/kwatch/internal/pcapgen"
)

// Expected is the findings of one rule that a scenario must produce: Count
// findings whose request correlation IDs are CorrelationIDs (sorted; a
// connection-level finding such as client-id-repeated, which belongs to no
// request, contributes none).
type Expected struct {
	Rule           string  `json:"rule"`
	Count          int     `json:"count"`
	CorrelationIDs []int32 `json:"correlation_ids"`
	// Severity is what SPEC.md gives this finding; empty means the rule's
	// default severity (Severity fills it in).
	Severity string `json:"severity,omitempty"`
	// Confidence is "full" or "partial"; empty means "full".
	Confidence string `json:"confidence,omitempty"`
}

// Scenario is one capture of the corpus and the findings it must produce.
type Scenario struct {
	Name string
	// Doc says in one line what the capture shows.
	Doc   string
	Build func(*pcapgen.Capture)
	// Expect is the exact, complete list of findings (none for a compliant
	// capture).
	Expect []Expected
	// Profile is the audit profile, "seed" when empty.
	Profile string
	// Args are extra kwatch read flags the expectation assumes, such as
	// --member-id-required-from 2.
	Args []string
	// PCAPNG writes the capture as pcapng instead of classic pcap.
	PCAPNG bool
}

// ExpectedFile is the content of NAME.expected.json.
type ExpectedFile struct {
	Name     string     `json:"name"`
	Doc      string     `json:"doc,omitempty"`
	Profile  string     `json:"profile"`
	Args     []string   `json:"args,omitempty"`
	Findings []Expected `json:"findings"`
}

// FileName is the capture's file name.
func (s Scenario) FileName() string {
	if s.PCAPNG {
		return s.Name + ".pcapng"
	}
	return s.Name + ".pcap"
}

// ExpectedFileName is the name of the expectation file.
func (s Scenario) ExpectedFileName() string { return s.Name + ".expected.json" }

// ProfileName is the audit profile, defaulted.
func (s Scenario) ProfileName() string {
	if s.Profile == "" {
		return "seed"
	}
	return s.Profile
}

// Capture builds the scenario and returns the capture file's bytes.
func (s Scenario) Capture() ([]byte, error) {
	o := pcapgen.Options{Format: pcapgen.FormatPCAP}
	if s.PCAPNG {
		o.Format = pcapgen.FormatPCAPNG
	}
	c := pcapgen.New(o)
	s.Build(c)
	b, err := c.Bytes()
	if err != nil {
		return nil, fmt.Errorf("corpus: build %s: %w", s.Name, err)
	}
	return b, nil
}

// Expectation returns the normalized expectation: rules sorted, counts and
// correlation IDs checked, severity and confidence filled in.
func (s Scenario) Expectation() (ExpectedFile, error) {
	f := ExpectedFile{Name: s.Name, Doc: s.Doc, Profile: s.ProfileName(), Args: s.Args, Findings: []Expected{}}
	seen := map[string]bool{}
	for _, e := range s.Expect {
		if seen[e.Rule] {
			return f, fmt.Errorf("corpus: %s: rule %s listed twice", s.Name, e.Rule)
		}
		seen[e.Rule] = true
		sev, ok := specSeverity[e.Rule]
		if !ok {
			return f, fmt.Errorf("corpus: %s: unknown rule %s", s.Name, e.Rule)
		}
		if e.Severity == "" {
			e.Severity = sev
		}
		if e.Confidence == "" {
			e.Confidence = "full"
		}
		e.CorrelationIDs = slices.Clone(e.CorrelationIDs)
		if e.CorrelationIDs == nil {
			e.CorrelationIDs = []int32{}
		}
		slices.Sort(e.CorrelationIDs)
		if e.Count < len(e.CorrelationIDs) || e.Count == 0 {
			return f, fmt.Errorf("corpus: %s: rule %s: count %d with %d correlation IDs", s.Name, e.Rule, e.Count, len(e.CorrelationIDs))
		}
		f.Findings = append(f.Findings, e)
	}
	slices.SortFunc(f.Findings, func(a, b Expected) int { return strings.Compare(a.Rule, b.Rule) })
	return f, nil
}

// ExpectedJSON returns the content of NAME.expected.json.
func (s Scenario) ExpectedJSON() ([]byte, error) {
	f, err := s.Expectation()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(f); err != nil {
		return nil, fmt.Errorf("corpus: encode %s: %w", s.ExpectedFileName(), err)
	}
	return buf.Bytes(), nil
}

// Write writes the scenario's capture and expectation into dir.
func (s Scenario) Write(dir string) error {
	b, err := s.Capture()
	if err != nil {
		return err
	}
	j, err := s.ExpectedJSON()
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, s.FileName()), b, 0o644); err != nil {
		return fmt.Errorf("corpus: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, s.ExpectedFileName()), j, 0o644); err != nil {
		return fmt.Errorf("corpus: %w", err)
	}
	return nil
}

// WriteAll writes every scenario into dir, creating it if needed.
func WriteAll(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("corpus: %w", err)
	}
	for _, s := range Scenarios() {
		if err := s.Write(dir); err != nil {
			return err
		}
	}
	return nil
}

// Scenarios returns the whole corpus, rule captures first.
func Scenarios() []Scenario {
	var all []Scenario
	all = append(all, ruleScenarios()...)
	all = append(all, edgeScenarios()...)
	all = append(all, mixedScenarios()...)
	return all
}

// specSeverity is each rule's default severity as SPEC.md sections 3 and 4
// state it (member-id-empty and member-id-encoding have a second severity,
// which a scenario spells out in Expected.Severity).
var specSeverity = map[string]string{
	"instance-id-dropped":                "error",
	"instance-id-changed":                "error",
	"instance-id-late":                   "error",
	"instance-id-malformed":              "error",
	"instance-id-reserved":               "warn",
	"instance-id-shared":                 "warn",
	"client-id-changed":                  "warn",
	"client-id-missing-first":            "warn",
	"client-id-repeated":                 "info",
	"telemetry-id-requested-with-header": "error",
	"telemetry-id-mismatch":              "error",
	"telemetry-id-zero-push":             "error",
	"telemetry-id-not-adopted":           "warn",
	"member-id-empty":                    "error",
	"leave-without-member-id":            "error",
	"member-id-changed":                  "warn",
	"ghost-member":                       "error",
	"member-id-collision":                "error",
	"member-id-not-uuid":                 "warn",
	"member-id-encoding":                 "info",
	"member-id-not-v4":                   "info",
	"member-id-misaligned":               "warn",
	"member-id-alignment-encoding":       "info",
	"broker-accepted-invalid":            "warn",
	"broker-generated-member-id":         "warn",
	"broker-telemetry-id-echo":           "info",
	"broker-telemetry-id-missing":        "error",
	"instance-id-missing-first":          "error",
	"instance-id-repeated":               "info",
}

// SpecRules lists every rule ID of SPEC.md sections 3 and 4, sorted.
func SpecRules() []string {
	ids := make([]string, 0, len(specSeverity))
	for id := range specSeverity {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}
