package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kwatch/kwatch/capture"
	"github.com/kwatch/kwatch/decode"
)

// Target is where records go: seed brokers and a topic, as the command
// line spells it (HOST:PORT[,HOST:PORT...]/TOPIC).
type Target struct {
	Brokers []string
	Topic   string
}

// ParseTarget reads HOST:PORT[,HOST:PORT...]/TOPIC.
func ParseTarget(s string) (Target, error) {
	i := strings.LastIndexByte(s, '/')
	if i <= 0 || i == len(s)-1 {
		return Target{}, fmt.Errorf("%q: want HOST:PORT[,HOST:PORT...]/TOPIC", s)
	}
	t := Target{Topic: s[i+1:]}
	for _, b := range strings.Split(s[:i], ",") {
		if b = strings.TrimSpace(b); b == "" || !strings.Contains(b, ":") {
			return Target{}, fmt.Errorf("%q: broker %q is not HOST:PORT", s, b)
		}
		t.Brokers = append(t.Brokers, b)
	}
	return t, nil
}

// PublisherOptions tune a Publisher.
type PublisherOptions struct {
	// Agent names the capture point (SPEC.md 7: the finding's "capture"
	// when the agent reads one capture; see Captures).
	Agent string
	// Captures names the capture files by index (capture.PackFrame), when
	// the agent reads several; nil: every frame is the agent's.
	Captures []string
	// Partitions and Retention are used when the topic must be created.
	Partitions int32
	Retention  time.Duration
	// Lossy makes a full buffer drop records (counted) rather than wait:
	// live capture must not stall while Kafka is unreachable. Offline
	// replays wait.
	Lossy bool
	// MaxBuffered bounds the records held while Kafka is slow or away.
	MaxBuffered int
	Logger      zerolog.Logger
}

// Publisher is an agent: a decode.Sink that publishes every event it is
// given, and a capture.Source wrapper (Tap) that tells it which packet the
// events belong to.
type Publisher struct {
	o      PublisherOptions
	client *kgo.Client
	topic  string
	seq    uint64
	at     int64 // capture time of the packet being analyzed
	buf    []byte

	dropped  atomic.Uint64
	errMu    sync.Mutex
	firstErr error

	// own holds the local addresses of the publisher's own connections to
	// Kafka: a live agent must not audit (nor publish) its own traffic.
	ownMu sync.Mutex
	own   map[netip.AddrPort]bool
}

// NewPublisher connects to t's brokers, creates the topic when it is
// missing, and returns a Publisher.
func NewPublisher(ctx context.Context, t Target, o PublisherOptions) (*Publisher, error) {
	if o.MaxBuffered <= 0 {
		o.MaxBuffered = 100_000
	}
	if o.Partitions <= 0 {
		o.Partitions = 1
	}
	p := &Publisher{o: o, topic: t.Topic, own: map[netip.AddrPort]bool{}}
	client, err := kgo.NewClient(
		kgo.Dialer(p.dial),
		kgo.SeedBrokers(t.Brokers...),
		kgo.DefaultProduceTopic(t.Topic),
		kgo.MaxBufferedRecords(o.MaxBuffered),
		kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)),
		kgo.ProducerLinger(5*time.Millisecond),
	)
	if err != nil {
		return nil, fmt.Errorf("fleet: %w", err)
	}
	if err := ensureTopic(ctx, client, t.Topic, o.Partitions, o.Retention); err != nil {
		client.Close()
		return nil, err
	}
	p.client = client
	return p, nil
}

// dial connects to a broker and remembers the connection's local address.
func (p *Publisher) dial(ctx context.Context, network, host string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, host)
	if err != nil {
		return nil, err
	}
	if ap, err := netip.ParseAddrPort(c.LocalAddr().String()); err == nil {
		p.ownMu.Lock()
		p.own[netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())] = true
		p.ownMu.Unlock()
	}
	return c, nil
}

// Own reports whether client, a connection's client address, is one of
// the publisher's own connections to Kafka.
func (p *Publisher) Own(client netip.AddrPort) bool {
	p.ownMu.Lock()
	defer p.ownMu.Unlock()
	return p.own[netip.AddrPortFrom(client.Addr().Unmap(), client.Port())]
}

