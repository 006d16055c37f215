package tui

import (
	"strings"
	"testing"
)

func TestReflow(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"paragraph", "a broker rejects\nthe request", []string{"a broker rejects the request"}},
		{"two paragraphs", "one\ntwo\n\nthree", []string{"one two", "", "three"}},
		{"example kept", "Example:\n  Metadata v12 corr 7\n  Metadata v12 corr 8\nFix it.", []string{"Example:", "  Metadata v12 corr 7", "  Metadata v12 corr 8", "Fix it."}},
		{"list items", "Fix:\n- upgrade\n- retry\nthen", []string{"Fix:", "- upgrade", "- retry then"}},
		{"numbered", "Steps\n1. one\n2. two", []string{"Steps", "1. one", "2. two"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := reflow(tc.in); strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Fatalf("reflow(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
