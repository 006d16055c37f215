package pcapgen

import (
	"bytes"
	"encoding/binary"
	"io"
	"testing"
)

func TestWriteBulk(t *testing.T) {
	tests := []struct {
		name string
		o    BulkOptions
	}{
		{name: "ethernet pcap split", o: BulkOptions{Connections: 5, Requests: 200, PayloadSize: 5000, SplitFraction: 0.5, Seed: 1}},
		{name: "loopback mtu pcapng", o: BulkOptions{Connections: 3, Requests: 60, PayloadSize: 100000, MTU: 65535, Seed: 2, Format: FormatPCAPNG, Link: LinkNull}},
		{name: "gzip sll2", o: BulkOptions{Connections: 2, Requests: 20, PayloadSize: 3000, Seed: 3, Gzip: true, Link: LinkSLL2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			n, err := WriteBulk(&buf, tt.o)
			if err != nil {
				t.Fatal(err)
			}
			if !tt.o.Gzip && n != int64(buf.Len()) {
				t.Errorf("WriteBulk reported %d bytes, wrote %d", n, buf.Len())
			}
			r := reassemble(t, buf.Bytes())
			if len(r.data) != 2*tt.o.Connections {
				t.Fatalf("%d directions, want %d", len(r.data), 2*tt.o.Connections)
			}
			requests, responses := 0, 0
			for k, stream := range r.data {
				if r.skip[k] != 0 {
					t.Errorf("%v: skipped %d", k, r.skip[k])
				}
				frames := 0
				for len(stream) > 0 {
					if len(stream) < 4 {
						t.Fatalf("%v: %d trailing bytes", k, len(stream))
					}
					size := int(binary.BigEndian.Uint32(stream))
					if size < 8 || 4+size > len(stream) {
						t.Fatalf("%v: frame %d has size %d with %d bytes left", k, frames, size, len(stream))
					}
					stream = stream[4+size:]
					frames++
				}
				if k.dst == 9092 {
					requests += frames
				} else {
					responses += frames
				}
			}
			want := tt.o.Requests + 2*tt.o.Connections
			if requests != want || responses != want {
				t.Errorf("requests %d, responses %d, want %d each", requests, responses, want)
			}
		})
	}
}

func TestWriteBulkSize(t *testing.T) {
	var buf bytes.Buffer
	n, err := WriteBulk(&buf, BulkOptions{Size: 3 << 20, PayloadSize: 20000})
	if err != nil {
		t.Fatal(err)
	}
	if n < 3<<20 || n > 3<<20+200000 {
		t.Errorf("wrote %d bytes for Size %d", n, 3<<20)
	}
}

func BenchmarkWriteBulk(b *testing.B) {
	for _, bc := range []struct {
		name string
		o    BulkOptions
	}{
		{"ethernet-1500", BulkOptions{Connections: 64, Requests: 2000, PayloadSize: 64 << 10, SplitFraction: 0.1}},
		{"loopback-65535", BulkOptions{Connections: 64, Requests: 2000, PayloadSize: 64 << 10, MTU: 65535, Link: LinkNull}},
		{"pcapng-1500", BulkOptions{Connections: 64, Requests: 2000, PayloadSize: 64 << 10, Format: FormatPCAPNG}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			n, _ := WriteBulk(io.Discard, bc.o)
			b.SetBytes(n)
			b.ResetTimer()
			for b.Loop() {
				if _, err := WriteBulk(io.Discard, bc.o); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
