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

// opsStream records ReassembledSG and ReassemblyComplete calls. It starts
// a direction only at a SYN, so that StartAt is what starts the others.
type opsStream struct{ got []string }

func (s *opsStream) New(_, _ gopacket.Flow, _ *layers.TCP, _ AssemblerContext) Stream { return s }
func (s *opsStream) Accept(*layers.TCP, gopacket.CaptureInfo, TCPFlowDirection, Sequence, Sequence, *bool, AssemblerContext) bool {
	return true
}
func (s *opsStream) ReassembledSG(sg ScatterGather, _ AssemblerContext) {
	_, _, end, skip := sg.Info()
	n, _ := sg.Lengths()
	s.got = append(s.got, fmt.Sprintf("skip=%d/%d data=%q end=%v", skip, sg.SkipReason(), sg.Fetch(n), end))
}
func (s *opsStream) ReassemblyComplete(AssemblerContext) bool {
	s.got = append(s.got, "complete")
	return true
}

// syn is the call a SYN makes: the start, empty.
const syn = `skip=0/0 data="" end=false`

// TestConnOps: StartAt, SkipTo and Close act on one direction of one
// connection as the segments they stand for would, and on nothing else.
func TestConnOps(t *testing.T) {
	cli, brk := netip.MustParseAddrPort("10.0.0.1:5000"), netip.MustParseAddrPort("10.0.0.2:9092")
	type step struct {
		op   string // "seg" (client data), "syn", "start", "skip", "cut", "close", "rclose" (the broker's side)
		seq  uint32
		data string
	}
	cases := []struct {
		name   string
		steps  []step
		pooled bool
		want   []string
	}{
		{"start then data", []step{{"syn", 99, ""}, {"rstart", 500, ""}, {"rseg", 500, "ab"}}, true,
			[]string{syn, `skip=0/0 data="ab" end=false`}},
		{"data without a start waits", []step{{"syn", 99, ""}, {"rseg", 500, "ab"}}, true, []string{syn}},
		{"data queued before the start goes with the first in order", []step{{"syn", 99, ""}, {"rseg", 502, "c"}, {"rstart", 500, ""}, {"rseg", 500, "ab"}}, true,
			[]string{syn, `skip=0/0 data="abc" end=false`}},
		{"start of a started direction changes nothing", []step{{"syn", 99, ""}, {"start", 300, ""}, {"seg", 100, "ab"}}, true,
			[]string{syn, `skip=0/0 data="ab" end=false`}},
		{"skip to queued data", []step{{"syn", 99, ""}, {"seg", 110, "xy"}, {"skip", 110, ""}}, true,
			[]string{syn, `skip=10/1 data="xy" end=false`}},
		{"skip with nothing queued, as a cut", []step{{"syn", 99, ""}, {"cut", 150, ""}, {"seg", 150, "z"}}, true,
			[]string{syn, `skip=50/2 data="" end=false`, `skip=0/0 data="z" end=false`}},
		{"skip drops queued bytes before to", []step{{"syn", 99, ""}, {"seg", 105, "abcdef"}, {"skip", 108, ""}}, true,
			[]string{syn, `skip=8/1 data="def" end=false`}},
		{"skip backwards changes nothing", []step{{"syn", 99, ""}, {"seg", 100, "ab"}, {"skip", 101, ""}, {"seg", 102, "c"}}, true,
			[]string{syn, `skip=0/0 data="ab" end=false`, `skip=0/0 data="c" end=false`}},
		{"close both directions", []step{{"syn", 99, ""}, {"seg", 100, "ab"}, {"close", 0, ""}, {"rclose", 7, ""}}, true,
			[]string{syn, `skip=0/0 data="ab" end=false`, `skip=0/0 data="" end=true`, `skip=0/0 data="" end=true`, "complete"}},
		{"a later skip's reason is its own", []step{{"syn", 99, ""}, {"cut", 110, ""}, {"seg", 120, "q"}, {"close", 0, ""}}, true,
			[]string{syn, `skip=10/2 data="" end=false`, `skip=0/0 data="" end=true`}},
		{"no connection", []step{{"start", 1, ""}}, false, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := &opsStream{}
			a := NewAssembler(NewStreamPool(s))
			ts := time.Unix(1, 0)
			ac := &eqCtx{ci: gopacket.CaptureInfo{Timestamp: ts}}
			pooled := true
			for _, st := range c.steps {
				tcp := &layers.TCP{SrcPort: 5000, DstPort: 9092, Seq: st.seq, BaseLayer: layers.BaseLayer{Payload: []byte(st.data)}}
				switch st.op {
				case "syn":
					tcp.SYN = true
					a.AssembleAddrs(cli, brk, tcp, ts, 1, ac)
				case "seg":
					a.AssembleAddrs(cli, brk, tcp, ts, 2, ac)
				case "rseg":
					tcp.SrcPort, tcp.DstPort = 9092, 5000
					a.AssembleAddrs(brk, cli, tcp, ts, 3, ac)
				case "rstart":
					pooled = a.StartAt(brk, cli, Sequence(st.seq), ts)
				case "start":
					pooled = a.StartAt(cli, brk, Sequence(st.seq), ts)
				case "skip":
					pooled = a.SkipTo(cli, brk, Sequence(st.seq), SkipLost, ts, ac)
				case "cut":
					pooled = a.SkipTo(cli, brk, Sequence(st.seq), SkipCut, ts, ac)
				case "close":
					pooled = a.Close(cli, brk, Sequence(st.seq), ts, ac)
				case "rclose":
					pooled = a.Close(brk, cli, Sequence(st.seq), ts, ac)
				}
			}
			if pooled != c.pooled {
				t.Errorf("pooled %v, want %v", pooled, c.pooled)
			}
			if !slices.Equal(s.got, c.want) {
				t.Errorf("calls\n%q\nwant\n%q", s.got, c.want)
			}
		})
	}
}

