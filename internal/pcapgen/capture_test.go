package pcapgen

import (
	"bytes"
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

func TestWriteFormatsAndLinks(t *testing.T) {
	formats := []Format{FormatAuto, FormatPCAP, FormatPCAPNanos, FormatPCAPBigEndian, FormatPCAPNanosBigEndian, FormatPCAPNG}
	links := []Link{LinkEthernet, LinkVLAN, LinkSLL, LinkSLL2, LinkNull, LinkRaw}
	for _, v6 := range []bool{false, true} {
		for _, f := range formats {
			for _, l := range links {
				name := f.String() + "/" + l.String()
				if v6 {
					name += "/ipv6"
				}
				t.Run(name, func(t *testing.T) {
					c := New(Options{Link: l, Format: f, Gzip: f == FormatPCAPNG, Start: BaseTime().Add(123456789 * time.Nanosecond)})
					var o ConnOptions
					if v6 {
						o.Broker = netip.MustParseAddrPort("[2001:db8::9]:9092")
					}
					DemoModern(c, o)
					file, err := c.Bytes()
					if err != nil {
						t.Fatal(err)
					}
					lt, pkts := readFile(t, file)
					if lt != l.LinkType() {
						t.Errorf("link type %v, want %v", lt, l.LinkType())
					}
					if len(pkts) != c.Frames() {
						t.Fatalf("read %d packets, wrote %d", len(pkts), c.Frames())
					}
					for i, p := range pkts {
						want := c.Packets()[i]
						if !bytes.Equal(p.data, want.Data) {
							t.Fatalf("frame %d differs", i+1)
						}
						wantTime := want.Time
						if f != FormatPCAPNanos && f != FormatPCAPNanosBigEndian && f != FormatPCAPNG {
							wantTime = wantTime.Truncate(time.Microsecond)
						}
						if !p.ci.Timestamp.Equal(wantTime) {
							t.Fatalf("frame %d time %v, want %v", i+1, p.ci.Timestamp, wantTime)
						}
						pkt := gopacket.NewPacket(p.data, lt, gopacket.Default)
						if pkt.ErrorLayer() != nil {
							t.Fatalf("frame %d: %v", i+1, pkt.ErrorLayer().Error())
						}
						if pkt.Layer(layers.LayerTypeTCP) == nil {
							t.Fatalf("frame %d has no TCP layer", i+1)
						}
						if v6 != (pkt.Layer(layers.LayerTypeIPv6) != nil) {
							t.Fatalf("frame %d: IPv6 layer present = %v, want %v", i+1, !v6, v6)
						}
						if l == LinkVLAN && pkt.Layer(layers.LayerTypeDot1Q) == nil {
							t.Fatalf("frame %d has no 802.1Q layer", i+1)
						}
					}
					r := reassemble(t, file)
					if len(r.data) != 2 {
						t.Errorf("reassembled %d directions, want 2", len(r.data))
					}
				})
			}
		}
	}
}

func TestChecksums(t *testing.T) {
	for _, v6 := range []bool{false, true} {
		c := New(Options{})
		var o ConnOptions
		if v6 {
			o.Client = netip.MustParseAddrPort("[2001:db8::1]:50000")
		}
		DemoLegacy(c, o)
		file, _ := c.Bytes()
		lt, pkts := readFile(t, file)
		for i, p := range pkts {
			pkt := gopacket.NewPacket(p.data, lt, gopacket.Default)
			tcp := pkt.Layer(layers.LayerTypeTCP).(*layers.TCP)
			if err := tcp.SetNetworkLayerForChecksum(pkt.NetworkLayer()); err != nil {
				t.Fatal(err)
			}
			// gopacket sums the stored checksum too: a valid segment gives 0.
			if got, err := tcp.ComputeChecksum(); err != nil || got != 0 {
				t.Fatalf("v6=%v frame %d: TCP checksum %#04x does not verify (%v)", v6, i+1, tcp.Checksum, err)
			}
			if !v6 && fold(sum(0, p.data[14:34])) != 0 {
				t.Fatalf("frame %d: IPv4 header checksum does not verify", i+1)
			}
		}
	}
}

// script writes a known conversation on two interleaved connections and
// returns the bytes each direction carried.
func script(c *Capture, conn1, conn2 ConnOptions) map[streamKey][]byte {
	rng := rand.New(rand.NewPCG(1, 2))
	frame := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	want := map[streamKey][]byte{}
	a, b := c.Conn(conn1), c.Conn(conn2)
	key := func(cn *Conn, d Dir) streamKey {
		k := streamKey{layers.TCPPort(cn.Client().Port()), layers.TCPPort(cn.Broker().Port())}
		if d == ToClient {
			k.src, k.dst = k.dst, k.src
		}
		return k
	}
	for i := range 6 {
		for _, cn := range []*Conn{a, b} {
			x, y := frame(50+i*400), frame(30+i*7)
			cn.Send(x, y)
			z := frame(1000 + i*300)
			cn.Reply(z)
			want[key(cn, ToBroker)] = append(append(want[key(cn, ToBroker)], x...), y...)
			want[key(cn, ToClient)] = append(want[key(cn, ToClient)], z...)
		}
	}
	a.Close()
	b.Reset()
	return want
}

func TestPerturbationsKeepBytes(t *testing.T) {
	conn2 := ConnOptions{Client: netip.MustParseAddrPort("10.9.9.9:50001"), Broker: netip.MustParseAddrPort("10.0.0.2:9093")}
	tests := []struct {
		name string
		p    Perturb
		o    ConnOptions
	}{
		{name: "clean"},
		{name: "small mss", p: Perturb{MSS: 7}},
		{name: "split size field", p: Perturb{SplitAt: []int{1, 2, 3, 5}}},
		{name: "loopback mss", p: Perturb{MSS: 65535}},
		{name: "reorder", p: Perturb{MSS: 100, Reorder: 4}},
		{name: "shuffle", p: Perturb{MSS: 50, Reorder: 8, Shuffle: true}},
		{name: "retransmit", p: Perturb{MSS: 100, RetransmitEvery: 3}},
		{name: "overlap", p: Perturb{MSS: 100, OverlapEvery: 2}},
		{name: "everything", p: Perturb{MSS: 64, SplitAt: []int{3}, Reorder: 3, RetransmitEvery: 4, OverlapEvery: 5, ACKs: true}},
		{name: "acks", p: Perturb{ACKs: true}},
		{name: "skip syn", o: ConnOptions{SkipSYN: true}},
		{name: "no syn", o: ConnOptions{NoSYN: true}, p: Perturb{MSS: 200}},
		{name: "sequence wrap", o: ConnOptions{ClientISN: 0xffffff00, BrokerISN: 0xfffffff0}, p: Perturb{MSS: 100, Reorder: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New(Options{Seed: 3, Perturb: tt.p})
			want := script(c, tt.o, conn2)
			file, err := c.Bytes()
			if err != nil {
				t.Fatal(err)
			}
			r := reassemble(t, file)
			for k, w := range want {
				if !bytes.Equal(r.data[k], w) {
					t.Errorf("%v: reassembled %d bytes, want %d (equal prefix %d)", k, len(r.data[k]), len(w), commonPrefix(r.data[k], w))
				}
				if r.skip[k] != 0 {
					t.Errorf("%v: %d bytes skipped", k, r.skip[k])
				}
			}
		})
	}
}

func commonPrefix(a, b []byte) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func TestLoss(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789"), 50) // 500 bytes: ordinals 1-5 at MSS 100
	tests := []struct {
		name string
		p    Perturb
		drop int // DropNext before the first write
		// writes after data, and the frames each Send must return (0 = lost).
		after     [][]byte
		wantFrame []bool
		want      string // the reassembled client stream, "" = data
		wantSkip  int
	}{
		{name: "drop ordinal 2", p: Perturb{MSS: 100, Drop: []int{2}},
			after: [][]byte{[]byte("tail")}, wantFrame: []bool{false, true},
			want: string(data[:100]) + string(data[200:]) + "tail", wantSkip: 100},
		{name: "drop every 2nd", p: Perturb{MSS: 100, DropEvery: 2},
			after: [][]byte{[]byte("six"), []byte("seven"), []byte("eight"), []byte("nine")}, wantFrame: []bool{false, false, true, false, true},
			want: string(data[:100]) + string(data[200:300]) + string(data[400:]) + "seven" + "nine", wantSkip: 200 + 3 + 5},
		{name: "drop next with overlap and retransmit", p: Perturb{MSS: 100, OverlapEvery: 1, RetransmitEvery: 1}, drop: 1,
			after: [][]byte{[]byte("tail")}, wantFrame: []bool{false, true},
			want: string(data[100:]) + "tail", wantSkip: 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New(Options{Perturb: tt.p})
			cn := c.Conn(ConnOptions{})
			cn.DropNext(tt.drop)
			for i, w := range append([][]byte{data}, tt.after...) {
				if got := cn.Send(w); (got != 0) != tt.wantFrame[i] {
					t.Errorf("write %d: Send returned frame %d, want complete=%v", i, got, tt.wantFrame[i])
				}
			}
			file, _ := c.Bytes()
			r := reassemble(t, file)
			k := streamKey{layers.TCPPort(cn.Client().Port()), 9092}
			if got := string(r.data[k]); got != tt.want {
				t.Errorf("reassembled %q\nwant %q", got, tt.want)
			}
			if r.skip[k] != tt.wantSkip {
				t.Errorf("skipped %d bytes, want %d", r.skip[k], tt.wantSkip)
			}
		})
	}
}

