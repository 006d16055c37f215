//go:build linux

package kwatchtest

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Usage is what one child process cost, as its rusage says.
type Usage struct {
	Exit      int
	MaxRSSKiB int64
	CPU       time.Duration // user + system
	// HelperHWMKiB is the helper process's own peak, a floor under
	// MaxRSSKiB (see Measure).
	HelperHWMKiB int64
}

const (
	measureEnv    = "KWATCH_MEASURE_HELPER"
	measurePrefix = "kwatch-measure: "
)

// Measure runs argv with its standard output to the file out (os.DevNull
// when empty) and returns its exit status, peak RSS and CPU time.
//
// The command is not started from this process but from a fresh helper
// (this test binary again, running the test named helperTest, which calls
// ServeMeasure): Go starts children with vfork (CLONE_VM), and at execve
// Linux folds the high-water mark of the memory the child was forked with,
// the parent's, into the child's ru_maxrss. Started from here, the child's
// peak would read as at least this process's own peak, which writing
// captures raises. The helper's peak still counts, but it is a few MiB and
// the same for every run.
func Measure(t testing.TB, helperTest, out string, argv ...string) Usage {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^" + helperTest + "$", "--", out}, argv...)...)
	cmd.Env = append(os.Environ(), measureEnv+"=1")
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, b)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, measurePrefix); ok {
			var u Usage
			if _, err := fmt.Sscan(v, &u.Exit, &u.MaxRSSKiB, &u.CPU, &u.HelperHWMKiB); err != nil {
				t.Fatalf("helper output %q: %v", l, err)
			}
			return u
		}
	}
	t.Fatalf("helper printed no usage:\n%s", b)
	return Usage{}
}

// ServeMeasure is the body of Measure's helper test: in the helper process
// it runs the command after "--" and prints its usage; anywhere else it
// skips the test.
func ServeMeasure(t *testing.T) {
	if os.Getenv(measureEnv) == "" {
		t.Skip("helper process of kwatchtest.Measure")
	}
	args := flag.Args()
	if len(args) < 2 {
		t.Fatalf("helper: want OUT COMMAND..., got %q", args)
	}
	out := args[0]
	if out == "" {
		out = os.DevNull
	}
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var stderr bytes.Buffer
	cmd := exec.Command(args[1], args[2:]...)
	cmd.Stdout, cmd.Stderr = f, &stderr
	cmd.Env = os.Environ()
	if err := cmd.Run(); err != nil {
		if _, exited := err.(*exec.ExitError); !exited {
			t.Fatalf("%v\n%s", err, stderr.Bytes())
		}
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		t.Fatal("no rusage")
	}
	st, err := ProcStatus(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	hwm, _, _ := strings.Cut(st["VmHWM"], " ") // "1234 kB"
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	// ru_maxrss is in KiB on Linux.
	fmt.Printf("%s%d %d %d %s\n", measurePrefix, cmd.ProcessState.ExitCode(), ru.Maxrss, int64(cpu), hwm)
	if cmd.ProcessState.ExitCode() != 0 {
		os.Stderr.Write(stderr.Bytes())
	}
}
