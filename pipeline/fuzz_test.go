package pipeline_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/kwatch/kwatch/capture"
	"github.com/kwatch/kwatch/decode"
	"github.com/kwatch/kwatch/flow"
	"github.com/kwatch/kwatch/internal/pcapgen"
	"github.com/kwatch/kwatch/pipeline"
)

// FuzzPipeline feeds arbitrary capture files through the whole path from
// file bytes to events. Invariant: it never panics, every event names a
// connection and a frame that the file had, and a connection's events end
// with at most one conn-end.
func FuzzPipeline(f *testing.F) {
	// Small seeds: the fuzzer mutates them thousands of times a second.
	for _, o := range []pcapgen.Options{{}, {Perturb: pcapgen.Perturb{MSS: 40, Reorder: 3}}, {Link: pcapgen.LinkSLL2}, {Format: pcapgen.FormatPCAPNG}} {
		c := pcapgen.New(o)
		pcapgen.DemoModern(c, pcapgen.ConnOptions{})
		pcapgen.DemoLegacy(c, pcapgen.ConnOptions{NoSYN: true})
		data, err := c.Bytes()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		f.Add(data[:len(data)/2])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		src, err := capture.NewReader(bytes.NewReader(data), "fuzz.pcap", capture.Options{})
		if err != nil {
			return
		}
		defer src.Close()
		ended := map[flow.ConnID]bool{}
		var maxFrame uint64
		st, _ := pipeline.Run(context.Background(), src, pipeline.Options{MaxFrame: 1 << 20}, decode.SinkFunc(func(e *decode.Event) {
			if e.Frame > maxFrame {
				maxFrame = e.Frame
			}
			if ended[e.Conn] {
				t.Fatalf("event %v after conn-end of %v", e.Kind, e.Conn)
			}
			if e.Kind == decode.KindConnEnd {
				ended[e.Conn] = true
			}
		}))
		if maxFrame > st.LastFrame {
			t.Fatalf("event at frame %d, but the file has %d packets", maxFrame, st.LastFrame)
		}
	})
}
