package tui

import (
	"sync"

	"github.com/kwatch/kwatch/audit"
)

// SnapshotSincer is what an AuditFeed reads: (*audit.Auditor).SnapshotSince.
type SnapshotSincer interface {
	SnapshotSince(from int) (r *audit.Report, fresh []audit.Finding, next int)
}

// AuditFeed is a Feed over a running Auditor that converts each finding
// once. Each call takes the report without its findings and only the
// findings made since the previous call, and appends them to those it
// converted before: a tick costs the new findings, not all 200,000 of a
// busy capture, under the auditor's lock and in the UI. Findings are
// listed in the order they were made.
//
// Buffers: the Data it returns shares the converted findings with later
// calls, which only append beyond the length handed out; nothing handed
// out is written again.
type AuditFeed struct {
	src  SnapshotSincer
	meta func() Meta

	mu   sync.Mutex // Data is called from command goroutines
	next int
	rows []FindingRow
	raw  []audit.Finding
}

// NewAuditFeed returns a feed over src (an *audit.Auditor); meta says
// what the report does not (source, done, counters).
func NewAuditFeed(src SnapshotSincer, meta func() Meta) *AuditFeed {
	return &AuditFeed{src: src, meta: meta}
}

// Data reads meta first, then the snapshot: a Meta that says Done thus
// always pairs with the final findings.
func (f *AuditFeed) Data() Data {
	var m Meta
	if f.meta != nil {
		m = f.meta()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	r, fresh, next := f.src.SnapshotSince(f.next)
	f.next = next
	for i := range fresh {
		f.rows = append(f.rows, findingFromReport(&fresh[i]))
	}
	f.raw = append(f.raw, fresh...)
	d := FromReport(r, m)
	d.Findings = f.rows[:len(f.rows):len(f.rows)]
	d.raw = f.raw[:len(f.raw):len(f.raw)]
	return d
}
