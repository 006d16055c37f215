//go:build e2e

package livebench

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/netip"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kwatch/kwatch/internal/pcapgen"
)

// fanoutPort is the broker port of the fanout test's raw frames: nothing
// listens there, the frames are captured and then dropped (not lo's MAC).
const fanoutPort = 19444

// fanoutFrames is KIP-1313 traffic whose findings compare connections:
// per instance ID, three connections from three client ports, and in
// every other instance the third connection's client ID differs
// (instance-id-shared, on whichever connection speaks second). The
// connections' requests interleave across connections, so that with two
// rings the findings depend on merging them in capture order.
func fanoutFrames(instances int) [][]byte {
	c := pcapgen.New(pcapgen.Options{})
	const perInstance = 3
	var sessions []*pcapgen.Session
	for i := range instances {
		id := [16]byte{0x10, byte(i), 2, 3, 4, 5, 0x46, 7, 0x88, 9, 10, 11, 12, 13, 14, byte(i)}
		for j := range perInstance {
			cn := c.Conn(pcapgen.ConnOptions{
				Client: netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 2}), uint16(42000+perInstance*i+j)),
				Broker: netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), fanoutPort),
			})
			cid := "orders-app"
			if j == perInstance-1 && i%2 == 0 {
				cid = "billing-app"
			}
			sessions = append(sessions, cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr(cid), InstanceID: &id, CorrelationID: 1}))
		}
	}
	// Round by round over every connection: ApiVersions naming the
	// software, then Metadata without the client ID, twice.
	for _, s := range sessions {
		s.RoundTrip(pcapgen.APIVersions(4, "apache-kafka-java", "4.2.0"), pcapgen.APIVersionsResponse(4))
		s.Header.ClientID = nil
	}
	for range 2 {
		for _, s := range sessions {
			s.RoundTrip(pcapgen.Metadata(12, "orders"), pcapgen.MetadataResponse(12, "127.0.0.1", fanoutPort))
		}
	}
	for _, s := range sessions {
		s.Conn.Close()
	}
	var frames [][]byte
	for _, p := range c.Packets() {
		frames = append(frames, p.Data)
	}
	return frames
}

// fanoutFinding is what identifies a finding across runs (not its frame
// number or time, which differ between captures).
type fanoutFinding struct {
	Rule string `json:"rule"`
	Conn struct {
		Client, Broker string
	} `json:"conn"`
	Corr     int32  `json:"correlation_id"`
	Instance string `json:"instance_id"`
	Message  string `json:"message"`
}

func fanoutFindings(t *testing.T, report []byte) map[fanoutFinding]int {
	t.Helper()
	var r struct {
		Findings []fanoutFinding `json:"findings"`
	}
	if err := json.Unmarshal(report, &r); err != nil {
		t.Fatalf("kwatch's report is not JSON (%v):\n%.2000s", err, report)
	}
	out := map[fanoutFinding]int{}
	for _, f := range r.Findings {
		out[f]++
	}
	return out
}

var ringLine = regexp.MustCompile(`live: fanout ring.*received=(\d+).*ring=(\d+)`)

// captureFanout runs kwatch live with args while frames are sent on lo,
// and returns its findings, stderr and report.
func captureFanout(t *testing.T, frames [][]byte, args ...string) (map[fanoutFinding]int, string, *liveReport) {
	t.Helper()
	p := startKwatch(t, append([]string{"live", "-i", "lo", "--no-tui", "--format", "json", "--fail-on", "never",
		"--port", strconv.Itoa(fanoutPort), "--ring-size", "8"}, args...)...)
	p.WaitCapturing(t)
	s, err := newRawSender()
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(s.fd)
	// In bursts with pauses: rings' blocks hand over at different times.
	for i := 0; i < len(frames); i += 64 {
		if err := s.sendAll(frames[i:min(i+64, len(frames))]); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
	}
	p.waitDrained(t, 10*time.Second)
	if code, _ := p.Stop(t, syscall.SIGINT, 20*time.Second); code != 0 {
		t.Fatalf("kwatch exit status %d; stderr:\n%s", code, p.Stderr.String())
	}
	out := []byte(p.Stdout.String())
	return fanoutFindings(t, out), p.Stderr.String(), parseReport(t, string(out))
}

// TestFanoutSameFindings captures the same raw frames with one ring and
// with two in a fanout group (--workers 2): the findings, which compare
// connections the kernel spreads over both rings, are the same, both
// rings took packets, and -w of the fanout run reads back to them too.
func TestFanoutSameFindings(t *testing.T) {
	requireRoot(t)
	t.Setenv("KWATCH_LOG", "info")
	const instances = 12
	frames := fanoutFrames(instances)
	one, _, rep1 := captureFanout(t, frames, "--workers", "1")
	file := filepath.Join(t.TempDir(), "fanout.pcapng")
	two, stderr, rep2 := captureFanout(t, frames, "--workers", "2", "-w", file)

	if n := rep1.Totals.FindingsByRule["instance-id-shared"]; n != instances/2 {
		t.Errorf("one ring: %d instance-id-shared findings, want %d (rules %v)", n, instances/2, rep1.Totals.FindingsByRule)
	}
	if rep1.Totals.Packets != uint64(len(frames)) || rep2.Totals.Packets != uint64(len(frames)) {
		t.Errorf("packets captured: %d with one ring, %d with two, %d sent", rep1.Totals.Packets, rep2.Totals.Packets, len(frames))
	}
	if !maps.Equal(one, two) {
		t.Errorf("findings differ between --workers 1 and 2:\none ring: %v\ntwo rings: %v", keysOf(one), keysOf(two))
	}
	rings := map[string]uint64{}
	for _, m := range ringLine.FindAllStringSubmatch(stderr, -1) {
		n, _ := strconv.ParseUint(m[1], 10, 64)
		rings[m[2]] = n
	}
	if len(rings) != 2 || rings["0"] == 0 || rings["1"] == 0 {
		t.Errorf("want both rings to receive packets, got %v; stderr:\n%s", rings, stderr)
	}
	read, err := exec.Command(kwatchBin(t), "read", "--format", "json", "--fail-on", "never", "--port", strconv.Itoa(fanoutPort), file).Output()
	if err != nil {
		t.Fatalf("kwatch read %s: %v", file, err)
	}
	if fromFile := fanoutFindings(t, read); !maps.Equal(one, fromFile) {
		t.Errorf("kwatch read of the fanout run's -w file: %v, want %v", keysOf(fromFile), keysOf(one))
	}
	t.Logf("%d frames; ring packets %v; findings %v", len(frames), rings, rep2.Totals.FindingsByRule)
}

func keysOf(m map[fanoutFinding]int) []string {
	var out []string
	for f, n := range m {
		out = append(out, fmt.Sprintf("%s %s corr %d x%d", f.Rule, f.Conn.Client, f.Corr, n))
	}
	slices.Sort(out)
	return out
}
