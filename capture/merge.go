package capture

import (
	"errors"
	"io"
)

// mergeSource reads several capture files as one, packets merged by time
// as mergecap does by default: each file is read in its own order, and the
// next packet is the earliest of the files' next packets (the earlier file
// on the command line on a tie). A file that breaks part way (truncated,
// corrupt) is reported at the end and the others are read on.
//
// Buffers: a returned packet's Data points into its file's window and
// stays valid until the next call, which advances only that file. The
// source does not retain (capture.Retainer): a sharded run copies.
type mergeSource struct {
	files []*fileReader
	heads []Packet // each file's next packet, while it is in the heap
	heap  []int    // indices of files with a head, earliest head first
	last  int      // the file whose head was returned last, or -1
	// broken: errors of files that broke part way; err ends the input.
	broken []error
	err    error
}

func openMerged(paths []string, opts Options) (Source, error) {
	m := &mergeSource{heads: make([]Packet, len(paths)), last: -1}
	for i, p := range paths {
		r, err := openFile(p, opts, PackFrame(i, 0))
		if err != nil {
			m.Close()
			return nil, err
		}
		m.files = append(m.files, r)
	}
	for i := range m.files {
		m.advance(i)
	}
	return m, nil
}

// advance reads file i's next packet into its head and puts the file in
// the heap, or leaves it out at its end.
func (m *mergeSource) advance(i int) bool {
	err := m.files[i].NextInto(&m.heads[i])
	switch {
	case err == nil:
		m.heap = append(m.heap, i)
		m.up(len(m.heap) - 1)
		return true
	case err == io.EOF:
	case errors.Is(err, ErrTruncated) || errors.Is(err, ErrCorrupt):
		m.broken = append(m.broken, err)
	default:
		m.err = errors.Join(append(m.broken, err)...)
	}
	return false
}

func (m *mergeSource) Next() (Packet, error) {
	return nextInto(m)
}

// NextInto reads the next packet into p; see IntoSource.
func (m *mergeSource) NextInto(p *Packet) error {
	if m.last >= 0 {
		i := m.last
		m.last = -1
		m.pop()
		m.advance(i)
	}
	if m.err != nil {
		return m.err
	}
	if len(m.heap) == 0 {
		m.err = io.EOF
		if len(m.broken) > 0 {
			m.err = errors.Join(m.broken...)
		}
		return m.err
	}
	m.last = m.heap[0]
	*p = m.heads[m.last]
	return nil
}

// before orders heads by time, then by file.
func (m *mergeSource) before(a, b int) bool {
	ta, tb := m.heads[a].Time, m.heads[b].Time
	if !ta.Equal(tb) {
		return ta.Before(tb)
	}
	return a < b
}

// pop removes the heap's first file.
func (m *mergeSource) pop() {
	n := len(m.heap) - 1
	m.heap[0] = m.heap[n]
	m.heap = m.heap[:n]
	m.down(0)
}

func (m *mergeSource) up(j int) {
	for j > 0 {
		parent := (j - 1) / 2
		if !m.before(m.heap[j], m.heap[parent]) {
			return
		}
		m.heap[j], m.heap[parent] = m.heap[parent], m.heap[j]
		j = parent
	}
}

func (m *mergeSource) down(j int) {
	for {
		least, l, r := j, 2*j+1, 2*j+2
		if l < len(m.heap) && m.before(m.heap[l], m.heap[least]) {
			least = l
		}
		if r < len(m.heap) && m.before(m.heap[r], m.heap[least]) {
			least = r
		}
		if least == j {
			return
		}
		m.heap[j], m.heap[least] = m.heap[least], m.heap[j]
		j = least
	}
}

func (m *mergeSource) Close() error {
	if m.err == nil {
		m.err = errors.New("capture: source closed")
	}
	var errs []error
	for _, r := range m.files {
		errs = append(errs, r.Close())
	}
	return errors.Join(errs...)
}
