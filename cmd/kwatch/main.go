// Command kwatch audits Apache Kafka client identity (KIP-1313, KIP-1082,
// KIP-714) from captured traffic. See README.md and SPEC.md.
//
// This package only wires flags, outputs and exit codes; protocol logic
// lives in capture, reassembly, decode and audit.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/rs/zerolog"
)

// Exit statuses (SPEC.md section 5).
const (
	exitOK       = 0
	exitFindings = 1
	exitInput    = 2
)

// usageError is a wrong command line: exit 2 with a one-line reason.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// exitError carries an exit status without a message (findings reached --fail-on).
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

const usage = `kwatch audits Kafka client identity (KIP-1313, KIP-1082, KIP-714) from the wire.

Usage:
  kwatch read  [flags] FILE...        offline: pcap or pcapng (also .gz), prints a report
  kwatch dump  [flags] FILE...        one line per decoded request, response and coverage event
  kwatch live  -i IFACE [flags]       live capture; TUI when stdout is a terminal
  kwatch tui   FILE... | -i IFACE     the interactive terminal UI over a file or an interface
  kwatch aggregate --from HOST:PORT[,...]/TOPIC [--group ID] [--until-idle DUR]
                                      fleet mode: audit what agents (read/live --publish) publish
  kwatch baseline [flags] FILE...     today's cases, for --baseline (a CI job then fails only on new ones)
  kwatch rules [RULE]                 every rule (and coverage event) with its severity, KIP and explanation
  kwatch --version                    the version, VCS revision and Go version of this build

Run 'kwatch COMMAND -h' for the flags of a command.
`

func main() {
	if len(os.Args) > 1 && offlineGC(os.Args[1], os.Getenv("GOGC")) {
		if os.Getenv("GOMEMLIMIT") != "" {
			debug.SetGCPercent(offlineGCPercent) // the user's limit bounds it
		} else {
			percent, limit := gcFor(0, 0)
			debug.SetGCPercent(percent)
			debug.SetMemoryLimit(limit)
			followLiveHeap()
		}
	}
	os.Exit(runWith(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// offlineGCPercent is the GOGC of read and dump when the user set a
// memory limit (GOMEMLIMIT); without one they collect only at
// offlineMemoryLimit (gcFor). Their live heap is small and their steady
// state allocates nothing per packet, so collecting rarely costs little
// memory; but the first collection scans the binary's globals, 5 MB of
// them (gopacket's per-EtherType and per-PPP-type tables), faulting every
// page in: on a virtual machine that took as long as analyzing 20 MB of
// capture (kwatch read on the 84 MB packet-heavy bench capture: 2508 page
// faults and 22.7 MB peak RSS at GOGC=100, 1149 and 17.1 MB at 400, and
// 10% less time).
const offlineGCPercent = 400

// offlineMemoryLimit is the soft memory limit of read and dump: collecting
// rarely must not let garbage pile up where a run makes much of it (a
// capture of 200k findings written as NDJSON), so past this the collector
// runs as often as it must. What the run keeps (bounded by the auditor's
// caps) stays well below it. At 40 MiB that NDJSON run peaked at 55 MiB
// of RSS, at 32 MiB at 48 MiB, as fast.
const offlineMemoryLimit = 32 << 20

// offlineGC reports whether command runs with the offline collector
// settings: read, dump and baseline do, unless the user set GOGC.
func offlineGC(command, gogc string) bool {
	return gogc == "" && (command == "read" || command == "dump" || command == "baseline")
}

// env is what a command needs from the process: kept in one value so tests
// can run commands in-process.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	log            zerolog.Logger
}

// run runs kwatch with an empty standard input (tests).
func run(args []string, stdout, stderr io.Writer) int {
	return runWith(args, strings.NewReader(""), stdout, stderr)
}

func runWith(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	log := zerolog.New(zerolog.ConsoleWriter{Out: stderr, NoColor: !useColor(stderr)}).
		Level(zerolog.WarnLevel).With().Timestamp().Logger()
	if lvl, err := zerolog.ParseLevel(os.Getenv("KWATCH_LOG")); err == nil && os.Getenv("KWATCH_LOG") != "" {
		log = log.Level(lvl)
	}
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, log: log}
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitInput
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var err error
	switch cmd, rest := args[0], args[1:]; cmd {
	case "read":
		err = e.read(ctx, rest)
	case "dump":
		err = e.dump(ctx, rest)
	case "rules":
		err = e.rules(rest)
	case "live":
		err = e.live(ctx, rest)
	case "tui":
		err = e.tui(ctx, rest)
	case "aggregate":
		err = e.aggregate(ctx, rest)
	case "baseline":
		err = e.baseline(ctx, rest)
	case "--version", "version":
		fmt.Fprintln(stdout, version())
		return exitOK
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return exitOK
	default:
		err = usageError{fmt.Sprintf("unknown command %q (want read, dump, live, tui, aggregate, baseline or rules)", cmd)}
	}
	return e.status(err)
}

// status turns a command's error into an exit status, printing a one-line
// reason for input and usage errors.
func (e *env) status(err error) int {
	var ee exitError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ee):
		return ee.code
	case errors.Is(err, errHelp):
		return exitOK
	default:
		fmt.Fprintf(e.stderr, "kwatch: %v\n", err)
		return exitInput
	}
}
