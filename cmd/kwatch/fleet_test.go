package main

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
)

// TestFleetEqualsMergedRead: SPEC.md section 7. One agent per capture
// file (one file per broker host) publishes into one topic of a Kafka
// (kfake); kwatch aggregate gives, byte for byte, the report that kwatch
// read gives over the same files merged by time, with the records of
// every client in one of one or three partitions.
func TestFleetEqualsMergedRead(t *testing.T) {
	for _, tc := range []struct {
		name       string
		partitions string
	}{{"quickstart.pcap", "1"}, {"fleet-mixed.pcapng", "1"}, {"fleet-mixed.pcapng", "3"}} {
		name := tc.name
		t.Run(name+"/partitions="+tc.partitions, func(t *testing.T) {
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
				if code, _, stderr := runKwatch("read", "--publish", target, "--partitions", tc.partitions, f); code != 0 {
					t.Fatalf("agent for %s: exit %d: %s", f, code, stderr)
				}
			}
			code, got, stderr := runKwatch("aggregate", "--from", target, "--until-idle", "1s", "--format", "json", "--fail-on", "never")
			if code != 0 {
				t.Fatalf("aggregate: exit %d: %s", code, stderr)
			}
			_, want, _ := runKwatch(append([]string{"read", "--format", "json", "--fail-on", "never"}, files...)...)
			if got != want {
				t.Errorf("aggregate differs from read over the merged files:\n%s", firstDiff([]byte(want), []byte(got)))
			}
		})
	}
}
