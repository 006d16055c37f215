package capture

// Retainer is a Source that can keep packet data valid after Next is
// called again, so that a caller handing packets to other goroutines need
// not copy them. File sources are Retainers.
type Retainer interface {
	// Retain switches the Source to retaining: from now on the data of
	// every packet returned stays valid until it is released. Call it
	// before the first Next; it reports false when the Source cannot.
	Retain() bool
	// Mark names the data returned so far. Marks only grow.
	Mark() uint64
	// Release frees the data of packets returned before Mark returned m,
	// possibly not all of it yet (it is freed by a later Release). It may
	// be called from any goroutine.
	Release(m uint64)
}

// markFileShift puts the file's index above the window's chunk number in a
// multiSource mark.
const markFileShift = 40

func (m *multiSource) Retain() bool {
	if m.opts.Mmap { // its files may be mapped (fileReader.Retain)
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.retain = true
	m.cur.win.retain()
	return true
}

func (m *multiSource) Mark() uint64 {
	return uint64(m.next)<<markFileShift | m.cur.win.mark()
}

func (m *multiSource) Release(mark uint64) {
	m.mu.Lock()
	w, idx := m.cur.win, m.next
	m.mu.Unlock()
	// Chunks of earlier files are not reused: their windows are closed and
	// the garbage collector frees them once nothing points into them.
	if int(mark>>markFileShift) == idx {
		w.release(mark & (1<<markFileShift - 1))
	}
}

func (r *fileReader) Retain() bool {
	r.win.retain()
	return true
}

func (r *fileReader) Mark() uint64 { return r.win.mark() }

func (r *fileReader) Release(m uint64) { r.win.release(m) }
