//go:build e2e

package e2e

import (
	"context"
	"debug/buildinfo"
	"fmt"
	"github.com/kwatch/kwatch/internal/kwatchtest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLivePrivilegeDrop: started as root, kwatch live opens its packet
// socket and then runs as nobody with no capability left, and still
// captures.
func TestLivePrivilegeDrop(t *testing.T) {
	requireRoot(t)
	kwatchBin(t)
	cluster, seeds, portFlags := liveCluster(t, 1)
	p := startKwatch(t, nil, append([]string{"live", "-i", "lo", "--no-tui", "--format", "ndjson", "--fail-on", "never"}, portFlags...)...)
	p.WaitCapturing(t)

	checkDropped(t, p.Cmd.Process.Pid)

	// Capture goes on after the drop: a v1 join with an empty member ID
	// is streamed as a finding while kwatch runs.
	probe := &clientRun{clientID: "priv-probe-v1", kind: kindProbe, group: "pg-probe", cghMax: 1}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := driveClients(ctx, seeds, []*clientRun{probe}); err != nil {
		t.Fatalf("probe: %v", err)
	}
	cluster.Close()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(p.Stdout.String(), `"rule":"member-id-empty"`) {
		if time.Now().After(deadline) {
			t.Fatalf("no member-id-empty finding streamed within 5s of the probe; stdout:\n%s\nstderr:\n%s", p.Stdout.String(), p.Stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if code, _ := p.Stop(t, syscall.SIGINT, 5*time.Second); code != 0 {
		t.Errorf("exit status %d, want 0; stderr:\n%s", code, p.Stderr.String())
	}
	jsonLines(t, "live ndjson", p.Stdout.String()) // every line is a finding
}

// TestLiveWithoutCapability: without CAP_NET_RAW kwatch live exits 2 with
// one line saying how to grant the capability.
func TestLiveWithoutCapability(t *testing.T) {
	var prefix []string
	switch {
	case os.Geteuid() == 0:
		setpriv, err := exec.LookPath("setpriv")
		if err != nil {
			t.Skip("running as root and setpriv (util-linux) is not installed: cannot run unprivileged")
		}
		prefix = []string{setpriv, "--reuid=" + strconv.Itoa(nobody), "--regid=" + strconv.Itoa(nobody), "--clear-groups"}
	default:
		st, err := kwatchtest.ProcStatus(os.Getpid())
		if err != nil {
			t.Skip("no /proc: not Linux")
		}
		eff, err := strconv.ParseUint(st["CapEff"], 16, 64)
		if err != nil || eff&(1<<13) != 0 {
			t.Skip("this process has CAP_NET_RAW; the unprivileged case cannot be shown")
		}
	}
	p := startKwatch(t, prefix, "live", "-i", "lo", "--no-tui")
	code, ok := p.Wait(10 * time.Second)
	if !ok {
		t.Fatalf("unprivileged kwatch live still running after 10s (it must not capture); stderr:\n%s", p.Stderr.String())
	}
	stderr := p.Stderr.String()
	if code != 2 {
		t.Errorf("exit status %d, want 2; stderr:\n%s", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "permission denied") || !strings.Contains(lines[0], "setcap cap_net_raw+ep") {
		t.Errorf("stderr %q: want one line with the permission error and the setcap command", stderr)
	}
	if s := p.Stdout.String(); s != "" {
		t.Errorf("stdout %q, want nothing", s)
	}
}

// TestLiveUsageErrors: command-line mistakes exit 2 with one clear line,
// before any capture (so they need no privilege).
func TestLiveUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"bpf without the pcap tag", []string{"live", "-i", "lo", "--no-tui", "--bpf", "tcp port 9092"},
			"kwatch: --bpf needs a kwatch built with libpcap (go build -tags pcap)"},
		{"bpf without the pcap tag, tui", []string{"tui", "-i", "lo", "--bpf", "tcp port 9092"},
			"kwatch: --bpf needs a kwatch built with libpcap (go build -tags pcap)"},
		{"no interface", []string{"live", "--no-tui"}, "kwatch: live: -i IFACE is required"},
		{"unknown interface", []string{"live", "-i", "kwatch-nosuch0", "--no-tui"}, "kwatch: capture: kwatch-nosuch0: no such interface"},
		{"file argument", []string{"live", "-i", "lo", "x.pcap"}, "kwatch: live: unexpected argument \"x.pcap\""},
		{"bad format", []string{"live", "-i", "lo", "--format", "yaml"}, "kwatch: --format \"yaml\""},
		{"tui files and interface", []string{"tui", "-i", "lo", "x.pcap"}, "kwatch: tui: give capture files or -i IFACE, not both"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runKwatch(t, tt.args...)
			if code != 2 {
				t.Errorf("exit status %d, want 2; stderr:\n%s", code, stderr)
			}
			if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, tt.want) {
				t.Errorf("stderr %q, want one line starting %q", stderr, tt.want)
			}
			if stdout != "" {
				t.Errorf("stdout %q, want nothing", stdout)
			}
		})
	}
}

// checkDropped reads the status of every thread of pid: each must run as
// nobody with no group and no capability. no_new_privs is per thread:
// kwatch sets it on all of them, except that a cgo-linked build can only set
// it on one (syscall.AllThreadsSyscall refuses to run there).
func checkDropped(t *testing.T, pid int) {
	t.Helper()
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	if err != nil || len(tasks) == 0 {
		t.Fatalf("no threads under /proc/%d/task: %v", pid, err)
	}
	id := strconv.Itoa(nobody)
	want := map[string]string{
		"Uid":    strings.Repeat(id+" ", 3) + id, // real, effective, saved, filesystem
		"Gid":    strings.Repeat(id+" ", 3) + id,
		"Groups": "",
		"CapEff": "0000000000000000",
		"CapPrm": "0000000000000000",
		"CapAmb": "0000000000000000",
	}
	nnp := 0
	for _, task := range tasks {
		b, err := os.ReadFile(task)
		if err != nil {
			continue // the thread ended
		}
		st := kwatchtest.ParseStatus(b)
		for k, v := range want {
			if st[k] != v {
				t.Errorf("%s %s: %q, want %q", task, k, st[k], v)
			}
		}
		if st["NoNewPrivs"] == "1" {
			nnp++
		}
	}
	cgo := binaryUsesCgo(t)
	switch {
	case nnp == 0:
		t.Errorf("no thread has NoNewPrivs set")
	case nnp < len(tasks) && !cgo:
		t.Errorf("NoNewPrivs set on %d of %d threads of a binary without cgo, want all", nnp, len(tasks))
	case nnp < len(tasks):
		t.Logf("cgo-linked binary: NoNewPrivs on %d of %d threads", nnp, len(tasks))
	}
}

// binaryUsesCgo tells whether the kwatch under test was built with cgo
// (its net and os/user imports then link runtime/cgo).
func binaryUsesCgo(t *testing.T) bool {
	t.Helper()
	bi, err := buildinfo.ReadFile(kwatchBin(t))
	if err != nil {
		t.Fatalf("reading kwatch's build info: %v", err)
	}
	for _, s := range bi.Settings {
		if s.Key == "CGO_ENABLED" {
			return s.Value == "1"
		}
	}
	return false
}
