package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
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

	"github.com/kwatch/kwatch/audit"
	"github.com/kwatch/kwatch/capture"
	"github.com/kwatch/kwatch/decode"
	"github.com/kwatch/kwatch/flow"
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
	// Live: the agent captures live. Its end is a stop: the connections
	// still open end at its last packet, as live's own report ends them,
	// and their steps go as any other (a replay's wait for every agent's
	// end: Record.Final).
	Live bool
	// MaxBuffered bounds the records held while Kafka is slow or away.
	MaxBuffered int
	// Audit steers the agent's per-connection audit (Profile,
	// MemberIDRequiredFrom, ClosedGrace, as kwatch read's); the publisher
	// sets its Observer and NameFrame, and findings go to the aggregator.
	Audit  audit.Options
	Logger zerolog.Logger
}

// markEvery is the capture time between an agent's watermarks.
const markEvery = int64(time.Second)

// Publisher is an agent: a decode.Sink that runs the per-connection part
// of the audit over the events it is given and publishes its steps, and a
// capture.Source wrapper (Tap) that tells it which packet the events
// belong to.
type Publisher struct {
	o      PublisherOptions
	client *kgo.Client
	// produce sends a record (through client; tests keep them).
	produce func(*kgo.Record)
	topic   string
	parts   int32 // the topic's partitions
	aud     *audit.ConnAuditor
	seq     uint64
	at      int64 // capture time of the packet being analyzed
	markAt  int64 // At of the last watermark
	// markEvery is the capture time between watermarks (markEvery).
	markEvery int64

	// rec gathers the steps of one event on one connection (conn), to go
	// as one record keyed key; final: the steps of the agent's Finish.
	rec   Record
	conn  flow.ConnID
	key   []byte
	final bool

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
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(5*time.Millisecond),
	)
	if err != nil {
		return nil, fmt.Errorf("fleet: %w", err)
	}
	if p.parts, err = ensureTopic(ctx, client, t.Topic, o.Partitions, o.Retention); err != nil {
		client.Close()
		return nil, err
	}
	p.client = client
	p.start(func(rec *kgo.Record) {
		if o.Lossy {
			client.TryProduce(context.Background(), rec, p.done)
			return
		}
		client.Produce(context.Background(), rec, p.done)
	})
	return p, nil
}

// start makes p's auditor, the per-connection part, whose steps p
// publishes through produce.
func (p *Publisher) start(produce func(*kgo.Record)) {
	p.produce, p.markEvery = produce, markEvery
	ao := p.o.Audit
	ao.NameFrame = p.split
	p.aud = audit.NewConnAuditor(ao, p)
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

// ensureTopic creates topic unless it exists, and returns its number of
// partitions.
func ensureTopic(ctx context.Context, client *kgo.Client, topic string, partitions int32, retention time.Duration) (int32, error) {
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
		return 0, fmt.Errorf("fleet: creating topic %s: %w", topic, err)
	}
	return partitionCount(ctx, adm, topic)
}

// partitionCount is how many partitions topic has.
func partitionCount(ctx context.Context, adm *kadm.Client, topic string) (int32, error) {
	topics, err := adm.ListTopics(ctx, topic)
	if err == nil {
		err = topics[topic].Err
	}
	if err != nil || len(topics[topic].Partitions) == 0 {
		return 0, fmt.Errorf("fleet: topic %s: no partitions (%v)", topic, err)
	}
	return int32(len(topics[topic].Partitions)), nil
}

// Event runs the per-connection audit over e (decode.Sink) and publishes
// the steps it made.
func (p *Publisher) Event(e *decode.Event) {
	p.aud.Event(e)
	p.flush()
}

// Observe takes a step of the agent's per-connection audit
// (audit.Observer): the steps of one event, or of ending one connection,
// make one record.
func (p *Publisher) Observe(o *audit.Observation) { p.step(o, nil) }

// Judge takes a verdict of the agent's per-connection audit
// (audit.Observer).
func (p *Publisher) Judge(o *audit.Observation, v *audit.Verdict) { p.step(o, v) }

