// Package bench holds kwatch's performance benchmarks over large generated
// captures (Captures, built on first use into $KWATCH_BENCH_DIR, default
// $TMPDIR/kwatch-bench, never committed), the peak-memory test, and the
// tshark comparison script (vs-tshark.sh). `make bench` runs
// BenchmarkRatio, which prints kwatch's throughput as a ratio of the
// floor's (internal/floor) measured in the same run, alternately, as
// medians; `make bench-tshark` builds all four captures with cmd/buildcaps
// and runs vs-tshark.sh on them.
package bench
