// Package tcpasm is gopacket's TCP reassembly, forked for kwatch.
//
// It is github.com/gopacket/gopacket/reassembly as released in gopacket
// v1.7.7 (tcpassembly.go, memory.go, and their tests), under gopacket's
// BSD license: see LICENSE in this directory. gopacket describes it so:
//
// The reassembly package implements uni-directional TCP reassembly, for
// use in packet-sniffing applications. The caller reads packets off the
// wire, then presents them to an Assembler in the form of gopacket
// layers.TCP packets. The Assembler uses a user-supplied StreamFactory to
// create a user-defined Stream interface, then passes packet data in
// stream order to that object.
//
// # Why a fork
//
// kwatch's reassembly package must be built on gopacket's reassembly, and
// is; but gopacket's per-packet overhead was most of kwatch's profile on
// captures of many small packets: every packet took a read lock on the
// pool, hashed and compared a key of two gopacket.Flows (112 bytes) in a
// map, up to twice (forward, then reversed), locked its connection, and
// went through the general queueing code (page list checks, ScatterGather
// built through interfaces, atomics) even when it was simply the next
// in-order packet. kwatch runs one Assembler per worker goroutine and
// shares nothing, so the locking buys it nothing. The fork keeps
// gopacket's logic and Stream contract, and makes the common case cheap.
//
// # Concurrency
//
// Single goroutine: an Assembler, its StreamPool and any other Assembler
// sharing that pool must be used by one goroutine. Stream and
// StreamFactory methods run inside Assembler methods and must not call
// the Assembler, except that StreamFactory.New may (the pool looks the
// connection up again after it).
//
// # Changes from gopacket v1.7.7
//
//   - Package name tcpasm; gopacket's package comment moved here.
//   - No locking: StreamPool's RWMutex, each connection's Mutex, the
//     Assembler's loop that retried a connection another Assembler had
//     removed or reused, and the atomic page counter are gone (the count is
//     a plain int64). gopacket's test of two Assemblers racing on two
//     goroutines (TestConnectionReusedWhileWaitingForLock) is dropped.
//   - Connection key: instead of a map keyed by [2]gopacket.Flow, looked up
//     for the packet's flow and then its reverse, a connection is keyed by
//     its two endpoints (address as 16 bytes, IPv4 mapped into IPv6, then
//     port, address length and endpoint type) with the lesser first, so
//     one lookup finds both directions; which half a packet belongs to
//     follows from whether its source is the lesser endpoint
//     (connection.c2sFromLo). Keys live in an open-addressing table with a
//     seeded wyhash-style hash (connTable), and the previous packet's
//     connection is tried before hashing. Ports are read from
//     layers.TCP.SrcPort and DstPort rather than from the raw port bytes
//     TransportFlow reads, for the key and for the transport flow given to
//     StreamFactory.New (portFlow): a layers.TCP filled by hand, not by
//     DecodeFromBytes, works.
//   - New entry point AssembleAddrs: the packet's endpoints as
//     netip.AddrPort and its time, so that no gopacket.Flow is built per
//     packet (only for StreamFactory.New) and no CaptureInfo is copied out
//     of an interface call. Accept is then given
//     gopacket.CaptureInfo{Timestamp: ts}; callers whose context carries
//     more use AssembleWithContext.
//   - In-order fast path (in accepted): a packet that starts exactly at
//     nextSeq, is not a RST, on a half with no page queued or kept and no
//     FIN seen ahead, is handed to ReassembledSG as a one-packet
//     ScatterGather without going through handleBytes, checkOverlap,
//     buildSG and cleanSG (unless the Stream calls KeepFrom, which takes
//     the general cleanSG). Stream calls and every value they can read
//     (Lengths, Fetch, Info, Stats, CaptureInfo) are those of the general
//     path; equiv_test.go checks this against gopacket v1.7.7 and against
//     the general path. The ScatterGather of such a packet reads it
//     directly (reassemblyObject.live) rather than through byteContainer.
//   - Bug fix: pageCache.next clears a page's start, end and first flags.
//     gopacket reuses pages without clearing them, and convertToPages sets
//     end on a packet's last page only, so a page that had ended a stream
//     could end another one early when reused in the middle of a
//     multi-page packet; which page gets reused depends on the order in
//     which flushes visit connections (map order), so gopacket's output
//     could differ from run to run. Hence equiv_test.go compares with
//     gopacket on packets of one page only.
//   - Debug logging removed, with the assembly_debug_log and
//     assembly_memuse_log flags (global flags, and a branch each on every
//     packet), Assembler.dump, StreamPool.Dump, key.String and key.Reverse.
//   - DefaultAssemblerOptions (mutable global) removed: NewAssembler
//     starts with zero options, which were its values.
//   - Assemble, which stamps packets with time.Now, moved to a test file
//     for gopacket's tests: kwatch takes time from packets.
//   - Flushes reuse one slice for their snapshot of the pool.
//   - Pages hold 1,800 bytes, not 1,900, so that a page fits the 2,048-byte
//     size class (2,304 before).
//   - The pool allocates connections in slabs that double up to 4,096,
//     not without bound.
//   - Per-connection operations for kwatch: Streams (the pooled
//     connections), FlushConn (flush, close and optionally drop one
//     connection; FlushAll is built on it, and FlushAllOrdered is gone),
//     StreamPool.OnRemove (told of each connection dropped), and page
//     groups (Assembler.PageGroup: the out-of-order cap per group of
//     connections, each connection's pages taken from its group's cache).
//   - One owner of positions: Stream.Accept is given the reverse
//     direction's next sequence number too (revSeq), a direction's nextSeq
//     moves past the bytes of a ScatterGather before ReassembledSG is
//     called (a FIN's sequence number after, as before),
//     Assembler.NextSeq reads it and Assembler.Queued where the queue
//     ahead of a hole starts, also from inside a Stream call. kwatch's
//     reassembly keeps no copy of either.
//   - page and livePacket share their fields and getters (chunk); pages
//     link through dlist.Links and leave a queue by dlist.Unlink, which
//     kwatch's connection table uses too, rather than by five unlinks
//     written out.
//   - A page keeps its packet's CaptureInfo by value (ci), taken when it is
//     cut: gopacket asks the packet's AssemblerContext again when the page
//     is delivered, which for a caller that reuses one context (kwatch
//     does, to allocate nothing) is the current packet's. ScatterGather
//     has Pieces, to walk the delivered bytes packet by packet.
//   - Assembler.SkipAckedHoles (off by default, so equiv_test.go compares
//     like with like): a hole that the other direction acknowledges is
//     given up at once (skipAcked) rather than at a flush.
//   - halfconnection and the per-packet part of AssembleWithContext are
//     laid out and split (accepted, general) for the fast path; the logic
//     is gopacket's. gopacket's min helper gave way to the builtin.
//   - InOrder and TakeInOrder (inorder.go): AssembleAddrs split in two for
//     the caller's own fast path, so that the common in-order segment is
//     neither given to Accept nor wrapped in a ScatterGather: InOrder finds
//     the connection, through a cache by ports (find) that compares
//     addresses rather than building and hashing a key, and tells whether
//     the segment is the common case; the caller decides as its Accept
//     would, and TakeInOrder moves the position past the payload.
//     connection.gen tells whether a cached connection object still has
//     the same key; StreamPool.remove drops the entry of the connection it
//     removes.
//   - lastSeen and the pool's floor are also kept in Unix nanoseconds
//     (UnixNanos), so that an in-order packet compares integers, not
//     time.Times; halfconnection's created and ackSeq, never read but by
//     String and Dump, are gone (32 bytes a direction).
//   - tcpcheck.go is kept only as tcpcheck_helper_test.go (and its own
//     tests, tcpcheck_test.go, are not taken): kwatch does not use the TCP
//     state machine, gopacket's FSM tests of the Assembler do.
//   - Tests: page counts read as a.pc.used, the pool's size as
//     pool.conns.n and its connections through connections(nil);
//     equiv_test.go, conntable_test.go and assemble_test.go are new.
//     cap2test.go is gopacket's generator of test cases from captures
//     (build-ignored).
package tcpasm
