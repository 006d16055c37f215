package pipeline_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/kwatch/kwatch/capture"
	"github.com/kwatch/kwatch/decode"
	"github.com/kwatch/kwatch/internal/pcapgen"
	"github.com/kwatch/kwatch/pipeline"
)

// TestMappedCaptureShrunk: when another process cuts a memory-mapped
// capture short while it is analyzed, Run ends with a ShrunkError after
// the packets before the cut, instead of SIGBUS killing the process: with
// one worker the cut comes mid-analysis (the packets are analyzed in
// place), with several before the reader reaches it (the merger hears of
// events only after whole batches).
func TestMappedCaptureShrunk(t *testing.T) {
	var b bytes.Buffer
	if _, err := pcapgen.WriteBulk(&b, pcapgen.BulkOptions{Connections: 4, Requests: 200, PayloadSize: 2000, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	for _, workers := range []int{1, 2} {
		path := filepath.Join(t.TempDir(), "cut.pcap")
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		src, err := capture.Open(path, capture.Options{Mmap: true})
		if err != nil {
			t.Fatal(err)
		}
		cut := func() {
			if err := os.Truncate(path, 8192); err != nil {
				t.Error(err)
			}
		}
		events := 0
		sink := decode.SinkFunc(func(*decode.Event) {
			if events++; events == 1 && workers == 1 {
				cut()
			}
		})
		if workers > 1 {
			cut()
		}
		st, err := pipeline.Run(context.Background(), src, pipeline.Options{Workers: workers, Ports: []uint16{9092}}, sink)
		src.Close()
		var shrunk *capture.ShrunkError
		if !errors.As(err, &shrunk) || shrunk.Name != path {
			t.Errorf("workers %d: Run ended with %v; want a ShrunkError naming %s", workers, err, path)
		}
		if st.Packets == 0 || st.Packets*2000 > uint64(b.Len()) {
			t.Errorf("workers %d: %d packets analyzed of a %d-byte capture cut at 8192", workers, st.Packets, b.Len())
		}
	}
}
