package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/kwatch/kwatch/audit"
	"github.com/kwatch/kwatch/capture"
	"github.com/kwatch/kwatch/internal/pcapgen"
	"github.com/kwatch/kwatch/pipeline"
)

// snapCaptures writes byte-heavy's traffic (kgo-sized Produce batches in
// loopback segments, smaller; instance IDs on first requests only, so that
// there are findings to compare) and the same traffic cut at 512 bytes as
// `tcpdump -s 512` writes it, into Dir(), once.
func snapCaptures(tb testing.TB) (full, cut string) {
	tb.Helper()
	c := Capture{Name: "snap-full.pcap", Opts: byteHeavy}
	c.Opts.Size = 64 << 20
	c.Opts.InstanceFirstOnly = true
	full = capturePath(tb, c)
	cut = filepath.Join(Dir(), "snap-512.pcap")
	if _, err := os.Stat(cut); err == nil {
		return full, cut
	}
	in, err := os.ReadFile(full)
	if err != nil {
		tb.Fatal(err)
	}
	out, err := pcapgen.Recut(in, 512)
	if err != nil {
		tb.Fatal(err)
	}
	writeBuilt(tb, cut, out)
	return full, cut
}

// readReport is read with the report kept.
func readReport(tb testing.TB, path string) *audit.Report {
	src, err := capture.Open(path, capture.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	defer src.Close()
	a := audit.New(audit.Options{SingleGoroutine: true})
	st, err := pipeline.Run(context.Background(), src, pipeline.Options{Workers: 1}, a)
	if err != nil {
		tb.Fatal(err)
	}
	a.AddCapture(st.Packets, st.Bytes, st.Connections)
	return a.Finish(st.LastTime)
}

// findingKey is what must not change when the snap length cuts payload
// bytes only: which rule fired, where, on what.
type findingKey struct {
	rule       string
	frame      uint64
	corr       int32
	confidence audit.Confidence
}

func findingKeys(r *audit.Report) []findingKey {
	out := make([]findingKey, len(r.Findings))
	for i, f := range r.Findings {
		out[i] = findingKey{f.Rule, f.Frame, f.CorrelationID, f.Confidence}
	}
	return out
}

// BenchmarkSnapLength reads the same traffic captured whole and at -s 512,
// alternately in one run (issue 13 item 7: the cut capture reads faster).
// SetBytes counts the full capture's bytes, so MB/s in both rows are of
// the original traffic. With -s 512 there is one truncated-packet per cut
// packet and nothing else may differ: the findings (rule, frame,
// correlation ID, confidence), requests and responses are the full
// capture's.
//
//	go test ./bench -run '^$' -bench SnapLength -benchtime 5x
func BenchmarkSnapLength(b *testing.B) {
	full, cut := snapCaptures(b)
	fi, err := os.Stat(full)
	if err != nil {
		b.Fatal(err)
	}
	rf, rc := readReport(b, full), readReport(b, cut)
	if !reflect.DeepEqual(findingKeys(rf), findingKeys(rc)) || rf.Totals.Findings == 0 {
		b.Fatalf("findings: full %d, -s 512 %d, not the same", rf.Totals.Findings, rc.Totals.Findings)
	}
	if rf.Totals.Requests != rc.Totals.Requests || rf.Totals.Responses != rc.Totals.Responses {
		b.Fatalf("requests/responses: full %d/%d, -s 512 %d/%d", rf.Totals.Requests, rf.Totals.Responses, rc.Totals.Requests, rc.Totals.Responses)
	}
	var tf, tc []time.Duration
	b.SetBytes(fi.Size())
	b.ReportAllocs()
	for b.Loop() {
		t := time.Now()
		read(b, full, 1)
		tf = append(tf, time.Since(t))
		t = time.Now()
		read(b, cut, 1)
		tc = append(tc, time.Since(t))
	}
	mf, mc := median(tf), median(tc)
	mb := float64(fi.Size()) / 1e6
	b.ReportMetric(mf.Seconds()*1e3, "full-ms")
	b.ReportMetric(mc.Seconds()*1e3, "s512-ms")
	fmt.Printf("%d findings, %d requests: full %v (%.0f MB/s), -s 512 %v (%.0f MB/s of the original traffic), medians of %d\n",
		rf.Totals.Findings, rf.Totals.Requests, mf.Round(time.Millisecond), mb/mf.Seconds(), mc.Round(time.Millisecond), mb/mc.Seconds(), len(tf))
	if mc >= mf {
		b.Errorf("-s 512 took %v, the full capture %v", mc, mf)
	}
}
