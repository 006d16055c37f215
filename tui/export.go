package tui

import (
	"bufio"
	"errors"
	"os"
	"slices"

	tea "charm.land/bubbletea/v2"
	"github.com/kwatch/kwatch/audit"
)

// DefaultExportPath is where e writes the shown findings when
// Options.ExportPath is empty.
const DefaultExportPath = "kwatch-findings.ndjson"

// export writes the findings the list shows (filters, search and sort
// applied) as NDJSON, one finding per line in the report's JSON shape, in
// a command goroutine: a large list must not freeze the screen.
func (p *findings) export() tea.Cmd {
	if p.data == nil || len(p.data.raw) != len(p.data.Findings) {
		p.exported = "export: the feed gave no report findings"
		return nil
	}
	path, raw, shown := p.c.exportPath, p.data.raw, slices.Clone(p.shown)
	if path == "" {
		path = DefaultExportPath
	}
	p.exported = "exporting…"
	return func() tea.Msg {
		err := writeFindings(path, raw, shown)
		return exportedMsg{path: path, n: len(shown), err: err}
	}
}

// writeFindings writes raw[i] for each i of shown to a new file at path,
// replacing it only once the whole list is written.
func writeFindings(path string, raw []audit.Finding, shown []int) (err error) {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	w := bufio.NewWriter(f)
	for _, i := range shown {
		if err := audit.WriteFindingJSON(w, &raw[i]); err != nil {
			f.Close()
			return err
		}
	}
	if err := errors.Join(w.Flush(), f.Close()); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
