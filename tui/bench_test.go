package tui

import (
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/kwatch/kwatch/audit"
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

// BenchmarkFeedTick compares one poll's conversion at 100,000 kept
// findings: a ReportFeed converts every finding of every snapshot, an
// AuditFeed only those made since the last poll (here none).
func BenchmarkFeedTick(b *testing.B) {
	rep := fixtureReport()
	base := rep.Findings
	rep.Findings = make([]audit.Finding, 100_000)
	for i := range rep.Findings {
		rep.Findings[i] = base[i%len(base)]
		rep.Findings[i].Frame = uint64(i + 1)
	}
	b.Run("report", func(b *testing.B) {
		feed := ReportFeed{Snapshot: func() *audit.Report { return rep }}
		b.ReportAllocs()
		for b.Loop() {
			_ = feed.Data()
		}
	})
	b.Run("cursor", func(b *testing.B) {
		src := &fakeAuditor{rep: rep, avail: len(rep.Findings)}
		feed := NewAuditFeed(src, nil)
		feed.Data() // the first poll converts them all
		b.ReportAllocs()
		for b.Loop() {
			_ = feed.Data()
		}
	})
}
