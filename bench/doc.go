// Package bench holds kwatch's performance benchmarks over large generated
// captures (built on first use into $KWATCH_BENCH_DIR, default
// $TMPDIR/kwatch-bench, never committed) and the tshark comparison script.
// `make bench` runs BenchmarkRatio, which prints kwatch's throughput as a
// ratio of the floor's (internal/floor) measured in the same run.
package bench
