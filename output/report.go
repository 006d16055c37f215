package output

import (
	"fmt"
	"io"

	"github.com/kwatch/kwatch/audit"
)

// ReportFormat is one way to write an audit: its findings as they come,
// and its report at the end.
type ReportFormat struct {
	Name string
	// Streams: the output is the findings, one a line, written by Finding
	// as the auditor makes them (the auditor then need not keep them); the
	// report at the end adds only a summary, on Dest.Diag, so that the
	// output holds nothing else. A command whose output is not free while
	// it runs (the TUI holds the terminal) cannot write such a format.
	Streams bool
	// Finding writes one finding as it is made: the output itself when
	// Streams, otherwise the line a live run without the TUI prints as a
	// finding comes. nil: the format writes findings only in the report
	// (JSON is one document).
	Finding func(w io.Writer, f *audit.Finding) error
	// Report writes the report once the run has ended.
	Report func(rep *audit.Report, d Dest) error
}

// Dest is where a report goes: the output, and the diagnostics stream
// (standard error), each with whether it takes colour.
type Dest struct {
	Out       io.Writer
	OutColor  bool
	Diag      io.Writer
	DiagColor bool
}

// Reports are the report formats; text first, the default.
var Reports = Registry[ReportFormat]{
	formats: []*ReportFormat{
		{
			Name:    "text",
			Finding: writeFindingLine,
			Report:  func(rep *audit.Report, d Dest) error { return rep.WriteText(d.Out, d.OutColor) },
		},
		{
			Name:   "json",
			Report: func(rep *audit.Report, d Dest) error { return rep.WriteJSON(d.Out) },
		},
		{
			Name:    "ndjson",
			Streams: true,
			Finding: audit.WriteFindingJSON,
			Report:  func(rep *audit.Report, d Dest) error { return rep.WriteSummary(d.Diag, d.DiagColor) },
		},
	},
	name: func(f *ReportFormat) string { return f.Name },
}

// NotStreaming admits the report formats a command can write only at the
// end of its run.
func NotStreaming(f *ReportFormat) bool { return !f.Streams }

// writeFindingLine is the text format's line per finding in a live run.
func writeFindingLine(w io.Writer, f *audit.Finding) error {
	_, err := fmt.Fprintf(w, "%s %-5s %s frame %d %v -> %v: %s\n", f.Time.UTC().Format(audit.TimeFormat),
		f.Severity, f.Rule, f.Frame, f.Conn.Client, f.Conn.Broker, f.Message)
	return err
}
