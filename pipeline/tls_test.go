package pipeline_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kwatch/kwatch/audit"
	"github.com/kwatch/kwatch/capture"
	"github.com/kwatch/kwatch/decode"
	"github.com/kwatch/kwatch/internal/pcapgen"
	"github.com/kwatch/kwatch/internal/tlstest"
	"github.com/kwatch/kwatch/pipeline"
	"github.com/kwatch/kwatch/tlsdec"
)

// tlsRun is what one pipeline run over a capture saw.
type tlsRun struct {
	events    []string // frames, times and the decrypted mark left out
	decrypted int      // events marked decrypted
	coverage  map[decode.Coverage]int
	findings  []string
	stats     pipeline.Stats
}

// runTLS runs the pipeline and the auditor over capture b.
func runTLS(t *testing.T, b []byte, keys *tlsdec.KeyLog, workers int) tlsRun {
	t.Helper()
	copts := capture.Options{}
	if keys != nil {
		copts.Secrets = keys.AddSecretsBlock
	}
	src, err := capture.NewReader(bytes.NewReader(b), "tls", copts)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	r := tlsRun{coverage: map[decode.Coverage]int{}}
	a := audit.New(audit.Options{})
	sink := decode.SinkFunc(func(e *decode.Event) {
		if e.Decrypted {
			r.decrypted++
		}
		if e.Kind == decode.KindCoverage {
			r.coverage[e.Coverage]++
		}
		r.events = append(r.events, fmt.Sprintf("%v %v key=%d v%d corr=%d cid=%q iid=%v cov=%v body=%+v",
			e.Kind, e.Conn.Client, e.APIKey, e.APIVersion, e.CorrelationID, e.ClientID, e.HasInstanceID, e.Coverage, e.Body))
		a.Event(e)
	})
	st, err := pipeline.Run(context.Background(), src, pipeline.Options{Keys: keys, Workers: workers}, sink)
	if err != nil {
		t.Fatal(err)
	}
	r.stats = st
	for _, f := range a.Finish(st.LastTime).Findings {
		r.findings = append(r.findings, fmt.Sprintf("%s %s %s v%d corr=%d %q", f.Rule, f.ClientID, f.API, f.APIVersion, f.CorrelationID, f.Observed))
	}
	return r
}

// TestTLSDecryptedEqualsPlaintext: a Kafka exchange over TLS, decrypted
// with the client's key log (from a file's text or from a pcapng
// Decryption Secrets Block), gives the events and findings of the same
// exchange in plaintext, each marked decrypted; without the secrets it is
// one tls-connection and nothing else.
func TestTLSDecryptedEqualsPlaintext(t *testing.T) {
	plain := runTLS(t, tlstest.PlainCapture(t), nil, 1)
	if len(plain.findings) == 0 || plain.decrypted != 0 {
		t.Fatalf("plaintext: %d findings, %d decrypted events; want some findings and none decrypted", len(plain.findings), plain.decrypted)
	}
	sessions := []struct {
		name string
		cfg  tlstest.Config
	}{
		{"tls12-aes128-gcm", tlstest.Config{Version: tls.VersionTLS12, Suite: tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}},
		{"tls12-chacha20", tlstest.Config{Version: tls.VersionTLS12, Suite: tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256}},
		{"tls13", tlstest.Config{Version: tls.VersionTLS13}},
	}
	for _, s := range sessions {
		sess := tlstest.Kafka(t, s.cfg)
		for _, workers := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/workers=%d", s.name, workers), func(t *testing.T) {
				keys := tlsdec.NewKeyLog()
				keys.Write(sess.KeyLog)
				got := runTLS(t, tlstest.Capture(t, sess, pcapgen.FormatPCAP), keys, workers)
				same(t, "events", got.events, plain.events)
				same(t, "findings", got.findings, plain.findings)
				if got.decrypted != len(got.events) || got.stats.TLS.Decrypted != 1 {
					t.Fatalf("%d of %d events decrypted, stats %+v", got.decrypted, len(got.events), got.stats.TLS)
				}
				// The same secrets from a Decryption Secrets Block in the capture.
				dsb := pcapgen.WithSecrets(tlstest.Capture(t, sess, pcapgen.FormatPCAPNG), tlsdec.DSBTypeTLS, sess.KeyLog, -1)
				got = runTLS(t, dsb, tlsdec.NewKeyLog(), workers)
				same(t, "events (DSB)", got.events, plain.events)
			})
		}
	}
}

