package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kwatch/kwatch/internal/pcapgen"
	"github.com/kwatch/kwatch/internal/protogen"
)

// incompleteCaptures writes the captures of SPEC.md section 5's incomplete
// audits, and complete twins, into dir.
func incompleteCaptures(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	put := func(name string, data []byte) {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		files[name] = p
	}
	whole, err := os.ReadFile(shipped("rule-instance-id-dropped.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	put("whole.pcap", whole)
	put("cut.pcap", whole[:len(whole)*2/3])
	put("empty.pcap", whole[:24]) // the pcap file header alone
	compliant, err := os.ReadFile(shipped("compliant-modern.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	put("compliant-cut.pcap", compliant[:len(compliant)/2])

	http := pcapgen.New(pcapgen.Options{})
	cn := http.Conn(pcapgen.ConnOptions{})
	cn.Raw(pcapgen.ToBroker, []byte("GET / HTTP/1.1\r\nHost: broker\r\n\r\n"))
	cn.Raw(pcapgen.ToClient, []byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"))
	cn.Close()
	data, err := http.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	put("http.pcap", data)

	tls := pcapgen.New(pcapgen.Options{})
	tc := tls.Conn(pcapgen.ConnOptions{})
	tc.Raw(pcapgen.ToBroker, []byte{0x16, 0x03, 0x01, 0x00, 0x05, 0x01, 0x00, 0x00, 0x01, 0x00})
	tc.Close()
	if data, err = tls.Bytes(); err != nil {
		t.Fatal(err)
	}
	put("tls.pcap", data)
	return files
}

// TestIncompleteAudit: SPEC.md section 5. An audit that could not see what
// it was given (the input broke off, nothing recognised as Kafka) says so
// first in the text report and as "complete": false with warnings in JSON,
// and exits 3 unless a finding reaches --fail-on (1); --fail-on never
// exits 0. A whole capture is complete.
func TestIncompleteAudit(t *testing.T) {
	files := incompleteCaptures(t, t.TempDir())
	tests := []struct {
		file     string
		failOn   string
		code     int
		complete bool
		warning  string // part of the one expected warning
	}{
		{"whole.pcap", "error", 1, true, ""},
		{"whole.pcap", "never", 0, true, ""},
		{"cut.pcap", "warn", 1, false, "the input broke off"}, // its finding reaches --fail-on
		{"cut.pcap", "never", 0, false, "the input broke off"},
		{"compliant-cut.pcap", "error", 3, false, "the input broke off"},
		{"empty.pcap", "error", 3, false, "holds no packets"},
		{"empty.pcap", "never", 0, false, "holds no packets"},
		{"http.pcap", "error", 3, false, "recognised as Kafka among its 1 TCP connections"},
		{"tls.pcap", "info", 3, false, "are TLS and their secrets are not known"},
	}
	for _, tt := range tests {
		t.Run(tt.file+"/fail-on-"+tt.failOn, func(t *testing.T) {
			code, stdout, stderr := runKwatch("read", "--format", "json", "--fail-on", tt.failOn, files[tt.file])
			if code != tt.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tt.code, stderr)
			}
			var rep struct {
				Complete *bool    `json:"complete"`
				Warnings []string `json:"warnings"`
			}
			if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, stdout)
			}
			if rep.Complete == nil || *rep.Complete != tt.complete {
				t.Errorf("complete = %v, want %v", rep.Complete, tt.complete)
			}
			switch {
			case tt.warning == "" && len(rep.Warnings) != 0:
				t.Errorf("warnings %q on a complete audit", rep.Warnings)
			case tt.warning != "" && (len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], tt.warning)):
				t.Errorf("warnings %q, want one with %q", rep.Warnings, tt.warning)
			}
			_, text, _ := runKwatch("read", "--fail-on", tt.failOn, files[tt.file])
			first, _, _ := strings.Cut(text, "\n")
			if incomplete := strings.HasPrefix(first, "INCOMPLETE AUDIT: "); incomplete == tt.complete {
				t.Errorf("text report's first line %q (complete %v)", first, tt.complete)
			}
		})
	}
}

// TestTUIFileFormatChecked: kwatch tui FILE prints read's report (text or
// json) when the UI closes, so a format it cannot print is refused.
func TestTUIFileFormatChecked(t *testing.T) {
	code, _, stderr := runKwatch("tui", "--format", "ndjson", shipped("quickstart.pcap"))
	if code != 2 || !strings.Contains(stderr, "--format") {
		t.Errorf("tui --format ndjson: exit %d, stderr %q; want 2 and a reason", code, stderr)
	}
}

// TestVersion: --version names kwatch and the Go version it was built with.
func TestVersion(t *testing.T) {
	code, stdout, _ := runKwatch("--version")
	if code != 0 || !strings.HasPrefix(stdout, "kwatch ") || !strings.Contains(stdout, "go1.") {
		t.Errorf("--version: exit %d, %q", code, stdout)
	}
}

// TestRulesExplainCoverage: kwatch rules explains coverage events too.
func TestRulesExplainCoverage(t *testing.T) {
	code, stdout, stderr := runKwatch("rules", "midstream-join")
	if code != 0 || !strings.Contains(stdout, "not a violation") {
		t.Errorf("rules midstream-join: exit %d, %q %q", code, stdout, stderr)
	}
	code, stdout, _ = runKwatch("rules", "ghost-member")
	if code != 0 || !strings.Contains(stdout, "Fix: ") {
		t.Errorf("rules ghost-member: exit %d, no fix in %q", code, stdout)
	}
}

// TestNoKafkaOnABrokerHost: a capture of the other protocols of a broker
// host (ZooKeeper, PostgreSQL, HTTP...) and no Kafka is incomplete (exit
// 3, SPEC.md 5), every connection counted as not Kafka, no client row.
func TestNoKafkaOnABrokerHost(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	for _, p := range protogen.All() {
		p.Write(c, protogen.Opts{})
	}
	path := filepath.Join(t.TempDir(), "host.pcap")
	if err := c.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runKwatch("read", "--format", "json", path)
	if code != 3 {
		t.Errorf("exit %d, want 3 (nothing was Kafka); stderr %q", code, stderr)
	}
	var rep struct {
		Totals    map[string]any `json:"totals"`
		Instances []any          `json:"instances"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	tt := rep.Totals
	if tt["kafka_connections"] != 0.0 || tt["connections"] == 0.0 || tt["not_kafka_connections"] != tt["connections"] || len(rep.Instances) != 0 {
		t.Errorf("connections %v, kafka %v, not kafka %v, %d client rows: want every connection not Kafka and no row",
			tt["connections"], tt["kafka_connections"], tt["not_kafka_connections"], len(rep.Instances))
	}
}
