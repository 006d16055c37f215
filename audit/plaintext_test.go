package audit

import "testing"

func TestPlainText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"orders-app", "orders-app"},
		{`member "m" in group "g"`, `member "m" in group "g"`},
		{"zażółć 消费者", "zażółć 消费者"},
		{"evil\x1b[2J", `evil\x1b[2J`},
		{"two\r\nlines", `two\r\nlines`},
		{"tab\there", `tab\there`},
		{"sep\u2028x", `sep\u2028x`},
		{"bad\xffutf8", `bad\xffutf8`},
		{"del\x7f", `del\x7f`},
		{"\x00", `\x00`},
		{"", ""},
	}
	for _, tt := range tests {
		if got := PlainText(tt.in); got != tt.want {
			t.Errorf("PlainText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
