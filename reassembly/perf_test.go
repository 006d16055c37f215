package reassembly

import (
	"net/netip"
	"testing"
	"time"

	"github.com/kwatch/kwatch/capture"
)

const mss = 1460

// established opens n connections with a full handshake and returns, for
// each, a client segment and a broker segment positioned at the next byte.
func established(tb testing.TB, r *Reassembler, n int) (cs, bs []*capture.Segment) {
	tb.Helper()
	payload := make([]byte, mss)
	frame := uint64(0)
	next := func() uint64 { frame++; return frame }
	for i := range n {
		c := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 1, byte(i >> 8), byte(i)}), 50000)
		r.Add(mkSeg(next(), t0, c, brkAddr, 1000, 0, "S", nil, false))
		r.Add(mkSeg(next(), t0, brkAddr, c, 5000, 1001, "SA", nil, false))
		r.Add(mkSeg(next(), t0, c, brkAddr, 1001, 5001, "A", nil, false))
		cs = append(cs, mkSeg(next(), t0, c, brkAddr, 1001, 5001, "A", payload, false))
		bs = append(bs, mkSeg(next(), t0, brkAddr, c, 5001, 1001, "A", payload, false))
	}
	return cs, bs
}

// TestInOrderNoAllocs holds the in-order path of an established
// connection at zero allocations per segment.
func TestInOrderNoAllocs(t *testing.T) {
	s := &nopStream{}
	r := New(Options{}, OpenerFunc(func(Flow) Stream { return s }))
	cs, bs := established(t, r, 4)
	i := 0
	tm := t0
	allocs := testing.AllocsPerRun(2000, func() {
		seg := cs[i%len(cs)]
		if i%2 == 1 {
			seg = bs[i%len(bs)]
		}
		tm = tm.Add(time.Microsecond)
		seg.Time = tm
		r.Add(seg)
		seg.TCP.Seq += mss
		i++
	})
	if allocs != 0 {
		t.Errorf("in-order Add allocates %v times per segment, want 0", allocs)
	}
	if s.n == 0 {
		t.Fatal("no data delivered")
	}
	if st := r.Stats(); st.Gaps != 0 || st.OutOfOrder != 0 {
		t.Errorf("stats = %+v, want no gaps and nothing out of order", st)
	}
}

func BenchmarkInOrder(b *testing.B) {
	s := &nopStream{}
	r := New(Options{}, OpenerFunc(func(Flow) Stream { return s }))
	cs, _ := established(b, r, 1000)
	tm := t0
	b.SetBytes(mss)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		seg := cs[i%len(cs)]
		tm = tm.Add(time.Microsecond)
		seg.Time = tm
		r.Add(seg)
		seg.TCP.Seq += mss
	}
	b.StopTimer()
	if s.n != b.N*mss {
		b.Fatalf("delivered %d bytes, want %d", s.n, b.N*mss)
	}
}

// BenchmarkReordered swaps every pair of segments: each odd segment is
// buffered (copied into a page) and released by the next.
func BenchmarkReordered(b *testing.B) {
	s := &nopStream{}
	r := New(Options{}, OpenerFunc(func(Flow) Stream { return s }))
	cs, _ := established(b, r, 1000)
	base := make([]uint32, len(cs))
	for i, c := range cs {
		base[i] = c.TCP.Seq
	}
	tm := t0
	b.SetBytes(mss)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := (i / 2) % len(cs)
		seg := cs[k]
		if i%2 == 0 {
			seg.TCP.Seq = base[k] + mss
		} else {
			seg.TCP.Seq = base[k]
			base[k] += 2 * mss
		}
		tm = tm.Add(time.Microsecond)
		seg.Time = tm
		r.Add(seg)
	}
	b.StopTimer()
	if want := (b.N / 2) * 2 * mss; s.n != want {
		b.Fatalf("delivered %d bytes, want %d", s.n, want)
	}
}
