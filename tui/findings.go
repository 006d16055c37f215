package tui

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/kwatch/kwatch/audit"
)

// Findings list columns, in display order.
const (
	fcTime = iota
	fcSev
	fcRule
	fcClient
	fcClientID
	fcAPI
	fcFrame
	fcMessage
)

var findingColumns = []column{
	fcTime:     {title: "TIME", min: 12, max: 12, prio: 3},
	fcSev:      {title: "SEV", min: 5, max: 5, prio: 0},
	fcRule:     {title: "RULE", min: 20, max: 34, prio: 0},
	fcClient:   {title: "CLIENT", min: 15, max: 21, prio: 2},
	fcClientID: {title: "CLIENT ID", min: 9, max: 20, prio: 4},
	fcAPI:      {title: "API", min: 8, max: 28, prio: 5},
	fcFrame:    {title: "FRAME", min: 6, prio: 1, right: true},
	fcMessage:  {title: "MESSAGE", min: 12, max: 90, prio: 6},
}

// exportedMsg reports an export of the shown findings.
type exportedMsg struct {
	path string
	n    int
	err  error
}

// findingKey identifies a finding across snapshots. Indices do not: a
// report sorts by frame, and findings made at the end of the input can
// sort before older ones.
func findingKey(f *FindingRow) string {
	return strconv.FormatUint(f.Frame, 10) + "/" + f.Rule + "/" + f.Client + "/" +
		strconv.FormatInt(int64(f.CorrelationID), 10) + "/" + f.Observed
}

// findings is the findings list, its filters and the finding detail.
type findings struct {
	c             *common
	data          *Data
	width, height int

	tbl       *table
	shown     []int          // indices into data.Findings, parallel to tbl.rows
	minSev    audit.Severity // the least severe finding shown
	sortCol   int            // a findings column, or -1: the feed's order
	desc      bool
	exported  string // what the last export did, for the status line
	rule      string
	inst      string
	search    input
	searching bool

	open    bool
	openKey string
	openRow FindingRow // a copy: findings never change once made
	det     detail
	around  fetched // the requests around the open finding
}

func newFindings(c *common) *findings {
	ti := input{prompt: "/", placeholder: "search findings"}
	return &findings{
		c:       c,
		tbl:     newTable(c.styles, findingColumns),
		sortCol: -1,
		minSev:  audit.SeverityInfo,
		search:  ti,
		det:     newDetail(c),
	}
}

func (p *findings) SetSize(w, h int) {
	p.width, p.height = w, h
	p.tbl.setSize(w, h)
	p.det.setSize(w, h)
	p.refreshDetail()
}

func (p *findings) SetData(d *Data) {
	p.data = d
	p.rebuild()
}

func (p *findings) Capturing() bool { return p.searching }

// setInstance filters the list to one instance (from the instance detail).
func (p *findings) setInstance(key string) {
	p.inst = key
	p.open = false
	p.rebuild()
	p.tbl.top()
}

func (p *findings) matches(f *FindingRow, q string) bool {
	if f.Severity < p.minSev {
		return false
	}
	if p.rule != "" && f.Rule != p.rule {
		return false
	}
	if p.inst != "" && f.InstanceKey != p.inst {
		return false
	}
	if q == "" {
		return true
	}
	hay := strings.ToLower(strings.Join([]string{f.Rule, f.Severity.String(), f.KIP, f.Client, f.Broker, f.API,
		f.ClientID, f.InstanceID, f.Expected, f.Observed, f.Message, f.Group, f.MemberID, strconv.FormatUint(f.Frame, 10)}, " "))
	return strings.Contains(hay, q)
}

func (p *findings) rebuild() {
	if p.data == nil {
		return
	}
	q := strings.ToLower(strings.TrimSpace(p.search.Value()))
	// A fresh slice: the table still holds the previous one until setRows.
	shown := make([]int, 0, len(p.data.Findings))
	for i := range p.data.Findings {
		if p.matches(&p.data.Findings[i], q) {
			shown = append(shown, i)
		}
	}
	if p.sortCol >= 0 {
		sortFindings(p.data.Findings, shown, p.sortCol, p.desc)
	}
	p.shown = shown
	p.tbl.setRows(findingRows{findings: p.data.Findings, shown: shown, styles: p.c.styles})
}

