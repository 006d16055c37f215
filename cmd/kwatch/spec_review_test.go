package main

import (
	"encoding/json"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kwatch/kwatch/internal/pcapgen"
)

// SPEC.md section 5: "A finding, as one JSON object (NDJSON stream, or an
// array in a report)". A report without findings must still hold an array
// ("findings": []), not null.
func TestSpecReportFindingsIsArray(t *testing.T) {
	code, stdout, stderr := runKwatch("read", "--format", "json", "--fail-on", "never", shipped("compliant-modern.pcap"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep map[string]json.RawMessage
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(rep["findings"])); !strings.HasPrefix(got, "[") {
		t.Errorf(`report "findings" = %s, want a JSON array ([])`, got)
	}
}

// SPEC.md section 5: "2 when the input cannot be read or the command line
// is wrong (with a one-line reason on stderr)". An unknown flag or a bad
// flag value is a wrong command line too.
func TestSpecFlagErrorsOneLine(t *testing.T) {
	for _, args := range [][]string{
		{"read", "--bogus", shipped("quickstart.pcap")},
		{"read", "--port", "0", shipped("quickstart.pcap")},
		{"read", "--max-frame", "lots", shipped("quickstart.pcap")},
	} {
		code, _, stderr := runKwatch(args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
		if n := strings.Count(strings.TrimRight(stderr, "\n"), "\n") + 1; n != 1 {
			t.Errorf("%v: stderr has %d lines, want a one-line reason:\n%s", args, n, stderr)
		}
	}
}

// SPEC.md section 1: "Java's ... Uuid.toString() ... is the canonical string
// form kwatch prints for every UUID (with the 8-4-4-4-12 hex form beside it
// where a person reads it)". instance-id-reserved prints the instance ID in
// "observed" as hex only.
func TestSpecReservedObservedCanonical(t *testing.T) {
	code, stdout, stderr := runKwatch("read", "--format", "json", "--fail-on", "never", shipped("rule-instance-id-reserved.pcap"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep struct {
		Findings []map[string]any `json:"findings"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	const one = "AAAAAAAAAAAAAAAAAAAAAQ" // ONE_UUID, Java form
	found := false
	for _, f := range rep.Findings {
		if f["rule"] != "instance-id-reserved" {
			continue
		}
		found = true
		if obs, _ := f["observed"].(string); !strings.Contains(obs, one) {
			t.Errorf("instance-id-reserved observed = %q, want the canonical form %s (hex may stand beside it)", obs, one)
		}
	}
	if !found {
		t.Fatal("no instance-id-reserved finding")
	}
}

// SPEC.md section 2: "TLS traffic ... cannot be audited: it is counted and
// reported". The same mid-stream TLS connection is reported as
// tls-connection without --port, but with --port naming its broker port it
// is taken for Kafka and the TLS coverage event disappears.
func TestSpecTLSMidstreamWithPort(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{NoSYN: true, Broker: netip.MustParseAddrPort("10.0.0.1:9093")})
	rec := append([]byte{0x17, 0x03, 0x03, 0x00, 0x80}, make([]byte, 0x80)...) // TLS application data
	for i := 0; i < 4; i++ {
		cn.Raw(pcapgen.ToBroker, rec)
		cn.Raw(pcapgen.ToClient, rec)
	}
	cn.Close()
	path := filepath.Join(t.TempDir(), "tls-midstream.pcap")
	if err := c.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	tlsCount := func(args ...string) float64 {
		code, stdout, stderr := runKwatch(append([]string{"read", "--format", "json", "--fail-on", "never"}, append(args, path)...)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var rep struct {
			Totals struct {
				Coverage map[string]float64 `json:"coverage"`
			} `json:"totals"`
		}
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
			t.Fatal(err)
		}
		return rep.Totals.Coverage["tls-connection"]
	}
	without, with := tlsCount(), tlsCount("--port", "9093")
	if without != 1 {
		t.Fatalf("without --port: tls-connection %v, want 1", without)
	}
	if with != 1 {
		t.Errorf("with --port 9093: tls-connection %v, want 1 (as without --port)", with)
	}
}

// SPEC.md section 5: a report holds "totals (packets, bytes, connections,
// ...)"; the report has both "connections" and "kafka_connections" and the
// text report prints "N TCP, M Kafka". A non-Kafka TCP connection (HTTP)
// is still a TCP connection of the capture, but it is not counted.
func TestSpecTotalsCountAllTCPConnections(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	k := c.Conn(pcapgen.ConnOptions{})
	s := k.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("app"), CorrelationID: 1})
	s.RoundTrip(pcapgen.Metadata(12, "t"), pcapgen.MetadataResponse(12, "10.0.0.1", 9092))
	k.Close()
	h := c.Conn(pcapgen.ConnOptions{Broker: netip.MustParseAddrPort("10.0.0.2:80")})
	h.Raw(pcapgen.ToBroker, []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	h.Raw(pcapgen.ToClient, []byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"))
	h.Close()
	path := filepath.Join(t.TempDir(), "mixed.pcap")
	if err := c.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runKwatch("read", "--format", "json", "--fail-on", "never", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep struct {
		Totals struct {
			Connections      int `json:"connections"`
			KafkaConnections int `json:"kafka_connections"`
		} `json:"totals"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Totals.KafkaConnections != 1 || rep.Totals.Connections != 2 {
		t.Errorf("connections %d, kafka_connections %d; want 2 TCP connections, 1 Kafka", rep.Totals.Connections, rep.Totals.KafkaConnections)
	}
}
