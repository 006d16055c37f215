package capture

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// TestPcapngAbsurdTimes: an if_tsoffset no clock can have is ignored, a
// timestamp beyond 2262 or before 1970 is clamped, both counted and warned
// about; sane times pass unchanged.
func TestPcapngAbsurdTimes(t *testing.T) {
	const sane = 1764434965 // 2025-11-29
	for _, tt := range []struct {
		name     string
		tsresol  int
		tsoffset int64
		ts       uint64
		want     time.Time
		clamped  uint64
	}{
		{"sane", 0, 0, sane, time.Unix(sane, 0), 0},
		{"sane with offset", 0, -100, sane, time.Unix(sane-100, 0), 0},
		{"if_tsoffset INT64_MAX", 0, math.MaxInt64, sane, time.Unix(sane, 0), 1},
		{"if_tsoffset INT64_MIN", 0, math.MinInt64 + 1, sane, time.Unix(sane, 0), 1},
		{"offset before 1970", 0, -sane - 10, sane, time.Unix(0, 0), 1},
		{"timestamp past 2262", 0, 0, math.MaxUint64, time.Unix(maxPacketSec, 0), 1},
		{"2^63 seconds", 0, 0, 1 << 63, time.Unix(maxPacketSec, 0), 1},
		{"nanoseconds, largest", 9, 0, math.MaxUint64, time.Unix(maxPacketSec, 0), 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var f ngFile
			f.shb(false)
			f.idb(1, 0, tt.tsresol, tt.tsoffset)
			f.epb(rec{ts: tt.ts, data: []byte("x")})
			f.epb(rec{ts: tt.ts, data: []byte("y")})
			var log bytes.Buffer
			src, err := NewReader(bytes.NewReader(f.b), "t.pcapng", Options{Logger: zerolog.New(&log)})
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			ps, err := readAll(t, src)
			if err != nil || len(ps) != 2 {
				t.Fatalf("%d packets, %v", len(ps), err)
			}
			for _, p := range ps {
				if !p.Time.Equal(tt.want) {
					t.Errorf("frame %d at %v, want %v", p.Frame, p.Time, tt.want)
				}
			}
			warned := strings.Count(log.String(), "\"warn\"")
			if (tt.clamped != 0) != (warned == 1) {
				t.Errorf("clamped %d, warnings %d: %s", tt.clamped, warned, log.String())
			}
		})
	}
}
