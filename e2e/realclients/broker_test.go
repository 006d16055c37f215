//go:build e2e

package realclients

import (
	"fmt"
	"maps"
	"net/netip"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// broker is one kfake cluster on loopback and the requests it handled.
type broker struct {
	c     *kfake.Cluster
	addrs []string // host:port per broker, for client bootstrap lists
	ports []uint16

	mu   sync.Mutex
	seen map[int16]int // requests by API key, as kfake parsed them
}

// startBroker starts kfake with n brokers on 127.0.0.1 and the given topics
// (one partition each, so consumers' end-of-partition is well defined). A
// control hook that never handles anything counts every request the cluster
// parses: kfake reads a request, and if it cannot parse it closes the
// connection, so a request kfake could not read is missing from the counts.
func startBroker(n int, topics ...string) (*broker, error) {
	opts := []kfake.Opt{kfake.NumBrokers(n)}
	if len(topics) > 0 {
		opts = append(opts, kfake.SeedTopics(1, topics...))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return nil, fmt.Errorf("start kfake: %w", err)
	}
	b := &broker{c: c, seen: map[int16]int{}}
	c.Control(func(r kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		b.mu.Lock()
		b.seen[r.Key()]++
		b.mu.Unlock()
		return nil, nil, false
	})
	for _, a := range c.ListenAddrs() {
		ap, err := netip.ParseAddrPort(a)
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("kfake listen address %q: %w", a, err)
		}
		b.addrs = append(b.addrs, a)
		b.ports = append(b.ports, ap.Port())
	}
	return b, nil
}

// requests returns the counts once they have stopped moving: kfake handles
// a request asynchronously after reading it, so the last requests of a
// client that just exited may still be on their way.
func (b *broker) requests(want map[int16]int, wait time.Duration) map[int16]int {
	deadline := time.Now().Add(wait)
	for {
		b.mu.Lock()
		got := maps.Clone(b.seen)
		b.mu.Unlock()
		if maps.Equal(got, want) || time.Now().After(deadline) {
			return got
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (b *broker) close() { b.c.Close() }
