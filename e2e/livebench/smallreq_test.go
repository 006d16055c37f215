//go:build e2e

package livebench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kwatch/kwatch/internal/kwatchtest"
	"github.com/kwatch/kwatch/internal/pcapgen"
)

// The small-request benchmark: a broker's traffic is mostly small requests,
// one per packet, and there the cost of a capture tool is its cost per
// packet. Many connections send a 60-byte Metadata request per packet at a
// fixed total rate to a sink that reads and discards; kwatch live and
// tcpdump -w /dev/null take turns capturing the same load, and the test
// prints the CPU each spent per packet, their ratio and the kernel drops.

// smallLoad is one run of the small-request generator.
type smallLoad struct {
	Conns    int
	Rate     float64 // requests per second over all connections
	Duration time.Duration
	// Raw sends the requests as raw frames, one a packet, instead of
	// over TCP sockets (rawframes_test.go).
	Raw bool
}

// smallResult is what the generator sent.
type smallResult struct {
	Requests uint64
	Elapsed  time.Duration
}

func (r smallResult) Rate() float64 { return float64(r.Requests) / r.Elapsed.Seconds() }

// smallRequest is a Metadata v4 request for one topic: 60 bytes framed.
func smallRequest() []byte {
	id := "livebench-smallreq"
	return pcapgen.EncodeRequest(pcapgen.RequestHeader{ClientID: &id, APIVersion: 4}, pcapgen.Metadata(4, "livebench-small-topic"))
}

// sink accepts connections on 127.0.0.1 and discards what they send.
type sink struct {
	ln net.Listener
	wg sync.WaitGroup
}

func startSink() (*sink, error) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("sink: listen: %w", err)
	}
	s := &sink{ln: ln}
	s.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.wg.Go(func() {
				io.Copy(io.Discard, c)
				c.Close()
			})
		}
	})
	return s, nil
}

func (s *sink) Port() int { return s.ln.Addr().(*net.TCPAddr).Port }

// Close stops accepting and waits for the open connections to end (the
// generator closes them).
func (s *sink) Close() {
	s.ln.Close()
	s.wg.Wait()
}

// runSmallLoad opens cfg.Conns connections (Go sets TCP_NODELAY) and
// writes one request per write, each connection paced to its share of
// cfg.Rate on the count sent so far, so that the long-run rate is exact
// whatever the sleep granularity.
func runSmallLoad(ctx context.Context, addr string, cfg smallLoad) (smallResult, error) {
	req := smallRequest()
	conns := make([]net.Conn, cfg.Conns)
	for i := range conns {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp4", addr)
		if err != nil {
			return smallResult{}, fmt.Errorf("dial: %w", err)
		}
		defer c.Close()
		conns[i] = c
	}
	interval := time.Duration(float64(cfg.Conns) / cfg.Rate * float64(time.Second))
	start := time.Now()
	deadline := start.Add(cfg.Duration)
	counts := make([]uint64, len(conns))
	errs := make([]error, len(conns))
	var wg sync.WaitGroup
	for i, c := range conns {
		// Spread the connections' schedules over one interval.
		first := start.Add(interval * time.Duration(i) / time.Duration(len(conns)))
		wg.Go(func() {
			for n := time.Duration(0); ctx.Err() == nil; n++ {
				due := first.Add(n * interval)
				if !due.Before(deadline) {
					return
				}
				if d := time.Until(due); d > 0 {
					time.Sleep(d)
				}
				if _, err := c.Write(req); err != nil {
					errs[i] = err
					return
				}
				counts[i]++
			}
		})
	}
	wg.Wait()
	res := smallResult{Elapsed: time.Since(start)}
	for _, n := range counts {
		res.Requests += n
	}
	return res, errors.Join(errs...)
}

// toolRun is one capture tool's run under the load.
type toolRun struct {
	tool             string
	load             smallResult
	cpu              time.Duration
	packets, dropped uint64
	requests         uint64 // kwatch only: the requests it decoded
}

func (r toolRun) perPacket() time.Duration {
	if r.packets == 0 {
		return 0
	}
	return r.cpu / time.Duration(r.packets)
}

// perRequest is the CPU per request sent: the same load for both tools,
// whatever the packet count (see TestSmallRequestsAgainstTcpdump).
func (r toolRun) perRequest() time.Duration {
	if r.load.Requests == 0 {
		return 0
	}
	return r.cpu / time.Duration(r.load.Requests)
}

// taskCPU sums the on-CPU time of every thread of pid from
// /proc/PID/task/*/schedstat (nanoseconds, unlike /proc/PID/stat's ticks of
// 10 ms, which are too coarse for tcpdump's fraction of a second).
func taskCPU(pid int) (time.Duration, error) {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(tasks) == 0 {
		return 0, fmt.Errorf("no tasks for pid %d", pid)
	}
	var sum time.Duration
	for _, task := range tasks {
		b, err := os.ReadFile(task)
		if err != nil {
			continue // the thread ended
		}
		f := strings.Fields(string(b))
		if len(f) == 0 {
			continue
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", task, err)
		}
		sum += time.Duration(ns)
	}
	return sum, nil
}

