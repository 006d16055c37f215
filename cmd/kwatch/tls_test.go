package main

import (
	"bytes"
	"crypto/tls"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kwatch/kwatch/internal/pcapgen"
	"github.com/kwatch/kwatch/internal/tlstest"
)

// TestTLSKeylogFlag: read and dump with --tls-keylog decode a TLS
// capture as its plaintext twin (dump marks each PDU decrypted); without
// the flag it is one tls-connection; a key log file that does not exist is
// an error.
func TestTLSKeylogFlag(t *testing.T) {
	dir := t.TempDir()
	sess := tlstest.Kafka(t, tlstest.Config{Version: tls.VersionTLS13})
	enc, plain, keys := filepath.Join(dir, "tls.pcap"), filepath.Join(dir, "plain.pcap"), filepath.Join(dir, "keys.log")
	for path, b := range map[string][]byte{enc: tlstest.Capture(t, sess, pcapgen.FormatPCAP), plain: tlstest.PlainCapture(t), keys: sess.KeyLog} {
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	kw := func(args ...string) (string, int) {
		var out, errOut bytes.Buffer
		code := run(args, &out, &errOut)
		return out.String() + errOut.String(), code
	}
	dump, code := kw("dump", "--format", "ndjson", "--tls-keylog", keys, enc)
	if code != 0 || strings.Count(dump, `"decrypted":true`) != 8 || strings.Contains(dump, "tls-connection") {
		t.Fatalf("dump with the key log (exit %d):\n%s", code, dump)
	}
	text, _ := kw("dump", "--tls-keylog", keys, enc)
	if strings.Count(text, " tls\n") != 8 {
		t.Fatalf("text dump does not mark the 8 decrypted PDUs:\n%s", text)
	}
	withKeys, _ := kw("read", "--format", "json", "--fail-on", "never", "--tls-keylog", keys, enc)
	plainRep, _ := kw("read", "--format", "json", "--fail-on", "never", plain)
	if findings(withKeys) != findings(plainRep) || findings(plainRep) == "" {
		t.Fatalf("findings differ:\n%s\n---\n%s", findings(withKeys), findings(plainRep))
	}
	without, _ := kw("dump", "--format", "ndjson", enc)
	if strings.Count(without, "\n") != 1 || !strings.Contains(without, `"event":"tls-connection"`) {
		t.Fatalf("dump without the key log:\n%s", without)
	}
	if out, code := kw("read", "--tls-keylog", filepath.Join(dir, "missing"), enc); code == 0 {
		t.Fatalf("a missing key log file: exit 0\n%s", out)
	}
}

// findings is the rule and observed value of each finding in a JSON report.
func findings(report string) string {
	var b strings.Builder
	for _, l := range strings.Split(report, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, `"rule":`) || strings.HasPrefix(l, `"observed":`) {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}
