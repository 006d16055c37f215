package audit

import (
	"strconv"
	"unicode"
	"unicode/utf8"
)

// Text from the wire (client IDs, member IDs, group IDs, software names)
// is written by anyone on the network. Every output escapes it with one of
// the two functions of this file: PlainText for a terminal (text report,
// TUI, dump's lines), AppendJSONString for JSON and NDJSON (report,
// findings, dump). Both escape the C0 and C1 controls, DEL, the
// bidirectional overrides and invalid UTF-8, so that no byte of a capture
// can forge a line, hide text or drive the terminal of whoever reads the
// output, even through cat.

// PlainText returns s safe to print on one line of a terminal: text from
// the wire (client IDs, member IDs, software names) may hold control
// characters, escape sequences, line breaks or invalid UTF-8, which would
// forge report lines or drive the terminal. Such a string comes back with
// Go's escapes (as %q writes it, without the quotes); any other string
// comes back unchanged.
func PlainText(s string) string {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || !unicode.IsPrint(r) {
			q := strconv.Quote(s)
			return q[1 : len(q)-1]
		}
		i += size
	}
	return s
}

// AppendJSONString appends s as a JSON string: what encoding/json writes
// with escapeHTML false ('"', '\\' and C0 controls escaped, \b \f \n \r
// \t by name; invalid UTF-8 bytes replaced by \ufffd; U+2028 and U+2029
// escaped), and besides DEL, the C1 controls and the bidirectional
// controls (terminalRune) as \uXXXX: valid JSON that decodes to the same
// string, harmless on a terminal.
func AppendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		// Eight plain bytes at a time: most wire text is plain ASCII.
		for i+8 <= len(s) && plain8(s[i:i+8]) {
			i += 8
		}
		if i == len(s) {
			break
		}
		b := s[i]
		if jsonPlain[b] {
			i++
			continue
		}
		if b < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case c == '\u2028' || c == '\u2029' || terminalRune(c):
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', hex[c>>12&0xF], hex[c>>8&0xF], hex[c>>4&0xF], hex[c&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// terminalRune reports the runes beyond ASCII that JSON may carry raw but
// a terminal acts on: the C1 controls (U+0080-U+009F; U+009B is CSI) and
// the bidirectional controls that reorder what a reader sees.
func terminalRune(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// plain8 reports whether the 8 bytes of s are all jsonPlain: none under
// 0x20, none at or over 0x7F, no '"' and no '\\'. (The tests for a byte
// under n, or equal to zero, in every lane at once are exact about
// whether there is one.)
func plain8(s string) bool {
	w := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	under := func(x uint64, n uint64) uint64 { return (x - lo*n) &^ x & hi }
	bad := under(w, 0x20) | w&hi | under(w^(lo*'"'), 1) | under(w^(lo*'\\'), 1) | under(w^(lo*0x7F), 1)
	return bad == 0
}

// jsonPlain marks the bytes AppendJSONString copies as they are without
// a second look: ASCII but control characters, DEL, '"' and '\\'.
var jsonPlain = func() (t [256]bool) {
	for b := ' '; b < utf8.RuneSelf-1; b++ {
		t[b] = b != '"' && b != '\\'
	}
	return t
}()
