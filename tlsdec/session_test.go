package tlsdec

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/kwatch/kwatch/reassembly"
)

// Real TLS sessions for the tests: Go's crypto/tls over a loopback TCP
// pair, the bytes each side wrote recorded in the order written, the
// secrets from tls.Config.KeyLogWriter.

// chunk is one Write of one side.
type chunk struct {
	side reassembly.Side
	b    []byte
}

// wire records what both sides wrote.
type wire struct {
	mu     sync.Mutex
	chunks []chunk
}

type recConn struct {
	net.Conn
	side reassembly.Side
	w    *wire
}

func (c *recConn) Write(p []byte) (int, error) {
	c.w.mu.Lock()
	c.w.chunks = append(c.w.chunks, chunk{c.side, bytes.Clone(p)})
	c.w.mu.Unlock()
	return c.Conn.Write(p)
}

// session is a recorded TLS session.
type session struct {
	chunks []chunk
	keylog []byte
	plain  [2][]byte // what the client and the server wrote
	suite  uint16
	vers   uint16
}

var (
	certsOnce sync.Once
	certs     []tls.Certificate // ECDSA, RSA
)

func selfSigned(t testing.TB, key any, pub any) tls.Certificate {
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kwatch-test"},
		NotBefore: time.Unix(0, 0), NotAfter: time.Unix(1<<32, 0), DNSNames: []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, pub, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func testCerts(t testing.TB) []tls.Certificate {
	certsOnce.Do(func() {
		ek, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		rk, _ := rsa.GenerateKey(rand.Reader, 2048)
		certs = []tls.Certificate{selfSigned(t, ek, &ek.PublicKey), selfSigned(t, rk, &rk.PublicKey)}
	})
	return certs
}

// exchange is what the client and the server send after the handshake:
// sizes that make one record, several records, and small writes.
var exchange = []int{11, 40000, 3, 17000, 1}

// runSession runs one TLS session with version and (TLS 1.2) suite.
func runSession(t testing.TB, vers, suite uint16) *session {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	w := &wire{}
	var keylog bytes.Buffer
	cfg := &tls.Config{Certificates: testCerts(t), MinVersion: vers, MaxVersion: vers}
	if suite != 0 && vers == tls.VersionTLS12 {
		cfg.CipherSuites = []uint16{suite}
	}
	s := &session{}
	var wg sync.WaitGroup
	var serverErr error
	wg.Go(func() {
		raw, err := ln.Accept()
		if err != nil {
			serverErr = err
			return
		}
		conn := tls.Server(&recConn{raw, reassembly.Broker, w}, cfg)
		defer conn.Close()
		serverErr = talk(conn, &s.plain[reassembly.Broker], 'S')
	})
	raw, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	ccfg := &tls.Config{InsecureSkipVerify: true, KeyLogWriter: &keylog, MinVersion: vers, MaxVersion: vers, CipherSuites: cfg.CipherSuites}
	conn := tls.Client(&recConn{raw, reassembly.Client, w}, ccfg)
	if err := talk(conn, &s.plain[reassembly.Client], 'C'); err != nil {
		t.Fatal(err)
	}
	st := conn.ConnectionState()
	conn.Close()
	wg.Wait()
	if serverErr != nil {
		t.Fatal(serverErr)
	}
	s.chunks, s.keylog, s.suite, s.vers = w.chunks, keylog.Bytes(), st.CipherSuite, st.Version
	return s
}

// talk writes the exchange and reads the peer's, one message at a time.
func talk(conn *tls.Conn, sent *[]byte, tag byte) error {
	for i, n := range exchange {
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

// collect is an Output that appends each side's plaintext.
type collect struct {
	plain  [2][]byte
	frames [2]int
}

func (c *collect) Plain(side reassembly.Side, p []byte, m reassembly.Meta) {
	c.plain[side] = append(c.plain[side], p...)
	c.frames[side]++
}

// decrypt feeds s to a Conn in pieces of at most step bytes (0: as written).
func decrypt(t testing.TB, s *session, keys *KeyLog, step int) (*Conn, *collect) {
	t.Helper()
	out := &collect{}
	c := NewConn(keys, out, Options{})
	for i, ch := range s.chunks {
		m := reassembly.Meta{Frame: uint64(i + 1), Time: time.Unix(int64(i), 0)}
		p := ch.b
		for len(p) > 0 {
			n := len(p)
			if step > 0 {
				n = min(n, step)
			}
			c.Feed(ch.side, p[:n], m)
			p = p[n:]
		}
	}
	c.Close(reassembly.Meta{Frame: uint64(len(s.chunks) + 1)})
	return c, out
}

func keyLogOf(t testing.TB, text []byte) *KeyLog {
	k := NewKeyLog()
	k.Write(text)
	return k
}
