//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kwatch/kwatch/internal/pcapgen"
)

// conditionOutcome is what SPEC.md 2.1 says a condition must leave as
// it was: every finding (rule, confidence, connection, correlation ID,
// expected and observed values) and the coverage, truncated-packet aside.
type conditionOutcome struct {
	findings []string
	coverage map[string]uint64
	kafka    uint64
}

func auditConditions(t *testing.T, path string) conditionOutcome {
	t.Helper()
	out, errOut, code := runKwatch(t, "read", "--format", "json", "--fail-on", "never", path)
	if code != 0 {
		t.Fatalf("kwatch read %s: exit %d: %s", path, code, errOut)
	}
	var rep struct {
		Totals struct {
			KafkaConnections uint64            `json:"kafka_connections"`
			Coverage         map[string]uint64 `json:"coverage"`
		} `json:"totals"`
		Findings []struct {
			Rule, Confidence, Expected, Observed string
			Conn                                 struct{ Client, Broker string }
			CorrelationID                        int32 `json:"correlation_id"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	o := conditionOutcome{coverage: rep.Totals.Coverage, kafka: rep.Totals.KafkaConnections}
	delete(o.coverage, "truncated-packet")
	for _, f := range rep.Findings {
		o.findings = append(o.findings, fmt.Sprintf("%s/%s %s->%s corr=%d %s/%s", f.Rule, f.Confidence,
			f.Conn.Client, f.Conn.Broker, f.CorrelationID, f.Expected, f.Observed))
	}
	slices.Sort(o.findings)
	return o
}

// TestRealTrafficUnderCaptureConditions: SPEC.md 2.1 on real client
// traffic (the e2e recording of kgo clients against kfake): mirrored in
// every tunnel kwatch unwraps, fragmented, cut at -s 512 and -s 256, and
// reordered in windows of 3 to 8 packets, the capture gives the clean
// capture's findings, confidence and coverage.
func TestRealTrafficUnderCaptureConditions(t *testing.T) {
	r := sharedRecording(t)
	clean, err := os.ReadFile(r.pcap)
	if err != nil {
		t.Fatal(err)
	}
	want := auditConditions(t, r.pcap)
	if len(want.findings) == 0 || want.kafka == 0 {
		t.Fatalf("the recording has %d findings on %d Kafka connections: nothing to compare", len(want.findings), want.kafka)
	}
	conditions := map[string]func([]byte) ([]byte, error){
		"fragmented":  func(b []byte) ([]byte, error) { return pcapgen.FragmentCapture(b, 256, true) },
		"snaplen-512": func(b []byte) ([]byte, error) { return pcapgen.Recut(b, 512) },
		"snaplen-256": func(b []byte) ([]byte, error) { return pcapgen.Recut(b, 256) },
		"reordered":   func(b []byte) ([]byte, error) { return pcapgen.Shuffle(b, 3, 8, 1) },
	}
	for _, enc := range pcapgen.Encaps() {
		conditions["tunnel-"+enc.String()] = func(b []byte) ([]byte, error) { return pcapgen.WrapCapture(b, enc) }
	}
	dir := t.TempDir()
	for name, make := range conditions {
		t.Run(name, func(t *testing.T) {
			b, err := make(clean)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, name+".pcap")
			if err := os.WriteFile(path, b, 0o600); err != nil {
				t.Fatal(err)
			}
			got := auditConditions(t, path)
			if !slices.Equal(got.findings, want.findings) {
				t.Errorf("findings differ:\n got %q\nwant %q", got.findings, want.findings)
			}
			if !maps.Equal(got.coverage, want.coverage) || got.kafka != want.kafka {
				t.Errorf("coverage %v on %d Kafka connections, want %v on %d", got.coverage, got.kafka, want.coverage, want.kafka)
			}
		})
	}
}
