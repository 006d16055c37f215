package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/gopacket/gopacket/layers"
	"github.com/mattn/go-isatty"

	"github.com/kwatch/kwatch/audit"
	"github.com/kwatch/kwatch/capture"
	"github.com/kwatch/kwatch/decode"
	"github.com/kwatch/kwatch/fleet"
	"github.com/kwatch/kwatch/output"
	"github.com/kwatch/kwatch/pipeline"
	"github.com/kwatch/kwatch/tui"
)

// liveFlags are the flags of kwatch live (and kwatch tui -i).
type liveFlags struct {
	iface   string
	bpf     string
	write   string
	force   bool
	noTUI   bool
	snaplen int
	ringMiB int
	// publish: live as a fleet agent (registered by live only).
	publish    publishFlags
	statsEvery time.Duration
}

func (l *liveFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&l.iface, "i", "", "capture from this network `interface` (lo, eth0, ...)")
	fs.StringVar(&l.bpf, "bpf", "", "kernel capture filter `expression` (needs a kwatch built with -tags pcap)")
	fs.StringVar(&l.write, "w", "", "also write every captured packet to this new pcapng `file` (created 0600; never through a symlink)")
	fs.BoolVar(&l.force, "force", false, "let -w replace an existing file")
	fs.IntVar(&l.snaplen, "snaplen", capture.DefaultSnaplen, "bytes kept per packet")
	fs.IntVar(&l.ringMiB, "ring-size", capture.DefaultRingSize>>20, "kernel capture ring in `MiB`, allocated up front: what is queued while kwatch is busy")
}

func (e *env) live(ctx context.Context, args []string) error {
	var c common
	var af auditFlags
	var lf liveFlags
	cmd := newCommand("live", "-i IFACE [--port N] [--bpf EXPR] [-w FILE.pcapng] [--format {formats}] [--no-tui]", &c, &af, &lf, &lf.publish)
	cmd.reportFormat(&c.format, nil, "(without the TUI)")
	cmd.fs.BoolVar(&lf.noTUI, "no-tui", false, "stream findings instead of showing the TUI, even on a terminal")
	cmd.fs.DurationVar(&lf.statsEvery, "stats-every", time.Minute, "without the TUI, print a summary line on stderr this `often` (0: never)")
	if err := cmd.parseNoArgs(args, e.stderr, " (capture files go to kwatch read)"); err != nil {
		return err
	}
	if err := refuseForLive(cmd, lf.publish.publish != ""); err != nil {
		return err
	}
	useTUI := !lf.noTUI && isTerminal(e.stdout)
	return e.runLive(ctx, &c, &af, &lf, useTUI)
}

// refuseForLive refuses the agent's flags without --publish, and
// --workers with it.
func refuseForLive(cmd *command, publish bool) error {
	if publish {
		return cmd.refuse(oneWorker, whyOneWorker)
	}
	return cmd.refuse(agentOnly, "only with --publish")
}

