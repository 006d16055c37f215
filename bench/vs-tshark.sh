#!/usr/bin/env bash
# Runs `kwatch read` (full audit) and tshark's Kafka dissector on the same
# captures and prints wall time, peak resident memory and kwatch's speed as a
# ratio of tshark's. Skips tshark politely where it is not installed.
#
#   KWATCH=./kwatch bench/vs-tshark.sh CAPTURE...
set -euo pipefail
kwatch=${KWATCH:-kwatch}
workers=${WORKERS:-}
if [ $# -eq 0 ]; then
	echo "usage: KWATCH=path/to/kwatch $0 CAPTURE..." >&2
	exit 2
fi
if [ ! -x /usr/bin/time ]; then
	echo "vs-tshark: /usr/bin/time is needed (apt-get install time)" >&2
	exit 2
fi

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT

# measure CMD...: prints "seconds max-rss-KB" of CMD, its output dropped
# (kwatch read exits 1 when it has findings: that is not a failure here).
measure() {
	/usr/bin/time -o "$tmp" -f '%e %M' "$@" >/dev/null 2>&1 || true
	tail -1 "$tmp"
}

for cap in "$@"; do
	args=(read --format json)
	[ -n "$workers" ] && args+=(--workers "$workers")
	read -r ks km < <(measure "$kwatch" "${args[@]}" "$cap")
	printf '%s: kwatch read %ss, %d MB peak RSS\n' "$cap" "$ks" $((km / 1024))
	if ! command -v tshark >/dev/null 2>&1; then
		echo "$cap: tshark not installed, skipping the comparison (apt-get install tshark)"
		continue
	fi
	read -r ts tm < <(measure tshark -r "$cap" -d tcp.port==9092,kafka -T fields -e kafka.api_key)
	printf '%s: tshark %ss, %d MB peak RSS; kwatch is %.1fx tshark'"'"'s speed\n' "$cap" "$ts" $((tm / 1024)) \
		"$(echo "$ts $ks" | awk '{ if ($2 > 0) print $1 / $2; else print 0 }')"
done
