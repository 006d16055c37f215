//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
)

// TestLiveAgentSkipsOwnTraffic: SPEC.md 7. kwatch live as an agent on lo,
// without --port, captures a client's traffic to one Kafka and publishes
// to another, also on lo: its own publishing connections are neither in
// its report nor in what it publishes, and kwatch aggregate over the topic
// finds the client's violation.
func TestLiveAgentSkipsOwnTraffic(t *testing.T) {
	requireRoot(t)
	kwatchBin(t)
	_, seeds, _ := liveCluster(t, 1)
	fleetKafka, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer fleetKafka.Close()
	own := fleetKafka.ListenAddrs()
	target := strings.Join(own, ",") + "/kwatch-observations"

	p := startKwatch(t, nil, "live", "-i", "lo", "--no-tui", "--format", "json", "--fail-on", "never",
		"--publish", target, "--agent", "lo-agent")
	p.WaitCapturing(t)
	probe := &clientRun{clientID: "agent-probe-v1", kind: kindProbe, group: "ag-probe", cghMax: 1}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := driveClients(ctx, seeds, []*clientRun{probe}); err != nil {
		t.Fatalf("probe: %v", err)
	}
	time.Sleep(500 * time.Millisecond) // the last packets reach the ring
	if code, _ := p.Stop(t, syscall.SIGTERM, 10*time.Second); code != 0 {
		t.Fatalf("kwatch live ended with %d; stderr:\n%s", code, p.Stderr.String())
	}

	brokersOf := func(what, s string) (map[string]bool, map[string]int) {
		var rep struct {
			Totals struct {
				FindingsByRule map[string]int `json:"findings_by_rule"`
			} `json:"totals"`
			Brokers []struct {
				Broker string `json:"broker"`
			} `json:"brokers"`
		}
		if err := json.Unmarshal([]byte(s), &rep); err != nil {
			t.Fatalf("%s: not a JSON report: %v\n%s", what, err, s)
		}
		seen := map[string]bool{}
		for _, b := range rep.Brokers {
			seen[b.Broker] = true
		}
		return seen, rep.Totals.FindingsByRule
	}
	for what, out := range map[string]string{"the agent's report": p.Stdout.String()} {
		seen, rules := brokersOf(what, out)
		for _, a := range own {
			if seen[a] {
				t.Errorf("%s audits the agent's own connections to %s", what, a)
			}
		}
		if rules["member-id-empty"] == 0 {
			t.Errorf("%s: findings %v, want the probe's member-id-empty", what, rules)
		}
	}
	out, errOut, code := runKwatch(t, "aggregate", "--from", target, "--until-idle", "2s", "--format", "json", "--fail-on", "never")
	if code != 0 {
		t.Fatalf("aggregate: exit %d: %s", code, errOut)
	}
	seen, rules := brokersOf("the aggregate", out)
	for _, a := range own {
		if seen[a] {
			t.Errorf("the agent published its own connections to %s", a)
		}
	}
	if rules["member-id-empty"] == 0 {
		t.Errorf("aggregate: findings %v, want the probe's member-id-empty", rules)
	}
}
