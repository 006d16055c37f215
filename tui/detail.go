package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/kwatch/kwatch/audit"
)

// detail is a scrolling text screen (an instance or a finding). Its
// content is rebuilt by the owner whenever the width or the data changes;
// the scroll position survives the rebuild.
type detail struct {
	c  *common
	vp viewport.Model
}

func newDetail(c *common) detail {
	vp := viewport.New()
	km := vp.KeyMap
	km.Up, km.Down = c.keys.Up, c.keys.Down
	km.PageUp, km.PageDown = c.keys.PageUp, c.keys.PageDown
	km.HalfPageUp = key.NewBinding(key.WithKeys("ctrl+u"))
	km.HalfPageDown = key.NewBinding(key.WithKeys("ctrl+d"))
	vp.KeyMap = km
	return detail{c: c, vp: vp}
}

func (d *detail) setSize(w, h int) {
	d.vp.SetWidth(max(w, 1))
	d.vp.SetHeight(max(h, 1))
}

func (d *detail) setContent(s string) {
	off := d.vp.YOffset()
	d.vp.SetContent(s)
	d.vp.SetYOffset(off)
}

func (d *detail) update(msg tea.KeyPressMsg) tea.Cmd {
	switch {
	case key.Matches(msg, d.c.keys.Top):
		d.vp.GotoTop()
		return nil
	case key.Matches(msg, d.c.keys.Bottom):
		d.vp.GotoBottom()
		return nil
	}
	var cmd tea.Cmd
	d.vp, cmd = d.vp.Update(msg)
	return cmd
}

func (d *detail) view() string { return d.vp.View() }

// scroll says where the viewport is, for the status line.
func (d *detail) scroll() string {
	total := d.vp.TotalLineCount()
	if total <= d.vp.Height() {
		return ""
	}
	return fmt.Sprintf("line %d/%d", d.vp.YOffset()+1, total)
}

// labelWidth is the width of the label column of detail screens.
const labelWidth = 13

// doc builds a detail screen's text at a given width.
type doc struct {
	st    *Styles
	width int
	b     strings.Builder
}

func (d *doc) title(s string) {
	if d.b.Len() > 0 {
		d.b.WriteByte('\n')
	}
	d.b.WriteString(d.st.Title.Render(ansi.Truncate(s, d.width, "…")) + "\n")
}

// field writes "label  value", wrapping the value under itself.
func (d *doc) field(label, value string) {
	d.fieldStyled(label, value, d.st.Value)
}

// fields writes values one a line, the first under label, or label and
// none when there are none.
func (d *doc) fields(label string, values []string, none string) {
	if len(values) == 0 {
		d.field(label, none)
	}
	for i, v := range values {
		if i > 0 {
			label = ""
		}
		d.field(label, v)
	}
}

func (d *doc) fieldStyled(label, value string, st lipgloss.Style) {
	valueWidth := max(d.width-labelWidth, 10)
	lines := strings.Split(wrap(orDash(value), valueWidth), "\n")
	for i, l := range lines {
		lab := ""
		if i == 0 {
			lab = label
		}
		d.b.WriteString(d.st.Label.Render(fit(lab, labelWidth-1, false)) + " " + st.Render(l) + "\n")
	}
}

// text writes s wrapped to the width. Texts such as the rule explanations
// come wrapped at ~100 columns: their lines are joined back into
// paragraphs first, so a narrow terminal does not wrap them twice.
func (d *doc) text(s string, st lipgloss.Style) {
	for _, para := range reflow(s) {
		d.b.WriteString(st.Render(wrap(para, d.width)) + "\n")
	}
}

// reflow joins the lines of each paragraph of s. Blank lines, indented
// lines (examples) and list items keep their own line.
func reflow(s string) []string {
	var out []string
	joinable := false
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		keep := l == "" || strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t") || listItem(l)
		if joinable && !keep {
			out[len(out)-1] += " " + l
			continue
		}
		out = append(out, l)
		joinable = l != "" && !strings.HasPrefix(l, " ") && !strings.HasPrefix(l, "\t")
	}
	return out
}

func listItem(l string) bool {
	if strings.HasPrefix(l, "- ") || strings.HasPrefix(l, "* ") || strings.HasPrefix(l, "• ") {
		return true
	}
	i := strings.IndexByte(l, '.')
	return i > 0 && i <= 3 && strings.Trim(l[:i], "0123456789") == "" && strings.HasPrefix(l[i:], ". ")
}

// line writes one line, cut to the width.
func (d *doc) line(s string, st lipgloss.Style) {
	d.b.WriteString(st.Render(ansi.Truncate(s, d.width, "…")) + "\n")
}

