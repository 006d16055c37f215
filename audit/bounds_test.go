package audit

import (
	"bytes"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/kwatch/kwatch/decode"
	"github.com/kwatch/kwatch/flow"
)

// connSize is a measure of one connection's state that would grow if the
// state kept anything per request.
func connSize(c *connState) int {
	n := len(c.book.judged) + len(c.book.members)
	if c.pending != nil {
		for _, p := range c.pending.entries {
			if p.used {
				n++
			}
		}
	}
	return n
}

func TestBoundedConnState(t *testing.T) {
	a := New(Options{})
	e := &decode.Event{Kind: decode.KindRequest, Conn: connA, FromStart: true, APIKey: kCGHB, APIVersion: 1,
		HeaderVersion: 2, InstanceID: v4A, HasInstanceID: true, ClientID: []byte("app")}
	e.Body = decode.Body{Decoded: true, Group: "g", MemberID: JavaString(v4A), HasMemberID: true, MemberEpoch: 1}
	var size int
	for i := 0; i < 1_000_000; i++ {
		e.Frame, e.Time, e.CorrelationID = uint64(i+1), t0.Add(time.Duration(i)*time.Microsecond), int32(i)
		a.Event(e) // heartbeats never answered: the pending table must not grow
		if i == 1000 {
			size = connSize(a.conn.conns[connA])
		}
	}
	c := a.conn.conns[connA]
	if got := connSize(c); got != size || got > maxPending+2 {
		t.Errorf("connection state grew: %d after 1000 requests, %d after 1e6", size, got)
	}
	if c.cidRepeats != 999_999 || a.conn.n.requests[2] != 1_000_000 {
		t.Errorf("counters: %d repeats, %d requests", c.cidRepeats, a.conn.n.requests[2])
	}
	if a.conn.n.pendingEvicted == 0 {
		t.Error("pending evictions not counted")
	}
}

func TestInstanceEviction(t *testing.T) {
	s := newSC(Options{MaxInstances: 3})
	for i := 0; i < 5; i++ {
		c := connA
		c.Client = netip.AddrPortFrom(c.Client.Addr(), uint16(1000+i))
		s.req(c, kMetadata, 12, inst(decode.UUID{15: byte(i + 10)}))
	}
	rep := s.finish()
	if rep.Totals.EvictedInstances != 2 || len(rep.Instances) != 3 {
		t.Fatalf("evicted %d, rows %d", rep.Totals.EvictedInstances, len(rep.Instances))
	}
	// Oldest seen first: the survivors are the last three.
	for _, in := range rep.Instances {
		if in.FirstFrame < 3 {
			t.Errorf("row of frame %d survived", in.FirstFrame)
		}
	}
}

func TestClosedConnectionsDropped(t *testing.T) {
	s := newSC(Options{ClosedGrace: time.Second})
	s.req(connA, kMetadata, 12)
	s.end(connA)
	s.now = s.now.Add(500 * time.Millisecond)
	s.req(connB, kMetadata, 12)
	if _, ok := s.a.conn.conns[connA]; !ok {
		t.Fatal("closed connection dropped before its grace")
	}
	s.now = s.now.Add(2 * time.Second)
	s.req(connB, kMetadata, 12)
	if _, ok := s.a.conn.conns[connA]; ok {
		t.Fatal("closed connection kept after its grace")
	}
	if rep := s.finish(); rep.Totals.Connections != 2 || len(rep.Instances) != 2 {
		t.Errorf("totals %+v rows %d", rep.Totals, len(rep.Instances))
	}
}

func TestLateResponseWithinGrace(t *testing.T) {
	s := newSC(Options{})
	c := s.req(connA, kCGHB, 1, hb("g", "", 0))
	s.end(connA)
	s.resp(connA, kCGHB, 1, c, errCode(0))
	if counts(s.got)["broker-accepted-invalid"] != 1 {
		t.Errorf("got %v", counts(s.got))
	}
}

