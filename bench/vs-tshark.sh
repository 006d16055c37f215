#!/usr/bin/env bash
# Runs `kwatch read` (full audit) and tshark's Kafka dissector on the same
# captures and prints wall time, peak resident memory and kwatch's speed as a
# ratio of tshark's. Skips tshark politely where it is not installed.
#
#   KWATCH=./kwatch bench/vs-tshark.sh CAPTURE...
#
# REPEAT=N runs each tool N times and keeps the fastest run (and the highest
# peak RSS): on a busy machine one run can be several times too slow.
#
# tshark gets what kwatch does: TCP reassembly including out-of-order
# segments, every port-9092 stream dissected as Kafka with a protocol tree,
# no name resolution. It prints how many record batches it dissected: its
# dissector stops at API versions it does not know (tshark 4.0 knows Produce
# up to v8 and Fetch up to v11), and then skips the rest of the frame, which
# is far less work than a full dissection.
set -euo pipefail
kwatch=${KWATCH:-kwatch}
workers=${WORKERS:-}
repeat=${REPEAT:-1}
if [ $# -eq 0 ]; then
	echo "usage: KWATCH=path/to/kwatch $0 CAPTURE..." >&2
	exit 2
fi
if [ ! -x /usr/bin/time ]; then
	echo "vs-tshark: /usr/bin/time is needed (apt-get install time)" >&2
	exit 2
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# measure OUT CMD...: runs CMD $repeat times with its stdout in OUT and
# prints "seconds max-rss-KB exit-status": the fastest run's wall time,
# timed by bash's own clock (millisecond precision, no extra process),
# then one more run under /usr/bin/time for the peak RSS (kwatch read exits
# 1 when it has findings, which is not a failure here).
measure() {
	local out=$1 best="" rc s i
	shift
	for ((i = 0; i < repeat; i++)); do
		rc=0
		s=$({ TIMEFORMAT=%3R; time "$@" >"$out" 2>"$tmp/stderr"; } 2>&1) || rc=$?
		# time reports even when the command fails; its status is rc.
		s=${s##*$'\n'}
		if [ -z "$best" ] || awk -v a="$s" -v b="$best" 'BEGIN { exit !(a < b) }'; then
			best=$s
		fi
		[ "$rc" -gt 1 ] && break
	done
	/usr/bin/time -o "$tmp/time" -f '%M' "$@" >/dev/null 2>&1 || true
	echo "$best $(tail -1 "$tmp/time") $rc"
}

for cap in "$@"; do
	args=(read --format json)
	[ -n "$workers" ] && args+=(--workers "$workers")
	read -r ks km krc < <(measure "$tmp/kwatch.json" "$kwatch" "${args[@]}" "$cap")
	if [ "$krc" -gt 1 ]; then
		echo "$cap: kwatch read failed (exit $krc):" >&2
		cat "$tmp/stderr" >&2
		exit 1
	fi
	# The first "packets" and "requests" are the capture's totals.
	packets=$(sed -n 's/^ *"packets": \([0-9]*\),*$/\1/p' "$tmp/kwatch.json" | head -1)
	requests=$(sed -n 's/^ *"requests": \([0-9]*\),*$/\1/p' "$tmp/kwatch.json" | head -1)
	printf '%s: %s packets, %s requests; kwatch read %ss, %d MB peak RSS\n' "$cap" "$packets" "$requests" "$ks" $((km / 1024))
	if ! command -v tshark >/dev/null 2>&1; then
		echo "$cap: tshark not installed, skipping the comparison (apt-get install tshark)"
		continue
	fi
	read -r ts tm trc < <(measure "$tmp/tshark.txt" tshark -n -r "$cap" \
		-o tcp.reassemble_out_of_order:TRUE -d tcp.port==9092,kafka \
		-T fields -E occurrence=f -e kafka.api_key -e kafka.correlation_id -e kafka.batch_size)
	if [ "$trc" -ne 0 ]; then
		echo "$cap: tshark failed (exit $trc):" >&2
		tail -5 "$tmp/stderr" >&2
		exit 1
	fi
	# A row with an API key is a packet that ends a Kafka frame; a batch
	# size means tshark dissected a record batch down to its records.
	read -r pdus batches < <(awk -F'\t' '$1 != "" { p++ } $3 != "" { b++ } END { print p + 0, b + 0 }' "$tmp/tshark.txt")
	printf '%s: tshark %ss, %d MB peak RSS, %s packets with Kafka frames, %s with record batches dissected; kwatch is %.1fx tshark'"'"'s speed\n' \
		"$cap" "$ts" $((tm / 1024)) "$pdus" "$batches" \
		"$(echo "$ts $ks" | awk '{ if ($2 > 0) print $1 / $2; else print 0 }')"
	if [ "$batches" -eq 0 ]; then
		echo "$cap: tshark dissected no record batch: its Kafka dissector does not know these Produce/Fetch versions"
	fi
done