// measure runs the load while p captures, counting p's CPU from just before
// the first request to a quarter second after the last (what the block
// timeout and the scheduler may still owe).
func measure(t *testing.T, pid int, sinkAddr string, cfg smallLoad) (smallResult, time.Duration) {
	t.Helper()
	cpu0, err := taskCPU(pid)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.Duration+20*time.Second)
	defer cancel()
	var load smallResult
	if cfg.Raw {
		_, port, _ := net.SplitHostPort(sinkAddr)
		p, _ := strconv.Atoi(port)
		load, err = runRawLoad(ctx, p, cfg)
	} else {
		load, err = runSmallLoad(ctx, sinkAddr, cfg)
	}
	if err != nil {
		t.Fatalf("generator: %v", err)
	}
	time.Sleep(250 * time.Millisecond)
	cpu1, err := taskCPU(pid)
	if err != nil {
		t.Fatal(err)
	}
	return load, cpu1 - cpu0
}

// runKwatchSmall measures kwatch live under cfg.
func runKwatchSmall(t *testing.T, cfg smallLoad, args []string) toolRun {
	t.Helper()
	s, err := startSink()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p := startKwatch(t, append([]string{"live", "-i", "lo", "--no-tui", "--format", "json", "--fail-on", "never",
		"--port", strconv.Itoa(s.Port())}, args...)...)
	p.WaitCapturing(t)
	stopProfile := profileKwatch(t, p.Cmd.Process.Pid)
	load, cpu := measure(t, p.Cmd.Process.Pid, s.ln.Addr().String(), cfg)
	stopProfile()
	code, _ := p.Stop(t, syscall.SIGINT, 20*time.Second)
	if code != 0 {
		t.Fatalf("kwatch exit status %d; stderr:\n%s", code, p.Stderr.String())
	}
	rep := parseReport(t, p.Stdout.String())
	return toolRun{tool: "kwatch", load: load, cpu: cpu, packets: rep.Totals.Packets, dropped: rep.Totals.KernelDropped, requests: rep.Totals.Requests}
}

// profileKwatch, with KWATCH_SMALLBENCH_PERF=FILE, samples kwatch's
// threads with perf (user and kernel stacks, the software clock: a VM
// often has no hardware counters) while the load runs, into FILE.N, one
// file per run. It returns what stops it.
func profileKwatch(t *testing.T, pid int) func() {
	t.Helper()
	out := os.Getenv("KWATCH_SMALLBENCH_PERF")
	if out == "" {
		return func() {}
	}
	profiles++
	cmd := exec.Command("perf", "record", "-q", "-e", "cpu-clock", "-F", "2999", "-g", "-p", strconv.Itoa(pid),
		"-o", fmt.Sprintf("%s.%d", out, profiles))
	if err := cmd.Start(); err != nil {
		t.Fatalf("perf: %v", err)
	}
	// perf attaches to the threads after it starts: a SIGINT before that
	// leaves an empty file.
	time.Sleep(500 * time.Millisecond)
	return func() {
		cmd.Process.Signal(syscall.SIGINT)
		cmd.Wait()
	}
}

// profiles numbers the files of profileKwatch.
var profiles int

var (
	tcpdumpCaptured = regexp.MustCompile(`(\d+) packets? captured`)
	tcpdumpDropped  = regexp.MustCompile(`(\d+) packets? dropped by kernel`)
)

