package audit

import (
	"testing"
)

// TestSnapshotSince: the cursor hands each kept finding over once, in the
// order made, and the report beside it has every count but no findings.
func TestSnapshotSince(t *testing.T) {
	a := New(Options{})
	a.inst.findings.add(&Finding{Rule: "a", Frame: 9}, 0)
	a.inst.findings.add(&Finding{Rule: "b", Frame: 3}, 0)
	a.inst.t.bySeverity[SeverityError] = 2
	r, fresh, next := a.SnapshotSince(0)
	if len(r.Findings) != 0 || r.Totals.Findings != 2 || len(fresh) != 2 || fresh[0].Rule != "a" || next != 2 {
		t.Fatalf("first: %d report findings, totals %d, fresh %v, next %d", len(r.Findings), r.Totals.Findings, fresh, next)
	}
	a.inst.findings.add(&Finding{Rule: "c", Frame: 1}, 0)
	if _, fresh, next = a.SnapshotSince(next); len(fresh) != 1 || fresh[0].Rule != "c" || next != 3 {
		t.Fatalf("second: fresh %v, next %d", fresh, next)
	}
	if _, fresh, _ = a.SnapshotSince(99); len(fresh) != 0 {
		t.Fatalf("past the end: %v", fresh)
	}
	if got := a.Snapshot(); len(got.Findings) != 3 {
		t.Fatalf("Snapshot after SnapshotSince has %d findings, want 3", len(got.Findings))
	}
}

// BenchmarkSnapshotSince compares what a TUI poll costs the auditor at
// 100,000 kept findings: Snapshot copies them all under the lock (and
// sorts them), SnapshotSince only those made since the last poll (none).
func BenchmarkSnapshotSince(b *testing.B) {
	a := New(Options{})
	for i := range 100_000 {
		a.inst.findings.add(&Finding{Rule: "client-id-repeated", Frame: uint64(i), Message: "m"}, 0)
	}
	b.Run("snapshot", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = a.Snapshot()
		}
	})
	b.Run("since", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _, _ = a.SnapshotSince(len(a.inst.findings.fs))
		}
	})
}
