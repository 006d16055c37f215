package tlsdec

import (
	"crypto/hkdf"
	"hash"
)

// TLS 1.3 key schedule (RFC 8446 section 7): each direction's traffic
// secret gives its key and IV by HKDF-Expand-Label; a KeyUpdate replaces
// the secret by HKDF-Expand-Label(secret, "traffic upd", "", Hash.length).

// expandLabel is HKDF-Expand-Label(secret, label, "", length).
func expandLabel(h func() hash.Hash, secret []byte, label string, length int) ([]byte, error) {
	info := make([]byte, 0, 4+6+len(label))
	info = append(info, byte(length>>8), byte(length), byte(6+len(label)))
	info = append(info, "tls13 "...)
	info = append(info, label...)
	info = append(info, 0) // empty context
	return hkdf.Expand(h, secret, string(info), length)
}

// keys13 returns the protection of one direction keyed by traffic secret.
func keys13(s *suite, secret []byte) (*protection, error) {
	key, err := expandLabel(s.hash(), secret, "key", s.keyLen)
	if err != nil {
		return nil, err
	}
	iv, err := expandLabel(s.hash(), secret, "iv", 12)
	if err != nil {
		return nil, err
	}
	return newProtection(s, key, iv)
}

// nextSecret is the traffic secret after a KeyUpdate.
func nextSecret(s *suite, secret []byte) ([]byte, error) {
	return expandLabel(s.hash(), secret, "traffic upd", s.hashLen())
}
