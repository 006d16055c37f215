//go:build e2e

package realclients

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
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
// live on loopback: mirrored in every tunnel kwatch unwraps, fragmented,
// cut at -s 512 and -s 256, and reordered in windows of 3 to 8 packets, the
// capture gives the clean capture's findings, confidence, coverage and
// requests and responses.
func checkConditions(t *testing.T, out outcome) {
	t.Helper()
	clean, err := os.ReadFile(out.pcap)
	if err != nil {
		t.Fatal(err)
	}
	want := viewOf(out.kw)
	conditions := map[string]func([]byte) ([]byte, error){
		"fragmented":  func(b []byte) ([]byte, error) { return pcapgen.FragmentCapture(b, 1024, true) },
		"snaplen-512": func(b []byte) ([]byte, error) { return pcapgen.Recut(b, 512) },
		"snaplen-256": func(b []byte) ([]byte, error) { return pcapgen.Recut(b, 256) },
		"reordered":   func(b []byte) ([]byte, error) { return pcapgen.Shuffle(b, 3, 8, 1) },
	}
	for _, enc := range pcapgen.Encaps() {
		conditions["tunnel-"+enc.String()] = func(b []byte) ([]byte, error) { return pcapgen.WrapCapture(b, enc) }
	}
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
		})
	}
}
