#!/bin/sh
# tunnel-instructions.sh: kwatch read's whole path (one worker) counted in
# instructions (cachegrind) on the same traffic plain and inside each
# encapsulation, and each tunnel's throughput as a ratio of the plain
# capture's, the fixed cost of a run (an empty capture) taken off both.
# Instruction counts do not move with the machine's load, as timings do.
# The captures are BenchmarkTunnels's; build them first:
#
#	go test ./bench -run '^$' -bench Tunnels -benchtime 1x
#	sh bench/tunnel-instructions.sh
set -eu
dir=${KWATCH_BENCH_DIR:-${TMPDIR:-/tmp}/kwatch-bench}
bin=$dir/kwatch-cg
go build -o "$bin" ./cmd/kwatch
head -c 24 "$dir/tunnel-plain.pcap" >"$dir/empty.pcap"
count() {
	valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
		"$bin" read --workers 1 "$1" 2>&1 >/dev/null | awk '/I *refs/ {gsub(",", "", $NF); print $NF}'
}
fixed=$(count "$dir/empty.pcap")
plain=$(count "$dir/tunnel-plain.pcap")
echo "fixed $fixed, plain $plain instructions"
for f in "$dir"/tunnel-*.pcap; do
	case $f in *-plain.pcap) continue ;; esac
	n=$(count "$f")
	echo "$(basename "$f" .pcap) $n $(echo "$plain $n $fixed" | awk '{printf "%.3fx", ($1-$3)/($2-$3)}')"
done