// runTcpdumpSmall measures tcpdump -w /dev/null under cfg, with the same
// port filter kwatch installs.
func runTcpdumpSmall(t *testing.T, tcpdump string, cfg smallLoad) toolRun {
	t.Helper()
	s, err := startSink()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p := kwatchtest.Start(t, "", tcpdump, "-i", "lo", "-n", "-w", "/dev/null", "tcp", "port", strconv.Itoa(s.Port()))
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(p.Stderr.String(), "listening on") {
		if time.Now().After(deadline) {
			t.Fatalf("tcpdump did not start listening; stderr:\n%s", p.Stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	load, cpu := measure(t, p.Cmd.Process.Pid, s.ln.Addr().String(), cfg)
	p.Stop(t, syscall.SIGINT, 10*time.Second)
	stderr := p.Stderr.String()
	c, d := tcpdumpCaptured.FindStringSubmatch(stderr), tcpdumpDropped.FindStringSubmatch(stderr)
	if c == nil || d == nil {
		t.Fatalf("tcpdump's counters are not in its stderr:\n%s", stderr)
	}
	r := toolRun{tool: "tcpdump", load: load, cpu: cpu}
	r.packets, _ = strconv.ParseUint(c[1], 10, 64)
	r.dropped, _ = strconv.ParseUint(d[1], 10, 64)
	return r
}

func logToolRun(t *testing.T, r toolRun) {
	t.Helper()
	t.Logf("%-7s %7.0f req/s sent: %8d packets, CPU %7v = %5.2f µs/packet, %5.2f µs/request, %d kernel drops",
		r.tool, r.load.Rate(), r.packets, r.cpu.Round(time.Millisecond), float64(r.perPacket())/1e3, float64(r.perRequest())/1e3, r.dropped)
}

// smallRates are the request rates the benchmark runs:
// KWATCH_SMALLBENCH_RATES (comma-separated requests/s) or 100k and 300k.
func smallRates(t *testing.T) []float64 {
	env := os.Getenv("KWATCH_SMALLBENCH_RATES")
	if env == "" {
		return []float64{100e3, 300e3}
	}
	var rates []float64
	for _, f := range strings.Split(env, ",") {
		r, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || r <= 0 {
			t.Fatalf("KWATCH_SMALLBENCH_RATES: bad rate %q", f)
		}
		rates = append(rates, r)
	}
	return rates
}

// TestSmallRequestsAgainstTcpdump runs the small-request load at each rate
// (32 connections, 5 s) with kwatch live and tcpdump taking turns, and
// holds kwatch to the targets: at most 3 times tcpdump's CPU per packet at
// 100k requests/s and below, and no kernel drops wherever tcpdump has none.
// The CPU per request sent is printed too: one write is one packet only
// while the loopback keeps up, since TCP autocorking merges the writes of
// a socket whose last segment is still queued, and how often depends on
// what else the CPUs run, so that the two runs of a pair can differ in
// packets by half on a busy machine.
// On a shared machine a run is tried up to three times before it fails.
// KWATCH_LIVE_ARGS adds kwatch arguments (e.g. "--workers 2");
// KWATCH_SMALLBENCH_DURATION overrides the 5 s, KWATCH_SMALLBENCH_ATTEMPTS
// the three attempts; KWATCH_SMALLBENCH_PERF=FILE profiles kwatch's runs
// (profileKwatch); KWATCH_SMALLBENCH_RAW=1 sends raw frames, the same
// packets to both tools (rawframes_test.go); KWATCH_SMALLBENCH_STRICT=1 makes the 3x CPU target
// (at 100k requests/s and below) fail the test, not just print.
func TestSmallRequestsAgainstTcpdump(t *testing.T) {
	requireRoot(t)
	tcpdump, err := exec.LookPath("tcpdump")
	if err != nil {
		t.Skip("tcpdump is not installed")
	}
	dur := 5 * time.Second
	if d, err := time.ParseDuration(os.Getenv("KWATCH_SMALLBENCH_DURATION")); err == nil {
		dur = d
	}
	args := strings.Fields(os.Getenv("KWATCH_LIVE_ARGS"))
	raw := os.Getenv("KWATCH_SMALLBENCH_RAW") == "1"
	// The CPU ratio is a measurement, printed every run; it fails the
	// test only with KWATCH_SMALLBENCH_STRICT=1 (a machine of one's own):
	// on a shared one a neighbour's load moves it by a third.
	strict := os.Getenv("KWATCH_SMALLBENCH_STRICT") == "1"
	attempts := 3
	if n, err := strconv.Atoi(os.Getenv("KWATCH_SMALLBENCH_ATTEMPTS")); err == nil && n > 0 {
		attempts = n
	}
	for _, rate := range smallRates(t) {
		t.Run(fmt.Sprintf("%.0fk req/s", rate/1e3), func(t *testing.T) {
			cfg := smallLoad{Conns: 32, Rate: rate, Duration: dur, Raw: raw}
			var fails []string
			for attempt := 1; attempt <= attempts; attempt++ {
				k := runKwatchSmall(t, cfg, args)
				logToolRun(t, k)
				d := runTcpdumpSmall(t, tcpdump, cfg)
				logToolRun(t, d)
				ratio := float64(k.perPacket()) / float64(max(d.perPacket(), 1))
				perRequest := float64(k.perRequest()) / float64(max(d.perRequest(), 1))
				t.Logf("kwatch/tcpdump CPU per packet: %.2fx (per request sent: %.2fx)", ratio, perRequest)
				fails = fails[:0]
				if k.dropped > 0 && d.dropped == 0 {
					fails = append(fails, fmt.Sprintf("kwatch dropped %d packets where tcpdump dropped none", k.dropped))
				}
				if strict && rate <= 100e3 && ratio > 3 {
					fails = append(fails, fmt.Sprintf("kwatch costs %.2fx tcpdump's CPU per packet, want at most 3x", ratio))
				}
				if k.dropped == 0 && k.requests != k.load.Requests {
					fails = append(fails, fmt.Sprintf("kwatch decoded %d requests, the generator sent %d", k.requests, k.load.Requests))
				}
				if len(fails) == 0 {
					return
				}
				t.Logf("attempt %d: %s", attempt, strings.Join(fails, "; "))
			}
			t.Error(strings.Join(fails, "; "))
		})
	}
}
