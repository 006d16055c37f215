package tlsdec

import (
	"bytes"
	"crypto/tls"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/kwatch/kwatch/flow"
	"github.com/kwatch/kwatch/internal/tlstest"
)

// Go's crypto/tls sends a KeyUpdate only in answer to one that requests
// it, so the client's side is crafted here: after the handshake the test
// writes, on the client's socket, a KeyUpdate (update_requested) under
// client traffic secret 0 and then application data under secret 1. Go's
// server checks both (it would fail the connection on a wrong key), answers
// with its own KeyUpdate and writes its reply under its secret 1. tlsdec
// must follow both sides' updates.

// seal13 is one TLS 1.3 record of inner type typ under p at sequence seq.
func seal13(p *protection, seq uint64, typ byte, payload []byte) []byte {
	inner := append(bytes.Clone(payload), typ)
	hdr := []byte{typeAppData, 3, 3, 0, 0}
	binary.BigEndian.PutUint16(hdr[3:], uint16(len(inner)+aeadOverhead))
	p.seq = seq
	p.xorNonce()
	return p.aead.Seal(hdr, p.nonce[:], inner, hdr)
}

// clientSecret0 finds CLIENT_TRAFFIC_SECRET_0 in key log text.
func clientSecret0(keylog string) ([]byte, error) {
	for _, l := range strings.Split(keylog, "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "CLIENT_TRAFFIC_SECRET_0" {
			return hex.DecodeString(f[2])
		}
	}
	return nil, errors.New("no CLIENT_TRAFFIC_SECRET_0 in the key log")
}

func TestConnKeyUpdate(t *testing.T) {
	var keylog bytes.Buffer
	request, reply := []byte("after the key update"), []byte("answered under the server's secret 1")
	client := func(c *tls.Conn) error {
		if err := c.Handshake(); err != nil {
			return err
		}
		secret0, err := clientSecret0(keylog.String())
		if err != nil {
			return err
		}
		s := suiteFor(c.ConnectionState().CipherSuite, true)
		p0, err := keys13(s, secret0)
		if err != nil {
			return err
		}
		secret1, err := nextSecret(s, secret0)
		if err != nil {
			return err
		}
		p1, err := keys13(s, secret1)
		if err != nil {
			return err
		}
		raw := c.NetConn()
		keyUpdate := []byte{hsKeyUpdate, 0, 0, 1, 1} // update_requested
		if _, err := raw.Write(seal13(p0, 0, typeHandshake, keyUpdate)); err != nil {
			return err
		}
		if _, err := raw.Write(seal13(p1, 0, typeAppData, request)); err != nil {
			return err
		}
		got := make([]byte, len(reply))
		if _, err := io.ReadFull(c, got); err != nil {
			return err
		}
		if !bytes.Equal(got, reply) {
			return errors.New("the client read something else than the reply")
		}
		// The tls.Conn would close with an alert under secret 0.
		return raw.Close()
	}
	server := func(c *tls.Conn) error {
		got := make([]byte, len(request))
		if _, err := io.ReadFull(c, got); err != nil {
			return err
		}
		if !bytes.Equal(got, request) {
			return errors.New("the server read something else than the request")
		}
		_, err := c.Write(reply)
		return err
	}
	sess := &session{Session: tlstest.Run(t, tlstest.Config{Version: tls.VersionTLS13, KeyLog: &keylog}, client, server)}
	sess.plain = [2][]byte{request, reply}
	c, out := decrypt(t, sess, keyLogOf(t, sess.KeyLog), 0)
	if c.Status() != StatusDecrypting {
		d, _ := c.Detail()
		t.Fatalf("status %v (%s)", c.Status(), d)
	}
	for side, want := range sess.plain {
		if !bytes.Equal(out.plain[side], want) {
			t.Fatalf("%v side: decrypted %q, want %q", flow.Side(side), out.plain[side], want)
		}
	}
}
