// Package capture owns kwatch's packet sources and link-layer decoding: it
// reads pcap and pcapng files (optionally gzip-compressed, several files as
// one capture), captures live from a Linux interface, and decodes the link,
// IP and TCP headers of each packet into a Segment for the reassembly stage,
// unwrapping tunnels (tunnel.go) and reassembling IP fragments within
// bounds (frag.go) on the way.
//
// Concurrency: a Source and a LayerDecoder are used by one goroutine at a
// time. The exceptions are a live Source's Stop (end after what the kernel
// has captured) and Close (end now), which may be called from any goroutine
// to unblock a pending Next.
//
// Buffers: a Source owns the bytes of the Packet it returns; Packet.Data is
// valid only until the next call to Next (a live Source's points into the
// kernel's capture ring, whose block goes back to the kernel then). A
// LayerDecoder fills a caller-owned Segment whose TCP payload points into
// Packet.Data or, for a datagram reassembled from fragments, into the
// decoder's own buffer: it is valid until the next Next or the next
// Decode, whichever comes first. Whoever keeps bytes beyond that copies
// them. Next and Decode do not allocate per packet (the fragment table
// grows its buffers up to its bounds, then reuses them).
package capture
