package reassembly

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/kwatch/kwatch/flow"
)

// refClock is IdleClock.Tick as first written, without its shortcuts.
type refClock struct {
	latest      time.Time
	latestFrame uint64
	lastFlush   time.Time
}

func (k *refClock) Tick(frame uint64, t time.Time) (flow.Meta, bool) {
	if t.After(k.latest) {
		k.latest = t
	}
	k.latestFrame = frame
	if k.lastFlush.IsZero() {
		k.lastFlush = k.latest
		return flow.Meta{}, false
	}
	if k.latest.Sub(k.lastFlush) < flushEvery {
		return flow.Meta{}, false
	}
	k.lastFlush = k.latest
	return flow.Meta{Frame: k.latestFrame, Time: k.latest}, true
}

// TestIdleClockSameAsRef: times that go back, stand still, start at zero,
// jump far, or lie out of Unix nanoseconds' range give the same flushes as
// the plain arithmetic.
func TestIdleClockSameAsRef(t *testing.T) {
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 3))
		var k IdleClock
		var ref refClock
		tm := t0
		if seed%4 == 0 {
			tm = time.Time{}
		}
		for frame := uint64(1); frame < 2000; frame++ {
			switch r.IntN(15) {
			case 0:
				tm = tm.Add(-time.Duration(r.IntN(3000)) * time.Millisecond)
			case 1:
			case 2:
				tm = tm.Add(time.Duration(r.Int64N(int64(1000 * time.Hour))))
			case 3:
				tm = time.Time{}
			case 4:
				tm = time.Time{}.Add(-time.Duration(r.IntN(1000)) * time.Hour)
			case 5: // near the edge of tcpasm.UnixNanos's range
				tm = time.Unix(1<<33-1, 0).Add(time.Duration(r.IntN(3000)-1500) * time.Millisecond)
			case 6: // past the range of Unix nanoseconds
				tm = time.Unix(1<<35, 0).Add(time.Duration(r.IntN(3000)) * time.Millisecond)
			default:
				tm = tm.Add(time.Duration(r.IntN(400)) * time.Millisecond)
			}
			m1, ok1 := k.Tick(frame, tm)
			m2, ok2 := ref.Tick(frame, tm)
			if ok1 != ok2 || m1 != m2 {
				t.Fatalf("seed %d frame %d (%v): Tick = %v %v, want %v %v", seed, frame, tm, m1, ok1, m2, ok2)
			}
		}
	}
}
