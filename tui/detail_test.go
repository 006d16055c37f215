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

// TestTakeFetched: a pane keeps only its own Detailer's answer, and only
// for the row still open; the answer, kept or not, is its alone.
func TestTakeFetched(t *testing.T) {
	rows := Excerpt{Rows: []TimelineRow{{Frame: 7}}}
	tests := []struct {
		name     string
		open     bool
		openKey  string
		msg      any
		wantTook bool // take reported msg as the pane's
		wantKept bool // the rows were kept and the screen refreshed
	}{
		{"answer for the open row", true, "a", fetchedMsg[*findings]{key: "a", rows: rows}, true, true},
		{"answer for another row", true, "b", fetchedMsg[*findings]{key: "a", rows: rows}, true, false},
		{"answer after the screen closed", false, "a", fetchedMsg[*findings]{key: "a", rows: rows}, true, false},
		{"another pane's answer", true, "a", fetchedMsg[*instances]{key: "a", rows: rows}, false, false},
		{"not an answer", true, "a", exportedMsg{}, false, false},
	}
	for _, tt := range tests {
		var f fetched
		refreshed := false
		took := take[*findings](&f, tt.open, tt.openKey, tt.msg, func() { refreshed = true })
		if took != tt.wantTook || f.have != tt.wantKept || refreshed != tt.wantKept {
			t.Errorf("%s: took %v, kept %v, refreshed %v; want %v, %v, %v", tt.name, took, f.have, refreshed, tt.wantTook, tt.wantKept, tt.wantKept)
		}
		snapshot := []TimelineRow{{Frame: 1}}
		if got := f.or(snapshot); tt.wantKept != (len(got.Rows) == 1 && got.Rows[0].Frame == 7) {
			t.Errorf("%s: or gave %+v", tt.name, got)
		}
	}
}
