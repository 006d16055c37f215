//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"github.com/kwatch/kwatch/internal/kwatchtest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The TUI tests drive the real binary in a detached tmux session, as a
// user at a terminal would: keys go in with send-keys, the screen comes
// back with capture-pane.

// tmuxPane is one detached tmux session on a private server.
type tmuxPane struct {
	t    *testing.T
	tmux string
	sock string
}

const tmuxTarget = "kw"

// startTmux runs argv in a detached session of w x h cells. The pane stays
// after the process ends (remain-on-exit) so that its exit status and last
// output can be read.
func startTmux(t *testing.T, w, h int, argv ...string) *tmuxPane {
	t.Helper()
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux is not installed (.ci/run installs it)")
	}
	// A short directory: unix socket paths are limited to 108 bytes.
	dir, err := os.MkdirTemp("", "kwt")
	if err != nil {
		t.Fatal(err)
	}
	p := &tmuxPane{t: t, tmux: tmux, sock: filepath.Join(dir, "s")}
	t.Cleanup(func() {
		exec.Command(tmux, "-S", p.sock, "kill-server").Run()
		os.RemoveAll(dir)
	})
	quoted := make([]string, len(argv))
	for i, a := range argv {
		quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	p.run("-f", "/dev/null", "start-server", ";",
		"set-option", "-g", "remain-on-exit", "on", ";",
		"new-session", "-d", "-s", tmuxTarget, "-x", strconv.Itoa(w), "-y", strconv.Itoa(h), "-c", repoRoot(t),
		"exec "+strings.Join(quoted, " "))
	return p
}

