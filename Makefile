# Performance targets (see bench/doc.go). The large captures (>1 GB) are built
# on first use into $(KWATCH_BENCH_DIR) and never committed.
KWATCH_BENCH_DIR ?= $(or $(TMPDIR),/tmp)/kwatch-bench
BENCHTIME ?= 5x
export KWATCH_BENCH_DIR

# Profile-guided optimization: cmd/kwatch/default.pgo is a CPU profile of
# kwatch read on both captures; go build uses it for cmd/kwatch by itself,
# and the benchmarks below are built with it so that they measure that code.
PGO := $(CURDIR)/cmd/kwatch/default.pgo

.PHONY: bench bench-tshark profile pgo hostile

# kwatch's throughput beside the floor's, measured in one run, as a ratio.
bench:
	go test -pgo=$(PGO) ./bench -run '^$$' -bench Ratio -benchtime $(BENCHTIME) -timeout 60m

# kwatch read against tshark on the same captures (skips without tshark),
# the main ones and the "-v8" variants that tshark 4.0 dissects fully.
# The binary is static (CGO_ENABLED=0), as a release build would be: without
# the dynamic loader kwatch starts about 5 ms sooner on the development VM.
bench-tshark:
	CGO_ENABLED=0 go build -o $(KWATCH_BENCH_DIR)/kwatch ./cmd/kwatch
	KWATCH=$(KWATCH_BENCH_DIR)/kwatch REPEAT=$(or $(REPEAT),3) bench/vs-tshark.sh $$(go run ./bench/cmd/buildcaps)

# CPU profiles of kwatch's analysis, kept out of git under $(KWATCH_BENCH_DIR).
profile:
	go test -pgo=$(PGO) ./bench -run '^$$' -bench 'Read/packet-heavy.pcap/workers=1' -benchtime 5x \
		-cpuprofile $(KWATCH_BENCH_DIR)/cpu.pprof -o $(KWATCH_BENCH_DIR)/bench.test
	go tool pprof -top -nodecount 40 $(KWATCH_BENCH_DIR)/bench.test $(KWATCH_BENCH_DIR)/cpu.pprof

# Refreshes cmd/kwatch/default.pgo from kwatch read on both captures (built
# without the old profile, so that it does not feed on itself).
pgo:
	go test -pgo=off ./bench -run '^$$' -bench 'Read/(packet|byte)-heavy.pcap/workers=1' -benchtime 20x \
		-cpuprofile $(KWATCH_BENCH_DIR)/pgo.pprof -o $(KWATCH_BENCH_DIR)/bench-pgo.test
	cp $(KWATCH_BENCH_DIR)/pgo.pprof $(PGO)

# Issue 12's hostile scenarios against the built binary: a table of capture
# size, time ratio, peak RSS and target per scenario; fails when one is
# missed. KWATCH_BIN=PATH measures another build instead.
hostile:
	KWATCH_HOSTILE=1 go test ./hostile -run 'TestHostile$$' -v -count=1 -timeout 60m
