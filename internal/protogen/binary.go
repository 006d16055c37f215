package protogen

import (
	"encoding/binary"
	"strings"

	"github.com/kwatch/kwatch/internal/pcapgen"
)

// Length-prefixed binary protocols, the ones a Kafka decoder can mistake
// for its own: ZooKeeper, PostgreSQL, memcached binary, MySQL.

// ZooKeeper writes three sessions of ZooKeeper 3.8's jute framing (an
// int32 length, then the record): ConnectRequest and its response,
// getData, exists and getChildren with xids counting up, pings (xid -2),
// and closeSession (an 8-byte frame).
func ZooKeeper(c *pcapgen.Capture, o Opts) {
	for s := 0; s < 3; s++ {
		cn := conn(c, o, 1+s, 2181)
		passwd := make([]byte, 16)
		for i := range passwd {
			passwd[i] = byte(0x40 + 7*i + s)
		}
		session := uint64(0x1000_0a2b_0000_0000) + uint64(s)
		// protocolVersion, lastZxidSeen, timeOut, sessionId, passwd, readOnly
		cn.Send(sized(be(nil).u32(0).u64(0).u32(30000).u64(0).u32(16).raw(passwd).u8(0)))
		cn.Reply(sized(be(nil).u32(0).u32(30000).u64(session).u32(16).raw(passwd).u8(0)))
		zxid := uint64(0x2_0000_0010 + s)
		paths := []string{"/brokers/ids", "/controller", "/brokers/topics/orders", "/config/changes"}
		for i, path := range paths {
			xid := uint32(i + 1)
			op := []uint32{4, 3, 12, 8}[i] // getData, exists, getChildren2, getChildren
			cn.Send(sized(be(nil).u32(xid).u32(op).u32(uint32(len(path))).str(path).u8(1)))
			data := `{"version":5,"brokerid":1,"timestamp":"1764600000000"}`
			cn.Reply(sized(be(nil).u32(xid).u64(zxid).u32(0).u32(uint32(len(data))).str(data).raw(zkStat(zxid))))
			zxid++
			if i == 1 {
				cn.Send(sized(be(nil).u32(0xfffffffe).u32(11))) // ping
				cn.Reply(sized(be(nil).u32(0xfffffffe).u64(zxid).u32(0)))
			}
		}
		cn.Send(sized(be(nil).u32(uint32(len(paths) + 1)).u32(0xfffffff5))) // closeSession
		cn.Reply(sized(be(nil).u32(uint32(len(paths) + 1)).u64(zxid).u32(0)))
		cn.Close()
	}
}

// zkStat is a Stat record: czxid, mzxid, ctime, mtime, version, cversion,
// aversion, ephemeralOwner, dataLength, numChildren, pzxid.
func zkStat(zxid uint64) []byte {
	return be(nil).u64(zxid - 9).u64(zxid - 3).u64(1764600000000).u64(1764600300000).
		u32(2).u32(0).u32(0).u64(0).u32(54).u32(0).u64(zxid - 9)
}

// PostgreSQL writes PostgreSQL 15 sessions: an SSLRequest refused, a
// StartupMessage (whose length counts itself), authentication, a simple
// query and its rows, Terminate; one session has a user name long enough
// that a Kafka reading of the startup finds a printable client ID.
func PostgreSQL(c *pcapgen.Capture, o Opts) {
	users := []string{"postgres", "app", "p" + strings.Repeat("ostgres_reporting_service_account_", 5)}
	for s, user := range users {
		cn := conn(c, o, 1+s, 5432)
		if s == 0 {
			cn.Send(be(nil).u32(8).u32(80877103)) // SSLRequest
			cn.Reply([]byte("N"))
		}
		params := "user\x00" + user + "\x00database\x00orders\x00application_name\x00psql\x00client_encoding\x00UTF8\x00\x00"
		cn.Send(pgSelf(nil, be(nil).u32(196608).str(params)))
		var r []byte
		r = pgMsg(r, 'R', be(nil).u32(0)) // AuthenticationOk
		for _, kv := range [][2]string{{"server_version", "15.8"}, {"client_encoding", "UTF8"}, {"DateStyle", "ISO, MDY"}, {"TimeZone", "UTC"}} {
			r = pgMsg(r, 'S', be(nil).str(kv[0]+"\x00"+kv[1]+"\x00"))
		}
		r = pgMsg(r, 'K', be(nil).u32(uint32(4242+s)).u32(0x5eed1234))
		r = pgMsg(r, 'Z', be(nil).str("I"))
		cn.Reply(r)
		for _, q := range []string{"SELECT 1", "SELECT id, name FROM orders WHERE id < 3"} {
			cn.Send(pgMsg(nil, 'Q', be(nil).str(q+"\x00")))
			var a []byte
			a = pgMsg(a, 'T', be(nil).u16(1).str("id\x00").u32(16384).u16(1).u32(23).u16(4).u32(0xffffffff).u16(0))
			for i := 1; i <= 2; i++ {
				a = pgMsg(a, 'D', be(nil).u16(1).u32(1).str(string(rune('0'+i))))
			}
			a = pgMsg(a, 'C', be(nil).str("SELECT 2\x00"))
			a = pgMsg(a, 'Z', be(nil).str("I"))
			cn.Reply(a)
		}
		cn.Send(pgMsg(nil, 'X', nil))
		cn.Close()
	}
}

