package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden outputs under testdata/golden")

// goldenRuns are the command lines whose stdout and exit status are held
// byte for byte for every shipped capture: every report format of read
// under both profiles, and every dump format.
var goldenRuns = []struct {
	name string
	args []string
}{
	{"read-text", []string{"read", "--fail-on", "never"}},
	{"read-json", []string{"read", "--format", "json", "--fail-on", "never"}},
	{"read-ndjson", []string{"read", "--format", "ndjson", "--fail-on", "never"}},
	{"read-json-accepted-2026", []string{"read", "--format", "json", "--fail-on", "never", "--profile", "accepted-2026"}},
	{"read-exit", []string{"read", "--format", "ndjson"}},
	{"dump-text", []string{"dump"}},
	{"dump-ndjson", []string{"dump", "--format", "ndjson"}},
}

// TestGoldenOutputs holds every output of kwatch byte for byte on every
// capture in testdata/pcaps: a refactoring must not change a byte, and a
// change of behaviour shows up here as a diff to review (-update rewrites
// the files under testdata/golden).
func TestGoldenOutputs(t *testing.T) {
	caps, err := filepath.Glob(shipped("*.pcap*"))
	if err != nil {
		t.Fatal(err)
	}
	caps = slices.DeleteFunc(caps, func(p string) bool { return strings.HasSuffix(p, ".json") })
	if len(caps) < 100 {
		t.Fatalf("only %d shipped captures found", len(caps))
	}
	dir := filepath.Join("..", "..", "testdata", "golden")
	for _, path := range caps {
		base := filepath.Base(path)
		t.Run(base, func(t *testing.T) {
			t.Parallel()
			got := goldenOutput(path)
			file := filepath.Join(dir, strings.TrimSuffix(strings.TrimSuffix(base, ".pcapng"), ".pcap")+".golden")
			if *update {
				if err := os.WriteFile(file, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run go test ./cmd/kwatch -run TestGoldenOutputs -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("output of %s differs from %s:\n%s", base, file, firstDiff(want, got))
			}
		})
	}
}

// goldenOutput runs every goldenRuns command over path and joins their exit
// statuses and stdouts into one document.
func goldenOutput(path string) []byte {
	var b bytes.Buffer
	for _, r := range goldenRuns {
		code, stdout, _ := runKwatch(append(slices.Clone(r.args), path)...)
		fmt.Fprintf(&b, "=== %s: exit %d\n%s", r.name, code, stdout)
		if !strings.HasSuffix(stdout, "\n") {
			b.WriteString("\n")
		}
	}
	return b.Bytes()
}

// firstDiff shows the first line where want and got part.
func firstDiff(want, got []byte) string {
	w, g := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	for i := range max(len(w), len(g)) {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d:\n- %s\n+ %s", i+1, wl, gl)
		}
	}
	return "(lengths differ)"
}
