package metrics

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/kwatch/kwatch/audit"
	"github.com/kwatch/kwatch/capture"
	"github.com/kwatch/kwatch/pipeline"
)

// TestScrapeMatchesReport: the metrics of a known capture, scraped over
// HTTP, are the numbers of its report.
func TestScrapeMatchesReport(t *testing.T) {
	src, err := capture.Open("../testdata/pcaps/quickstart.pcap", capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	aud := audit.New(audit.Options{})
	st, err := pipeline.Run(context.Background(), src, pipeline.Options{}, aud)
	if err != nil {
		t.Fatal(err)
	}
	aud.AddCapture(st.Packets, st.Bytes, st.Connections)
	rep := aud.Finish(st.LastTime)

	srv, err := Serve("127.0.0.1:0", Registry(aud, Extra{Name: "kwatch_test_extra", Help: "a test gauge", Value: func() float64 { return 7 }}))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	resp, err := http.Get("http://" + srv.Addr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	text := string(body)

	want := []string{
		fmt.Sprintf("kwatch_packets_total %d", rep.Totals.Packets),
		fmt.Sprintf("kwatch_bytes_total %d", rep.Totals.Bytes),
		fmt.Sprintf("kwatch_kafka_connections_total %d", rep.Totals.KafkaConnections),
		fmt.Sprintf("kwatch_client_instances %d", len(rep.Instances)),
		fmt.Sprintf(`kwatch_requests_total{header_version="v2"} %d`, rep.Totals.RequestsByHeaderVersion["v2"]),
		"kwatch_test_extra 7",
	}
	for rule, n := range rep.Totals.FindingsByRule {
		r, _ := audit.LookupRule(rule)
		want = append(want, fmt.Sprintf(`kwatch_findings_total{rule=%q,severity=%q} %d`, rule, r.Severity, n))
	}
	for ev, n := range rep.Totals.Coverage {
		want = append(want, fmt.Sprintf(`kwatch_coverage_events_total{event=%q} %d`, ev, n))
	}
	if len(rep.Totals.FindingsByRule) == 0 {
		t.Fatal("the capture has no finding to check")
	}
	for _, w := range want {
		if !strings.Contains(text, w+"\n") {
			t.Errorf("scrape lacks %q", w)
		}
	}
}
