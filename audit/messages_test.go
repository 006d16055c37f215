package audit

import (
	"strings"
	"testing"
)

// TestMessagesNameUUIDsInHex: a message that names a UUID gives its
// 8-4-4-4-12 hex form beside it (SPEC.md section 1: "where a person reads
// it"), while expected and observed keep Java's form alone (README rule 14).
func TestMessagesNameUUIDsInHex(t *testing.T) {
	tests := []struct {
		name string
		rule string
		run  func(s *sc)
		hex  string // must be in the message, and nowhere in observed
	}{
		{name: "shared instance ID", rule: "instance-id-shared", hex: HexString(idA), run: func(s *sc) {
			s.req(connA, kAPIVer, 4, inst(idA))
			s.req(connB, kAPIVer, 4, inst(idA))
		}},
		{name: "collision names both member ID and the other instance", rule: "member-id-collision", hex: HexString(idA), run: func(s *sc) {
			s.req(connA, kCGHB, 1, inst(idA), hb("g", JavaString(v4A), 0))
			s.req(connA2, kCGHB, 1, inst(idB), hb("g", JavaString(v4A), 0))
		}},
		{name: "collision names the member ID's UUID", rule: "member-id-collision", hex: HexString(v4A), run: func(s *sc) {
			s.req(connA, kCGHB, 1, hb("g", JavaString(v4A), 0))
			s.req(connB, kCGHB, 1, hb("g", JavaString(v4A), 0))
		}},
		{name: "ghost member names the first join's member ID", rule: "ghost-member", hex: HexString(v4A), run: func(s *sc) {
			s.req(connA, kCGHB, 1, hb("g", JavaString(v4A), 0))
			s.req(connA, kCGHB, 1, hb("g", JavaString(idB), 0))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSC(Options{})
			tt.run(s)
			s.finish()
			f := findRule(s.got, tt.rule)
			if f == nil {
				t.Fatalf("no %s finding; got %v", tt.rule, counts(s.got))
			}
			if !strings.Contains(f.Message, tt.hex) {
				t.Errorf("message %q does not give the hex form %s", f.Message, tt.hex)
			}
			if strings.Contains(f.Observed, tt.hex) || strings.Contains(f.Expected, tt.hex) {
				t.Errorf("expected %q / observed %q hold the hex form; README rule 14 keeps them in Java's form", f.Expected, f.Observed)
			}
		})
	}
}