func (p *tmuxPane) run(args ...string) string {
	p.t.Helper()
	cmd := exec.Command(p.tmux, append([]string{"-S", p.sock}, args...)...)
	// Not the tmux the tests may run in: its variables would leak into
	// the session.
	cmd.Env = slices.DeleteFunc(os.Environ(), func(v string) bool {
		return strings.HasPrefix(v, "TMUX=") || strings.HasPrefix(v, "TMUX_PANE=")
	})
	out, err := cmd.CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (p *tmuxPane) screen() string { return p.run("capture-pane", "-p", "-t", tmuxTarget) }

// history is the screen with the scrollback above it, wrapped lines joined:
// what a process printed after leaving the alternate screen.
func (p *tmuxPane) history() string {
	return p.run("capture-pane", "-p", "-J", "-S", "-", "-t", tmuxTarget)
}

// keys sends tmux key names (q, Enter, Escape, C-c), one at a time.
func (p *tmuxPane) keys(keys ...string) {
	p.t.Helper()
	for _, k := range keys {
		p.run("send-keys", "-t", tmuxTarget, k)
	}
}

// typeText sends s literally.
func (p *tmuxPane) typeText(s string) { p.run("send-keys", "-t", tmuxTarget, "-l", s) }

// waitFor polls the screen until cond holds, failing the test after d.
func (p *tmuxPane) waitFor(what string, d time.Duration, cond func(string) bool) string {
	p.t.Helper()
	deadline := time.Now().Add(d)
	for {
		s := p.screen()
		if cond(s) {
			return s
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("after %v the screen still does not show %s:\n%s", d, what, s)
		}
		time.Sleep(40 * time.Millisecond)
	}
}

func (p *tmuxPane) waitText(sub string, d time.Duration) string {
	p.t.Helper()
	return p.waitFor(strconv.Quote(sub), d, func(s string) bool { return strings.Contains(s, sub) })
}

// exitStatus returns whether the pane's process has ended, and its exit
// status (-signal when a signal killed it). tmux marks the pane dead when
// the terminal closes and learns the status only when it reaps the
// process (tmux/tmux#4841), so a dead pane without a status yet counts as
// still running.
func (p *tmuxPane) exitStatus() (dead, exited bool, code int) {
	p.t.Helper()
	out := p.run("display-message", "-p", "-t", tmuxTarget, "#{pane_dead}:#{pane_dead_status}:#{pane_dead_signal}")
	f := strings.Split(strings.TrimSpace(out), ":")
	if len(f) != 3 || f[0] != "1" {
		return false, false, 0
	}
	if code, err := strconv.Atoi(f[1]); err == nil {
		return true, true, code
	}
	if sig, err := strconv.Atoi(f[2]); err == nil {
		return true, true, -sig
	}
	return true, false, 0
}

// waitExit waits up to d for the process to end and returns its status.
func (p *tmuxPane) waitExit(d time.Duration) int {
	p.t.Helper()
	deadline := time.Now().Add(d)
	for {
		dead, exited, code := p.exitStatus()
		if exited {
			return code
		}
		if dead {
			// Debian's tmux is built with libutempter, whose own SIGCHLD
			// handler can swallow the signal, leaving the process a zombie
			// tmux never reaps (tmux/tmux#311); a SIGCHLD makes it look.
			if pid, err := strconv.Atoi(strings.TrimSpace(p.run("display-message", "-p", "#{pid}"))); err == nil {
				syscall.Kill(pid, syscall.SIGCHLD)
			}
		}
		if time.Now().After(deadline) {
			// A Go process prints every goroutine's stack on SIGQUIT: show
			// where it is stuck.
			state := p.run("display-message", "-p", "-t", tmuxTarget, "dead #{pane_dead} status '#{pane_dead_status}' signal '#{pane_dead_signal}'")
			pid := p.pid()
			st, err := kwatchtest.ProcStatus(pid)
			state += fmt.Sprintf("; pid %d state %q (%v)", pid, st["State"], err)
			syscall.Kill(pid, syscall.SIGQUIT)
			time.Sleep(500 * time.Millisecond)
			p.t.Fatalf("the process still runs %v after quitting (pane %s); screen and stacks:\n%s", d, strings.TrimSpace(state), p.history())
		}
		time.Sleep(40 * time.Millisecond)
	}
}

func (p *tmuxPane) pid() int {
	p.t.Helper()
	n, err := strconv.Atoi(strings.TrimSpace(p.run("display-message", "-p", "-t", tmuxTarget, "#{pane_pid}")))
	if err != nil {
		p.t.Fatalf("pane pid: %v", err)
	}
	return n
}

var (
	ovFindings   = regexp.MustCompile(`Findings\s+(\d+) error · (\d+) warn · (\d+) info`)
	ovRequests   = regexp.MustCompile(`(?m)^Requests\s+([\d,]+)\s`)
	ovRuleLine   = regexp.MustCompile(`(?m)^\s+(error|warn|info)\s+(\d+)\s+(\S+)\s*$`)
	findingRow   = regexp.MustCompile(`(?m)^([▸ ]) \d\d:\d\d:\d\d\.\d{3} (error|warn|info)\s+(\S+)`)
	findStatus   = regexp.MustCompile(`(?m)^(\d+)/(\d+) · sev (\w+)`)
	instStatus   = regexp.MustCompile(`(?m)^(\d+)/(\d+) instances`)
	spaceRunsTUI = regexp.MustCompile(`\s+`)
)

// atoi reads a number the UI may print with thousands separators.
func atoi(s string) int {
	n, _ := strconv.Atoi(strings.ReplaceAll(s, ",", ""))
	return n
}

// flat joins a screen's lines with single spaces, so wrapped text reads as
// one line.
func flat(s string) string { return strings.TrimSpace(spaceRunsTUI.ReplaceAllString(s, " ")) }

// explanationFirstLine is the first line of a rule's explanation as kwatch
// rules RULE prints it: header, blank, summary, blank, explanation.
func explanationFirstLine(t *testing.T, rule string) string {
	t.Helper()
	out, errOut, code := runKwatch(t, "rules", rule)
	if code != 0 {
		t.Fatalf("kwatch rules %s: exit %d: %s", rule, code, errOut)
	}
	paras := strings.Split(strings.TrimSpace(out), "\n\n")
	if len(paras) < 3 {
		t.Fatalf("kwatch rules %s: %d paragraphs, want header, summary and explanation:\n%s", rule, len(paras), out)
	}
	return strings.SplitN(paras[2], "\n", 2)[0]
}

// TestTUIReplay drives kwatch tui over a capture file at two terminal
// sizes and checks every pane against kwatch read --format json.
func TestTUIReplay(t *testing.T) {
	const file = "testdata/pcaps/quickstart.pcap"
	kwatchBin(t)
	rep := readJSON(t, nil, filepath.Join(repoRoot(t), file))
	if len(rep.Findings) < 2 {
		t.Fatalf("%s: %d findings, the test needs two at least", file, len(rep.Findings))
	}
	for _, size := range [][2]int{{120, 40}, {80, 24}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			p := startTmux(t, size[0], size[1], kwatchBin(t), "tui", file)
			scr := p.waitText("replay finished", 10*time.Second)
			checkOverview(t, scr, rep)

			p.keys("2")
			scr = p.waitText("[2 Instances]", 3*time.Second)
			m := instStatus.FindStringSubmatch(scr)
			if m == nil || atoi(m[1]) != len(rep.Instances) || atoi(m[2]) != len(rep.Instances) {
				t.Errorf("instances status %q, want %d/%d instances", m, len(rep.Instances), len(rep.Instances))
			}
			for _, in := range rep.Instances {
				for _, cid := range in.ClientIDs {
					if !strings.Contains(scr, cid) {
						t.Errorf("instances pane does not show client ID %q:\n%s", cid, scr)
					}
				}
			}

			p.keys("3")
			scr = p.waitText("[3 Findings]", 3*time.Second)
			rows := checkFindingRows(t, scr, rep, "all", "")
			selected := ""
			for _, r := range findingRow.FindAllStringSubmatch(scr, -1) {
				if r[1] == "▸" {
					selected = r[3]
				}
			}
			if selected == "" || rows == 0 {
				t.Fatalf("no selected finding row:\n%s", scr)
			}

			// Enter opens the selected finding with its rule's explanation.
			p.keys("Enter")
			scr = p.waitText(selected+": ", 3*time.Second)
			want := flat(explanationFirstLine(t, selected))
			if got := flat(scr); !strings.Contains(got, want) {
				p.keys("j", "j", "j", "j", "j", "j", "j", "j", "j", "j")
				time.Sleep(200 * time.Millisecond)
				if !strings.Contains(flat(p.screen()), want) {
					t.Errorf("finding detail does not show the explanation of %s (%q):\n%s", selected, want, scr)
				}
			}
			if !strings.Contains(scr, fmt.Sprintf("finding 1/%d", len(rep.Findings))) {
				t.Errorf("detail status does not say finding 1/%d:\n%s", len(rep.Findings), scr)
			}
			p.keys("Escape")
			p.waitFor("the findings list again", 3*time.Second, func(s string) bool { return findStatus.MatchString(s) })

			// v cycles the severity filter: error, warn, info, all.
			for _, sev := range []string{"error", "warn", "info", "all"} {
				p.keys("v")
				scr = p.waitText("sev "+sev+" ·", 3*time.Second)
				checkFindingRows(t, scr, rep, sev, "")
			}

			// / searches; Enter applies the search.
			query := rep.Findings[len(rep.Findings)-1]["rule"].(string)
			p.keys("/")
			p.waitText("search findings", 3*time.Second)
			p.typeText(query)
			p.waitText("/"+query, 3*time.Second)
			p.keys("Enter")
			scr = p.waitText("· /"+query, 3*time.Second)
			checkFindingRows(t, scr, rep, "all", query)

			p.keys("q")
			if code := p.waitExit(5 * time.Second); code != 0 {
				t.Errorf("kwatch tui exit status %d after q, want 0; screen:\n%s", code, p.screen())
			}
		})
	}
}

