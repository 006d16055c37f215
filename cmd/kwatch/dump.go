package main

import (
	"bufio"
	"context"
	"fmt"

	"github.com/kwatch/kwatch/audit"
	"github.com/kwatch/kwatch/decode"
	"github.com/kwatch/kwatch/output"
	"github.com/kwatch/kwatch/pipeline"
)

func (e *env) dump(ctx context.Context, args []string) error {
	var c common
	var in inputFlags
	cmd := newCommand("dump", "[--format {formats}] [--profile seed|accepted-2026] [--port N] [--tls-keylog FILE] FILE...", &c, &in)
	cmd.eventFormat(&c.format)
	profile := cmd.fs.String("profile", "seed", "header versions of profile seed or accepted-2026 (header v3)")
	var filters stringList
	cmd.fs.Var(&filters, "filter", "print only the PDUs and events that match `KEY=VALUE`: api=NAME|KEY, client=HOST|CLIENT-ID|INSTANCE-ID, conn=HOST:PORT (repeatable)")
	files, err := cmd.parseFiles(args, e.stderr)
	if err != nil {
		return err
	}
	opts, err := c.pipelineOptions(e)
	if err != nil {
		return err
	}
	defer opts.Keys.Close()
	prof, err := audit.ParseProfile(*profile)
	if err != nil {
		return usageError{fmt.Sprintf("--profile %q: want seed or accepted-2026", *profile)}
	}
	opts.HeaderV3 = audit.HeaderV3(prof)
	filter, err := parseEventFilter(filters)
	if err != nil {
		return err
	}
	src, err := e.openInput(ctx, files, in, &opts)
	if err != nil {
		return err
	}
	defer src.Close()

	w := bufio.NewWriterSize(e.stdout, 64<<10)
	format, _ := output.Events.Lookup(c.format, nil)
	d := &dumper{out: format.Open(w, captureNames(files).namer()), filter: filter}
	st, runErr := pipeline.Run(ctx, src, opts, d)
	if runErr != nil && st.Packets == 0 {
		// Nothing was read: no output but the error (as kwatch read).
		w.Reset(e.stdout)
		return runErr
	}
	d.out.Close()
	if err := w.Flush(); err != nil {
		return fmt.Errorf("dump: writing output: %w", err)
	}
	return inputResult(st, runErr, e)
}

// dumper is kwatch dump's sink: the events --filter selects, written in
// the format of --format.
type dumper struct {
	out    *output.EventWriter
	filter *eventFilter
}

// Event implements decode.Sink.
func (d *dumper) Event(ev *decode.Event) {
	if d.filter.keep(ev) {
		d.out.Write(ev)
	}
}
