package capture

import (
	"bytes"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/kwatch/kwatch/internal/pcapgen"
)

// bigPayload is a TCP payload long enough to need several fragments.
var bigPayload = bytes.Repeat([]byte("0123456789abcdef"), 100)

func fragFrames(t testing.TB, v6 bool, size int, id uint32) [][]byte {
	t.Helper()
	p := v4
	if v6 {
		p = v6pkt()
	}
	p.payload = bigPayload
	ip, _ := ipTCP(t, p)
	if !v6 {
		ip[4], ip[5] = byte(id>>8), byte(id) // the IPv4 identification
	}
	et := layers.EthernetTypeIPv4
	if v6 {
		et = layers.EthernetTypeIPv6
	}
	return pcapgen.FragmentFrame(ethernet(t, et, nil, ip), size, id)
}

func v6pkt() pkt { return v6 }

// feed decodes frames in order at times from start, 1 ms apart; it
// returns the decoded segments' payloads and the frames they came with.
func feed(d *LayerDecoder, frames [][]byte, start time.Time) (payloads [][]byte, at []uint64) {
	var s Segment
	for i, b := range frames {
		p := Packet{Frame: uint64(i + 1), Time: start.Add(time.Duration(i) * time.Millisecond), Data: b, CaptureLength: len(b), Length: len(b), LinkType: linkEthernet}
		if d.Decode(&p, &s) {
			payloads = append(payloads, bytes.Clone(s.TCP.Payload))
			at = append(at, s.Frame)
		}
	}
	return payloads, at
}

func reverse(fs [][]byte) [][]byte {
	out := make([][]byte, len(fs))
	for i, f := range fs {
		out[len(fs)-1-i] = f
	}
	return out
}

// TestFragmentsReassemble: fragments in any order give one segment, in the
// frame of the last fragment seen, with the whole payload.
func TestFragmentsReassemble(t *testing.T) {
	for _, v6 := range []bool{false, true} {
		fs := fragFrames(t, v6, 512, 9)
		if len(fs) < 3 {
			t.Fatalf("%d fragments", len(fs))
		}
		mid := append([][]byte{fs[1]}, append(reverse(fs[2:]), fs[0])...)
		dup := append(bytes.Clone(fs[0]), 0) // a duplicate (trailing Ethernet padding)
		for _, tt := range []struct {
			name   string
			frames [][]byte
			dups   uint64
		}{
			{"in order", fs, 0},
			{"reversed", reverse(fs), 0},
			{"first last", mid, 0},
			{"duplicate", append([][]byte{fs[0], dup}, fs[1:]...), 1},
		} {
			d := NewLayerDecoder()
			got, at := feed(d, tt.frames, time.Unix(100, 0))
			if len(got) != 1 || !bytes.Equal(got[0], bigPayload) || at[0] != uint64(len(tt.frames)) {
				t.Fatalf("v6=%v %s: %d segments at %v", v6, tt.name, len(got), at)
			}
			st := d.Fragments()
			if st.Reassembled != 1 || st.Duplicates != tt.dups || st.Dropped != [numFragDrops]uint64{} {
				t.Errorf("v6=%v %s: stats %+v", v6, tt.name, st)
			}
			if d.Stats()[ReasonFragment] != uint64(len(tt.frames)-1) {
				t.Errorf("v6=%v %s: %d fragment outcomes", v6, tt.name, d.Stats()[ReasonFragment])
			}
		}
	}
}

// TestFragmentsInsideAndOutsideTunnels: the inner packet's fragments, each
// in its own VXLAN packet, and a VXLAN packet whose outer IP is fragmented.
func TestFragmentsInsideAndOutsideTunnels(t *testing.T) {
	for _, v6 := range []bool{false, true} {
		var inner [][]byte
		for _, f := range fragFrames(t, v6, 256, 3) {
			b, _, err := pcapgen.Wrap(pcapgen.EncapVXLAN, linkEthernet, f, len(f), 1)
			if err != nil {
				t.Fatal(err)
			}
			inner = append(inner, b)
		}
		whole := fragFrames(t, v6, 1<<16, 3)[0]
		enc := pcapgen.EncapVXLAN
		if v6 {
			enc = pcapgen.EncapIPv6Outer
		}
		b, _, err := pcapgen.Wrap(enc, linkEthernet, whole, len(whole), 77)
		if err != nil {
			t.Fatal(err)
		}
		outer := pcapgen.FragmentFrame(b, 400, 5)
		// Both: the inner fragments, each wrapped and then fragmented.
		var both [][]byte
		for _, f := range inner {
			both = append(both, reverse(pcapgen.FragmentFrame(f, 200, uint32(len(both))))...)
		}
		for name, frames := range map[string][][]byte{"inner": inner, "outer": outer, "both": both} {
			d := NewLayerDecoder()
			got, _ := feed(d, frames, time.Unix(100, 0))
			if len(got) != 1 || !bytes.Equal(got[0], bigPayload) {
				t.Errorf("v6=%v %s: %d segments, stats %+v", v6, name, len(got), d.Fragments())
			}
		}
	}
}

