package audit

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/kwatch/kwatch/decode"
)

// TestRepeat: a finding counted as a repeat of its connection's last case
// (no Finding made) leaves the report as the whole path does. The whole
// path is taken by an Auditor with OnFinding; the repeat path by one
// without, fed the same events; both keep one finding, so that repeats
// are not kept.
func TestRepeat(t *testing.T) {
	tests := []struct {
		name string
		o    Options
		run  func(s *sc)
		want map[string]uint64 // findings by rule
	}{
		{
			name: "instance ID dropped on every request",
			run: func(s *sc) {
				s.start(connA, true)
				s.req(connA, 0, 11, inst(v4A))
				for range 6 {
					s.req(connA, 0, 11)
				}
			},
			want: map[string]uint64{"instance-id-dropped": 6},
		},
		{
			name: "two rules alternate on one connection",
			run: func(s *sc) {
				s.start(connA, true)
				s.req(connA, 0, 11, inst(v4A), cid("app"))
				for i := range 6 {
					if i%2 == 0 {
						s.req(connA, 0, 11, cid("other"), inst(v4A))
					} else {
						s.req(connA, 0, 11, cid("app"))
					}
				}
			},
			want: map[string]uint64{"client-id-changed": 3, "instance-id-dropped": 3},
		},
		{
			name: "row evicted between repeats",
			o:    Options{MaxInstances: 1},
			run: func(s *sc) {
				s.start(connA, true)
				s.start(connB, true)
				s.req(connA, 0, 11, inst(v4A))
				s.req(connA, 0, 11)
				s.req(connA, 0, 11)
				s.req(connB, 0, 11, inst(v4B)) // evicts v4A's row
				s.req(connA, 0, 11)            // brings it back, evicting v4B's
				s.req(connA, 0, 11)
				s.req(connB, 0, 11)
				s.req(connB, 0, 11)
				s.req(connA, 0, 11)
			},
			want: map[string]uint64{"instance-id-dropped": 7},
		},
		{
			name: "instance ID late on a legacy connection",
			run: func(s *sc) {
				s.start(connA, true)
				s.req(connA, 0, 11, cid("app"))
				for range 4 {
					s.req(connA, 0, 11, inst(v4A))
				}
				s.req(connA, 0, 11, inst(v4B))
				s.req(connA, 0, 11, inst(v4A))
			},
			want: map[string]uint64{"instance-id-late": 6},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.o.MaxFindings = 1
			whole := newSC(tt.o)
			repeat := New(tt.o)
			whole.also = []*Auditor{repeat}
			tt.run(whole)
			want, got := whole.finish(), repeat.Finish(whole.now)
			byCase := map[string]uint64{}
			for _, c := range got.Cases {
				byCase[c.Rule] += c.Count
			}
			for rule, n := range tt.want {
				if got.Totals.FindingsByRule[rule] != n || byCase[rule] != n {
					t.Errorf("%s: %d findings in the totals, %d in cases; want %d", rule, got.Totals.FindingsByRule[rule], byCase[rule], n)
				}
			}
			wj, _ := json.Marshal(want)
			gj, _ := json.Marshal(got)
			if !bytes.Equal(wj, gj) {
				t.Errorf("reports differ:\nwhole path:  %s\nrepeat path: %s", wj, gj)
			}
		})
	}
}

// TestRepeatAllocs: a repeated finding beyond the kept ones allocates
// nothing (a client that repeats its fault on every request).
func TestRepeatAllocs(t *testing.T) {
	s := newSC(Options{})
	s.a = New(Options{MaxFindings: 1})
	s.withSlots()
	s.start(connA, true)
	s.req(connA, 0, 11, inst(v4A))
	s.req(connA, 0, 11)
	e := decode.Event{Kind: decode.KindRequest, Conn: connA, FromStart: true, Slot: s.slots[connA],
		APIKey: 0, APIVersion: 11, HeaderVersion: 2, ClientIDNull: true, Time: s.now}
	allocs := testing.AllocsPerRun(100, func() {
		e.Frame++
		e.CorrelationID++
		s.a.Event(&e)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per repeated finding, want 0", allocs)
	}
	if n := s.a.inst.t.byRule[rInstanceDropped]; n != 102 {
		t.Errorf("%d instance-id-dropped findings counted, want 102", n)
	}
}
