//go:build e2e

package e2e

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

var keepPcap = flag.String("pcap", "", "also copy the recorded capture to this path")

const (
	topic      = "kwatch-e2e"
	numRecords = 200
	numBrokers = 3
)

// clientKind says what a scenario client does, and so which requests and
// findings it should produce.
type clientKind uint8

const (
	kindProducer clientKind = iota + 1
	kindClassic             // classic group consumer (JoinGroup/SyncGroup)
	kind848                 // KIP-848 consumer (ConsumerGroupHeartbeat v1)
	kindProbe               // raw ConsumerGroupHeartbeat joins with an empty member ID
)

// clientRun is one kgo client of the scenario and what its hooks saw.
type clientRun struct {
	clientID  string
	kind      clientKind
	group     string
	telemetry bool       // client metrics (KIP-714) left on
	cghMax    int16      // probe only: highest ConsumerGroupHeartbeat version allowed
	source    netip.Addr // the loopback address the client's connections come from
	hooks     *reqCounter
	err       error
}

// recording is the result of one scenario run.
type recording struct {
	pcap    string
	packets int
	clients []*clientRun
	took    time.Duration
}

var (
	recOnce   sync.Once
	recShared *recording
	recErr    error
	recDir    string
)

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if recDir != "" {
		os.RemoveAll(recDir)
	}
	removeKwatchBin()
	os.Exit(code)
}

// sharedRecording runs the scenario once per test binary; every test reads
// the same capture.
func sharedRecording(t *testing.T) *recording {
	t.Helper()
	recOnce.Do(func() {
		recDir, recErr = os.MkdirTemp("", "kwatch-e2e-")
		if recErr != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
		defer cancel()
		recShared, recErr = runScenario(ctx, filepath.Join(recDir, "kgo-kfake.pcap"))
		if recErr == nil && *keepPcap != "" {
			b, err := os.ReadFile(recShared.pcap)
			if err == nil {
				err = os.WriteFile(*keepPcap, b, 0o644)
			}
			recErr = err
		}
	})
	if recErr != nil {
		t.Fatalf("recording scenario: %v", recErr)
	}
	return recShared
}

// runScenario starts kfake behind recording proxies, runs every client to
// completion and closes everything, so the capture ends with FINs.
func runScenario(ctx context.Context, path string) (*recording, error) {
	start := time.Now()
	rec, err := newRecorder(path)
	if err != nil {
		return nil, err
	}
	px := newProxies(rec)
	cluster, err := kfake.NewCluster(
		kfake.NumBrokers(numBrokers),
		kfake.ListenFn(px.listen),
		kfake.SeedTopics(3, topic),
		// kfake lowers the KIP-848 heartbeat interval to 100ms in test
		// binaries; 250ms keeps the capture smaller and still quick.
		kfake.BrokerConfigs(map[string]string{"group.consumer.heartbeat.interval.ms": "250"}),
	)
	if err != nil {
		px.Close()
		rec.Close()
		return nil, fmt.Errorf("start kfake: %w", err)
	}
	seeds := px.Addrs()

	clients := []*clientRun{
		{clientID: "e2e-producer", kind: kindProducer, telemetry: true},
		{clientID: "e2e-classic", kind: kindClassic, group: "g-classic"},
		{clientID: "e2e-848", kind: kind848, group: "g-848", telemetry: true},
		{clientID: "e2e-848-quiet", kind: kind848, group: "g-848-quiet"},
		{clientID: "e2e-probe-v1", kind: kindProbe, group: "g-probe-v1", cghMax: 1},
		{clientID: "e2e-probe-v0", kind: kindProbe, group: "g-probe-v0", cghMax: 0},
	}
	prepareClients(clients)

	// Records first, so that every consumer has all of them to read.
	clients[0].err = runClient(ctx, seeds, clients[0])
	if clients[0].err == nil {
		var wg sync.WaitGroup
		for _, c := range clients[1:] {
			wg.Go(func() { c.err = runClient(ctx, seeds, c) })
		}
		wg.Wait()
	}

	cluster.Close()
	px.Close()
	closeErr := rec.Close()
	r := &recording{pcap: path, packets: rec.Packets(), clients: clients, took: time.Since(start)}
	var errs []error
	for _, c := range clients {
		if c.err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", c.clientID, c.err))
		}
	}
	errs = append(errs, closeErr)
	return r, errors.Join(errs...)
}

