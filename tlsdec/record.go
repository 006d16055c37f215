package tlsdec

import (
	"encoding/binary"
	"errors"

	"github.com/kwatch/kwatch/internal/wire"
)

// TLS record layer (RFC 5246 section 6.2, RFC 8446 section 5): a 5-byte
// header (type, version, length) and a body of at most 2^14+2048 bytes.

// Record content types.
const (
	typeCCS       = 20
	typeAlert     = 21
	typeHandshake = 22 // also the first byte of every TLS client's stream
	typeAppData   = 23
	typeHeartbeat = 24
)

// FirstByte is the first byte of a TLS client's stream: the header of the
// record that carries its ClientHello.
const FirstByte = typeHandshake

const (
	headerLen = 5
	// MaxRecord is the largest record body accepted (TLS 1.2's bound; TLS
	// 1.3's is lower). A header claiming more is not TLS.
	MaxRecord = 1<<14 + 2048
	// maxHello bounds a buffered ClientHello or ServerHello (a ClientHello
	// with a post-quantum key share is about 1.3 KB).
	maxHello = 1 << 16
)

// errNotRecord is a record header no TLS peer sends.
var errNotRecord = errors.New("not a TLS record header")

// records reassembles one direction's records across segments. A record
// that arrives whole in one segment is handed over where it lies; one
// split across segments is copied into body, never more than MaxRecord.
type records struct {
	hdr  [headerLen]byte
	hn   int
	body []byte
	need int // body bytes of the current record; valid when hn == headerLen
}

// next takes bytes from p. It returns the next whole record's header and
// body (valid until the next call; the body may point into p) and the bytes
// of p after it; a nil hdr means p was used up without completing one.
func (r *records) next(p []byte) (hdr, body, rest []byte, err error) {
	if r.hn == 0 && len(p) >= headerLen {
		// The fast path: header and maybe the whole body in p.
		n := int(binary.BigEndian.Uint16(p[3:]))
		if err := checkHeader(p[:headerLen]); err != nil {
			return nil, nil, nil, err
		}
		if len(p) >= headerLen+n {
			return p[:headerLen], p[headerLen : headerLen+n], p[headerLen+n:], nil
		}
	}
	for r.hn < headerLen {
		if len(p) == 0 {
			return nil, nil, nil, nil
		}
		r.hdr[r.hn] = p[0]
		r.hn++
		p = p[1:]
		if r.hn == headerLen {
			if err := checkHeader(r.hdr[:]); err != nil {
				return nil, nil, nil, err
			}
			r.need = int(binary.BigEndian.Uint16(r.hdr[3:]))
			r.body = r.body[:0]
		}
	}
	n := min(r.need-len(r.body), len(p))
	r.body = append(r.body, p[:n]...)
	if len(r.body) < r.need {
		return nil, nil, nil, nil
	}
	r.hn = 0
	return r.hdr[:], r.body, p[n:], nil
}

// checkHeader accepts the record types of RFC 8446 and 5246, version 3.x
// and a length within MaxRecord.
func checkHeader(h []byte) error {
	if h[0] < typeCCS || h[0] > typeHeartbeat || h[1] != 3 || h[2] > 4 ||
		binary.BigEndian.Uint16(h[3:]) > MaxRecord {
		return errNotRecord
	}
	return nil
}

// Handshake message types tlsdec acts on.
const (
	hsClientHello = 1
	hsServerHello = 2
	hsFinished    = 20
	hsKeyUpdate   = 24
)

// messages splits one direction's handshake bytes into messages (4-byte
// header: type, 24-bit length), which may span records. Only hellos are
// buffered (up to maxHello); other bodies are counted past.
type messages struct {
	hdr  [4]byte
	hn   int
	typ  byte
	left int // body bytes still to come
	keep bool
	buf  []byte
}

// next takes bytes from p and returns the type and body (nil unless a
// hello) of the next message that ends in p, with the rest of p; ok is
// false when p ended first.
func (m *messages) next(p []byte) (typ byte, body, rest []byte, ok bool) {
	for m.hn < len(m.hdr) {
		if len(p) == 0 {
			return 0, nil, nil, false
		}
		m.hdr[m.hn] = p[0]
		m.hn++
		p = p[1:]
		if m.hn == len(m.hdr) {
			m.typ = m.hdr[0]
			m.left = int(m.hdr[1])<<16 | int(m.hdr[2])<<8 | int(m.hdr[3])
			m.keep = (m.typ == hsClientHello || m.typ == hsServerHello) && m.left <= maxHello
			m.buf = m.buf[:0]
		}
	}
	n := min(m.left, len(p))
	if m.keep {
		m.buf = append(m.buf, p[:n]...)
	}
	m.left -= n
	p = p[n:]
	if m.left > 0 {
		return 0, nil, nil, false
	}
	m.hn = 0
	if m.keep {
		body = m.buf
	}
	return m.typ, body, p, true
}

// hello is what tlsdec needs of a ClientHello or ServerHello.
type hello struct {
	random [32]byte
	suite  uint16 // ServerHello: the chosen suite
	// version: ServerHello's supported_versions choice, else its
	// legacy_version.
	version uint16
}

// helloRetry is the random of a HelloRetryRequest (RFC 8446 4.1.3).
var helloRetry = [32]byte{
	0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11, 0xbe, 0x1d, 0x8c, 0x02, 0x1e, 0x65, 0xb8, 0x91,
	0xc2, 0xa2, 0x11, 0x16, 0x7a, 0xbb, 0x8c, 0x5e, 0x07, 0x9e, 0x09, 0xe2, 0xc8, 0xa8, 0x33, 0x9c,
}

// parseClientHello reads the random of a ClientHello body.
func parseClientHello(b []byte) (hello, bool) {
	var h hello
	r := wire.Reader{B: b}
	h.version = uint16(r.U16())
	copy(h.random[:], r.Take(32))
	return h, !r.Bad
}

// parseServerHello reads random, suite and version of a ServerHello body,
// the version from the supported_versions extension (43) when present.
func parseServerHello(b []byte) (hello, bool) {
	var h hello
	r := wire.Reader{B: b}
	h.version = uint16(r.U16())
	copy(h.random[:], r.Take(32))
	r.Skip(r.U8()) // legacy_session_id_echo
	h.suite = uint16(r.U16())
	r.Skip(1) // compression method
	if r.Bad {
		return h, false
	}
	if len(r.B) == 0 {
		return h, true // no extensions
	}
	ext := r.Sub(r.U16())
	for !ext.Bad && len(ext.B) >= 4 {
		typ, body := ext.U16(), ext.Take(ext.U16())
		if typ == 43 && len(body) == 2 {
			h.version = binary.BigEndian.Uint16(body)
		}
	}
	return h, !r.Bad && !ext.Bad
}
