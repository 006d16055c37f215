//go:build e2e

package livebench

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/kwatch/kwatch/internal/kwatchtest"
)

// The helpers of this file run the real kwatch binary, built once per test
// binary, and read what the kernel says about it from /proc.

// bin is kwatch built once for the package; TestMain removes it.
var bin = kwatchtest.Binary{Prefix: "kwatch-livebench-"}

func TestMain(m *testing.M) {
	code := m.Run()
	bin.Cleanup()
	os.Exit(code)
}

// kwatchBin returns the kwatch binary, built on first use.
func kwatchBin(t *testing.T) string { return bin.Path(t) }

func requireRoot(t *testing.T) { kwatchtest.RequireRoot(t) }

// proc is a running kwatch.
type proc struct{ *kwatchtest.Proc }

// startKwatch starts kwatch with args; it is killed at cleanup if still
// running (and continued first, in case a test stopped it).
func startKwatch(t *testing.T, args ...string) *proc {
	t.Helper()
	return &proc{kwatchtest.Start(t, "", append([]string{kwatchBin(t)}, args...)...)}
}

// waitDrained waits until kwatch has read every packet the kernel put in
// its capture ring: the ring is memory the kernel shares with kwatch, with
// no queue length to read from outside, so drained means kwatch's CPU time
// has stopped growing (under 2 ms in each of three 50 ms spans), after the
// ring's block timeout has handed the last packets over.
func (p *proc) waitDrained(t *testing.T, within time.Duration) {
	t.Helper()
	time.Sleep(250 * time.Millisecond) // the last ACKs and FINs, the ring's block timeout (100 ms)
	deadline := time.Now().Add(within)
	last, err := p.cpuTime()
	if err != nil {
		t.Fatal(err)
	}
	for idle := 0; idle < 3; {
		if time.Now().After(deadline) {
			t.Fatalf("kwatch was still busy %v after the load ended", within)
		}
		time.Sleep(50 * time.Millisecond)
		now, err := p.cpuTime()
		if err != nil {
			t.Fatal(err)
		}
		if now-last < 2*time.Millisecond {
			idle++
		} else {
			idle = 0
		}
		last = now
	}
}

// cpuTime is the CPU time the process has used so far (every thread's,
// from schedstat, in nanoseconds).
func (p *proc) cpuTime() (time.Duration, error) { return taskCPU(p.Cmd.Process.Pid) }

// liveReport is the part of kwatch's final JSON report the tests check.
type liveReport struct {
	Totals struct {
		Packets          uint64            `json:"packets"`
		Bytes            uint64            `json:"bytes"`
		Connections      uint64            `json:"connections"`
		KafkaConnections uint64            `json:"kafka_connections"`
		Requests         uint64            `json:"requests"`
		Responses        uint64            `json:"responses"`
		Findings         uint64            `json:"findings"`
		FindingsByRule   map[string]uint64 `json:"findings_by_rule"`
		Coverage         map[string]uint64 `json:"coverage"`
		OpenConnections  uint64            `json:"open_connections"`
		KernelReceived   uint64            `json:"kernel_received"`
		KernelDropped    uint64            `json:"kernel_dropped"`
	} `json:"totals"`
	Instances []struct {
		InstanceID     string `json:"instance_id"`
		Connections    int    `json:"connections"`
		ConnectionList []struct {
			Client string `json:"client"`
			Broker string `json:"broker"`
		} `json:"connection_list"`
	} `json:"instances"`
}

func parseReport(t *testing.T, stdout string) *liveReport {
	t.Helper()
	var r liveReport
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("kwatch's report is not JSON (%v):\n%.2000s", err, stdout)
	}
	return &r
}
