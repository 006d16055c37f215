package reassembly

import (
	"runtime"
	"testing"
)

// maxBytesPerOpenConn bounds what the Reassembler (tcpasm with it) holds
// for an open connection that carried one request and its answer (issue
// 12: 100k such connections must fit in 256 MB with everything else):
// 750 when written, 901 before the rare parts went behind pointers.
const maxBytesPerOpenConn = 800

// TestBytesPerOpenConn measures the heap that open connections hold, each
// after a handshake, a request and an answer.
func TestBytesPerOpenConn(t *testing.T) {
	const n = 20000
	s := &nopStream{}
	before := heapInUse()
	r := New(Options{}, OpenerFunc(func(Flow) Stream { return s }))
	cs, bs := established(t, r, n)
	for i := range cs {
		r.Add(cs[i])
		r.Add(bs[i])
	}
	cs, bs = nil, nil
	after := heapInUse()
	per := float64(after-before) / n
	t.Logf("%.0f bytes per open connection", per)
	if st := r.Stats(); st.Opened != n || st.Ended != 0 {
		t.Fatalf("stats %+v: want %d connections open", st, n)
	}
	if per > maxBytesPerOpenConn {
		t.Errorf("%.0f bytes per open connection, want at most %d", per, maxBytesPerOpenConn)
	}
	runtime.KeepAlive(r)
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
