//go:build linux

package capture

import (
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"testing"
	"time"
)

// fanoutSeen is what the reader of a fanout capture saw.
type fanoutSeen struct {
	ringOf   map[[2]netip.AddrPort]int // connection (lower endpoint first) -> ring
	perRing  []int
	payloads map[string]int // each message and how often it was seen
	frames   uint64
	disorder int // packets stamped before the one returned before them
}

// readFanout reads src to its end, noting each TCP segment's ring.
func readFanout(src *FanoutSource) (fanoutSeen, error) {
	seen := fanoutSeen{ringOf: map[[2]netip.AddrPort]int{}, perRing: make([]int, len(src.rings)), payloads: map[string]int{}}
	d := NewLayerDecoder()
	var p Packet
	var s Segment
	var last time.Time
	for {
		err := src.NextInto(&p)
		if err == io.EOF {
			return seen, nil
		}
		if err != nil {
			return seen, err
		}
		seen.frames++
		if p.Frame != seen.frames {
			return seen, fmt.Errorf("frame %d numbered %d", seen.frames, p.Frame)
		}
		if p.Time.Before(last) {
			seen.disorder++
		}
		last = p.Time
		if !d.Decode(&p, &s) {
			continue
		}
		ring := src.last
		seen.perRing[ring]++
		key := [2]netip.AddrPort{s.Src, s.Dst}
		if s.Dst.Port() < s.Src.Port() {
			key = [2]netip.AddrPort{s.Dst, s.Src}
		}
		if r, ok := seen.ringOf[key]; ok && r != ring {
			return seen, fmt.Errorf("connection %v on rings %d and %d", key, r, ring)
		}
		seen.ringOf[key] = ring
		if len(s.TCP.Payload) > 0 && s.Dst.Port() == key[1].Port() {
			seen.payloads[string(s.TCP.Payload)]++
		}
	}
}

// TestOpenFanout captures on lo through two rings (root only): both
// directions of every connection land on one ring (the kernel's flow hash
// is symmetric), the connections spread over both rings, every message is
// seen once, and the merged packets come in time order.
func TestOpenFanout(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("live capture needs root (CAP_NET_RAW)")
	}
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); io.Copy(c, c) }()
		}
	}()
	port := uint16(l.Addr().(*net.TCPAddr).Port)
	src, err := OpenFanout("lo", 2, LiveOptions{Ports: []uint16{port}, Snaplen: 65535, RingSize: MinRingSize})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	type result struct {
		seen fanoutSeen
		err  error
	}
	done := make(chan result, 1)
	go func() {
		seen, err := readFanout(src)
		done <- result{seen, err}
	}()

	const conns, msgs = 24, 20
	for c := range conns {
		conn, err := net.Dial("tcp4", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 64)
		for m := range msgs {
			msg := fmt.Sprintf("conn %02d message %02d", c, m)
			if _, err := conn.Write([]byte(msg)); err != nil {
				t.Fatal(err)
			}
			conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			if _, err := io.ReadFull(conn, buf[:len(msg)]); err != nil {
				t.Fatal(err)
			}
		}
		conn.Close()
	}
	time.Sleep(50 * time.Millisecond)
	src.Stop()
	var res result
	select {
	case res = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the fanout capture did not end after Stop")
	}
	if res.err != nil {
		t.Fatal(res.err)
	}
	seen := res.seen
	if len(seen.ringOf) != conns {
		t.Errorf("saw %d connections, want %d", len(seen.ringOf), conns)
	}
	for i, n := range seen.perRing {
		if n == 0 {
			t.Errorf("ring %d got no segment of %d connections (per ring: %v)", i, conns, seen.perRing)
		}
	}
	if len(seen.payloads) != conns*msgs {
		t.Errorf("saw %d distinct messages, want %d", len(seen.payloads), conns*msgs)
	}
	for msg, n := range seen.payloads {
		if n != 1 {
			t.Errorf("message %q seen %d times", msg, n)
		}
	}
	if seen.disorder != 0 || src.Late() != 0 {
		t.Errorf("%d packets (late count %d) came before an earlier-returned one's time", seen.disorder, src.Late())
	}
	st, err := src.Stats()
	if err != nil {
		t.Fatal(err)
	}
	rs := src.RingStats()
	if st.Received < seen.frames || st.Received != rs[0].Received+rs[1].Received || st.Dropped != 0 {
		t.Errorf("stats %+v (rings %+v) for %d frames read", st, rs, seen.frames)
	}
	t.Logf("segments per ring %v, frames %d, stats %+v", seen.perRing, seen.frames, st)
}

// TestFanoutNextIntoAllocs holds the fanout reader at zero allocations
// per packet on two real rings (root only): UDP from several ports, so
// that both rings take packets, block changes and waits included (the
// rings' goroutines allocate nothing either: the count is the process's).
func TestFanoutNextIntoAllocs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("live capture needs root (CAP_NET_RAW)")
	}
	// Flows land on the rings by a hash of their random source ports: with
	// 8, all of them on one ring was a 1 in 128 chance (it happened in CI);
	// with 32, 1 in 2^31.
	const flows = 32
	var srcs []*net.UDPConn
	var dst *net.UDPConn
	for range flows {
		var src *net.UDPConn
		if dst == nil {
			src, dst = udpPair(t)
		} else {
			var err error
			if src, err = net.DialUDP("udp4", nil, dst.LocalAddr().(*net.UDPAddr)); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { src.Close() })
		}
		srcs = append(srcs, src)
	}
	f, err := OpenFanout("lo", 2, LiveOptions{Filter: udpPortFilter(t, dst), RingSize: MinRingSize})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			for _, src := range srcs {
				select {
				case <-stop:
					return
				default:
					sendUDP(src, 5, 60)
				}
			}
		}
	}()
	var p Packet
	for range 3000 { // every block's references grown once
		if err := f.NextInto(&p); err != nil {
			t.Fatal(err)
		}
	}
	allocs := testing.AllocsPerRun(2000, func() {
		if err := f.NextInto(&p); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("fanout NextInto on lo allocates %.2f times per packet, want 0", allocs)
	}
	for i, st := range f.RingStats() {
		if st.Received == 0 {
			t.Errorf("ring %d received nothing from %d flows", i, flows)
		}
	}
}

// TestFanoutGroupsApart opens two fanout captures at once in one process
// (root only): each is a group of its own, so each takes every datagram,
// where a shared group ID would split them between the captures.
func TestFanoutGroupsApart(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("live capture needs root (CAP_NET_RAW)")
	}
	src, dst := udpPair(t)
	var fs []*FanoutSource
	for range 2 {
		f, err := OpenFanout("lo", 2, LiveOptions{Filter: udpPortFilter(t, dst), RingSize: MinRingSize})
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		fs = append(fs, f)
	}
	const n = 200
	sendUDP(src, n, 60)
	deadline := time.Now().Add(5 * time.Second)
	for i, f := range fs {
		for {
			st, err := f.Stats()
			if err != nil {
				t.Fatal(err)
			}
			if st.Received >= n || time.Now().After(deadline) {
				if st.Received != n {
					t.Errorf("capture %d received %d of %d datagrams", i, st.Received, n)
				}
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}
