package pipeline_test

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/kwatch/kwatch/capture"
	"github.com/kwatch/kwatch/decode"
	"github.com/kwatch/kwatch/internal/pcapgen"
	"github.com/kwatch/kwatch/pipeline"
)

// TestZeroAllocsPerPacket holds the hot path to zero heap allocations per
// packet in steady state: reading (capture's pcap reader), layer decoding,
// reassembly of in-order data, frame splitting and header decoding, over
// packet-heavy and byte-heavy bulk traffic with split frames.
func TestZeroAllocsPerPacket(t *testing.T) {
	tests := []struct {
		name string
		o    pcapgen.BulkOptions
	}{
		{name: "ethernet small frames", o: pcapgen.BulkOptions{Connections: 20, Requests: 30000, PayloadSize: 60, SplitFraction: 0.05, Seed: 3}},
		{name: "loopback 64 KiB segments", o: pcapgen.BulkOptions{Connections: 8, Requests: 12000, PayloadSize: 2000, MTU: 65535, SplitFraction: 0.05, Seed: 4, Link: pcapgen.LinkNull}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if _, err := pcapgen.WriteBulk(&buf, tt.o); err != nil {
				t.Fatal(err)
			}
			src, err := capture.NewReader(bytes.NewReader(buf.Bytes()), "bulk.pcap", capture.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			var events int
			e := pipeline.New(pipeline.Options{}, decode.SinkFunc(func(*decode.Event) { events++ }))
			const chunk = 500
			feed := func() {
				for range chunk {
					p, err := src.Next()
					if errors.Is(err, io.EOF) {
						t.Fatal("capture too short for the measurement")
					}
					if err != nil {
						t.Fatal(err)
					}
					e.Packet(&p)
				}
			}
			// Warm up: connections open, buffers reach their size.
			for range 30 {
				feed()
			}
			before := events
			if n := testing.AllocsPerRun(8, feed); n != 0 {
				t.Errorf("%v allocations per %d packets, want 0", n, chunk)
			}
			if events == before {
				t.Fatal("no events during the measurement: nothing was decoded")
			}
		})
	}
}
