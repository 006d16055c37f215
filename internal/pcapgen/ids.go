package pcapgen

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
)

// The encodings of a 16-byte UUID that SPEC.md section 1 recognises in member
// IDs. JavaString is the canonical one (org.apache.kafka.common.Uuid.toString).

// JavaString is Java's Uuid.toString(): URL-safe base64 without padding, 22
// characters.
func JavaString(id [16]byte) string { return base64.RawURLEncoding.EncodeToString(id[:]) }

// PaddedURL is URL-safe base64 with "==" padding, 24 characters (the spelling
// of franz-go's kgo member IDs).
func PaddedURL(id [16]byte) string { return base64.URLEncoding.EncodeToString(id[:]) }

// StdBase64 is standard base64 ('+' and '/') with padding, 24 characters.
func StdBase64(id [16]byte) string { return base64.StdEncoding.EncodeToString(id[:]) }

// StdBase64NoPad is standard base64 ('+' and '/') without padding.
func StdBase64NoPad(id [16]byte) string { return base64.RawStdEncoding.EncodeToString(id[:]) }

// Hex is the 32-character lowercase hex form.
func Hex(id [16]byte) string { return hex.EncodeToString(id[:]) }

// Dashed is the 8-4-4-4-12 hex form.
func Dashed(id [16]byte) string {
	h := Hex(id)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// ParseUUID reads a UUID spelled in any of the encodings above.
func ParseUUID(s string) ([16]byte, error) {
	var id [16]byte
	var b []byte
	var err error
	switch {
	case len(s) == 36 && strings.Count(s, "-") == 4:
		b, err = hex.DecodeString(strings.ReplaceAll(s, "-", ""))
	case len(s) == 32:
		b, err = hex.DecodeString(s)
	case len(s) == 22 && !strings.ContainsAny(s, "+/"):
		b, err = base64.RawURLEncoding.DecodeString(s)
	case len(s) == 22:
		b, err = base64.RawStdEncoding.DecodeString(s)
	case len(s) == 24 && !strings.ContainsAny(s, "+/"):
		b, err = base64.URLEncoding.DecodeString(s)
	case len(s) == 24:
		b, err = base64.StdEncoding.DecodeString(s)
	default:
		return id, fmt.Errorf("pcapgen: %q is no known UUID encoding", s)
	}
	if err != nil {
		return id, fmt.Errorf("pcapgen: parse UUID %q: %w", s, err)
	}
	if len(b) != 16 {
		return id, fmt.Errorf("pcapgen: UUID %q decodes to %d bytes, want 16", s, len(b))
	}
	copy(id[:], b)
	return id, nil
}

// MustUUID is ParseUUID for literals in tests and scenarios; it panics on a
// malformed literal, which is a bug in the calling scenario, not bad input.
func MustUUID(s string) [16]byte {
	id, err := ParseUUID(s)
	if err != nil {
		panic(err)
	}
	return id
}

// SeqUUID returns a version-4-shaped UUID whose bytes are n, n+1, ... n+15
// (with the version and variant bits set), handy for readable test IDs.
func SeqUUID(n byte) [16]byte {
	var id [16]byte
	for i := range id {
		id[i] = n + byte(i)
	}
	id[6] = id[6]&0x0f | 0x40
	id[8] = id[8]&0x3f | 0x80
	return id
}

// OneUUID returns Kafka's reserved ONE_UUID (...0001).
func OneUUID() [16]byte { return [16]byte{15: 1} }

// Ptr returns a pointer to v, for the optional fields of RequestHeader and
// kmsg bodies.
func Ptr[T any](v T) *T { return &v }
