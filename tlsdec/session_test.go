package tlsdec

import (
	"bytes"
	"crypto/tls"
	"io"
	"testing"
	"time"

	"github.com/kwatch/kwatch/flow"
	"github.com/kwatch/kwatch/internal/tlstest"
)

// session is a recorded TLS session and what each side wrote in it.
type session struct {
	*tlstest.Session
	plain [2][]byte // indexed by flow.Side
}

// exchange is what the client and the server send after the handshake:
// sizes that make one record, several records, and small writes.
var exchange = []int{11, 40000, 3, 17000, 1}

// runSession runs one TLS session with version and (TLS 1.2) suite.
func runSession(t testing.TB, vers, suite uint16) *session {
	return runSizes(t, vers, suite, exchange)
}

// runSizes runs a session where each side writes messages of these sizes.
func runSizes(t testing.TB, vers, suite uint16, sizes []int) *session {
	t.Helper()
	s := &session{}
	s.Session = tlstest.Run(t, tlstest.Config{Version: vers, Suite: suite},
		func(c *tls.Conn) error { return talk(c, sizes, &s.plain[flow.Client], 'C') },
		func(c *tls.Conn) error { return talk(c, sizes, &s.plain[flow.Broker], 'S') })
	return s
}

// talk writes messages of sizes and reads the peer's, one at a time.
func talk(conn *tls.Conn, sizes []int, sent *[]byte, tag byte) error {
	for i, n := range sizes {
		msg := bytes.Repeat([]byte{tag + byte(i)}, n)
		*sent = append(*sent, msg...)
		errc := make(chan error, 1)
		go func() { _, err := conn.Write(msg); errc <- err }()
		if _, err := io.ReadFull(conn, make([]byte, n)); err != nil {
			return err
		}
		if err := <-errc; err != nil {
			return err
		}
	}
	return nil
}

func sideOf(ch tlstest.Chunk) flow.Side {
	if ch.FromClient {
		return flow.Client
	}
	return flow.Broker
}

// collect is an Output that appends each side's plaintext.
type collect struct {
	plain [2][]byte
}

func (c *collect) Plain(side flow.Side, p []byte, m flow.Meta) {
	c.plain[side] = append(c.plain[side], p...)
}

// decrypt feeds s to a Conn in pieces of at most step bytes (0: as written).
func decrypt(t testing.TB, s *session, keys *KeyLog, step int) (*Conn, *collect) {
	t.Helper()
	out := &collect{}
	c := NewConn(keys, out, Options{})
	for i, ch := range s.Chunks {
		m := flow.Meta{Frame: uint64(i + 1), Time: time.Unix(int64(i), 0)}
		p := ch.B
		for len(p) > 0 {
			n := len(p)
			if step > 0 {
				n = min(n, step)
			}
			c.Feed(sideOf(ch), p[:n], m)
			p = p[n:]
		}
	}
	c.Close(flow.Meta{Frame: uint64(len(s.Chunks) + 1)})
	return c, out
}

func keyLogOf(t testing.TB, text []byte) *KeyLog {
	k := NewKeyLog()
	k.Write(text)
	return k
}
