// Package bench holds kwatch's performance benchmarks over large generated
// captures (Captures, built on first use into $KWATCH_BENCH_DIR, default
// $TMPDIR/kwatch-bench, never committed), the peak-memory test, and the
// tshark comparison script (vs-tshark.sh). `make bench` runs
// BenchmarkRatio, which prints kwatch's throughput as a ratio of the
// floor's (internal/floor) measured in the same run, alternately, as
// medians; `make bench-tshark` builds all four captures with cmd/buildcaps
// and runs vs-tshark.sh on them. BenchmarkTunnels reads the same traffic
// plain and inside each encapsulation kwatch unwraps (tunnel-instructions.sh
// counts the same in instructions, which the machine's load does not
// move), and BenchmarkSnapLength a capture whole and at -s 512.
package bench
