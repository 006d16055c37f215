package main

import (
	"strings"
	"testing"
)

// TestDumpFilter: kwatch dump --filter selects by API, client and
// connection; keys combine with AND, values of one key with OR.
func TestDumpFilter(t *testing.T) {
	capture := shipped("quickstart.pcap")
	_, all, _ := runKwatch("dump", capture)
	lines := func(out string) []string { return strings.Split(strings.TrimSpace(out), "\n") }
	tests := []struct {
		name    string
		filters []string
		keep    func(line string) bool
	}{
		{"api by name", []string{"api=ConsumerGroupHeartbeat"}, func(l string) bool { return strings.Contains(l, "ConsumerGroupHeartbeat(68)") }},
		{"api by key, two", []string{"api=18", "api=Metadata"}, func(l string) bool {
			return strings.Contains(l, "ApiVersions(18)") || strings.Contains(l, "Metadata(3)")
		}},
		{"client host", []string{"client=10.1.0.4"}, func(l string) bool { return strings.Contains(l, " 10.1.0.4:") }},
		{"conn and api", []string{"conn=10.1.0.3:40001", "api=Metadata"}, func(l string) bool {
			return strings.Contains(l, " 10.1.0.3:40001 ") && strings.Contains(l, "Metadata(3)")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var want []string
			for _, l := range lines(all) {
				if tt.keep(l) {
					want = append(want, l)
				}
			}
			args := []string{"dump"}
			for _, f := range tt.filters {
				args = append(args, "--filter", f)
			}
			code, out, stderr := runKwatch(append(args, capture)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if got := lines(out); len(want) == 0 || strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("got %d lines, want %d:\n%s", len(got), len(want), out)
			}
		})
	}
	for _, bad := range []string{"api=NoSuchApi", "conn=10.1.0.3", "what=x", "api"} {
		if code, _, stderr := runKwatch("dump", "--filter", bad, capture); code != 2 || stderr == "" {
			t.Errorf("--filter %s: exit %d, %q", bad, code, stderr)
		}
	}
}
