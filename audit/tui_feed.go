package audit

// SnapshotSince is Snapshot for a viewer that keeps the findings it was
// given before (the TUI, ten times a second): the report with no
// findings, the kept findings from index from on, in the order they were
// made, and the index to ask from next time. Kept findings are only ever
// appended, so from and next are positions in one growing list; copying
// only the new ones keeps the lock short however many there are.
func (a *InstanceAuditor) SnapshotSince(from int) (r *Report, fresh []Finding, next int) {
	a.mu.Lock()
	r = a.report()
	r.Findings = []Finding{}
	fresh = a.findings.since(from)
	next = len(a.findings.fs)
	a.mu.Unlock()
	r.sort()
	return r, fresh, next
}
