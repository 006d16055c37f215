// Package protogen writes conversations of protocols that are not Kafka
// (ZooKeeper, PostgreSQL, Redis, memcached, MySQL, HTTP/1.1, HTTP/2, gRPC,
// SSH, TLS) as TCP connections of a pcapgen capture, so that kwatch's
// recognition of Kafka can be tested against what shares a broker host.
//
// The bytes follow each protocol's framing as its servers and clients
// write it (ZooKeeper's jute records, PostgreSQL's startup and typed
// messages, RESP, memcached's binary and text commands, MySQL's packets,
// HTTP/2 frames, SSH's banner and binary packets, a TLS ClientHello), with
// fields chosen to look like the real thing rather than to be complete:
// only their framing and first bytes matter to a decoder looking for
// Kafka.
//
// Every generator is a Proto: it opens its own connections (observed from
// the SYN, on the protocol's usual port) on the capture it is given, writes
// both directions and closes them. Nothing here reads the clock or a random
// source: equal calls write equal packets. Not safe for concurrent use on
// one capture (pcapgen's rule).
package protogen

import (
	"encoding/binary"
	"net/netip"

	"github.com/kwatch/kwatch/internal/pcapgen"
)

// Proto writes one protocol's connections on c.
type Proto struct {
	Name  string
	Write func(c *pcapgen.Capture, o Opts)
}

// Opts says where a Proto's connections come from and how they are seen.
type Opts struct {
	// Host numbers the client host: 10.9.Host.x.
	Host int
	// MidStream: the capture holds no handshake (pcapgen's NoSYN).
	MidStream bool
}

// All lists every generator: the protocols of a broker host that must never
// be taken for Kafka.
func All() []Proto {
	return []Proto{
		{"zookeeper", ZooKeeper},
		{"postgresql", PostgreSQL},
		{"redis", Redis},
		{"memcached-binary", MemcachedBinary},
		{"memcached-text", MemcachedText},
		{"mysql", MySQL},
		{"http1", HTTP1},
		{"http2", HTTP2},
		{"grpc", GRPC},
		{"ssh", SSH},
		{"tls-alpn-h2", func(c *pcapgen.Capture, o Opts) { TLSClientHello(c, o, "h2", "http/1.1") }},
		{"tls-alpn-http1", func(c *pcapgen.Capture, o Opts) { TLSClientHello(c, o, "http/1.1") }},
	}
}

// conn opens connection x from 10.9.Host.x to the server at port on
// 10.0.9.1.
func conn(c *pcapgen.Capture, o Opts, x int, port uint16) *pcapgen.Conn {
	return c.Conn(pcapgen.ConnOptions{
		Client: netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 9, byte(o.Host), byte(x)}), uint16(50000+x)),
		Broker: netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 9, 1}), port),
		NoSYN:  o.MidStream,
	})
}

// be is a big-endian builder.
type be []byte

func (b be) u8(v byte) be    { return append(b, v) }
func (b be) u16(v uint16) be { return binary.BigEndian.AppendUint16(b, v) }
func (b be) u32(v uint32) be { return binary.BigEndian.AppendUint32(b, v) }
func (b be) u64(v uint64) be { return binary.BigEndian.AppendUint64(b, v) }
func (b be) str(s string) be { return append(b, s...) }
func (b be) raw(p []byte) be { return append(b, p...) }

// sized prefixes b with its length as an int32 (not counting itself).
func sized(b be) []byte { return be(nil).u32(uint32(len(b))).raw(b) }
