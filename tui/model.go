package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/rs/zerolog"
)

// DefaultInterval is how often the UI pulls a snapshot: ten times a second
// is as fast as a person reads and cheap for the producer.
const DefaultInterval = 100 * time.Millisecond

// Options configures the UI.
type Options struct {
	// Feed supplies snapshots. If it also implements Detailer, detail
	// screens ask it for timelines instead of reading them from Data.
	Feed Feed
	// Explain returns a rule's one-line title and long explanation, the
	// text `kwatch rules RULE` prints. Nil shows findings without it.
	Explain func(ruleID string) (title, explanation string)
	// ExportPath is the file e writes the shown findings to, as NDJSON;
	// DefaultExportPath when empty.
	ExportPath string
	// Interval between snapshots; DefaultInterval when zero.
	Interval time.Duration
	// Logger receives debug messages; the zero value is silent.
	Logger zerolog.Logger
	// Input and Output default to the terminal (stdin/stdout).
	Input  io.Reader
	Output io.Writer
}

// Pane indices, in tab order.
const (
	PaneOverview = iota
	PaneInstances
	PaneFindings
	PaneGroups
	PaneBrokers
	paneCount
)

var paneNames = [paneCount]string{"Overview", "Instances", "Findings", "Groups", "Brokers"}

// dataMsg carries a snapshot pulled from the feed.
type dataMsg struct{ data Data }

// Model is the root Bubble Tea model: a header with the pane tabs, the
// active pane, a status line and the help bar. Use it directly to embed
// kwatch's UI in another program; Run is the usual entry point.
type Model struct {
	opts     Options
	interval time.Duration
	styles   Styles
	keys     KeyMap
	c        common

	overview  *overview
	instances *instances
	findings  *findings
	panes     [paneCount]pane
	active    int

	help          help.Model
	width, height int

	data     Data
	haveData bool
}

// NewModel builds the UI model; it starts pulling from opts.Feed when the
// program runs Init.
func NewModel(opts Options) *Model {
	m := &Model{opts: opts, interval: opts.Interval, styles: DefaultStyles(), keys: DefaultKeyMap()}
	if m.interval <= 0 {
		m.interval = DefaultInterval
	}
	m.c = common{styles: &m.styles, keys: &m.keys, explain: opts.Explain, exportPath: opts.ExportPath}
	if d, ok := opts.Feed.(Detailer); ok {
		m.c.detailer = d
	}
	m.overview = newOverview(&m.c)
	m.instances = newInstances(&m.c)
	m.findings = newFindings(&m.c)
	m.panes = [paneCount]pane{m.overview, m.instances, m.findings, newRollup(&m.c, groupsSpec), newRollup(&m.c, brokersSpec)}
	m.help = help.New()
	m.help.Styles = m.styles.Help
	return m
}

// Init pulls the first snapshot at once.
func (m *Model) Init() tea.Cmd {
	if m.opts.Feed == nil {
		return nil
	}
	feed := m.opts.Feed
	return func() tea.Msg { return dataMsg{feed.Data()} }
}

// next re-arms the poll: one snapshot per interval, pulled in the command
// goroutine so Update never waits on the producer.
func (m *Model) next() tea.Cmd {
	feed := m.opts.Feed
	return tea.Tick(m.interval, func(time.Time) tea.Msg { return dataMsg{feed.Data()} })
}

// Active returns the index of the pane shown (PaneOverview...).
func (m *Model) Active() int { return m.active }

// Update handles one message; keys go to the active pane unless they are
// global, everything else is offered to every pane.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.resize()
		return m, nil
	case dataMsg:
		return m, m.setData(msg.data)
	case showFindingsMsg:
		m.findings.setInstance(msg.key)
		m.active = PaneFindings
		m.resize()
		return m, nil
	case tea.KeyPressMsg:
		return m, m.handleKey(msg)
	}
	var cmds []tea.Cmd
	for _, p := range m.panes {
		cmds = append(cmds, p.Update(msg))
	}
	return m, tea.Batch(cmds...)
}

func (m *Model) setData(d Data) tea.Cmd {
	if d.Done && !m.data.Done {
		m.opts.Logger.Debug().Uint64("packets", d.Packets).Int("findings", d.findingTotal()).Msg("tui: feed done")
	}
	m.data, m.haveData = d, true
	for _, p := range m.panes {
		p.SetData(&m.data)
	}
	if d.Done {
		return nil // nothing will change: stop polling
	}
	return m.next()
}

func (m *Model) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	p := m.panes[m.active]
	if p.Capturing() {
		if msg.String() == "ctrl+c" {
			return tea.Quit
		}
		return p.Update(msg)
	}
	k := &m.keys
	switch {
	case key.Matches(msg, k.Quit):
		return tea.Quit
	case key.Matches(msg, k.Help):
		m.help.ShowAll = !m.help.ShowAll
		m.resize()
	case key.Matches(msg, k.NextPane):
		m.switchTo((m.active + 1) % paneCount)
	case key.Matches(msg, k.PrevPane):
		m.switchTo((m.active + paneCount - 1) % paneCount)
	case key.Matches(msg, k.Overview):
		m.switchTo(PaneOverview)
	case key.Matches(msg, k.Clients):
		m.switchTo(PaneInstances)
	case key.Matches(msg, k.Findings):
		m.switchTo(PaneFindings)
	case key.Matches(msg, k.Groups):
		m.switchTo(PaneGroups)
	case key.Matches(msg, k.Brokers):
		m.switchTo(PaneBrokers)
	default:
		cmd := p.Update(msg)
		m.resize() // help may have changed height (detail opened, search)
		return cmd
	}
	return nil
}

