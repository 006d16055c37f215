package pcapgen_test

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kwatch/kwatch/audit"
	"github.com/kwatch/kwatch/capture"
	"github.com/kwatch/kwatch/internal/corpus"
	"github.com/kwatch/kwatch/internal/pcapgen"
	"github.com/kwatch/kwatch/pipeline"
)

// outcome is what a capture gives: its findings, each as a line without
// frame numbers (a reordered capture numbers its packets otherwise), and
// its coverage totals.
type outcome struct {
	findings  []string
	coverage  map[string]uint64
	truncated uint64 // packets the snap length cut
}

// scenarioOptions are the auditor's options for scenario s, as kwatch read
// sets them from its profile and flags.
func scenarioOptions(t *testing.T, s corpus.Scenario) audit.Options {
	t.Helper()
	p, err := audit.ParseProfile(s.ProfileName())
	if err != nil {
		t.Fatal(err)
	}
	opts := audit.Options{Profile: p, MemberIDRequiredFrom: 1}
	for i, a := range s.Args {
		if a == "--member-id-required-from" && i+1 < len(s.Args) {
			v, _ := strconv.Atoi(s.Args[i+1])
			opts.MemberIDRequiredFrom = int16(v)
			if v == 0 {
				opts.MemberIDRequiredFrom = -1
			}
		}
	}
	return opts
}

// audited runs the pipeline and auditor over capture b.
func audited(t *testing.T, opts audit.Options, b []byte) outcome {
	t.Helper()
	a := audit.New(opts)
	var st pipeline.Stats
	src, err := capture.NewReader(bytes.NewReader(b), "test.pcap", capture.Options{})
	if err == nil {
		defer src.Close()
		st, err = pipeline.Run(context.Background(), src, pipeline.Options{HeaderV3: audit.HeaderV3(opts.Profile)}, a)
	}
	if err != nil {
		t.Fatal(err)
	}
	a.AddCapture(st.Packets, st.Bytes, st.Connections)
	rep := a.Finish(st.LastTime)
	o := outcome{coverage: rep.Totals.Coverage, truncated: st.Truncated}
	for _, f := range rep.Findings {
		o.findings = append(o.findings, fmt.Sprintf("%s %s/%s %s corr %d client %q", f.Rule, f.Severity, f.Confidence, f.API, f.CorrelationID, f.ClientID))
	}
	slices.Sort(o.findings)
	return o
}

// withoutTruncated is the coverage totals but truncated-packet.
func withoutTruncated(m map[string]uint64) map[string]uint64 {
	m = maps.Clone(m)
	delete(m, "truncated-packet")
	return m
}

// TestRecutCorpus checks SPEC.md 2.1 "Snap length" on every corpus capture:
// cut at 512 or 256 bytes, it gives the clean capture's findings, with the
// same confidence, and the same coverage but one truncated-packet per cut
// packet: no stream-gap, no unmatched response. Cut at 128 or 96 bytes,
// identity fields themselves are cut (at 96 the header instance ID of a
// request with a 10-byte client ID is one byte short): findings that need
// them are not made, none the clean capture lacks is invented, and no cut
// is taken for a stream-gap.
func TestRecutCorpus(t *testing.T) {
	forScenarios(t, func(s corpus.Scenario, clean []byte, opts audit.Options, want outcome) {
		for _, snap := range []int{512, 256, 128, 96} {
			t.Run(fmt.Sprintf("%s/s%d", s.Name, snap), func(t *testing.T) {
				b, err := pcapgen.Recut(clean, snap)
				if err != nil {
					t.Fatal(err)
				}
				got := audited(t, opts, b)
				checkCut(t, got, false)
				if snap < 256 {
					checkFewer(t, got, want)
					return
				}
				sameOutcome(t, got, want, true)
			})
		}
	})
}

// forScenarios calls fn for every corpus scenario with its clean capture,
// audit options and outcome.
func forScenarios(t *testing.T, fn func(s corpus.Scenario, clean []byte, opts audit.Options, want outcome)) {
	t.Helper()
	for _, s := range corpus.Scenarios() {
		clean, err := s.Capture()
		if err != nil {
			t.Fatal(err)
		}
		opts := scenarioOptions(t, s)
		fn(s, clean, opts, audited(t, opts, clean))
	}
}

// checkFewer checks a capture cut into its identity fields against the
// clean one: every rule it reports the clean capture reports too (a
// property rule may fire at a later request, the first one's field being
// cut), and its stream-gaps are the clean capture's.
func checkFewer(t *testing.T, got, want outcome) {
	t.Helper()
	rule := func(f string) string { r, _, _ := strings.Cut(f, " "); return r }
	for _, f := range got.findings {
		if !slices.ContainsFunc(want.findings, func(w string) bool { return rule(w) == rule(f) }) {
			t.Errorf("finding the clean capture lacks: %s", f)
		}
	}
	if g, w := got.coverage["stream-gap"], want.coverage["stream-gap"]; g != w {
		t.Errorf("stream-gap %d, clean capture %d", g, w)
	}
}

// TestRecutBulk checks the snap length on Produce and Fetch traffic, whose
// frames span many packets, with frame headers straddling segments,
// retransmissions and delayed ACKs: cut at 512 or 256 bytes, it gives the
// clean capture's findings and coverage, with one truncated-packet per cut
// packet.
func TestRecutBulk(t *testing.T) {
	clean := bulk(t)
	opts := audit.Options{Profile: audit.ProfileSeed, MemberIDRequiredFrom: 1}
	want := audited(t, opts, clean)
	for _, snap := range []int{512, 256} {
		t.Run(fmt.Sprintf("s%d", snap), func(t *testing.T) {
			b, err := pcapgen.Recut(clean, snap)
			if err != nil {
				t.Fatal(err)
			}
			got := audited(t, opts, b)
			checkCut(t, got, true)
			sameOutcome(t, got, want, true)
		})
	}
}