// checkOverview compares the overview pane with the JSON report.
func checkOverview(t *testing.T, scr string, rep *jsonReport) {
	t.Helper()
	m := ovFindings.FindStringSubmatch(scr)
	if m == nil {
		t.Fatalf("overview has no findings line:\n%s", scr)
	}
	for i, sev := range []string{"error", "warn", "info"} {
		if atoi(m[i+1]) != rep.Totals.FindingsBySeverity[sev] {
			t.Errorf("overview: %s %s findings, kwatch read: %d", m[i+1], sev, rep.Totals.FindingsBySeverity[sev])
		}
	}
	if m := ovRequests.FindStringSubmatch(scr); m == nil || uint64(atoi(m[1])) != rep.Totals.Requests {
		t.Errorf("overview requests %v, kwatch read: %d", m, rep.Totals.Requests)
	}
	_, byRule, ok := strings.Cut(scr, "Findings by rule")
	if !ok {
		t.Fatalf("overview has no findings-by-rule table:\n%s", scr)
	}
	got := map[string]int{}
	for _, r := range ovRuleLine.FindAllStringSubmatch(byRule, -1) {
		got[r[3]] = atoi(r[2])
	}
	for rule, n := range rep.Totals.FindingsByRule {
		if got[rule] != n {
			t.Errorf("overview: %d %s findings, kwatch read: %d", got[rule], rule, n)
		}
	}
}

