package tcpasm

import (
	"math"
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"
)

// TestUnixNanos: exact within the range, the extremes outside it, so
// that a kept time out of range still compares right with packet times.
func TestUnixNanos(t *testing.T) {
	const maxSec = 1 << 33
	cases := []struct {
		name string
		t    time.Time
		want int64
		ok   bool
	}{
		{"epoch", time.Unix(0, 0), 0, true},
		{"a packet time", time.Unix(1735787045, 123456789), 1735787045123456789, true},
		{"before 1970", time.Unix(-5, 7), -4999999993, true},
		{"last second in range", time.Unix(maxSec, 999999999), maxSec*1e9 + 999999999, true},
		{"first second in range", time.Unix(-maxSec, 0), -maxSec * 1e9, true},
		{"past the range", time.Unix(maxSec+1, 0), math.MaxInt64, false},
		{"far future", time.Unix(1<<40, 0), math.MaxInt64, false},
		{"before the range", time.Unix(-maxSec-1, 999999999), math.MinInt64, false},
		{"zero time, year 1", time.Time{}, math.MinInt64, false},
	}
	for _, c := range cases {
		got, ok := UnixNanos(c.t)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: UnixNanos(%v) = %d %v, want %d %v", c.name, c.t, got, ok, c.want, c.ok)
		}
	}
}

// TestFindRecent: find gives the connection and orientation the pool's
// table does, for either direction, while connections are opened and
// removed and their objects reused for other 4-tuples, on ports chosen to
// share entries of the cache; the cache holds no connection removed (it
// would keep its memory alive once the input ended).
func TestFindRecent(t *testing.T) {
	for seed := range uint64(10) {
		r := rand.New(rand.NewPCG(seed, 5))
		a := NewAssembler(NewStreamPool(&opsStream{}))
		var eps []netip.AddrPort
		for i := range 12 {
			ip := netip.AddrFrom4([4]byte{10, 0, byte(i % 3), byte(i)})
			if i%4 == 3 {
				ip = netip.MustParseAddr("fd00::1")
			}
			eps = append(eps, netip.AddrPortFrom(ip, uint16(9092+i%3)))
		}
		for op := range 5000 {
			src, dst := eps[r.IntN(len(eps))], eps[r.IntN(len(eps))]
			var k key
			srcIsLo := k.set(addrEndpoint(src), addrEndpoint(dst))
			want := a.connPool.conns.get(&k)
			switch r.IntN(4) {
			case 0: // open it, by a SYN
				tcp := layers.TCP{SYN: true, Seq: 1, SrcPort: layers.TCPPort(src.Port()), DstPort: layers.TCPPort(dst.Port())}
				ts := time.Unix(int64(op), 0)
				a.AssembleAddrs(src, dst, &tcp, ts, uint64(op), &assemblerSimpleContext{Timestamp: ts})
				continue
			case 1: // remove it, its object free for another 4-tuple
				if want != nil {
					a.connPool.remove(want)
					for _, e := range a.connPool.recent {
						if e.c == want {
							t.Fatalf("seed %d op %d: the cache keeps a connection removed", seed, op)
						}
					}
				}
				continue
			}
			got, lo := a.find(src, dst)
			if got != want || got != nil && lo != srcIsLo {
				t.Fatalf("seed %d op %d: find(%v, %v) = %p %v, want %p %v", seed, op, src, dst, got, lo, want, srcIsLo)
			}
		}
	}
}