// prepareClients gives each client fresh hooks and a loopback address of
// its own to connect from. Connections are attributed to clients by their
// local address, and on loopback Linux reuses a port still in TIME_WAIT
// (net.ipv4.tcp_tw_reuse=2): with one shared address, one client's port
// can come back as another's.
func prepareClients(clients []*clientRun) {
	for i, c := range clients {
		c.hooks = newReqCounter()
		c.source = netip.AddrFrom4([4]byte{127, 0, 0, byte(10 + i)})
	}
}

func runClient(ctx context.Context, seeds []string, c *clientRun) error {
	opts := []kgo.Opt{
		kgo.SeedBrokers(seeds...),
		kgo.ClientID(c.clientID),
		kgo.WithHooks(c.hooks),
		kgo.DefaultProduceTopic(topic),
	}
	if c.source.IsValid() {
		d := &net.Dialer{Timeout: 10 * time.Second, LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(c.source, 0))}
		opts = append(opts, kgo.Dialer(d.DialContext))
	}
	if !c.telemetry {
		opts = append(opts, kgo.DisableClientMetrics())
	}
	switch c.kind {
	case kindClassic, kind848:
		opts = append(opts,
			kgo.ConsumerGroup(c.group),
			kgo.ConsumeTopics(topic),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		)
		if c.kind == kind848 {
			opts = append(opts, kgo.ServerSideBalancer())
		}
	case kindProbe:
		v := kversion.Stable()
		v.SetMaxKeyVersion(int16(kmsg.ConsumerGroupHeartbeat), c.cghMax)
		opts = append(opts, kgo.MaxVersions(v))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return fmt.Errorf("new client: %w", err)
	}
	defer cl.Close()

	switch c.kind {
	case kindProducer:
		return produce(ctx, cl)
	case kindClassic, kind848:
		return consume(ctx, cl)
	case kindProbe:
		return probe(ctx, cl, c.group)
	}
	return nil
}

func produce(ctx context.Context, cl *kgo.Client) error {
	recs := make([]*kgo.Record, numRecords)
	for i := range recs {
		recs[i] = &kgo.Record{Key: fmt.Appendf(nil, "k%d", i%7), Value: fmt.Appendf(nil, "value %d", i)}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return fmt.Errorf("produce: %w", err)
	}
	// Hold the client a little longer so its telemetry loop (started after
	// the first response) has time to fetch its subscription.
	return sleep(ctx, 500*time.Millisecond)
}

func consume(ctx context.Context, cl *kgo.Client) error {
	got := 0
	for got < numRecords {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("consumed %d of %d records: %w", got, numRecords, err)
		}
		var ferr error
		fs.EachError(func(t string, p int32, err error) { ferr = fmt.Errorf("fetch %s/%d: %w", t, p, err) })
		if ferr != nil {
			return ferr
		}
		got += fs.NumRecords()
	}
	if err := cl.CommitUncommittedOffsets(ctx); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	// A few heartbeats after the assignment settled, then a clean leave.
	return sleep(ctx, 500*time.Millisecond)
}

// probe sends what kgo never does: a ConsumerGroupHeartbeat join with an
// empty member ID, at the highest version the client allows, and a leave
// with an empty member ID; then it leaves properly with the member ID kfake
// assigned.
func probe(ctx context.Context, cl *kgo.Client, group string) error {
	join := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	join.Group = group
	join.MemberEpoch = 0
	join.RebalanceTimeoutMillis = 30000
	join.SubscribedTopicNames = []string{topic}
	join.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	resp, err := join.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("probe join: %w", err)
	}
	if resp.ErrorCode != 0 || resp.MemberID == nil {
		return fmt.Errorf("probe join: error code %d, member ID %v", resp.ErrorCode, resp.MemberID)
	}
	assigned := *resp.MemberID

	leave := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	leave.Group = group
	leave.MemberEpoch = -1
	if _, err := leave.RequestWith(ctx, cl); err != nil {
		return fmt.Errorf("probe empty leave: %w", err)
	}
	leave.MemberID = assigned
	if _, err := leave.RequestWith(ctx, cl); err != nil {
		return fmt.Errorf("probe leave: %w", err)
	}
	return nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