// TestFragmentsDropped: every bound bites, is counted, and leaves no
// segment and no held bytes behind.
func TestFragmentsDropped(t *testing.T) {
	fs := fragFrames(t, false, 512, 9)
	overlap := bytes.Clone(fs[1])
	overlap[14+7] -= 8 // offset one unit earlier: overlaps the first fragment
	odd := bytes.Clone(fs[0])
	odd[14+3]-- // a non-last fragment whose length is not a multiple of 8
	cut := bytes.Clone(fs[1])
	tooBig := bytes.Clone(fs[1])
	tooBig[14+6], tooBig[14+7] = 0x3f, 0xff // offset 65528: ends past 65535
	for _, tt := range []struct {
		name   string
		frames [][]byte
		length int // of the last frame on the wire; 0: as captured
		setup  func(*fragTable)
		want   FragDrop
	}{
		{name: "overlap", frames: [][]byte{fs[0], overlap}, want: FragOverlap},
		{name: "odd length", frames: [][]byte{odd[:len(odd)-1]}, want: FragMalformed},
		{name: "too big", frames: [][]byte{fs[0], tooBig}, want: FragTooBig},
		{name: "truncated", frames: [][]byte{fs[0], cut[:100]}, length: len(cut), want: FragTruncated},
		{name: "timeout", frames: [][]byte{fs[0], fs[1]}, setup: func(t *fragTable) { t.timeout = 0 }, want: FragTimeout},
		{name: "table full", frames: [][]byte{fs[0], fragFrames(t, false, 512, 10)[0]}, setup: func(t *fragTable) { t.maxDatagrams = 1 }, want: FragTableFull},
		{name: "memory", frames: [][]byte{fs[0]}, setup: func(t *fragTable) { t.maxHeld = 100 }, want: FragMemory},
		{name: "too many", frames: fragFrames(t, false, 8, 9)[:fragMaxPieces+1], want: FragTooMany},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := NewLayerDecoder()
			if tt.setup != nil {
				tt.setup(&d.frags)
			}
			var s Segment
			for i, b := range tt.frames {
				p := Packet{Frame: uint64(i + 1), Time: time.Unix(100, int64(i)), Data: b, CaptureLength: len(b), Length: len(b), LinkType: linkEthernet}
				if i == len(tt.frames)-1 && tt.length != 0 {
					p.Length = tt.length
				}
				if d.Decode(&p, &s) {
					t.Fatalf("frame %d decoded", i+1)
				}
			}
			if got := d.Fragments().Dropped[tt.want]; got != 1 {
				t.Errorf("dropped %v = %d, want 1 (%+v)", tt.want, got, d.Fragments())
			}
			if tt.want != FragTableFull && tt.want != FragTimeout && (d.frags.held != 0 || len(d.frags.index) != 0) {
				t.Errorf("after the drop: %d bytes in %d datagrams held", d.frags.held, len(d.frags.index))
			}
		})
	}
}

// TestFragmentsMemoryBounded: a flood of first fragments that never
// complete keeps the table within its bounds.
func TestFragmentsMemoryBounded(t *testing.T) {
	d := NewLayerDecoder()
	var s Segment
	for i := range 3000 {
		b := fragFrames(t, i%2 == 0, 1024, uint32(i))[0]
		p := Packet{Time: time.Unix(100, 0), Data: b, CaptureLength: len(b), Length: len(b), LinkType: linkEthernet}
		d.Decode(&p, &s)
	}
	ft := &d.frags
	if len(ft.index) > fragMaxDatagrams || ft.held > fragMaxHeld || ft.spare > fragMaxHeld || len(ft.slots) > fragMaxDatagrams {
		t.Fatalf("%d datagrams, %d slots, %d bytes held, %d spare", len(ft.index), len(ft.slots), ft.held, ft.spare)
	}
	if st := d.Fragments(); st.Dropped[FragTableFull] != 3000-fragMaxDatagrams {
		t.Errorf("stats %+v", st)
	}
}

// TestFragmentsAllocs: reassembly in the steady state allocates nothing.
func TestFragmentsAllocs(t *testing.T) {
	d := NewLayerDecoder()
	sets := [][][]byte{fragFrames(t, false, 512, 1), fragFrames(t, true, 512, 2)}
	for _, fs := range sets {
		feed(d, fs, time.Unix(100, 0))
	}
	var s Segment
	for _, fs := range sets {
		decodeAll := func() {
			for _, b := range fs {
				p := Packet{Time: time.Unix(100, 0), Data: b, CaptureLength: len(b), Length: len(b), LinkType: linkEthernet}
				d.Decode(&p, &s)
			}
		}
		if allocs := testing.AllocsPerRun(50, decodeAll); allocs != 0 {
			t.Errorf("reassembly allocates %v times per datagram", allocs)
		}
	}
	if d.Fragments().Reassembled < 100 {
		t.Errorf("reassembled %d datagrams", d.Fragments().Reassembled)
	}
}