// TestTLSWithoutSecrets: wrong secrets give one tls-decrypt-failed and no
// PDU; another connection's secrets, or none, one tls-connection.
func TestTLSWithoutSecrets(t *testing.T) {
	sess := tlstest.Kafka(t, tlstest.Config{Version: tls.VersionTLS13})
	wrong := bytes.Clone(sess.KeyLog)
	for _, l := range bytes.Split(wrong, []byte("\n")) {
		if f := bytes.Fields(l); len(f) == 3 {
			f[2][0] = "1032547698badcfe"[strings.IndexByte("0123456789abcdef", f[2][0])]
		}
	}
	other := tlstest.Kafka(t, tlstest.Config{Version: tls.VersionTLS13}).KeyLog
	tests := []struct {
		name   string
		keylog []byte // nil: no key log at all
		want   decode.Coverage
	}{
		{"wrong-secrets", wrong, decode.TLSDecryptFailed},
		{"other-connection", other, decode.TLSConnection},
		{"no-key-log", nil, decode.TLSConnection},
	}
	capt := tlstest.Capture(t, sess, pcapgen.FormatPCAP)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var keys *tlsdec.KeyLog
			if tt.keylog != nil {
				keys = tlsdec.NewKeyLog()
				keys.Write(tt.keylog)
			}
			got := runTLS(t, capt, keys, 1)
			if len(got.events) != 1 || got.coverage[tt.want] != 1 || got.decrypted != 0 {
				t.Fatalf("events %q; want one %v", got.events, tt.want)
			}
		})
	}
}

func same(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("%s differ:\ngot:\n%s\nwant:\n%s", what, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestTLSKeyLogGrows: as in live capture, the client writes its key log
// line after the handshake's packets went by; the Engine holds the
// connection's records and decrypts them once a poll of the followed file
// (every 100 ms of packet time) finds the line.
func TestTLSKeyLogGrows(t *testing.T) {
	sess := tlstest.Kafka(t, tlstest.Config{Version: tls.VersionTLS13})
	path := filepath.Join(t.TempDir(), "keys.log")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	keys, err := tlsdec.OpenKeyLog(path)
	if err != nil {
		t.Fatal(err)
	}
	defer keys.Close()
	keys.Follow()
	src, err := capture.NewReader(bytes.NewReader(tlstest.Capture(t, sess, pcapgen.FormatPCAP)), "tls", capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var reqs, decrypted, lastFrame int
	e := pipeline.New(pipeline.Options{Keys: keys}, decode.SinkFunc(func(ev *decode.Event) {
		if ev.Kind == decode.KindRequest {
			reqs++
			if ev.Decrypted {
				decrypted++
			}
		}
	}))
	for i := 0; ; i++ {
		p, err := src.Next()
		if err != nil {
			break
		}
		if i == 8 { // past the handshake
			if reqs != 0 {
				t.Fatalf("%d requests before the secrets", reqs)
			}
			if err := os.WriteFile(path, sess.KeyLog, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		p.Time = p.Time.Add(time.Duration(i) * 50 * time.Millisecond) // polls fall between packets
		e.Packet(&p)
		if reqs > 0 && lastFrame == 0 {
			lastFrame = int(p.Frame)
		}
	}
	if lastFrame == 0 || int(e.Stats().LastFrame) == lastFrame {
		t.Fatalf("first request at frame %d of %d: decrypted only at Close", lastFrame, e.Stats().LastFrame)
	}
	e.Close()
	if reqs != 4 || decrypted != 4 {
		t.Fatalf("%d requests, %d decrypted; want 4 and 4", reqs, decrypted)
	}
}

// FuzzPipelineTLS feeds mutated TLS captures (pcap, and pcapng with the
// secrets in a Decryption Secrets Block) through the pipeline with a key
// log that holds the session's secrets. Invariant: it never panics, and
// no event names a frame past the file's last.
func FuzzPipelineTLS(f *testing.F) {
	sess := tlstest.Kafka(f, tlstest.Config{Version: tls.VersionTLS12})
	f.Add(tlstest.Capture(f, sess, pcapgen.FormatPCAP))
	f.Add(pcapgen.WithSecrets(tlstest.Capture(f, sess, pcapgen.FormatPCAPNG), tlsdec.DSBTypeTLS, sess.KeyLog, -1))
	f.Fuzz(func(t *testing.T, data []byte) {
		keys := tlsdec.NewKeyLog()
		keys.Write(sess.KeyLog)
		src, err := capture.NewReader(bytes.NewReader(data), "fuzz.pcap", capture.Options{Secrets: keys.AddSecretsBlock})
		if err != nil {
			return
		}
		defer src.Close()
		var maxFrame uint64
		st, _ := pipeline.Run(context.Background(), src, pipeline.Options{Keys: keys}, decode.SinkFunc(func(e *decode.Event) {
			maxFrame = max(maxFrame, e.Frame)
		}))
		if maxFrame > st.LastFrame {
			t.Fatalf("event at frame %d, but the file has %d packets", maxFrame, st.LastFrame)
		}
	})
}
