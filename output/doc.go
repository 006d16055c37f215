// Package output is the one registry of what kwatch writes: report formats
// (an audit.Report and its findings, written by read, live, tui and
// aggregate) and event formats (decoded events, written by dump). A command
// asks the registry for the format its --format names, among those it can
// write; the registry also gives the names for the flag's help and for the
// refusal of a format the command cannot write. A new format is one entry
// in Reports or Events, and its writer beside it.
//
// The report's own writers (text, JSON, the finding's JSON line) stay
// beside the report in audit, which owns its fields; the registry names
// them and adds what a command needs to know of each (whether the findings
// stream, what a live run prints per finding). The event renderers live
// here: they read decode.Event and use audit's escapers (PlainText for
// terminals, AppendJSONString for JSON), so dump and read escape the same
// bytes the same way.
//
// Concurrency: formats are immutable values. An EventWriter is used by one
// goroutine (the pipeline's sink goroutine); it copies what it writes, so
// the events it is handed need live only during the call.
package output
