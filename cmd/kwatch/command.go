package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/kwatch/kwatch/output"
)

// flagGroup is a set of flags that several commands share (common,
// auditFlags, inputFlags, ...).
type flagGroup interface{ register(fs *flag.FlagSet) }

// command is the setup every command shares: its flag set and usage line,
// its flag groups, and --format, checked against the formats the command
// can write (output's registry).
type command struct {
	name    string
	fs      *flag.FlagSet
	format  *string
	formats []string
}

// newCommand makes the flag set of kwatch NAME with the given groups of
// flags; usage is the usage line after "kwatch NAME ", where {formats}
// stands for the formats the command writes.
func newCommand(name, usage string, groups ...flagGroup) *command {
	c := &command{name: name, fs: flag.NewFlagSet(name, flag.ContinueOnError)}
	for _, g := range groups {
		g.register(c.fs)
	}
	c.fs.Usage = func() {
		fmt.Fprintf(c.fs.Output(), "usage: kwatch %s %s\n", name, strings.ReplaceAll(usage, "{formats}", strings.Join(c.formats, "|")))
		c.fs.PrintDefaults()
	}
	return c
}

// reportFormat registers --format for the report formats accept admits
// (nil: all); note, if not empty, follows their list in the help.
func (c *command) reportFormat(dst *string, accept func(*output.ReportFormat) bool, note string) {
	c.withFormat(dst, output.Reports.Names(accept), note)
}

// eventFormat registers --format for the event formats (dump).
func (c *command) eventFormat(dst *string) {
	c.withFormat(dst, output.Events.Names(nil), "")
}

func (c *command) withFormat(dst *string, formats []string, note string) {
	c.format, c.formats = dst, formats
	help := "output format: " + orList(formats)
	if note != "" {
		help += " " + note
	}
	c.fs.StringVar(dst, "format", formats[0], help)
}

// orList is "a, b or c".
func orList(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// parse parses the command line (flags may stand before, between or after
// the arguments) and checks --format; it returns the arguments.
func (c *command) parse(args []string, stderr io.Writer) ([]string, error) {
	rest, err := parse(c.fs, args, stderr)
	if err != nil {
		return nil, err
	}
	if c.format != nil && !slices.Contains(c.formats, *c.format) {
		return nil, usageError{fmt.Sprintf("--format %q: want one of %s", *c.format, strings.Join(c.formats, ", "))}
	}
	return rest, nil
}

// parseFiles is parse for a command that reads capture files: at least one
// must be given.
func (c *command) parseFiles(args []string, stderr io.Writer) ([]string, error) {
	files, err := c.parse(args, stderr)
	if err == nil && len(files) == 0 {
		err = usageError{c.name + ": no capture file given"}
	}
	return files, err
}

// parseNoArgs is parse for a command that takes no argument; hint, if not
// empty, says where the argument belongs.
func (c *command) parseNoArgs(args []string, stderr io.Writer, hint string) error {
	rest, err := c.parse(args, stderr)
	if err == nil && len(rest) > 0 {
		err = usageError{fmt.Sprintf("%s: unexpected argument %q%s", c.name, rest[0], hint)}
	}
	return err
}

// Flags that a command, as called, cannot honour: refused rather than
// ignored, since ignoring them would mislead (issue 11).
var (
	// liveOnly: the flags of liveFlags that only a capture can honour.
	liveOnly = []string{"bpf", "w", "force", "snaplen", "ring-size"}
	// agentOnly: the topic and name of an agent, for --publish.
	agentOnly = []string{"agent", "partitions", "retention"}
	// auditOnly: what steers a local auditor and its report, which an
	// agent (--publish) does not run: kwatch aggregate takes them. (An
	// agent judges what one connection shows, --member-id-required-from's
	// rules among them, and so takes --profile and that flag.)
	auditOnly = []string{"format", "fail-on", "rule", "min-severity", "client", "baseline", "show-suppressed"}
	// oneWorker: an agent's records leave in the order one pipeline makes
	// them, so --publish runs one worker whatever --workers says.
	oneWorker = []string{"workers"}
	// notForBaseline: what kwatch baseline cannot honour: it writes the
	// cases, one JSON object a line, with no verdict, and audits locally.
	notForBaseline = []string{"format", "fail-on", "show-suppressed", "publish", "agent", "partitions", "retention"}
)

// whyOneWorker is why an agent refuses --workers.
const whyOneWorker = "not with --publish (an agent runs one worker, so that its records leave in order)"

// refuse fails when the command line set any of names, saying why they
// cannot be honoured.
func (c *command) refuse(names []string, why string) error {
	var set []string
	c.fs.Visit(func(f *flag.Flag) {
		if slices.Contains(names, f.Name) {
			set = append(set, strings.Repeat("-", min(len(f.Name), 2))+f.Name)
		}
	})
	if len(set) > 0 {
		return usageError{fmt.Sprintf("%s: %s: %s", c.name, strings.Join(set, ", "), why)}
	}
	return nil
}
