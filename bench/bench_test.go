package bench

import (
	"context"
	"os"
	"testing"

	"github.com/kwatch/kwatch/audit"
	"github.com/kwatch/kwatch/capture"
	"github.com/kwatch/kwatch/pipeline"
)

func BenchmarkProfRead(b *testing.B) {
	path := os.Getenv("KWATCH_PROF_PCAP")
	if path == "" {
		b.Skip("KWATCH_PROF_PCAP not set")
	}
	for b.Loop() {
		src, err := capture.Open(path, capture.Options{})
		if err != nil {
			b.Fatal(err)
		}
		a := audit.New(audit.Options{})
		st, _ := pipeline.Run(context.Background(), src, pipeline.Options{}, a)
		a.Finish(st.LastTime)
		src.Close()
	}
}
