//go:build e2e

package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kwatch/kwatch/internal/kwatchtest"
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
	code, ok := p.Wait(time.Minute)
	if !ok {
		t.Fatalf("kwatch %s did not end within a minute", strings.Join(args, " "))
	}
	return p.Stdout.String(), p.Stderr.String(), code
}

// proc is a running kwatch.
type proc struct{ *kwatchtest.Proc }

// startKwatch starts kwatch with args; prefix, if set, is a command the
// binary runs under (setpriv ...). The process is killed at cleanup if it
// is still running.
func startKwatch(t *testing.T, prefix []string, args ...string) *proc {
	t.Helper()
	argv := append(append(append([]string{}, prefix...), kwatchBin(t)), args...)
	return &proc{kwatchtest.Start(t, repoRoot(t), argv...)}
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
