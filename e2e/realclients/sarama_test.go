//go:build e2e

package realclients

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	saramaTopic = "sarama-topic"
	saramaGroup = "sarama-group"
)

// saramaConfig bounds every network step well inside clientTimeout.
func saramaConfig(version sarama.KafkaVersion, clientID string) *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.Version = version
	cfg.ClientID = clientID
	cfg.Net.DialTimeout = 5 * time.Second
	cfg.Net.ReadTimeout = 5 * time.Second
	cfg.Net.WriteTimeout = 5 * time.Second
	cfg.Metadata.Retry.Max = 2
	cfg.Metadata.Retry.Backoff = 50 * time.Millisecond
	return cfg
}

// saramaSoftwareVersion is the ClientSoftwareVersion sarama sends: its
// module's version from the binary's build info, "dev" when there is none
// (version.go). A go test binary carries no dependency versions, so here
// it is "dev"; a program built with go build sends "v1.61.1".
func saramaSoftwareVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/IBM/sarama" && d.Version != "" && d.Version != "(devel)" {
				return d.Version
			}
		}
	}
	return "dev"
}

func TestSarama(t *testing.T) {
	for _, tc := range []struct {
		name string
		// version is Config.Version: it caps every request version;
		// sarama lowers each to what the broker's ApiVersions allows.
		version sarama.KafkaVersion
		// apiVersions is the ApiVersions version sarama sends.
		apiVersions int16
		// tsharkNoResponse: keys at versions tshark 4.0 cannot decode.
		tsharkNoResponse []kmsg.Key
	}{{
		// The newest version whose requests tshark 4.0 decodes, but
		// for Fetch v12 (flexible), which it cannot.
		name: "2.7", version: sarama.V2_7_0_0, apiVersions: 3,
		tsharkNoResponse: []kmsg.Key{kmsg.Fetch},
	}, {
		// The newest version sarama knows: Produce v10, Fetch v12,
		// Metadata v11, ... tshark 4.0 knows none of them.
		name: "max", version: sarama.MaxVersion, apiVersions: 4,
		tsharkNoResponse: []kmsg.Key{kmsg.Produce, kmsg.Fetch, kmsg.ListOffsets, kmsg.Metadata, kmsg.OffsetFetch, kmsg.LeaveGroup},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			out := record(t, scenario{
				name:   "sarama-" + tc.name,
				topics: []string{saramaTopic},
				clients: func(t *testing.T, bootstrap string) {
					addrs := strings.Split(bootstrap, ",")
					within(t, "sarama SyncProducer", func(context.Context) error {
						return saramaProduce(tc.version, addrs)
					})
					within(t, "sarama ConsumerGroup", func(ctx context.Context) error {
						return saramaConsume(ctx, tc.version, addrs)
					})
				},
				tsharkNoResponse: tc.tsharkNoResponse,
			})
			// sarama (broker.go Open) sends ApiVersions first on every
			// connection whatever Config.Version says
			// (Config.ApiVersionsRequest defaults to true): v3, or v4
			// from V3_9_0_0; flexible, header v2 with zero tags
			// (request.go), and in the body ClientSoftwareName "sarama"
			// and its version. Every request repeats Config.ClientID; no
			// instance ID; classic groups only (sarama has no
			// ConsumerGroupHeartbeat and no telemetry API): no finding.
			if vs := versionsOf(out, kmsg.ApiVersions); !slices.Equal(vs, []int16{tc.apiVersions}) {
				t.Errorf("ApiVersions versions %v, want [%d]", vs, tc.apiVersions)
			}
			checkFirstRequests(t, out, kmsg.ApiVersions)
			for _, k := range []kmsg.Key{kmsg.ConsumerGroupHeartbeat, kmsg.GetTelemetrySubscriptions, kmsg.PushTelemetry} {
				if vs := versionsOf(out, k); len(vs) != 0 {
					t.Errorf("%s versions %v, want none", kmsg.NameForKey(int16(k)), vs)
				}
			}
			sw := software{"sarama", saramaSoftwareVersion()}
			checkLegacy(t, out, legacyExpect{
				clients: map[string]software{"sarama-producer": sw, "sarama-consumer": sw},
			})
		})
	}
}

func saramaProduce(version sarama.KafkaVersion, addrs []string) error {
	cfg := saramaConfig(version, "sarama-producer")
	cfg.Producer.Return.Successes = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	p, err := sarama.NewSyncProducer(addrs, cfg)
	if err != nil {
		return fmt.Errorf("new sync producer: %w", err)
	}
	for _, m := range goMessages {
		if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: saramaTopic, Value: sarama.StringEncoder(m)}); err != nil {
			p.Close()
			return fmt.Errorf("produce %q: %w", m, err)
		}
	}
	if err := p.Close(); err != nil {
		return fmt.Errorf("close producer: %w", err)
	}
	return nil
}

// saramaConsume joins the group, reads goMessages from the beginning and
// leaves: Consume returns once the handler cancels its context, Close
// commits and sends LeaveGroup.
func saramaConsume(ctx context.Context, version sarama.KafkaVersion, addrs []string) error {
	cfg := saramaConfig(version, "sarama-consumer")
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.MaxWaitTime = 200 * time.Millisecond
	cg, err := sarama.NewConsumerGroup(addrs, saramaGroup, cfg)
	if err != nil {
		return fmt.Errorf("new consumer group: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	h := &saramaHandler{want: len(goMessages), done: cancel}
	cerr := cg.Consume(ctx, []string{saramaTopic}, h)
	if err := cg.Close(); err != nil && cerr == nil {
		cerr = fmt.Errorf("close consumer group: %w", err)
	}
	if cerr != nil && !errors.Is(cerr, context.Canceled) {
		return fmt.Errorf("consume: %w", cerr)
	}
	return consumed(h.values())
}

// saramaHandler collects message values and cancels the session once it
// has want of them.
type saramaHandler struct {
	want int
	done context.CancelFunc

	mu  sync.Mutex
	got []string
}

func (h *saramaHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *saramaHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }

func (h *saramaHandler) ConsumeClaim(sess sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for {
		select {
		case m, ok := <-claim.Messages():
			if !ok {
				return nil
			}
			sess.MarkMessage(m, "")
			h.mu.Lock()
			h.got = append(h.got, string(m.Value))
			n := len(h.got)
			h.mu.Unlock()
			if n == h.want {
				h.done()
			}
		case <-sess.Context().Done():
			return nil
		}
	}
}

func (h *saramaHandler) values() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.got)
}
