package tlsdec

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var (
	random1 = strings.Repeat("ab", 32)
	secret1 = strings.Repeat("cd", 48)
)

func TestKeyLogLines(t *testing.T) {
	tests := []struct {
		name   string
		text   string
		lines  uint64
		ign    uint64
		bad    uint64
		master bool
	}{
		{"tls12", "CLIENT_RANDOM " + random1 + " " + secret1 + "\n", 1, 0, 0, true},
		{"crlf", "CLIENT_RANDOM " + random1 + " " + secret1 + "\r\n", 1, 0, 0, true},
		{"tls13", "CLIENT_HANDSHAKE_TRAFFIC_SECRET " + random1 + " " + secret1[:64] + "\nSERVER_TRAFFIC_SECRET_0 " + random1 + " " + secret1 + "\n", 2, 0, 0, false},
		{"comment-blank-other", "# SSL/TLS secrets log file\n\nEXPORTER_SECRET " + random1 + " " + secret1 + "\n", 0, 3, 0, false},
		{"short-random", "CLIENT_RANDOM " + random1[2:] + " " + secret1 + "\n", 0, 0, 1, false},
		{"master-not-48", "CLIENT_RANDOM " + random1 + " " + secret1[:64] + "\n", 0, 0, 1, false},
		{"bad-hex", "CLIENT_RANDOM " + random1 + " " + "zz" + secret1[2:] + "\n", 0, 0, 1, false},
		{"two-fields", "CLIENT_RANDOM " + random1 + "\n", 0, 0, 1, false},
		{"too-long", strings.Repeat("x", 5000) + "\n", 0, 0, 1, false},
		{"unfinished-line", "CLIENT_RANDOM " + random1 + " " + secret1, 0, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := NewKeyLog()
			// Fed a byte at a time: lines split anywhere parse the same.
			for i := range len(tt.text) {
				k.Write([]byte{tt.text[i]})
			}
			st := k.Stats()
			if st.Lines != tt.lines || st.Ignored != tt.ign || st.Malformed != tt.bad {
				t.Fatalf("stats %+v, want lines %d ignored %d malformed %d", st, tt.lines, tt.ign, tt.bad)
			}
			var r [32]byte
			for i := range r {
				r[i] = 0xab
			}
			s, _ := k.lookup(&r)
			if s.has(labMaster) != tt.master {
				t.Fatalf("master secret known: %v, want %v", s.has(labMaster), tt.master)
			}
			if k.Active() != (tt.lines > 0) {
				t.Fatalf("active %v with %d lines", k.Active(), tt.lines)
			}
		})
	}
}

// TestSecretsNeverPrinted: a Secrets printed by mistake shows no byte.
func TestSecretsNeverPrinted(t *testing.T) {
	k := NewKeyLog()
	k.Write([]byte("CLIENT_RANDOM " + random1 + " " + secret1 + "\n"))
	var r [32]byte
	for i := range r {
		r[i] = 0xab
	}
	s, ok := k.lookup(&r)
	if !ok {
		t.Fatal("no secrets")
	}
	for _, f := range []string{"%v", "%+v", "%#v", "%s"} {
		if out := fmt.Sprintf(f, s); strings.Contains(out, "cd") || strings.Contains(out, "205") {
			t.Fatalf("%s printed %q", f, out)
		}
	}
}

// TestKeyLogBounded: randoms beyond MaxKeyLogEntries are dropped, counted.
func TestKeyLogBounded(t *testing.T) {
	k := NewKeyLog()
	var b strings.Builder
	for i := range MaxKeyLogEntries + 3 {
		fmt.Fprintf(&b, "CLIENT_RANDOM %064x %s\n", i, secret1)
	}
	k.Write([]byte(b.String()))
	if st := k.Stats(); st.Lines != MaxKeyLogEntries || st.Dropped != 3 || len(k.m) != MaxKeyLogEntries {
		t.Fatalf("stats %+v, %d entries", st, len(k.m))
	}
}

// TestKeyLogFollow: lines appended to a followed file are read by Poll, at
// most once per pollEvery of packet time; a truncated file is read anew.
func TestKeyLogFollow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.log")
	if err := os.WriteFile(path, []byte("# start\nCLIENT_RANDOM "+random1), 0o600); err != nil {
		t.Fatal(err)
	}
	k, err := OpenKeyLog(path)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	k.Follow()
	if !k.Active() || k.Stats().Lines != 0 {
		t.Fatalf("after open: active %v, stats %+v", k.Active(), k.Stats())
	}
	appendTo(t, path, " "+secret1+"\n")
	t0 := time.Unix(1000, 0)
	k.Poll(t0)
	if k.Stats().Lines != 1 {
		t.Fatalf("after the line was finished: %+v", k.Stats())
	}
	appendTo(t, path, "CLIENT_RANDOM "+strings.Repeat("01", 32)+" "+secret1+"\n")
	k.Poll(t0.Add(pollEvery / 2))
	if k.Stats().Lines != 1 {
		t.Fatalf("polled again within pollEvery: %+v", k.Stats())
	}
	k.Poll(t0.Add(pollEvery))
	if k.Stats().Lines != 2 {
		t.Fatalf("after pollEvery: %+v", k.Stats())
	}
	if err := os.WriteFile(path, []byte("CLIENT_RANDOM "+strings.Repeat("02", 32)+" "+secret1+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	k.Poll(t0.Add(2 * pollEvery))
	if k.Stats().Lines != 3 {
		t.Fatalf("after truncation: %+v", k.Stats())
	}
	if _, err := OpenKeyLog(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("a missing key log file opened")
	}
}

func appendTo(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

func TestKeyLogSecretsBlock(t *testing.T) {
	k := NewKeyLog()
	k.AddSecretsBlock(0x57474b4c, []byte("WireGuard keys")) // "WGKL"
	if k.Active() {
		t.Fatal("a WireGuard block activated the TLS key log")
	}
	k.AddSecretsBlock(DSBTypeTLS, []byte("CLIENT_RANDOM "+random1+" "+secret1)) // no final newline
	if st := k.Stats(); st.Blocks != 1 || st.OtherBlocks != 1 || st.Lines != 1 || !k.Active() {
		t.Fatalf("stats %+v", st)
	}
}