// runLive captures from an interface until ctx ends (Ctrl-C, SIGTERM) or
// the user quits the TUI, then prints the final report.
func (e *env) runLive(ctx context.Context, c *common, af *auditFlags, lf *liveFlags, useTUI bool) error {
	if lf.iface == "" {
		return usageError{"live: -i IFACE is required"}
	}
	if lf.force && lf.write == "" {
		return usageError{"live: --force only applies to -w FILE"}
	}
	popts, aopts, failOn, err := e.analysisOptions(c, af)
	if err != nil {
		return err
	}
	if lf.ringMiB < capture.MinRingSize>>20 || lf.ringMiB > 1<<14 {
		return usageError{fmt.Sprintf("live: --ring-size %d out of range (%d..%d MiB)", lf.ringMiB, capture.MinRingSize>>20, 1<<14)}
	}
	popts.Keys.Follow() // clients append to --tls-keylog while kwatch runs
	if lf.publish.publish != "" {
		if _, err := fleet.ParseTarget(lf.publish.publish); err != nil {
			return usageError{"--publish " + err.Error()}
		}
		// Records must leave in the order one pipeline makes them.
		popts.Workers = 1
	}
	lopts := capture.LiveOptions{Ports: c.ports, Snaplen: lf.snaplen, RingSize: lf.ringMiB << 20, Logger: e.log}
	if lf.bpf != "" {
		if lopts.Filter, err = compileBPF(lf.iface, lf.bpf, lf.snaplen); err != nil {
			return err
		}
	}
	src, err := capture.OpenLive(lf.iface, lopts)
	if err != nil {
		return err
	}
	defer src.Close()
	var w *capture.PcapngWriter
	if lf.write != "" {
		if w, err = capture.NewPcapngWriter(lf.write, layers.LinkTypeEthernet, lf.snaplen, lf.force); err != nil {
			return err
		}
		defer w.Close()
	}
	// The packet ring and the output file are open: nothing else needs
	// privileges.
	if err := dropPrivileges(e); err != nil {
		return err
	}

	out := bufio.NewWriter(e.stdout)
	if !useTUI {
		aopts.OnFinding = streamFindings(c.format, out)
	}
	aud := audit.New(aopts)
	var sink decode.Sink = aud
	var rec *tui.Recorder
	var prog *progress // the UI's counters: nil without one
	if useTUI {
		rec, aud = tuiAuditor(aopts)
		sink = rec
		prog = new(progress)
	}
	started := time.Now()
	agent, err := e.liveAgent(ctx, &lf.publish)
	if err != nil {
		return err
	}
	if agent != nil {
		// The agent's own connections to Kafka are neither audited nor
		// published (SPEC.md 7).
		local := sink
		sink = agent.WithoutOwnTraffic(decode.SinkFunc(func(ev *decode.Event) {
			local.Event(ev)
			agent.Event(ev)
		}))
	}

	capCtx, stopCapture := context.WithCancel(ctx)
	defer stopCapture()
	if !useTUI {
		fmt.Fprintf(e.stderr, "kwatch: capturing on %s (%s); Ctrl-C or SIGTERM stops and prints the report\n", lf.iface, captureWhat(c, lf))
		go printStats(capCtx, e.stderr, aud, lf.statsEvery)
	}
	go func() {
		<-capCtx.Done()
		src.Stop() // what was captured is read, then the source ends
	}()

	var done atomic.Bool
	var capErr error
	var rep *audit.Report
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		var st pipeline.Stats
		st, capErr = runCapture(src, w, popts, sink, aud, prog, agent)
		if ks, err := src.Stats(); err == nil {
			aud.SetKernelStats(ks.Received, ks.Dropped)
			if ks.Freezes > 0 {
				e.log.Warn().Uint64("times", ks.Freezes).Uint64("dropped", ks.Dropped).
					Msg("live: the capture ring was full; raise --ring-size or narrow --port")
			}
		}
		rep = aud.Finish(st.LastTime)
		done.Store(true)
	}()

	if useTUI {
		feed := tui.DetailFeed{
			Feed: tui.NewAuditFeed(aud, func() tui.Meta {
				return tui.Meta{Source: lf.iface, Live: true, Done: done.Load(), Counts: prog.counts(), Clock: time.Since(started)}
			}),
			Recorder: rec,
		}
		err := tui.Run(capCtx, tui.Options{Feed: feed, Explain: tui.ExplainRule, Logger: e.log})
		if err != nil && !errors.Is(err, context.Canceled) {
			stopCapture()
			<-finished
			return fmt.Errorf("live: terminal UI: %w", err)
		}
		// The user quit (q or ctrl+c, which the UI reads as a key in raw
		// mode, not as SIGINT): stop capturing now rather than wait for a
		// signal that never comes.
		stopCapture()
	}
	<-capCtx.Done()
	<-finished
	if capErr != nil {
		fmt.Fprintf(e.stderr, "kwatch: live: %v\n", capErr)
	}
	if agent != nil {
		e.closeAgent(ctx, agent, rep)
	}
	format := c.format
	if useTUI {
		format = "text" // the screen is gone: leave the report behind
	}
	return e.writeReport(rep, format, failOn, out)
}

// streamFindings is the OnFinding of a live run without the TUI: each
// finding is written and flushed as it comes (nil for json, which is one
// document at the end).
func streamFindings(format string, out *bufio.Writer) func(audit.Finding) {
	rf, _ := output.Reports.Lookup(format, nil)
	if rf.Finding == nil {
		return nil
	}
	return func(f audit.Finding) {
		rf.Finding(out, &f)
		out.Flush()
	}
}

