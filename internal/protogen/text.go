package protogen

import (
	"fmt"
	"strings"

	"github.com/kwatch/kwatch/internal/pcapgen"
)

// Text protocols, HTTP/2 and gRPC, SSH and TLS.

// Redis writes Redis 7 RESP: commands as arrays of bulk strings, simple
// strings, bulk and integer replies.
func Redis(c *pcapgen.Capture, o Opts) {
	cn := conn(c, o, 1, 6379)
	cmds := [][]string{{"HELLO", "3"}, {"PING"}, {"SET", "orders:1", `{"id":1}`}, {"GET", "orders:1"}, {"INCR", "seq"}, {"QUIT"}}
	replies := []string{"%1\r\n+server\r\n+redis\r\n", "+PONG\r\n", "+OK\r\n", "$8\r\n{\"id\":1}\r\n", ":1\r\n", "+OK\r\n"}
	for i, cmd := range cmds {
		var b strings.Builder
		fmt.Fprintf(&b, "*%d\r\n", len(cmd))
		for _, a := range cmd {
			fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
		}
		cn.Send([]byte(b.String()))
		cn.Reply([]byte(replies[i]))
	}
	cn.Close()
}

// MemcachedText writes memcached's text protocol.
func MemcachedText(c *pcapgen.Capture, o Opts) {
	cn := conn(c, o, 1, 11211)
	cn.Send([]byte("set orders:1 0 3600 8\r\n{\"id\":1}\r\n"))
	cn.Reply([]byte("STORED\r\n"))
	cn.Send([]byte("get orders:1\r\n"))
	cn.Reply([]byte("VALUE orders:1 0 8\r\n{\"id\":1}\r\nEND\r\n"))
	cn.Send([]byte("stats\r\n"))
	cn.Reply([]byte("STAT pid 1\r\nSTAT uptime 3600\r\nSTAT version 1.6.21\r\nEND\r\n"))
	cn.Send([]byte("quit\r\n"))
	cn.Close()
}

// HTTP1 writes HTTP/1.1 requests and responses on a kept-alive
// connection.
func HTTP1(c *pcapgen.Capture, o Opts) {
	cn := conn(c, o, 1, 8080)
	for _, path := range []string{"/", "/metrics", "/v3/clusters"} {
		cn.Send([]byte("GET " + path + " HTTP/1.1\r\nHost: broker-1:8080\r\nUser-Agent: curl/7.88.1\r\nAccept: */*\r\n\r\n"))
		body := `{"status":"ok"}`
		cn.Reply([]byte(fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)))
	}
	cn.Send([]byte("POST /v3/topics HTTP/1.1\r\nHost: broker-1:8080\r\nContent-Length: 2\r\n\r\n{}"))
	cn.Reply([]byte("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"))
	cn.Close()
}

const h2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// h2Frame is one HTTP/2 frame: a 24-bit length, type, flags, stream ID.
func h2Frame(typ, flags byte, stream uint32, payload []byte) []byte {
	n := len(payload)
	return be(nil).u8(byte(n >> 16)).u8(byte(n >> 8)).u8(byte(n)).u8(typ).u8(flags).u32(stream).raw(payload)
}

// h2Settings is a SETTINGS frame with the usual client or server values.
func h2Settings() []byte {
	return h2Frame(4, 0, 0, be(nil).u16(3).u32(100).u16(4).u32(65535).u16(2).u32(0))
}

// HTTP2 writes h2c with prior knowledge: the client preface and SETTINGS,
// the server's SETTINGS and the ACKs, a GET on stream 1 (HPACK static
// indices), a response, GOAWAY.
func HTTP2(c *pcapgen.Capture, o Opts) {
	cn := conn(c, o, 1, 8080)
	h2Open(cn)
	cn.Send(h2Frame(1, 0x05, 1, []byte{0x82, 0x86, 0x84, 0x41, 0x8a, 0x08, 0x9d, 0x5c, 0x0b, 0x81, 0x70, 0xdc, 0x78, 0x0f, 0x03}))
	cn.Reply(append(h2Frame(1, 0x04, 1, []byte{0x88, 0x5f, 0x87, 0x49, 0x7c, 0xa5, 0x8a, 0xe8, 0x19, 0xaa}),
		h2Frame(0, 0x01, 1, []byte(`{"status":"ok"}`))...))
	cn.Send(h2Frame(7, 0, 0, be(nil).u32(1).u32(0)))
	cn.Close()
}

// h2Open writes the connection preface and the SETTINGS exchange.
func h2Open(cn *pcapgen.Conn) {
	cn.Send(append([]byte(h2Preface), h2Settings()...))
	cn.Reply(append(h2Settings(), h2Frame(4, 0x01, 0, nil)...))
	cn.Send(h2Frame(4, 0x01, 0, nil))
}

