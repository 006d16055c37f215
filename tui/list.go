package tui

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// listState is what the sortable, filterable table panes (instances,
// groups, brokers) share: the table, its sort and filter, and whether a
// row's detail screen is open.
type listState struct {
	c             *common
	width, height int
	tbl           *table
	cols          []column
	sortCol       int
	desc          bool
	filter        input
	filtering     bool

	open    bool
	openKey string
	det     detail
}

func newListState(c *common, cols []column, sortCol int, noun string) listState {
	return listState{
		c: c, tbl: newTable(c.styles, cols), cols: cols,
		sortCol: sortCol, desc: cols[sortCol].num,
		filter: input{prompt: "/", placeholder: "filter " + noun},
		det:    newDetail(c),
	}
}

func (l *listState) resize(w, h int) {
	l.width, l.height = w, h
	l.tbl.setSize(w, h)
	l.det.setSize(w, h)
}

func (l *listState) Capturing() bool { return l.filtering }

// editFilter handles a key or paste while the filter has focus and
// reports whether its text changed (the caller re-filters).
func (l *listState) editFilter(msg tea.Msg) bool {
	var changed bool
	if km, ok := msg.(tea.KeyPressMsg); ok {
		changed = l.filter.edit(km, l.c.keys)
	} else {
		changed = l.filter.Update(msg)
	}
	l.filtering = l.filter.focused
	return changed
}

// listKey handles the keys every list shares (movement, sort, filter);
// rebuild says the rows must be sorted or filtered again.
func (l *listState) listKey(msg tea.KeyPressMsg) (handled, rebuild bool) {
	k := l.c.keys
	if l.tbl.navigate(msg, k) {
		return true, false
	}
	switch {
	case key.Matches(msg, k.Sort):
		l.sortCol = (l.sortCol + 1) % len(l.cols)
		l.desc = l.cols[l.sortCol].num
	case key.Matches(msg, k.SortReverse):
		l.desc = !l.desc
	case key.Matches(msg, k.Search):
		l.filtering = true
		l.filter.Focus()
		return true, false
	case key.Matches(msg, k.Clear):
		l.filter.SetValue("")
	default:
		return false, false
	}
	return true, true
}

// titles are the column titles, the sorted one with its arrow.
func (l *listState) titles() []string {
	titles := make([]string, len(l.cols))
	for i, c := range l.cols {
		titles[i] = c.title
	}
	titles[l.sortCol] += " " + l.arrow()
	return titles
}

func (l *listState) arrow() string {
	if l.desc {
		return "▼"
	}
	return "▲"
}

// listStatus counts the rows shown and says the sort and filter.
func (l *listState) listStatus(shown, total int, noun string) string {
	s := fmt.Sprintf("%d/%d %s · sort: %s %s", shown, total, noun, strings.ToLower(l.cols[l.sortCol].title), l.arrow())
	if v := l.filter.Value(); v != "" {
		s += " · filter: " + v
	}
	return s
}

// sortRows sorts rows stably by the list's sort column: by number (number
// gives a row's) in a numeric column, by text otherwise, reversed when
// descending, and rows that tie by key.
func sortRows[R any](l *listState, rows []R, key func(R) string, number func(R) int, text func(R) string) {
	numeric, desc := l.cols[l.sortCol].num, l.desc
	slices.SortStableFunc(rows, func(a, b R) int {
		var c int
		if numeric {
			c = cmp.Compare(number(a), number(b))
		} else {
			c = strings.Compare(text(a), text(b))
		}
		if desc {
			c = -c
		}
		if c == 0 {
			c = strings.Compare(key(a), key(b))
		}
		return c
	})
}

// view is the pane: the open row's detail, or the table, with empty saying
// what an empty one lacks and filtered what a filter that hides every row
// says.
func (l *listState) view(empty, filtered string) string {
	if l.open {
		return l.det.view()
	}
	if l.filter.Value() != "" {
		empty = filtered
	}
	return l.tbl.view(l.titles(), empty)
}

// status is the pane's status line: the filter being typed, the open row
// (named name) and its scroll, or the rows' counts, sort and filter.
func (l *listState) status(name string, shown, total int, noun string) string {
	switch {
	case l.filtering:
		return l.filter.View()
	case l.open:
		return l.detailStatus(name)
	}
	return l.listStatus(shown, total, noun)
}

// detailStatus names the open row and where the detail is scrolled.
func (l *listState) detailStatus(name string) string {
	if sc := l.det.scroll(); sc != "" {
		name += " · " + sc
	}
	return name
}

// help returns the short and full help of the list, of its detail screen
// (with the detail's own keys) or of the filter.
func (l *listState) help(detailKeys ...key.Binding) helpKeys {
	k := l.c.keys
	switch {
	case l.filtering:
		return helpKeys{short: []key.Binding{k.SearchAccept, k.SearchCancel}, full: [][]key.Binding{{k.SearchAccept, k.SearchCancel}}}
	case l.open:
		own := append(detailKeys, k.Back)
		return helpKeys{short: append(append([]key.Binding{k.Up, k.Down}, own...), k.globalKeys()...),
			full: [][]key.Binding{k.scrollKeys(), own, k.globalColumn()}}
	}
	return helpKeys{short: append([]key.Binding{k.Open, k.Sort, k.Search}, k.globalKeys()...),
		full: [][]key.Binding{k.navKeys(), {k.Open, k.Sort, k.SortReverse, k.Search, k.Clear}, k.globalColumn()}}
}
