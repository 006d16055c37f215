package tui

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// rollupRow is one row of a rollup pane: its cells, the numbers its
// numeric columns sort by, a severity to colour it (nil: plain) and its
// detail screen.
type rollupRow struct {
	key    string
	cells  []string
	nums   map[int]int
	sev    *Severity
	detail func(st *Styles, width int) string
}

// rollupSpec is what makes a rollup pane of one kind (groups, brokers).
type rollupSpec struct {
	noun    string // "groups"
	cols    []column
	numeric func(col int) bool
	sortCol int
	build   func(d *Data) []rollupRow
	empty   string
}

// rollup is a pane that groups the snapshot by one thing (consumer group,
// broker): a sortable, filterable table, and a detail screen per row.
type rollup struct {
	c             *common
	spec          rollupSpec
	data          *Data
	width, height int

	tbl       *table
	all, rows []rollupRow
	sortCol   int
	desc      bool
	filter    input
	filtering bool

	open    bool
	openKey string
	det     detail
}

func newRollup(c *common, spec rollupSpec) *rollup {
	return &rollup{
		c: c, spec: spec, tbl: newTable(c.styles, spec.cols),
		sortCol: spec.sortCol, desc: spec.numeric(spec.sortCol),
		filter: input{prompt: "/", placeholder: "filter " + spec.noun},
		det:    newDetail(c),
	}
}

func (p *rollup) SetSize(w, h int) {
	p.width, p.height = w, h
	p.tbl.setSize(w, h)
	p.det.setSize(w, h)
	p.refreshDetail()
}

func (p *rollup) SetData(d *Data) {
	p.data = d
	p.all = p.spec.build(d)
	p.rebuild()
}

func (p *rollup) Capturing() bool { return p.filtering }

func (p *rollup) rebuild() {
	q := strings.ToLower(strings.TrimSpace(p.filter.Value()))
	p.rows = p.rows[:0]
	for _, r := range p.all {
		if q == "" || strings.Contains(strings.ToLower(strings.Join(r.cells, " ")), q) {
			p.rows = append(p.rows, r)
		}
	}
	col, desc, numeric := p.sortCol, p.desc, p.spec.numeric(p.sortCol)
	slices.SortStableFunc(p.rows, func(a, b rollupRow) int {
		var c int
		if numeric {
			c = cmp.Compare(a.nums[col], b.nums[col])
		} else {
			c = strings.Compare(a.cells[col], b.cells[col])
		}
		if desc {
			c = -c
		}
		if c == 0 {
			c = strings.Compare(a.key, b.key)
		}
		return c
	})
	rows := make(rowSlice, len(p.rows))
	for i, r := range p.rows {
		rows[i] = row{key: r.key, cells: r.cells, tint: -1}
		if r.sev != nil && *r.sev > SeverityInfo {
			rows[i].tint, rows[i].style = tintRow, p.c.styles.sevRef(*r.sev)
		}
	}
	p.tbl.setRows(rows)
	p.refreshDetail()
}

func (p *rollup) Update(msg tea.Msg) tea.Cmd {
	km, ok := msg.(tea.KeyPressMsg)
	switch {
	case !ok:
		if p.filtering && p.filter.Update(msg) {
			p.rebuild()
		}
		return nil
	case p.filtering:
		if p.filter.edit(km, p.c.keys) {
			p.rebuild()
		}
		p.filtering = p.filter.focused
		return nil
	case p.open:
		if key.Matches(km, p.c.keys.Back) {
			p.open = false
			return nil
		}
		return p.det.update(km)
	}
	return p.updateList(km)
}

func (p *rollup) updateList(msg tea.KeyPressMsg) tea.Cmd {
	k := p.c.keys
	if p.tbl.navigate(msg, k) {
		return nil
	}
	switch {
	case key.Matches(msg, k.Sort):
		p.sortCol = (p.sortCol + 1) % len(p.spec.cols)
		p.desc = p.spec.numeric(p.sortCol)
		p.rebuild()
	case key.Matches(msg, k.SortReverse):
		p.desc = !p.desc
		p.rebuild()
	case key.Matches(msg, k.Search):
		p.filtering = true
		p.filter.Focus()
	case key.Matches(msg, k.Clear):
		p.filter.SetValue("")
		p.rebuild()
	case key.Matches(msg, k.Open):
		if r, ok := p.tbl.selected(); ok {
			p.open, p.openKey = true, r.key
			p.det.vp.GotoTop()
			p.refreshDetail()
		}
	}
	return nil
}

func (p *rollup) refreshDetail() {
	if !p.open {
		return
	}
	for _, r := range p.all {
		if r.key == p.openKey {
			p.det.setContent(r.detail(p.c.styles, p.width))
			return
		}
	}
	p.det.setContent(p.c.styles.Dim.Render(p.openKey + " is no longer reported"))
}

func (p *rollup) View() string {
	if p.open {
		return p.det.view()
	}
	titles := make([]string, len(p.spec.cols))
	for i, c := range p.spec.cols {
		titles[i] = c.title
	}
	titles[p.sortCol] += map[bool]string{true: " ▼", false: " ▲"}[p.desc]
	empty := p.spec.empty
	if p.filter.Value() != "" {
		empty = "nothing matches the filter"
	}
	return p.tbl.view(titles, empty)
}

func (p *rollup) Status() string {
	if p.filtering {
		return p.filter.View()
	}
	if p.open {
		s := p.openKey
		if sc := p.det.scroll(); sc != "" {
			s += " · " + sc
		}
		return s
	}
	dir := map[bool]string{true: "▼", false: "▲"}[p.desc]
	s := fmt.Sprintf("%d/%d %s · sort: %s %s", len(p.rows), len(p.all), p.spec.noun, strings.ToLower(p.spec.cols[p.sortCol].title), dir)
	if v := p.filter.Value(); v != "" {
		s += " · filter: " + v
	}
	return s
}

func (p *rollup) ShortHelp() []key.Binding {
	k := p.c.keys
	switch {
	case p.filtering:
		return []key.Binding{k.SearchAccept, k.SearchCancel}
	case p.open:
		return append([]key.Binding{k.Up, k.Down, k.Back}, k.globalKeys()...)
	}
	return append([]key.Binding{k.Open, k.Sort, k.Search}, k.globalKeys()...)
}

func (p *rollup) FullHelp() [][]key.Binding {
	k := p.c.keys
	switch {
	case p.filtering:
		return [][]key.Binding{{k.SearchAccept, k.SearchCancel}}
	case p.open:
		return [][]key.Binding{k.scrollKeys(), {k.Back}, k.globalColumn()}
	}
	return [][]key.Binding{k.navKeys(), {k.Open, k.Sort, k.SortReverse, k.Search, k.Clear}, k.globalColumn()}
}