func (m *Model) switchTo(i int) {
	m.active = i
	m.resize()
}

// helpView is the help bar of the active pane, fitted to the width.
func (m *Model) helpView() string {
	m.help.SetWidth(m.width)
	// help drops items that do not fit, but not when even its ellipsis
	// would not: cut every line as the last word on width.
	lines := strings.Split(m.help.View(m.panes[m.active]), "\n")
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, m.width, "")
	}
	return strings.Join(lines, "\n")
}

// resize gives the panes what the header, status and help leave.
func (m *Model) resize() {
	bodyH := m.height - 3 - strings.Count(m.helpView(), "\n") - 1
	for _, p := range m.panes {
		p.SetSize(m.width, max(bodyH, 1))
	}
}

// View renders header, pane, status line and help bar.
func (m *Model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	v.WindowTitle = "kwatch"
	return v
}

func (m *Model) render() string {
	if m.width <= 0 || m.height <= 0 {
		return ""
	}
	st := &m.styles
	helpView := m.helpView()
	bodyH := max(m.height-3-strings.Count(helpView, "\n")-1, 1)

	body := m.panes[m.active].View()
	lines := strings.Split(body, "\n")
	if len(lines) > bodyH {
		lines = lines[:bodyH]
	}
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, m.width, "")
	}
	for len(lines) < bodyH {
		lines = append(lines, "")
	}

	status := m.panes[m.active].Status()
	if m.data.Err != nil {
		status = st.Error.Render("error: "+m.data.Err.Error()) + " · " + status
	}
	out := []string{m.header(), ""}
	out = append(out, lines...)
	out = append(out, st.Status.Render(ansi.Truncate(status, m.width, "…")), helpView)
	return strings.Join(out, "\n")
}

// header shows the tabs, then the feed's state, elapsed time and source
// on the right, cut to fit.
func (m *Model) header() string {
	st := &m.styles
	left := m.tabs(false)
	if m.width-ansi.StringWidth(left) < minHeaderState {
		left = m.tabs(true) // narrow: the inactive tabs by number only
	}
	room := m.width - ansi.StringWidth(left) - 2
	if room <= 0 || !m.haveData {
		return ansi.Truncate(left, m.width, "")
	}
	state, stStyle := m.state()
	right := stStyle.Render(state) + st.Dim.Render(" · "+elapsed(m.data.Elapsed)+" · "+orDash(m.data.Source))
	right = ansi.Truncate(right, room, "…")
	gap := m.width - ansi.StringWidth(left) - ansi.StringWidth(right)
	return left + strings.Repeat(" ", max(gap, 1)) + right
}

// minHeaderState is the room the header keeps for the feed's state
// before it shortens the tabs.
const minHeaderState = 36

// tabs renders the brand and the pane tabs; short names the inactive
// ones by their number only.
func (m *Model) tabs(short bool) string {
	st := &m.styles
	var b strings.Builder
	b.WriteString(st.Brand.Render("kwatch"))
	for i, name := range paneNames {
		label := fmt.Sprintf("%d %s", i+1, name)
		switch {
		case i == m.active:
			b.WriteString(" " + st.ActiveTab.Render("["+label+"]"))
		case short:
			b.WriteString(" " + st.Tab.Render(fmt.Sprintf("%d", i+1)))
		default:
			b.WriteString(" " + st.Tab.Render(" "+label+" "))
		}
	}
	return b.String()
}

// state names where the feed is: still reading, or finished.
func (m *Model) state() (string, lipgloss.Style) {
	d := &m.data
	switch {
	case d.Done && d.Live:
		return "capture stopped", m.styles.Done
	case d.Done:
		return "replay finished", m.styles.Done
	case d.Live:
		return "live", m.styles.State
	}
	return "replaying", m.styles.State
}

// Run shows the UI until the user quits (q or ctrl+c), then restores the
// terminal. It returns nil when the user quit, ctx.Err() when ctx ended
// first, and a wrapped error when the terminal failed.
func Run(ctx context.Context, opts Options) error {
	if opts.Feed == nil {
		return errors.New("tui: Options.Feed is nil")
	}
	popts := []tea.ProgramOption{tea.WithContext(ctx)}
	if opts.Input != nil {
		popts = append(popts, tea.WithInput(opts.Input))
	}
	if opts.Output != nil {
		popts = append(popts, tea.WithOutput(opts.Output))
	}
	_, err := tea.NewProgram(NewModel(opts), popts...).Run()
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil && errors.Is(err, tea.ErrProgramKilled):
		return ctx.Err()
	}
	return fmt.Errorf("tui: %w", err)
}