// frameStream records each piece ReassembledSG hands it as "frame:length".
type frameStream struct{ got []string }

func (s *frameStream) New(_, _ gopacket.Flow, _ *layers.TCP, _ AssemblerContext) Stream { return s }
func (s *frameStream) Accept(_ *layers.TCP, _ gopacket.CaptureInfo, _ TCPFlowDirection, _, _ Sequence, start *bool, _ AssemblerContext) bool {
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

// posStream records the positions a Stream reads: those Accept is given,
// and NextSeq of its direction during ReassembledSG.
type posStream struct {
	a        *Assembler
	cli, brk netip.AddrPort
	got      []string
}

func (s *posStream) New(_, _ gopacket.Flow, _ *layers.TCP, _ AssemblerContext) Stream { return s }
func (s *posStream) Accept(_ *layers.TCP, _ gopacket.CaptureInfo, _ TCPFlowDirection, next, rev Sequence, _ *bool, _ AssemblerContext) bool {
	s.got = append(s.got, fmt.Sprintf("accept %d %d", next, rev))
	return true
}

// queued records where the client's queue starts, after a segment.
func (s *posStream) queued() {
	if q, ok := s.a.Queued(s.cli, s.brk); ok {
		s.got = append(s.got, fmt.Sprintf("queued %d", q))
	}
}
func (s *posStream) ReassembledSG(sg ScatterGather, _ AssemblerContext) {
	dir, _, end, _ := sg.Info()
	src, dst := s.cli, s.brk
	if dir == TCPDirServerToClient {
		src, dst = dst, src
	}
	s.got = append(s.got, fmt.Sprintf("sg %d end=%v", s.a.NextSeq(src, dst), end))
}
func (s *posStream) ReassemblyComplete(AssemblerContext) bool { return false }

// TestNextSeqOwned: the Assembler is the one owner of each direction's
// position and queue. Accept is given both directions' positions (negative
// before a start); during ReassembledSG NextSeq is past the bytes
// delivered, in order or from the queue, and not yet past a FIN, which
// counts once it is handled; Queued is where the first data queued ahead
// of a hole starts.
func TestNextSeqOwned(t *testing.T) {
	cli, brk := netip.MustParseAddrPort("10.0.0.1:5000"), netip.MustParseAddrPort("10.0.0.2:9092")
	type seg struct {
		fromBroker, syn, fin bool
		seq                  uint32
		data                 string
	}
	cases := []struct {
		name string
		segs []seg
		want []string
	}{
		{"handshake", []seg{{syn: true, seq: 99}, {fromBroker: true, syn: true, seq: 499}},
			[]string{"accept -1 -1", "sg 100 end=false", "accept -1 100", "sg 500 end=false"}},
		{"in order", []seg{{syn: true, seq: 99}, {seq: 100, data: "ab"}, {seq: 102, data: "c"}},
			[]string{"accept -1 -1", "sg 100 end=false", "accept 100 -1", "sg 102 end=false", "accept 102 -1", "sg 103 end=false"}},
		{"queued data delivered with the late segment", []seg{{syn: true, seq: 99}, {seq: 105, data: "x"}, {seq: 100, data: "abcde"}},
			[]string{"accept -1 -1", "sg 100 end=false", "accept 100 -1", "queued 105", "accept 100 -1", "sg 106 end=false"}},
		{"the queue starts at its first segment", []seg{{syn: true, seq: 99}, {seq: 110, data: "y"}, {seq: 105, data: "x"}, {seq: 100, data: "ab"}},
			[]string{"accept -1 -1", "sg 100 end=false", "accept 100 -1", "queued 110", "accept 100 -1", "queued 105", "accept 100 -1", "sg 102 end=false", "queued 105"}},
		{"a FIN counts after it is delivered", []seg{{syn: true, seq: 99}, {seq: 100, data: "ab", fin: true}, {fromBroker: true, syn: true, seq: 499}},
			[]string{"accept -1 -1", "sg 100 end=false", "accept 100 -1", "sg 102 end=true", "accept -1 103", "sg 500 end=false"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := &posStream{cli: cli, brk: brk}
			s.a = NewAssembler(NewStreamPool(s))
			for i, g := range c.segs {
				src, dst := cli, brk
				if g.fromBroker {
					src, dst = brk, cli
				}
				tcp := &layers.TCP{SrcPort: layers.TCPPort(src.Port()), DstPort: layers.TCPPort(dst.Port()), Seq: g.seq, SYN: g.syn, FIN: g.fin,
					BaseLayer: layers.BaseLayer{Payload: []byte(g.data)}}
				ts := time.Unix(int64(i+1), 0)
				s.a.AssembleAddrs(src, dst, tcp, ts, uint64(i+1), &eqCtx{ci: gopacket.CaptureInfo{Timestamp: ts}})
				s.queued()
			}
			if !slices.Equal(s.got, c.want) {
				t.Errorf("positions\n%q\nwant\n%q", s.got, c.want)
			}
			if n := s.a.NextSeq(cli, netip.MustParseAddrPort("10.0.0.3:9092")); n >= 0 {
				t.Errorf("NextSeq of a connection not pooled: %d, want negative", n)
			}
		})
	}
}
