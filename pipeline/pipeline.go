// Package pipeline wires the packet stages together: a capture.Source is
// decoded to TCP segments, reassembled per connection and fed to one Kafka
// decoder per connection, whose events go to a decode.Sink (the auditor, or
// kwatch dump's printer). A TLS connection whose secrets Options.Keys holds
// is decrypted by tlsdec on the way (tls.go).
//
// Concurrency: the sink is always called on Run's calling goroutine, in
// capture order. With Options.Workers > 1, Run starts a reader goroutine and
// one goroutine per worker (all ended before it returns); the events, their
// order and the Stats are the same as with one worker. Buffers: events handed to the sink are valid
// only during the call (see decode.Event).
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/rs/zerolog"

	"github.com/kwatch/kwatch/capture"
	"github.com/kwatch/kwatch/decode"
	"github.com/kwatch/kwatch/flow"
	"github.com/kwatch/kwatch/reassembly"
	"github.com/kwatch/kwatch/tlsdec"
)

// Options tune a pipeline run. The zero value analyzes every TCP port.
type Options struct {
	// Ports restricts analysis to connections with one of these ports on
	// the broker side; connections on them are assumed to be Kafka. Empty:
	// every TCP connection is a candidate, recognised by content.
	Ports []uint16
	// MaxFrame is the largest Kafka frame accepted (default 100 MiB).
	MaxFrame int32
	// IdleTimeout ends connections idle for this long in packet time.
	IdleTimeout time.Duration
	// MaxBufferedPagesPerConn caps out-of-order data held per connection.
	MaxBufferedPagesPerConn int
	// MaxConnections caps the connection table (reassembly.Options).
	MaxConnections int
	// HeaderV3 names the API versions whose requests use header v3 (the
	// accepted-2026 profile; see decode.Options).
	HeaderV3 func(key, version int16) bool
	// Workers shards connections over this many goroutines by flow hash
	// (0 or 1: everything on the calling goroutine). The events the sink
	// sees, and their order, are the same for every value: see shard.go.
	Workers int
	// Keys holds TLS secrets: connections whose client speaks TLS first are
	// decrypted and decoded as plaintext once it is Active (see tls.go).
	// nil: TLS connections are only reported (tls-connection).
	Keys   *tlsdec.KeyLog
	Logger zerolog.Logger

	batchSteps int // segments per sharded batch; 0: the default (tests)
	heldBytes  int // reassembly.Options.MaxHeldBytes; 0: the default (tests)
}

// Stats counts what a run read.
type Stats struct {
	Packets uint64
	Bytes   uint64
	// NotTCP counts packets that were not decodable TCP segments (other
	// protocols, unsupported link types, IP fragments).
	NotTCP      uint64
	Truncated   uint64
	Connections uint64
	// Decoders counts what the connections' decoders concluded, when they
	// ended: connections given up as not Kafka, requests forgotten
	// unanswered past the in-flight cap.
	Decoders DecoderStats
	// FirstTime and LastTime bound the packets' capture times.
	FirstTime, LastTime time.Time
	// LastFrame is the number of the last packet read.
	LastFrame  uint64
	Reassembly reassembly.Stats
	Layers     capture.DecodeStats
	TLS        tlsdec.Stats
	// Tunnels counts the tunnel headers unwrapped, by kind; Fragments,
	// what IP fragment reassembly did.
	Tunnels   capture.TunnelStats
	Fragments capture.FragStats
}

// DecoderStats counts decoder conclusions over ended connections.
type DecoderStats struct {
	// NotKafka: TCP connections recognised as another protocol and left
	// alone (decode.StateNotKafka).
	NotKafka uint64
	// InFlightDropped: requests forgotten unanswered because
	// decode.Options.MaxInFlight requests already awaited an answer.
	InFlightDropped uint64
}

func (d *DecoderStats) add(o DecoderStats) {
	d.NotKafka += o.NotKafka
	d.InFlightDropped += o.InFlightDropped
}

// checkEvery is how many packets pass between context checks: often enough
// to stop promptly, rare enough to cost nothing.
const checkEvery = 4096

