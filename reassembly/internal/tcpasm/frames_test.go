package tcpasm

import (
	"fmt"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// frameStream records each piece ReassembledSG hands it as "frame:length".
type frameStream struct{ got []string }

func (s *frameStream) New(_, _ gopacket.Flow, _ *layers.TCP, _ AssemblerContext) Stream { return s }
func (s *frameStream) Accept(_ *layers.TCP, _ gopacket.CaptureInfo, _ TCPFlowDirection, _ Sequence, start *bool, _ AssemblerContext) bool {
	*start = true
	return true
}
func (s *frameStream) ReassembledSG(sg ScatterGather, _ AssemblerContext) {
	sg.Pieces(func(b []byte, frame uint64, ts time.Time) {
		s.got = append(s.got, fmt.Sprintf("%d:%d@%d", frame, len(b), ts.Unix()))
	})
}
func (s *frameStream) ReassemblyComplete(AssemblerContext) bool { return true }

// TestPiecesCarryFrames: bytes delivered in order, from pages queued out of
// order (one segment cut into several pages), or after a flush past a
// hole, carry the frame number and time their segment was assembled with.
func TestPiecesCarryFrames(t *testing.T) {
	type seg struct {
		frame uint64
		seq   uint32
		n     int
	}
	cases := []struct {
		name  string
		segs  []seg
		flush bool
		want  []string
	}{
		{"in order", []seg{{1, 100, 10}, {2, 110, 5}}, false, []string{"1:10@1", "2:5@2"}},
		{"queued behind a late segment", []seg{{1, 100, 10}, {2, 120, 5}, {3, 110, 10}}, false,
			[]string{"1:10@1", "3:10@3", "2:5@2"}},
		{"one segment over several pages", []seg{{1, 100, 10}, {2, 110 + 10, 2 * pageBytes}, {3, 110, 10}}, false,
			[]string{"1:10@1", "3:10@3", fmt.Sprintf("2:%d@2", pageBytes), fmt.Sprintf("2:%d@2", pageBytes)}},
		{"flushed past a hole", []seg{{1, 100, 10}, {7, 200, 4}}, true, []string{"1:10@1", "7:4@7"}},
	}
	src, dst := netip.MustParseAddrPort("10.0.0.1:5000"), netip.MustParseAddrPort("10.0.0.2:9092")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := &frameStream{}
			a := NewAssembler(NewStreamPool(s))
			for _, g := range c.segs {
				tcp := &layers.TCP{SrcPort: 5000, DstPort: 9092, Seq: g.seq, BaseLayer: layers.BaseLayer{Payload: make([]byte, g.n)}}
				ts := time.Unix(int64(g.frame), 0)
				a.AssembleAddrs(src, dst, tcp, ts, g.frame, &eqCtx{ci: gopacket.CaptureInfo{Timestamp: ts}})
			}
			if c.flush {
				a.FlushAll()
			}
			if !slices.Equal(s.got, c.want) {
				t.Errorf("pieces %v, want %v", s.got, c.want)
			}
		})
	}
}
