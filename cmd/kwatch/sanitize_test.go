package main

import (
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kwatch/kwatch/internal/pcapgen"
)

// hostileText holds one of every class of text that must never reach a
// terminal raw: C0 controls (ESC with a colour, BEL, CR LF forging a report
// line, an OSC 8 hyperlink), DEL, a C1 CSI and NEL, the bidirectional
// override and isolate, and invalid UTF-8.
const hostileText = "evil\x1b[31mred\x07\r\nERROR forged-rule\x1b]8;;http://x\x1b\\link\x7f\u009b2J\u0085\u202eabc\u2066\xff\xfe"

// hostileCapture is a conversation whose client ID, software name and
// version, group and member ID are all hostileText, with a finding on the
// member ID (member-id-not-uuid) so that finding lines carry it too.
func hostileCapture(t *testing.T) string {
	t.Helper()
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	cid := hostileText
	cn.Send(pcapgen.EncodeRequest(pcapgen.RequestHeader{APIKey: 18, APIVersion: 3, CorrelationID: 1, ClientID: &cid},
		pcapgen.APIVersions(3, hostileText, hostileText)))
	cn.Reply(pcapgen.EncodeResponse(1, 3, pcapgen.APIVersionsResponse(3)))
	cn.Send(pcapgen.EncodeRequest(pcapgen.RequestHeader{APIKey: 68, APIVersion: 1, CorrelationID: 2, ClientID: &cid},
		pcapgen.ConsumerGroupHeartbeat(1, hostileText, hostileText, 0)))
	mid := hostileText
	cn.Reply(pcapgen.EncodeResponse(2, 1, pcapgen.ConsumerGroupHeartbeatResponse(1, 0, &mid, 1)))
	other := "other-" + hostileText
	cn.Send(pcapgen.EncodeRequest(pcapgen.RequestHeader{APIKey: 3, APIVersion: 12, CorrelationID: 3, ClientID: &other},
		pcapgen.Metadata(12)))
	cn.Close()
	path := filepath.Join(t.TempDir(), "hostile.pcap")
	if err := c.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// terminalUnsafe returns the first byte sequence of out that a terminal
// would act on: a control character other than newline (and tab), DEL, a
// C1 control, a bidirectional control or invalid UTF-8.
func terminalUnsafe(out string) (string, bool) {
	for i := 0; i < len(out); {
		r, size := utf8.DecodeRuneInString(out[i:])
		switch {
		case r == utf8.RuneError && size == 1,
			r < 0x20 && r != '\n' && r != '\t', r == 0x7f,
			r >= 0x80 && r <= 0x9f,
			r == 0x061c, r == 0x200e, r == 0x200f,
			r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			return out[max(0, i-20):min(len(out), i+20)], true
		}
		i += size
	}
	return "", false
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
				if at, bad := terminalUnsafe(out); bad {
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
	want := strings.ToValidUTF8(hostileText, "\ufffd\ufffd")
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
