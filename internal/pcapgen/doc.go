// Package pcapgen writes scripted Kafka conversations as real TCP packets
// into pcap and pcapng files, so that every kwatch package can test itself
// against captures whose content is known byte for byte.
//
// It owns three things: Kafka frame encoding on top of kmsg (EncodeRequest,
// EncodeResponse and the body helpers), a conversation builder (Capture,
// Conn, Session) that turns frames into TCP segments with optional,
// deterministic perturbations (segmentation, reordering, retransmission,
// overlap, loss, missing handshake), and a streaming bulk generator
// (WriteBulk) for benchmarks.
//
// Perturbations never change payload bytes, only how they are cut into
// packets and in which order the packets appear, so a perturbed capture must
// decode to the same Kafka frames as the clean one (minus lost segments).
//
// Nothing here reads the wall clock: packet times start at BaseTime (or
// Options.Start) and advance by a fixed step per packet. Random choices come
// from math/rand/v2 seeded by Options.Seed, so equal inputs give equal files.
//
// Concurrency: a Capture and its Conns are not safe for concurrent use; build
// one capture per goroutine. Buffers: frames passed to Send, Reply and Raw are
// copied into packets before the call returns, so callers may reuse them;
// Packets returns the capture's own slices, which callers must not modify.
//
// pcapgen imports no other kwatch package: it sits below all of them.
package pcapgen
