package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"

	"github.com/kwatch/kwatch/capture"
	"github.com/kwatch/kwatch/decode"
	"github.com/kwatch/kwatch/pipeline"
	"github.com/kwatch/kwatch/reassembly"
	"github.com/kwatch/kwatch/tlsdec"
	"github.com/rs/zerolog"
)

var errHelp = errors.New("help requested")

// portList is a repeatable --port flag (also accepts comma-separated lists).
type portList []uint16

func (p *portList) String() string {
	parts := make([]string, len(*p))
	for i, v := range *p {
		parts[i] = strconv.Itoa(int(v))
	}
	return strings.Join(parts, ",")
}

func (p *portList) Set(s string) error {
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.ParseUint(strings.TrimSpace(f), 10, 16)
		if err != nil || n == 0 {
			return fmt.Errorf("bad port %q", f)
		}
		*p = append(*p, uint16(n))
	}
	return nil
}

// common holds the flags shared by read, dump, live and tui.
type common struct {
	format   string
	ports    portList
	maxFrame int64
	workers  int
	maxConns int
	tlsKeys  string
}

// register registers the flags of common but --format, which each command
// registers with the formats it writes (command.reportFormat).
func (c *common) register(fs *flag.FlagSet) {
	fs.Var(&c.ports, "port", "broker `port` to analyze (repeatable); default: every TCP port, Kafka recognised by content")
	fs.Int64Var(&c.maxFrame, "max-frame", decode.DefaultMaxFrame, "largest Kafka frame in `bytes`; larger sizes are framing errors")
	fs.StringVar(&c.tlsKeys, "tls-keylog", "", "decrypt TLS connections with the secrets in this NSS key log `file` (SSLKEYLOGFILE, Go's KeyLogWriter); in live, lines appended later are read too")
	fs.IntVar(&c.maxConns, "max-connections", reassembly.DefaultMaxConnections, "keep at most `N` connections; past it the least recently active are evicted, those without data first (counted: evicted_connections)")
	fs.IntVar(&c.workers, "workers", defaultWorkers(runtime.GOMAXPROCS(0)), "analyze connections on `N` goroutines (sharded by flow; the report is the same for any N)")
}

func (c *common) pipelineOptions(e *env) (pipeline.Options, error) {
	if c.maxFrame < 8 || c.maxFrame > 1<<31-1 {
		return pipeline.Options{}, usageError{fmt.Sprintf("--max-frame %d out of range (8..2147483647)", c.maxFrame)}
	}
	if c.workers < 1 || c.workers > 256 {
		return pipeline.Options{}, usageError{fmt.Sprintf("--workers %d out of range (1..256)", c.workers)}
	}
	if c.maxConns < reassembly.Partitions {
		return pipeline.Options{}, usageError{fmt.Sprintf("--max-connections %d: at least %d", c.maxConns, reassembly.Partitions)}
	}
	// Always a KeyLog: a pcapng's Decryption Secrets Blocks fill it when
	// there is no --tls-keylog; until it holds a secret, TLS connections
	// are only reported, as without one.
	keys := tlsdec.NewKeyLog()
	if c.tlsKeys != "" {
		var err error
		if keys, err = tlsdec.OpenKeyLog(c.tlsKeys); err != nil {
			return pipeline.Options{}, fmt.Errorf("--tls-keylog: %w", err)
		}
	}
	return pipeline.Options{
		Ports:          c.ports,
		MaxFrame:       int32(c.maxFrame),
		Workers:        c.workers,
		MaxConnections: c.maxConns,
		Keys:           keys,
		Logger:         e.log,
	}, nil
}

// parse parses flags that may come before, between or after positional
// arguments (kwatch read a.pcap --format json), which the flag package
// alone does not allow.
func parse(fs *flag.FlagSet, args []string, stderr io.Writer) ([]string, error) {
	// The flag package prints the whole usage after a bad flag; a wrong
	// command line gets the one-line reason alone (SPEC.md section 5), and
	// the usage only when asked for.
	fs.SetOutput(io.Discard)
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.SetOutput(stderr)
				fs.Usage()
				return nil, errHelp
			}
			return nil, usageError{err.Error()}
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, nil
		}
		if args[0] == "--" {
			return append(positional, args[1:]...), nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}

// openInput opens the capture files of read, dump and tui; "-" alone reads
// standard input (tcpdump -w - | kwatch read -). The secrets of pcapng
// Decryption Secrets Blocks go to popts.Keys.
func (e *env) openInput(ctx context.Context, files []string, in inputFlags, popts *pipeline.Options) (capture.Source, error) {
	return e.openInputLogging(ctx, files, in, popts, e.log)
}

// openInputLogging is openInput with the capture's warnings going to log.
// With one worker, plain files are memory-mapped (capture.Options.Mmap:
// the bytes the analysis skips are never copied); with several, they are
// read by goroutines of their own and handed to the workers uncopied.
func (e *env) openInputLogging(ctx context.Context, files []string, in inputFlags, popts *pipeline.Options, log zerolog.Logger) (capture.Source, error) {
	opts := capture.Options{Logger: log, Concat: in.concat, Mmap: popts.Workers <= 1}
	if popts.Keys != nil {
		opts.Secrets = popts.Keys.AddSecretsBlock
	}
	if len(files) == 1 && files[0] == "-" {
		return capture.NewReader(interruptible(ctx, e.stdin), "stdin", opts)
	}
	return capture.OpenFiles(files, opts)
}

// defaultWorkers is --workers' default for procs usable CPUs: one fewer,
// because reading the capture already runs on a goroutine of its own (the
// readahead, a copy per byte out of the page cache or a gunzip) and the
// sharded run adds a reader and merger besides. On 2 CPUs one worker
// measured faster than two on both of the performance issue's captures
// (kwatch read, 84 MB of small packets: 0.14 s against 0.19 s; 1.34 GB of
// 64 KiB segments: 0.23 s against 0.29 s) and uses half the memory.
func defaultWorkers(procs int) int {
	return max(1, procs-1)
}
