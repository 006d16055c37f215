package enum

import "testing"

func TestName(t *testing.T) {
	names := []string{"", "info", "warn"}
	tests := []struct {
		name string
		v    uint8
		want string
	}{
		{"in the table", 1, "info"},
		{"last entry", 2, "warn"},
		{"empty entry falls back", 0, "unknown"},
		{"past the table falls back", 3, "unknown"},
		{"far past the table", 255, "unknown"},
	}
	for _, tt := range tests {
		if got := Name(names, tt.v, "unknown"); got != tt.want {
			t.Errorf("%s: Name(%d) = %q, want %q", tt.name, tt.v, got, tt.want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = Name(names, uint8(1), "x") }); n != 0 {
		t.Errorf("Name allocates %v times", n)
	}
}
