//go:build !pcap

package main

import (
	"strings"
	"testing"
)

// TestBPFNeedsLibpcap: without the pcap build tag, --bpf is refused with a
// one-line reason that says how to get it, and exit status 2.
func TestBPFNeedsLibpcap(t *testing.T) {
	code, _, stderr := runKwatch("live", "-i", "lo", "--bpf", "tcp port 9092", "--no-tui")
	if code != 2 || !strings.Contains(stderr, "-tags pcap") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}
