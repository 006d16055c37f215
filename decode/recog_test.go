package decode

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/kwatch/kwatch/flow"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// randomStream is frames of an int32 size (10 to 300) and random bytes;
// shaped, the first four bytes after the size are a known API key and a
// version kmsg knows for it (the worst case for a header test).
func randomStream(rng *rand.Rand, frames int, shaped bool) []byte {
	var b []byte
	for i := 0; i < frames; i++ {
		n := 10 + rng.IntN(290)
		b = binary.BigEndian.AppendUint32(b, uint32(n))
		start := len(b)
		for j := 0; j < n; j++ {
			b = append(b, byte(rng.Uint32()))
		}
		if shaped {
			k := kmsg.RequestForKey(int16(rng.IntN(70)))
			for k == nil {
				k = kmsg.RequestForKey(int16(rng.IntN(70)))
			}
			binary.BigEndian.PutUint16(b[start:], uint16(k.Key()))
			binary.BigEndian.PutUint16(b[start+2:], uint16(int(k.GetVersion())+rng.IntN(int(k.MaxVersion()-k.GetVersion())+1)))
		}
	}
	return b
}

// TestRandomStreamsRarelyKafka: random length-prefixed binary streams, both
// directions, without --port, are rarely taken for Kafka. Measured (seeded,
// 20,000 connections each): seen from the start, uniform frames 0 and
// frames shaped with a valid API key and version 1 (0.005%; 116, 0.58%,
// before the first frame was judged: any header that parsed was
// believed); joined mid-stream (scan.go's rules), 0 and 1 (0.005%). The client ID, a
// printable run of the length its two bytes give, inside the frame, or a
// null one with an exact body and a matching answer, is what random bytes
// do not give.
func TestRandomStreamsRarelyKafka(t *testing.T) {
	const conns = 20000
	tests := []struct {
		name      string
		fromStart bool
		shaped    bool
		maxRate   float64
	}{
		{"uniform", true, false, 0},
		{"valid key and version", true, true, 0.0005},
		{"uniform mid-stream", false, false, 0.0005},
		{"valid key and version mid-stream", false, true, 0.0005},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(17, 1))
			kafka := 0
			for i := 0; i < conns; i++ {
				c := NewConn(testID, tt.fromStart, Options{}, nil)
				c.Feed(flow.Client, randomStream(rng, 3, tt.shaped), flow.Meta{Frame: 1})
				c.Feed(flow.Broker, randomStream(rng, 3, false), flow.Meta{Frame: 2})
				c.Close(flow.Meta{Frame: 3})
				if c.State() == StateKafka {
					kafka++
				}
			}
			rate := float64(kafka) / conns
			t.Logf("%d of %d random connections taken for Kafka (rate %.5f)", kafka, conns, rate)
			if rate > tt.maxRate {
				t.Errorf("rate %.5f above %.5f", rate, tt.maxRate)
			}
		})
	}
}
