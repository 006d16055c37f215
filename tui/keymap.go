package tui

import "charm.land/bubbles/v2/key"

// KeyMap holds every key binding of the UI, so help and handlers agree.
// Panes pick the bindings they honour in their ShortHelp/FullHelp.
type KeyMap struct {
	// Global.
	Quit     key.Binding
	Help     key.Binding
	NextPane key.Binding
	PrevPane key.Binding
	Overview key.Binding
	Clients  key.Binding
	Findings key.Binding
	Groups   key.Binding
	Brokers  key.Binding

	// Lists.
	Up       key.Binding
	Down     key.Binding
	PageUp   key.Binding
	PageDown key.Binding
	Top      key.Binding
	Bottom   key.Binding
	Open     key.Binding
	Back     key.Binding
	Search   key.Binding
	Clear    key.Binding
	Left     key.Binding
	Right    key.Binding

	// Instances.
	Sort        key.Binding
	SortReverse key.Binding
	ShowFinds   key.Binding

	// Findings.
	Severity     key.Binding
	RuleFilter   key.Binding
	InstFilter   key.Binding
	NextFinding  key.Binding
	PrevFinding  key.Binding
	Export       key.Binding
	SearchAccept key.Binding
	SearchCancel key.Binding
}

// DefaultKeyMap returns kwatch's bindings.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Quit:     key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Help:     key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "more keys")),
		NextPane: key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next pane")),
		PrevPane: key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "prev pane")),
		Overview: key.NewBinding(key.WithKeys("1"), key.WithHelp("1", "overview")),
		Clients:  key.NewBinding(key.WithKeys("2"), key.WithHelp("2", "instances")),
		Findings: key.NewBinding(key.WithKeys("3"), key.WithHelp("3", "findings")),
		Groups:   key.NewBinding(key.WithKeys("4"), key.WithHelp("4", "groups")),
		Brokers:  key.NewBinding(key.WithKeys("5"), key.WithHelp("5", "brokers")),

		Up:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:     key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		PageUp:   key.NewBinding(key.WithKeys("pgup", "b"), key.WithHelp("pgup/b", "page up")),
		PageDown: key.NewBinding(key.WithKeys("pgdown", "space", "f"), key.WithHelp("pgdn/f", "page down")),
		Top:      key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("g", "top")),
		Bottom:   key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("G", "bottom")),
		Open:     key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open")),
		Back:     key.NewBinding(key.WithKeys("esc", "backspace"), key.WithHelp("esc", "back")),
		Search:   key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "search")),
		Clear:    key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "clear filters")),
		Left:     key.NewBinding(key.WithKeys("left", "h"), key.WithHelp("←/h", "scroll left")),
		Right:    key.NewBinding(key.WithKeys("right", "l"), key.WithHelp("→/l", "scroll right")),

		Sort:        key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "sort column")),
		SortReverse: key.NewBinding(key.WithKeys("S"), key.WithHelp("S", "reverse sort")),
		ShowFinds:   key.NewBinding(key.WithKeys("F"), key.WithHelp("F", "its findings")),

		Severity:     key.NewBinding(key.WithKeys("v"), key.WithHelp("v", "min severity")),
		RuleFilter:   key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "rule")),
		InstFilter:   key.NewBinding(key.WithKeys("i"), key.WithHelp("i", "instance")),
		NextFinding:  key.NewBinding(key.WithKeys("n"), key.WithHelp("n", "next finding")),
		PrevFinding:  key.NewBinding(key.WithKeys("p", "N"), key.WithHelp("p", "prev finding")),
		Export:       key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "export shown (NDJSON)")),
		SearchAccept: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "apply")),
		SearchCancel: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
	}
}

// navKeys are the list movements every list pane shares.
func (k KeyMap) navKeys() []key.Binding {
	return []key.Binding{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom, k.Left, k.Right}
}

// scrollKeys are the movements of a scrolling text screen.
func (k KeyMap) scrollKeys() []key.Binding {
	return []key.Binding{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}
}

// globalKeys close every short help line.
func (k KeyMap) globalKeys() []key.Binding {
	return []key.Binding{k.NextPane, k.Help, k.Quit}
}

// globalColumn is the last column of every full help.
func (k KeyMap) globalColumn() []key.Binding {
	return []key.Binding{k.NextPane, k.PrevPane, k.Overview, k.Clients, k.Findings, k.Groups, k.Brokers, k.Help, k.Quit}
}

// helpKeys adapts a pane's bindings to help.KeyMap.
type helpKeys struct {
	short []key.Binding
	full  [][]key.Binding
}

func (h helpKeys) ShortHelp() []key.Binding  { return h.short }
func (h helpKeys) FullHelp() [][]key.Binding { return h.full }
