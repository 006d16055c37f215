package capture

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	"github.com/kwatch/kwatch/internal/pcapgen"
)

// tunnelSeeds are wrapped packets, their headers cut at every tunnel
// boundary, lengths made huge, and tunnels nested past the bound.
func tunnelSeeds(t testing.TB) [][]byte {
	var seeds [][]byte
	cases := decodeCases(t)
	for _, enc := range pcapgen.Encaps() {
		p := wrapped(t, enc, cases[0])
		seeds = append(seeds, p.Data)
		for _, cut := range []int{14 + 20 + 4, 14 + 20 + 8, 14 + 20 + 12, 14 + 20 + 16, 14 + 20 + 30} {
			seeds = append(seeds, p.Data[:min(cut, len(p.Data))])
		}
		huge := bytes.Clone(p.Data)
		binary.BigEndian.PutUint16(huge[14+2:], 0xffff) // outer IP length
		huge[14+20+8] |= 0x3f                           // GENEVE option length, or anything there
		seeds = append(seeds, huge)
	}
	nested := cases[0].data
	for range maxTunnels + 2 {
		nested, _, _ = pcapgen.Wrap(pcapgen.EncapIPIP, linkEthernet, nested, len(nested), 1)
	}
	return append(seeds, nested)
}

// FuzzTunnelFragments decodes a sequence of Ethernet packets (the input
// cut at 0xff 0xfe markers) with one decoder, so that fragments meet in
// its table. Invariants: never panics; a segment's payload lies inside its
// packet or the decoder's reassembly buffer; the table stays in its bounds.
func FuzzTunnelFragments(f *testing.F) {
	for _, s := range tunnelSeeds(f) {
		f.Add(s)
	}
	for _, v6 := range []bool{false, true} {
		fs := fragFrames(f, v6, 256, 4)
		f.Add(bytes.Join(fs, []byte{0xff, 0xfe}))
		f.Add(bytes.Join(reverse(fs), []byte{0xff, 0xfe}))
		f.Add(bytes.Join([][]byte{fs[0], fs[0], fs[1][:40], fs[2]}, []byte{0xff, 0xfe}))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d := NewLayerDecoder()
		var s Segment
		for i, b := range bytes.Split(data, []byte{0xff, 0xfe}) {
			p := Packet{Frame: uint64(i + 1), Time: time.Unix(int64(i), 0), Data: b, CaptureLength: len(b), Length: len(b), LinkType: linkEthernet}
			if !d.Decode(&p, &s) {
				if d.Reason() == ReasonNone {
					t.Fatal("Decode failed without a reason")
				}
				continue
			}
			if !inside(s.TCP.Payload, b) && !inside(s.TCP.Payload, d.frags.out) {
				t.Fatal("payload neither in the packet nor in the reassembly buffer")
			}
		}
		ft := &d.frags
		if len(ft.index) > ft.maxDatagrams || ft.held > ft.maxHeld || ft.spare > ft.maxHeld {
			t.Fatalf("table out of bounds: %d datagrams, %d held, %d spare", len(ft.index), ft.held, ft.spare)
		}
	})
}

// inside reports whether sub lies within b's bytes.
func inside(sub, b []byte) bool {
	if len(sub) == 0 {
		return true
	}
	start := cap(b) - cap(sub)
	return start >= 0 && start+len(sub) <= len(b) && &b[start] == &sub[0]
}
