// Package kwatchtest holds what the end-to-end test packages share to run
// the real kwatch binary as a user would: building it once, the root
// requirement of live capture, and reading a process's credentials from
// /proc. It is imported only by tests.
//
// Concurrency: Build may be called from parallel tests; everything else is
// plain functions and a mutex-guarded buffer.
package kwatchtest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Binary builds ./cmd/kwatch (default build tags, so without libpcap) into
// a temporary directory once, and removes it with Cleanup.
type Binary struct {
	// Prefix names the temporary directory.
	Prefix string

	once sync.Once
	path string
	dir  string
	err  error
}

// Path returns the built binary, building it on first use.
func (b *Binary) Path(t testing.TB) string {
	t.Helper()
	b.once.Do(b.build)
	if b.err != nil {
		t.Fatalf("building kwatch: %v", b.err)
	}
	return b.path
}

func (b *Binary) build() {
	if b.dir, b.err = os.MkdirTemp("", b.Prefix); b.err != nil {
		return
	}
	// 0755 so that kwatch live, which drops from root to nobody, and the
	// unprivileged runs of the tests can execute the binary.
	if b.err = os.Chmod(b.dir, 0o755); b.err != nil {
		return
	}
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goTool); err != nil {
		goTool = "go"
	}
	path := filepath.Join(b.dir, "kwatch")
	out, err := exec.Command(goTool, "build", "-o", path, "github.com/kwatch/kwatch/cmd/kwatch").CombinedOutput()
	if err != nil {
		b.err = fmt.Errorf("go build ./cmd/kwatch: %w\n%s", err, out)
		return
	}
	b.path = path
	b.err = noteSources(goTool)
}

// Cleanup removes what Path built; call it from TestMain.
func (b *Binary) Cleanup() {
	if b.dir != "" {
		os.RemoveAll(b.dir)
	}
}

// noteSources opens every source file of the binary that is in this
// module: go test caches a passing result until a file the test opened
// changes, and it cannot see what go build read.
func noteSources(goTool string) error {
	const tmpl = `{{if and .Module .Module.Main}}{{$d := .Dir}}{{range .GoFiles}}{{$d}}/{{.}}
{{end}}{{range .EmbedFiles}}{{$d}}/{{.}}
{{end}}{{end}}`
	out, err := exec.Command(goTool, "list", "-deps", "-f", tmpl, "github.com/kwatch/kwatch/cmd/kwatch").Output()
	if err != nil {
		return fmt.Errorf("go list ./cmd/kwatch: %w", err)
	}
	for _, name := range strings.Fields(string(out)) {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		f.Close()
	}
	return nil
}

// RequireRoot skips a test of live capture where it cannot run.
func RequireRoot(t testing.TB) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("live capture is Linux only")
	}
	if os.Geteuid() != 0 {
		t.Skip("live capture on lo needs root (CAP_NET_RAW and privilege drop); CI runs this as root")
	}
}

// Nobody is the uid and gid kwatch live drops to when started as root.
const Nobody = 65534

// ProcStatus returns the fields of /proc/PID/status.
func ProcStatus(pid int) (map[string]string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, err
	}
	return ParseStatus(b), nil
}

// ParseStatus reads the "Key: value" lines of a /proc status file, with
// each value's runs of blanks folded to one space.
func ParseStatus(b []byte) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			m[k] = strings.Join(strings.Fields(v), " ")
		}
	}
	return m
}

// SyncBuffer is a bytes.Buffer that a process's output goroutines and the
// test share.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Proc is a running kwatch (or any command) whose output the test reads
// while it runs.
type Proc struct {
	Cmd            *exec.Cmd
	Stdout, Stderr *SyncBuffer
	done           chan struct{}
	code           int
}

// Start starts argv (argv[0] the program) in dir with NO_COLOR set. The
// process is continued (a test may have stopped it) and killed at cleanup
// if it is still running.
func Start(t testing.TB, dir string, argv ...string) *Proc {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	p := &Proc{Cmd: cmd, Stdout: &SyncBuffer{}, Stderr: &SyncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.Stdout, p.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", argv[0], err)
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
			cmd.Process.Signal(syscall.SIGCONT)
			cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// Wait waits up to d for the process to end and returns its exit status.
func (p *Proc) Wait(d time.Duration) (code int, ok bool) {
	select {
	case <-p.done:
		return p.code, true
	case <-time.After(d):
		return 0, false
	}
}

// Stop sends sig and returns the exit status and how long the process took
// to end (at most d, or the test fails).
func (p *Proc) Stop(t testing.TB, sig syscall.Signal, d time.Duration) (code int, took time.Duration) {
	t.Helper()
	start := time.Now()
	if err := p.Cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signalling kwatch: %v", err)
	}
	code, ok := p.Wait(d)
	if !ok {
		t.Fatalf("kwatch still running %v after %v; stderr:\n%s", d, sig, p.Stderr.String())
	}
	return code, time.Since(start)
}

// WaitCapturing waits until a kwatch live started as root has opened its
// packet socket: it drops to Nobody right after (and after creating -w's
// file). It waits for every thread, not just the main one: libc's setuid
// changes the threads one at a time (signalling each), so the main thread
// can show Nobody while another still runs as root.
func (p *Proc) WaitCapturing(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			t.Fatalf("kwatch exited with status %d before capturing; stderr:\n%s", p.code, p.Stderr.String())
		default:
		}
		if allThreadsRunAs(p.Cmd.Process.Pid, Nobody) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("kwatch did not drop to uid %d on every thread within 10s; stderr:\n%s", Nobody, p.Stderr.String())
}

// allThreadsRunAs tells whether every thread of pid has uid as its real,
// effective and saved user ID.
func allThreadsRunAs(pid, uid int) bool {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", pid))
	if err != nil || len(tasks) == 0 {
		return false
	}
	want := strconv.Itoa(uid) + " "
	for _, task := range tasks {
		b, err := os.ReadFile(filepath.Join(task, "status"))
		if err != nil {
			continue // the thread ended
		}
		st := ParseStatus(b)
		if !strings.HasPrefix(st["Uid"], strings.Repeat(want, 3)) {
			return false
		}
	}
	return true
}
