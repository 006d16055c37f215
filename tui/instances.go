package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/kwatch/kwatch/audit"
)

// Instance table columns, in display order.
const (
	icInstance = iota
	icClientIDs
	icSoftware
	icHosts
	icBrokers
	icConns
	icMembers
	icTelemetry
	icFindings
)

var instanceColumns = []column{
	icInstance:  {title: "INSTANCE", min: 22, max: 22, prio: 0},
	icClientIDs: {title: "CLIENT IDS", min: 10, max: 24, prio: 1},
	icSoftware:  {title: "SOFTWARE", min: 10, max: 28, prio: 3},
	icHosts:     {title: "HOSTS", min: 9, max: 32, prio: 4},
	icBrokers:   {title: "BROKERS", min: 9, max: 32, prio: 7},
	icConns:     {title: "CONNS", min: 7, prio: 2, right: true, num: true},
	icMembers:   {title: "MEMBER IDS", min: 10, max: 26, prio: 6, num: true},
	icTelemetry: {title: "TELEMETRY ID", min: 12, max: 22, prio: 8},
	icFindings:  {title: "FINDINGS", min: 10, prio: 1, right: true, num: true},
}

// showFindingsMsg asks the root to open the findings pane filtered to one
// instance.
type showFindingsMsg struct{ key string }

// instances is the client instance table and its detail screen.
type instances struct {
	listState
	data     *Data
	rows     []*InstanceRow // filtered and sorted, parallel to tbl.rows
	timeline fetched        // of the open instance
}

func newInstances(c *common) *instances {
	return &instances{listState: newListState(c, instanceColumns, icFindings, "instances")}
}

func (p *instances) SetSize(w, h int) {
	p.resize(w, h)
	p.refreshDetail()
}

func (p *instances) SetData(d *Data) {
	p.data = d
	p.rebuild()
}

// rebuild filters, sorts and re-renders the rows from the current data.
func (p *instances) rebuild() {
	if p.data == nil {
		return
	}
	q := strings.ToLower(strings.TrimSpace(p.filter.Value()))
	p.rows = p.rows[:0]
	for i := range p.data.Instances {
		r := &p.data.Instances[i]
		if q == "" || strings.Contains(strings.ToLower(instanceSearchText(r)), q) {
			p.rows = append(p.rows, r)
		}
	}
	col := p.sortCol
	cells := make(map[*InstanceRow][]string, len(p.rows))
	for _, r := range p.rows {
		cells[r] = instanceCells(r)
	}
	sortRows(&p.listState, p.rows, func(r *InstanceRow) string { return r.Key },
		func(r *InstanceRow) int { return instanceNumber(r, col) }, func(r *InstanceRow) string { return cells[r][col] })
	rows := make(rowSlice, len(p.rows))
	for i, r := range p.rows {
		rows[i] = row{key: r.Key, cells: cells[r], tint: -1}
	}
	p.tbl.setRows(rows)
	p.refreshDetail()
}

func instanceCells(r *InstanceRow) []string {
	members := make([]string, 0, memberCount(r.MemberIDs))
	for _, g := range sortedKeys(r.MemberIDs) {
		members = append(members, r.MemberIDs[g]...)
	}
	return []string{
		icInstance:  instanceLabel(r),
		icClientIDs: list(r.ClientIDs, 2),
		icSoftware:  orDash(r.Software),
		icHosts:     list(r.Hosts, 2),
		icBrokers:   list(r.Brokers, 1),
		icConns:     count(r.Connections),
		icMembers:   list(members, 1),
		icTelemetry: orDash(r.TelemetryID),
		icFindings:  count(sumValues(r.Findings)),
	}
}

// instanceLabel names an instance in one short string.
func instanceLabel(r *InstanceRow) string {
	if r.InstanceID != "" {
		return r.InstanceID
	}
	if len(r.Hosts) > 0 {
		return "(no ID) " + r.Hosts[0]
	}
	return "(no ID)"
}

func instanceNumber(r *InstanceRow, col int) int {
	switch col {
	case icConns:
		return r.Connections
	case icMembers:
		return memberCount(r.MemberIDs)
	case icFindings:
		return sumValues(r.Findings)
	}
	return 0
}

// instanceSearchText is everything the filter matches against.
func instanceSearchText(r *InstanceRow) string {
	var b strings.Builder
	b.WriteString(r.Key + " " + r.InstanceID + " " + r.Software + " " + r.TelemetryID)
	for _, s := range [][]string{r.ClientIDs, r.Hosts, r.Brokers} {
		b.WriteString(" " + strings.Join(s, " "))
	}
	for g, ids := range r.MemberIDs {
		b.WriteString(" " + g + " " + strings.Join(ids, " "))
	}
	for rule := range r.Findings {
		b.WriteString(" " + rule)
	}
	return b.String()
}

