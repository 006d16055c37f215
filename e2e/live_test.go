//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gopacket/gopacket/pcapgo"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// liveCluster starts kfake on loopback (no proxy: kwatch captures lo) and
// returns it with its broker addresses and the matching --port flags.
func liveCluster(t *testing.T, brokers int) (*kfake.Cluster, []string, []string) {
	t.Helper()
	c, err := kfake.NewCluster(
		kfake.NumBrokers(brokers),
		kfake.SeedTopics(3, topic),
		kfake.BrokerConfigs(map[string]string{"group.consumer.heartbeat.interval.ms": "250"}),
	)
	if err != nil {
		t.Fatalf("start kfake: %v", err)
	}
	t.Cleanup(c.Close)
	addrs := c.ListenAddrs()
	var portFlags []string
	for _, a := range addrs {
		_, port, err := net.SplitHostPort(a)
		if err != nil {
			t.Fatal(err)
		}
		portFlags = append(portFlags, "--port", port)
	}
	return c, addrs, portFlags
}

// driveClients runs the producer first, then every other client at once,
// as runScenario does.
func driveClients(ctx context.Context, seeds []string, clients []*clientRun) error {
	prepareClients(clients)
	if err := runClient(ctx, seeds, clients[0]); err != nil {
		return fmt.Errorf("%s: %w", clients[0].clientID, err)
	}
	var wg sync.WaitGroup
	for _, c := range clients[1:] {
		wg.Go(func() { c.err = runClient(ctx, seeds, c) })
	}
	wg.Wait()
	var errs []error
	for _, c := range clients[1:] {
		if c.err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", c.clientID, c.err))
		}
	}
	return errors.Join(errs...)
}