// sortFindings orders shown (indices into fs) by a column, then by the
// report's order; numbers and times by value, text by its spelling.
func sortFindings(fs []FindingRow, shown []int, col int, desc bool) {
	slices.SortStableFunc(shown, func(x, y int) int {
		a, b := &fs[x], &fs[y]
		var c int
		switch col {
		case fcTime:
			c = a.Time.Compare(b.Time)
		case fcSev:
			c = cmp.Compare(a.Severity, b.Severity)
		case fcFrame:
			c = cmp.Compare(a.Frame, b.Frame)
		default:
			c = strings.Compare(findingCell(a, col), findingCell(b, col))
		}
		if desc {
			c = -c
		}
		if c == 0 {
			c = cmp.Compare(x, y)
		}
		return c
	})
}

// findingCell is one cell of a finding's row, as sorted and shown.
func findingCell(f *FindingRow, col int) string {
	switch col {
	case fcRule:
		return f.Rule
	case fcClient:
		return f.Client
	case fcClientID:
		return f.ClientID
	case fcAPI:
		return f.API
	case fcMessage:
		return f.Message
	}
	return ""
}

// findingRows formats findings into table rows on demand. It holds the
// snapshot's slice, not the Data: the table asks the previous source for
// the selected key after the root has already stored the next snapshot.
type findingRows struct {
	findings []FindingRow
	shown    []int
	styles   *Styles
}

func (r findingRows) Len() int         { return len(r.shown) }
func (r findingRows) Key(i int) string { return findingKey(&r.findings[r.shown[i]]) }

// widths measures the columns from the fields, formatting nothing: the
// text fields are ASCII in practice and width() checks when they are not.
func (r findingRows) widths(cols int) []int {
	w := make([]int, cols)
	w[fcTime], w[fcSev] = len("15:04:05.000"), len("error")
	for _, i := range r.shown {
		f := &r.findings[i]
		w[fcRule] = max(w[fcRule], width(f.Rule))
		w[fcClient] = max(w[fcClient], width(f.Client))
		w[fcClientID] = max(w[fcClientID], width(f.ClientID))
		if f.API != "" {
			w[fcAPI] = max(w[fcAPI], width(f.API)+2+digits(uint64(max(f.APIVersion, 0)))) // " v12"
		}
		w[fcFrame] = max(w[fcFrame], digits(f.Frame))
		w[fcMessage] = max(w[fcMessage], width(f.Message))
	}
	return w
}

func digits(n uint64) int {
	d := 1
	for n >= 10 {
		n /= 10
		d++
	}
	return d
}

// Row colours a finding by severity: errors and warnings whole rows, so
// they stand out from a page of info; info only its severity cell.
func (r findingRows) Row(i int) row {
	f := &r.findings[r.shown[i]]
	tint := tintRow
	if f.Severity == audit.SeverityInfo {
		tint = fcSev
	}
	return row{key: r.Key(i), cells: findingCells(f), tint: tint, style: r.styles.sevRef(f.Severity)}
}

func findingCells(f *FindingRow) []string {
	api := f.API
	if api != "" {
		api = fmt.Sprintf("%s v%d", f.API, f.APIVersion)
	}
	return []string{
		fcTime:     stamp(f.Time),
		fcSev:      f.Severity.String(),
		fcRule:     f.Rule,
		fcClient:   orDash(f.Client),
		fcClientID: orDash(f.ClientID),
		fcAPI:      orDash(api),
		fcFrame:    strconv.FormatUint(f.Frame, 10),
		fcMessage:  f.Message,
	}
}

// rules lists the rules present in the data, for the rule filter.
func (p *findings) rules() []string {
	set := make(map[string]int)
	for r := range p.data.FindingsByRule {
		set[r] = 0
	}
	for i := range p.data.Findings {
		set[p.data.Findings[i].Rule] = 0
	}
	return sortedKeys(set)
}

// instanceKeys lists the instances that have findings, for the filter.
func (p *findings) instanceKeys() []string {
	set := make(map[string]int)
	for i := range p.data.Findings {
		if k := p.data.Findings[i].InstanceKey; k != "" {
			set[k] = 0
		}
	}
	return sortedKeys(set)
}

// cycle returns the value after cur in "" + values, wrapping to "".
func cycle(cur string, values []string) string {
	i := slices.Index(values, cur)
	if i+1 < len(values) {
		return values[i+1]
	}
	return ""
}

