package capture

import (
	"bytes"
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/kwatch/kwatch/internal/pcapgen"
)

// BenchmarkDecodeTunnels decodes the same TCP segments (100-byte payloads,
// 16 connections) plain and inside each encapsulation; SetBytes counts the
// TCP payload, so MB/s compare directly: the target is every tunnel at
// 0.9x plain or better.
func BenchmarkDecodeTunnels(b *testing.B) {
	var plain [][]byte
	for i := range 16 {
		p := v4
		p.sport = uint16(50000 + i)
		p.payload = bytes.Repeat([]byte{byte(i)}, 100)
		ip, _ := ipTCP(b, p)
		plain = append(plain, ethernet(b, layers.EthernetTypeIPv4, nil, ip))
	}
	run := func(b *testing.B, frames [][]byte) {
		pkts := make([]Packet, len(frames))
		for i, f := range frames {
			pkts[i] = Packet{Data: f, CaptureLength: len(f), Length: len(f), LinkType: linkEthernet}
		}
		d := NewLayerDecoder()
		var s Segment
		b.SetBytes(int64(100 * len(pkts)))
		b.ReportAllocs()
		for b.Loop() {
			for i := range pkts {
				if !d.Decode(&pkts[i], &s) {
					b.Fatal(d.Reason())
				}
			}
		}
	}
	b.Run("plain", func(b *testing.B) { run(b, plain) })
	for _, enc := range pcapgen.Encaps() {
		frames := make([][]byte, len(plain))
		for i, f := range plain {
			var err error
			if frames[i], _, err = pcapgen.Wrap(enc, linkEthernet, f, len(f), 1); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(enc.String(), func(b *testing.B) { run(b, frames) })
	}
}
