package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gopacket/gopacket/layers"
	"github.com/mattn/go-isatty"

	"github.com/kwatch/kwatch/audit"
	"github.com/kwatch/kwatch/capture"
	"github.com/kwatch/kwatch/decode"
	"github.com/kwatch/kwatch/pipeline"
	"github.com/kwatch/kwatch/tui"
)

// liveFlags are the flags of kwatch live (and kwatch tui -i).
type liveFlags struct {
	iface   string
	bpf     string
	write   string
	noTUI   bool
	snaplen int
}

func (l *liveFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&l.iface, "i", "", "capture from this network `interface` (lo, eth0, ...)")
	fs.StringVar(&l.bpf, "bpf", "", "kernel capture filter `expression` (needs a kwatch built with -tags pcap)")
	fs.StringVar(&l.write, "w", "", "also write every captured packet to this pcapng `file` (created 0600)")
	fs.IntVar(&l.snaplen, "snaplen", 262144, "bytes kept per packet")
}

func (e *env) live(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("live", flag.ContinueOnError)
	var c common
	var af auditFlags
	var lf liveFlags
	c.register(fs, "text, json or ndjson (without the TUI)")
	af.register(fs)
	lf.register(fs)
	fs.BoolVar(&lf.noTUI, "no-tui", false, "stream findings instead of showing the TUI, even on a terminal")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: kwatch live -i IFACE [--port N] [--bpf EXPR] [-w FILE.pcapng] [--format text|json|ndjson] [--no-tui]")
		fs.PrintDefaults()
	}
	rest, err := parse(fs, args, e.stderr)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageError{fmt.Sprintf("live: unexpected argument %q (capture files go to kwatch read)", rest[0])}
	}
	if err := checkFormat(c.format, "text", "json", "ndjson"); err != nil {
		return err
	}
	useTUI := !lf.noTUI && isTerminal(e.stdout)
	return e.runLive(ctx, &c, &af, &lf, useTUI)
}

// runLive captures from an interface until ctx ends (Ctrl-C, SIGTERM) or
// the user quits the TUI, then prints the final report.
func (e *env) runLive(ctx context.Context, c *common, af *auditFlags, lf *liveFlags, useTUI bool) error {
	if lf.iface == "" {
		return usageError{"live: -i IFACE is required"}
	}
	popts, aopts, failOn, err := e.analysisOptions(c, af)
	if err != nil {
		return err
	}
	popts.Keys.Follow() // clients append to --tls-keylog while kwatch runs
	lopts := capture.LiveOptions{Ports: c.ports, Snaplen: lf.snaplen, Logger: e.log}
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
		if w, err = capture.NewPcapngWriter(lf.write, layers.LinkTypeEthernet, lf.snaplen); err != nil {
			return err
		}
		defer w.Close()
	}
	// The packet socket and the output file are open: nothing else needs
	// privileges.
	if err := dropPrivileges(e); err != nil {
		return err
	}

	out := bufio.NewWriter(e.stdout)
	var outMu sync.Mutex
	if !useTUI {
		switch c.format {
		case "ndjson":
			aopts.OnFinding = func(f audit.Finding) {
				outMu.Lock()
				audit.WriteFindingJSON(out, &f)
				out.Flush()
				outMu.Unlock()
			}
		case "text":
			aopts.OnFinding = func(f audit.Finding) {
				outMu.Lock()
				fmt.Fprintf(out, "%s %-5s %s frame %d %v -> %v: %s\n", f.Time.UTC().Format(audit.TimeFormat),
					f.Severity, f.Rule, f.Frame, f.Conn.Client, f.Conn.Broker, f.Message)
				out.Flush()
				outMu.Unlock()
			}
		}
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

	capCtx, stopCapture := context.WithCancel(ctx)
	defer stopCapture()
	go func() {
		<-capCtx.Done()
		src.Close() // unblocks Next
	}()

	var done atomic.Bool
	var capErr error
	var rep *audit.Report
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		var st pipeline.Stats
		st, capErr = capturePackets(src, w, pipeline.New(popts, sink), aud, prog)
		if ks, err := src.Stats(); err == nil {
			aud.SetKernelStats(ks.Received, ks.Dropped)
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
	stopCapture()
	<-finished
	if capErr != nil {
		fmt.Fprintf(e.stderr, "kwatch: live: %v\n", capErr)
	}
	format := c.format
	if useTUI {
		format = "text" // the screen is gone: leave the report behind
	}
	return e.writeReport(rep, format, failOn, out)
}

// capturePackets feeds packets to the engine until the source ends, and
// tells the auditor what was read as it goes, so the TUI shows live rates.
func capturePackets(src capture.Source, w *capture.PcapngWriter, eng *pipeline.Engine, aud *audit.Auditor, prog *progress) (st pipeline.Stats, err error) {
	var reported pipeline.Stats
	report := func() {
		st = eng.Stats()
		aud.AddCapture(st.Packets-reported.Packets, st.Bytes-reported.Bytes, st.Connections-reported.Connections)
		reported = st
	}
	defer func() {
		eng.Close()
		report()
	}()
	lastReport := time.Now()
	for n := 0; ; n++ {
		p, err := src.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return st, nil
			}
			return st, err
		}
		if w != nil {
			if err := w.WritePacket(&p); err != nil {
				return st, fmt.Errorf("writing capture file: %w", err)
			}
		}
		eng.Packet(&p)
		prog.store(eng.Stats()) // every packet: a quiet link's last packets must show
		if n%256 == 0 && time.Since(lastReport) > 100*time.Millisecond {
			report()
			lastReport = time.Now()
			if w != nil {
				w.Flush()
			}
		}
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}
