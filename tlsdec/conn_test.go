package tlsdec

import (
	"bytes"
	"crypto/tls"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/kwatch/kwatch/flow"
	"github.com/kwatch/kwatch/internal/tlstest"
)

// TestConnDecryptsRealSessions: every suite tlsdec claims, in a real Go TLS
// session, decrypts to exactly what each side wrote, whatever the segment
// boundaries.
func TestConnDecryptsRealSessions(t *testing.T) {
	tests := []struct {
		name  string
		vers  uint16
		suite uint16
	}{
		{"tls12-ecdhe-ecdsa-aes128-gcm", tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256},
		{"tls12-ecdhe-ecdsa-aes256-gcm", tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384},
		{"tls12-ecdhe-ecdsa-chacha20", tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256},
		{"tls12-ecdhe-rsa-aes128-gcm", tls.VersionTLS12, tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256},
		{"tls12-ecdhe-rsa-aes256-gcm", tls.VersionTLS12, tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384},
		{"tls12-ecdhe-rsa-chacha20", tls.VersionTLS12, tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256},
		{"tls13", tls.VersionTLS13, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := runSession(t, tt.vers, tt.suite)
			if tt.suite != 0 && s.Suite != tt.suite {
				t.Fatalf("session used suite %#x, want %#x", s.Suite, tt.suite)
			}
			checkDecrypts(t, s)
		})
	}
}

// checkDecrypts decrypts s as written, in 1-byte and in 1000-byte pieces.
func checkDecrypts(t *testing.T, s *session) {
	t.Helper()
	for _, step := range []int{0, 1, 1000} {
		c, out := decrypt(t, s, keyLogOf(t, s.KeyLog), step)
		if c.Status() != StatusDecrypting {
			d, _ := c.Detail()
			t.Fatalf("step %d: status %v (%s), want decrypting", step, c.Status(), d)
		}
		for side := range out.plain {
			if !bytes.Equal(out.plain[side], s.plain[side]) {
				t.Fatalf("step %d: side %d decrypted %d bytes, want the %d written", step, side, len(out.plain[side]), len(s.plain[side]))
			}
		}
		if st := c.Stats(); st.Decrypted != 1 || st.Bytes != uint64(len(s.plain[0])+len(s.plain[1])) {
			t.Fatalf("step %d: stats %+v", step, st)
		}
	}
}

// TestConnTLS13ChaCha20: Go picks ChaCha20-Poly1305 for TLS 1.3 only when
// the CPU lacks AES, so the session runs in a child process with
// GODEBUG=cpu.aes=off (read at start-up by internal/cpu).
func TestConnTLS13ChaCha20(t *testing.T) {
	if os.Getenv("KWATCH_TLS_CHACHA_CHILD") == "1" {
		s := runSession(t, tls.VersionTLS13, 0)
		if s.Suite != tls.TLS_CHACHA20_POLY1305_SHA256 {
			t.Fatalf("suite %#x, want TLS_CHACHA20_POLY1305_SHA256", s.Suite)
		}
		checkDecrypts(t, s)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestConnTLS13ChaCha20$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "KWATCH_TLS_CHACHA_CHILD=1", "GODEBUG=cpu.aes=off")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

// TestConnWrongSecrets: a key log whose secret is wrong fails the first
// protected record and decrypts nothing.
func TestConnWrongSecrets(t *testing.T) {
	for _, vers := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		s := runSession(t, vers, 0)
		lines := strings.Split(strings.TrimSpace(string(s.KeyLog)), "\n")
		for i, l := range lines {
			f := strings.Fields(l)
			sec := []byte(f[2])
			sec[0] = "1032547698badcfe"[strings.IndexByte("0123456789abcdef", sec[0])] // another hex digit
			lines[i] = f[0] + " " + f[1] + " " + string(sec)
		}
		c, out := decrypt(t, s, keyLogOf(t, []byte(strings.Join(lines, "\n")+"\n")), 0)
		if c.Status() != StatusFailed || len(out.plain[0])+len(out.plain[1]) != 0 {
			t.Fatalf("version %#x: status %v, %d+%d bytes decrypted; want failed and none", vers, c.Status(), len(out.plain[0]), len(out.plain[1]))
		}
		if d, at := c.Detail(); !strings.Contains(d, "failed to authenticate") || at.Frame == 0 {
			t.Fatalf("detail %q at %+v", d, at)
		}
	}
}

// TestConnNoSecrets: without the connection's secrets nothing is
// decrypted, and the Conn says so when the connection ends.
func TestConnNoSecrets(t *testing.T) {
	s := runSession(t, tls.VersionTLS13, 0)
	other := runSession(t, tls.VersionTLS13, 0) // a key log with another connection's secrets
	c, out := decrypt(t, s, keyLogOf(t, other.KeyLog), 0)
	if c.Status() != StatusNoSecrets || len(out.plain[0])+len(out.plain[1]) != 0 {
		t.Fatalf("status %v, %d+%d bytes decrypted", c.Status(), len(out.plain[0]), len(out.plain[1]))
	}
	c, _ = decrypt(t, s, nil, 0)
	if c.Status() != StatusNoSecrets {
		t.Fatalf("nil key log: status %v", c.Status())
	}
}

