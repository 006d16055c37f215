// Package decode turns the two byte streams of a TCP connection into Kafka
// events: request and response headers, the few bodies kwatch audits
// (SPEC.md section 1), coverage events and connection boundaries.
//
// The decoder is pushed bytes and never pulls: the pipeline calls
// Conn.Feed for each reassembled chunk, Conn.Gap for a hole, Conn.Close at
// the end, and the Conn calls its Sink synchronously, in stream order, as
// soon as the last byte of a frame arrives. There is no goroutine and no
// io.Reader per stream.
//
// Recognition (docs/recognition.md, recog.go, scan.go): without --port, a
// connection seen from its start is a candidate until its first request
// (or the broker's answer, or the client's next request) shows it is
// Kafka; until then its bytes are held, nothing is emitted, and then they
// are fed through as if believed at once. One joined mid-stream is
// searched position by position and announced with its first whole frame.
// A connection given up is StateNotKafka and costs nothing more.
//
// Concurrency: the Conns of one Decoder (which share its options and the
// Event they emit) are used by one goroutine; Conns of different Decoders
// are independent. The package holds no mutable global state (the API
// version table is built once at init and never written again).
//
// Buffers: the bytes passed to Feed are borrowed for the duration of the
// call only; the Conn copies what it needs (a candidate's first bytes, at
// most 66 KiB per direction; a frame's size and header; and of the bodies
// of the rare APIs it decodes, only their identity fields, bounded by
// Kafka's own limits: see body.go) and counts down every other byte without
// buffering it; a frame that one Feed holds whole is parsed where it lies.
// The *Event handed to the Sink is reused, and shared by the Conns of one
// Decoder: it and its ClientID slice (which may point into the bytes being
// fed) are valid only during the Sink call (Event says who relies on it);
// strings in Body are copies. Raw SASL tokens and SaslAuthenticate
// bodies are never copied out.
package decode
