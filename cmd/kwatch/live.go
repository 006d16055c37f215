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
	"github.com/rs/zerolog"

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
	// rings: the capture's rings, one per worker (set by runLive).
	rings int
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
	oneRingByDefault(cmd)
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

// oneRingByDefault makes live's --workers 1 unless given: N workers are
// N fanout rings, which cost two to three times the CPU per packet of one
// and only pay where one core does not keep up (README, "Several rings"),
// so a larger machine does not get them just for having the cores.
func oneRingByDefault(cmd *command) {
	f := cmd.fs.Lookup("workers")
	f.DefValue = "1"
	_ = f.Value.Set("1")
	f.Usage = "capture through `N` fanout rings and analyze connections on N goroutines; only where one core does not keep up"
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
	popts, aopts, failOn, err := e.liveOptions(c, af, lf)
	if err != nil {
		return err
	}
	lf.rings = popts.Workers
	src, w, err := e.openCapture(c, lf)
	if err != nil {
		return err
	}
	defer src.Close()
	if w != nil {
		defer w.Close()
	}
	out := bufio.NewWriter(e.stdout)
	r := &liveRun{src: src, w: w, popts: popts, log: e.log}
	started := time.Now()
	if err := e.wireLive(ctx, r, aopts, c.format, out, &lf.publish, useTUI); err != nil {
		return err
	}

	capCtx, stopCapture := context.WithCancel(ctx)
	defer stopCapture()
	if !useTUI {
		fmt.Fprintf(e.stderr, "kwatch: capturing on %s (%s); Ctrl-C or SIGTERM stops and prints the report\n", lf.iface, captureWhat(c, lf))
		go printStats(capCtx, e.stderr, r.aud, lf.statsEvery)
	}
	go func() {
		<-capCtx.Done()
		src.Stop() // what was captured is read, then the source ends
	}()
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		r.run()
	}()
	if useTUI {
		if err := r.showTUI(capCtx, lf.iface, started); err != nil {
			stopCapture()
			<-finished
			return err
		}
		// The user quit (q or ctrl+c, which the UI reads as a key in raw
		// mode, not as SIGINT): stop capturing now rather than wait for a
		// signal that never comes.
		stopCapture()
	}
	<-capCtx.Done()
	<-finished
	if r.err != nil {
		fmt.Fprintf(e.stderr, "kwatch: live: %v\n", r.err)
	}
	if r.agent != nil {
		e.closeAgent(ctx, r.agent, r.rep)
	}
	format := c.format
	if useTUI {
		format = "text" // the screen is gone: leave the report behind
	}
	return e.writeReport(r.rep, format, failOn, out)
}

// liveOptions checks live's flags and makes the analysis options.
func (e *env) liveOptions(c *common, af *auditFlags, lf *liveFlags) (pipeline.Options, audit.Options, audit.Severity, error) {
	if lf.iface == "" {
		return pipeline.Options{}, audit.Options{}, 0, usageError{"live: -i IFACE is required"}
	}
	if lf.force && lf.write == "" {
		return pipeline.Options{}, audit.Options{}, 0, usageError{"live: --force only applies to -w FILE"}
	}
	popts, aopts, failOn, err := e.analysisOptions(c, af)
	if err != nil {
		return popts, aopts, failOn, err
	}
	if lf.ringMiB < capture.MinRingSize>>20 || lf.ringMiB > 1<<14 {
		return popts, aopts, failOn, usageError{fmt.Sprintf("live: --ring-size %d out of range (%d..%d MiB)", lf.ringMiB, capture.MinRingSize>>20, 1<<14)}
	}
	popts.Keys.Follow() // clients append to --tls-keylog while kwatch runs
	if lf.publish.publish != "" {
		if _, err := fleet.ParseTarget(lf.publish.publish); err != nil {
			return popts, aopts, failOn, usageError{"--publish " + err.Error()}
		}
		// Records must leave in the order one pipeline makes them.
		popts.Workers = 1
	}
	return popts, aopts, failOn, nil
}

// liveSource is a live capture: one ring (capture.LiveSource) or several
// in a fanout group (capture.FanoutSource).
type liveSource interface {
	capture.IntoSource
	Stop()
	Stats() (capture.LiveStats, error)
}

// openCapture opens the packet rings (one per worker: a fanout group
// when there are several) and the -w file, then drops privileges: nothing
// after needs them. On error nothing stays open.
func (e *env) openCapture(c *common, lf *liveFlags) (liveSource, *capture.PcapngWriter, error) {
	lopts := capture.LiveOptions{Ports: c.ports, Snaplen: lf.snaplen, RingSize: ringShare(lf.ringMiB, lf.rings), Logger: e.log}
	if lf.bpf != "" {
		var err error
		if lopts.Filter, err = compileBPF(lf.iface, lf.bpf, lf.snaplen); err != nil {
			return nil, nil, err
		}
	}
	src, err := openRings(lf.iface, lf.rings, lopts)
	if err != nil {
		return nil, nil, err
	}
	var w *capture.PcapngWriter
	if lf.write != "" {
		if w, err = capture.NewPcapngWriter(lf.write, layers.LinkTypeEthernet, lf.snaplen, lf.force); err != nil {
			src.Close()
			return nil, nil, err
		}
	}
	if err := dropPrivileges(e); err != nil {
		if w != nil {
			w.Close()
		}
		src.Close()
		return nil, nil, err
	}
	return src, w, nil
}

