package audit

import "slices"

// keptFindings are the findings a report keeps, in the order made, in
// one slice that Finish hands to the final report without copying it: a
// copy of 5 MB (a findings-heavy capture) at the end of a run was most
// of its page faults, and the collection it set off scanned 5 MB of the
// binary's globals. The slice doubles while it is small; past keptJump
// it grows at once to the most findings the bounds let the report keep
// (bound), so that growing it leaves little for the collector.
type keptFindings struct {
	fs []Finding
	// bytes sums findingSize of each (Options.MaxFindingBytes).
	bytes int
	// bound: no more findings can be kept (Options.MaxFindings, and
	// MaxFindingBytes over the size of the smallest finding).
	bound int
}

// keptJump: past this many kept findings the slice grows to bound, if
// bound is at most keptJumpMax (a larger bound, set by hand, doubles).
const (
	keptJump    = 1024
	keptJumpMax = 1 << 16
)

// newKept returns the kept findings of an Auditor with options o.
func newKept(o *Options) keptFindings {
	return keptFindings{bound: max(1, min(o.MaxFindings, o.MaxFindingBytes/findingBase))}
}

// add keeps a copy of f, of size sz (findingSize).
func (k *keptFindings) add(f *Finding, sz int) {
	if len(k.fs) == cap(k.fs) {
		n := max(16, 2*cap(k.fs))
		if n > keptJump && k.bound <= keptJumpMax {
			n = max(k.bound, len(k.fs)+1)
		}
		k.fs = append(make([]Finding, 0, n), k.fs...)
	}
	k.fs = append(k.fs, *f)
	k.bytes += sz
}

// since returns a copy of the findings kept from index from on (an empty
// slice, never nil, when there are none).
func (k *keptFindings) since(from int) []Finding {
	from = min(max(from, 0), len(k.fs))
	return append(make([]Finding, 0, len(k.fs)-from), k.fs[from:]...)
}

// final returns the findings for the final report: the kept ones
// themselves when they are in report order (as they mostly are: made in
// packet order), which later appends do not reach; else a copy.
func (k *keptFindings) final() []Finding {
	if k.fs != nil && findingsSorted(k.fs) {
		return slices.Clip(k.fs)
	}
	return k.since(0)
}
