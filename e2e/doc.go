// Package e2e is kwatch's end-to-end test: "real clients, real broker".
//
// It starts franz-go's kfake cluster on loopback, puts a recording TCP proxy
// in front of every broker, drives real kgo producers and consumers (a
// classic group member, a KIP-848 member, telemetry on and off, and a raw
// probe of kfake's ConsumerGroupHeartbeat answers) through it, writes what
// crossed the proxies to a pcap file, and then checks what kwatch decodes
// and reports from that file against what kgo's own hooks saw and what a
// reader of kgo's and kfake's source expects (see FINDINGS.md).
//
// The CLI tests (cli_test.go, live_test.go, privilege_test.go,
// tui_tmux_test.go) build the real kwatch binary once and run it as a user
// would: kwatch live capturing kgo <-> kfake traffic on lo as root (checked
// against kwatch read and dump of its own -w file and against kgo's hooks),
// the privilege drop read from /proc, signals and exit statuses, and the
// TUI driven through tmux. Tests that need root or tmux skip without them.
//
// Everything lives in _test.go files: this package exports nothing. It is
// the one place below cmd/ allowed to read the wall clock, because its
// packets are real traffic recorded as it happens.
//
// Concurrency: the proxy runs two goroutines per proxied connection; they
// share one mutex-guarded pcap writer, so packets are written in the order
// their bytes were read from the sockets, and a request is always recorded
// before the response it causes.
package e2e
