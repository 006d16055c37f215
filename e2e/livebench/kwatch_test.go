//go:build e2e

package livebench

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/kwatch/kwatch/internal/kwatchtest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
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

// sockets returns the inodes of kwatch's open sockets.
func (p *proc) sockets() map[string]bool {
	inodes := map[string]bool{}
	fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", p.Cmd.Process.Pid))
	for _, fd := range fds {
		if l, err := os.Readlink(fd); err == nil && strings.HasPrefix(l, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
		}
	}
	return inodes
}

// queued returns the bytes waiting in the receive queue of kwatch's packet
// socket, one of inodes (the Rmem column of /proc/PID/net/packet: the
// kernel's accounting, packet bytes plus overhead).
func (p *proc) queued(inodes map[string]bool) (int, error) {
	pid := p.Cmd.Process.Pid
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/packet", pid))
	if err != nil {
		return 0, fmt.Errorf("reading the packet socket table: %w", err)
	}
	queued, found := 0, false
	for _, l := range strings.Split(string(b), "\n")[1:] {
		// sk RefCnt Type Proto Iface R Rmem User Inode
		f := strings.Fields(l)
		if len(f) == 9 && inodes[f[8]] {
			found = true
			n, _ := strconv.Atoi(f[6])
			queued += n
		}
	}
	if !found {
		return 0, fmt.Errorf("kwatch (pid %d) has no packet socket", pid)
	}
	return queued, nil
}

// waitDrained waits until kwatch has read every packet queued on its
// packet socket (empty twice in a row): stopping closes the socket, and
// what is still queued then is lost, as with tcpdump.
func (p *proc) waitDrained(t *testing.T, within time.Duration) {
	t.Helper()
	time.Sleep(50 * time.Millisecond) // the last ACKs and FINs
	inodes := p.sockets()
	deadline := time.Now().Add(within)
	for empty := 0; empty < 2; {
		if time.Now().After(deadline) {
			t.Fatalf("kwatch did not read its socket's queue within %v", within)
		}
		n, err := p.queued(inodes)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			empty++
		} else {
			empty = 0
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sampleQueue records the deepest receive queue of kwatch's packet socket,
// sampled every 5ms until stop is closed; it returns a function giving the
// maximum once sampling is done.
func (p *proc) sampleQueue(stop <-chan struct{}) (max func() int) {
	inodes := p.sockets()
	deepest := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			if n, err := p.queued(inodes); err == nil && n > deepest {
				deepest = n
			}
		}
	}()
	return func() int {
		<-done
		return deepest
	}
}

// cpuTime is the user+system CPU time the process has used so far, from
// /proc/PID/stat (utime and stime, in clock ticks of 1/100 s on Linux).
func (p *proc) cpuTime() (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.Cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces: count from its ')'.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("short /proc/PID/stat: %q", s)
	}
	utime, err1 := strconv.ParseUint(f[11], 10, 64)
	stime, err2 := strconv.ParseUint(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("parsing /proc/PID/stat: %w", err)
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond, nil
}

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