func (p *findings) Update(msg tea.Msg) tea.Cmd {
	if take[*findings](&p.around, p.open, p.openKey, msg, p.refreshDetail) {
		return nil
	}
	switch msg := msg.(type) {
	case exportedMsg:
		if msg.err != nil {
			p.exported = "export failed: " + msg.err.Error()
		} else {
			p.exported = fmt.Sprintf("exported %d findings to %s", msg.n, msg.path)
		}
		return nil
	case tea.KeyPressMsg:
		switch {
		case p.searching:
			return p.updateSearch(msg)
		case p.open:
			return p.updateDetail(msg)
		}
		return p.updateList(msg)
	}
	if p.searching && p.search.Update(msg) {
		p.rebuild()
	}
	return nil
}

func (p *findings) updateSearch(msg tea.KeyPressMsg) tea.Cmd {
	if p.search.edit(msg, p.c.keys) {
		p.rebuild()
	}
	p.searching = p.search.focused
	return nil
}

// updateDetail handles the finding detail: back, the next or previous
// finding of the list, scrolling.
func (p *findings) updateDetail(msg tea.KeyPressMsg) tea.Cmd {
	k := p.c.keys
	if key.Matches(msg, k.Back) {
		p.open = false
		return nil
	}
	if key.Matches(msg, k.NextFinding, k.PrevFinding) {
		n := 1
		if key.Matches(msg, k.PrevFinding) {
			n = -1
		}
		return p.step(n)
	}
	return p.det.update(msg)
}

// step opens the finding n rows away in the list, if there is one.
func (p *findings) step(n int) tea.Cmd {
	at := p.tbl.cursor + n
	if at < 0 || at >= len(p.shown) {
		return nil
	}
	p.tbl.move(n)
	return p.openSelected()
}

func (p *findings) updateList(msg tea.KeyPressMsg) tea.Cmd {
	k := p.c.keys
	if p.tbl.navigate(msg, k) {
		return nil
	}
	switch {
	case key.Matches(msg, k.Severity):
		// A minimum: all -> warn and worse -> error -> all.
		p.minSev = p.minSev%audit.SeverityError + 1 // info, warn, error, info
		p.rebuild()
	case key.Matches(msg, k.Sort):
		// The feed's order, then each column (times, severities and
		// frames most recent or largest first).
		p.sortCol++
		if p.sortCol == len(findingColumns) {
			p.sortCol = -1
		}
		p.desc = p.sortCol == fcSev || p.sortCol == fcTime || p.sortCol == fcFrame
		p.rebuild()
	case key.Matches(msg, k.SortReverse):
		if p.sortCol >= 0 {
			p.desc = !p.desc
			p.rebuild()
		}
	case key.Matches(msg, k.Export):
		return p.export()
	case key.Matches(msg, k.RuleFilter):
		if p.data != nil {
			p.rule = cycle(p.rule, p.rules())
			p.rebuild()
		}
	case key.Matches(msg, k.InstFilter):
		if p.data != nil {
			p.inst = cycle(p.inst, p.instanceKeys())
			p.rebuild()
		}
	case key.Matches(msg, k.Search):
		p.searching = true
		p.search.Focus()
		return nil
	case key.Matches(msg, k.Clear):
		p.minSev, p.rule, p.inst = audit.SeverityInfo, "", ""
		p.search.SetValue("")
		p.rebuild()
	case key.Matches(msg, k.Open):
		return p.openSelected()
	}
	return nil
}

func (p *findings) openSelected() tea.Cmd {
	if p.data == nil || p.tbl.cursor >= len(p.shown) {
		return nil
	}
	f := p.data.Findings[p.shown[p.tbl.cursor]]
	p.open, p.openKey, p.openRow = true, findingKey(&f), f
	p.around = fetched{}
	p.det.vp.GotoTop()
	p.refreshDetail()
	if p.c.detailer == nil || f.Around != nil {
		return nil
	}
	det := p.c.detailer
	return fetchCmd[*findings](p.openKey, func() Excerpt { return det.Around(f) })
}

func (p *findings) refreshDetail() {
	if !p.open {
		return
	}
	f := &p.openRow
	title, explanation := p.c.ruleText(f.Rule)
	p.det.setContent(findingDetail(p.c.styles, f, title, explanation, p.around.or(f.Around), p.width))
}

