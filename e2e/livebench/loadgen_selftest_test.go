//go:build e2e

package livebench

import (
	"context"
	"testing"
	"time"
)

// TestLoadGenerator checks the generator itself (no kwatch, no root): every
// request is answered, in order, and pacing holds the asked rate.
func TestLoadGenerator(t *testing.T) {
	tests := []struct {
		name string
		cfg  loadConfig
	}{
		{name: "paced 16KiB", cfg: loadConfig{Conns: 3, Payload: 16 << 10, Rate: 40e6, Duration: 500 * time.Millisecond}},
		{name: "paced 64KiB", cfg: loadConfig{Conns: 2, Payload: 64 << 10, Rate: 40e6, Duration: 500 * time.Millisecond}},
		{name: "unpaced byte-bounded", cfg: loadConfig{Conns: 2, Payload: 64 << 10, Duration: 5 * time.Second, MaxBytes: 32 << 20}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := startBroker()
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			res := runLoad(ctx, b.Addr(), tt.cfg)
			if err := res.Err(); err != nil {
				t.Fatal(err)
			}
			if err := b.Close(); err != nil {
				t.Fatalf("broker: %v", err)
			}
			t.Logf("%d requests, %d bytes in %v: %.1f MB/s", res.Requests, res.Bytes, res.Elapsed, res.Rate()/1e6)
			for _, c := range res.Conns {
				if c.Requests < 2 {
					t.Errorf("connection %v sent %d requests, want ApiVersions and Produce", c.Client, c.Requests)
				}
			}
			if tt.cfg.Rate > 0 {
				if r := res.Rate(); r < 0.9*tt.cfg.Rate || r > 1.1*tt.cfg.Rate {
					t.Errorf("achieved %.1f MB/s, asked %.1f MB/s", r/1e6, tt.cfg.Rate/1e6)
				}
			}
			if tt.cfg.MaxBytes > 0 && res.Bytes < uint64(tt.cfg.MaxBytes) {
				t.Errorf("sent %d bytes, want at least %d", res.Bytes, tt.cfg.MaxBytes)
			}
		})
	}
}
