// Package tlstest runs real TLS sessions for tests: Go's crypto/tls over a
// loopback TCP pair, the bytes each side wrote recorded in the order
// written, the secrets from tls.Config.KeyLogWriter in NSS key log format.
// tlsdec's and pipeline's tests decrypt such sessions and compare the
// result with what each side wrote.
//
// Concurrency: Run starts the server on a goroutine of its own and returns
// once both sides are done. Buffers: a Session's slices are its own.
package tlstest

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"math/big"
	"net"
	"sync"
	"testing"
	"time"
)

// Chunk is one Write of one side.
type Chunk struct {
	FromClient bool
	B          []byte
}

// Session is a recorded TLS session.
type Session struct {
	Chunks []Chunk
	// KeyLog is the client's key log text.
	KeyLog []byte
	// Version and Suite are what the handshake chose; Resumed says it
	// resumed an earlier session.
	Version, Suite uint16
	Resumed        bool
}

// Config chooses the session's version and, for TLS 1.2, its cipher suite
// (0: Go's choice).
type Config struct {
	Version, Suite uint16
	// KeyLog, when set, also receives the client's key log lines as they
	// are written (a test that crafts records needs them mid-session).
	KeyLog io.Writer
	// ServerCurves, when set, limits the server's key exchange groups (one
	// the client sends no key share for forces a HelloRetryRequest).
	ServerCurves []tls.CurveID
	// SessionCache, when set, is the client's: sessions run with the same
	// cache resume (the server's ticket key is fixed).
	SessionCache tls.ClientSessionCache
}

type wire struct {
	mu     sync.Mutex
	chunks []Chunk
}

type recConn struct {
	net.Conn
	client bool
	w      *wire
	closed bool
}

// Write records p before writing it, so that what a peer answers is
// recorded after it.
func (c *recConn) Write(p []byte) (int, error) {
	c.w.mu.Lock()
	if !c.closed {
		c.w.chunks = append(c.w.chunks, Chunk{c.client, bytes.Clone(p)})
	}
	c.w.mu.Unlock()
	return c.Conn.Write(p)
}

// Close closes the socket; nothing written after it is recorded (a test
// that crafted records closes the socket before the tls.Conn sends an
// alert under keys it no longer has).
func (c *recConn) Close() error {
	c.w.mu.Lock()
	c.closed = true
	c.w.mu.Unlock()
	return c.Conn.Close()
}

var (
	certsOnce sync.Once
	certs     []tls.Certificate
	certsErr  error
)

// Certificates returns a self-signed ECDSA and a self-signed RSA
// certificate, made once per test binary.
func Certificates() ([]tls.Certificate, error) {
	certsOnce.Do(func() {
		ek, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			certsErr = err
			return
		}
		rk, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			certsErr = err
			return
		}
		for _, k := range []struct{ priv, pub any }{{ek, &ek.PublicKey}, {rk, &rk.PublicKey}} {
			tmpl := &x509.Certificate{
				SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kwatch-test"},
				NotBefore: time.Unix(0, 0), NotAfter: time.Unix(1<<32, 0), DNSNames: []string{"localhost"},
			}
			der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, k.pub, k.priv)
			if err != nil {
				certsErr = err
				return
			}
			certs = append(certs, tls.Certificate{Certificate: [][]byte{der}, PrivateKey: k.priv})
		}
	})
	return certs, certsErr
}

// ServerConfig is a TLS server configuration with the test certificates.
func ServerConfig(t testing.TB) *tls.Config {
	t.Helper()
	cs, err := Certificates()
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: cs}
}

// Run runs one session: client and server talk over it and return when
// done; the connection is then closed by both.
func Run(t testing.TB, cfg Config, client, server func(*tls.Conn) error) *Session {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	w := &wire{}
	var keylog bytes.Buffer
	scfg := ServerConfig(t)
	scfg.MinVersion, scfg.MaxVersion = cfg.Version, cfg.Version
	if cfg.Suite != 0 {
		scfg.CipherSuites = []uint16{cfg.Suite}
	}
	scfg.CurvePreferences = cfg.ServerCurves
	if cfg.SessionCache != nil {
		scfg.SetSessionTicketKeys([][32]byte{{1}})
	}
	var wg sync.WaitGroup
	var serverErr error
	wg.Go(func() {
		raw, err := ln.Accept()
		if err != nil {
			serverErr = err
			return
		}
		conn := tls.Server(&recConn{Conn: raw, client: false, w: w}, scfg)
		defer conn.Close()
		serverErr = server(conn)
	})
	raw, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	var kw io.Writer = &keylog
	if cfg.KeyLog != nil {
		kw = io.MultiWriter(&keylog, cfg.KeyLog)
	}
	ccfg := &tls.Config{InsecureSkipVerify: true, KeyLogWriter: kw,
		MinVersion: cfg.Version, MaxVersion: cfg.Version, CipherSuites: scfg.CipherSuites,
		ClientSessionCache: cfg.SessionCache, ServerName: "localhost"} // the cache's key: one for every Run
	conn := tls.Client(&recConn{Conn: raw, client: true, w: w}, ccfg)
	clientErr := client(conn)
	var st tls.ConnectionState
	if clientErr == nil {
		st = conn.ConnectionState()
	}
	conn.Close()
	wg.Wait()
	if err := errors.Join(clientErr, serverErr); err != nil {
		t.Fatal(err)
	}
	return &Session{Chunks: w.chunks, KeyLog: keylog.Bytes(), Version: st.Version, Suite: st.CipherSuite, Resumed: st.DidResume}
}
