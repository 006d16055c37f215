package audit

import (
	"encoding/base64"
	"encoding/hex"

	"github.com/google/uuid"
	"github.com/kwatch/kwatch/decode"
	"github.com/kwatch/kwatch/internal/enum"
)

// oneUUID is Kafka's reserved ONE_UUID: fifteen zero bytes, then 0x01.
var oneUUID = decode.UUID{15: 1}

// JavaString returns u as Java's Uuid.toString() spells it: URL-safe base64
// without padding, 22 characters. It is the canonical form kwatch prints.
func JavaString(u decode.UUID) string { return base64.RawURLEncoding.EncodeToString(u[:]) }

// HexString returns u in the 8-4-4-4-12 form, shown beside JavaString for people.
func HexString(u decode.UUID) string { return uuid.UUID(u).String() }

// uuidText is u as a finding's message names it: Java's form, with the hex
// form beside it (SPEC.md section 1: "where a person reads it").
func uuidText(u decode.UUID) string { return JavaString(u) + " (" + HexString(u) + ")" }

// memberText is a member ID as a message names it: as sent, with the hex
// form beside it when it spells a UUID other than in hex already.
func memberText(s string) string {
	switch enc, u := decodeMemberID(s); enc {
	case encNone, encHexDashed:
		return s
	default:
		return s + " (" + HexString(u) + ")"
	}
}

// appendJava appends JavaString(u) to dst without allocating when dst has room.
func appendJava(dst []byte, u decode.UUID) []byte {
	return base64.RawURLEncoding.AppendEncode(dst, u[:])
}

// isJavaString reports whether s == JavaString(u) without allocating.
func isJavaString(s string, u decode.UUID) bool {
	if len(s) != 22 {
		return false
	}
	var buf [24]byte
	return string(appendJava(buf[:0], u)) == s
}

// encoding names how a member ID spells 16 bytes (SPEC.md section 1).
type encoding uint8

const (
	encNone      encoding = iota // not 16 bytes in any known encoding
	encJava                      // URL-safe base64, no padding, 22 chars
	encURLPadded                 // URL-safe base64 with == padding, 24 chars (kgo)
	encStd                       // standard base64 ('+', '/'), no padding
	encStdPadded                 // standard base64 with padding
	encHexDashed                 // 8-4-4-4-12 hex
	encHex                       // 32 hex digits
)

var encodingNames = []string{
	encNone:      "not a UUID",
	encJava:      "Java (URL-safe base64, no padding)",
	encURLPadded: "URL-safe base64 with padding",
	encStd:       "standard base64 without padding",
	encStdPadded: "standard base64 with padding",
	encHexDashed: "8-4-4-4-12 hex",
	encHex:       "32-digit hex",
}

func (e encoding) String() string { return enum.Name(encodingNames, e, "unknown") }

var (
	rawURLStrict = base64.RawURLEncoding.Strict()
	urlStrict    = base64.URLEncoding.Strict()
	rawStdStrict = base64.RawStdEncoding.Strict()
	stdStrict    = base64.StdEncoding.Strict()
)

// decodeMemberID finds which encoding of 16 bytes s is, if any. Base64
// decoding is strict (non-zero trailing bits are rejected) so that one byte
// string has one spelling per encoding. A 22- or 24-char string without
// '+', '/', '-' or '_' decodes in both alphabets; it is classed URL-safe,
// Java's alphabet, which is what "standard base64" warns about.
func decodeMemberID(s string) (encoding, decode.UUID) {
	var u decode.UUID
	var buf [18]byte
	switch len(s) {
	case 22, 24:
		padded := len(s) == 24
		std := false
		for i := 0; i < len(s); i++ {
			if s[i] == '+' || s[i] == '/' {
				std = true
				break
			}
		}
		enc, kind := rawURLStrict, encJava
		switch {
		case padded && std:
			enc, kind = stdStrict, encStdPadded
		case padded:
			enc, kind = urlStrict, encURLPadded
		case std:
			enc, kind = rawStdStrict, encStd
		}
		n, err := enc.Decode(buf[:], []byte(s))
		if err != nil || n != 16 {
			return encNone, u
		}
		copy(u[:], buf[:16])
		return kind, u
	case 36:
		if s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
			return encNone, u
		}
		var h [32]byte
		copy(h[0:8], s[0:8])
		copy(h[8:12], s[9:13])
		copy(h[12:16], s[14:18])
		copy(h[16:20], s[19:23])
		copy(h[20:32], s[24:36])
		if _, err := hex.Decode(u[:], h[:]); err != nil {
			return encNone, decode.UUID{}
		}
		return encHexDashed, u
	case 32:
		if _, err := hex.Decode(u[:], []byte(s)); err != nil {
			return encNone, decode.UUID{}
		}
		return encHex, u
	}
	return encNone, u
}

// hasStdChars reports whether s holds '+' or '/' (member-id-encoding's warn case).
func hasStdChars(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '+' || s[i] == '/' {
			return true
		}
	}
	return false
}

// isV4 reports whether u is a version-4 UUID and not reserved.
func isV4(u decode.UUID) bool {
	return u[6]>>4 == 4 && !u.IsZero() && u != oneUUID
}
