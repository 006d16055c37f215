package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kwatch/kwatch/internal/pcapgen"
)

func runKwatch(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func shipped(name string) string { return filepath.Join("..", "..", "testdata", "pcaps", name) }

// TestExitStatus: SPEC.md section 5's exit statuses, with one-line reasons
// on stderr for input and usage errors.
func TestExitStatus(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.pcap")
	os.WriteFile(garbage, []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), 0o600)
	empty := filepath.Join(dir, "empty.pcap")
	os.WriteFile(empty, nil, 0o600)
	good, err := os.ReadFile(shipped("quickstart.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "truncated.pcap")
	os.WriteFile(truncated, good[:len(good)*2/3], 0o600)

	tests := []struct {
		name       string
		args       []string
		code       int
		stderrHas  string
		stdoutHas  string
		oneLineErr bool
	}{
		{name: "no command", args: nil, code: 2, stderrHas: "Usage"},
		{name: "unknown command", args: []string{"frobnicate"}, code: 2, stderrHas: "unknown command", oneLineErr: true},
		{name: "missing file", args: []string{"read", filepath.Join(dir, "nope.pcap")}, code: 2, stderrHas: "nope.pcap", oneLineErr: true},
		{name: "garbage file", args: []string{"read", garbage}, code: 2, stderrHas: "not a pcap or pcapng file", oneLineErr: true},
		{name: "empty file", args: []string{"dump", empty}, code: 2, stderrHas: "empty.pcap", oneLineErr: true},
		{name: "bad format", args: []string{"read", "--format", "xml", shipped("quickstart.pcap")}, code: 2, stderrHas: "--format", oneLineErr: true},
		{name: "bad profile", args: []string{"read", "--profile", "nope", shipped("quickstart.pcap")}, code: 2, stderrHas: "--profile", oneLineErr: true},
		{name: "bad fail-on", args: []string{"read", "--fail-on", "fatal", shipped("quickstart.pcap")}, code: 2, stderrHas: "--fail-on", oneLineErr: true},
		{name: "errors found", args: []string{"read", shipped("quickstart.pcap")}, code: 1, stdoutHas: "ghost-member"},
		{name: "fail-on never", args: []string{"read", "--fail-on", "never", shipped("quickstart.pcap")}, code: 0, stdoutHas: "ghost-member"},
		{name: "compliant capture", args: []string{"read", shipped("compliant-modern.pcap")}, code: 0, stdoutHas: "0 error"},
		{name: "info findings reach fail-on info", args: []string{"read", "--fail-on", "info", shipped("rule-member-id-encoding-padded.pcap")}, code: 1},
		{name: "truncated file keeps what was read", args: []string{"dump", truncated}, code: 0, stderrHas: "truncated", stdoutHas: "ApiVersions"},
		{name: "flags after the file", args: []string{"read", shipped("quickstart.pcap"), "--fail-on", "never", "--format", "json"}, code: 0, stdoutHas: `"findings"`},
		{name: "rules", args: []string{"rules"}, code: 0, stdoutHas: "instance-id-dropped"},
		{name: "one rule", args: []string{"rules", "ghost-member"}, code: 0, stdoutHas: "KIP-1082"},
		{name: "unknown rule", args: []string{"rules", "no-such-rule"}, code: 2, stderrHas: "unknown rule", oneLineErr: true},
		{name: "live without interface", args: []string{"live", "--no-tui"}, code: 2, stderrHas: "-i IFACE", oneLineErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runKwatch(tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstderr: %s", code, tc.code, stderr)
			}
			if !strings.Contains(stderr, tc.stderrHas) {
				t.Errorf("stderr %q does not mention %q", stderr, tc.stderrHas)
			}
			if !strings.Contains(stdout, tc.stdoutHas) {
				t.Errorf("stdout does not mention %q:\n%s", tc.stdoutHas, stdout)
			}
			if tc.oneLineErr && strings.Count(strings.TrimRight(stderr, "\n"), "\n") != 0 {
				t.Errorf("stderr is not one line: %q", stderr)
			}
		})
	}
}

// TestRulesCoverSpec: `kwatch rules` lists every rule of SPEC.md section 3
// and 4, and explains each.
func TestRulesCoverSpec(t *testing.T) {
	spec, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "SPEC.md"))
	if err != nil {
		t.Skipf("SPEC.md not beside the repository: %v", err)
	}
	_, list, _ := runKwatch("rules")
	var ids []string
	for _, line := range strings.Split(string(spec), "\n") {
		if strings.HasPrefix(line, "| `") {
			id := strings.TrimPrefix(line, "| `")
			ids = append(ids, id[:strings.IndexByte(id, '`')])
		}
	}
	for _, extra := range []string{"instance-id-missing-first", "instance-id-repeated"} {
		ids = append(ids, extra)
	}
	if len(ids) < 29 {
		t.Fatalf("found only %d rule IDs in SPEC.md", len(ids))
	}
	for _, id := range ids {
		if !strings.Contains(list, id+" ") {
			t.Errorf("kwatch rules does not list %s", id)
		}
		code, text, _ := runKwatch("rules", id)
		if code != 0 || len(text) < 200 {
			t.Errorf("kwatch rules %s: exit %d, %d bytes of explanation", id, code, len(text))
		}
	}
}