// TestConnSecretsArriveLate: with a followed key log (live capture, where
// the client writes its key log line after the handshake's packets),
// records held while the secrets are missing are decrypted, in order, once
// they arrive. Without Follow the connection is given up at its ServerHello,
// holding nothing.
func TestConnSecretsArriveLate(t *testing.T) {
	s := runSession(t, tls.VersionTLS12, 0)
	for _, follow := range []bool{true, false} {
		keys := NewKeyLog()
		if follow {
			keys.Follow()
		}
		out := &collect{}
		c := NewConn(keys, out, Options{})
		half := len(s.Chunks) / 2
		for i, ch := range s.Chunks {
			if i == half {
				if want := map[bool]Status{true: StatusWaiting, false: StatusNoSecrets}[follow]; c.Status() != want || len(c.held) != 0 && !follow {
					t.Fatalf("follow %v, before the secrets: status %v, want %v; %d bytes held", follow, c.Status(), want, len(c.held))
				}
				keys.Write(s.KeyLog)
			}
			c.Feed(sideOf(ch), ch.B, flow.Meta{Frame: uint64(i + 1)})
		}
		decrypted := bytes.Equal(out.plain[0], s.plain[0]) && bytes.Equal(out.plain[1], s.plain[1])
		if follow != (c.Status() == StatusDecrypting && decrypted) || !follow && len(out.plain[0])+len(out.plain[1]) != 0 {
			t.Fatalf("follow %v: status %v, decrypted %d/%d bytes", follow, c.Status(), len(out.plain[0]), len(out.plain[1]))
		}
	}
}

// TestConnHeldBound: records held waiting for secrets stop at MaxHeld.
func TestConnHeldBound(t *testing.T) {
	s := runSession(t, tls.VersionTLS13, 0)
	out := &collect{}
	keys := NewKeyLog()
	keys.Follow()
	c := NewConn(keys, out, Options{MaxHeld: 4096})
	for i, ch := range s.Chunks {
		c.Feed(sideOf(ch), ch.B, flow.Meta{Frame: uint64(i + 1)})
	}
	if c.Status() != StatusNoSecrets || c.Stats().Overflow != 1 || len(c.held) != 0 {
		t.Fatalf("status %v, stats %+v, %d bytes still held", c.Status(), c.Stats(), len(c.held))
	}
}

// TestConnHandshakeVariants: a HelloRetryRequest (the server wants a group
// the client sent no key share for) and resumed sessions decrypt too. Go
// writes no key log line for a resumed TLS 1.2 session (its master secret
// is the earlier one's): that connection has no secrets.
func TestConnHandshakeVariants(t *testing.T) {
	for _, vers := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		cache := tls.NewLRUClientSessionCache(4)
		for i, cfg := range []tlstest.Config{
			{Version: vers, ServerCurves: []tls.CurveID{tls.CurveP384}},
			{Version: vers, SessionCache: cache},
			{Version: vers, SessionCache: cache}, // resumes the previous one
		} {
			s := &session{}
			sizes := []int{100, 20000}
			s.Session = tlstest.Run(t, cfg,
				func(c *tls.Conn) error { return talk(c, sizes, &s.plain[flow.Client], 'C') },
				func(c *tls.Conn) error { return talk(c, sizes, &s.plain[flow.Broker], 'S') })
			if i == 2 && !s.Resumed {
				t.Fatalf("version %#x: the third session did not resume", vers)
			}
			if i == 2 && vers == tls.VersionTLS12 {
				if c, _ := decrypt(t, s, keyLogOf(t, s.KeyLog), 0); len(s.KeyLog) != 0 || c.Status() != StatusNoSecrets {
					t.Fatalf("resumed TLS 1.2: %d key log bytes, status %v", len(s.KeyLog), c.Status())
				}
				continue
			}
			checkDecrypts(t, s)
		}
	}
}

// TestConnUnsupportedSuite: a CBC suite is said to be unsupported, counted,
// and nothing is decrypted.
func TestConnUnsupportedSuite(t *testing.T) {
	s := runSession(t, tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA)
	c, out := decrypt(t, s, keyLogOf(t, s.KeyLog), 0)
	d, _ := c.Detail()
	if c.Status() != StatusUnsupported || c.Stats().Unsupported != 1 || !strings.Contains(d, "0xc009") || len(out.plain[0]) != 0 {
		t.Fatalf("status %v (%s), stats %+v", c.Status(), d, c.Stats())
	}
}

// TestConnNotRecords: bytes that are no TLS record before the keys are
// known leave the connection unsupported (tls-connection); once
// decrypting, they are a failure.
func TestConnNotRecords(t *testing.T) {
	s := runSession(t, tls.VersionTLS13, 0)
	garbage := []byte("HTTP/1.1 400 Bad Request\r\n\r\n")
	tests := []struct {
		name  string
		after int // chunks fed before the garbage
		keys  bool
		want  Status
	}{
		{"after-client-hello", 1, true, StatusUnsupported},
		{"while-decrypting", len(s.Chunks), true, StatusFailed},
		{"waiting-for-secrets", len(s.Chunks), false, StatusUnsupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			keys := NewKeyLog()
			keys.Follow()
			if tt.keys {
				keys.Write(s.KeyLog)
			}
			c := NewConn(keys, &collect{}, Options{})
			for _, ch := range s.Chunks[:tt.after] {
				c.Feed(sideOf(ch), ch.B, flow.Meta{})
			}
			c.Feed(flow.Broker, garbage, flow.Meta{Frame: 99})
			if d, at := c.Detail(); c.Status() != tt.want || at.Frame != 99 || !strings.Contains(d, "not a TLS record") {
				t.Fatalf("status %v (%s at %d), want %v", c.Status(), d, at.Frame, tt.want)
			}
		})
	}
}
