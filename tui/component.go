package tui

import (
	"charm.land/bubbles/v2/help"
	tea "charm.land/bubbletea/v2"
)

// pane is one screen of the UI, the shape soft-serve's components share:
// the root model sizes it, hands it each snapshot, delegates keys to it and
// asks it for its help keys and status line.
type pane interface {
	help.KeyMap
	SetSize(width, height int)
	SetData(d *Data)
	Update(msg tea.Msg) tea.Cmd
	View() string
	// Capturing reports whether a text input has focus: every key then
	// goes to the pane and the global keys (q, tab, 1-3) are off.
	Capturing() bool
	// Status is one line about the pane's state (filters, counts).
	Status() string
}

// common is what every pane shares.
type common struct {
	styles   *Styles
	keys     *KeyMap
	explain  func(ruleID string) (title, explanation string)
	detailer Detailer // nil when the feed serves no details on demand
	// exportPath is where e writes the shown findings.
	exportPath string
}

// ruleText returns a rule's title and explanation, empty when unknown.
func (c *common) ruleText(rule string) (title, explanation string) {
	if c.explain == nil {
		return "", ""
	}
	return c.explain(rule)
}