// runCapture runs the pipeline over the live source, as read does over a
// file (--workers shards it the same way), until the source ends (Stop).
// The capture tee writes -w and keeps the TUI's packet rates current.
func runCapture(src *capture.LiveSource, w *capture.PcapngWriter, popts pipeline.Options, sink decode.Sink, aud *audit.Auditor, prog *progress, agent *fleet.Publisher) (pipeline.Stats, error) {
	tee := &liveTee{src: src, w: w, aud: aud, prog: prog}
	var in capture.Source = tee
	if agent != nil {
		in = agent.Tap(tee) // records carry their packet's time
	}
	// Not ctx: the source ends by Stop, after the packets it has.
	st, err := pipeline.Run(context.Background(), in, popts, sink)
	aud.AddCapture(st.Packets-tee.reported.packets, st.Bytes-tee.reported.bytes, st.Connections)
	addLayerStats(aud, st)
	prog.store(st)
	return st, err
}

// teeEvery is how much packet time passes between the tee's reports to the
// auditor and flushes of -w.
const teeEvery = 100 * time.Millisecond

// liveTee is the live source as the pipeline reads it: every packet also
// goes to -w, and the packet counts reach the auditor as they grow. It is
// called on the pipeline's reading goroutine; AddCapture takes the
// auditor's lock.
type liveTee struct {
	src        *capture.LiveSource
	w          *capture.PcapngWriter
	aud        *audit.Auditor
	err        error
	count      struct{ packets, bytes uint64 }
	reported   struct{ packets, bytes uint64 }
	lastReport time.Time
	// prog, with the TUI, shows the counts as they grow: every packet,
	// since a quiet link's last packets must show too.
	prog *progress
	st   pipeline.Stats
}

func (t *liveTee) Next() (capture.Packet, error) {
	var p capture.Packet
	err := t.NextInto(&p)
	return p, err
}

func (t *liveTee) NextInto(p *capture.Packet) error {
	if err := t.src.NextInto(p); err != nil {
		return err
	}
	if t.w != nil {
		if err := t.w.WritePacket(p); err != nil {
			return fmt.Errorf("writing capture file: %w", err)
		}
	}
	t.count.packets++
	t.count.bytes += uint64(p.Length)
	if t.prog != nil {
		t.st.Count(p)
		t.prog.store(t.st)
	}
	if p.Time.Sub(t.lastReport) >= teeEvery {
		t.lastReport = p.Time
		t.aud.AddCapture(t.count.packets-t.reported.packets, t.count.bytes-t.reported.bytes, 0)
		t.reported = t.count
		if t.w != nil {
			t.w.Flush()
		}
	}
	return nil
}

func (t *liveTee) Close() error { return nil }

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// captureWhat says what a live capture takes: its ports, snap length and
// ring, as the start line of a run without the TUI says it.
func captureWhat(c *common, lf *liveFlags) string {
	what := "every TCP port, Kafka recognised by content"
	if len(c.ports) > 0 {
		what = "TCP port " + c.ports.String()
	}
	if lf.bpf != "" {
		what += ", filter " + strconv.Quote(lf.bpf)
	}
	if lf.snaplen > 0 {
		what += fmt.Sprintf(", snap length %d", lf.snaplen)
	}
	return what + fmt.Sprintf(", %d MiB ring", lf.ringMiB)
}

// printStats prints a summary line on w every d until ctx ends: a run
// without the TUI shows it is alive and what it has seen.
func printStats(ctx context.Context, w io.Writer, aud *audit.Auditor, d time.Duration) {
	if d <= 0 {
		return
	}
	tick := time.NewTicker(d)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			t, rows := aud.Counts()
			fmt.Fprintf(w, "kwatch: %d packets, %d Kafka connections (%d open), %d requests, %d clients; findings %d error, %d warn, %d info; %d kernel drops\n",
				t.Packets, t.KafkaConnections, t.OpenConnections, t.Requests, rows,
				t.FindingsBySeverity["error"], t.FindingsBySeverity["warn"], t.FindingsBySeverity["info"], t.KernelDropped)
		}
	}
}
