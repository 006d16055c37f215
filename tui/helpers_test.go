package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

func TestFormat(t *testing.T) {
	tests := []struct {
		name, got, want string
	}{
		{"count small", count(999), "999"},
		{"count thousands", count(1234567), "1,234,567"},
		{"count exact", count(1000), "1,000"},
		{"count negative", count(-12345), "-12,345"},
		{"bytes", bytesIEC(512), "512 B"},
		{"KiB", bytesIEC(1536), "1.5 KiB"},
		{"MiB", bytesIEC(4_718_592), "4.5 MiB"},
		{"rate small", rate(2.25), "2.2"},
		{"rate hundreds", rate(148.3), "148"},
		{"rate k", rate(12_345), "12.3k"},
		{"rate M", rate(2.5e6), "2.5M"},
		{"rate unknown", rate(-1), "-"},
		{"elapsed ms", elapsed(1234567 * time.Microsecond), "1.235s"},
		{"elapsed min", elapsed(83456 * time.Millisecond), "1m23s"},
		{"stamp", stamp(t0), "16:49:25.123"},
		{"stamp zero", stamp(time.Time{}), "-"},
		{"list empty", list(nil, 2), "-"},
		{"list fits", list([]string{"a", "b"}, 2), "a, b"},
		{"list more", list([]string{"a", "b", "c", "d"}, 2), "a, b +2"},
		{"fit pad", fit("ab", 4, false), "ab  "},
		{"fit right", fit("ab", 4, true), "  ab"},
		{"fit cut", fit("abcdef", 4, false), "abc…"},
		{"fit wide rune", fit("日本語", 4, false), "日… "},
		{"cycle start", cycle("", []string{"a", "b"}), "a"},
		{"cycle next", cycle("a", []string{"a", "b"}), "b"},
		{"cycle wraps", cycle("b", []string{"a", "b"}), ""},
		{"cycle vanished", cycle("x", []string{"a", "b"}), "a"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}

func TestSparkline(t *testing.T) {
	tests := []struct {
		name    string
		samples []float64
		width   int
		want    string
	}{
		{"empty", nil, 10, ""},
		{"zeros", []float64{0, 0}, 10, "▁▁"},
		{"ramp", []float64{1, 2, 4, 8}, 10, "▁▂▄█"},
		{"keeps newest", []float64{8, 1, 8}, 2, "▁█"},
		{"no width", []float64{1}, 0, ""},
	}
	for _, tt := range tests {
		if got := sparkline(tt.samples, tt.width); got != tt.want {
			t.Errorf("%s: sparkline = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestTableLayout(t *testing.T) {
	st := DefaultStyles()
	cols := []column{
		{title: "A", min: 10, prio: 0},
		{title: "B", min: 10, prio: 2},
		{title: "C", min: 10, prio: 1},
	}
	rows := rowSlice{{key: "1", cells: []string{"a", "b", "c"}, tint: -1}}
	tests := []struct {
		name   string
		width  int
		widths []int
	}{
		{"all fit", 40, []int{10, 10, 10}},
		{"lowest priority hidden", 30, []int{10, 0, 10}},
		{"only first", 14, []int{10, 0, 0}},
		{"nothing fits", 5, []int{0, 0, 0}},
	}
	for _, tt := range tests {
		tb := newTable(&st, cols)
		tb.setRows(rows)
		tb.setSize(tt.width, 5)
		for i := range cols {
			if tb.widths[i] != tt.widths[i] {
				t.Errorf("%s: widths = %v, want %v", tt.name, tb.widths, tt.widths)
				break
			}
		}
		for _, l := range strings.Split(ansi.Strip(tb.view([]string{"A", "B", "C"}, "none")), "\n") {
			if w := ansi.StringWidth(l); w > max(tt.width, 2) {
				t.Errorf("%s: line %q is %d wide", tt.name, l, w)
			}
		}
	}
}

func TestTableScroll(t *testing.T) {
	st := DefaultStyles()
	rows := make(rowSlice, 100)
	for i := range rows {
		rows[i] = row{key: count(i), cells: []string{count(i)}, tint: -1}
	}
	tb := newTable(&st, []column{{title: "N", min: 5}})
	tb.setRows(rows)
	tb.setSize(20, 11) // 10 visible rows
	tests := []struct {
		name               string
		do                 func()
		cursor, wantOffset int
	}{
		{"down stays", func() { tb.move(5) }, 5, 0},
		{"down scrolls", func() { tb.move(10) }, 15, 6},
		{"bottom", tb.bottom, 99, 90},
		{"past bottom clamps", func() { tb.move(5) }, 99, 90},
		{"up scrolls", func() { tb.move(-20) }, 79, 79},
		{"top", tb.top, 0, 0},
		{"past top clamps", func() { tb.move(-3) }, 0, 0},
	}
	for _, tt := range tests {
		tt.do()
		if tb.cursor != tt.cursor || tb.offset != tt.wantOffset {
			t.Errorf("%s: cursor %d offset %d, want %d %d", tt.name, tb.cursor, tb.offset, tt.cursor, tt.wantOffset)
		}
	}
	// Selection follows the key when rows are reordered.
	tb.move(42)
	rev := make(rowSlice, len(rows))
	for i := range rows {
		rev[len(rows)-1-i] = rows[i]
	}
	tb.setRows(rev)
	if r, _ := tb.selected(); r.key != "42" || tb.cursor != 57 {
		t.Errorf("after reorder: selected %q at %d, want \"42\" at 57", r.key, tb.cursor)
	}
}

func TestInput(t *testing.T) {
	tests := []struct {
		name string
		msgs []tea.Msg
		want string
	}{
		{"types", []tea.Msg{keyMsg("a"), keyMsg("B")}, "aB"},
		{"backspace", []tea.Msg{keyMsg("a"), keyMsg("b"), keyMsg("backspace")}, "a"},
		{"backspace empty", []tea.Msg{keyMsg("backspace")}, ""},
		{"ctrl+u clears", []tea.Msg{keyMsg("a"), tea.KeyPressMsg{Code: 'u', Mod: tea.ModCtrl}}, ""},
		{"ctrl+w word", []tea.Msg{tea.PasteMsg{Content: "foo bar"}, tea.KeyPressMsg{Code: 'w', Mod: tea.ModCtrl}}, "foo "},
		{"space", []tea.Msg{keyMsg("a"), keyMsg("space"), keyMsg("b")}, "a b"},
		{"paste drops controls", []tea.Msg{tea.PasteMsg{Content: "a\x1b[31mb\n"}}, "a[31mb"},
		{"alt is no text", []tea.Msg{tea.KeyPressMsg{Code: 'x', Text: "x", Mod: tea.ModAlt}}, ""},
		{"bounded", []tea.Msg{tea.PasteMsg{Content: strings.Repeat("x", 1000)}}, strings.Repeat("x", maxInput)},
	}
	for _, tt := range tests {
		var in input
		for _, m := range tt.msgs {
			in.Update(m)
		}
		if in.Value() != tt.want {
			t.Errorf("%s: value %q, want %q", tt.name, in.Value(), tt.want)
		}
	}
}
