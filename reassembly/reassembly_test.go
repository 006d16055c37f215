package reassembly

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/kwatch/kwatch/flow"
)

// handshake opens cli->brk with client ISN 1000 and broker ISN 5000.
var handshake = []pkt{
	{from: "c", seq: 1000, flags: "S"},
	{from: "b", seq: 5000, ack: 1001, flags: "SA"},
	{from: "c", seq: 1001, ack: 5001, flags: "A"},
}

func with(ps ...[]pkt) []pkt { return slices.Concat(ps...) }

var (
	cli2   = netip.MustParseAddrPort("10.0.0.3:50001")
	lowCli = netip.MustParseAddrPort("10.0.0.1:5000")
)

const closeFrame = 999

func TestReassembly(t *testing.T) {
	fromStart := Flow{ConnID: flow.ConnID{Client: cliAddr, Broker: brkAddr, StartFrame: 1}, FromStart: true}
	midStream := Flow{ConnID: flow.ConnID{Client: cliAddr, Broker: brkAddr, StartFrame: 1}}
	tests := []struct {
		name  string
		opts  Options
		pkts  []pkt
		close bool // call Close(closeFrame) at the end
		want  []string
		flows []Flow
	}{
		{
			name: "clean handshake both ways, FIN ends",
			pkts: with(handshake, []pkt{
				{from: "c", seq: 1001, ack: 5001, flags: "A", data: "hello"},
				{from: "b", seq: 5001, ack: 1006, flags: "A", data: "world"},
				{from: "c", seq: 1006, ack: 5006, flags: "FA"},
				{from: "b", seq: 5006, ack: 1007, flags: "FA"},
				{from: "c", seq: 1007, ack: 5007, flags: "A"}, // must not open a connection
			}),
			want:  []string{`0 data client "hello" @4`, `0 data broker "world" @5`, `0 end @7`},
			flows: []Flow{fromStart},
		},
		{
			name: "data split across segments",
			pkts: with(handshake, []pkt{
				{from: "c", seq: 1001, flags: "A", data: "hel"},
				{from: "c", seq: 1004, flags: "A", data: "lo"},
			}),
			close: true,
			want:  []string{`0 data client "hello" @4`, `0 end @5`},
			flows: []Flow{fromStart},
		},
		{
			name: "reordered: released by the segment completing the run",
			pkts: with(handshake, []pkt{
				{from: "c", seq: 1004, flags: "A", data: "lo"},
				{from: "c", seq: 1001, flags: "A", data: "hel"},
				{from: "b", seq: 5004, flags: "A", data: "ld"},
				{from: "b", seq: 5001, flags: "A", data: "wor"},
			}),
			close: true,
			want:  []string{`0 data client "hello" @5`, `0 data broker "world" @7`, `0 end @7`},
			flows: []Flow{fromStart},
		},
		{
			name: "retransmitted duplicates delivered once",
			pkts: with(handshake, []pkt{
				{from: "c", seq: 1001, flags: "A", data: "hel"},
				{from: "c", seq: 1001, flags: "A", data: "hel"},
				{from: "c", seq: 1004, flags: "A", data: "lo"},
				{from: "c", seq: 1004, flags: "A", data: "lo"},
			}),
			close: true,
			want:  []string{`0 data client "hello" @4`, `0 end @7`},
			flows: []Flow{fromStart},
		},
		{
			name: "overlapping retransmission with identical bytes",
			pkts: with(handshake, []pkt{
				{from: "c", seq: 1001, flags: "A", data: "hel"},
				{from: "c", seq: 1002, flags: "A", data: "ello"},
				{from: "c", seq: 1008, flags: "A", data: "orld"}, // ahead
				{from: "c", seq: 1005, flags: "A", data: "o wo"}, // overlaps both sides
			}),
			close: true,
			want:  []string{`0 data client "hello world" @4`, `0 end @7`},
			flows: []Flow{fromStart},
		},
		{
			name: "loss: one gap with the lost count, then the next bytes",
			pkts: with(handshake, []pkt{
				{from: "c", seq: 1001, flags: "A", data: "hel"},
				{from: "c", seq: 1006, flags: "A", data: "xyz"},
				{from: "c", seq: 1009, flags: "A", data: "!"},
			}),
			close: true,
			want:  []string{`0 data client "hel" @4`, `0 gap client 2 @5`, `0 data client "xyz!" @5`, `0 end @6`},
			flows: []Flow{fromStart},
		},
		{
			name: "buffer cap forces the gap at once",
			opts: Options{MaxBufferedPagesPerConn: 1},
			pkts: with(handshake, []pkt{
				{from: "c", seq: 1001, flags: "A", data: "hel"},
				{from: "c", seq: 1006, flags: "A", data: "xyz"},
				{from: "c", seq: 1009, flags: "A", data: "!"},
			}),
			want:  []string{`0 data client "hel" @4`, `0 gap client 2 @5`, `0 data client "xyz!" @5`},
			flows: []Flow{fromStart},
		},
		{
			name: "mid-stream, client first: orientation by ports",
			pkts: []pkt{
				{from: "c", seq: 7000, ack: 9000, flags: "A", data: "abc"},
				{from: "b", seq: 9000, ack: 7003, flags: "A", data: "de"},
			},
			close: true,
			want:  []string{`0 data client "abc" @1`, `0 data broker "de" @2`, `0 end @2`},
			flows: []Flow{midStream},
		},
		{
			name: "mid-stream, broker first: lower port is the broker",
			pkts: []pkt{
				{from: "b", seq: 9000, ack: 7000, flags: "A", data: "de"},
				{from: "c", seq: 7000, ack: 9002, flags: "A", data: "abc"},
			},
			close: true,
			want:  []string{`0 data broker "de" @1`, `0 data client "abc" @2`, `0 end @2`},
			flows: []Flow{midStream},
		},
		{
			name: "mid-stream, both ports low: BrokerPorts decides",
			opts: Options{BrokerPorts: []uint16{9092}},
			pkts: []pkt{
				{from: "b", seq: 9000, ack: 7000, flags: "A", data: "de", cli: lowCli},
				{from: "c", seq: 7000, ack: 9002, flags: "A", data: "abc", cli: lowCli},
			},
			close: true,
			want:  []string{`0 data broker "de" @1`, `0 data client "abc" @2`, `0 end @2`},
			flows: []Flow{{ConnID: flow.ConnID{Client: lowCli, Broker: brkAddr, StartFrame: 1}}},
		},
		{
			name: "mid-stream, both ports low, no BrokerPorts: destination is the broker",
			pkts: []pkt{
				{from: "b", seq: 9000, ack: 7000, flags: "A", data: "de", cli: lowCli},
			},
			close: true,
			want:  []string{`0 data client "de" @1`, `0 end @1`},
			flows: []Flow{{ConnID: flow.ConnID{Client: brkAddr, Broker: lowCli, StartFrame: 1}}},
		},
		{
			name: "late SYN within 1 s and 64 packets: observed from its start",
			pkts: []pkt{
				{from: "c", seq: 1004, ack: 5001, flags: "A", data: "lo"},
				{from: "b", seq: 5001, ack: 1006, flags: "A", data: "ok"},
				{from: "c", seq: 1001, ack: 5001, flags: "A", data: "hel"},
				{from: "c", seq: 1000, flags: "S"},
				{from: "b", seq: 5000, ack: 1001, flags: "SA"},
			},
			close: true,
			want:  []string{`0 data client "hello" @3`, `0 data broker "ok" @2`, `0 end @5`},
			flows: []Flow{fromStart},
		},
		{
			name: "late SYN-ACK, broker's data first: observed from its start",
			pkts: []pkt{
				{from: "b", seq: 5001, ack: 1004, flags: "A", data: "ok"},
				{from: "c", seq: 1001, ack: 5001, flags: "A", data: "hel"},
				{from: "b", seq: 5000, ack: 1001, flags: "SA"},
			},
			close: true,
			want:  []string{`0 data client "hel" @2`, `0 data broker "ok" @1`, `0 end @3`},
			flows: []Flow{fromStart},
		},
		{
			name: "SYN more than 1 s late: joined mid-stream, the SYN opens another",
			pkts: []pkt{
				{from: "c", seq: 1004, ack: 5001, flags: "A", data: "lo"},
				{from: "c", seq: 1006, ack: 5001, flags: "A", data: "!", at: 1500 * time.Millisecond},
				{from: "c", seq: 1000, flags: "S", at: 1600 * time.Millisecond},
			},
			close: true,
			want:  []string{`0 data client "lo!" @1`, `0 end @2`, `1 end @3`},
			flows: []Flow{{ConnID: flow.ConnID{Client: cliAddr, Broker: brkAddr, StartFrame: 1}}, {ConnID: flow.ConnID{Client: cliAddr, Broker: brkAddr, StartFrame: 3}, FromStart: true}},
		},
		{
			name: "SYN-ACK only: client data starts at its ack",
			pkts: []pkt{
				{from: "b", seq: 5000, ack: 1001, flags: "SA"},
				{from: "c", seq: 1004, ack: 5001, flags: "A", data: "lo"},
				{from: "c", seq: 1001, ack: 5001, flags: "A", data: "hel"},
			},
			close: true,
			want:  []string{`0 data client "hello" @3`, `0 end @3`},
			flows: []Flow{fromStart},
		},
		{
			name: "SYN-ACK only, first client bytes lost",
			pkts: []pkt{
				{from: "b", seq: 5000, ack: 1001, flags: "SA"},
				{from: "c", seq: 1004, ack: 5001, flags: "A", data: "lo"},
			},
			close: true,
			want:  []string{`0 gap client 3 @2`, `0 data client "lo" @2`, `0 end @2`},
			flows: []Flow{fromStart},
		},
		{
			name: "RST from one side ends the connection at once",
			pkts: with(handshake, []pkt{
				{from: "c", seq: 1001, flags: "A", data: "hi"},
				{from: "b", seq: 5003, flags: "A", data: "xy"}, // broker bytes 5001-5003 lost
				{from: "c", seq: 1003, flags: "R"},
				{from: "b", seq: 5005, flags: "A", data: "late"}, // after the end: dropped
			}),
			want:  []string{`0 data client "hi" @4`, `0 gap broker 2 @5`, `0 data broker "xy" @5`, `0 end @6`},
			flows: []Flow{fromStart},
		},
		{
			name: "a hole the other side acknowledges is given up after the reordering window, frames kept",
			pkts: with(handshake, []pkt{
				{from: "c", seq: 1001, ack: 5001, flags: "A", data: "hel"},
				{from: "c", seq: 1006, ack: 5001, flags: "A", data: "xyz"}, // 1004-1005 lost
				{from: "c", seq: 1009, ack: 5001, flags: "A", data: "!"},
				{from: "b", seq: 5001, ack: 1010, flags: "A", data: "ok"},
				{from: "b", seq: 5003, ack: 1010, flags: "A", at: 2 * time.Second},
			}),
			// "!" keeps frame 6 too: TestAckedHoleFrames.
			want: []string{
				// "ok" waits for the bytes it acknowledges.
				`0 data client "hel" @4`, `0 gap client 2 @5`, `0 data client "xyz!" @5`, `0 data broker "ok" @7`,
			},
			flows: []Flow{fromStart},
		},
		{
			name: "a RST reordered ahead of the peer's last bytes and FIN waits for them",
			pkts: with(handshake, []pkt{
				{from: "c", seq: 1001, ack: 5001, flags: "A", data: "hel"},
				{from: "b", seq: 5001, ack: 1007, flags: "RA"}, // acknowledges "lo" and the FIN
				{from: "c", seq: 1004, ack: 5001, flags: "A", data: "lo"},
				{from: "c", seq: 1006, ack: 5001, flags: "FA"},
			}),
			want:  []string{`0 data client "hello" @4`, `0 end @7`},
			flows: []Flow{fromStart},
		},
		{
			name: "a RST acknowledging bytes the capture lost ends the connection with a gap",
			pkts: with(handshake, []pkt{
				{from: "c", seq: 1001, ack: 5001, flags: "A", data: "hel"},
				{from: "b", seq: 5001, ack: 1006, flags: "RA"}, // "lo" never captured
			}),
			close: true,
			want:  []string{`0 data client "hel" @4`, `0 gap client 2 @5`, `0 end @5`},
			flows: []Flow{fromStart},
		},
		{
			name: "a hole acknowledged only in part waits for its retransmission",
			pkts: with(handshake, []pkt{
				{from: "c", seq: 1001, ack: 5001, flags: "A", data: "hel"},
				{from: "c", seq: 1006, ack: 5001, flags: "A", data: "xyz"}, // 1004-1005 not seen yet
				{from: "b", seq: 5001, ack: 1005, flags: "A", data: "ok"},  // the receiver has 1004 only
				{from: "c", seq: 1004, ack: 5003, flags: "A", data: "lo"},  // retransmitted
			}),
			want: []string{
				// "ok" waits for the byte it acknowledges, which the
				// retransmission brings.
				`0 data client "helloxyz" @4`, `0 data broker "ok" @6`,
			},
			flows: []Flow{fromStart},
		},
		{
			name: "idle flush by packet time, before the segment that triggers it",
			opts: Options{IdleTimeout: time.Minute},
			pkts: with(handshake, []pkt{
				{from: "c", seq: 1001, flags: "A", data: "hel"},
				{from: "c", seq: 1006, flags: "A", data: "xyz"},
				{from: "c", seq: 42, flags: "A", data: "other", cli: cli2, at: 2 * time.Minute},
			}),
			close: true, // the other connection, joined mid-stream, waits for a late SYN
			want: []string{
				`0 data client "hel" @4`, `0 gap client 2 @5`, `0 data client "xyz" @5`, `0 end @5`,
				`1 data client "other" @6`, `1 end @6`,
			},
			flows: []Flow{fromStart, {ConnID: flow.ConnID{Client: cli2, Broker: brkAddr, StartFrame: 6}}},
		},
		{
			name: "4-tuple reused after a clean close: two flows",
			pkts: with(handshake, []pkt{
				{from: "c", seq: 1001, flags: "A", data: "one"},
				{from: "c", seq: 1004, flags: "FA"},
				{from: "b", seq: 5001, ack: 1005, flags: "FA"},
				{from: "c", seq: 1005, ack: 5002, flags: "A"},
				{from: "c", seq: 20000, flags: "S"},
				{from: "b", seq: 30000, ack: 20001, flags: "SA"},
				{from: "c", seq: 20001, ack: 30001, flags: "A", data: "two"},
			}),
			close: true,
			want:  []string{`0 data client "one" @4`, `0 end @6`, `1 data client "two" @10`, `1 end @10`},
			flows: []Flow{fromStart, {ConnID: flow.ConnID{Client: cliAddr, Broker: brkAddr, StartFrame: 8}, FromStart: true}},
		},
		{
			name: "4-tuple reused without a seen close: the new SYN ends the old one",
			pkts: []pkt{
				{from: "c", seq: 7000, flags: "A", data: "old"},
				{from: "c", seq: 20000, flags: "S"},
				{from: "b", seq: 30000, ack: 20001, flags: "SA"},
				{from: "c", seq: 20001, ack: 30001, flags: "A", data: "new"},
			},
			want:  []string{`0 data client "old" @1`, `0 end @1`, `1 data client "new" @4`},
			flows: []Flow{midStream, {ConnID: flow.ConnID{Client: cliAddr, Broker: brkAddr, StartFrame: 2}, FromStart: true}},
		},
		{
			name: "SYN retransmitted after the SYN-ACK changes nothing",
			pkts: []pkt{
				{from: "b", seq: 5000, ack: 1001, flags: "SA"},
				{from: "c", seq: 1000, flags: "S"},
				{from: "c", seq: 1001, ack: 5001, flags: "A", data: "x"},
			},
			want:  []string{`0 data client "x" @3`},
			flows: []Flow{fromStart},
		},
		{
			// A keepalive probe carries the sequence number before the
			// next byte: starting there would make that byte a hole.
			name: "mid-stream: an empty keepalive probe does not start the stream",
			pkts: []pkt{
				{from: "c", seq: 999, ack: 5000, flags: "A"},
				{from: "b", seq: 5000, ack: 1000, flags: "A"},
				{from: "c", seq: 1000, ack: 5000, flags: "A", data: "hello"},
				{from: "b", seq: 5000, ack: 1005, flags: "A", data: "world"},
			},
			close: true,
			want:  []string{`0 data client "hello" @3`, `0 data broker "world" @4`, `0 end @4`},
			flows: []Flow{midStream},
		},
		{
			// The SYN-ACK was not captured: the handshake's ACK tells
			// where the broker's stream starts, so its first answer is
			// whole even when its segments come out of order.
			name: "SYN without SYN-ACK: the broker starts at the client's first ack",
			pkts: []pkt{
				{from: "c", seq: 1000, flags: "S"},
				{from: "c", seq: 1001, ack: 5001, flags: "A"},
				{from: "c", seq: 1001, ack: 5001, flags: "A", data: "req"},
				{from: "b", seq: 5004, ack: 1004, flags: "A", data: "ld"},
				{from: "b", seq: 5001, ack: 1004, flags: "A", data: "wor"},
			},
			close: true,
			want:  []string{`0 data client "req" @3`, `0 data broker "world" @5`, `0 end @5`},
			flows: []Flow{fromStart},
		},
		{
			// The 4-tuple is reused and the new handshake was not
			// captured: data far from where the closed connection ended
			// opens a new one; a retransmission near it does not.
			name: "closed 4-tuple: far data opens a new connection, near data does not",
			pkts: with(handshake, []pkt{
				{from: "c", seq: 1001, ack: 5001, flags: "A", data: "one"},
				{from: "c", seq: 1004, ack: 5001, flags: "FA"},
				{from: "b", seq: 5001, ack: 1005, flags: "FA"},
				{from: "c", seq: 1001, ack: 5002, flags: "A", data: "one"},        // retransmission: dropped
				{from: "c", seq: 9_000_000, ack: 70_000, flags: "A", data: "two"}, // a new connection
			}),
			close: true,
			want:  []string{`0 data client "one" @4`, `0 end @6`, `1 data client "two" @8`, `1 end @8`},
			flows: []Flow{fromStart, {ConnID: flow.ConnID{Client: cliAddr, Broker: brkAddr, StartFrame: 8}}},
		},
		{
			// A hand-written capture numbering the first data byte as
			// its SYN: the byte is kept, not dropped as old.
			name: "first data at the SYN's own sequence number",
			pkts: []pkt{
				{from: "c", seq: 1000, flags: "S"},
				{from: "b", seq: 5000, ack: 1001, flags: "SA"},
				{from: "c", seq: 1000, ack: 5001, flags: "A", data: "hel"},
				{from: "c", seq: 1003, ack: 5001, flags: "A", data: "lo"},
				{from: "b", seq: 5000, ack: 1005, flags: "A", data: "world"},
				{from: "c", seq: 1000, ack: 5005, flags: "A", data: "hel"}, // retransmitted: not again
			},
			close: true,
			want:  []string{`0 data client "hello" @3`, `0 data broker "world" @5`, `0 end @6`},
			flows: []Flow{fromStart},
		},
		{
			name: "BrokerPorts: other connections are never opened",
			opts: Options{BrokerPorts: []uint16{9092}},
			pkts: []pkt{
				{from: "c", seq: 1, flags: "A", data: "redis", broker: netip.MustParseAddrPort("10.0.0.9:6379")},
				{from: "c", seq: 1, flags: "A", data: "kafka"},
			},
			close: true,
			want:  []string{`0 data client "kafka" @2`, `0 end @2`},
			flows: []Flow{{ConnID: flow.ConnID{Client: cliAddr, Broker: brkAddr, StartFrame: 2}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			r := New(tt.opts, rec)
			for _, s := range segs(tt.pkts) {
				r.Add(s)
			}
			if tt.close {
				r.Close(flow.Meta{Frame: closeFrame, Time: t0.Add(time.Hour)})
			}
			if got := rec.lines(true); !slices.Equal(got, tt.want) {
				t.Errorf("events:\n got %q\nwant %q", got, tt.want)
			}
			if !slices.Equal(rec.flows, tt.flows) {
				t.Errorf("flows:\n got %+v\nwant %+v", rec.flows, tt.flows)
			}
		})
	}
}

// TestHoldLimits: a connection without SYN is held for at most 64 of its
// packets, then joined mid-stream at once (before Close); a new SYN on
// its 4-tuple after that opens another connection.
func TestHoldLimits(t *testing.T) {
	rec := &recorder{}
	r := New(Options{}, rec)
	var ps []pkt
	for i := range holdPackets {
		ps = append(ps, pkt{from: "c", seq: uint32(1001 + i), ack: 5001, flags: "A", data: "x"})
	}
	for _, s := range segs(ps) {
		r.Add(s)
	}
	if len(rec.flows) != 1 || rec.flows[0].FromStart {
		t.Fatalf("after %d packets: flows %+v, want one joined mid-stream", holdPackets, rec.flows)
	}
	if st := r.Stats(); st.Held != 1 || st.LateSYNs != 0 || st.Bytes != holdPackets {
		t.Errorf("stats %+v, want 1 held, no late SYN, %d bytes", st, holdPackets)
	}
	r.Add(mkSeg(holdPackets+1, t0, cliAddr, brkAddr, 90000, 0, "S", nil, false))
	// A connection without data opens when it ends (embryo.go).
	r.Close(flow.Meta{Frame: holdPackets + 1, Time: t0})
	if len(rec.flows) != 2 || !rec.flows[1].FromStart {
		t.Errorf("the new SYN: flows %+v, want a second one from its start", rec.flows)
	}
}

// TestNoHold: with MaxHeldBytes negative nothing waits: a connection
// without SYN is joined mid-stream at its first data.
func TestNoHold(t *testing.T) {
	rec := &recorder{}
	r := New(Options{MaxHeldBytes: -1}, rec)
	for _, s := range segs([]pkt{{from: "c", seq: 1001, ack: 5001, flags: "A", data: "x"}}) {
		r.Add(s)
	}
	if got := rec.lines(true); !slices.Equal(got, []string{`0 data client "x" @1`}) || r.Stats().Held != 0 {
		t.Errorf("events %q, stats %+v: want the data at once, nothing held", got, r.Stats())
	}
}

// TestAckedHoleFrames: the data queued behind a hole given up when the other
// side acknowledged it (after the reordering window: 64 of the connection's
// packets) comes packet by packet, each with its own frame and time.
func TestAckedHoleFrames(t *testing.T) {
	rec := &recorder{}
	r := New(Options{}, rec)
	ps := with(handshake, []pkt{
		{from: "c", seq: 1006, ack: 5001, flags: "A", data: "xyz"}, // 1001-1005 lost
		{from: "c", seq: 1009, ack: 5001, flags: "A", data: "!"},
		{from: "b", seq: 5001, ack: 1010, flags: "A", data: "ok"},
	})
	for range holdPackets {
		ps = append(ps, pkt{from: "b", seq: 5003, ack: 1010, flags: "A"})
	}
	for _, s := range segs(ps) {
		r.Add(s)
	}
	var got []string
	for _, e := range rec.events {
		got = append(got, fmt.Sprintf("%s %s %q @%d", e.kind, e.side, e.data, e.frame))
	}
	want := []string{`gap client "" @4`, `data client "xyz" @4`, `data client "!" @5`, `data broker "ok" @6`}
	if !slices.Equal(got, want) {
		t.Errorf("events:\n got %q\nwant %q", got, want)
	}
	if st := r.Stats(); st.AckedHoles != 1 || st.Overflow != 0 {
		t.Errorf("AckedHoles %d, Overflow %d; want 1 and 0", st.AckedHoles, st.Overflow)
	}
}

func TestOpenerIgnores(t *testing.T) {
	rec := &recorder{ignore: func(Flow) bool { return true }}
	r := New(Options{}, rec)
	for _, s := range segs(with(handshake, []pkt{{from: "c", seq: 1001, flags: "A", data: "x"}})) {
		r.Add(s)
	}
	r.Close(flow.Meta{Frame: closeFrame})
	if len(rec.events) != 0 {
		t.Errorf("ignored connection got calls: %q", rec.lines(true))
	}
	if st := r.Stats(); st.Ignored != 1 || st.Opened != 0 || st.Ended != 0 {
		t.Errorf("stats = %+v, want 1 ignored, none opened or ended", st)
	}
}

func TestStatsFilteredAndGaps(t *testing.T) {
	rec := &recorder{}
	r := New(Options{BrokerPorts: []uint16{9092}}, rec)
	ps := with(handshake, []pkt{
		{from: "c", seq: 1001, flags: "A", data: "hel"},
		{from: "c", seq: 1006, flags: "A", data: "xyz"},
		{from: "c", seq: 1, flags: "A", data: "x", broker: netip.MustParseAddrPort("10.0.0.9:6379")},
	})
	for _, s := range segs(ps) {
		r.Add(s)
	}
	r.Close(flow.Meta{Frame: closeFrame})
	want := Stats{Segments: 6, Filtered: 1, Opened: 1, Ended: 1, Bytes: 6, Gaps: 1, BytesLost: 2, OutOfOrder: 1}
	if got := r.Stats(); got != want {
		t.Errorf("stats:\n got %+v\nwant %+v", got, want)
	}
}

// TestFlushDeterministic opens many connections, each with a hole, and
// ends them all in one call, by Close or by the idle flush: they must end
// in StartFrame order, identically every run, although gopacket walks its
// connections in map order.
func TestFlushDeterministic(t *testing.T) {
	const n = 300
	tests := []struct {
		name string
		idle bool
	}{
		{name: "Close"},
		{name: "idle flush", idle: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := func() ([]string, []Flow) {
				rec := &recorder{}
				r := New(Options{IdleTimeout: time.Minute}, rec)
				var ps []pkt
				for i := range n {
					c := netip.AddrPortFrom(netip.MustParseAddr("10.1.0.1"), uint16(40000+i))
					ps = append(ps,
						pkt{from: "c", seq: 100, flags: "A", data: "a", cli: c},
						pkt{from: "c", seq: 105, flags: "A", data: "b", cli: c},
					)
				}
				if tt.idle {
					// A segment of another connection, much later.
					ps = append(ps, pkt{from: "c", seq: 1, flags: "A", cli: cli2, at: time.Hour})
				}
				for _, s := range segs(ps) {
					r.Add(s)
				}
				if !tt.idle {
					r.Close(flow.Meta{Frame: closeFrame})
				}
				return rec.lines(true), rec.flows
			}
			first, flows := run()
			if len(first) != n*4 {
				t.Fatalf("got %d events, want %d", len(first), n*4)
			}
			// Joined mid-stream, each connection waited for a late SYN
			// until the flush: there its "a", gap, data and end come
			// together. Close drains first: every "a", then the rest.
			for i := range n {
				id := strconv.Itoa(i)
				// Each at the connection's own packet: the "b" that
				// ended it, whoever's packet or Close found it idle.
				frame := "@" + strconv.Itoa(2*i+2)
				a := id + ` data client "a" @` + strconv.Itoa(2*i+1)
				got := first[4*i : 4*i+4]
				want := []string{a, id + " gap client 4 " + frame, id + ` data client "b" ` + frame, id + " end " + frame}
				if !tt.idle {
					got, want = append([]string{first[i]}, first[n+3*i:n+3*i+3]...), append([]string{a}, want[1:]...)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("connection %d: got %q, want %q", i, got, want)
				}
				if flows[i].StartFrame != uint64(2*i+1) {
					t.Fatalf("flow %d StartFrame = %d", i, flows[i].StartFrame)
				}
			}
			for range 5 {
				if again, _ := run(); !slices.Equal(first, again) {
					t.Fatal("order differs between runs")
				}
			}
		})
	}
}