// WithoutOwnTraffic returns next with the events of the publisher's own
// connections to Kafka left out (SPEC.md 7: an agent never audits its own
// publishing traffic).
func (p *Publisher) WithoutOwnTraffic(next decode.Sink) decode.Sink {
	return decode.SinkFunc(func(e *decode.Event) {
		if !p.Own(e.Conn.Client) {
			next.Event(e)
		}
	})
}

// ensureTopic creates topic unless it exists.
func ensureTopic(ctx context.Context, client *kgo.Client, topic string, partitions int32, retention time.Duration) error {
	adm := kadm.NewClient(client)
	var configs map[string]*string
	if retention > 0 {
		ms := fmt.Sprint(retention.Milliseconds())
		configs = map[string]*string{"retention.ms": &ms}
	}
	resp, err := adm.CreateTopic(ctx, partitions, -1, configs, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("fleet: creating topic %s: %w", topic, err)
	}
	return nil
}

// Event publishes e (decode.Sink).
func (p *Publisher) Event(e *decode.Event) {
	capture, _ := p.split(e.Frame)
	ev := fromDecode(e, func(f uint64) uint64 { _, n := p.split(f); return n })
	p.publish(&Record{Kind: KindEvent, Capture: capture, Event: ev})
}

// split names the capture of a pipeline frame and its number there.
func (p *Publisher) split(f uint64) (string, uint64) {
	i, n := capture.SplitFrame(f)
	if i < len(p.o.Captures) && len(p.o.Captures) > 1 {
		return p.o.Captures[i], n
	}
	return p.o.Agent, n
}

func (p *Publisher) publish(r *Record) {
	p.seq++
	r.V, r.Agent, r.Seq, r.At = RecordVersion, p.o.Agent, p.seq, p.at
	b, err := json.Marshal(r)
	if err != nil {
		p.fail(err)
		return
	}
	// The key is the agent: its records stay in one partition, in order.
	rec := &kgo.Record{Key: []byte(p.o.Agent), Value: b}
	if p.o.Lossy {
		p.client.TryProduce(context.Background(), rec, p.done)
		return
	}
	p.client.Produce(context.Background(), rec, p.done)
}

func (p *Publisher) done(_ *kgo.Record, err error) {
	if err == nil {
		return
	}
	if errors.Is(err, kgo.ErrMaxBuffered) {
		p.dropped.Add(1)
		return
	}
	p.fail(err)
}

func (p *Publisher) fail(err error) {
	p.errMu.Lock()
	defer p.errMu.Unlock()
	if p.firstErr == nil {
		p.firstErr = err
		p.o.Logger.Error().Err(err).Msg("fleet: publishing")
	}
}

// Dropped counts records dropped because the buffer was full (Lossy).
func (p *Publisher) Dropped() uint64 { return p.dropped.Load() }

// Close publishes the end record with the agent's totals, waits until
// every record is acknowledged (or ctx ends), and disconnects.
func (p *Publisher) Close(ctx context.Context, t Totals) error {
	p.publish(&Record{Kind: KindEnd, Totals: &t})
	err := p.client.Flush(ctx)
	p.client.Close()
	p.errMu.Lock()
	defer p.errMu.Unlock()
	if p.firstErr != nil {
		return fmt.Errorf("fleet: publishing: %w", p.firstErr)
	}
	if err != nil {
		return fmt.Errorf("fleet: flushing: %w", err)
	}
	return nil
}

// Tap returns src with every packet's capture time told to p before the
// pipeline analyzes it: the records it publishes then carry the time of
// the packet that made them.
func (p *Publisher) Tap(src capture.Source) capture.Source {
	return &tap{Source: src, p: p}
}

type tap struct {
	capture.Source
	p *Publisher
}

// NextInto reads into p, when the source can (see capture.IntoSource).
func (t *tap) NextInto(pk *capture.Packet) error {
	var err error
	if into, ok := t.Source.(capture.IntoSource); ok {
		err = into.NextInto(pk)
	} else {
		*pk, err = t.Source.Next()
	}
	t.note(pk, err)
	return err
}

// note tells the publisher the time of the packet about to be analyzed.
func (t *tap) note(pk *capture.Packet, err error) {
	if err == nil {
		t.p.at = pk.Time.UnixNano()
		return
	}
	// The end of the input: what the pipeline's final flush makes comes
	// after every packet of every capture, as it does when kwatch read
	// merges the captures.
	t.p.at = math.MaxInt64
}

func (t *tap) Next() (capture.Packet, error) {
	pk, err := t.Source.Next()
	t.note(&pk, err)
	return pk, err
}
