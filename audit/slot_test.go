package audit

import (
	"bytes"
	"testing"
	"time"
)

func reportBytes(t *testing.T, r *Report) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteText(&b, false); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestSlotSameReport: events carrying a Slot (as the decoder makes them),
// Slots shared with other sinks, and an Auditor without a lock all give the
// report of events looked up by ConnID.
func TestSlotSameReport(t *testing.T) {
	want := reportBytes(t, goldenScenario().finish())
	tests := []struct {
		name string
		run  func(t *testing.T) []*Report
	}{
		{name: "slots", run: func(t *testing.T) []*Report {
			return []*Report{goldenEvents(newSC(Options{}).withSlots()).finish()}
		}},
		{name: "single goroutine", run: func(t *testing.T) []*Report {
			return []*Report{goldenEvents(newSC(Options{SingleGoroutine: true}).withSlots()).finish()}
		}},
		{name: "another sink's value", run: func(t *testing.T) []*Report {
			s := newSC(Options{}).withSlots()
			foreign := any("another sink's")
			s.slots[connA] = &foreign
			r := goldenEvents(s).finish()
			if foreign != "another sink's" {
				t.Errorf("slot overwritten with %v", foreign)
			}
			return []*Report{r}
		}},
		{name: "two auditors", run: func(t *testing.T) []*Report {
			s := newSC(Options{}).withSlots()
			other := New(Options{})
			other.AddCapture(120, 64000, 0)
			s.also = []*Auditor{other}
			goldenEvents(s)
			return []*Report{s.finish(), other.Finish(s.now)}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i, r := range tt.run(t) {
				if got := reportBytes(t, r); !bytes.Equal(got, want) {
					t.Errorf("report %d differs:\n%s\nwant:\n%s", i, got, want)
				}
			}
		})
	}
}

// TestSlotAfterSweep: once a closed connection's state is dropped, an
// event in its Slot gets a new state, as one looked up by ConnID does.
func TestSlotAfterSweep(t *testing.T) {
	var reports [][]byte
	for _, slots := range []bool{false, true} {
		s := newSC(Options{ClosedGrace: time.Second})
		if slots {
			s.withSlots()
		}
		s.req(connA, kMetadata, 12, cid("first"))
		s.end(connA)
		s.now = s.now.Add(2 * time.Second)
		s.req(connB, kMetadata, 12) // sweeps connA
		if _, ok := s.a.conn.conns[connA]; ok {
			t.Fatal("closed connection kept after its grace")
		}
		s.req(connA, kMetadata, 12, cid("second"))
		rep := s.finish()
		if rep.Totals.Connections != 3 {
			t.Errorf("slots %v: %d connections, want 3", slots, rep.Totals.Connections)
		}
		reports = append(reports, reportBytes(t, rep))
	}
	if !bytes.Equal(reports[0], reports[1]) {
		t.Errorf("with slots:\n%s\nwithout:\n%s", reports[1], reports[0])
	}
}
