package capture

// prefetch asks the CPU to bring the two cache lines at p into cache
// without waiting for them (PREFETCHT0).
//
//go:noescape
func prefetch(p *byte)
