package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kwatch/kwatch/audit"
	"github.com/kwatch/kwatch/capture"
	"github.com/kwatch/kwatch/output"
	"github.com/kwatch/kwatch/pipeline"
	"github.com/kwatch/kwatch/tui"
	"github.com/rs/zerolog"
)

func (e *env) tui(ctx context.Context, args []string) error {
	var c common
	var af auditFlags
	var lf liveFlags
	var in inputFlags
	cmd := newCommand("tui", "FILE... | kwatch tui -i IFACE [--port N]", &c, &af, &lf, &in)
	cmd.reportFormat(&c.format, output.NotStreaming, "(the report printed when the UI closes)")
	files, err := cmd.parse(args, e.stderr)
	if err != nil {
		return err
	}
	switch {
	case lf.iface != "" && len(files) > 0:
		return usageError{"tui: give capture files or -i IFACE, not both"}
	case lf.iface != "" && in.concat:
		return usageError{"tui: --concat reads capture files, not an interface"}
	case lf.iface != "" && c.format != "text":
		return usageError{"tui: --format " + c.format + ": the report a live UI leaves behind is text"}
	case lf.iface != "":
		return e.runLive(ctx, &c, &af, &lf, true)
	case len(files) == 0:
		return usageError{"tui: no capture file given (or -i IFACE for a live capture)"}
	}
	if err := cmd.refuse(liveOnly, "only for a live capture (-i IFACE)"); err != nil {
		return err
	}
	popts, aopts, failOn, err := e.analysisOptions(&c, &af)
	if err != nil {
		return err
	}
	// The capture's warnings (a link type it cannot decode) would tear
	// the screen the UI draws: it shows the replay's error itself.
	src, err := e.openInputLogging(ctx, files, in, &popts, e.log.Level(max(e.log.GetLevel(), zerolog.ErrorLevel)))
	if err != nil {
		return err
	}
	defer src.Close()

	aopts.NameFrame = captureNames(files).namer()
	rec, aud := tuiAuditor(aopts)
	r := &replay{finished: make(chan struct{})}
	// Quitting the UI before the replay ends stops it: the report then
	// says the run was interrupted.
	replayCtx, stopReplay := context.WithCancel(ctx)
	defer stopReplay()
	go r.run(replayCtx, src, popts, aud, rec)
	feed := tui.DetailFeed{
		Feed: tui.NewAuditFeed(aud, func() tui.Meta {
			return tui.Meta{Source: strings.Join(files, " "), Done: r.done.Load(), Err: r.error(), Counts: r.prog.counts()}
		}),
		Recorder: rec,
	}
	err = tui.Run(ctx, tui.Options{Feed: feed, Explain: tui.ExplainRule, Logger: e.log})
	if err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("tui: %w", err)
	}
	// As kwatch read: the report on stdout once the UI has closed, and
	// read's exit status.
	stopReplay()
	<-r.finished
	if err := inputResult(r.stats, r.err, e); err != nil {
		return err
	}
	for _, why := range incompleteReasons(replayCtx, r.stats, r.err, &r.report.Totals) {
		r.report.Incomplete(why)
	}
	return e.writeReport(r.report, c.format, failOn, bufio.NewWriter(e.stdout))
}

// replay runs a capture file through the auditor for the TUI, at full
// speed, on a goroutine of its own.
type replay struct {
	done     atomic.Bool
	finished chan struct{}
	mu       sync.Mutex // guards err until finished is closed
	err      error
	stats    pipeline.Stats
	report   *audit.Report
	prog     progress
}

// tuiAuditor makes the auditor of a TUI run behind a Recorder, which
// hears every finding as it is made and keeps its context.
func tuiAuditor(aopts audit.Options) (*tui.Recorder, *audit.Auditor) {
	rec := tui.NewRecorder(nil)
	if prev := aopts.OnFinding; prev != nil {
		aopts.OnFinding = func(f audit.Finding) { rec.Finding(f); prev(f) }
	} else {
		aopts.OnFinding = rec.Finding
	}
	aud := audit.New(aopts)
	rec.Next = aud
	return rec, aud
}

// progress hands the packet loop's counters (pipeline.Stats) to the UI,
// which shows them while the auditor learns them only at the end.
type progress struct {
	mu  sync.Mutex
	st  pipeline.Stats
	set bool
}

// store publishes st; a nil progress (no UI) does nothing.
func (p *progress) store(st pipeline.Stats) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.st, p.set = st, true
	p.mu.Unlock()
}

// counts returns the latest counters, nil before the first.
func (p *progress) counts() *tui.CaptureCounts {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	st, set := p.st, p.set
	p.mu.Unlock()
	if !set {
		return nil
	}
	return &tui.CaptureCounts{Packets: st.Packets, Bytes: st.Bytes, TCPConns: st.Connections,
		Truncated: st.Truncated, First: st.FirstTime, Last: st.LastTime}
}

// progressEvery is how many packets pass between two publications of the
// counters in a replay.
const progressEvery = 1024

// progressSource is a replay's capture as the pipeline reads it: the
// packet counters reach the UI as they grow, so its figures and rates move
// with the replay (connections are counted by the pipeline, and shown when
// it ends). It is called on the pipeline's reading goroutine.
type progressSource struct {
	capture.Source
	prog *progress
	st   pipeline.Stats
}

func (s *progressSource) Next() (capture.Packet, error) {
	p, err := s.Source.Next()
	if err == nil {
		s.st.Count(&p)
		if s.st.Packets%progressEvery == 1 {
			s.prog.store(s.st)
		}
	}
	return p, err
}

func (r *replay) run(ctx context.Context, src capture.Source, popts pipeline.Options, aud *audit.Auditor, rec *tui.Recorder) {
	defer close(r.finished)
	// As read: the pipeline's loop, sharded over --workers.
	st, err := pipeline.Run(ctx, &progressSource{Source: src, prog: &r.prog}, popts, rec)
	r.prog.store(st)
	addCaptureStats(aud, st)
	rep := aud.Finish(st.LastTime)
	r.mu.Lock()
	r.err, r.stats, r.report = err, st, rep
	r.mu.Unlock()
	r.done.Store(true)
}

func (r *replay) error() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}
