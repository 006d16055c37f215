package main

import (
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kwatch/kwatch/internal/hostilegen"
)

// hostileCapture writes hostilegen's wire-text conversation (every class
// of terminal-unsafe text in every field that reaches an output).
func hostileCapture(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "hostile.pcap")
	if err := hostilegen.WireTextCapture(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestWireTextEscapedEverywhere: text from the wire reaches no output raw
// (text report, JSON, NDJSON, dump in every format), JSON outputs still
// decode to the same strings, and no forged line appears.
func TestWireTextEscapedEverywhere(t *testing.T) {
	path := hostileCapture(t)
	runs := [][]string{
		{"read", "--fail-on", "never"},
		{"read", "--format", "json", "--fail-on", "never"},
		{"read", "--format", "ndjson", "--fail-on", "never"},
		{"dump"},
		{"dump", "--format", "json"},
		{"dump", "--format", "ndjson"},
	}
	for _, args := range runs {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, stdout, stderr := runKwatch(append(args, path)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			for name, out := range map[string]string{"stdout": stdout, "stderr": stderr} {
				if at, bad := hostilegen.TerminalUnsafe(out); bad {
					t.Errorf("%s carries a raw terminal control near %q", name, at)
				}
				for _, line := range strings.Split(out, "\n") {
					if strings.HasPrefix(strings.TrimSpace(line), "ERROR forged-rule") {
						t.Errorf("%s has a forged line %q", name, line)
					}
				}
			}
			if !strings.Contains(stdout, "evil") {
				t.Fatalf("the hostile text is not in the output at all:\n%s", stdout)
			}
		})
	}
	// JSON escapes, it does not alter: the client ID decodes back (invalid
	// UTF-8 as U+FFFD, as encoding/json does).
	_, stdout, _ := runKwatch("read", "--format", "json", "--fail-on", "never", path)
	var rep struct {
		Instances []struct {
			ClientIDs    []string `json:"client_ids"`
			SoftwareName string   `json:"software_name"`
		} `json:"instances"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	want := strings.ToValidUTF8(hostilegen.WireText, "\ufffd\ufffd")
	if len(rep.Instances) != 1 || len(rep.Instances[0].ClientIDs) == 0 || rep.Instances[0].ClientIDs[0] != want || rep.Instances[0].SoftwareName != want {
		t.Errorf("instances %+v: want client ID and software %q", rep.Instances, want)
	}
}

// TestLogHasNoColourOffTerminal: the log on stderr (here a warning about a
// link type kwatch cannot decode) carries no ANSI escape when stderr is no
// terminal.
func TestLogHasNoColourOffTerminal(t *testing.T) {
	var b []byte
	b = binary.LittleEndian.AppendUint32(b, 0xa1b2c3d4)
	b = binary.LittleEndian.AppendUint16(b, 2)
	b = binary.LittleEndian.AppendUint16(b, 4)
	b = append(b, make([]byte, 8)...)
	b = binary.LittleEndian.AppendUint32(b, 65535)
	b = binary.LittleEndian.AppendUint32(b, 189) // USB
	b = append(b, make([]byte, 8)...)            // time
	b = binary.LittleEndian.AppendUint32(b, 4)
	b = binary.LittleEndian.AppendUint32(b, 4)
	b = append(b, 1, 2, 3, 4)
	path := filepath.Join(t.TempDir(), "usb.pcap")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, stderr := runKwatch("read", "--fail-on", "never", path)
	if !strings.Contains(stderr, "link type") {
		t.Fatalf("no warning about the link type: %q", stderr)
	}
	if strings.Contains(stderr, "\x1b") {
		t.Errorf("the log carries ANSI escapes off a terminal: %q", stderr)
	}
}