func TestCompletionFrames(t *testing.T) {
	tests := []struct {
		name string
		p    Perturb
		// want computes the expected frames from the first data frame
		// number f0 of the write.
		want func(f0 int) []int
	}{
		{name: "pipelined in one segment", want: func(f0 int) []int { return []int{f0, f0, f0} }},
		{name: "one segment each", p: Perturb{MSS: 10}, want: func(f0 int) []int { return []int{f0, f0 + 1, f0 + 2} }},
		{name: "reversed", p: Perturb{MSS: 10, Reorder: 3}, want: func(f0 int) []int { return []int{f0 + 2, f0 + 2, f0 + 2} }},
		{name: "first lost", p: Perturb{MSS: 10, Drop: []int{1}}, want: func(f0 int) []int { return []int{0, f0, f0 + 1} }},
		{name: "retransmit does not delay", p: Perturb{MSS: 10, RetransmitEvery: 1}, want: func(f0 int) []int { return []int{f0, f0 + 1, f0 + 3} }},
		{name: "shuffled pair", p: Perturb{MSS: 10, Reorder: 2}, want: func(f0 int) []int { return []int{f0 + 1, f0 + 1, f0 + 2} }},
		{name: "second lost", p: Perturb{MSS: 10, Drop: []int{2}}, want: func(f0 int) []int { return []int{f0, 0, f0 + 1} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New(Options{Perturb: tt.p})
			cn := c.Conn(ConnOptions{})
			f0 := c.Frames() + 1
			got := cn.Write(ToBroker, bytes.Repeat([]byte{1}, 10), bytes.Repeat([]byte{2}, 10), bytes.Repeat([]byte{3}, 10))
			want := tt.want(f0)
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("frames %v, want %v", got, want)
				}
			}
		})
	}
}