// waitDrained waits until kwatch has read every packet the kernel queued on
// its packet socket (the Rmem column of /proc/PID/net/packet is 0 twice in
// a row): stopping closes the socket, and packets still queued are lost, as
// with tcpdump.
func (p *proc) waitDrained(t *testing.T) {
	t.Helper()
	pid := p.Cmd.Process.Pid
	inodes := map[string]bool{}
	fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
	for _, fd := range fds {
		if l, err := os.Readlink(fd); err == nil && strings.HasPrefix(l, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
		}
	}
	time.Sleep(50 * time.Millisecond) // the last ACKs of the closes
	deadline := time.Now().Add(10 * time.Second)
	empty := 0
	for empty < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("kwatch did not read its socket's queue within 10s")
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/packet", pid))
		if err != nil {
			t.Fatalf("reading the packet socket table: %v", err)
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
			t.Fatalf("kwatch (pid %d) has no packet socket; socket inodes %v", pid, inodes)
		}
		if queued == 0 {
			empty++
		} else {
			empty = 0
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var summaryFindings = regexp.MustCompile(`(?m)^\s*findings\s+(\d+) error, (\d+) warn, (\d+) info\s*$`)

// TestLiveCapture captures real kgo <-> kfake traffic on lo with kwatch
// live, then checks what it streamed and wrote against kwatch read and
// dump of its own capture file and against kgo's hooks.
func TestLiveCapture(t *testing.T) {
	requireRoot(t)
	kwatchBin(t)
	cluster, seeds, portFlags := liveCluster(t, numBrokers)
	dir := t.TempDir()
	out := filepath.Join(dir, "out.pcapng")

	args := append([]string{"live", "-i", "lo", "--no-tui", "--format", "ndjson", "--fail-on", "never", "-w", out}, portFlags...)
	p := startKwatch(t, nil, args...)
	p.WaitCapturing(t)

	clients := []*clientRun{
		{clientID: "live-producer", kind: kindProducer, telemetry: true},
		{clientID: "live-classic", kind: kindClassic, group: "lg-classic"},
		{clientID: "live-848", kind: kind848, group: "lg-848", telemetry: true},
		{clientID: "live-probe-v1", kind: kindProbe, group: "lg-probe-v1", cghMax: 1},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	if err := driveClients(ctx, seeds, clients); err != nil {
		t.Fatalf("clients: %v", err)
	}
	cluster.Close() // FINs on every connection, inside the capture
	t.Logf("clients took %v", time.Since(start))
	p.waitDrained(t)

	code, took := p.Stop(t, syscall.SIGINT, 5*time.Second)
	stdout, stderr := p.Stdout.String(), p.Stderr.String()
	t.Logf("kwatch ended %v after SIGINT", took)
	if code != 0 {
		t.Fatalf("exit status %d after SIGINT with --fail-on never, want 0; stderr:\n%s", code, stderr)
	}

	// (c) The capture file may hold secrets (SASL): owner only.
	fi, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %v, want 0600", out, fi.Mode().Perm())
	}

	// (a) Findings streamed live = findings read back from the file.
	live := jsonLines(t, "live ndjson", stdout)
	rep := readJSON(t, portFlags, out)
	liveKeys, fileKeys := map[string]int{}, map[string]int{}
	for _, f := range live {
		liveKeys[findingKeyOf(f)]++
	}
	for _, f := range rep.Findings {
		fileKeys[findingKeyOf(f)]++
	}
	if len(fileKeys) == 0 {
		t.Errorf("kwatch read found nothing in the live capture; the KIP-848 member and the probe should give findings")
	}
	if !maps.Equal(liveKeys, fileKeys) {
		t.Errorf("live findings differ from kwatch read of the capture file\nlive only: %v\nfile only: %v",
			minus(liveKeys, fileKeys), minus(fileKeys, liveKeys))
	}
	for _, rule := range []string{"member-id-empty", "member-id-encoding"} {
		if rep.Totals.FindingsByRule[rule] == 0 {
			t.Errorf("no %s finding; rules seen %v", rule, rep.Totals.FindingsByRule)
		}
	}

	// (d) The summary goes to stderr for ndjson and agrees with the file.
	m := summaryFindings.FindStringSubmatch(stderr)
	if !strings.Contains(stderr, "kwatch identity audit") || m == nil {
		t.Fatalf("no final summary on stderr:\n%s", stderr)
	}
	for i, sev := range []string{"error", "warn", "info"} {
		if n, _ := strconv.Atoi(m[i+1]); n != rep.Totals.FindingsBySeverity[sev] {
			t.Errorf("summary says %d %s findings, kwatch read of the file %d", n, sev, rep.Totals.FindingsBySeverity[sev])
		}
	}

	// (b) Requests decoded from the file, per client and API key, equal
	// what kgo's hooks wrote.
	checkRequestCounts(t, out, portFlags, clients)
	checkNoDuplicates(t, out)
}

// checkRequestCounts compares kwatch dump of the capture with the hooks.
func checkRequestCounts(t *testing.T, file string, portFlags []string, clients []*clientRun) {
	t.Helper()
	dump, errOut, code := runKwatch(t, append(append([]string{"dump", "--format", "ndjson"}, portFlags...), file)...)
	if code != 0 {
		t.Fatalf("kwatch dump: exit %d: %s", code, errOut)
	}
	owner := map[netip.AddrPort]*clientRun{}
	for _, c := range clients {
		_, _, locals, _ := c.hooks.snapshot()
		for a := range locals {
			owner[a] = c
		}
	}
	decReq := map[*clientRun]map[int16]int{}
	decResp := map[*clientRun]map[int16]int{}
	unowned := 0
	for _, ev := range jsonLines(t, "kwatch dump", dump) {
		kind, _ := ev["kind"].(string)
		if kind != "request" && kind != "response" {
			t.Errorf("dump event %v: a clean loopback capture should decode without coverage events", ev)
			continue
		}
		conn, _ := ev["conn"].(map[string]any)
		cl, _ := conn["client"].(string)
		a, err := netip.ParseAddrPort(cl)
		c := owner[a]
		if err != nil || c == nil {
			unowned++
			continue
		}
		key := int16(ev["api_key"].(float64))
		m := decReq
		if kind == "response" {
			m = decResp
		}
		if m[c] == nil {
			m[c] = map[int16]int{}
		}
		m[c][key]++
	}
	if unowned != 0 {
		t.Errorf("%d decoded PDUs on connections no client opened", unowned)
	}
	for _, c := range clients {
		writes, reads, _, failed := c.hooks.snapshot()
		if failed != 0 {
			t.Errorf("%s: %d writes failed part way; counts cannot be compared", c.clientID, failed)
			continue
		}
		if !maps.Equal(decReq[c], writes) {
			t.Errorf("%s: requests decoded %v, kgo wrote %v", c.clientID, names(decReq[c]), names(writes))
		}
		for k, n := range reads {
			if decResp[c][k] < n {
				t.Errorf("%s: %d %s responses decoded, kgo read %d", c.clientID, decResp[c][k], kmsg.NameForKey(k), n)
			}
		}
	}
}

// checkNoDuplicates: on lo every packet passes the packet socket twice
// (outgoing, then incoming); a capture must keep it once, as libpcap does.
func checkNoDuplicates(t *testing.T, file string) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewNgReader(f, pcapgo.DefaultNgReaderOptions)
	if err != nil {
		t.Fatalf("reading %s: %v", file, err)
	}
	seen := map[string]bool{}
	total, dups := 0, 0
	for {
		data, _, err := r.ReadPacketData()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("reading %s: %v", file, err)
		}
		total++
		// Identical bytes, IP ID and checksum included: the same packet.
		if seen[string(data)] {
			dups++
		}
		seen[string(data)] = true
	}
	if total == 0 {
		t.Fatalf("%s holds no packets", file)
	}
	if dups != 0 {
		t.Errorf("%s: %d of %d packets are byte-identical copies of an earlier one (lo delivers each packet to AF_PACKET as outgoing and as incoming)", file, dups, total)
	}
}

