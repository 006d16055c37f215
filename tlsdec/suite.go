package tlsdec

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"

	"golang.org/x/crypto/chacha20poly1305"
)

// suite is a cipher suite tlsdec decrypts: an AEAD, its key length and the
// hash of its PRF (TLS 1.2) or HKDF (TLS 1.3).
type suite struct {
	id     uint16
	tls13  bool
	keyLen int
	chacha bool
	sha384 bool
}

// suites lists every suite tlsdec decrypts (SPEC.md section 2.1): TLS 1.2
// ECDHE with AES-GCM or ChaCha20-Poly1305, and TLS 1.3's three AEAD suites.
var suites = [...]suite{
	{id: 0xc02f, keyLen: 16},                            // TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256
	{id: 0xc02b, keyLen: 16},                            // TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256
	{id: 0xc030, keyLen: 32, sha384: true},              // TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384
	{id: 0xc02c, keyLen: 32, sha384: true},              // TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384
	{id: 0xcca8, keyLen: 32, chacha: true},              // TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256
	{id: 0xcca9, keyLen: 32, chacha: true},              // TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256
	{id: 0x1301, tls13: true, keyLen: 16},               // TLS_AES_128_GCM_SHA256
	{id: 0x1302, tls13: true, keyLen: 32, sha384: true}, // TLS_AES_256_GCM_SHA384
	{id: 0x1303, tls13: true, keyLen: 32, chacha: true}, // TLS_CHACHA20_POLY1305_SHA256
}

// suiteFor returns the suite id names in the given version, or nil.
func suiteFor(id uint16, tls13 bool) *suite {
	for i := range suites {
		if suites[i].id == id && suites[i].tls13 == tls13 {
			return &suites[i]
		}
	}
	return nil
}

func (s *suite) hash() func() hash.Hash {
	if s.sha384 {
		return sha512.New384
	}
	return sha256.New
}

func (s *suite) hashLen() int {
	if s.sha384 {
		return sha512.Size384
	}
	return sha256.Size
}

// ivLen is the IV the key schedule yields: TLS 1.2 AES-GCM has a 4-byte
// implicit part (the other 8 travel in each record), the rest 12 bytes.
func (s *suite) ivLen() int {
	if !s.tls13 && !s.chacha {
		return 4
	}
	return 12
}

func (s *suite) String() string { return fmt.Sprintf("%#04x", s.id) }

const (
	aeadOverhead = 16 // the tag of both AEADs
	explicitLen  = 8  // TLS 1.2 AES-GCM's explicit nonce
)

// errAuth is an AEAD that refused a record: wrong secrets, or bytes that
// are not this connection's records.
var errAuth = errors.New("record failed to authenticate")

// protection is one direction's record protection: an AEAD, its IV and the
// sequence number of the next record.
type protection struct {
	aead     cipher.AEAD
	iv       [12]byte
	seq      uint64
	explicit bool // TLS 1.2 AES-GCM: an 8-byte explicit nonce leads each record
	tls13    bool
	nonce    [12]byte
	aad      [13]byte
}

// newProtection keys one direction with key and iv of suite s.
func newProtection(s *suite, key, iv []byte) (*protection, error) {
	p := &protection{tls13: s.tls13, explicit: !s.tls13 && !s.chacha}
	var err error
	if s.chacha {
		p.aead, err = chacha20poly1305.New(key)
	} else {
		var b cipher.Block
		if b, err = aes.NewCipher(key); err == nil {
			p.aead, err = cipher.NewGCM(b)
		}
	}
	copy(p.iv[:], iv)
	return p, err
}

// open decrypts the record with header hdr (5 bytes) and body, appending the
// plaintext to dst. The sequence number advances only when it succeeds.
func (p *protection) open(dst, hdr, body []byte) ([]byte, error) {
	var aad []byte
	switch {
	case p.tls13:
		// RFC 8446 5.2: the additional data is the record header; the
		// nonce is the IV XOR the sequence number.
		aad = hdr
		p.xorNonce()
	case p.explicit:
		// RFC 5288: fixed IV (4) || explicit nonce (8), sent in the record.
		if len(body) < explicitLen+aeadOverhead {
			return dst, errAuth
		}
		copy(p.nonce[:4], p.iv[:4])
		copy(p.nonce[4:], body[:explicitLen])
		body = body[explicitLen:]
		aad = p.aad12(hdr[0], len(body)-aeadOverhead)
	default:
		// RFC 7905: ChaCha20-Poly1305 in TLS 1.2 uses the TLS 1.3 nonce.
		if len(body) < aeadOverhead {
			return dst, errAuth
		}
		p.xorNonce()
		aad = p.aad12(hdr[0], len(body)-aeadOverhead)
	}
	out, err := p.aead.Open(dst, p.nonce[:], body, aad)
	if err != nil {
		return dst, errAuth
	}
	p.seq++
	return out, nil
}

func (p *protection) xorNonce() {
	p.nonce = p.iv
	for i := range 8 {
		p.nonce[4+i] ^= byte(p.seq >> (56 - 8*i))
	}
}

// aad12 is TLS 1.2's additional data: seq, type, version, plaintext length.
func (p *protection) aad12(typ byte, n int) []byte {
	binary.BigEndian.PutUint64(p.aad[:], p.seq)
	p.aad[8], p.aad[9], p.aad[10] = typ, 3, 3
	binary.BigEndian.PutUint16(p.aad[11:], uint16(n))
	return p.aad[:]
}