// TestOrdinaryEventAllocs holds Event at zero allocations for ordinary
// requests and responses of a known connection.
func TestOrdinaryEventAllocs(t *testing.T) {
	a := New(Options{})
	req := &decode.Event{Kind: decode.KindRequest, Conn: connA, FromStart: true, Time: t0, APIKey: kProduce, APIVersion: 9,
		HeaderVersion: 2, InstanceID: v4A, HasInstanceID: true, ClientID: []byte("orders-app")}
	resp := &decode.Event{Kind: decode.KindResponse, Conn: connA, FromStart: true, Time: t0, APIKey: kProduce, APIVersion: 9, HeaderVersion: 1}
	a.Event(req)
	a.Event(resp)
	var corr int32
	allocs := testing.AllocsPerRun(1000, func() {
		corr++
		req.CorrelationID, resp.CorrelationID = corr, corr
		a.Event(req)
		a.Event(resp)
	})
	if allocs != 0 {
		t.Errorf("%.1f allocs per request/response pair, want 0", allocs)
	}
}

func BenchmarkEvent(b *testing.B) {
	a := New(Options{})
	const conns = 64
	reqs := make([]decode.Event, conns)
	resps := make([]decode.Event, conns)
	for i := range reqs {
		id := flow.ConnID{Client: netip.AddrPortFrom(netip.MustParseAddr("10.0.0.5"), uint16(30000+i)),
			Broker: netip.MustParseAddrPort("10.0.0.9:9092"), StartFrame: uint64(i + 1)}
		u := v4A
		u[15] = byte(i)
		reqs[i] = decode.Event{Kind: decode.KindRequest, Conn: id, FromStart: true, Time: t0, APIKey: kProduce, APIVersion: 9,
			HeaderVersion: 2, InstanceID: u, HasInstanceID: true, ClientID: []byte("orders-app"), Size: 1000}
		resps[i] = decode.Event{Kind: decode.KindResponse, Conn: id, FromStart: true, Time: t0, APIKey: kProduce, APIVersion: 9, HeaderVersion: 1}
	}
	b.ReportAllocs()
	b.SetBytes(1000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := i % conns
		reqs[k].CorrelationID, resps[k].CorrelationID = int32(i), int32(i)
		reqs[k].Frame = uint64(i)
		a.Event(&reqs[k])
		a.Event(&resps[k])
	}
}

// TestFindingsCappedByBytes: kept findings stop at MaxFindingBytes (or
// MaxFindings); the rest are counted, and the text report says so.
func TestFindingsCappedByBytes(t *testing.T) {
	tests := []struct {
		name     string
		o        Options
		wantDrop bool
	}{
		{name: "defaults keep all", o: Options{}},
		{name: "byte cap", o: Options{MaxFindingBytes: 20 << 10}, wantDrop: true},
		{name: "count cap", o: Options{MaxFindings: 10}, wantDrop: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSC(tt.o)
			ids := []decode.UUID{v4A, {15: 9}}
			for i := 0; i < 2000; i++ {
				s.req(connA, kMetadata, 12, inst(ids[i%2])) // instance-id-changed each time
			}
			rep := s.finish()
			tot := rep.Totals
			if tot.Findings < 1000 {
				t.Fatalf("only %d findings: the scenario does not fire", tot.Findings)
			}
			if uint64(len(rep.Findings))+tot.FindingsNotKept != tot.Findings {
				t.Errorf("kept %d + not kept %d != %d", len(rep.Findings), tot.FindingsNotKept, tot.Findings)
			}
			if (tot.FindingsNotKept > 0) != tt.wantDrop {
				t.Errorf("not kept %d, want drops %v", tot.FindingsNotKept, tt.wantDrop)
			}
			size := 0
			for i := range rep.Findings {
				size += findingSize(&rep.Findings[i])
			}
			if lim := tt.o.MaxFindingBytes; lim > 0 && size > lim {
				t.Errorf("kept %d bytes of findings, cap %d", size, lim)
			}
			var buf bytes.Buffer
			if err := rep.WriteText(&buf, false); err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(buf.String(), "more not kept"); got != tt.wantDrop {
				t.Errorf("text report mentions findings not kept: %v, want %v", got, tt.wantDrop)
			}
		})
	}
}