func TestSnaplen(t *testing.T) {
	for _, f := range []Format{FormatPCAP, FormatPCAPNG} {
		c := New(Options{Snaplen: 60, Format: f})
		DemoModern(c, ConnOptions{})
		file, err := c.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		_, pkts := readFile(t, file)
		cut := 0
		for i, p := range pkts {
			full := len(c.Packets()[i].Data)
			if p.ci.Length != full || p.ci.CaptureLength != min(60, full) || len(p.data) != p.ci.CaptureLength {
				t.Fatalf("%v frame %d: caplen %d len %d data %d, full %d", f, i+1, p.ci.CaptureLength, p.ci.Length, len(p.data), full)
			}
			if full > 60 {
				cut++
			}
		}
		if cut == 0 {
			t.Fatalf("%v: no packet was cut", f)
		}
	}
}

func TestDeterministic(t *testing.T) {
	build := func() []byte {
		c := New(Options{Seed: 9, Perturb: Perturb{MSS: 30, Reorder: 5, Shuffle: true}})
		DemoModern(c, ConnOptions{})
		DemoLegacy(c, ConnOptions{})
		b, err := c.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if !bytes.Equal(build(), build()) {
		t.Fatal("two builds of the same capture differ")
	}
}

func TestScenarioErrors(t *testing.T) {
	tests := []struct {
		name string
		run  func(c *Capture)
	}{
		{name: "mixed families", run: func(c *Capture) {
			c.Conn(ConnOptions{Client: netip.MustParseAddrPort("10.0.0.5:1"), Broker: netip.MustParseAddrPort("[::1]:9092")})
		}},
		{name: "write after close", run: func(c *Capture) {
			cn := c.Conn(ConnOptions{})
			cn.Close()
			cn.Send([]byte{1})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New(Options{})
			tt.run(c)
			if c.Err() == nil {
				t.Fatal("no error")
			}
			if _, err := c.Bytes(); err == nil {
				t.Fatal("WriteTo succeeded")
			}
		})
	}
}
