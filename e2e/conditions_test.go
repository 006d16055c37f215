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
	raw      []conditionFinding // in report order, with capture and frame
}

func auditConditions(t *testing.T, paths ...string) conditionOutcome {
	t.Helper()
	out, errOut, code := runKwatch(t, append([]string{"read", "--format", "json", "--fail-on", "never"}, paths...)...)
	if code != 0 {
		t.Fatalf("kwatch read %s: exit %d: %s", paths, code, errOut)
	}
	var rep struct {
		Totals struct {
			KafkaConnections uint64            `json:"kafka_connections"`
			Coverage         map[string]uint64 `json:"coverage"`
		} `json:"totals"`
		Findings []conditionFinding `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	o := conditionOutcome{coverage: rep.Totals.Coverage, kafka: rep.Totals.KafkaConnections, raw: rep.Findings}
	delete(o.coverage, "truncated-packet")
	for _, f := range rep.Findings {
		o.findings = append(o.findings, f.String())
	}
	slices.Sort(o.findings)
	return o
}

// conditionFinding is a finding of kwatch read's JSON report.
type conditionFinding struct {
	Rule, Confidence, Expected, Observed string
	Conn                                 struct{ Client, Broker string }
	CorrelationID                        int32 `json:"correlation_id"`
	Capture                              string
	Frame                                uint64
}

// String is what a condition must leave as it was: not where the finding
// is, which a capture split into several files changes.
func (f conditionFinding) String() string {
	return fmt.Sprintf("%s/%s %s->%s corr=%d %s/%s", f.Rule, f.Confidence,
		f.Conn.Client, f.Conn.Broker, f.CorrelationID, f.Expected, f.Observed)
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

// brokerPoints names the capture point of each packet of the e2e
// recording as one capture per broker would: the broker's port, learnt
// from each connection's SYN (the recording shows every handshake).
func brokerPoints() func(pcapgen.Segment) string {
	brokers := map[uint16]bool{}
	return func(s pcapgen.Segment) string {
		switch {
		case !s.TCP:
			return "other"
		case s.SYN && !s.ACK:
			brokers[s.Dst.Port()] = true
		case brokers[s.Src.Port()]:
			return fmt.Sprintf("broker-%d", s.Src.Port())
		}
		return fmt.Sprintf("broker-%d", s.Dst.Port())
	}
}

// TestRealTrafficFromSeveralCapturePoints: SPEC.md 2.1, several capture
// points, on real client traffic. The kgo/kfake recording split into one
// file per broker (as tcpdump on each broker host would take it), read
// together in either order, gives the clean capture's findings,
// confidence and coverage, and each finding names the file its packet is
// in and the packet's number there.
func TestRealTrafficFromSeveralCapturePoints(t *testing.T) {
	r := sharedRecording(t)
	clean, err := os.ReadFile(r.pcap)
	if err != nil {
		t.Fatal(err)
	}
	want := auditConditions(t, r.pcap)
	if len(want.raw) == 0 {
		t.Fatal("the recording has no finding to place")
	}
	files, keys, where, err := pcapgen.SplitCapture(clean, brokerPoints())
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != numBrokers {
		t.Fatalf("split into %v, want one file per broker (%d)", keys, numBrokers)
	}
	dir := t.TempDir()
	paths := map[string]string{}
	var order []string
	for _, k := range keys {
		paths[k] = filepath.Join(dir, k+".pcap")
		order = append(order, paths[k])
		if err := os.WriteFile(paths[k], files[k], 0o600); err != nil {
			t.Fatal(err)
		}
	}
	rev := slices.Clone(order)
	slices.Reverse(rev)
	for name, args := range map[string][]string{"in-order": order, "reversed": rev} {
		t.Run(name, func(t *testing.T) {
			got := auditConditions(t, args...)
			if !slices.Equal(got.findings, want.findings) {
				t.Errorf("findings differ:\n got %q\nwant %q", got.findings, want.findings)
			}
			if !maps.Equal(got.coverage, want.coverage) || got.kafka != want.kafka {
				t.Errorf("coverage %v on %d Kafka connections, want %v on %d", got.coverage, got.kafka, want.coverage, want.kafka)
			}
			if len(got.raw) != len(want.raw) {
				t.Fatalf("%d findings, want %d", len(got.raw), len(want.raw))
			}
			for i, w := range want.raw {
				at := where[w.Frame-1]
				if g := got.raw[i]; g.String() != w.String() || g.Capture != paths[at.Key] || g.Frame != at.Frame {
					t.Errorf("finding %d: %v in %q frame %d, want %v in %q frame %d", i, g, g.Capture, g.Frame, w, paths[at.Key], at.Frame)
				}
			}
		})
	}
}
