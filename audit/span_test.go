package audit

import (
	"testing"
	"time"

	"github.com/kwatch/kwatch/decode"
)

// TestReportSpan: the report's start and end are the earliest and latest
// packet times, whatever order the events come in.
func TestReportSpan(t *testing.T) {
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	tests := []struct {
		name       string
		at         []time.Time
		start, end time.Time
	}{
		{name: "in order", at: []time.Time{ms(1), ms(2), ms(3)}, start: ms(1), end: ms(3)},
		{name: "earliest later", at: []time.Time{ms(2), ms(3), ms(1)}, start: ms(1), end: ms(3)},
		{name: "latest first", at: []time.Time{ms(3), ms(1), ms(2)}, start: ms(1), end: ms(3)},
		{name: "one event", at: []time.Time{ms(5)}, start: ms(5), end: ms(5)},
		{name: "zero times skipped", at: []time.Time{{}, ms(4), {}, ms(2)}, start: ms(2), end: ms(4)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := New(Options{})
			for i, at := range tt.at {
				a.Event(&decode.Event{Kind: decode.KindCoverage, Conn: connA, Frame: uint64(i + 1), Time: at, Coverage: decode.StreamGap})
			}
			r := a.Finish(tt.end)
			if r.Start != timeString(tt.start) || r.End != timeString(tt.end) {
				t.Errorf("span %s .. %s, want %s .. %s", r.Start, r.End, timeString(tt.start), timeString(tt.end))
			}
		})
	}
}
