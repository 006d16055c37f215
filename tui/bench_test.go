package tui

import (
	"testing"

	tea "charm.land/bubbletea/v2"
)

// BenchmarkUpdate measures one poll at scale: a snapshot with 1,000
// instances and 100,000 findings handed to every pane, then the findings
// screen rendered. Bytes are the rendered screen.
func BenchmarkUpdate(b *testing.B) {
	d := bigData(1000, 100_000)
	m := NewModel(Options{})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	press(m, "3")
	b.SetBytes(int64(len(m.render())))
	b.ReportAllocs()
	for b.Loop() {
		m.Update(dataMsg{d})
		_ = m.render()
	}
}

// BenchmarkRender measures drawing alone, as on a key press.
func BenchmarkRender(b *testing.B) {
	m := NewModel(Options{})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	m.Update(dataMsg{bigData(1000, 100_000)})
	press(m, "3")
	b.SetBytes(int64(len(m.render())))
	b.ReportAllocs()
	for b.Loop() {
		_ = m.render()
	}
}
