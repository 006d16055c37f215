package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/kwatch/kwatch/audit"
	"github.com/kwatch/kwatch/output"
	"github.com/kwatch/kwatch/pipeline"
)

// auditFlags are the flags of read and live that steer the auditor.
type auditFlags struct {
	profile      string
	failOn       string
	memberIDFrom int
	filterFlags
}

func (a *auditFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&a.profile, "profile", "seed", "rule profile: seed or accepted-2026")
	fs.StringVar(&a.failOn, "fail-on", "error", "exit 1 when a finding reaches this severity: error, warn, info or never")
	fs.IntVar(&a.memberIDFrom, "member-id-required-from", 1, "ConsumerGroupHeartbeat `version` from which a client-generated member ID is required")
	a.filterFlags.register(fs)
}

// options checks the flags and returns the auditor options and the
// --fail-on threshold (0 = never).
func (a *auditFlags) options(e *env) (audit.Options, audit.Severity, error) {
	prof, err := audit.ParseProfile(a.profile)
	if err != nil {
		return audit.Options{}, 0, usageError{fmt.Sprintf("--profile %q: want seed or accepted-2026", a.profile)}
	}
	var fail audit.Severity
	if a.failOn != "never" {
		if fail, err = audit.ParseSeverity(a.failOn); err != nil {
			return audit.Options{}, 0, usageError{fmt.Sprintf("--fail-on %q: want error, warn, info or never", a.failOn)}
		}
	}
	if a.memberIDFrom < 0 || a.memberIDFrom > 32767 {
		return audit.Options{}, 0, usageError{fmt.Sprintf("--member-id-required-from %d out of range", a.memberIDFrom)}
	}
	from := int16(a.memberIDFrom)
	if from == 0 {
		from = -1 // the auditor reads 0 as "default"; negative means every version
	}
	flt, err := a.filter()
	if err != nil {
		return audit.Options{}, 0, err
	}
	return audit.Options{Profile: prof, MemberIDRequiredFrom: from, Filter: flt, Logger: e.log}, fail, nil
}

func (e *env) read(ctx context.Context, args []string) error { return e.readAs(ctx, args, "read") }

// baseline is kwatch baseline FILE...: read's audit, written as the list of
// today's cases that --baseline then suppresses (a CI job fails only on
// new problems).
func (e *env) baseline(ctx context.Context, args []string) error {
	return e.readAs(ctx, args, "baseline")
}

// readAs runs read, or with command "baseline" writes the cases instead of
// the report.
func (e *env) readAs(ctx context.Context, args []string, command string) error {
	var c common
	var af auditFlags
	var in inputFlags
	var pf publishFlags
	usage := "[--format {formats}] [--profile seed|accepted-2026] [--fail-on error|warn|info|never] [--port N] [--tls-keylog FILE] FILE..."
	if command == "baseline" {
		usage = "[--profile seed|accepted-2026] [--port N] [--tls-keylog FILE] FILE... > kwatch.baseline"
	}
	cmd := newCommand(command, usage, &c, &af, &in, &pf)
	cmd.reportFormat(&c.format, nil, "")
	files, err := cmd.parseFiles(args, e.stderr)
	if err != nil {
		return err
	}
	if err := refuseForRead(cmd, pf.publish != ""); err != nil {
		return err
	}
	popts, aopts, failOn, err := e.analysisOptions(&c, &af)
	if err != nil {
		return err
	}
	defer popts.Keys.Close()
	src, err := e.openInput(ctx, files, in, &popts)
	if err != nil {
		return err
	}
	defer src.Close()
	if pf.publish != "" {
		return e.publishRead(ctx, &pf, files, popts, aopts, src)
	}

	out := bufio.NewWriterSize(e.stdout, 64<<10)
	streamOutput(&aopts, c.format, out, nil)
	// Every auditor call below is on this goroutine (pipeline.Run feeds
	// the sink on its caller's), so events need no lock.
	aopts.SingleGoroutine = true
	aopts.NameFrame = captureNames(files).namer()
	a := audit.New(aopts)
	st, runErr := pipeline.Run(ctx, src, popts, a)
	addCaptureStats(a, st)
	rep := a.Finish(st.LastTime)
	if err := inputResult(st, runErr, e); err != nil {
		return err
	}
	for _, why := range incompleteReasons(ctx, st, runErr, &rep.Totals) {
		rep.Incomplete(why)
	}
	if command == "baseline" {
		for _, why := range rep.Warnings {
			fmt.Fprintf(e.stderr, "kwatch: warning: %s\n", why)
		}
		if err := rep.WriteBaseline(out); err != nil {
			return fmt.Errorf("baseline: %w", err)
		}
		return out.Flush()
	}
	return e.writeReport(rep, c.format, failOn, out)
}

// refuseForRead refuses what read (or baseline) cannot honour as called:
// the agent's flags without --publish, the auditor's with it, and for
// baseline what has no place in a baseline.
func refuseForRead(cmd *command, publish bool) error {
	switch {
	case cmd.name == "baseline":
		return cmd.refuse(notForBaseline, "not for a baseline (the cases, one JSON object a line)")
	case publish:
		if err := cmd.refuse(oneWorker, whyOneWorker); err != nil {
			return err
		}
		return cmd.refuse(auditOnly, "not with --publish (kwatch aggregate audits; give them to it)")
	}
	return cmd.refuse(agentOnly, "only with --publish")
}

// analysisOptions checks the flags that read, live and tui share and
// returns the pipeline's and the auditor's options and the --fail-on
// threshold (0 = never).
func (e *env) analysisOptions(c *common, af *auditFlags) (pipeline.Options, audit.Options, audit.Severity, error) {
	popts, err := c.pipelineOptions(e)
	if err != nil {
		return pipeline.Options{}, audit.Options{}, 0, err
	}
	aopts, failOn, err := af.options(e)
	if err != nil {
		return pipeline.Options{}, audit.Options{}, 0, err
	}
	popts.HeaderV3 = audit.HeaderV3(aopts.Profile)
	return popts, aopts, failOn, nil
}

// writeReport prints the report in format (output.Reports: text or json
// on out; for ndjson the findings went to stdout as they came, so the
// summary goes to stderr and stdout stays one finding per line), and
// returns the exit status (verdict).
func (e *env) writeReport(rep *audit.Report, format string, failOn audit.Severity, out *bufio.Writer) error {
	rf, _ := output.Reports.Lookup(format, nil)
	err := rf.Report(rep, output.Dest{Out: out, OutColor: useColor(e.stdout), Diag: e.stderr, DiagColor: useColor(e.stderr)})
	if err == nil {
		err = out.Flush()
	}
	if err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	return verdict(rep, failOn)
}

// streamOutput makes the auditor of aopts hand its findings to out as it
// makes them, when format streams them (ndjson: the report at the end is
// only a summary), but not while quiet (nil: never) says so.
func streamOutput(aopts *audit.Options, format string, out io.Writer, quiet func() bool) {
	rf, _ := output.Reports.Lookup(format, nil)
	if !rf.Streams {
		return
	}
	aopts.OnFinding = func(f audit.Finding) {
		if quiet == nil || !quiet() {
			rf.Finding(out, &f)
		}
	}
	aopts.StreamFindings = true
}

// useColor: colour only on a terminal, and never when NO_COLOR is set.
func useColor(w io.Writer) bool {
	if os.Getenv("NO_COLOR") != "" {
		return false
	}
	return isTerminal(w)
}