// step adds a step to the record of its event.
func (p *Publisher) step(o *audit.Observation, v *audit.Verdict) {
	o.Complete()
	if len(p.rec.Steps) > 0 && o.Conn != p.conn {
		p.flush()
	}
	if len(p.rec.Steps) == 0 {
		f := o.Frame
		if f == 0 {
			f = o.Conn.StartFrame
		}
		p.rec.Capture, _ = p.split(f)
		p.conn, p.key = o.Conn, clientKey(o)
	}
	// Copies: o is the auditor's, refilled for its next step.
	oc, vc := *o, audit.Verdict{}
	if v != nil {
		vc = *v
	}
	frames(&oc, &vc, func(f uint64) uint64 { _, n := p.split(f); return n })
	var s Step
	s.Obs, _ = oc.AppendBinary(nil)
	if v != nil {
		s.Verdict, _ = vc.AppendBinary(nil)
	}
	p.rec.Steps = append(p.rec.Steps, s)
}

// clientKey is a record's key: its client's identity (SPEC.md 7), the
// header instance ID, else the client host and first client ID, so that
// every observation of one client meets in one partition. A connection
// whose first request carried no instance ID stays keyed by host and
// client ID.
func clientKey(o *audit.Observation) []byte {
	switch {
	case o.InstanceFixed:
		return []byte("instance " + audit.JavaString(o.Instance))
	case !o.NoInstance && !o.HeaderID.IsZero():
		return []byte("instance " + audit.JavaString(o.HeaderID))
	}
	return []byte("client " + o.Conn.Client.Addr().String() + " " + o.ClientID)
}

// flush publishes the steps gathered, if any.
func (p *Publisher) flush() {
	if len(p.rec.Steps) == 0 {
		return
	}
	p.rec.Kind, p.rec.Final = KindObs, p.final
	h := fnv.New32a()
	h.Write(p.key)
	p.publish(&p.rec, p.key, int32(h.Sum32()%uint32(p.parts)))
	p.rec = Record{Steps: p.rec.Steps[:0]}
}

// broadcast publishes r (a watermark or the end) to every partition: the
// aggregator of each must know how far the agent got.
func (p *Publisher) broadcast(r Record) {
	for i := range p.parts {
		p.publish(&r, []byte(p.o.Agent), i)
	}
}

// split names the capture of a pipeline frame and its number there.
func (p *Publisher) split(f uint64) (string, uint64) {
	i, n := capture.SplitFrame(f)
	if i < len(p.o.Captures) && len(p.o.Captures) > 1 {
		return p.o.Captures[i], n
	}
	return p.o.Agent, n
}

func (p *Publisher) publish(r *Record, key []byte, partition int32) {
	p.seq++
	r.V, r.Agent, r.Seq, r.At, r.Parts = RecordVersion, p.o.Agent, p.seq, p.at, p.parts
	b, err := json.Marshal(r)
	if err != nil {
		p.fail(err)
		return
	}
	p.produce(&kgo.Record{Key: key, Value: b, Partition: partition})
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

// Close ends the connections still open (their steps are Final),
// publishes the end record with the agent's totals to every partition,
// waits until every record is acknowledged (or ctx ends), and disconnects.
func (p *Publisher) Close(ctx context.Context, t Totals) error {
	p.end(t)
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

// end ends the connections still open and publishes the end record.
func (p *Publisher) end(t Totals) {
	var at time.Time // a replay's: the aggregator sets it (Record.Final)
	if p.o.Live {
		at = time.Unix(0, t.Last).UTC()
	} else {
		p.final = true
	}
	p.aud.Finish(at)
	p.flush()
	t.Audit = p.aud.Totals()
	p.broadcast(Record{Kind: KindEnd, Totals: &t})
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
		if t.p.at-t.p.markAt >= t.p.markEvery {
			t.p.markAt = t.p.at
			t.p.broadcast(Record{Kind: KindMark, Totals: &Totals{Audit: t.p.aud.Totals()}})
		}
		return
	}
	// The end of the input: what the pipeline's final flush makes comes
	// after every packet of every capture, as it does when kwatch read
	// merges the captures. A live agent stopped: what it makes now
	// belongs at its last packet, among the other agents' records, which
	// do not end.
	if !t.p.o.Live {
		t.p.at = math.MaxInt64
	}
}

func (t *tap) Next() (capture.Packet, error) {
	pk, err := t.Source.Next()
	t.note(&pk, err)
	return pk, err
}
