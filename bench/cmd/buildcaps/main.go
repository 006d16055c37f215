// Command buildcaps writes the benchmarks' large captures into
// $KWATCH_BENCH_DIR (default $TMPDIR/kwatch-bench), skipping those already
// there, and prints their paths: `make bench-tshark` compares kwatch and
// tshark on them.
package main

import (
	"fmt"
	"os"

	"github.com/kwatch/kwatch/bench"
)

func main() {
	dir := bench.Dir()
	for _, c := range bench.Captures {
		p, err := bench.Build(dir, c)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(p)
	}
}
