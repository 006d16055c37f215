package fleet

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kwatch/kwatch/audit"
	"github.com/kwatch/kwatch/capture"
	"github.com/kwatch/kwatch/pipeline"
)

// publishFile replays one capture as an agent into target.
func publishFile(t *testing.T, target Target, path, agent string) {
	t.Helper()
	ctx := context.Background()
	src, err := capture.Open(path, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	pub, err := NewPublisher(ctx, target, PublisherOptions{Agent: agent})
	if err != nil {
		t.Fatal(err)
	}
	st, err := pipeline.Run(ctx, pub.Tap(src), pipeline.Options{}, pub)
	if err != nil {
		t.Fatal(err)
	}
	if err := pub.Close(ctx, Totals{Packets: st.Packets, Bytes: st.Bytes, Connections: st.Connections, Last: st.LastTime.UnixNano()}); err != nil {
		t.Fatal(err)
	}
}

// countingSink is an auditor that calls after with each record's steps.
type countingSink struct {
	*audit.InstanceAuditor
	after func()
}

func (s countingSink) Take(event []audit.Observed) {
	s.InstanceAuditor.Take(event)
	s.after()
}

// streamed runs one aggregator of group over target and returns the
// findings it streamed (not those it replayed); stopAfter > 0 cancels it
// after that many records, as a crash mid-stream would. It returns too,
// for each finding, how many records it had taken before.
func streamed(t *testing.T, target Target, group string, stopAfter int) ([]string, []int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var agg *Aggregator
	var out []string
	var at []int
	events := 0
	aud := audit.NewInstanceAuditor(audit.Options{StreamFindings: true, OnFinding: func(f audit.Finding) {
		if !agg.Replaying() {
			out = append(out, f.Rule+"@"+f.Time.String())
			at = append(at, events)
		}
	}})
	sink := countingSink{aud, func() {
		if events++; stopAfter > 0 && events == stopAfter {
			cancel()
		}
	}}
	var err error
	if agg, err = NewAggregator(target, AggregatorOptions{Group: group, UntilIdle: time.Second}, sink); err != nil {
		t.Fatal(err)
	}
	if _, err := agg.Run(ctx); err != nil {
		t.Fatal(err)
	}
	aud.Finish(time.Time{})
	return out, at
}

// TestAggregatorRestartLosesAndDoublesNothing: an aggregator of a group
// stopped mid-stream and a second one started in its place stream, between
// them, every finding exactly once: the findings of one run over it all.
func TestAggregatorRestartLosesAndDoublesNothing(t *testing.T) {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	target := Target{Brokers: cluster.ListenAddrs(), Topic: "obs"}
	path := filepath.Join("..", "testdata", "pcaps", "fleet-mixed.pcapng")
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	publishFile(t, target, path, "agent-a")

	whole, at := streamed(t, target, "one-run", 0)
	if len(whole) < 5 {
		t.Fatalf("only %d findings: nothing to lose", len(whole))
	}
	// Stopped right after the record of the middle finding.
	first, _ := streamed(t, target, "restarted", at[len(at)/2]+1)
	second, _ := streamed(t, target, "restarted", 0)
	if len(first) == 0 || len(second) == 0 {
		t.Errorf("the stop did not fall mid-stream: %d then %d findings", len(first), len(second))
	}
	got := append(slices.Clone(first), second...)
	slices.Sort(got)
	want := slices.Clone(whole)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("restarted: %d+%d findings\n%s\nwant %d\n%s", len(first), len(second),
			strings.Join(got, "\n"), len(want), strings.Join(want, "\n"))
	}
}
