package tlsdec

import (
	"crypto/hmac"
	"hash"
)

// TLS 1.2 key schedule (RFC 5246 section 6.3): the key block is
// PRF(master secret, "key expansion", server random + client random), cut
// into MAC keys (none for AEADs), write keys and IVs, client's first.

// keys12 derives both directions' protection from the master secret.
func keys12(s *suite, master []byte, clientRandom, serverRandom *[32]byte) (client, server *protection, err error) {
	kl, il := s.keyLen, s.ivLen()
	var seed [64]byte
	copy(seed[:32], serverRandom[:])
	copy(seed[32:], clientRandom[:])
	block := make([]byte, 2*kl+2*il)
	prf12(s.hash(), master, "key expansion", seed[:], block)
	ck, sk := block[:kl], block[kl:2*kl]
	civ, siv := block[2*kl:2*kl+il], block[2*kl+il:]
	if client, err = newProtection(s, ck, civ); err != nil {
		return nil, nil, err
	}
	server, err = newProtection(s, sk, siv)
	return client, server, err
}

// prf12 fills out with TLS 1.2's PRF: P_hash(secret, label + seed).
func prf12(h func() hash.Hash, secret []byte, label string, seed, out []byte) {
	ls := make([]byte, 0, len(label)+len(seed))
	ls = append(append(ls, label...), seed...)
	mac := hmac.New(h, secret)
	mac.Write(ls)
	a := mac.Sum(nil) // A(1)
	for len(out) > 0 {
		mac.Reset()
		mac.Write(a)
		mac.Write(ls)
		n := copy(out, mac.Sum(nil))
		out = out[n:]
		mac.Reset()
		mac.Write(a)
		a = mac.Sum(a[:0]) // A(i+1)
	}
}
