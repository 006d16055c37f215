package audit

// keptFindings are the findings a report keeps, in the order made, in
// chunks of at most maxKeptChunk: one growing slice copied them all at
// each doubling and left as much again for the collector (5 MB of each
// on a findings-heavy capture, and the page faults of both).
type keptFindings struct {
	chunks [][]Finding
	n      int
	// bytes sums findingSize of each (Options.MaxFindingBytes).
	bytes int
}

// maxKeptChunk: 1024 findings are about 320 KB; a capture with few
// findings gets small chunks (the first holds 16, each next as many as
// are kept so far).
const maxKeptChunk = 1024

// add keeps a copy of f, of size sz (findingSize).
func (k *keptFindings) add(f *Finding, sz int) {
	last := len(k.chunks) - 1
	if last < 0 || len(k.chunks[last]) == cap(k.chunks[last]) {
		k.chunks = append(k.chunks, make([]Finding, 0, min(max(16, k.n), maxKeptChunk)))
		last++
	}
	k.chunks[last] = append(k.chunks[last], *f)
	k.n++
	k.bytes += sz
}

// since returns a copy of the findings kept from index from on (an empty
// slice, never nil, when there are none).
func (k *keptFindings) since(from int) []Finding {
	from = min(max(from, 0), k.n)
	out := make([]Finding, 0, k.n-from)
	for _, c := range k.chunks {
		if from >= len(c) {
			from -= len(c)
			continue
		}
		out = append(out, c[from:]...)
		from = 0
	}
	return out
}
