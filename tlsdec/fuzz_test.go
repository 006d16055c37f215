package tlsdec

import (
	"crypto/tls"
	"testing"

	"github.com/kwatch/kwatch/flow"
)

// FuzzRecords: whatever the bytes and wherever they are cut, the record
// reader never panics, never hands out a body over MaxRecord, and never
// returns more than it was given.
func FuzzRecords(f *testing.F) {
	f.Add(stream3(), uint16(3))
	f.Add([]byte{22, 3, 1, 0xff, 0xff}, uint16(1))          // over MaxRecord
	f.Add([]byte{23, 3, 3, 0x48, 0x00, 1, 2, 3}, uint16(4)) // MaxRecord, truncated
	f.Add([]byte{22, 3}, uint16(0))
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		c := min(int(cut), len(data))
		var r records
		total := 0
		for _, p := range [][]byte{data[:c], data[c:]} {
			for len(p) > 0 {
				hdr, body, rest, err := r.next(p)
				if err != nil {
					return
				}
				if hdr == nil {
					break
				}
				if len(body) > MaxRecord || len(rest) >= len(p) {
					t.Fatalf("body %d bytes, %d of %d left", len(body), len(rest), len(p))
				}
				total += len(hdr) + len(body)
				p = rest
			}
		}
		if total > len(data) {
			t.Fatalf("%d record bytes out of %d", total, len(data))
		}
	})
}

// FuzzParseHellos: the hello parsers never panic on any body.
func FuzzParseHellos(f *testing.F) {
	f.Add([]byte{3, 3})
	f.Add(append(make([]byte, 34), 32))
	f.Add(append(make([]byte, 35), 0x13, 0x01, 0, 0, 6, 0, 43, 0, 2, 3, 4))
	f.Fuzz(func(t *testing.T, b []byte) {
		parseClientHello(b)
		h, ok := parseServerHello(b)
		if ok && len(b) < 38 {
			t.Fatalf("a %d-byte ServerHello parsed: %+v", len(b), h)
		}
	})
}

// FuzzKeyLog: key log text never panics the parser, and the unfinished
// line it keeps stays within maxLine+1 bytes.
func FuzzKeyLog(f *testing.F) {
	f.Add([]byte("CLIENT_RANDOM " + random1 + " " + secret1 + "\n"))
	f.Add([]byte("CLIENT_TRAFFIC_SECRET_0 " + random1 + " " + secret1[:64] + "\r\n# x\n\n"))
	f.Add([]byte("CLIENT_RANDOM  \t" + random1))
	f.Fuzz(func(t *testing.T, b []byte) {
		k := NewKeyLog()
		k.Write(b)
		k.AddSecretsBlock(DSBTypeTLS, b)
		if len(k.partial) > maxLine+1 {
			t.Fatalf("%d bytes kept of an unfinished line", len(k.partial))
		}
	})
}

// chunked encodes a session for FuzzConnFeed: each chunk is a byte (bit 7:
// the broker's side, low 7 bits: length) and that many bytes.
func chunked(s *session) []byte {
	var out []byte
	for _, ch := range s.Chunks {
		for p := ch.B; len(p) > 0; {
			n := min(len(p), 127)
			h := byte(n)
			if !ch.FromClient {
				h |= 0x80
			}
			out = append(append(out, h), p[:n]...)
			p = p[n:]
		}
	}
	return out
}

// FuzzConnFeed: any bytes on either side, with the secrets of a real
// session known, never panic a Conn; it holds no more than MaxHeld bytes
// and hands out plaintext only while decrypting.
func FuzzConnFeed(f *testing.F) {
	s12 := runSizes(f, tls.VersionTLS12, 0, []int{5, 300})
	s13 := runSizes(f, tls.VersionTLS13, 0, []int{5, 300})
	f.Add(chunked(s12))
	f.Add(chunked(s13))
	f.Add([]byte{0x05, 22, 3, 1, 0, 0})
	keys := NewKeyLog()
	keys.Follow() // the holding path, the one with a bound to keep
	keys.Write(s12.KeyLog)
	keys.Write(s13.KeyLog)
	f.Fuzz(func(t *testing.T, data []byte) {
		out := &checkOut{}
		c := NewConn(keys, out, Options{MaxHeld: 64 << 10})
		out.c = c
		for len(data) > 0 {
			h := data[0]
			n := min(int(h&0x7f), len(data)-1)
			side := flow.Client
			if h&0x80 != 0 {
				side = flow.Broker
			}
			c.Feed(side, data[1:1+n], flow.Meta{})
			data = data[1+n:]
			if len(c.held) > c.opts.MaxHeld {
				t.Fatalf("%d bytes held", len(c.held))
			}
		}
		c.Close(flow.Meta{})
		if !c.Status().Final() && c.Status() != StatusDecrypting {
			t.Fatalf("status %v after Close", c.Status())
		}
	})
}

type checkOut struct{ c *Conn }

func (o *checkOut) Plain(side flow.Side, p []byte, m flow.Meta) {
	if o.c.Status() != StatusDecrypting || len(p) > MaxRecord {
		panic("plaintext handed out while not decrypting, or over a record")
	}
}
