// Package livebench measures kwatch live against Kafka traffic at line rate:
// does it keep up with 1 Gbit/s on loopback without kernel drops, and does
// it say so when it cannot.
//
// A load generator written for the test (loadgen_test.go) plays both ends
// of a Kafka conversation over real TCP on 127.0.0.1: a minimal broker that
// answers ApiVersions and Produce, and clients on several connections that
// open with ApiVersions v4 (client ID and KIP-1313 header instance ID), then
// pipeline Produce v11 requests with large record batches, paced to a byte
// rate. The frames are pcapgen's encoders, so they are what the rest of the
// test suite already decodes. live_test.go runs the real kwatch binary on lo
// while the generator runs and compares kwatch's final JSON report with
// what the generator counted; it also stalls kwatch on purpose and checks
// that the kernel drops are reported rather than hidden.
//
// Everything lives in _test.go files; the tests need root (CAP_NET_RAW and
// kwatch's privilege drop) and skip without it. Like package e2e, this
// package reads the wall clock: its traffic is real and paced in real time.
//
// Concurrency: each generator connection has a sender goroutine and a
// receiver goroutine (the receiver returns window credits to the sender);
// the broker has one goroutine per accepted connection. Counters are
// per-connection and read after the goroutines end.
package livebench