// ringShare is each of n rings' size in bytes: --ring-size is what the
// kernel pins in all, split evenly (each ring takes about 1/n of the
// connections), each at least capture.MinRingSize.
func ringShare(mib, n int) int {
	return max(capture.MinRingSize, (mib<<20)/max(n, 1))
}

// openRings opens one ring, or n in a fanout group.
func openRings(iface string, n int, lopts capture.LiveOptions) (liveSource, error) {
	if n <= 1 {
		return capture.OpenLive(iface, lopts)
	}
	return capture.OpenFanout(iface, n, lopts)
}

// liveRun is one live capture: the source, where its events go, and what
// the capture ended with.
type liveRun struct {
	src   liveSource
	w     *capture.PcapngWriter
	popts pipeline.Options
	log   zerolog.Logger

	sink  decode.Sink
	aud   *audit.Auditor
	rec   *tui.Recorder    // the TUI's; nil without it
	prog  *progress        // the TUI's counters; nil without it
	agent *fleet.Publisher // --publish; nil without it

	// Set by run before it returns (done as it returns).
	done atomic.Bool
	err  error
	rep  *audit.Report
}

// wireLive makes r's auditor and sink: findings streamed to out without
// the TUI, the TUI's recorder with it, and the fleet agent with
// --publish.
func (e *env) wireLive(ctx context.Context, r *liveRun, aopts audit.Options, format string, out *bufio.Writer, pf *publishFlags, useTUI bool) error {
	if !useTUI {
		aopts.OnFinding = streamFindings(format, out)
	}
	r.aud = audit.New(aopts)
	r.sink = r.aud
	if useTUI {
		r.rec, r.aud = tuiAuditor(aopts)
		r.sink = r.rec
		r.prog = new(progress)
	}
	agent, err := e.liveAgent(ctx, pf, aopts)
	if err != nil {
		return err
	}
	if agent != nil {
		// The agent's own connections to Kafka are neither audited nor
		// published (SPEC.md 7).
		local := r.sink
		r.sink = agent.WithoutOwnTraffic(decode.SinkFunc(func(ev *decode.Event) {
			local.Event(ev)
			agent.Event(ev)
		}))
		r.agent = agent
	}
	return nil
}

// run captures until the source ends (Stop), then adds the kernel's
// counters and finishes the report.
func (r *liveRun) run() {
	var st pipeline.Stats
	st, r.err = runCapture(r.src, r.w, r.popts, r.sink, r.aud, r.prog, r.agent)
	if ks, err := r.src.Stats(); err == nil {
		r.aud.SetKernelStats(ks.Received, ks.Dropped)
		if ks.Freezes > 0 {
			r.log.Warn().Uint64("times", ks.Freezes).Uint64("dropped", ks.Dropped).
				Msg("live: the capture ring was full; raise --ring-size or narrow --port")
		}
	}
	if fs, ok := r.src.(*capture.FanoutSource); ok {
		logRings(r.log, fs)
	}
	r.rep = r.aud.Finish(st.LastTime)
	r.done.Store(true)
}

// logRings logs what each ring of a fanout group took (info), and the
// packets the merge returned out of time order (a warning: the rules that
// compare connections assume time order).
func logRings(log zerolog.Logger, fs *capture.FanoutSource) {
	for i, st := range fs.RingStats() {
		log.Info().Int("ring", i).Uint64("received", st.Received).Uint64("dropped", st.Dropped).
			Uint64("freezes", st.Freezes).Msg("live: fanout ring")
	}
	if late := fs.Late(); late > 0 {
		log.Warn().Uint64("packets", late).Msg("live: packets stamped before one already analysed (a clock step?)")
	}
}

// showTUI runs the terminal UI over the capture until the user quits or
// ctx ends.
func (r *liveRun) showTUI(ctx context.Context, iface string, started time.Time) error {
	feed := tui.DetailFeed{
		Feed: tui.NewAuditFeed(r.aud, func() tui.Meta {
			return tui.Meta{Source: iface, Live: true, Done: r.done.Load(), Counts: r.prog.counts(), Clock: time.Since(started)}
		}),
		Recorder: r.rec,
	}
	err := tui.Run(ctx, tui.Options{Feed: feed, Explain: tui.ExplainRule, Logger: r.log})
	if err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("live: terminal UI: %w", err)
	}
	return nil
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
func runCapture(src liveSource, w *capture.PcapngWriter, popts pipeline.Options, sink decode.Sink, aud *audit.Auditor, prog *progress, agent *fleet.Publisher) (pipeline.Stats, error) {
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
	src        liveSource
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
	if lf.rings > 1 {
		return what + fmt.Sprintf(", %d MiB in %d fanout rings", lf.rings*ringShare(lf.ringMiB, lf.rings)>>20, lf.rings)
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
