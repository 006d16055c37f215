package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/kwatch/kwatch/audit"
	"github.com/kwatch/kwatch/capture"
	"github.com/kwatch/kwatch/fleet"
	"github.com/kwatch/kwatch/metrics"
	"github.com/kwatch/kwatch/pipeline"
)

// publishFlags are the agent flags of read (and live): SPEC.md section 7.
type publishFlags struct {
	publish    string
	agent      string
	partitions int
	retention  time.Duration
}

func (p *publishFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&p.publish, "publish", "", "publish observations to Kafka as an agent: `HOST:PORT[,HOST:PORT...]/TOPIC` (fleet mode)")
	fs.StringVar(&p.agent, "agent", "", "the capture point's `name`, each finding's \"capture\" (default: the capture file's name for read, the host name for live)")
	fs.IntVar(&p.partitions, "partitions", 1, "partitions of the fleet topic when kwatch creates it")
	fs.DurationVar(&p.retention, "retention", 0, "retention of the fleet topic when kwatch creates it (0: the broker's default)")
}

// publishRead replays capture files as an agent: the per-connection part
// of the audit runs here and its steps go to the fleet topic (kwatch
// aggregate runs the per-instance part and reports).
func (e *env) publishRead(ctx context.Context, pf *publishFlags, files []string, popts pipeline.Options, aopts audit.Options, src capture.Source) error {
	target, err := fleet.ParseTarget(pf.publish)
	if err != nil {
		return usageError{"--publish " + err.Error()}
	}
	agent := pf.agent
	if agent == "" {
		agent = files[0]
		if len(files) > 1 {
			agent, _ = os.Hostname()
		}
	}
	pub, err := fleet.NewPublisher(ctx, target, fleet.PublisherOptions{
		Agent: agent, Captures: files, Partitions: int32(pf.partitions), Retention: pf.retention, Audit: aopts, Logger: e.log,
	})
	if err != nil {
		return err
	}
	// One worker: records must leave in the order one pipeline makes them.
	popts.Workers = 1
	st, runErr := pipeline.Run(ctx, pub.Tap(src), popts, pub)
	closeErr := pub.Close(ctx, fleet.TotalsOf(st))
	if err := inputResult(st, runErr, e); err != nil {
		return err
	}
	if closeErr != nil {
		return closeErr
	}
	fmt.Fprintf(e.stderr, "kwatch: agent %s published %d packets' observations to %s\n", agent, st.Packets, pf.publish)
	return nil
}

// aggregate is kwatch aggregate: the fleet's auditor (SPEC.md section 7).
func (e *env) aggregate(ctx context.Context, args []string) error {
	var af auditFlags
	cmd := newCommand("aggregate", "--from HOST:PORT[,...]/TOPIC [--group ID] [--until-idle DUR] [--format {formats}] [--fail-on SEV]", &af)
	fs := cmd.fs
	from := fs.String("from", "", "consume observations from `HOST:PORT[,HOST:PORT...]/TOPIC`")
	group := fs.String("group", "", "consumer group `ID` (default: none; read every partition from its start, commit nothing)")
	idle := fs.Duration("until-idle", 0, "print the report and exit once no record has come for this `long` (0: run until SIGINT/SIGTERM)")
	var format string
	cmd.reportFormat(&format, nil, "")
	metricsAddr := fs.String("metrics", "", "serve Prometheus metrics on `HOST:PORT` (/metrics)")
	if err := cmd.parseNoArgs(args, e.stderr, ""); err != nil {
		return err
	}
	target, err := fleet.ParseTarget(*from)
	if err != nil {
		return usageError{"--from " + err.Error()}
	}
	aopts, failOn, err := af.options(e)
	if err != nil {
		return err
	}
	out := bufio.NewWriterSize(e.stdout, 64<<10)
	var agg *fleet.Aggregator
	// A restarted group member rebuilds its state from the start but
	// streams only what its group had not reported yet.
	streamOutput(&aopts, format, out, func() bool { return agg.Replaying() })
	// A metrics scrape reads the auditor from its own goroutine.
	aopts.SingleGoroutine = *metricsAddr == ""
	aopts.NameFrame = func(f uint64) (string, uint64) { return agg.NameFrame(f) }
	aud := audit.NewInstanceAuditor(aopts)
	if agg, err = fleet.NewAggregator(target, fleet.AggregatorOptions{Group: *group, UntilIdle: *idle, Logger: e.log}, aud); err != nil {
		return err
	}
	if *metricsAddr != "" {
		srv, err := metrics.Serve(*metricsAddr, metrics.Registry(aud, aggregatorMetrics(agg)...))
		if err != nil {
			return err
		}
		defer srv.Close()
	}
	totals, runErr := agg.Run(ctx)
	totals.AddTo(aud)
	rep := aud.Finish(totals.LastTime())
	if runErr != nil {
		rep.Incomplete(fmt.Sprintf("consuming %s broke off: %v", *from, runErr))
	}
	if rep.Totals.KafkaConnections == 0 {
		rep.Incomplete("no observation of a Kafka connection was consumed from " + *from)
	}
	return e.writeReport(rep, format, failOn, out)
}

// aggregatorMetrics are the aggregator's own metrics beside the report's.
func aggregatorMetrics(agg *fleet.Aggregator) []metrics.Extra {
	stat := func(i int) func() float64 {
		return func() float64 {
			r, bad, wait := agg.Stats()
			return float64([]uint64{r, bad, wait}[i])
		}
	}
	return []metrics.Extra{
		{Name: "kwatch_records_consumed_total", Help: "Fleet records consumed.", Counter: true, Value: stat(0)},
		{Name: "kwatch_records_invalid_total", Help: "Fleet records skipped as unreadable.", Counter: true, Value: stat(1)},
		{Name: "kwatch_aggregator_lag_records", Help: "Records consumed and waiting for the merge by capture time.", Value: stat(2)},
	}
}

// liveAgent connects a live capture's publisher (--publish), nil without
// one. A live agent never waits for Kafka: when its buffer is full it
// drops records and counts them.
func (e *env) liveAgent(ctx context.Context, pf *publishFlags, aopts audit.Options) (*fleet.Publisher, error) {
	if pf.publish == "" {
		return nil, nil
	}
	target, err := fleet.ParseTarget(pf.publish)
	if err != nil {
		return nil, usageError{"--publish " + err.Error()}
	}
	agent := pf.agent
	if agent == "" {
		agent, _ = os.Hostname()
	}
	return fleet.NewPublisher(ctx, target, fleet.PublisherOptions{
		Agent: agent, Partitions: int32(pf.partitions), Retention: pf.retention, Lossy: true, Live: true, Audit: aopts, Logger: e.log,
	})
}

// closeAgent publishes a live agent's end record and says what it dropped.
func (e *env) closeAgent(ctx context.Context, agent *fleet.Publisher, rep *audit.Report) {
	t := fleet.Totals{Packets: rep.Totals.Packets, Bytes: rep.Totals.Bytes, Connections: rep.Totals.Connections,
		NotKafka: rep.Totals.NotKafkaConnections, Evicted: rep.Totals.EvictedConnections, Unwrapped: rep.Totals.Unwrapped}
	if end, err := time.Parse(audit.TimeFormat, rep.End); err == nil {
		t.Last = end.UnixNano()
	}
	flushCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := agent.Close(flushCtx, t); err != nil {
		fmt.Fprintf(e.stderr, "kwatch: live: %v\n", err)
	}
	if n := agent.Dropped(); n > 0 {
		rep.Incomplete(fmt.Sprintf("the agent dropped %d records while Kafka was unreachable or slow", n))
	}
}
