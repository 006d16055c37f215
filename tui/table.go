package tui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// column describes one table column. Columns are shown by priority (lower
// first) as long as their minimum widths fit; the rest are hidden, so the
// table stays readable at 80 columns and shows everything when wide.
type column struct {
	title string
	min   int  // narrowest useful width
	max   int  // widest worth giving (0: no limit)
	prio  int  // lower = kept longer when narrow
	right bool // right-aligned (numbers)
	// num: the column sorts by number (most first by default), which
	// a right-aligned column need not (MEMBER IDS lists IDs, sorts by count).
	num bool
}

// row is one table line. key identifies it across updates so the
// selection follows the row, not the index, when rows are re-sorted.
type row struct {
	key   string
	cells []string
	tint  int             // index of the cell drawn in style, -1 for none
	style *lipgloss.Style // a pointer: rows are many, styles are large
}

// rowSource supplies rows on demand, so a table of 100,000 findings
// formats only the rows on screen.
type rowSource interface {
	Len() int
	Key(i int) string
	Row(i int) row
}

// contentWidths is implemented by sources that can measure their columns
// without formatting every row.
type contentWidths interface {
	widths(cols int) []int
}

// rowSlice is a rowSource of ready rows. Tables size their columns from
// the content: measured here, or by the source (contentWidths), or else
// the columns' max width.
type rowSlice []row

func (s rowSlice) Len() int         { return len(s) }
func (s rowSlice) Key(i int) string { return s[i].key }
func (s rowSlice) Row(i int) row    { return s[i] }

func (s rowSlice) widths(cols int) []int {
	w := make([]int, cols)
	for _, r := range s {
		for i := range min(cols, len(r.cells)) {
			w[i] = max(w[i], width(r.cells[i]))
		}
	}
	return w
}

// table is a scrolling, selectable table that renders only visible rows.
// Unlike bubbles/table it marks the cursor with a glyph (readable without
// colour) and sizes columns from their content.
type table struct {
	styles *Styles
	cols   []column
	rows   rowSource
	widths []int // per column; 0 = hidden

	cursor, offset int
	width, height  int // height includes the header line
	// xoff is the horizontal scroll in cells. Scrolled, the table lays
	// every column out at its full content width and shows a window of it:
	// nothing is hidden or cut for want of room.
	xoff int
}

// tintRow as a row's tint draws the whole row in its style.
const tintRow = -2

// scrollStep is how far one horizontal scroll key moves, in cells.
const scrollStep = 8

const marker = "▸ "

func newTable(st *Styles, cols []column) *table {
	return &table{styles: st, cols: cols, rows: rowSlice(nil)}
}

func (t *table) setSize(w, h int) {
	t.width, t.height = max(w, 0), max(h, 0)
	t.layout()
	t.clamp()
}

// setRows replaces the rows, keeping the cursor on the same key when the
// row is still there.
func (t *table) setRows(rows rowSource) {
	var selKey string
	if t.cursor >= 0 && t.cursor < t.rows.Len() {
		selKey = t.rows.Key(t.cursor)
	}
	t.rows = rows
	if selKey != "" {
		for i := range rows.Len() {
			if rows.Key(i) == selKey {
				t.cursor = i
				break
			}
		}
	}
	t.layout()
	t.clamp()
}

func (t *table) selected() (row, bool) {
	if t.cursor < 0 || t.cursor >= t.rows.Len() {
		return row{}, false
	}
	return t.rows.Row(t.cursor), true
}

func (t *table) visible() int { return max(t.height-1, 0) }

func (t *table) move(n int) {
	t.cursor += n
	t.clamp()
}

// navigate moves the cursor for the list keys every pane shares and
// reports whether msg was one of them.
func (t *table) navigate(msg tea.KeyPressMsg, k *KeyMap) bool {
	switch {
	case key.Matches(msg, k.Up):
		t.move(-1)
	case key.Matches(msg, k.Down):
		t.move(1)
	case key.Matches(msg, k.PageUp):
		t.move(-max(t.visible(), 1))
	case key.Matches(msg, k.PageDown):
		t.move(max(t.visible(), 1))
	case key.Matches(msg, k.Top):
		t.top()
	case key.Matches(msg, k.Bottom):
		t.bottom()
	case key.Matches(msg, k.Left):
		t.scroll(-scrollStep)
	case key.Matches(msg, k.Right):
		t.scroll(scrollStep)
	default:
		return false
	}
	return true
}

// scroll moves the window over the columns by n cells, no further than
// the widest line allows.
func (t *table) scroll(n int) {
	t.xoff = max(t.xoff+n, 0)
	t.layout()
	t.xoff = min(t.xoff, max(t.lineWidth()-(t.width-ansi.StringWidth(marker)), 0))
	t.layout()
}

// lineWidth is the width of a laid-out line.
func (t *table) lineWidth() int {
	w := 0
	for _, cw := range t.widths {
		if cw > 0 {
			w += cw + 1
		}
	}
	return max(w-1, 0)
}

func (t *table) top()    { t.cursor = 0; t.clamp() }
func (t *table) bottom() { t.cursor = t.rows.Len() - 1; t.clamp() }