// TestShuffleBulk checks SPEC.md 2.1 "Reordering" on the same traffic:
// reordered in windows of 3 to 8, it gives the clean coverage.
func TestShuffleBulk(t *testing.T) {
	clean := bulk(t)
	opts := audit.Options{Profile: audit.ProfileSeed, MemberIDRequiredFrom: 1}
	want := audited(t, opts, clean)
	for seed := range uint64(3) {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			b, err := pcapgen.Shuffle(clean, 3, 8, seed)
			if err != nil {
				t.Fatal(err)
			}
			sameOutcome(t, audited(t, opts, b), want, false)
		})
	}
}

// bulk is a capture of Produce and Fetch traffic whose frames span many
// packets, frame headers straddling segments, with retransmissions and
// delayed ACKs.
func bulk(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	_, err := pcapgen.WriteBulk(&buf, pcapgen.BulkOptions{
		Connections: 6, Requests: 120, PayloadSize: 3000, SplitFraction: 0.3,
		RetransmitFraction: 0.05, AckFraction: 0.3, ProducePerFetch: 2, Seed: 7,
	})
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// sameOutcome checks got against the clean capture's outcome: the same
// findings and coverage, but truncated-packet when cut.
func sameOutcome(t *testing.T, got, want outcome, cut bool) {
	t.Helper()
	if !slices.Equal(got.findings, want.findings) {
		t.Errorf("findings:\n got %q\nwant %q", got.findings, want.findings)
	}
	g, w := got.coverage, want.coverage
	if cut {
		g, w = withoutTruncated(g), withoutTruncated(w)
	}
	if !maps.Equal(g, w) {
		t.Errorf("coverage:\n got %v\nwant %v", g, w)
	}
}

// TestShuffleCorpus checks SPEC.md 2.1 "Reordering" on every corpus
// capture: its packets reordered in windows of 3 to 8 (a late SYN or
// SYN-ACK among them) give the clean capture's findings and coverage.
// Reordering within a connection is undone; across connections it cannot
// be (nothing orders two connections' packets but the capture): seeds 7
// and 9 swap the requests of rule-member-id-collision-legacy's two
// claimants, and the collision is then found at the other one.
func TestShuffleCorpus(t *testing.T) {
	forScenarios(t, func(s corpus.Scenario, clean []byte, opts audit.Options, want outcome) {
		for seed := range uint64(6) {
			t.Run(fmt.Sprintf("%s/seed%d", s.Name, seed), func(t *testing.T) {
				b, err := pcapgen.Shuffle(clean, 3, 8, seed)
				if err != nil {
					t.Fatal(err)
				}
				sameOutcome(t, audited(t, opts, b), want, false)
			})
		}
	})
}

// TestLostLastResponse checks SPEC.md 2.1 "Loss seen by acknowledgement" at
// a connection's end: the last response lost by the capture, seen only
// through the client's FIN acknowledging it, is one stream-gap; kept, none.
func TestLostLastResponse(t *testing.T) {
	for _, lost := range []bool{false, true} {
		t.Run(fmt.Sprintf("lost=%v", lost), func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			cn := c.Conn(pcapgen.ConnOptions{
				Client: netip.MustParseAddrPort("10.1.0.1:40001"),
				Broker: netip.MustParseAddrPort("10.0.0.1:9092"),
			})
			s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("app"), CorrelationID: 1})
			s.RoundTrip(pcapgen.APIVersions(3, "kgo", "1.0"), pcapgen.APIVersionsResponse(3))
			corr, _ := s.Request(pcapgen.Metadata(12, "orders"))
			if lost {
				cn.DropNext(1)
			}
			s.Respond(corr, pcapgen.MetadataResponse(12, "10.0.0.1", 9092))
			cn.Close()
			b, err := c.Bytes()
			if err != nil {
				t.Fatal(err)
			}
			got := audited(t, audit.Options{Profile: audit.ProfileSeed, MemberIDRequiredFrom: 1}, b)
			want := uint64(0)
			if lost {
				want = 1
			}
			if g := got.coverage["stream-gap"]; g != want {
				t.Errorf("stream-gap %d, want %d (coverage %v)", g, want, got.coverage)
			}
			if g := got.coverage["unmatched-response"]; g != 0 {
				t.Errorf("unmatched-response %d, want 0", g)
			}
		})
	}
}

// TestShuffleRecutBulk: both conditions at once, the Produce/Fetch traffic
// reordered in windows of 3 to 8 and cut at 256 bytes gives the clean
// findings and coverage, with one truncated-packet per cut packet.
func TestShuffleRecutBulk(t *testing.T) {
	clean := bulk(t)
	opts := audit.Options{Profile: audit.ProfileSeed, MemberIDRequiredFrom: 1}
	want := audited(t, opts, clean)
	b, err := pcapgen.Shuffle(clean, 3, 8, 4)
	if err == nil {
		b, err = pcapgen.Recut(b, 256)
	}
	if err != nil {
		t.Fatal(err)
	}
	got := audited(t, opts, b)
	checkCut(t, got, true)
	sameOutcome(t, got, want, true)
}

// checkCut checks that a cut capture reports one truncated-packet per
// packet the snap length cut, and that some were when some must be.
func checkCut(t *testing.T, got outcome, some bool) {
	t.Helper()
	if n := got.coverage["truncated-packet"]; n != got.truncated || some && n == 0 {
		t.Errorf("truncated-packet %d, want one per cut packet: %d", n, got.truncated)
	}
}
