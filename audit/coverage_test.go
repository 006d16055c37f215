package audit

import (
	"testing"

	"github.com/kwatch/kwatch/decode"
)

// TestEveryCoverageExplained: `kwatch rules` explains every coverage event
// a report counts, in report order.
func TestEveryCoverageExplained(t *testing.T) {
	docs := CoverageDocs()
	cov := decode.Coverages()
	if len(docs) != len(cov) {
		t.Fatalf("%d explanations for %d coverage events", len(docs), len(cov))
	}
	for i, c := range cov {
		if docs[i].Event != c || docs[i].Summary == "" || docs[i].Explanation == "" {
			t.Errorf("coverage %s: explanation %+v", c, docs[i])
		}
		if d, ok := LookupCoverage(c.String()); !ok || d.Event != c {
			t.Errorf("LookupCoverage(%q) = %+v, %v", c, d, ok)
		}
	}
	if _, ok := LookupCoverage("instance-id-dropped"); ok {
		t.Error("a rule found as a coverage event")
	}
}

// TestEveryRuleHasFix: each rule says what to change.
func TestEveryRuleHasFix(t *testing.T) {
	for _, r := range Rules() {
		if len(r.Fix) < 20 {
			t.Errorf("rule %s: fix %q", r.ID, r.Fix)
		}
	}
}