func (t *table) clamp() {
	n := t.rows.Len()
	t.cursor = min(max(t.cursor, 0), max(n-1, 0))
	vis := t.visible()
	if vis == 0 {
		t.offset = t.cursor
		return
	}
	if t.cursor < t.offset {
		t.offset = t.cursor
	}
	if t.cursor >= t.offset+vis {
		t.offset = t.cursor - vis + 1
	}
	// Do not leave blank lines at the bottom when rows could fill them.
	t.offset = max(min(t.offset, n-vis), 0)
}

// layout picks which columns show and how wide they are.
func (t *table) layout() {
	t.widths = make([]int, len(t.cols))
	avail := t.width - ansi.StringWidth(marker)
	natural := make([]int, len(t.cols))
	var content []int
	if cw, ok := t.rows.(contentWidths); ok {
		content = cw.widths(len(t.cols))
	}
	for i, c := range t.cols {
		natural[i] = ansi.StringWidth(c.title)
		switch {
		case i < len(content):
			natural[i] = max(natural[i], content[i])
		case c.max > 0:
			natural[i] = c.max
		}
		if c.max > 0 && t.xoff == 0 {
			natural[i] = min(natural[i], c.max)
		}
		natural[i] = max(natural[i], c.min)
	}
	if t.xoff > 0 {
		copy(t.widths, natural)
		return
	}
	order := make([]int, len(t.cols))
	for i := range order {
		order[i] = i
	}
	// Stable insertion sort by priority: a handful of columns.
	for i := 1; i < len(order); i++ {
		for j := i; j > 0 && t.cols[order[j]].prio < t.cols[order[j-1]].prio; j-- {
			order[j], order[j-1] = order[j-1], order[j]
		}
	}
	used := 0
	for _, i := range order {
		need := t.cols[i].min
		if used > 0 {
			need++ // separator
		}
		if used+need > avail {
			continue
		}
		t.widths[i] = t.cols[i].min
		used += need
	}
	// Grow shown columns toward their natural width, by priority.
	for _, i := range order {
		if t.widths[i] == 0 || used >= avail {
			continue
		}
		grow := min(natural[i]-t.widths[i], avail-used)
		if grow > 0 {
			t.widths[i] += grow
			used += grow
		}
	}
}

// view renders the header and the visible rows; empty says what to show
// when there are no rows.
func (t *table) view(titles []string, empty string) string {
	var b strings.Builder
	pad := strings.Repeat(" ", ansi.StringWidth(marker))
	b.WriteString(t.styles.Header.Render(pad + t.window(t.line(titles))))
	if t.rows.Len() == 0 {
		if t.height > 1 {
			b.WriteString("\n" + t.styles.Dim.Render(pad+empty))
		}
		return b.String()
	}
	end := min(t.offset+t.visible(), t.rows.Len())
	for i := t.offset; i < end; i++ {
		r := t.rows.Row(i)
		b.WriteByte('\n')
		if i == t.cursor {
			b.WriteString(marker + t.styles.Selected.Render(t.window(t.line(r.cells))))
			continue
		}
		b.WriteString(pad + t.window(t.lineTinted(r)))
	}
	return b.String()
}

// window cuts a line to the horizontally scrolled view.
func (t *table) window(line string) string {
	if t.xoff == 0 {
		return line
	}
	return ansi.Cut(line, t.xoff, t.xoff+t.width-ansi.StringWidth(marker))
}

// line lays out cells into the column widths, unstyled.
func (t *table) line(cells []string) string {
	parts := make([]string, 0, len(t.cols))
	for i, w := range t.widths {
		if w == 0 {
			continue
		}
		var c string
		if i < len(cells) {
			c = cells[i]
		}
		parts = append(parts, fit(c, w, t.cols[i].right))
	}
	return strings.Join(parts, " ")
}

func (t *table) lineTinted(r row) string {
	if r.style != nil && r.tint == tintRow {
		return r.style.Render(t.line(r.cells))
	}
	if r.style == nil || r.tint < 0 || r.tint >= len(t.widths) || t.widths[r.tint] == 0 {
		return t.line(r.cells)
	}
	parts := make([]string, 0, len(t.cols))
	for i, w := range t.widths {
		if w == 0 {
			continue
		}
		var c string
		if i < len(r.cells) {
			c = r.cells[i]
		}
		c = fit(c, w, t.cols[i].right)
		if i == r.tint {
			c = r.style.Render(c)
		}
		parts = append(parts, c)
	}
	return strings.Join(parts, " ")
}

// width is ansi.StringWidth with a fast path for plain ASCII, which is
// nearly every cell: layout measures every cell of every row.
func width(s string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return ansi.StringWidth(s)
		}
	}
	return len(s)
}

// fit truncates or pads s to exactly w cells.
func fit(s string, w int, right bool) string {
	s = ansi.Truncate(s, w, "…")
	gap := w - ansi.StringWidth(s)
	if gap <= 0 {
		return s
	}
	if right {
		return strings.Repeat(" ", gap) + s
	}
	return s + strings.Repeat(" ", gap)
}