// TestNDJSONFindings: --format ndjson writes one finding object per line on
// stdout with the fields of SPEC.md section 5, and the summary on stderr.
func TestNDJSONFindings(t *testing.T) {
	code, stdout, stderr := runKwatch("read", "--format", "ndjson", "--fail-on", "never", shipped("quickstart.pcap"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimRight(stdout, "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d findings, want 4:\n%s", len(lines), stdout)
	}
	for _, l := range lines {
		var f map[string]any
		if err := json.Unmarshal([]byte(l), &f); err != nil {
			t.Fatalf("not JSON: %q", l)
		}
		for _, k := range []string{"time", "rule", "severity", "kip", "confidence", "frame", "conn", "api", "api_key", "api_version", "correlation_id", "expected", "observed", "message"} {
			if _, ok := f[k]; !ok {
				t.Errorf("finding lacks %q: %s", k, l)
			}
		}
	}
	// The summary on stderr: the totals and one line per case, not the
	// whole text report (its findings are on stdout).
	if !strings.Contains(stderr, "  findings ") || !strings.Contains(stderr, "ghost-member x1") {
		t.Errorf("no summary on stderr: %q", stderr)
	}
	if strings.Contains(stderr, "Coverage (what could not be audited)") {
		t.Errorf("stderr carries the whole report, not a summary: %q", stderr)
	}
}

// TestDumpNDJSON: kwatch dump's objects carry the fields of SPEC.md
// section 5, client_id null when null and instance_id only when set.
func TestDumpNDJSON(t *testing.T) {
	code, stdout, stderr := runKwatch("dump", "--format", "ndjson", shipped("demo-modern.pcap"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var requests, responses int
	for _, l := range strings.Split(strings.TrimRight(stdout, "\n"), "\n") {
		var r map[string]any
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("not JSON: %q", l)
		}
		switch r["kind"] {
		case "request":
			requests++
			if r["instance_id"] != "exwvHmqNTDueXwobLD1OXw" {
				t.Errorf("instance_id %v", r["instance_id"])
			}
			if _, ok := r["client_id"]; !ok {
				t.Errorf("request without client_id: %s", l)
			}
		case "response":
			responses++
			if _, ok := r["client_id"]; ok {
				t.Errorf("response with client_id: %s", l)
			}
		}
		for _, k := range []string{"time", "frame", "conn", "api", "api_key", "api_version", "header_version", "correlation_id"} {
			if _, ok := r[k]; !ok {
				t.Errorf("%s lacks %q", r["kind"], k)
			}
		}
	}
	if requests != 7 || responses != 7 {
		t.Fatalf("%d requests and %d responses, want 7 and 7", requests, responses)
	}
}

// BenchmarkDump runs kwatch dump over a generated capture of about 100 MB
// of Produce and Fetch traffic across 64 connections.
func BenchmarkDump(b *testing.B) {
	path := filepath.Join(b.TempDir(), "bulk.pcap")
	n, err := pcapgen.WriteBulkFile(path, pcapgen.BulkOptions{Connections: 64, Size: 100 << 20, PayloadSize: 16 << 10, SplitFraction: 0.05})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(n)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if code := run([]string{"dump", "--format", "ndjson", path}, io.Discard, io.Discard); code != 0 {
			b.Fatalf("exit %d", code)
		}
	}
}

// TestStdin: "-" reads the capture from standard input.
func TestStdin(t *testing.T) {
	f, err := os.Open(shipped("quickstart.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out, errOut bytes.Buffer
	if code := runWith([]string{"read", "--format", "json", "-"}, f, &out, &errOut); code != 1 {
		t.Fatalf("exit %d, want 1 (the quickstart capture has errors): %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), `"ghost-member"`) {
		t.Fatalf("report from stdin lacks the capture's findings:\n%s", out.String())
	}
}

// TestDefaultWorkers: one core is left to the readahead goroutine, and
// there is always a worker.
func TestDefaultWorkers(t *testing.T) {
	for _, tt := range []struct{ procs, want int }{{1, 1}, {2, 1}, {3, 2}, {16, 15}} {
		if got := defaultWorkers(tt.procs); got != tt.want {
			t.Errorf("defaultWorkers(%d) = %d, want %d", tt.procs, got, tt.want)
		}
	}
}

// TestLiveOneRingByDefault: live captures through one ring unless
// --workers asks for more, whatever the machine's cores (read's default
// follows them).
func TestLiveOneRingByDefault(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want int
	}{{nil, 1}, {[]string{"--workers", "3"}, 3}} {
		var c common
		cmd := newCommand("live", "", &c)
		_ = cmd.fs.Lookup("workers").Value.Set("7") // the common default on 8 cores
		oneRingByDefault(cmd)
		if err := cmd.fs.Parse(tt.args); err != nil {
			t.Fatal(err)
		}
		if c.workers != tt.want {
			t.Errorf("live %q: --workers %d, want %d", tt.args, c.workers, tt.want)
		}
	}
}

// TestOfflineGC: only the offline commands collect rarely, and a GOGC the
// user set wins.
func TestOfflineGC(t *testing.T) {
	for _, tt := range []struct {
		command, gogc string
		want          bool
	}{
		{"read", "", true}, {"dump", "", true}, {"read", "100", false},
		{"live", "", false}, {"tui", "", false}, {"rules", "", false},
	} {
		if got := offlineGC(tt.command, tt.gogc); got != tt.want {
			t.Errorf("offlineGC(%q, %q) = %v, want %v", tt.command, tt.gogc, got, tt.want)
		}
	}
}
