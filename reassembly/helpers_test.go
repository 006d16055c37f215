package reassembly

import (
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/kwatch/kwatch/capture"
	"github.com/kwatch/kwatch/flow"
)

var (
	cliAddr = netip.MustParseAddrPort("10.0.0.1:50000")
	brkAddr = netip.MustParseAddrPort("10.0.0.2:9092")
	t0      = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
)

// pkt describes a test segment. from is "c" (client sends) or "b" (broker
// sends) of the connection cli<->brk; flags are letters of S A F R.
type pkt struct {
	from   string
	seq    uint32
	ack    uint32
	flags  string
	data   string
	trunc  bool
	cut    int           // with trunc: bytes cut off the end, known from the IP length
	at     time.Duration // offset from t0; 0 means 1ms per frame
	cli    netip.AddrPort
	broker netip.AddrPort
}

// mkSeg builds a decoded segment the way capture's LayerDecoder would.
func mkSeg(frame uint64, tm time.Time, src, dst netip.AddrPort, sq, ack uint32, flags string, payload []byte, trunc bool) *capture.Segment {
	s := &capture.Segment{Frame: frame, Time: tm, Src: src, Dst: dst, Truncated: trunc}
	t := &s.TCP
	t.SrcPort, t.DstPort = layers.TCPPort(src.Port()), layers.TCPPort(dst.Port())
	t.Seq, t.Ack = sq, ack
	t.SYN = strings.Contains(flags, "S")
	t.ACK = strings.Contains(flags, "A")
	t.FIN = strings.Contains(flags, "F")
	t.RST = strings.Contains(flags, "R")
	t.Payload = payload
	t.SetInternalPortsForTesting()
	return s
}

// segs turns pkts into segments numbered from frame 1.
func segs(ps []pkt) []*capture.Segment {
	out := make([]*capture.Segment, 0, len(ps))
	for i, p := range ps {
		c, b := p.cli, p.broker
		if !c.IsValid() {
			c = cliAddr
		}
		if !b.IsValid() {
			b = brkAddr
		}
		src, dst := c, b
		if p.from == "b" {
			src, dst = b, c
		}
		frame := uint64(i + 1)
		at := p.at
		if at == 0 {
			at = time.Duration(frame) * time.Millisecond
		}
		s := mkSeg(frame, t0.Add(at), src, dst, p.seq, p.ack, p.flags, []byte(p.data), p.trunc)
		s.Cut = p.cut
		out = append(out, s)
	}
	return out
}

// event is one recorded Stream call.
type event struct {
	conn  int // index of the Flow in recorder.flows
	kind  string
	side  flow.Side
	data  string
	lost  int
	frame uint64
}

// recorder is an Opener whose Streams record every call.
type recorder struct {
	flows  []Flow
	events []event
	ignore func(Flow) bool
}

func (r *recorder) Open(f Flow) Stream {
	if r.ignore != nil && r.ignore(f) {
		return nil
	}
	r.flows = append(r.flows, f)
	return &recStream{r: r, conn: len(r.flows) - 1}
}

type recStream struct {
	r    *recorder
	conn int
}

func (s *recStream) Data(side flow.Side, p []byte, m flow.Meta) {
	s.r.events = append(s.r.events, event{conn: s.conn, kind: "data", side: side, data: string(p), frame: m.Frame})
}
func (s *recStream) Gap(side flow.Side, lost int, m flow.Meta) {
	s.r.events = append(s.r.events, event{conn: s.conn, kind: "gap", side: side, lost: lost, frame: m.Frame})
}
func (s *recStream) Truncated(side flow.Side, m flow.Meta) {
	s.r.events = append(s.r.events, event{conn: s.conn, kind: "trunc", side: side, frame: m.Frame})
}
func (s *recStream) Cut(side flow.Side, n int, m flow.Meta) {
	s.r.events = append(s.r.events, event{conn: s.conn, kind: "cut", side: side, lost: n, frame: m.Frame})
}
func (s *recStream) End(m flow.Meta) {
	s.r.events = append(s.r.events, event{conn: s.conn, kind: "end", frame: m.Frame})
}

// lines renders the events, merging consecutive Data calls of one side so
// that tests do not depend on how bytes were chunked. With frames, each
// line ends with @frame (the first frame of a merged run).
func (r *recorder) lines(frames bool) []string {
	var out []string
	var last *event
	var merged []event
	for _, e := range r.events {
		if last != nil && e.kind == "data" && last.kind == "data" && last.conn == e.conn && last.side == e.side {
			last.data += e.data
			continue
		}
		merged = append(merged, e)
		last = &merged[len(merged)-1]
	}
	for _, e := range merged {
		var s string
		switch e.kind {
		case "data":
			s = fmt.Sprintf("%d data %s %q", e.conn, e.side, e.data)
		case "gap":
			s = fmt.Sprintf("%d gap %s %d", e.conn, e.side, e.lost)
		case "cut":
			s = fmt.Sprintf("%d cut %s %d", e.conn, e.side, e.lost)
		case "trunc":
			s = fmt.Sprintf("%d trunc %s", e.conn, e.side)
		case "end":
			s = fmt.Sprintf("%d end", e.conn)
		}
		if frames {
			s += fmt.Sprintf(" @%d", e.frame)
		}
		out = append(out, s)
	}
	return out
}

// nopStream discards everything: for allocation tests and benchmarks.
type nopStream struct{ n int }

func (s *nopStream) Data(_ flow.Side, p []byte, _ flow.Meta) { s.n += len(p) }
func (s *nopStream) Gap(flow.Side, int, flow.Meta)           {}
func (s *nopStream) Truncated(flow.Side, flow.Meta)          {}
func (s *nopStream) Cut(flow.Side, int, flow.Meta)           {}
func (s *nopStream) End(flow.Meta)                           {}
