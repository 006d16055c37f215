package tlsdec

import (
	"bytes"
	"testing"

	"github.com/kwatch/kwatch/flow"
)

// keyedConn is a Conn decrypting the client side of a TLS 1.3 connection
// with suite id, and a stream of n full records of application data for it.
func keyedConn(tb testing.TB, id uint16, n int) (*Conn, []byte) {
	tb.Helper()
	s := suiteFor(id, true)
	secret := bytes.Repeat([]byte{0x42}, s.hashLen())
	seal, err := keys13(s, secret)
	if err != nil {
		tb.Fatal(err)
	}
	open, err := keys13(s, secret)
	if err != nil {
		tb.Fatal(err)
	}
	c := NewConn(nil, discard{}, Options{})
	c.status, c.tls13, c.suite = StatusDecrypting, true, s
	c.dirs[flow.Client].prot = open
	payload := bytes.Repeat([]byte{'k'}, 1<<14-1) // with the type byte: 2^14
	var stream []byte
	for i := range n {
		stream = append(stream, seal13(seal, uint64(i), typeAppData, payload)...)
	}
	return c, stream
}

type discard struct{}

func (discard) Plain(flow.Side, []byte, flow.Meta) {}

// feedSegments feeds stream in 1448-byte segments (a TCP MSS), so that
// most records are reassembled across segments, as on a real link.
func feedSegments(c *Conn, stream []byte) {
	c.dirs[flow.Client].prot.seq = 0
	for p := stream; len(p) > 0; {
		n := min(len(p), 1448)
		c.Feed(flow.Client, p[:n], flow.Meta{})
		p = p[n:]
	}
}

// BenchmarkDecrypt: application data bytes decrypted per second, records
// of 16 KiB arriving in MSS-sized segments (the target: 1 GB/s per core
// for AES-128-GCM).
func BenchmarkDecrypt(b *testing.B) {
	for _, bc := range []struct {
		name string
		id   uint16
	}{{"aes128gcm", 0x1301}, {"aes256gcm", 0x1302}, {"chacha20poly1305", 0x1303}} {
		b.Run(bc.name, func(b *testing.B) {
			c, stream := keyedConn(b, bc.id, 64)
			b.SetBytes(int64(len(stream)))
			b.ReportAllocs()
			for b.Loop() {
				feedSegments(c, stream)
			}
			if c.Status() != StatusDecrypting {
				b.Fatalf("status %v", c.Status())
			}
		})
	}
}

// TestDecryptAllocs: decrypting records, whole or reassembled across
// segments, allocates nothing once the buffers have grown.
func TestDecryptAllocs(t *testing.T) {
	c, stream := keyedConn(t, 0x1301, 8)
	feedSegments(c, stream) // grow the buffers
	if n := testing.AllocsPerRun(20, func() { feedSegments(c, stream) }); n != 0 {
		t.Fatalf("%v allocations per run of 8 records", n)
	}
	if c.Status() != StatusDecrypting || c.Stats().Records != 8*22 {
		t.Fatalf("status %v, stats %+v", c.Status(), c.Stats())
	}
}