// checkFindingRows checks the findings list shows exactly the findings of
// the report with severity sev ("all") and rule query (""), and that the
// status line counts them; it returns how many rows there are.
func checkFindingRows(t *testing.T, scr string, rep *jsonReport, sev, query string) int {
	t.Helper()
	var want, got []string
	for _, f := range rep.Findings {
		if (sev == "all" || f["severity"] == sev) && (query == "" || f["rule"] == query) {
			want = append(want, f["severity"].(string)+" "+f["rule"].(string))
		}
	}
	for _, r := range findingRow.FindAllStringSubmatch(scr, -1) {
		got = append(got, r[2]+" "+r[3])
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("findings list (sev %s, search %q) shows %v, want %v:\n%s", sev, query, got, want, scr)
	}
	m := findStatus.FindStringSubmatch(scr)
	if m == nil || atoi(m[1]) != len(want) || atoi(m[2]) != len(rep.Findings) || m[3] != sev {
		t.Errorf("findings status %q, want %d/%d · sev %s", m, len(want), len(rep.Findings), sev)
	}
	return len(got)
}

var liveHeader = regexp.MustCompile(`\blive · \S+ · lo\s*$`)

// TestTUILive runs kwatch tui -i lo on real traffic and stops it three
// ways: q, ctrl+c (a key to the UI in raw mode, not a signal) and SIGINT.
// Each time the process ends and prints the final report.
func TestTUILive(t *testing.T) {
	requireRoot(t)
	kwatchBin(t)
	for _, stop := range []string{"q", "C-c", "SIGINT"} {
		t.Run(stop, func(t *testing.T) {
			cluster, seeds, portFlags := liveCluster(t, 1)
			p := startTmux(t, 100, 30, append([]string{kwatchBin(t), "tui", "-i", "lo"}, portFlags...)...)
			p.waitFor("a live-capture header", 10*time.Second, func(s string) bool {
				first, _, _ := strings.Cut(s, "\n")
				return liveHeader.MatchString(first)
			})

			probe := &clientRun{clientID: "tui-probe-v1", kind: kindProbe, group: "ug-probe", cghMax: 1}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if err := driveClients(ctx, seeds, []*clientRun{probe}); err != nil {
				t.Fatalf("probe: %v", err)
			}
			cluster.Close()
			p.waitFor("an error finding in the overview", 10*time.Second, func(s string) bool {
				m := ovFindings.FindStringSubmatch(s)
				return m != nil && atoi(m[1]) > 0
			})
			p.keys("3")
			p.waitText("member-id-empty", 3*time.Second)

			if stop == "SIGINT" {
				if err := syscall.Kill(p.pid(), syscall.SIGINT); err != nil {
					t.Fatal(err)
				}
			} else {
				p.keys(stop)
			}
			start := time.Now()
			code := p.waitExit(5 * time.Second)
			t.Logf("ended %v after %s", time.Since(start), stop)
			if code != 1 {
				t.Errorf("exit status %d, want 1 (error findings, --fail-on error)", code)
			}
			scr := p.history()
			if !strings.Contains(scr, "kwatch identity audit") || !strings.Contains(scr, "member-id-empty") {
				t.Errorf("no final report after the UI closed:\n%s", scr)
			}
		})
	}
}
