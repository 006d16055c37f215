package main

import (
	"context"
	"testing"

	"github.com/kwatch/kwatch/audit"
	"github.com/kwatch/kwatch/capture"
	"github.com/kwatch/kwatch/pipeline"
)

// TestReplayRunsThePipeline: kwatch tui FILE replays through
// pipeline.Run, so --workers shards it as it does read, with the same
// report for any count, and the UI's counters end at the run's.
func TestReplayRunsThePipeline(t *testing.T) {
	var first *audit.Report
	for _, workers := range []int{1, 3} {
		src, err := capture.OpenFiles([]string{shipped("quickstart.pcap")}, capture.Options{})
		if err != nil {
			t.Fatal(err)
		}
		rec, aud := tuiAuditor(audit.Options{})
		r := &replay{finished: make(chan struct{})}
		r.run(context.Background(), src, pipeline.Options{Workers: workers}, aud, rec)
		src.Close()
		if r.err != nil || r.report == nil || r.report.Totals.Packets == 0 {
			t.Fatalf("workers %d: err %v, report %v", workers, r.err, r.report != nil)
		}
		c := r.prog.counts()
		if c == nil || c.Packets != r.stats.Packets || c.TCPConns != r.stats.Connections || c.TCPConns == 0 {
			t.Errorf("workers %d: UI counters %+v, want the run's %d packets, %d connections", workers, c, r.stats.Packets, r.stats.Connections)
		}
		if first == nil {
			first = r.report
		} else if got, want := len(r.report.Findings), len(first.Findings); got != want || r.report.Totals.Requests != first.Totals.Requests {
			t.Errorf("workers %d: %d findings, %d requests; one worker: %d, %d", workers, got, r.report.Totals.Requests, want, first.Totals.Requests)
		}
	}
}
