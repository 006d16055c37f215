package bench

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/kwatch/kwatch/audit"
	"github.com/kwatch/kwatch/capture"
	"github.com/kwatch/kwatch/internal/floor"
	"github.com/kwatch/kwatch/pipeline"
)

// capturePath returns the path of the named capture, building it first if
// needed.
func capturePath(tb testing.TB, c Capture) string {
	tb.Helper()
	p, err := Build(Dir(), c)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// ratioCaptures are the captures of the floor ratio.
func ratioCaptures() []Capture {
	var cs []Capture
	for _, c := range Captures {
		if !c.TsharkOnly {
			cs = append(cs, c)
		}
	}
	return cs
}

// read is `kwatch read`'s analysis: pipeline and full audit, report built.
func read(tb testing.TB, path string, workers int) pipeline.Stats {
	src, err := capture.Open(path, capture.Options{Mmap: workers <= 1}) // as kwatch read
	if err != nil {
		tb.Fatal(err)
	}
	defer src.Close()
	a := audit.New(audit.Options{SingleGoroutine: true}) // as kwatch read
	st, err := pipeline.Run(context.Background(), src, pipeline.Options{Workers: workers}, a)
	if err != nil {
		tb.Fatal(err)
	}
	a.AddCapture(st.Packets, st.Bytes, st.Connections)
	a.Finish(st.LastTime)
	return st
}

func runFloor(tb testing.TB, path string) floor.Result {
	r, err := floor.RunFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkRatio runs, in one run and alternately, the floor (pcapgo +
// DecodingLayerParser) and kwatch's analysis with 1 and GOMAXPROCS workers
// on each large capture, and reports kwatch's throughput as a ratio of the
// floor's (x-floor: 1.0 means as fast as the floor). Use -benchtime Nx.
//
//	go test ./bench -run '^$' -bench Ratio -benchtime 5x -timeout 30m
func BenchmarkRatio(b *testing.B) {
	for _, c := range ratioCaptures() {
		b.Run(c.Name, func(b *testing.B) {
			path := capturePath(b, c)
			fi, err := os.Stat(path)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(fi.Size())
			b.ReportAllocs()
			workers := []int{1, runtime.GOMAXPROCS(0)}
			var fl []time.Duration
			kw := make([][]time.Duration, len(workers))
			var packets uint64
			for b.Loop() {
				t := time.Now()
				r := runFloor(b, path)
				fl = append(fl, time.Since(t))
				for i, w := range workers {
					t = time.Now()
					st := read(b, path, w)
					kw[i] = append(kw[i], time.Since(t))
					if st.Packets != uint64(r.Packets) {
						b.Fatalf("kwatch read %d packets, the floor %d", st.Packets, r.Packets)
					}
					packets = st.Packets
				}
			}
			f := median(fl)
			b.ReportMetric(float64(packets)/f.Seconds(), "floor-pkt/s")
			for i, w := range workers {
				k := median(kw[i])
				b.ReportMetric(f.Seconds()/k.Seconds(), fmt.Sprintf("x-floor-w%d", w))
				fmt.Printf("%s: %d packets, %d MB: floor %v, kwatch %d worker(s) %v: %.2fx the floor's speed (medians of %d)\n",
					c.Name, packets, fi.Size()>>20, f.Round(time.Millisecond), w, k.Round(time.Millisecond), f.Seconds()/k.Seconds(), len(fl))
			}
		})
	}
}

// BenchmarkRead is kwatch's analysis alone (for pprof: -cpuprofile).
func BenchmarkRead(b *testing.B) {
	for _, c := range ratioCaptures() {
		for _, w := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/workers=%d", c.Name, w), func(b *testing.B) {
				path := capturePath(b, c)
				fi, _ := os.Stat(path)
				b.SetBytes(fi.Size())
				b.ReportAllocs()
				for b.Loop() {
					read(b, path, w)
				}
			})
		}
	}
}

// BenchmarkFloor is the floor loop alone.
func BenchmarkFloor(b *testing.B) {
	for _, c := range ratioCaptures() {
		b.Run(c.Name, func(b *testing.B) {
			path := capturePath(b, c)
			fi, _ := os.Stat(path)
			b.SetBytes(fi.Size())
			b.ReportAllocs()
			for b.Loop() {
				runFloor(b, path)
			}
		})
	}
}