// GRPC writes gRPC over h2c: unary calls whose DATA frames carry
// length-prefixed messages (a flag byte, a 4-byte length), and trailers.
func GRPC(c *pcapgen.Capture, o Opts) {
	cn := conn(c, o, 1, 50051)
	h2Open(cn)
	for i := uint32(0); i < 3; i++ {
		stream := 1 + 2*i
		hdrs := be(nil).raw([]byte{0x83, 0x86, 0x44, 0x8e}).str("/orders.Orders/Get").raw([]byte{0x5f, 0x8b}).str("application/grpc").str("te\x08trailers")
		msg := be(nil).u8(0x0a).u8(7).str("order-").u8(byte('1' + i))
		cn.Send(append(h2Frame(1, 0x04, stream, hdrs), h2Frame(0, 0x01, stream, be(nil).u8(0).u32(uint32(len(msg))).raw(msg))...))
		reply := be(nil).u8(0x0a).u8(9).str("delivered")
		resp := h2Frame(1, 0x04, stream, []byte{0x88, 0x5f, 0x8b})
		resp = append(resp, h2Frame(0, 0, stream, be(nil).u8(0).u32(uint32(len(reply))).raw(reply))...)
		resp = append(resp, h2Frame(1, 0x05, stream, be(nil).str("grpc-status\x010"))...)
		cn.Reply(resp)
	}
	cn.Close()
}

// SSH writes OpenSSH 9.2 sessions' start: both banners, then binary
// packets (uint32 length, padding length, payload, padding): KEXINIT and
// the key exchange's first messages.
func SSH(c *pcapgen.Capture, o Opts) {
	for s := 0; s < 2; s++ {
		cn := conn(c, o, 1+s, 22)
		cn.Reply([]byte("SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n"))
		cn.Send([]byte("SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n"))
		kex := be(nil).u8(20).raw(make([]byte, 16))
		for _, l := range []string{"curve25519-sha256,ext-info-c", "ssh-ed25519", "chacha20-poly1305@openssh.com", "chacha20-poly1305@openssh.com", "umac-64-etm@openssh.com", "umac-64-etm@openssh.com", "none", "none", "", ""} {
			kex = kex.u32(uint32(len(l))).str(l)
		}
		kex = kex.u8(0).u32(0)
		cn.Send(sshPacket(kex))
		cn.Reply(sshPacket(kex))
		cn.Send(sshPacket(be(nil).u8(30).u32(32).raw(make([]byte, 32))))
		cn.Reply(sshPacket(be(nil).u8(31).u32(51).raw(make([]byte, 51))))
		cn.Close()
	}
}

// sshPacket frames payload as an unencrypted binary packet, padded to a
// multiple of 8 with at least 4 bytes of padding.
func sshPacket(payload []byte) []byte {
	pad := 8 - (5+len(payload))%8
	if pad < 4 {
		pad += 8
	}
	return be(nil).u32(uint32(1 + len(payload) + pad)).u8(byte(pad)).raw(payload).raw(make([]byte, pad))
}

// TLSClientHello writes a TLS 1.3 ClientHello offering protos by ALPN
// (none: no ALPN extension), then opaque records both ways.
func TLSClientHello(c *pcapgen.Capture, o Opts, protos ...string) {
	cn := conn(c, o, 1, 443)
	cn.Send(ClientHello(protos...))
	cn.Reply(be(nil).u8(0x16).u16(0x0303).u16(90).raw(make([]byte, 90)))
	cn.Send(be(nil).u8(0x17).u16(0x0303).u16(64).raw(make([]byte, 64)))
	cn.Close()
}

// ClientHello is one TLS handshake record holding a ClientHello with SNI
// and, when protos are given, ALPN.
func ClientHello(protos ...string) []byte {
	var ext be
	sni := be(nil).u8(0).u16(uint16(len("broker-1.example"))).str("broker-1.example")
	ext = ext.u16(0).u16(uint16(2 + len(sni))).u16(uint16(len(sni))).raw(sni)
	ext = ext.u16(43).u16(3).u8(2).u16(0x0304)                              // supported_versions
	ext = ext.u16(10).u16(4).u16(2).u16(29)                                 // supported_groups
	ext = ext.u16(13).u16(6).u16(4).u16(0x0403).u16(0x0804)                 // signature_algorithms
	ext = ext.u16(51).u16(38).u16(36).u16(29).u16(32).raw(make([]byte, 32)) // key_share
	if len(protos) > 0 {
		var list be
		for _, p := range protos {
			list = list.u8(byte(len(p))).str(p)
		}
		ext = ext.u16(16).u16(uint16(2 + len(list))).u16(uint16(len(list))).raw(list)
	}
	hello := be(nil).u16(0x0303).raw(make([]byte, 32)).u8(32).raw(make([]byte, 32)).
		u16(6).u16(0x1301).u16(0x1302).u16(0x1303).u8(1).u8(0).u16(uint16(len(ext))).raw(ext)
	hs := be(nil).u8(1).u8(0).u16(uint16(len(hello))).raw(hello)
	return be(nil).u8(0x16).u16(0x0301).u16(uint16(len(hs))).raw(hs)
}
