package e2e

import (
	"bufio"
	"encoding/json"
	"errors"
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

// The tests of this file and of live_test.go, privilege_test.go and
// tui_tmux_test.go run the real kwatch binary, built once per test binary
// by kwatchBin, as a user would: flags, signals, exit statuses, stdout and
// stderr, the capture file it writes, its process credentials.

// bin is kwatch built once for the package; TestMain removes it.
var bin = kwatchtest.Binary{Prefix: "kwatch-e2e-bin-"}

// kwatchBin returns the kwatch binary, built on first use.
func kwatchBin(t *testing.T) string { return bin.Path(t) }

// removeKwatchBin deletes what kwatchBin built; TestMain calls it.
func removeKwatchBin() { bin.Cleanup() }

// repoRoot is the module root: the test runs in e2e/.
func repoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(wd)
}

// runKwatch runs kwatch to completion (bounded by a minute) and returns
// its stdout, stderr and exit status.
func runKwatch(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	p := startKwatch(t, nil, args...)
	code, ok := p.wait(time.Minute)
	if !ok {
		t.Fatalf("kwatch %s did not end within a minute", strings.Join(args, " "))
	}
	return p.stdout.String(), p.stderr.String(), code
}

// proc is a running kwatch.
type proc struct {
	cmd            *exec.Cmd
	stdout, stderr *kwatchtest.SyncBuffer
	done           chan struct{}
	code           int
}

// startKwatch starts kwatch with args; prefix, if set, is a command the
// binary runs under (setpriv ...). The process is killed at cleanup if it
// is still running.
func startKwatch(t *testing.T, prefix []string, args ...string) *proc {
	t.Helper()
	argv := append(append(append([]string{}, prefix...), kwatchBin(t)), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = repoRoot(t)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	p := &proc{cmd: cmd, stdout: &kwatchtest.SyncBuffer{}, stderr: &kwatchtest.SyncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.stdout, p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting kwatch: %v", err)
	}
	go func() {
		defer close(p.done)
		err := cmd.Wait()
		var ee *exec.ExitError
		switch {
		case err == nil:
		case errors.As(err, &ee):
			p.code = ee.ExitCode() // -1 when killed by a signal
		default:
			p.code = -2
		}
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// wait waits up to d for the process to end.
func (p *proc) wait(d time.Duration) (code int, ok bool) {
	select {
	case <-p.done:
		return p.code, true
	case <-time.After(d):
		return 0, false
	}
}

// stop sends sig and returns the exit status and how long the process took
// to end (at most d, or the test fails).
func (p *proc) stop(t *testing.T, sig syscall.Signal, d time.Duration) (code int, took time.Duration) {
	t.Helper()
	start := time.Now()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signalling kwatch: %v", err)
	}
	code, ok := p.wait(d)
	if !ok {
		t.Fatalf("kwatch still running %v after %v; stderr:\n%s", d, sig, p.stderr.String())
	}
	return code, time.Since(start)
}

// waitCapturing waits until a kwatch started as root has opened its packet
// socket: it drops to nobody right after (and after creating -w's file).
func (p *proc) waitCapturing(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			t.Fatalf("kwatch exited with status %d before capturing; stderr:\n%s", p.code, p.stderr.String())
		default:
		}
		st, err := kwatchtest.ProcStatus(p.cmd.Process.Pid)
		if err == nil && strings.HasPrefix(st["Uid"], strconv.Itoa(nobody)+" ") {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("kwatch did not drop to uid %d within 10s; stderr:\n%s", nobody, p.stderr.String())
}

// nobody is the uid and gid kwatch live drops to when started as root.
const nobody = kwatchtest.Nobody

func requireRoot(t *testing.T) { kwatchtest.RequireRoot(t) }

// jsonLines decodes one JSON object per non-empty line.
func jsonLines(t *testing.T, what, s string) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s line %d is not JSON (%v): %q", what, n, err, sc.Text())
		}
		out = append(out, m)
	}
	return out
}

// jsonReport is the part of kwatch read --format json the tests compare.
type jsonReport struct {
	Totals struct {
		Packets            uint64            `json:"packets"`
		Requests           uint64            `json:"requests"`
		Findings           int               `json:"findings"`
		FindingsBySeverity map[string]int    `json:"findings_by_severity"`
		FindingsByRule     map[string]int    `json:"findings_by_rule"`
		Coverage           map[string]uint64 `json:"coverage"`
	} `json:"totals"`
	Instances []struct {
		InstanceID *string  `json:"instance_id"`
		ClientIDs  []string `json:"client_ids"`
	} `json:"instances"`
	Findings []map[string]any `json:"findings"`
}

func parseReport(t *testing.T, what, s string) *jsonReport {
	t.Helper()
	var r jsonReport
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		t.Fatalf("%s is not a JSON report: %v\n%s", what, err, s)
	}
	return &r
}

// readJSON runs kwatch read --format json on files (never failing on
// findings) and returns the report.
func readJSON(t *testing.T, extra []string, files ...string) *jsonReport {
	t.Helper()
	args := append([]string{"read", "--format", "json", "--fail-on", "never"}, extra...)
	out, errOut, code := runKwatch(t, append(args, files...)...)
	if code != 0 {
		t.Fatalf("kwatch read: exit %d: %s", code, errOut)
	}
	return parseReport(t, "kwatch read output", out)
}

// findingKeyOf identifies a finding across outputs: rule, frame and
// correlation ID.
func findingKeyOf(f map[string]any) string {
	return fmt.Sprintf("%v/frame %v/corr %v", f["rule"], f["frame"], f["correlation_id"])
}