func (d *doc) String() string { return strings.TrimRight(d.b.String(), "\n") }

// wrap word-wraps s at w cells, breaking long words (IDs) when needed.
func wrap(s string, w int) string {
	if w <= 0 {
		return s
	}
	return ansi.Wrap(s, w, "")
}

// timelineLines renders requests one per line, saying where and how many
// were left out; mark highlights the frame of the request a finding is
// about (0 for none) in the finding's severity, reversed. Rows that broke
// a rule or carry an error code are drawn in the warning style.
func timelineLines(d *doc, ex Excerpt, mark uint64, markSev audit.Severity, showConn bool) {
	rows := ex.Rows
	if rows == nil {
		d.line("  not recorded by the feed", d.st.Dim)
		return
	}
	if len(rows) == 0 && ex.Omitted == 0 {
		d.line("  none", d.st.Dim)
		return
	}
	for i, r := range rows {
		if i == ex.Gap && ex.Omitted > 0 {
			d.line(omittedLine(ex, i), d.st.Dim)
		}
		prefix := "  "
		st := d.st.Value
		switch {
		case mark != 0 && r.Frame == mark:
			prefix = marker
			st = d.st.sev(markSev).Reverse(true)
		case len(r.Rules) > 0 || strings.Contains(r.Note, "error "):
			st = d.st.Sev[audit.SeverityWarn]
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%s%s #%-6d ", prefix, stamp(r.Time), r.Frame)
		if showConn {
			fmt.Fprintf(&b, "%s ", r.Client)
		}
		fmt.Fprintf(&b, "%s v%d h%d corr %d", orDash(r.API), r.APIVersion, r.Header, r.CorrelationID)
		if r.ClientID != "" {
			fmt.Fprintf(&b, " cid=%s", r.ClientID)
		}
		if r.InstanceID != "" {
			fmt.Fprintf(&b, " iid=%s", r.InstanceID)
		}
		if r.Note != "" {
			b.WriteString(" " + r.Note)
		}
		if len(r.Rules) > 0 {
			b.WriteString(" [" + strings.Join(r.Rules, ", ") + "]")
		}
		d.hanging(b.String(), st, 4)
	}
}

// hanging writes s wrapped to the width, its continuation lines indented
// by indent cells: a long request line (IDs, notes) is shown whole.
func (d *doc) hanging(s string, st lipgloss.Style, indent int) {
	lines := strings.Split(wrap(s, d.width), "\n")
	if len(lines) > 1 && d.width > indent+10 {
		first, rest := lines[0], strings.Join(lines[1:], " ")
		lines = append([]string{first}, strings.Split(wrap(rest, d.width-indent), "\n")...)
		for i := 1; i < len(lines); i++ {
			lines[i] = strings.Repeat(" ", indent) + lines[i]
		}
	}
	for _, l := range lines {
		d.b.WriteString(st.Render(l) + "\n")
	}
}

// omittedLine says how many requests an excerpt left out at row i.
func omittedLine(ex Excerpt, i int) string {
	if i == 0 {
		return fmt.Sprintf("  … %s earlier requests on this connection not shown", count(ex.Omitted))
	}
	return fmt.Sprintf("  … %s more not kept (the first %d and the latest %d are)", count(ex.Omitted), ex.Gap, len(ex.Rows)-ex.Gap)
}

// fetchedMsg carries the rows a Detailer fetched for the detail screen of
// the row key of pane P (the requests around a finding, an instance's
// timeline). P keeps one pane from taking another's: every pane hears
// every message.
type fetchedMsg[P any] struct {
	key  string
	rows Excerpt
}

// fetchCmd asks a Detailer for key's rows on a command goroutine.
func fetchCmd[P any](key string, fetch func() Excerpt) tea.Cmd {
	return func() tea.Msg { return fetchedMsg[P]{key: key, rows: fetch()} }
}

// fetched is what a Detailer returned for the open detail screen; until
// it answers, the screen shows the snapshot's rows.
type fetched struct {
	rows Excerpt
	have bool
}

// take keeps the rows of msg when it is pane P's answer for the row
// still open (openKey when open), refreshes the screen with them, and
// reports whether msg was P's answer, which needs nothing more.
func take[P any](f *fetched, open bool, openKey string, msg tea.Msg, refresh func()) bool {
	m, ok := msg.(fetchedMsg[P])
	if ok && open && m.key == openKey {
		f.rows, f.have = m.rows, true
		refresh()
	}
	return ok
}

// or returns the fetched rows, else the snapshot's.
func (f *fetched) or(snapshot []TimelineRow) Excerpt {
	if f.have {
		return f.rows
	}
	return Excerpt{Rows: snapshot}
}