// Run reads src to its end (or until ctx is done) and feeds sink. The error
// is the source's error, if it ended with one; everything read before it
// has been analyzed and flushed to sink.
func Run(ctx context.Context, src capture.Source, opts Options, sink decode.Sink) (Stats, error) {
	if opts.Workers > 1 {
		st, err := runSharded(ctx, src, opts, sink)
		warnCaps(opts.Logger, &st)
		return st, err
	}
	e := New(opts, sink)
	runErr := e.readAll(ctx, src)
	e.Close()
	st := e.Stats()
	warnCaps(opts.Logger, &st)
	return st, runErr
}

// warnCaps logs the caps that bit and are not in the report.
func warnCaps(log zerolog.Logger, st *Stats) {
	if n := st.Reassembly.HeldCapped; n > 0 {
		log.Warn().Uint64("times", n).Msg("reassembly: the cap on data held aside (late SYNs, acknowledged bytes) bit: those connections were joined mid-stream, or their segments went on before the bytes they acknowledge")
	}
}

// readAll feeds e the packets of src up to its end or ctx's, and returns
// the source's error other than io.EOF. A memory-mapped capture shortened
// while it is read ends it with a *capture.ShrunkError instead of killing
// the process.
func (e *Engine) readAll(ctx context.Context, src capture.Source) (runErr error) {
	defer capture.GuardFaults()()
	defer capture.CatchFault(&runErr)
	into, _ := src.(capture.IntoSource)
	var (
		p   capture.Packet
		err error
	)
	for {
		if e.stats.Packets%checkEvery == 0 && ctx.Err() != nil {
			return nil
		}
		if into != nil {
			err = into.NextInto(&p)
		} else {
			p, err = src.Next()
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		e.Packet(&p)
	}
}

// Engine is the push form of Run, for callers that own the packet loop
// (live capture): Packet for each packet, Close once at the end.
type Engine struct {
	opts  Options
	sink  decode.Sink
	layer *capture.LayerDecoder
	reasm *reassembly.Reassembler
	seg   capture.Segment
	stats Stats
	// streams is what the Engine's streams share.
	streams streams
}

// New makes an Engine that feeds sink.
func New(opts Options, sink decode.Sink) *Engine {
	e := &Engine{
		opts:  opts,
		sink:  sink,
		layer: capture.NewLayerDecoder(),
	}
	e.streams = streams{dec: decode.NewDecoder(decodeOptions(opts)), sink: sink, keys: opts.Keys, tls: &e.stats.TLS, into: &e.stats.Decoders}
	e.reasm = reassembly.New(reassemblyOptions(opts), reassembly.OpenerFunc(e.open))
	return e
}

func decodeOptions(opts Options) decode.Options {
	return decode.Options{MaxFrame: opts.MaxFrame, AssumeKafka: len(opts.Ports) > 0, HeaderV3: opts.HeaderV3}
}

func reassemblyOptions(opts Options) reassembly.Options {
	ro := reassembly.Options{
		BrokerPorts:             opts.Ports,
		IdleTimeout:             opts.IdleTimeout,
		MaxBufferedPagesPerConn: opts.MaxBufferedPagesPerConn,
		MaxConnections:          opts.MaxConnections,
		MaxHeldBytes:            opts.heldBytes,
		Logger:                  opts.Logger,
	}
	// The caps on out-of-order and held bytes are shared out by the
	// Reassemblers to the parts of their connection tables, so they are
	// over all workers and bite the same way for any number of them.
	return ro
}

// count adds p to the packet counters.
// Count adds p to the packet counters, as the pipeline does for each
// packet it reads: for a caller that shows counts while the pipeline runs.
func (s *Stats) Count(p *capture.Packet) { s.count(p) }

func (s *Stats) count(p *capture.Packet) {
	s.Packets++
	s.Bytes += uint64(p.Length)
	s.LastFrame = p.Frame
	if s.FirstTime.IsZero() {
		s.FirstTime = p.Time
	}
	if p.Time.After(s.LastTime) {
		s.LastTime = p.Time
	}
	if p.Truncated() {
		s.Truncated++
	}
}

// Packet analyzes one packet. p.Data may be reused after it returns.
func (e *Engine) Packet(p *capture.Packet) {
	e.stats.count(p)
	if !e.layer.Decode(p, &e.seg) {
		e.stats.NotTCP++
		return
	}
	e.reasm.Add(&e.seg)
}

// Close ends every open connection, flushing what the reassembler holds.
func (e *Engine) Close() {
	m := flow.Meta{Frame: e.stats.LastFrame, Time: e.stats.LastTime}
	e.reasm.Drain(m) // as the sharded run does, in a step of its own
	e.reasm.Close(m)
}

// Stats returns the counters so far.
func (e *Engine) Stats() Stats {
	s := e.stats
	s.Reassembly = e.reasm.Stats()
	s.Layers = e.layer.Stats()
	s.Tunnels = e.layer.Unwrapped()
	s.Fragments = e.layer.Fragments()
	return s
}

func (e *Engine) open(f reassembly.Flow) reassembly.Stream {
	e.stats.Connections++
	return e.streams.open(f)
}

// streams is what the streams of one goroutine (an Engine's, a worker's)
// share, so that a stream, kept for every open connection, holds one
// pointer to it: the decoder their decode.Conns share, the sink, the TLS
// secrets, and where their conclusions are counted.
type streams struct {
	dec  *decode.Decoder
	sink decode.Sink
	keys *tlsdec.KeyLog
	tls  *tlsdec.Stats
	into *DecoderStats // where the decoders' conclusions are counted at End
}

// stream adapts a decode.Conn to reassembly.Stream.
// Its decoder is made when the connection first carries data (or a loss):
// a connection that never does (a SYN scan, a refused connection) costs no
// decoder state.
type stream struct {
	conn      *decode.Conn // nil until then
	id        flow.ConnID
	fromStart bool
	env       *streams
	tls       *tlsStream // nil: no secrets were known when it opened
}

func (s *stream) decoder() *decode.Conn {
	if s.conn == nil {
		s.newDecoder() // apart, so that decoder is inlined
	}
	return s.conn
}

func (s *stream) newDecoder() {
	// The decoder's events pass through the tlsStream, when there is one,
	// which marks those of a decrypted connection.
	var sink decode.Sink = s.tls
	if s.tls == nil {
		sink = s.env.sink
	}
	s.conn = s.env.dec.NewConn(&s.id, s.fromStart, sink) // the Conn's from now on
}

func (s *stream) Data(side flow.Side, p []byte, m flow.Meta) {
	if s.tls != nil && s.tls.data(side, p, m) {
		return
	}
	s.decoder().Feed(side, p, m)
}

func (s *stream) Gap(side flow.Side, lost int, m flow.Meta) {
	if s.tls != nil && s.tls.gap(side, lost, m) {
		return
	}
	s.decoder().Gap(side, lost, m)
}

func (s *stream) Truncated(side flow.Side, m flow.Meta) {
	s.decoder().Truncated(side, m)
}

func (s *stream) Cut(side flow.Side, n int, m flow.Meta) {
	// Cut ciphertext cannot be authenticated: to the TLS layer it is lost.
	if s.tls != nil && s.tls.gap(side, n, m) {
		return
	}
	s.decoder().Skip(side, n, m)
}

func (s *stream) End(m flow.Meta) {
	if s.tls != nil {
		s.tls.end(m)
	}
	if s.conn == nil {
		return
	}
	s.conn.Close(m)
	if s.conn.State() == decode.StateNotKafka {
		s.env.into.NotKafka++
	}
	s.env.into.InFlightDropped += s.conn.InFlightDropped()
	s.conn = nil // its state is freed now, not when the run ends
}

// String summarizes s for logs.
func (s Stats) String() string {
	return fmt.Sprintf("%d packets, %d bytes, %d connections", s.Packets, s.Bytes, s.Connections)
}
