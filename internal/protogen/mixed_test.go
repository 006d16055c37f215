package protogen_test

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/kwatch/kwatch/audit"
	"github.com/kwatch/kwatch/capture"
	"github.com/kwatch/kwatch/internal/corpus"
	"github.com/kwatch/kwatch/internal/pcapgen"
	"github.com/kwatch/kwatch/internal/protogen"
	"github.com/kwatch/kwatch/pipeline"
)

// result is what a capture's audit says, without the totals that count
// every TCP connection and packet (those differ by construction).
type result struct {
	report   []byte
	kafka    uint64
	notKafka uint64
	conns    uint64
}

// audited runs the pipeline (no --port) and the auditor over c.
func audited(t *testing.T, c *pcapgen.Capture) result {
	t.Helper()
	path := filepath.Join(t.TempDir(), "mixed.pcap")
	if err := c.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	src, err := capture.Open(path, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	a := audit.New(audit.Options{})
	st, err := pipeline.Run(context.Background(), src, pipeline.Options{}, a)
	if err != nil {
		t.Fatal(err)
	}
	rep := a.Finish(st.LastTime)
	r := result{kafka: rep.Totals.KafkaConnections, notKafka: st.Decoders.NotKafka, conns: st.Connections}
	rep.Totals.Packets, rep.Totals.Bytes, rep.Totals.Connections = 0, 0, 0
	if r.report, err = json.MarshalIndent(rep, "", " "); err != nil {
		t.Fatal(err)
	}
	return r
}

// build writes scenario s then, after its last packet (so that frame
// numbers stay those of the Kafka capture), the given protocols, seen from
// their start or joined mid-stream.
func build(s corpus.Scenario, midStream bool, protos ...protogen.Proto) *pcapgen.Capture {
	c := pcapgen.New(pcapgen.Options{})
	s.Build(c)
	for i, p := range protos {
		p.Write(c, protogen.Opts{Host: i + 1, MidStream: midStream})
	}
	return c
}

// TestMixedCaptures: each protocol of a broker host, mixed with Kafka
// traffic of the corpus, without --port: exactly the Kafka connections are
// recognised, and the report (findings, rows, coverage, Kafka connection
// count) is the Kafka capture's; every other connection is counted as not
// Kafka.
func TestMixedCaptures(t *testing.T) {
	scenarios := corpus.Scenarios()
	protos := protogen.All()
	type mix struct {
		name      string
		s         corpus.Scenario
		midStream bool
		protos    []protogen.Proto
	}
	var mixes []mix
	for _, p := range protos {
		mixes = append(mixes, mix{p.Name, scenarios[0], false, []protogen.Proto{p}},
			mix{p.Name + " mid-stream", scenarios[0], true, []protogen.Proto{p}})
	}
	for _, s := range scenarios {
		mixes = append(mixes, mix{"all with " + s.Name, s, false, protos})
	}
	for _, m := range mixes {
		t.Run(m.name, func(t *testing.T) {
			alone := audited(t, build(m.s, false))
			mixed := audited(t, build(m.s, m.midStream, m.protos...))
			if alone.kafka == 0 {
				t.Fatalf("%s: no Kafka connection recognised alone", m.s.Name)
			}
			if !bytes.Equal(mixed.report, alone.report) {
				t.Errorf("mixed report differs from the Kafka capture's:\n%s\nwant:\n%s", mixed.report, alone.report)
			}
			others := mixed.conns - alone.conns
			if others == 0 || mixed.notKafka-alone.notKafka != others {
				t.Errorf("%d other connections, %d counted as not Kafka (alone: %d)", others, mixed.notKafka, alone.notKafka)
			}
		})
	}
}

// TestTLSWithoutHTTPALPN: TLS that does not offer HTTP by ALPN stays a
// tls-connection (SPEC.md 2), as the contrary case of the ALPN rule.
func TestTLSWithoutHTTPALPN(t *testing.T) {
	tests := []struct {
		name   string
		protos []string
		tls    uint64
	}{
		{"no alpn", nil, 1},
		{"kafka alpn", []string{"kafka"}, 1},
		{"h2", []string{"h2"}, 0},
		{"http/1.1 after another", []string{"x-other", "http/1.1"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			protogen.TLSClientHello(c, protogen.Opts{Host: 1}, tt.protos...)
			r := audited(t, c)
			var rep audit.Report
			if err := json.Unmarshal(r.report, &rep); err != nil {
				t.Fatal(err)
			}
			if got := rep.Totals.Coverage["tls-connection"]; got != tt.tls {
				t.Errorf("tls-connection = %d, want %d", got, tt.tls)
			}
			if r.notKafka != 1-tt.tls {
				t.Errorf("not Kafka = %d, want %d", r.notKafka, 1-tt.tls)
			}
		})
	}
}