// findingDetail renders one finding with its rule's explanation and the
// requests around it.
func findingDetail(st *Styles, f *FindingRow, title, explanation string, around Excerpt, width int) string {
	d := &doc{st: st, width: width}
	head := f.Rule
	if title != "" {
		head += ": " + title
	}
	d.title(head)
	d.fieldStyled("Severity", f.Severity.String(), st.sev(f.Severity))
	d.field("KIP", f.KIP)
	d.field("Confidence", f.Confidence)
	d.field("Time", fullStamp(f.Time))
	d.field("Frame", strconv.FormatUint(f.Frame, 10))
	d.field("Connection", fmt.Sprintf("%s -> %s", orDash(f.Client), orDash(f.Broker)))
	api := "-"
	if f.API != "" {
		api = fmt.Sprintf("%s (key %d, v%d), correlation id %d", f.API, f.APIKey, f.APIVersion, f.CorrelationID)
	}
	d.field("Request", api)
	d.field("Client ID", f.ClientID)
	d.field("Instance ID", f.InstanceID)
	if f.Group != "" {
		d.field("Group", f.Group)
		d.field("Member ID", f.MemberID)
	}
	d.fieldStyled("Expected", f.Expected, st.Title)
	d.fieldStyled("Observed", f.Observed, st.Title)
	d.field("Message", f.Message)
	if explanation != "" {
		d.title("Why it matters")
		d.text(explanation, st.Value)
	}
	d.title(fmt.Sprintf("Requests around it on this connection (%d)", len(around.Rows)))
	timelineLines(d, around, f.Frame, f.Severity, false)
	return d.String()
}

func (p *findings) View() string {
	if p.open {
		return p.det.view()
	}
	titles := make([]string, len(findingColumns))
	for i, c := range findingColumns {
		titles[i] = c.title
	}
	empty := "no findings yet"
	if p.filtered() {
		empty = "no finding matches the filters (c clears them)"
	}
	return p.tbl.view(titles, empty)
}

func (p *findings) filtered() bool {
	return p.minSev != audit.SeverityInfo || p.rule != "" || p.inst != "" || p.search.Value() != ""
}

func (p *findings) Status() string {
	if p.searching {
		return p.search.View()
	}
	if p.open {
		s := fmt.Sprintf("finding %d/%d", p.tbl.cursor+1, len(p.shown))
		if sc := p.det.scroll(); sc != "" {
			s += " · " + sc
		}
		return s
	}
	total := 0
	if p.data != nil {
		total = len(p.data.Findings)
	}
	s := fmt.Sprintf("%d/%d · sev %s · rule %s · instance %s", len(p.shown), total, p.sevLabel(), orAll(p.rule), orAll(p.inst))
	if v := p.search.Value(); v != "" {
		s += " · /" + v
	}
	if p.sortCol >= 0 {
		dir := "▲"
		if p.desc {
			dir = "▼"
		}
		s += " · sort " + strings.ToLower(findingColumns[p.sortCol].title) + " " + dir
	}
	if p.data != nil && p.data.findingTotal() > total {
		s += fmt.Sprintf(" · %d more counted, not kept", p.data.findingTotal()-total)
	}
	if p.exported != "" {
		s += " · " + p.exported
	}
	return s
}

// sevLabel names the severity filter: "all", "warn+" or "error".
func (p *findings) sevLabel() string {
	switch p.minSev {
	case audit.SeverityInfo:
		return "all"
	case audit.SeverityError:
		return "error"
	}
	return p.minSev.String() + "+"
}

func orAll(s string) string {
	if s == "" {
		return "all"
	}
	return s
}

func (p *findings) ShortHelp() []key.Binding {
	k := p.c.keys
	switch {
	case p.searching:
		return []key.Binding{k.SearchAccept, k.SearchCancel}
	case p.open:
		return append([]key.Binding{k.NextFinding, k.PrevFinding, k.Back}, k.globalKeys()...)
	}
	return append([]key.Binding{k.Open, k.Severity, k.RuleFilter, k.Sort, k.Search}, k.globalKeys()...)
}

func (p *findings) FullHelp() [][]key.Binding {
	k := p.c.keys
	switch {
	case p.searching:
		return [][]key.Binding{{k.SearchAccept, k.SearchCancel}}
	case p.open:
		return [][]key.Binding{k.scrollKeys(), {k.NextFinding, k.PrevFinding, k.Back}, k.globalColumn()}
	}
	return [][]key.Binding{k.navKeys(), {k.Open, k.Severity, k.RuleFilter, k.InstFilter, k.Search, k.Clear},
		{k.Sort, k.SortReverse, k.Export}, k.globalColumn()}
}
