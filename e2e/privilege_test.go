//go:build e2e

package e2e

import (
	"context"
	"debug/buildinfo"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kwatch/kwatch/internal/kwatchtest"
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
		{"force without -w", []string{"live", "-i", "lo", "--no-tui", "--force"}, "kwatch: live: --force only applies to -w FILE"},
		{"capture flags on a replay", []string{"tui", "x.pcap", "-w", "y.pcapng", "--ring-size", "8"}, "kwatch: tui: --ring-size, -w: only for a live capture (-i IFACE)"},
		{"ring size out of range", []string{"live", "-i", "lo", "--no-tui", "--ring-size", "0"}, "kwatch: live: --ring-size 0 out of range"},
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
// kwatch sets it on all of them, in a cgo-linked build too (from a C
// constructor, before the first thread starts).
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
	if nnp < len(tasks) {
		t.Errorf("NoNewPrivs set on %d of %d threads (cgo-linked binary: %v), want all", nnp, len(tasks), binaryUsesCgo(t))
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

// TestLiveSetcapDropsCapability: kwatch given CAP_NET_RAW by setcap and
// run by an ordinary user opens its capture ring, then holds no capability
// on any thread, with no_new_privs on every one (a cgo-linked build
// included), and still captures until SIGINT.
func TestLiveSetcapDropsCapability(t *testing.T) {
	requireRoot(t)
	setcap, err1 := exec.LookPath("setcap")
	setpriv, err2 := exec.LookPath("setpriv")
	if err1 != nil || err2 != nil {
		t.Skip("setcap (libcap2-bin) and setpriv (util-linux) are needed")
	}
	dir, err := os.MkdirTemp("", "kwatch-setcap-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "kwatch")
	src, err := os.ReadFile(kwatchBin(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(os.Chmod(dir, 0o755), os.WriteFile(bin, src, 0o755)); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(setcap, "cap_net_raw+ep", bin).CombinedOutput(); err != nil {
		t.Skipf("setcap on %s: %v %s (a file system without capabilities?)", dir, err, out)
	}
	p := kwatchtest.Start(t, "", setpriv, "--reuid="+strconv.Itoa(nobody), "--regid="+strconv.Itoa(nobody), "--clear-groups",
		bin, "live", "-i", "lo", "--no-tui", "--format", "json", "--fail-on", "never", "--port", "9")
	// The capability is there until the ring is open: wait for it to go.
	deadline := time.Now().Add(10 * time.Second)
	var held []string
	for {
		held = threadsHolding(p.Cmd.Process.Pid)
		if len(held) == 0 || time.Now().After(deadline) {
			break
		}
		if code, done := p.Wait(10 * time.Millisecond); done {
			t.Fatalf("kwatch exited with status %d; stderr:\n%s", code, p.Stderr.String())
		}
	}
	if len(held) > 0 {
		t.Fatalf("10 s after start: %v; stderr:\n%s", held, p.Stderr.String())
	}
	code, _ := p.Stop(t, syscall.SIGINT, 5*time.Second)
	if code != 0 || !strings.Contains(p.Stdout.String(), `"totals"`) {
		t.Errorf("exit status %d, want 0 and a report; stderr:\n%s", code, p.Stderr.String())
	}
}

// threadsHolding names the threads of pid that hold a capability or lack
// no_new_privs (none once kwatch dropped what it had).
func threadsHolding(pid int) []string {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	if len(tasks) == 0 {
		return []string{"no thread found"}
	}
	var held []string
	for _, task := range tasks {
		b, err := os.ReadFile(task)
		if err != nil {
			continue // the thread ended
		}
		st := kwatchtest.ParseStatus(b)
		if st["CapEff"] != "0000000000000000" || st["CapPrm"] != "0000000000000000" || st["NoNewPrivs"] != "1" {
			held = append(held, fmt.Sprintf("%s CapEff %s CapPrm %s NoNewPrivs %s", task, st["CapEff"], st["CapPrm"], st["NoNewPrivs"]))
		}
	}
	return held
}
