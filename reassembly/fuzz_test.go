package reassembly

import (
	"encoding/binary"
	"math/rand/v2"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kwatch/kwatch/flow"
)

// FuzzAdd reads the input as a script of segments on two connections.
// Invariant: Add and Close never panic, no Stream call follows End, and
// after Close every opened connection has ended exactly once; the in-order
// fast path makes the same calls and counts as assemble alone.
func FuzzAdd(f *testing.F) {
	f.Add([]byte{0, 0x02, 0, 0, 0, 0, 0, 0, 1, 0x12, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{0, 0x10, 0xff, 0xff, 10, 1, 0, 0, 0, 0x10, 0, 0, 200, 0, 0, 0})
	f.Add([]byte{2, 0x14, 0x80, 0x00, 255, 1, 30, 0, 1, 0x04, 0, 5, 0, 0, 0, 0})
	f.Add([]byte{0, 0x10, 0, 0, 1, 20, 0x0b, 0, 0, 0x10, 0, 0, 1, 20, 0x13, 0, 1, 0x10, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, script []byte) {
		rec, stats := runScript(script, false)
		checkEnds(t, rec)
		ref, refStats := runScript(script, true)
		if stats != refStats {
			t.Fatalf("stats %+v, without the fast path %+v", stats, refStats)
		}
		if !slices.Equal(rec.events, ref.events) {
			t.Fatalf("calls differ from those without the fast path:\n%q\n%q", rec.lines(true), ref.lines(true))
		}
	})
}

// TestInOrderSameAsAssemble: random conversations on two connections,
// mostly in order but with handshakes or not, reordering, loss, duplicates,
// ACKs of bytes not seen, snaplen cuts, FIN, RST, SYNs reusing the 4-tuple
// and idle time, give the same Stream calls and counts with the in-order
// fast path as through assemble alone.
func TestInOrderSameAsAssemble(t *testing.T) {
	var fast, all uint64
	for seed := range uint64(2000) {
		ps := randomConversation(rand.New(rand.NewPCG(seed, 11)))
		rec, stats, n := runPkts(ps, false)
		ref, refStats, _ := runPkts(ps, true)
		if stats != refStats || !slices.Equal(rec.events, ref.events) {
			t.Fatalf("seed %d: with the fast path\n%+v\n%q\nwithout\n%+v\n%q", seed, stats, rec.lines(true), refStats, ref.lines(true))
		}
		fast, all = fast+n, all+uint64(len(ps))
	}
	// Most segments are in order: the fast path must have taken many, and
	// the others must have been left to assemble.
	if fast < all/3 || fast > all*9/10 {
		t.Fatalf("the fast path took %d segments of %d", fast, all)
	}
}

// randomConversation returns the segments of random, mostly in-order
// exchanges on two connections.
func randomConversation(rng *rand.Rand) []pkt {
	var ps []pkt
	var next [2][2]uint32 // by connection, then client 0 and broker 1
	at := time.Duration(0)
	for c := range 2 {
		next[c] = [2]uint32{rng.Uint32(), rng.Uint32()}
	}
	cliOf := [2]netip.AddrPort{cliAddr, cli2}
	for c := range 2 {
		if rng.IntN(4) == 0 {
			continue // joined mid-stream
		}
		cs, bs := next[c][0], next[c][1]
		ps = append(ps, pkt{from: "c", cli: cliOf[c], seq: cs, flags: "S"})
		if rng.IntN(4) > 0 { // else the SYN-ACK was not captured
			ps = append(ps, pkt{from: "b", cli: cliOf[c], seq: bs, ack: cs + 1, flags: "SA"})
		}
		next[c] = [2]uint32{cs + 1, bs + 1}
	}
	for range 2 + rng.IntN(60) {
		c, side := rng.IntN(2), rng.IntN(2)
		p := pkt{from: [2]string{"c", "b"}[side], cli: cliOf[c], seq: next[c][side], ack: next[c][1-side], flags: "A"}
		at += time.Duration(1+rng.IntN(5)) * time.Millisecond
		switch k := rng.IntN(150); {
		case k == 0:
			at += time.Duration(rng.IntN(200)) * time.Second
		case k == 1:
			p.flags = "S"
			if side == 1 {
				p.flags = "SA"
			}
			next[c][side]++
		case k == 2:
			p.flags = "AF"
			next[c][side]++
		case k == 3:
			p.flags = "R"
		case k == 4:
			p.ack += uint32(rng.IntN(100)) // acknowledges bytes not seen
		case k == 5:
			next[c][side] += uint32(rng.IntN(100)) // loses bytes
		case k == 6:
			p.trunc, p.cut = true, rng.IntN(3)*rng.IntN(50)
		case k == 7:
			p.seq -= uint32(rng.IntN(50)) // a retransmission, in part
		}
		if rng.IntN(3) > 0 {
			p.data = strings.Repeat(string(rune('a'+len(ps)%26)), 1+rng.IntN(60))
		}
		next[c][side] += uint32(len(p.data) + p.cut)
		p.at = at
		ps = append(ps, p)
		if n := len(ps); n > 1 && rng.IntN(10) == 0 {
			ps[n-1], ps[n-2] = ps[n-2], ps[n-1]
		}
	}
	return ps
}

// runScript adds the segments of a FuzzAdd script and closes.
func runScript(script []byte, noInOrder bool) (*recorder, Stats) {
	var ps []pkt
	payload := make([]byte, 256)
	for len(script) >= 8 {
		b := script[:8]
		script = script[8:]
		p := pkt{from: "c", seq: binary.BigEndian.Uint32(b[2:6]) >> 8, ack: uint32(b[5]) << 4}
		if b[0]&1 != 0 {
			p.from = "b"
		}
		if b[0]&2 != 0 {
			p.cli = cli2
		}
		for i, fl := range "FSRA" {
			if b[1]&(1<<i) != 0 {
				p.flags += string(fl)
			}
		}
		p.data = string(payload[:b[4]])
		p.trunc = b[6]&1 != 0
		if p.trunc && b[6]&2 != 0 {
			p.cut = int(b[6] >> 2) // known from the IP length
		}
		p.at = time.Duration(b[7]) * time.Second
		ps = append(ps, p)
	}
	rec, stats, _ := runPkts(ps, noInOrder)
	return rec, stats
}

// runPkts adds ps and closes; it returns the calls, the counts and how
// many segments the in-order fast path took.
func runPkts(ps []pkt, noInOrder bool) (*recorder, Stats, uint64) {
	rec := &recorder{}
	r := New(Options{IdleTimeout: time.Minute, MaxBufferedPagesPerConn: 4, MaxBufferedPagesTotal: 16}, rec)
	r.noInOrder = noInOrder
	for _, s := range segs(ps) {
		r.Add(s)
	}
	r.Close(flow.Meta{Frame: closeFrame})
	return rec, r.Stats(), r.inOrders
}

// checkEnds checks that no call follows End, that every opened connection
// ended once, and that no Gap or Cut is empty.
func checkEnds(t *testing.T, rec *recorder) {
	t.Helper()
	ended := make([]int, len(rec.flows))
	for _, e := range rec.events {
		if ended[e.conn] > 0 {
			t.Fatalf("call %s on connection %d after End", e.kind, e.conn)
		}
		if e.kind == "end" {
			ended[e.conn]++
		}
		if (e.kind == "gap" || e.kind == "cut") && e.lost <= 0 {
			t.Fatalf("gap of %d", e.lost)
		}
	}
	for i, n := range ended {
		if n != 1 {
			t.Fatalf("connection %d ended %d times", i, n)
		}
	}
}
