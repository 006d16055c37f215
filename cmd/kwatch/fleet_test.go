package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
)

// TestFleetEqualsMergedRead: SPEC.md section 7. One agent per capture
// file (one file per broker host) publishes into one topic of a Kafka
// (kfake); kwatch aggregate gives, byte for byte, the report that kwatch
// read gives over the same files merged by time, with the records of
// every client in one of one or three partitions, and under the profile
// and member-ID threshold the agents judge by (which change the report).
func TestFleetEqualsMergedRead(t *testing.T) {
	accepted := []string{"--profile", "accepted-2026", "--member-id-required-from", "2"}
	for _, tc := range []struct {
		name, partitions string
		rules            []string // given to the agents, read and aggregate
	}{
		{"quickstart.pcap", "1", nil},
		{"fleet-mixed.pcapng", "1", nil},
		{"fleet-mixed.pcapng", "3", nil},
		{"fleet-mixed.pcapng", "3", accepted},
	} {
		name := tc.name
		t.Run(fmt.Sprintf("%s/partitions=%s/%v", name, tc.partitions, tc.rules), func(t *testing.T) {
			whole := shipped(name)
			files, _ := splitCapture(t, whole, t.TempDir(), brokerOf)
			if len(files) < 2 {
				t.Fatalf("split into %d files", len(files))
			}
			cluster, err := kfake.NewCluster(kfake.NumBrokers(1))
			if err != nil {
				t.Fatal(err)
			}
			defer cluster.Close()
			target := strings.Join(cluster.ListenAddrs(), ",") + "/kwatch-observations"
			for _, f := range files {
				args := append([]string{"read", "--publish", target, "--partitions", tc.partitions}, tc.rules...)
				if code, _, stderr := runKwatch(append(args, f)...); code != 0 {
					t.Fatalf("agent for %s: exit %d: %s", f, code, stderr)
				}
			}
			report := []string{"--format", "json", "--fail-on", "never"}
			code, got, stderr := runKwatch(slices.Concat([]string{"aggregate", "--from", target, "--until-idle", "1s"}, report, tc.rules)...)
			if code != 0 {
				t.Fatalf("aggregate: exit %d: %s", code, stderr)
			}
			_, want, _ := runKwatch(slices.Concat([]string{"read"}, report, tc.rules, files)...)
			if got != want {
				t.Errorf("aggregate differs from read over the merged files:\n%s", firstDiff([]byte(want), []byte(got)))
			}
			if _, seed, _ := runKwatch(slices.Concat([]string{"read"}, report, files)...); tc.rules != nil && seed == want {
				t.Errorf("%v changed nothing", tc.rules)
			}
		})
	}
}
