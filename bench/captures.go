package bench

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/kwatch/kwatch/internal/pcapgen"
)

// Capture is one of the large generated captures the benchmarks use.
type Capture struct {
	Name string
	Opts pcapgen.BulkOptions
	// TsharkOnly: built for the tshark comparison, not for the floor ratio.
	TsharkOnly bool
}

// Captures are the two workloads, each also in a variant tshark
// can dissect fully. The main ones carry what kgo sends today: Produce v11
// and Fetch v15, flexible, with an instance ID in every request header.
// tshark 4.0 (Debian's) dissects Produce only up to v8 and Fetch up to
// v11, so on those it stops at the version and skips each frame's body,
// far less work than its full dissection; the "-v8" variants (header v1,
// no instance IDs) make it dissect every record batch, so the comparison
// is against tshark doing its whole job.
var Captures = []Capture{
	// Packet-heavy: Ethernet MTU 1500, 200 connections, ~200k small
	// Produce/Fetch round trips, 5% of writes split across segments, a few
	// retransmissions: ~420k packets in 84 MB.
	{Name: "packet-heavy.pcap", Opts: packetHeavy},
	// Byte-heavy: loopback with 64 KiB segments, 307 connections, kgo-sized
	// snappy batches (~200 JSON events each), 7 Produce per Fetch, ~1000
	// retransmitted segments and the pure ACKs of a real loopback capture:
	// ~330k packets in 1.34 GB.
	{Name: "byte-heavy.pcap", Opts: byteHeavy},
	// Findings-heavy: packet-heavy's traffic from clients that send the
	// instance ID on a connection's first request only (the accepted-2026
	// revision), audited under the seed profile: every later request is an
	// instance-id-dropped, some 200k findings in 200 cases.
	{Name: "findings-heavy.pcap", Opts: findingsHeavy},
	{Name: "packet-heavy-v8.pcap", Opts: v8(packetHeavy), TsharkOnly: true},
	{Name: "byte-heavy-v8.pcap", Opts: v8(byteHeavy), TsharkOnly: true},
}

var (
	// Both compress their batches with snappy as kgo does by default, which
	// only the byte-heavy batches are large enough to gain from.
	packetHeavy = pcapgen.BulkOptions{Size: 84 << 20, MTU: 1500, Connections: 200, PayloadSize: 145,
		SplitFraction: 0.05, RetransmitFraction: 0.002, Seed: 1, Compression: pcapgen.CompressionSnappy}
	findingsHeavy = func() pcapgen.BulkOptions { o := packetHeavy; o.InstanceFirstOnly = true; o.Seed = 3; return o }()
	byteHeavy     = pcapgen.BulkOptions{Size: 1340 << 20, MTU: 65535, Connections: 307, PayloadSize: 10300,
		ProducePerFetch: 7.25, SplitFraction: 0.05, RetransmitFraction: 0.0036, AckFraction: 0.19, Seed: 2,
		Link: pcapgen.LinkNull, Compression: pcapgen.CompressionSnappy}
)

func v8(o pcapgen.BulkOptions) pcapgen.BulkOptions {
	o.ProduceVersion, o.FetchVersion = 8, 11
	return o
}

// Dir is where the captures are built: $KWATCH_BENCH_DIR, by default
// $TMPDIR/kwatch-bench.
func Dir() string {
	if dir := os.Getenv("KWATCH_BENCH_DIR"); dir != "" {
		return dir
	}
	return filepath.Join(os.TempDir(), "kwatch-bench")
}

// Build writes c into dir unless it is already there, and returns its path.
// A capture is written under a temporary name and renamed when complete, so
// an interrupted build is never mistaken for a capture.
func Build(dir string, c Capture) (string, error) {
	p := filepath.Join(dir, c.Name)
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("bench: %w", err)
	}
	if _, err := pcapgen.WriteBulkFile(p+".tmp", c.Opts); err != nil {
		return "", fmt.Errorf("bench: building %s: %w", c.Name, err)
	}
	if err := os.Rename(p+".tmp", p); err != nil {
		return "", fmt.Errorf("bench: %w", err)
	}
	return p, nil
}
