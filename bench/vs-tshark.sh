#!/usr/bin/env bash
# Runs `kwatch read` (full audit) and tshark's Kafka dissector on the same
# captures and prints wall time, peak resident memory and kwatch's speed as a
# ratio of tshark's. Skips tshark politely where it is not installed.
#
#   KWATCH=./kwatch bench/vs-tshark.sh CAPTURE...
#
# REPEAT=N runs each tool N times, taking turns, and keeps each one's
# fastest run: on a busy machine one run can be several times too slow.
# The peak RSS comes from one more run of each under /usr/bin/time.
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

# timed OUT CMD...: runs CMD once with its stdout in OUT and prints
# "seconds exit-status", the wall time from bash's own clock (millisecond
# precision, no extra process; kwatch read exits 1 when it has findings,
# which is not a failure here).
timed() {
	local out=$1 rc=0 s
	shift
	s=$({ TIMEFORMAT=%3R; time "$@" >"$out" 2>"$tmp/stderr"; } 2>&1) || rc=$?
	echo "${s##*$'\n'} $rc"
}

# rss CMD...: the peak resident memory of one run of CMD, in KB.
rss() {
	/usr/bin/time -o "$tmp/time" -f '%M' "$@" >/dev/null 2>&1 || true
	tail -1 "$tmp/time"
}

# min A B
min() { awk -v a="$1" -v b="$2" 'BEGIN { print (b == "" || a < b) ? a : b }'; }

have_tshark=1
command -v tshark >/dev/null 2>&1 || have_tshark=0

for cap in "$@"; do
	args=(read --format json)
	[ -n "$workers" ] && args+=(--workers "$workers")
	tshark_cmd=(tshark -n -r "$cap" -o tcp.reassemble_out_of_order:TRUE -d tcp.port==9092,kafka
		-T fields -E occurrence=f -e kafka.api_key -e kafka.correlation_id -e kafka.batch_size)
	# kwatch and tshark take turns, so that both see the same moods of a
	# shared machine; each keeps its fastest run, and every round's ratio
	# is printed too.
	ks="" ts="" rounds=""
	for ((i = 0; i < repeat; i++)); do
		read -r k krc < <(timed "$tmp/kwatch.json" "$kwatch" "${args[@]}" "$cap")
		if [ "$krc" -gt 1 ]; then
			echo "$cap: kwatch read failed (exit $krc):" >&2
			cat "$tmp/stderr" >&2
			exit 1
		fi
		ks=$(min "$k" "$ks")
		[ "$have_tshark" -eq 1 ] || continue
		read -r t trc < <(timed "$tmp/tshark.txt" "${tshark_cmd[@]}")
		if [ "$trc" -ne 0 ]; then
			echo "$cap: tshark failed (exit $trc):" >&2
			tail -5 "$tmp/stderr" >&2
			exit 1
		fi
		ts=$(min "$t" "$ts")
		rounds+=$(awk -v t="$t" -v k="$k" 'BEGIN { printf " %.0fx", t / k }')
	done
	# The first "packets" and "requests" are the capture's totals.
	packets=$(sed -n 's/^ *"packets": \([0-9]*\),*$/\1/p' "$tmp/kwatch.json" | head -1)
	requests=$(sed -n 's/^ *"requests": \([0-9]*\),*$/\1/p' "$tmp/kwatch.json" | head -1)
	km=$(rss "$kwatch" "${args[@]}" "$cap")
	printf '%s: %s packets, %s requests; kwatch read %ss, %d MB peak RSS\n' "$cap" "$packets" "$requests" "$ks" $((km / 1024))
	if [ "$have_tshark" -eq 0 ]; then
		echo "$cap: tshark not installed, skipping the comparison (apt-get install tshark)"
		continue
	fi
	tm=$(rss "${tshark_cmd[@]}")
	# A row with an API key is a packet that ends a Kafka frame; a batch
	# size means tshark dissected a record batch down to its records.
	read -r pdus batches < <(awk -F'\t' '$1 != "" { p++ } $3 != "" { b++ } END { print p + 0, b + 0 }' "$tmp/tshark.txt")
	printf '%s: tshark %ss, %d MB peak RSS, %s packets with Kafka frames, %s with record batches dissected; kwatch is %.1fx tshark'"'"'s speed (round by round:%s)\n' \
		"$cap" "$ts" $((tm / 1024)) "$pdus" "$batches" \
		"$(echo "$ts $ks" | awk '{ if ($2 > 0) print $1 / $2; else print 0 }')" "$rounds"
	if [ "$batches" -eq 0 ]; then
		echo "$cap: tshark dissected no record batch: its Kafka dissector does not know these Produce/Fetch versions"
	fi
done
