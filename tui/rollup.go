package tui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/kwatch/kwatch/audit"
)

// rollupRow is one row of a rollup pane: its cells, the numbers its
// numeric columns sort by, a severity to colour it (nil: plain) and its
// detail screen.
type rollupRow struct {
	key    string
	cells  []string
	nums   map[int]int
	sev    *audit.Severity
	detail func(st *Styles, width int) string
}

// rollupSpec is what makes a rollup pane of one kind (groups, brokers).
type rollupSpec struct {
	noun    string // "groups"
	cols    []column
	sortCol int
	build   func(d *Data) []rollupRow
	empty   string
}

// rollup is a pane that groups the snapshot by one thing (consumer group,
// broker): a sortable, filterable table, and a detail screen per row.
type rollup struct {
	listState
	spec      rollupSpec
	data      *Data
	all, rows []rollupRow
}

func newRollup(c *common, spec rollupSpec) *rollup {
	return &rollup{listState: newListState(c, spec.cols, spec.sortCol, spec.noun), spec: spec}
}

func (p *rollup) SetSize(w, h int) {
	p.resize(w, h)
	p.refreshDetail()
}

func (p *rollup) SetData(d *Data) {
	p.data = d
	p.all = p.spec.build(d)
	p.rebuild()
}

func (p *rollup) rebuild() {
	q := strings.ToLower(strings.TrimSpace(p.filter.Value()))
	p.rows = p.rows[:0]
	for _, r := range p.all {
		if q == "" || strings.Contains(strings.ToLower(strings.Join(r.cells, " ")), q) {
			p.rows = append(p.rows, r)
		}
	}
	col := p.sortCol
	sortRows(&p.listState, p.rows, func(r rollupRow) string { return r.key },
		func(r rollupRow) int { return r.nums[col] }, func(r rollupRow) string { return r.cells[col] })
	rows := make(rowSlice, len(p.rows))
	for i, r := range p.rows {
		rows[i] = row{key: r.key, cells: r.cells, tint: -1}
		if r.sev != nil && *r.sev > audit.SeverityInfo {
			rows[i].tint, rows[i].style = tintRow, p.c.styles.sevRef(*r.sev)
		}
	}
	p.tbl.setRows(rows)
	p.refreshDetail()
}

func (p *rollup) Update(msg tea.Msg) tea.Cmd {
	km, ok := msg.(tea.KeyPressMsg)
	switch {
	case p.filtering:
		if p.editFilter(msg) {
			p.rebuild()
		}
	case !ok:
	case p.open:
		if key.Matches(km, p.c.keys.Back) {
			p.open = false
			return nil
		}
		return p.det.update(km)
	default:
		p.updateList(km)
	}
	return nil
}

func (p *rollup) updateList(msg tea.KeyPressMsg) {
	if handled, rebuild := p.listKey(msg); handled {
		if rebuild {
			p.rebuild()
		}
		return
	}
	if r, ok := p.tbl.selected(); ok && key.Matches(msg, p.c.keys.Open) {
		p.open, p.openKey = true, r.key
		p.det.vp.GotoTop()
		p.refreshDetail()
	}
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

func (p *rollup) View() string { return p.view(p.spec.empty, "nothing matches the filter") }

func (p *rollup) Status() string {
	return p.status(p.openKey, len(p.rows), len(p.all), p.spec.noun)
}

func (p *rollup) ShortHelp() []key.Binding  { return p.help().short }
func (p *rollup) FullHelp() [][]key.Binding { return p.help().full }