// pgMsg appends a typed message: type byte, int32 length counting itself,
// body.
func pgMsg(b []byte, typ byte, body be) []byte {
	b = append(b, typ)
	return pgSelf(b, body)
}

// pgSelf appends body after an int32 length that counts itself.
func pgSelf(b []byte, body be) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(4+len(body)))
	return append(b, body...)
}

// MemcachedBinary writes memcached 1.6's binary protocol: 24-byte headers
// (magic 0x80 request, 0x81 response), set, get, a miss, noop, quit.
func MemcachedBinary(c *pcapgen.Capture, o Opts) {
	cn := conn(c, o, 1, 11211)
	for i, key := range []string{"orders:1", "orders:2", "absent"} {
		val := "{\"id\":" + string(rune('1'+i)) + "}"
		if i < 2 {
			cn.Send(mcBin(0x80, 0x01, key, be(nil).u32(0).u32(3600), val, uint32(i+1))) // set
			cn.Reply(mcBin(0x81, 0x01, "", nil, "", uint32(i+1)))
		}
		cn.Send(mcBin(0x80, 0x00, key, nil, "", uint32(10+i))) // get
		if i < 2 {
			cn.Reply(mcBin(0x81, 0x00, "", be(nil).u32(0), val, uint32(10+i)))
		} else {
			r := mcBin(0x81, 0x00, "", nil, "Not found", uint32(10+i))
			binary.BigEndian.PutUint16(r[6:], 1) // status: key not found
			cn.Reply(r)
		}
	}
	cn.Send(mcBin(0x80, 0x0a, "", nil, "", 20)) // noop
	cn.Reply(mcBin(0x81, 0x0a, "", nil, "", 20))
	cn.Send(mcBin(0x80, 0x07, "", nil, "", 21)) // quit
	cn.Reply(mcBin(0x81, 0x07, "", nil, "", 21))
	cn.Close()
}

// mcBin is one binary-protocol packet.
func mcBin(magic, op byte, key string, extras be, val string, opaque uint32) []byte {
	total := len(extras) + len(key) + len(val)
	return be(nil).u8(magic).u8(op).u16(uint16(len(key))).u8(byte(len(extras))).u8(0).u16(0).
		u32(uint32(total)).u32(opaque).u64(0).raw(extras).str(key).str(val)
}

// MySQL writes MariaDB 10.11 sessions: packets of a 3-byte little-endian
// length and a sequence number; the server greets first, the client logs
// in, then COM_QUERY and COM_QUIT.
func MySQL(c *pcapgen.Capture, o Opts) {
	for s := 0; s < 2; s++ {
		cn := conn(c, o, 1+s, 3306)
		greet := be(nil).u8(10).str("5.5.5-10.11.6-MariaDB-0+deb12u1\x00").raw([]byte{byte(30 + s), 0, 0, 0}).
			str("Qx;6p[4`\x00").raw([]byte{0xfe, 0xf7, 0x2d, 0x02, 0x00, 0xff, 0x81, 0x15}).raw(make([]byte, 10)).
			str("SY|&Q$\\RVn>{\x00mysql_native_password\x00")
		cn.Reply(myPacket(0, greet))
		login := be(nil).raw([]byte{0x0d, 0xa6, 0xff, 0x01}).u32(0x01000000).u8(0x2d).raw(make([]byte, 23)).
			str("orders\x00").u8(20).raw([]byte("0123456789abcdefghij")).str("orders\x00mysql_native_password\x00")
		cn.Send(myPacket(1, login))
		cn.Reply(myPacket(2, []byte{0, 0, 0, 2, 0, 0, 0}))
		cn.Send(myPacket(0, be(nil).u8(0x03).str("SELECT @@version_comment LIMIT 1")))
		cn.Reply(append(append(myPacket(1, []byte{1}), myPacket(2, be(nil).str("\x03def\x00\x00\x00\x11@@version_comment\x00\x0c!\x00\x18\x00\x00\x00\xfd\x00\x00\x27\x00\x00"))...),
			myPacket(3, be(nil).u8(20).str("Debian 12 MariaDB  ."))...))
		cn.Send(myPacket(0, []byte{0x01})) // COM_QUIT
		cn.Close()
	}
}

// myPacket frames payload as one MySQL packet.
func myPacket(seq byte, payload []byte) []byte {
	n := len(payload)
	return append([]byte{byte(n), byte(n >> 8), byte(n >> 16), seq}, payload...)
}
