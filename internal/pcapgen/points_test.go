package pcapgen_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/kwatch/kwatch/audit"
	"github.com/kwatch/kwatch/internal/corpus"
	"github.com/kwatch/kwatch/internal/pcapgen"
)

// TestShuffleKeepingTimesCorpus: SPEC.md 2.1 "Reordering" where every
// packet keeps its own capture time (`-i any`, multi-queue NICs), so the
// clean order across connections is in the capture. Known to fail: kwatch
// judges connections against each other in the order reassembly delivers
// their data, which is file order; with seeds 7 and 11,
// rule-member-id-collision-legacy's first claimant's JoinGroup response
// comes after the second claimant's join in the file (before it in time),
// the join looks retried after a coordinator move and no collision is
// found (seeds 9 and 10 find it on the other claimant). Ordering packets
// by time within the reordering window before reassembly would give the
// clean findings. Set KWATCH_KNOWN_GAPS=1 to run it.
func TestShuffleKeepingTimesCorpus(t *testing.T) {
	if os.Getenv("KWATCH_KNOWN_GAPS") == "" {
		t.Skip("known: cross-connection order is file order, not capture time (docs/rules.md)")
	}
	forScenarios(t, func(s corpus.Scenario, clean []byte, opts audit.Options, want outcome) {
		for seed := range uint64(12) {
			t.Run(fmt.Sprintf("%s/seed%d", s.Name, seed), func(t *testing.T) {
				b, err := pcapgen.ShuffleKeepingTimes(clean, 3, 8, seed)
				if err != nil {
					t.Fatal(err)
				}
				sameOutcome(t, audited(t, opts, b), want, false)
			})
		}
	})
}

// TestSplitAndDropRoundTrip: SplitCapture puts every packet in exactly one
// file at the place it reports; DropAcked drops only what it reports, and
// only segments the other side acknowledged later.
func TestSplitAndDropRoundTrip(t *testing.T) {
	clean := bulk(t)
	segs, err := pcapgen.Segments(clean)
	if err != nil {
		t.Fatal(err)
	}
	files, keys, where, err := pcapgen.SplitCapture(clean, func(s pcapgen.Segment) string { return fmt.Sprint(s.Index % 3) })
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 3 || len(where) != len(segs) {
		t.Fatalf("keys %v, %d places for %d packets", keys, len(where), len(segs))
	}
	for _, k := range keys {
		part, err := pcapgen.Segments(files[k])
		if err != nil {
			t.Fatal(err)
		}
		for i, s := range segs {
			if at := where[i]; at.Key == k && (at.Frame == 0 || int(at.Frame) > len(part) || part[at.Frame-1].Seq != s.Seq || part[at.Frame-1].Len != s.Len) {
				t.Fatalf("packet %d placed at %v, not there", i, at)
			}
		}
	}
	out, dropped, err := pcapgen.DropAcked(clean, func(s pcapgen.Segment) bool { return s.Index%7 == 0 })
	if err != nil {
		t.Fatal(err)
	}
	left, err := pcapgen.Segments(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(dropped) == 0 || len(left)+len(dropped) != len(segs) {
		t.Fatalf("%d dropped, %d left of %d", len(dropped), len(left), len(segs))
	}
	for _, i := range dropped {
		if s := segs[i]; i%7 != 0 || s.Len == 0 {
			t.Errorf("dropped packet %d (%d bytes), not picked data", i, s.Len)
		}
	}
}
