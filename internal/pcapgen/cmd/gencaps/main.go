// Command gencaps writes kwatch's demo captures, and large bulk captures for
// benchmarks:
//
//	go run ./internal/pcapgen/cmd/gencaps -out testdata/pcaps
//	go run ./internal/pcapgen/cmd/gencaps -bulk /tmp/bulk.pcap -size 1G
//	go run ./internal/pcapgen/cmd/gencaps -hostile handshakes -n 500000 -o /tmp/syn.pcap
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kwatch/kwatch/internal/pcapgen"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gencaps:", err)
		os.Exit(1)
	}
}

func run() error {
	out := flag.String("out", "", "directory for the demo captures (demo-*.pcap)")
	bulk := flag.String("bulk", "", "write a bulk capture to this file")
	size := flag.String("size", "100M", "approximate bulk size (K, M, G suffixes)")
	conns := flag.Int("conns", 64, "bulk: connections")
	payload := flag.Int("payload", 64<<10, "bulk: Produce/Fetch payload bytes")
	mtu := flag.Int("mtu", 1500, "bulk: MTU (1500 Ethernet, 65535 loopback)")
	split := flag.Float64("split", 0.1, "bulk: fraction of frames split at a random point")
	seed := flag.Uint64("seed", 1, "bulk: random seed")
	format := flag.String("format", "pcap", "bulk: pcap, pcap-ns, pcap-be, pcap-ns-be or pcapng")
	hostile := flag.String("hostile", "", "write a memory-bound capture: handshakes, requests (one request a connection) or holes (-n connections, 2,000 segments behind a hole each)")
	hn := flag.Int("n", 500000, "hostile: connections")
	ho := flag.String("o", "", "hostile: output file")
	flag.Parse()
	if *hostile != "" {
		return writeHostile(*hostile, *hn, *ho)
	}
	if *out == "" && *bulk == "" {
		return fmt.Errorf("nothing to do: give -out DIR and/or -bulk FILE")
	}
	if *out != "" {
		if err := writeDemos(*out); err != nil {
			return err
		}
	}
	if *bulk != "" {
		n, err := parseSize(*size)
		if err != nil {
			return err
		}
		f, err := pcapgen.ParseFormat(*format)
		if err != nil {
			return err
		}
		opts := pcapgen.BulkOptions{Connections: *conns, Size: n, PayloadSize: *payload, MTU: *mtu, SplitFraction: *split, Seed: *seed, Format: f}
		start := time.Now()
		written, err := pcapgen.WriteBulkFile(*bulk, opts)
		if err != nil {
			return err
		}
		d := time.Since(start)
		fmt.Fprintf(os.Stderr, "wrote %s: %d bytes in %v (%.0f MB/s)\n", *bulk, written, d.Round(time.Millisecond), float64(written)/1e6/d.Seconds())
	}
	return nil
}

func writeDemos(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	demos := []struct {
		name  string
		build func() *pcapgen.Capture
	}{
		{"demo-modern.pcap", func() *pcapgen.Capture {
			c := pcapgen.New(pcapgen.Options{})
			pcapgen.DemoModern(c, pcapgen.ConnOptions{})
			return c
		}},
		{"demo-legacy.pcap", func() *pcapgen.Capture {
			c := pcapgen.New(pcapgen.Options{})
			pcapgen.DemoLegacy(c, pcapgen.ConnOptions{})
			return c
		}},
		{"demo-both-segmented.pcapng", func() *pcapgen.Capture {
			c := pcapgen.New(pcapgen.Options{Seed: 7, Perturb: pcapgen.Perturb{MSS: 16, Reorder: 3, RetransmitEvery: 5, ACKs: true}})
			pcapgen.DemoModern(c, pcapgen.ConnOptions{})
			pcapgen.DemoLegacy(c, pcapgen.ConnOptions{})
			return c
		}},
	}
	for _, d := range demos {
		path := filepath.Join(dir, d.name)
		if err := d.build().WriteFile(path); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		fmt.Fprintln(os.Stderr, "wrote", path)
	}
	return nil
}

func parseSize(s string) (int64, error) {
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		mult, s = 1<<10, strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		mult, s = 1<<20, strings.TrimSuffix(s, "M")
	case strings.HasSuffix(s, "G"):
		mult, s = 1<<30, strings.TrimSuffix(s, "G")
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("bad -size %q", s)
	}
	return n * mult, nil
}

func writeHostile(kind string, n int, path string) error {
	c := pcapgen.New(pcapgen.Options{Step: time.Microsecond})
	switch kind {
	case "handshakes":
		pcapgen.Handshakes(c, n)
	case "requests":
		pcapgen.OpenRequests(c, n)
	case "holes":
		pcapgen.Holes(c, n, 2000, 1448)
	default:
		return fmt.Errorf("-hostile %q: want handshakes, requests or holes", kind)
	}
	return c.WriteFile(path)
}
