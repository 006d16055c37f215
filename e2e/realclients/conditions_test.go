//go:build e2e

package realclients

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kwatch/kwatch/internal/pcapgen"
)

// conditionView is what SPEC.md 2.1 says a capture condition leaves as a
// clean capture had it: every finding with its confidence, the coverage
// (truncated-packet aside, which a snap length adds), and the requests and
// responses by API key.
type conditionView struct {
	findings     []string
	coverage     map[string]uint64
	reqs, resps  map[int16]int
	kafka, conns uint64
}

func viewOf(r kwatchResult) conditionView {
	v := conditionView{coverage: maps.Clone(r.report.Totals.Coverage), kafka: r.report.Totals.KafkaConnections, conns: r.report.Totals.Connections}
	delete(v.coverage, "truncated-packet")
	for _, f := range r.report.Findings {
		v.findings = append(v.findings, fmt.Sprintf("%s/%s %v corr=%d %s/%s", f.Rule, f.Confidence, f.Conn.Client, f.CorrelationID, f.Expected, f.Observed))
	}
	slices.Sort(v.findings)
	v.reqs, v.resps = r.counts()
	return v
}

// checkConditions: SPEC.md 2.1 on this library's own traffic, captured
// live on loopback: under each of pcapgen.Conditions (every tunnel kwatch
// unwraps, IP fragments, -s 512 and -s 256, reordering) the capture gives the clean capture's findings, confidence, coverage and
// requests and responses.
func checkConditions(t *testing.T, out outcome) {
	t.Helper()
	clean, err := os.ReadFile(out.pcap)
	if err != nil {
		t.Fatal(err)
	}
	want := viewOf(out.kw)
	conditions := pcapgen.Conditions()
	dir := t.TempDir()
	for _, name := range slices.Sorted(maps.Keys(conditions)) {
		t.Run(name, func(t *testing.T) {
			b, err := conditions[name](clean)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, name+".pcap")
			if err := os.WriteFile(path, b, 0o600); err != nil {
				t.Fatal(err)
			}
			got := viewOf(runKwatch(t, path))
			if !slices.Equal(got.findings, want.findings) {
				t.Errorf("findings differ:\n got %q\nwant %q", got.findings, want.findings)
			}
			if !maps.Equal(got.coverage, want.coverage) || got.kafka != want.kafka || got.conns != want.conns {
				t.Errorf("coverage %v on %d of %d connections Kafka, want %v on %d of %d", got.coverage, got.kafka, got.conns, want.coverage, want.kafka, want.conns)
			}
			if !maps.Equal(got.reqs, want.reqs) || !maps.Equal(got.resps, want.resps) {
				t.Errorf("requests %s, responses %s; want %s, %s", keyCounts(got.reqs), keyCounts(got.resps), keyCounts(want.reqs), keyCounts(want.resps))
			}
			keepFailed(t, out.pcap, path)
		})
	}
}

// keepFailed copies a failed condition's clean and rewritten captures to
// $KWATCH_E2E_KEEP, when set: the recordings differ from run to run, so a
// failure is reproducible only from its files.
func keepFailed(t *testing.T, files ...string) {
	dir := os.Getenv("KWATCH_E2E_KEEP")
	if !t.Failed() || dir == "" {
		return
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, strings.ReplaceAll(t.Name(), "/", "_")+"-"+filepath.Base(f)), b, 0o644)
		}
		if err != nil {
			t.Logf("keeping %s: %v", f, err)
		}
	}
}