func (p *instances) Update(msg tea.Msg) tea.Cmd {
	if take[*instances](&p.timeline, p.open, p.openKey, msg, p.refreshDetail) {
		return nil
	}
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		switch {
		case p.filtering:
		case p.open:
			return p.updateDetail(msg)
		default:
			return p.updateList(msg)
		}
	}
	if p.filtering && p.editFilter(msg) {
		p.rebuild()
	}
	return nil
}

func (p *instances) updateList(msg tea.KeyPressMsg) tea.Cmd {
	if handled, rebuild := p.listKey(msg); handled {
		if rebuild {
			p.rebuild()
		}
		return nil
	}
	if key.Matches(msg, p.c.keys.Open) {
		return p.openSelected()
	}
	return nil
}

func (p *instances) updateDetail(msg tea.KeyPressMsg) tea.Cmd {
	k := p.c.keys
	switch {
	case key.Matches(msg, k.Back):
		p.open = false
		return nil
	case key.Matches(msg, k.ShowFinds):
		instKey := p.openKey
		return func() tea.Msg { return showFindingsMsg{key: instKey} }
	}
	return p.det.update(msg)
}

func (p *instances) openSelected() tea.Cmd {
	r, ok := p.tbl.selected()
	if !ok {
		return nil
	}
	p.open, p.openKey = true, r.key
	p.timeline = fetched{}
	p.det.vp.GotoTop()
	p.refreshDetail()
	if p.c.detailer == nil {
		return nil
	}
	det, instKey := p.c.detailer, r.key
	return fetchCmd[*instances](instKey, func() Excerpt { return det.Timeline(instKey) })
}

// current returns the open instance in the latest data.
func (p *instances) current() *InstanceRow {
	if p.data == nil {
		return nil
	}
	for i := range p.data.Instances {
		if p.data.Instances[i].Key == p.openKey {
			return &p.data.Instances[i]
		}
	}
	return nil
}

func (p *instances) refreshDetail() {
	if !p.open {
		return
	}
	r := p.current()
	if r == nil {
		p.det.setContent(p.c.styles.Dim.Render("instance " + p.openKey + " is no longer reported"))
		return
	}
	p.det.setContent(instanceDetail(p.c.styles, r, p.timeline.or(r.Timeline), p.width))
}

// instanceDetail renders one instance: identity, connections, timeline.
func instanceDetail(st *Styles, r *InstanceRow, timeline Excerpt, width int) string {
	d := &doc{st: st, width: width}
	d.title("Client instance " + instanceLabel(r))
	d.field("Instance ID", r.InstanceID)
	d.field("Client IDs", strings.Join(r.ClientIDs, ", "))
	d.field("Software", r.Software)
	d.field("Hosts", strings.Join(r.Hosts, ", "))
	d.field("Brokers", strings.Join(r.Brokers, ", "))
	d.field("Telemetry ID", r.TelemetryID)
	members := make([]string, 0, len(r.MemberIDs))
	for _, g := range sortedKeys(r.MemberIDs) {
		members = append(members, fmt.Sprintf("%s: %s", g, strings.Join(r.MemberIDs[g], ", ")))
	}
	d.fields("Member IDs", members, "")
	findings := make([]string, 0, len(r.Findings))
	for _, rule := range sortedKeys(r.Findings) {
		findings = append(findings, fmt.Sprintf("%s × %d", rule, r.Findings[rule]))
	}
	d.fields("Findings", findings, "none")

	d.title(fmt.Sprintf("Connections (%d)", r.Connections))
	if len(r.Conns) == 0 {
		d.line("  not listed by the feed", st.Dim)
	}
	for _, c := range r.Conns {
		line := fmt.Sprintf("  %s -> %s", c.Client, c.Broker)
		if c.StartFrame != 0 {
			line += fmt.Sprintf("  from frame %d", c.StartFrame)
		}
		if c.Note != "" {
			line += "  " + c.Note
		}
		d.line(line, st.Value)
	}
	if more := r.Connections - len(r.Conns); len(r.Conns) > 0 && more > 0 {
		d.line(fmt.Sprintf("  +%d more not listed by the report", more), st.Dim)
	}

	d.title(fmt.Sprintf("Identity timeline (%d)", len(timeline.Rows)+timeline.Omitted))
	timelineLines(d, timeline, 0, audit.SeverityInfo, true)
	return d.String()
}

func (p *instances) View() string {
	return p.view("no client instances yet", "no instance matches the filter")
}

func (p *instances) Status() string {
	total := 0
	if p.data != nil {
		total = len(p.data.Instances)
	}
	return p.status("instance "+p.openKey, len(p.rows), total, "instances")
}

func (p *instances) ShortHelp() []key.Binding  { return p.help(p.c.keys.ShowFinds).short }
func (p *instances) FullHelp() [][]key.Binding { return p.help(p.c.keys.ShowFinds).full }
