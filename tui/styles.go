package tui

import (
	"charm.land/bubbles/v2/help"
	"charm.land/lipgloss/v2"
	"github.com/kwatch/kwatch/audit"
)

// Styles holds every style of the UI. Colours degrade by the terminal's
// profile (Bubble Tea downsamples), and nothing relies on colour alone: the
// selected row has a marker, severities are spelled out.
type Styles struct {
	App       lipgloss.Style
	Brand     lipgloss.Style
	Tab       lipgloss.Style
	ActiveTab lipgloss.Style
	State     lipgloss.Style
	Done      lipgloss.Style

	Title    lipgloss.Style
	Label    lipgloss.Style
	Value    lipgloss.Style
	Dim      lipgloss.Style
	Header   lipgloss.Style
	Selected lipgloss.Style
	Spark    lipgloss.Style
	Status   lipgloss.Style
	Error    lipgloss.Style

	Sev [audit.SeverityError + 1]lipgloss.Style // by audit.Severity (0 unused)

	Help help.Styles
}

// DefaultStyles returns kwatch's styles for a dark background.
func DefaultStyles() Styles {
	accent := lipgloss.Color("#7D56F4")
	dim := lipgloss.Color("245")
	s := Styles{
		Brand:     lipgloss.NewStyle().Bold(true).Foreground(accent),
		Tab:       lipgloss.NewStyle().Foreground(dim),
		ActiveTab: lipgloss.NewStyle().Bold(true).Underline(true),
		State:     lipgloss.NewStyle().Foreground(lipgloss.Color("42")),
		Done:      lipgloss.NewStyle().Foreground(lipgloss.Color("214")),

		Title:    lipgloss.NewStyle().Bold(true),
		Label:    lipgloss.NewStyle().Foreground(dim),
		Value:    lipgloss.NewStyle(),
		Dim:      lipgloss.NewStyle().Foreground(dim),
		Header:   lipgloss.NewStyle().Bold(true).Foreground(dim),
		Selected: lipgloss.NewStyle().Reverse(true),
		Spark:    lipgloss.NewStyle().Foreground(accent),
		Status:   lipgloss.NewStyle().Foreground(dim),
		Error:    lipgloss.NewStyle().Foreground(lipgloss.Color("196")),

		Help: help.DefaultDarkStyles(),
	}
	s.Sev[audit.SeverityInfo] = lipgloss.NewStyle().Foreground(lipgloss.Color("39"))
	s.Sev[audit.SeverityWarn] = lipgloss.NewStyle().Foreground(lipgloss.Color("214"))
	s.Sev[audit.SeverityError] = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("196"))
	return s
}

// sev returns the style of a severity, tolerating out-of-range values.
func (s *Styles) sev(v audit.Severity) lipgloss.Style {
	if int(v) < len(s.Sev) {
		return s.Sev[v]
	}
	return s.Value
}

// sevRef is sev for rows, which keep a pointer.
func (s *Styles) sevRef(v audit.Severity) *lipgloss.Style {
	if int(v) < len(s.Sev) {
		return &s.Sev[v]
	}
	return &s.Value
}
