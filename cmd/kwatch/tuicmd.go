package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kwatch/kwatch/audit"
	"github.com/kwatch/kwatch/pipeline"
	"github.com/kwatch/kwatch/tui"
	"github.com/rs/zerolog"
)

func (e *env) tui(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("tui", flag.ContinueOnError)
	var c common
	var af auditFlags
	var lf liveFlags
	c.register(fs, "text or json: the report printed when the UI closes")
	af.register(fs)
	lf.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: kwatch tui FILE... | kwatch tui -i IFACE [--port N]")
		fs.PrintDefaults()
	}
	files, err := parse(fs, args, e.stderr)
	if err != nil {
		return err
	}
	switch {
	case lf.iface != "" && len(files) > 0:
		return usageError{"tui: give capture files or -i IFACE, not both"}
	case lf.iface != "":
		return e.runLive(ctx, &c, &af, &lf, true)
	case len(files) == 0:
		return usageError{"tui: no capture file given (or -i IFACE for a live capture)"}
	}
	if err := refuseLiveOnly(fs, "tui"); err != nil {
		return err
	}
	popts, aopts, _, err := e.analysisOptions(&c, &af)
	if err != nil {
		return err
	}
	// The capture's warnings (a link type it cannot decode) would tear
	// the screen the UI draws: it shows the replay's error itself.
	src, err := e.openInputLogging(files, e.log.Level(max(e.log.GetLevel(), zerolog.ErrorLevel)))
	if err != nil {
		return err
	}
	defer src.Close()

	aud := audit.New(aopts)
	rec := tui.NewRecorder(aud)
	var done atomic.Bool
	var mu sync.Mutex
	var replayErr error
	go func() {
		// Replay at full speed; the UI polls snapshots meanwhile.
		st, err := pipeline.Run(ctx, src, popts, rec)
		aud.AddCapture(st.Packets, st.Bytes, st.Connections)
		aud.Finish(st.LastTime)
		mu.Lock()
		replayErr = err
		mu.Unlock()
		done.Store(true)
	}()
	feed := tui.DetailFeed{
		ReportFeed: tui.ReportFeed{Snapshot: aud.Snapshot, Meta: func() tui.Meta {
			mu.Lock()
			defer mu.Unlock()
			return tui.Meta{Source: strings.Join(files, " "), Done: done.Load(), Err: replayErr}
		}},
		Recorder: rec,
	}
	err = tui.Run(ctx, tui.Options{Feed: feed, Explain: tui.ExplainRule, Logger: e.log})
	if err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("tui: %w", err)
	}
	return nil
}
