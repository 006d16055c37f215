// Package tlsdec decrypts TLS connections whose secrets are known, so that
// kwatch audits them as plaintext (SPEC.md section 2.1, "TLS with
// secrets"). It owns the key log (NSS key log text from a file, which may
// grow while kwatch runs, or from pcapng Decryption Secrets Blocks), the TLS
// record layer (records reassembled across segments, the hellos read for
// the client random, version and cipher suite) and record decryption: TLS
// 1.2 ECDHE with AES-GCM or ChaCha20-Poly1305 and TLS 1.3's three AEAD
// suites, KeyUpdate included, with Go's crypto only.
//
// Conn is the one type the pipeline uses: it is fed each side's stream as
// reassembly delivers it and hands decrypted application data to its
// Output, with the Meta of the packet that completed the record, exactly as
// reassembly hands plaintext to the decoder. When the key log is followed
// (live capture, KeyLog.Follow) and the secrets are not known yet, it holds
// records, up to Options.MaxHeld bytes; a record that fails to
// authenticate ends decryption for good (StatusFailed): nothing is ever
// decoded from garbage.
//
// Secrets are never logged or printed: Secrets' String says "redacted", and
// details name records and sides, never bytes.
//
// Concurrency: a Conn is used by one goroutine; a KeyLog is safe for
// concurrent use (the sharded pipeline's workers share one). No goroutine
// is started: a followed key log file is re-read by Poll, which Conns call
// on a miss at most once per 100 ms of packet time.
//
// Buffers: bytes passed to Feed are only read during the call; plaintext
// handed to Output is valid only during the call.
package tlsdec