func names(m map[int16]int) map[string]int {
	out := map[string]int{}
	for k, n := range m {
		out[kmsg.NameForKey(k)] += n
	}
	return out
}

// minus lists the keys of a that b lacks (or has fewer of), sorted.
func minus(a, b map[string]int) []string {
	var out []string
	for k, n := range a {
		if b[k] < n {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// TestLiveSIGTERM: SIGTERM stops kwatch live as SIGINT does, the report is
// printed (here the JSON report on stdout), and error findings give exit
// status 1 under the default --fail-on error.
func TestLiveSIGTERM(t *testing.T) {
	requireRoot(t)
	kwatchBin(t)
	cluster, seeds, portFlags := liveCluster(t, 1)
	p := startKwatch(t, nil, append([]string{"live", "-i", "lo", "--no-tui", "--format", "json"}, portFlags...)...)
	p.WaitCapturing(t)

	probe := &clientRun{clientID: "term-probe-v1", kind: kindProbe, group: "tg-probe", cghMax: 1}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := driveClients(ctx, seeds, []*clientRun{probe}); err != nil {
		t.Fatalf("probe: %v", err)
	}
	cluster.Close()
	p.waitDrained(t)

	code, took := p.Stop(t, syscall.SIGTERM, 5*time.Second)
	t.Logf("kwatch ended %v after SIGTERM", took)
	rep := parseReport(t, "kwatch live --format json stdout", p.Stdout.String())
	if rep.Totals.FindingsBySeverity["error"] == 0 || rep.Totals.FindingsByRule["member-id-empty"] == 0 {
		t.Errorf("report after SIGTERM has findings %v, want member-id-empty (error) from the v1 probe", rep.Totals.FindingsByRule)
	}
	if rep.Totals.Requests == 0 || len(rep.Findings) != rep.Totals.Findings {
		t.Errorf("report: %d requests, %d findings listed of %d", rep.Totals.Requests, len(rep.Findings), rep.Totals.Findings)
	}
	if code != 1 {
		t.Errorf("exit status %d, want 1 (error findings, --fail-on error); stderr:\n%s", code, p.Stderr.String())
	}
	// stderr says what is captured, once at the start, and nothing else.
	if lines := strings.Split(strings.TrimSpace(p.Stderr.String()), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "kwatch: capturing on lo (") {
		t.Errorf("stderr with --format json: want the start line alone, got:\n%s", p.Stderr.String())
	}
}

// TestLiveStatsEvery: without the TUI, live says what it captures at the
// start and prints a summary line every --stats-every.
func TestLiveStatsEvery(t *testing.T) {
	requireRoot(t)
	kwatchBin(t)
	p := startKwatch(t, nil, "live", "-i", "lo", "--no-tui", "--format", "ndjson", "--port", "1", "--stats-every", "200ms")
	p.WaitCapturing(t)
	time.Sleep(1100 * time.Millisecond)
	if code, _ := p.Stop(t, syscall.SIGTERM, 5*time.Second); code != 0 {
		t.Errorf("exit %d, want 0 (a live run stopped by SIGTERM is its normal end)", code)
	}
	lines := strings.Split(strings.TrimSpace(p.Stderr.String()), "\n")
	if !strings.HasPrefix(lines[0], "kwatch: capturing on lo (TCP port 1, ") {
		t.Errorf("first line %q: want what is captured", lines[0])
	}
	stats := 0
	for _, l := range lines[1:] {
		if strings.Contains(l, " packets, ") && strings.Contains(l, " kernel drops") {
			stats++
		}
	}
	if stats < 3 {
		t.Errorf("%d summary lines in about a second at --stats-every 200ms; stderr:\n%s", stats, p.Stderr.String())
	}
}
