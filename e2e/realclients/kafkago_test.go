//go:build e2e

package realclients

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	kafkagoTopic = "kafkago-topic"
	kafkagoGroup = "kafkago-group"
)

func TestKafkaGo(t *testing.T) {
	out := record(t, scenario{
		name:   "kafka-go",
		topics: []string{kafkagoTopic},
		clients: func(t *testing.T, bootstrap string) {
			addrs := strings.Split(bootstrap, ",")
			within(t, "kafka-go Writer", func(ctx context.Context) error {
				return kafkagoProduce(ctx, addrs)
			})
			within(t, "kafka-go Reader", func(ctx context.Context) error {
				return kafkagoConsume(ctx, addrs)
			})
		},
	})
	// kafka-go has two protocol stacks, and both open a connection with
	// ApiVersions v0 (Conn.ApiVersions in conn.go for the Reader's
	// Dialer; the Transport's connGroup.connect in transport.go sends
	// apiversions.Request at the zero version, its package knowing only
	// v0-v2): no ClientSoftwareName, so kwatch cannot name the library.
	// Conn writes header v1 always (protocol.go requestHeader); the
	// Transport (protocol/request.go) writes header v2 with zero tags for
	// flexible versions and v1 otherwise. Every request repeats the
	// client ID; no instance ID; classic groups (conn.go: JoinGroup v1 or
	// v2, SyncGroup v0, Heartbeat v0, LeaveGroup v0): no finding.
	if vs := versionsOf(out, kmsg.ApiVersions); !slices.Equal(vs, []int16{0}) {
		t.Errorf("ApiVersions versions %v, want [0]", vs)
	}
	// The Transport opens every connection with ApiVersions. Conn
	// negotiates lazily (loadVersions, conn.go): only before JoinGroup,
	// Fetch, Metadata or Produce; its fixed-version requests go out on a
	// fresh connection without it. The group's coordinator connection
	// always opens with FindCoordinator v0 (consumergroup.go connect).
	checkFirstRequests(t, out, kmsg.ApiVersions, kmsg.FindCoordinator, kmsg.ListOffsets, kmsg.LeaveGroup,
		kmsg.Heartbeat, kmsg.SyncGroup, kmsg.OffsetCommit, kmsg.OffsetFetch)
	opensWith := map[kmsg.Key]int{}
	for _, k := range firstRequests(out) {
		opensWith[kmsg.Key(k)]++
	}
	if opensWith[kmsg.FindCoordinator] == 0 {
		t.Errorf("connections by first request %v: none opens with FindCoordinator", opensWith)
	}
	checkLegacy(t, out, legacyExpect{
		clients: map[string]software{"kafkago-writer": {}, "kafkago-reader": {}},
	})
}

func kafkagoProduce(ctx context.Context, addrs []string) error {
	tr := &kafka.Transport{ClientID: "kafkago-writer", DialTimeout: 5 * time.Second}
	defer tr.CloseIdleConnections()
	w := &kafka.Writer{
		Addr:         kafka.TCP(addrs...),
		Topic:        kafkagoTopic,
		Transport:    tr,
		RequiredAcks: kafka.RequireAll,
		BatchTimeout: 10 * time.Millisecond,
		WriteTimeout: 5 * time.Second,
	}
	var msgs []kafka.Message
	for _, m := range goMessages {
		msgs = append(msgs, kafka.Message{Value: []byte(m)})
	}
	werr := w.WriteMessages(ctx, msgs...)
	if err := w.Close(); err != nil && werr == nil {
		werr = err
	}
	if werr != nil {
		return fmt.Errorf("write: %w", werr)
	}
	return nil
}

// kafkagoConsume reads goMessages through a consumer group from the start
// of the topic, committing each (CommitInterval 0: synchronous), and
// closes the Reader, which leaves the group.
func kafkagoConsume(ctx context.Context, addrs []string) error {
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers:     addrs,
		GroupID:     kafkagoGroup,
		Topic:       kafkagoTopic,
		Dialer:      &kafka.Dialer{ClientID: "kafkago-reader", Timeout: 5 * time.Second},
		StartOffset: kafka.FirstOffset,
		MaxWait:     200 * time.Millisecond,
	})
	var got []string
	var rerr error
	for range goMessages {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			rerr = fmt.Errorf("read after %q: %w", got, err)
			break
		}
		got = append(got, string(m.Value))
	}
	if err := r.Close(); err != nil && rerr == nil {
		rerr = fmt.Errorf("close reader: %w", err)
	}
	return errors.Join(rerr, consumed(got))
}
