package reassembly

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// cut is a snaplen-cut segment: ten bytes of c captured.
func cut(from string, sq, ack uint32, c string) pkt {
	return pkt{from: from, seq: sq, ack: ack, flags: "A", data: strings.Repeat(c, 10), trunc: true}
}

// TestTruncated checks that the bytes a snap length cut off, when their
// number is unknown, become a Gap as soon as a later segment or the peer's
// ACK shows where they end: with an idle timeout of a day and no Close,
// every Gap still arrives, in order. A cut segment's Truncated follows what
// its arrival delivered.
func TestTruncated(t *testing.T) {
	a10, b10, c10, r10 := `"AAAAAAAAAA"`, `"BBBBBBBBBB"`, `"CCCCCCCCCC"`, `"RRRRRRRRRR"`
	tests := []truncTest{
		{
			name: "peer ACKs show the end of each cut segment",
			pkts: with(handshake, []pkt{
				cut("c", 1001, 5001, "A"),                      // 100 bytes on the wire
				{from: "b", seq: 5001, ack: 1101, flags: "A"},  // acks them
				cut("c", 1101, 5001, "B"),                      // 100 bytes
				cut("c", 1201, 5001, "C"),                      // 100 bytes, before any ACK
				cut("b", 5001, 1301, "R"),                      // 200 bytes, acks the client
				{from: "c", seq: 1301, ack: 5201, flags: "FA"}, // acks the response
				{from: "b", seq: 5201, ack: 1302, flags: "FA"},
			}),
			want: []string{
				`0 data client ` + a10 + ` @4`, `0 trunc client @4`,
				`0 gap client 90 @5`,
				`0 data client ` + b10 + ` @6`, `0 trunc client @6`,
				`0 gap client 90 @7`, `0 data client ` + c10 + ` @7`, `0 trunc client @7`,
				`0 gap client 90 @8`, `0 data broker ` + r10 + ` @8`, `0 trunc broker @8`,
				`0 gap broker 190 @9`,
				`0 end @10`,
			},
		},
		{
			name: "no ACKs: the next segment shows the end",
			pkts: with(handshake, []pkt{
				cut("c", 1001, 5001, "A"),
				cut("c", 1101, 5001, "B"),
				cut("c", 1201, 5001, "C"),
				{from: "c", seq: 1301, ack: 5001, flags: "FA"},
				{from: "b", seq: 5001, ack: 1302, flags: "FA"},
			}),
			want: []string{
				`0 data client ` + a10 + ` @4`, `0 trunc client @4`,
				`0 gap client 90 @5`, `0 data client ` + b10 + ` @5`, `0 trunc client @5`,
				`0 gap client 90 @6`, `0 data client ` + c10 + ` @6`, `0 trunc client @6`,
				`0 gap client 90 @7`,
				`0 end @8`,
			},
		},
		{
			name: "cut segment completes a run: the hole up to buffered data goes at once",
			pkts: with(handshake, []pkt{
				{from: "c", seq: 1001, flags: "A", data: "hel"},
				{from: "c", seq: 1104, flags: "A", data: "XYZ"}, // ahead
				{from: "c", seq: 1004, flags: "A", data: "lo", trunc: true},
			}),
			want: []string{
				`0 data client "hello" @4`, `0 gap client 98 @5`, `0 data client "XYZ" @5`, `0 trunc client @6`,
			},
		},
		{
			name: "cut segment retransmitted whole: no gap",
			pkts: with(handshake, []pkt{
				{from: "c", seq: 1001, flags: "A", data: "he", trunc: true},
				{from: "c", seq: 1001, flags: "A", data: "hello"},
				{from: "c", seq: 1006, flags: "A", data: "!"},
			}),
			want: []string{`0 data client "he" @4`, `0 trunc client @4`, `0 data client "llo!" @5`},
		},
	}
	runTrunc(t, tests)
}

type truncTest struct {
	name string
	pkts []pkt
	want []string
}

func runTrunc(t *testing.T, tests []truncTest) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			r := New(Options{IdleTimeout: 24 * time.Hour}, rec)
			for _, s := range segs(tt.pkts) {
				r.Add(s)
			}
			if got := rec.lines(true); !slices.Equal(got, tt.want) {
				t.Errorf("events:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// cutN is a snaplen-cut segment whose IP length says n bytes were cut.
func cutN(from string, sq uint32, c string, n int) pkt {
	p := cut(from, sq, 0, c)
	p.flags, p.cut = "", n
	return p
}

// TestCut checks that bytes a snap length cut, whose number the IP length
// gives, are a Cut in their place at once, never a Gap: in order, out of
// order, and when a whole retransmission already gave them.
func TestCut(t *testing.T) {
	a10, b10 := `"AAAAAAAAAA"`, `"BBBBBBBBBB"`
	runTrunc(t, []truncTest{
		{
			name: "in order: each cut follows its segment's captured bytes",
			pkts: with(handshake, []pkt{
				cutN("c", 1001, "A", 90),
				cutN("c", 1101, "B", 90),
				{from: "c", seq: 1201, flags: "A", data: "x"},
			}),
			want: []string{
				`0 data client ` + a10 + ` @4`, `0 cut client 90 @4`, `0 trunc client @4`,
				`0 data client ` + b10 + ` @5`, `0 cut client 90 @5`, `0 trunc client @5`,
				`0 data client "x" @6`,
			},
		},
		{
			name: "out of order: the cut comes when the stream reaches it",
			pkts: with(handshake, []pkt{
				cutN("c", 1101, "B", 90),
				cutN("c", 1001, "A", 90),
				{from: "c", seq: 1201, flags: "A", data: "x"},
			}),
			want: []string{
				`0 trunc client @4`,
				// B keeps its packet's frame; a cut, like a gap, is said
				// at the packet of the data after it.
				`0 data client ` + a10 + ` @5`, `0 cut client 90 @4`,
				`0 data client ` + b10 + ` @4`, `0 cut client 90 @5`, `0 trunc client @5`,
				`0 data client "x" @6`,
			},
		},
		{
			name: "bytes already whole: no cut",
			pkts: with(handshake, []pkt{
				{from: "c", seq: 1001, flags: "A", data: "hello world"},
				cutN("c", 1001, "h", 1),
				{from: "c", seq: 1012, flags: "A", data: "!"},
			}),
			want: []string{`0 data client "hello world" @4`, `0 trunc client @5`, `0 data client "!" @6`},
		},
	})
}
