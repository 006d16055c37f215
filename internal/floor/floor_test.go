package floor

import (
	"bytes"
	"testing"

	"github.com/kwatch/kwatch/internal/pcapgen"
)

func TestRun(t *testing.T) {
	tests := []struct {
		name string
		o    pcapgen.BulkOptions
	}{
		{name: "ethernet", o: pcapgen.BulkOptions{Connections: 4, Requests: 50, PayloadSize: 3000, Seed: 1}},
		{name: "loopback 64 KiB", o: pcapgen.BulkOptions{Connections: 2, Requests: 20, PayloadSize: 100000, MTU: 65535, Seed: 2, Link: pcapgen.LinkNull}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			n, err := pcapgen.WriteBulk(&buf, tt.o)
			if err != nil {
				t.Fatal(err)
			}
			r, err := Run(bytes.NewReader(buf.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			if r.Packets == 0 || r.TCP != r.Packets {
				t.Errorf("%d packets, %d decoded as TCP: want all TCP", r.Packets, r.TCP)
			}
			if r.Bytes+24+16*int64(r.Packets) != n {
				t.Errorf("captured bytes %d + headers != file size %d", r.Bytes, n)
			}
		})
	}
}
