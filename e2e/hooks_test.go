//go:build e2e

package e2e

import (
	"maps"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// reqCounter is a kgo hook that counts, per API key, the requests a client
// wrote and the responses it read without error, and remembers the local
// address of every connection the client opened, so that connections in the
// pcap can be attributed to the client.
type reqCounter struct {
	mu     sync.Mutex
	writes map[int16]int
	reads  map[int16]int
	failed int // writes that returned an error (may be partially on the wire)
	locals map[netip.AddrPort]bool
}

var (
	_ kgo.HookBrokerWrite   = (*reqCounter)(nil)
	_ kgo.HookBrokerRead    = (*reqCounter)(nil)
	_ kgo.HookBrokerConnect = (*reqCounter)(nil)
)

func newReqCounter() *reqCounter {
	return &reqCounter{writes: map[int16]int{}, reads: map[int16]int{}, locals: map[netip.AddrPort]bool{}}
}

func (c *reqCounter) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, n int, _, _ time.Duration, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		if n > 0 {
			c.failed++
		}
		return
	}
	c.writes[key]++
}

func (c *reqCounter) OnBrokerRead(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads[key]++
}

// OnBrokerConnect keeps the address even when connection init failed: the
// requests of a failed init (ApiVersions, SASL) were written and counted.
func (c *reqCounter) OnBrokerConnect(_ kgo.BrokerMetadata, _ time.Duration, conn net.Conn, _ error) {
	if conn == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.locals[addrPort(conn.LocalAddr())] = true
}

// snapshot returns copies of the counts and local addresses.
func (c *reqCounter) snapshot() (writes, reads map[int16]int, locals map[netip.AddrPort]bool, failed int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.writes), maps.Clone(c.reads), maps.Clone(c.locals), c.failed
}
