package decode

import (
	"encoding/binary"
	"fmt"

	"github.com/kwatch/kwatch/flow"
	"github.com/kwatch/kwatch/internal/enum"
)

// ConnState is what the decoder has concluded about a connection.
type ConnState uint8

const (
	// StateProbing: no plausible Kafka request seen yet; no events.
	StateProbing ConnState = iota
	// StateKafka: recognised as Kafka; events flow.
	StateKafka
	// StateTLS: the client spoke TLS first; bytes are ignored.
	StateTLS
	// StateNotKafka: something else; ignored silently.
	StateNotKafka
)

var stateNames = [...]string{StateProbing: "probing", StateKafka: "kafka", StateTLS: "tls", StateNotKafka: "not-kafka"}

func (s ConnState) String() string { return enum.Name(stateNames[:], s, "unknown") }

// stage is where a half (one direction) is in its byte stream.
type stage uint8

const (
	// stScan: the position is unknown (mid-stream join, gap, framing
	// error); positions are tried one by one for a plausible frame start.
	stScan stage = iota
	// stSize: reading a frame's 4-byte size.
	stSize
	// stHead: buffering a request header or a response's correlation ID.
	stHead
	// stBody: buffering the whole frame of an API whose body is decoded.
	stBody
	// stSkip: counting down the rest of a frame without copying it.
	stSkip
	// stDead: the connection is not decoded (TLS, not Kafka, closed).
	stDead
)

// frameKind says what the frame being read will produce when it ends.
type frameKind uint8

const (
	frNone frameKind = iota
	frRequest
	frResponse
	frUnmatched
	frRawToken
	frBad // a frame with a trustworthy length but a bad header: skipped
)

// Half indexes: the decoder's own orientation, after any swap.
const (
	reqHalf  = 0 // the client: requests
	respHalf = 1 // the broker: responses
)

const (
	// maxHeader bounds a buffered request header (client ID plus tagged
	// fields); a longer one is a framing error, skipped by length.
	maxHeader = 64 << 10
	// maxScanNeed bounds what a resync candidate may need to be judged:
	// size, fixed header, a client ID and tags of sane length.
	maxScanNeed = 4 + 2048
	// probeLimit: scanning this many bytes without a plausible request
	// while probing (no --port) gives the connection up as not Kafka.
	probeLimit = 8 << 20
	// swapEvidence: bytes the given client direction must have shown
	// without a plausible request before the broker direction's requests
	// are believed (and client and broker swapped).
	swapEvidence = 64
	// minNamed: a request in the broker direction that names its client
	// with at least this many printable bytes is believed at once.
	minNamed = 3
	// headChunk is how much of a frame stHead buffers when the packet
	// has it, before parsing the header (which may ask for more).
	headChunk = 128
	// keepBuf: a half keeps its frame buffer between frames up to this
	// capacity (a typical header's); a larger one, grown for a long header
	// or an identity body, is let go when its frame ends, so that an idle
	// connection holds no more.
	keepBuf = 4 << 10
	// DefaultMaxInFlight is the default of Options.MaxInFlight.
	DefaultMaxInFlight = 4096
)

// half is the decoder state of one direction. Fields used for every frame
// come first, so that a frame touches few cache lines of it. A half is
// kept for each direction of every open connection: what few of them need
// is behind x, and what only the request half (the parsed header) or the
// response half (the request answered) needs is in the Conn.
type half struct {
	role uint8 // reqHalf or respHalf
	st   stage
	raw  bool // raw SASL tokens expected on this half
	kind frameKind
	// walking: the header's tag walk stopped short (its progress is in
	// x.walk, when x is set; see headDone)
	walking bool
	sizeN   uint8
	sizeBuf [4]byte
	pre     [3]byte // first bytes of the half, for the TLS tests

	size int // current frame's size (bytes after the int32)
	got  int // bytes of the current frame consumed so far
	need int // bytes of the frame buffered before the next parse attempt

	// cutAt is 1 + the offset in the frame of its first byte the snap
	// length cut (see cut.go); 0 if none was.
	cutAt int
	buf   []byte
	// seen counts bytes fed to this half.
	seen int64

	x *halfRare // nil until needed
}

// halfRare is what a half needs only now and then, allocated the first
// time: the resync buffers (a connection joined mid-stream, or after a
// loss), the tag walk of a long header in pieces, a bad frame's reason.
type halfRare struct {
	walk   tagWalk // stHead: the header's tag walk so far
	detail string  // frBad: why
	// scan and spare are the resync buffers, used in turn (see scanFeed).
	scan, spare []byte
	// scanAt is the packet that completed the frame held in scan, once one
	// did (see answersHeld); zero otherwise.
	scanAt flow.Meta
	// probed counts bytes rejected by scanning while the connection is probed.
	probed int64
}

// rare returns h.x, allocated if need be.
func (h *half) rare() *halfRare { return ensure(&h.x) }

// ensure returns *p, allocated if need be: the state a Conn keeps behind
// a pointer until it needs it.
func ensure[T any](p **T) *T {
	if *p == nil {
		*p = new(T)
	}
	return *p
}

// Conn decodes one TCP connection. It is not safe for concurrent use.
// Fields used for every frame come first (see half). One is kept for
// every open connection: what few connections need is behind x.
type Conn struct {
	state   ConnState
	closed  bool
	partial bool
	// fromStart: the SYN or SYN-ACK was seen.
	fromStart bool
	swapped   uint8 // 1 when Client and Broker of id were swapped
	// named: the last request candidate found had a printable client ID
	// of minNamed bytes or more (see accept).
	named bool
	// judged: a connection seen from its start without --port was judged
	// (recog.go); cand holds its first bytes until then.
	judged bool
	// quiet: a connection joined mid-stream was taken for Kafka at
	// x.quietAt (scan.go's accept) but says so only when its first request
	// or response is whole (announce).
	quiet bool
	// lastCorr is the correlation ID of the last request (once there was
	// one: haveCorr): clients number a connection's requests upwards, so
	// after a gap it tells a real request header from bytes that look like
	// one.
	lastCorr int32
	// corr: the response half's frResponse, the frame's correlation ID
	// (req is the request it answers).
	corr int32
	// d holds what the Conns of one goroutine share: the options and the
	// Event handed to the sinks.
	d    *Decoder
	sink Sink
	seq  uint64

	pending pendingSet
	halves  [2]half
	// hdr: the request half's frRequest, its parsed header (ClientID
	// re-pointed at emission).
	hdr RequestHeader
	// req: the response half's frResponse, the request answered.
	req inflight

	// id is the caller's (Decoder.NewConn): the Conn swaps its Client and
	// Broker when it finds the requests flowing the other way.
	id *flow.ConnID

	// slot is the sink's (Event.Slot).
	slot any
	cand *cand
	x    *connRare // nil until needed
}

// connRare is what a connection needs only now and then, allocated the
// first time: losses and cuts before it was recognised as Kafka, raw SASL
// after a SaslHandshake v0, when a connection joined mid-stream was taken
// for Kafka.
type connRare struct {
	// earlyGaps and earlyGapBytes: losses before the connection was
	// recognised as Kafka, reported when it is; earlyCuts likewise counts
	// the packets the snap length cut, by flow.Side.
	earlyGaps     int
	earlyGapBytes int64
	earlyCuts     [2]int
	// raw SASL (after a successful SaslHandshake v0)
	rawSeq     uint64 // requests numbered above this were sent after raw mode began
	rawBytes   int64  // of raw SASL tokens skipped, not yet reported
	rawClient  []byte // client ID of the handshake request
	rawNull    bool
	rawEmitted bool
	quietAt    flow.Meta
}

// haveCorr reports whether a request was seen, whose correlation ID is
// lastCorr.
func (c *Conn) haveCorr() bool { return c.seq > 0 }

// rare returns c.x, allocated if need be.
func (c *Conn) rare() *connRare { return ensure(&c.x) }

// Decoder is what the Conns used by one goroutine share: their Options,
// and the one Event they hand to their sinks in turn (a connection's
// decoder holds no Event of its own: at a hundred thousand connections
// that was a third of its memory). Its Conns must all be used by the same
// goroutine, as their sinks are called while the Event is filled.
type Decoder struct {
	opts Options
	ev   Event
	// walk is a request header's tag walk while headDone parses it; a
	// walk that stops short is kept in its half (halfRare).
	walk tagWalk
	// evPDU: the Conn whose request or response ev last was, while ev's
	// fields other than those beginPDU writes are zero, or Conn, Slot and
	// FromStart, which do not change while it is set: its next request or
	// response event need not clear the whole Event again (see beginPDU).
	evPDU *Conn
}

// NewDecoder returns a Decoder whose Conns decode with opts.
func NewDecoder(opts Options) *Decoder {
	if opts.MaxFrame <= 0 {
		opts.MaxFrame = DefaultMaxFrame
	}
	if opts.MaxInFlight <= 0 {
		opts.MaxInFlight = DefaultMaxInFlight
	}
	return &Decoder{opts: opts}
}

// NewConn returns a decoder for one connection. fromStart says whether the
// SYN or SYN-ACK was seen: the streams then start on frame boundaries.
//
// id is kept, not copied (the caller holds the connection's ID already: a
// copy would be 72 bytes more per open connection): the caller must not
// change *id while the Conn is used, and the Conn swaps its Client and
// Broker when it finds the requests flowing the other way (ID).
func (d *Decoder) NewConn(id *flow.ConnID, fromStart bool, sink Sink) *Conn {
	c := &Conn{id: id, fromStart: fromStart, d: d, sink: sink}
	c.pending.init(d.opts.MaxInFlight)
	c.halves[reqHalf].role = reqHalf
	c.halves[respHalf].role = respHalf
	if !fromStart {
		c.halves[reqHalf].st = stScan
		c.halves[respHalf].st = stScan
	} else {
		c.halves[reqHalf].st = stSize
		c.halves[respHalf].st = stSize
	}
	return c
}

// NewConn returns a decoder for one connection with a Decoder of its own
// (see Decoder.NewConn).
func NewConn(id flow.ConnID, fromStart bool, opts Options, sink Sink) *Conn {
	return NewDecoder(opts).NewConn(&id, fromStart, sink)
}

// ID returns the connection's ID, with Client and Broker swapped when the
// decoder found the requests flowing the other way.
func (c *Conn) ID() flow.ConnID { return *c.id }

// State returns what the decoder concluded about the connection so far.
func (c *Conn) State() ConnState { return c.state }

// InFlightDropped counts requests forgotten unanswered because
// Options.MaxInFlight requests were already awaiting an answer.
func (c *Conn) InFlightDropped() uint64 { return c.pending.dropped }

func (c *Conn) halfFor(dir flow.Side) *half { return &c.halves[int(dir)^int(c.swapped)] }

// Feed decodes bytes that arrived on dir; at is the packet that carried
// them. p is only read during the call.
func (c *Conn) Feed(dir flow.Side, p []byte, at flow.Meta) {
	if c.state == StateKafka && !c.closed && len(p) > 0 {
		// The steady state, first: none of the tests below applies to a
		// connection already recognised.
		h := c.halfFor(dir)
		h.seen += int64(len(p))
		if h.st == stSize && h.sizeN == 0 {
			// Whole frames, most often all of p: process is not needed.
			if p = c.wholeFrames(h, p, at); len(p) == 0 {
				return
			}
		}
		c.process(h, p, at)
		return
	}
	if c.closed || len(p) == 0 || c.state == StateTLS || c.state == StateNotKafka {
		return
	}
	if c.judging() || c.tlsFirst(dir, p) {
		c.holdFeed(dir, p, at)
		return
	}
	if c.state == StateProbing && c.d.opts.AssumeKafka && !c.mayBeTLS(dir, p) {
		c.recognise(at)
	}
	h := c.halfFor(dir)
	if c.state == StateProbing && dir == flow.Client && c.swapped == 0 && h.seen < 3 && c.looksTLS(h, p) {
		c.state = StateTLS
		c.halves[reqHalf].st, c.halves[respHalf].st = stDead, stDead
		c.begin(KindCoverage, at)
		c.d.ev.Coverage = TLSConnection
		c.d.ev.Detail = "client's first bytes are a TLS record"
		c.emit()
		return
	}
	h.seen += int64(len(p))
	c.process(h, p, at)
}

// mayBeTLS reports whether the bytes seen so far, p being the latest on
// dir, may still turn out to be TLS, so that a connection on a --port port
// is not taken for Kafka before looksTLS has seen the client's first bytes.
// From the start only a client handshake record can. Joined mid-stream, the
// client's first three bytes decide (a TLS record header, type 0x14-0x17,
// version 0x03 0x00-0x04, which as a Kafka frame size would be over 300 MB,
// never a frame): until they are seen, the broker's bytes, which may fall
// anywhere inside a record, decide nothing. The answer depends on the first
// three bytes of the client's half alone (kept in h.pre), not on how they
// were chunked.
func (c *Conn) mayBeTLS(dir flow.Side, p []byte) bool {
	h := c.halfFor(dir)
	if c.fromStart {
		return dir == flow.Client && h.seen == 0 && p[0] == 0x16
	}
	if dir != flow.Client {
		return c.halfFor(flow.Client).seen < int64(len(h.pre))
	}
	return tlsRecordStart(h.prefix(p))
}

// looksTLS: a TLS client starts with a handshake record (0x16). Joined
// mid-stream, a lone 0x16 proves nothing: only a record header (type
// 0x14-0x17, version 0x03 0x00-0x04) at the first byte seen does. The first
// three bytes are kept in h.pre so the answer does not depend on chunking
// (no resync candidate can be accepted within three bytes).
func (c *Conn) looksTLS(h *half, p []byte) bool {
	if c.fromStart {
		return h.seen == 0 && p[0] == 0x16
	}
	pre := h.prefix(p)
	return len(pre) == len(h.pre) && tlsRecordStart(pre)
}

// prefix keeps the half's first bytes in h.pre, p being the latest (not
// yet counted in h.seen), and returns those known so far.
func (h *half) prefix(p []byte) []byte {
	if h.seen < int64(len(h.pre)) {
		copy(h.pre[h.seen:], p)
	}
	return h.pre[:min(h.seen+int64(len(p)), int64(len(h.pre)))]
}

// tlsRecordStart reports whether b, as far as it goes, can begin a TLS
// record header: type 0x14-0x17, version 0x03 0x00-0x04.
func tlsRecordStart(b []byte) bool {
	return b[0] >= 0x14 && b[0] <= 0x17 && (len(b) < 2 || b[1] == 0x03) && (len(b) < 3 || b[2] <= 0x04)
}

// Gap says lost bytes (0 if unknown) are missing on dir: the position in
// the stream is lost unless the hole falls inside a body being skipped.
func (c *Conn) Gap(dir flow.Side, lost int, at flow.Meta) {
	if c.closed || c.state == StateTLS || c.state == StateNotKafka {
		return
	}
	if c.judging() {
		c.holdGap(dir, lost, at)
		return
	}
	if c.state == StateProbing && c.d.opts.AssumeKafka && (c.fromStart || c.halfFor(flow.Client).seen >= 3) {
		c.recognise(at)
	}
	h := c.halfFor(dir)
	c.partial = true
	if c.state == StateKafka && !c.quiet {
		c.streamGap(lost, "bytes lost on "+dir.Direction(), at)
	} else {
		// Nothing is reported before the connection is known to be Kafka;
		// the loss is, once it is (recognise).
		x := c.rare()
		x.earlyGaps++
		x.earlyGapBytes += int64(lost)
	}
	if h.st == stSkip && lost > 0 && lost < h.size-h.got {
		// The hole is inside a body nobody reads: the frame's length still
		// says where the next one starts.
		h.got += lost
		return
	}
	c.resync(h)
}

// Truncated reports a packet on dir cut by the capture's snap length; the
// reassembler follows it with a Skip (see cut.go), or a Gap when the number
// of bytes cut is unknown.
func (c *Conn) Truncated(dir flow.Side, at flow.Meta) {
	if (c.state == StateProbing || c.quiet) && !c.closed {
		c.rare().earlyCuts[dir]++ // reported if and when the connection is announced as Kafka
		return
	}
	if c.closed || c.state != StateKafka {
		return
	}
	c.truncated(dir, at)
}

func (c *Conn) truncated(dir flow.Side, at flow.Meta) {
	c.begin(KindCoverage, at)
	c.d.ev.Coverage = TruncatedPacket
	c.d.ev.Detail = "packet cut by the capture's snap length on " + dir.Direction()
	c.emit()
}

// Close ends the connection: a pending raw-SASL count is reported, then
// KindConnEnd if the connection was recognised as Kafka. Bytes of an
// unfinished frame are dropped. A connection that carried bytes and was
// never recognised ends as StateNotKafka. Later calls are ignored.
func (c *Conn) Close(at flow.Meta) {
	if c.closed {
		return
	}
	if c.cand != nil {
		// The end: judged on what was held (TLS, or a frame that was not
		// whole), else not Kafka.
		c.settle()
	}
	c.closed = true
	if c.quiet || c.state == StateProbing && !c.d.opts.AssumeKafka && c.halves[reqHalf].seen+c.halves[respHalf].seen > 0 {
		// Bytes came and none was found to be Kafka's.
		c.giveUp()
	}
	if c.state != StateKafka {
		return
	}
	c.flushRaw(at)
	c.begin(KindConnEnd, at)
	c.emit()
}

// announce says that a quiet connection is Kafka, as of when it was
// taken for it: its first request or response is whole.
func (c *Conn) announce() {
	c.quiet = false
	c.recognise(c.x.quietAt)
}

// recognise moves a probing connection to StateKafka and announces it.
func (c *Conn) recognise(at flow.Meta) {
	c.state = StateKafka
	c.begin(KindConnStart, at)
	c.emit()
	if !c.fromStart {
		c.begin(KindCoverage, at)
		c.d.ev.Coverage = MidstreamJoin
		c.d.ev.Detail = "connection joined mid-stream"
		c.emit()
	}
	if c.x != nil && c.x.earlyGaps > 0 {
		// Lost before the first request was found (the first request
		// itself, perhaps): one gap for all of them.
		c.begin(KindCoverage, at)
		c.d.ev.Coverage = StreamGap
		c.d.ev.Bytes = c.x.earlyGapBytes
		c.d.ev.Detail = "bytes lost before the connection was recognised as Kafka"
		c.emit()
	}
	c.flushEarlyCuts(at)
}

// resync drops h's position: it scans for the next plausible frame.
func (c *Conn) resync(h *half) {
	h.st = stScan
	h.sizeN = 0
	h.buf = h.buf[:0]
	if h.x != nil {
		h.x.scan = h.x.scan[:0]
	}
	h.kind = frNone
	c.partial = true
}

// begin starts a new event with the fields every event carries.
func (c *Conn) begin(k Kind, at flow.Meta) {
	c.d.ev = Event{Kind: k, Conn: *c.id, Slot: &c.slot, Frame: at.Frame, Time: at.Time, FromStart: c.fromStart, Partial: c.partial}
	c.d.evPDU = nil
}

// beginPDU starts a request or response event (for requestEvent and
// responseEvent, which write every header field). It is begin without
// clearing the whole Event (a few hundred bytes) when only header fields
// were written since the last clear, which evPDU says: Body, Coverage,
// Detail and Bytes must be zero when it is set (a decoded body clears it),
// and Conn, Slot and FromStart as begin wrote them for evPDU's Conn (a swap
// of client and broker clears it). The Decoder's Conns take turns: another
// Conn's request or response leaves only those to write.
func (c *Conn) beginPDU(k Kind, at flow.Meta) *Event {
	e := &c.d.ev
	if c.d.evPDU != c {
		if c.d.evPDU == nil {
			*e = Event{}
		}
		// Decrypted: the pipeline's TLS layer marks the events of a
		// decrypted connection (pipeline/tls.go), as they pass.
		e.Conn, e.Slot, e.FromStart, e.Decrypted = *c.id, &c.slot, c.fromStart, false
		c.d.evPDU = c
	}
	e.Kind, e.Frame, e.Time, e.Partial = k, at.Frame, at.Time, c.partial
	e.Cut = CutNone
	return e
}

// requestEvent starts the event of the request whose header c.hdr holds,
// a frame of size bytes.
func (c *Conn) requestEvent(size int, at flow.Meta) {
	hd := &c.hdr
	e := c.beginPDU(KindRequest, at)
	e.APIKey, e.APIVersion, e.HeaderVersion = APIKey(hd.APIKey), hd.APIVersion, hd.HeaderVersion
	e.CorrelationID, e.Size = hd.CorrelationID, int32(size)
	e.ClientID, e.ClientIDNull = hd.ClientID, hd.ClientIDNull
	e.InstanceID, e.HasInstanceID, e.TagProblem = hd.InstanceID, hd.HasInstanceID, hd.TagProblem
	e.RequestFrame, e.RequestAmbiguous = 0, false
}

// responseEvent starts the event of the response whose correlation ID is
// c.corr, answering c.req, a frame of size bytes.
func (c *Conn) responseEvent(size int, at flow.Meta) {
	r := &c.req
	e := c.beginPDU(KindResponse, at)
	e.APIKey, e.APIVersion, e.HeaderVersion = APIKey(r.key), r.ver, r.respHV
	e.CorrelationID, e.Size = c.corr, int32(size)
	e.ClientID, e.ClientIDNull = nil, false
	e.InstanceID, e.HasInstanceID, e.TagProblem = UUID{}, false, TagOK
	e.RequestFrame, e.RequestAmbiguous = r.frame, r.reused
}

// emit hands the event to the sink. Nothing is said about a connection
// before it is recognised as Kafka, except that it is TLS.
func (c *Conn) emit() {
	if c.state != StateKafka && !(c.state == StateTLS && c.d.ev.Coverage == TLSConnection) {
		return
	}
	if c.sink != nil {
		c.sink.Event(&c.d.ev)
	}
}

// process runs p through h's state machine.
func (c *Conn) process(h *half, p []byte, at flow.Meta) {
	if h.st == stSize && h.sizeN == 0 {
		p = c.wholeFrames(h, p, at)
	}
	for len(p) > 0 {
		switch h.st {
		case stDead:
			return
		case stScan:
			c.scanFeed(h, p, at)
			return
		case stSize:
			if h.sizeN == 0 && len(p) >= 4 {
				h.sizeBuf = [4]byte(p)
				p = p[4:]
			} else {
				n := copy(h.sizeBuf[h.sizeN:], p)
				h.sizeN += uint8(n)
				p = p[n:]
				if h.sizeN < 4 {
					return
				}
			}
			p = c.startFrame(h, p, at)
		case stHead, stBody:
			if h.st == stHead && len(h.buf) == 0 && h.size <= len(p) && h.size <= maxHeader && c.state == StateKafka {
				n := h.size
				c.wholeFrame(h, p[:n:n], at)
				p = p[n:]
				continue
			}
			want := h.need
			if h.st == stHead {
				// Take a typical header at once rather than exactly what the
				// last parse asked for: each ask would re-parse it (size,
				// client ID, tag count, tag, tag size, tag value). The tags
				// a walk has not reached take two bytes at least each: all
				// those are taken at once (up to maxHeader), so that a
				// header of many tags is parsed once a packet, not once a
				// tag.
				want = max(want, min(h.size, headChunk))
				if w := h.x; h.walking && w != nil && w.walk.on {
					want = max(want, min(h.size, maxHeader, w.walk.off+2*int(min(w.walk.left, maxHeader))))
					if c := want; cap(h.buf) < c {
						if c > keepBuf {
							// A header that long: its room, once, rather
							// than a copy at each packet (want grows by
							// a little each time).
							c = min(h.size, maxHeader)
						}
						h.buf = append(make([]byte, 0, c), h.buf...)
					}
				}
			}
			n := min(want-len(h.buf), len(p))
			h.buf = append(h.buf, p[:n]...)
			h.got += n
			p = p[n:]
			if len(h.buf) < h.need {
				return
			}
			if h.st == stHead {
				c.headDone(h, at)
			} else {
				c.bodyProgress(h)
			}
		case stSkip:
			n := min(h.size-h.got, len(p))
			h.got += n
			p = p[n:]
		}
		if (h.st == stHead || h.st == stBody || h.st == stSkip) && h.got == h.size {
			c.finish(h, at)
		}
	}
}

// wholeFrame decodes a frame that p holds whole (h in stHead, nothing
// buffered yet) where it lies: h.buf points at it during the call instead of
// at a copy. The outcome is that of buffering it: a header parses the same
// from the whole frame as from the prefix the buffered path holds, and with
// the frame no larger than maxHeader that path never finds a header too
// long. In StateKafka, headDone neither recognises nor gives up.
func (c *Conn) wholeFrame(h *half, f []byte, at flow.Meta) {
	own := h.buf
	h.buf = f
	c.headDone(h, at)
	h.got = h.size
	c.finish(h, at)
	h.buf = own[:0] // keep no pointer into the caller's bytes (nor does finish)
}

// startFrame checks the size just read, before a byte of the frame is
// buffered. It returns what is left of p: after a framing error the 3 bytes
// after the bad size's first byte are scanned again.
func (c *Conn) startFrame(h *half, p []byte, at flow.Meta) []byte {
	size := int32(binary.BigEndian.Uint32(h.sizeBuf[:]))
	h.sizeN = 0
	lo := int32(8)
	if h.role == respHalf {
		lo = 4 // a response is at least its correlation ID
	}
	if h.raw {
		lo = 0 // SASL tokens may be empty
	}
	if size < lo || size > c.d.opts.MaxFrame {
		if c.state == StateProbing && !c.d.opts.AssumeKafka && h.role == reqHalf {
			c.giveUp()
			return nil
		}
		if c.state == StateKafka {
			c.begin(KindCoverage, at)
			c.d.ev.Coverage = FramingError
			c.d.ev.Size = size
			c.d.ev.Detail = sizeDetail(size, h.sizeBuf, h.role)
			c.emit()
		}
		var again [3]byte
		copy(again[:], h.sizeBuf[1:])
		c.resync(h)
		// Re-scan the bytes after the bad size's first byte: the next
		// frame may start inside the bad size.
		c.scanFeed(h, again[:], at) // 3 bytes are never a whole candidate: h stays in stScan
		return p
	}
	h.begin(int(size))
	if h.size == 0 { // an empty raw token
		h.kind = frRawToken
		h.st = stSkip
	}
	return p
}

// begin starts a frame of size bytes (after the int32 size, which is
// good) in stHead.
func (h *half) begin(size int) {
	h.size = size
	h.got = 0
	h.walking = false
	h.buf = h.buf[:0]
	h.kind = frNone
	h.cutAt = 0
	h.st = stHead
	if h.role == reqHalf {
		h.need = min(10, h.size)
	} else {
		h.need = min(4, h.size) // less only for raw SASL tokens
	}
}

// wholeFrames decodes the frames that lie whole in p, h being at a frame's
// start, while the connection is Kafka's and h not in raw SASL mode: the
// steady state of small requests and responses, one or a few a packet. It
// does what process's stSize then stHead steps do for such a frame (read
// the size, startFrame, wholeFrame) without their generic tests, and
// returns the rest of p, a frame's start still.
func (c *Conn) wholeFrames(h *half, p []byte, at flow.Meta) []byte {
	lo, maxSize := int32(8), min(c.d.opts.MaxFrame, maxHeader)
	if h.role == respHalf {
		lo = 4
	}
	for len(p) >= 4 && h.st == stSize && h.sizeN == 0 && c.state == StateKafka && !h.raw {
		size := int32(binary.BigEndian.Uint32(p))
		if size < lo || size > maxSize || int(size) > len(p)-4 {
			break // startFrame judges it, or it lies in more than p
		}
		n := 4 + int(size)
		f := p[4:n:n]
		p = p[n:]
		if h.role == reqHalf && c.quickRequest(f, at) || h.role == respHalf && c.quickResponse(f, at) {
			continue
		}
		binary.BigEndian.PutUint32(h.sizeBuf[:], uint32(size))
		h.begin(int(size))
		c.wholeFrame(h, f, at)
	}
	return p
}

// quickRequest decodes f, a request frame held whole, in the steady state's
// common case: no identity body, a header that parses, the connection
// announced. It does for f what wholeFrame (headDone, finish, emitRequest)
// would, without the half's state for a frame in pieces, which stays as
// between frames; for any other frame it returns false, and wholeFrame
// decodes it (parsing its header again: they are rare).
func (c *Conn) quickRequest(f []byte, at flow.Meta) bool {
	if c.quiet || codecFor(int16(binary.BigEndian.Uint16(f))).request != nil {
		return false
	}
	if _, err := parseReqHeader(f, len(f), &c.hdr, c.d.opts.HeaderV3, nil); err != nil {
		return false // a framing error
	}
	c.requestEvent(len(f), at)
	c.request(at)
	c.hdr.ClientID = nil // keep no pointer into the caller's bytes
	return true
}

// quickResponse is quickRequest for a response frame f: one that answers a
// request awaiting it, with no identity body.
func (c *Conn) quickResponse(f []byte, at flow.Meta) bool {
	corr := int32(binary.BigEndian.Uint32(f))
	r, ok := c.pending.get(corr)
	if !ok || c.quiet || codecFor(r.key).response != nil {
		return false
	}
	c.pending.take(corr)
	c.corr, c.req = corr, r
	c.responseEvent(len(f), at)
	c.emit()
	if c.x != nil {
		c.flushRaw(at) // as finish does after a response: raw SASL tokens that came before it
	}
	return true
}

func sizeDetail(size int32, b [4]byte, role uint8) string {
	s := string(b[:])
	if role == reqHalf && (s == "GET " || s == "POST" || s == "HTTP" || s == "PUT " || s == "HEAD") {
		return fmt.Sprintf("frame size %d out of range: looks like HTTP", size)
	}
	if b[0] == 0x16 && b[1] == 0x03 {
		return fmt.Sprintf("frame size %d out of range: looks like TLS", size)
	}
	return fmt.Sprintf("frame size %d out of range", size)
}

// giveUp marks a connection that never looked like Kafka.
func (c *Conn) giveUp() {
	c.state = StateNotKafka
	c.halves[reqHalf].st = stDead
	c.halves[respHalf].st = stDead
	c.halves[reqHalf].buf, c.halves[respHalf].buf = nil, nil
	c.halves[reqHalf].x, c.halves[respHalf].x = nil, nil
}

// headDone runs when h.buf holds h.need bytes in stHead.
func (c *Conn) headDone(h *half, at flow.Meta) {
	if h.role == respHalf {
		c.responseHead(h)
		return
	}
	var w *tagWalk // a header in pieces: its tag walk resumes (header.go)
	if h.walking || len(h.buf) < h.size {
		if h.walking && h.x != nil {
			w = &h.x.walk
		} else {
			// This frame's first parse, or one whose walk did not reach
			// the tags: the Decoder's, kept in h.x only if it stops short.
			w = &c.d.walk
			w.on = false
		}
	}
	need, err := parseReqHeader(h.buf, h.size, &c.hdr, c.d.opts.HeaderV3, w)
	h.walking = need > 0
	if h.walking && w == &c.d.walk && (w.on || h.x != nil) {
		h.rare().walk = *w
	}
	if need > 0 && need <= maxHeader {
		h.need = need
		return
	}
	if h.raw {
		if need > 0 || err != nil || !c.rawExit(&c.hdr) {
			h.kind = frRawToken
			h.st = stSkip
			return
		}
		h.raw = false
	}
	if c.state == StateProbing {
		// The client's first frame, from the start of the connection
		// (AssumeKafka connections are never probing here).
		if need > 0 || err != nil {
			c.giveUp()
			return
		}
		c.recognise(at)
	}
	if need > 0 {
		c.badFrame(h, fmt.Sprintf("request header longer than %d bytes", maxHeader))
		return
	}
	if err != nil {
		c.badFrame(h, headerDetail(err, h.buf))
		return
	}
	h.kind = frRequest
	c.bodyOrSkip(h, c.hdr.APIKey, false)
}

// bodyOrSkip holds the rest of the frame, as far as its identity fields
// go, when key's body is decoded in that direction, else counts it down.
// What is held does not depend on how the frame arrives (see bodyChunk).
func (c *Conn) bodyOrSkip(h *half, key int16, response bool) {
	codec := codecFor(key)
	decode := codec.request != nil
	start := c.hdr.Len
	if response {
		decode, start = codec.response != nil, 4
	}
	if !decode || start >= h.size {
		// Nothing to read, or no body: the header fills the frame or its
		// tags overrun it (decodeBody finds no identity fields).
		h.st = stSkip
		return
	}
	h.st = stBody
	h.need = max(len(h.buf), min(h.size, start+bodyChunk))
	h.hold()
}

// bodyProgress runs when h.buf holds h.need bytes of a body being read: it
// holds more while the identity fields need it, and once they are read (or
// cannot be) counts the rest of the frame down; finish reads them from
// what is held.
func (c *Conn) bodyProgress(h *half) {
	if _, _, need, _ := c.identity(h, nil); need > 0 {
		h.need = min(h.size, max(need, len(h.buf)+bodyChunk))
		h.hold()
		return
	}
	h.st = stSkip
}

// hold grows h.buf to h.need bytes at once, not by doubling: what a frame
// cut short holds is no more than what it asked for.
func (h *half) hold() {
	if cap(h.buf) < h.need {
		h.buf = append(make([]byte, 0, h.need), h.buf...)
	}
}

// identity reads the identity fields of h's frame (a request's or a
// response's body, whose layout body.go declares), as far as h.buf holds
// it, into out (nil: only to learn how far they go). off is the offset in
// the frame where the body starts, end where its identity fields end; need
// > 0 asks for the frame's first need bytes; bad: they do not parse, or a
// response header's tagged fields overrun the frame or pass maxHeader.
func (c *Conn) identity(h *half, out *Body) (off, end, need int, bad bool) {
	key, ver, off := c.hdr.APIKey, c.hdr.APIVersion, c.hdr.Len
	l := codecFor(key).request
	if h.role == respHalf {
		key, ver, off = c.req.key, c.req.ver, 4
		l = codecFor(key).response
		if c.req.respHV == 1 {
			tagsEnd, need, problem := parseTags(h.buf, off, h.size, nil, nil)
			switch {
			case need > maxHeader, need == 0 && problem == TagOverrun:
				return off, off, 0, true
			case need > 0:
				return off, off, need, false
			}
			off = tagsEnd
		}
	}
	if off > len(h.buf) {
		return off, off, 0, true // a request header whose tags overran the frame
	}
	ver = clampVersion(key, ver)
	r := fieldReader{b: h.buf[off:], n: h.size - off, flex: lookupAPI(key).isFlexible(ver)}
	l.read(ver, &r, out)
	if r.need > 0 {
		return off, off, off + r.need, false
	}
	return off, off + r.off, 0, r.bad
}

func headerDetail(err error, b []byte) string {
	switch err {
	case ErrUnknownAPIKey:
		return fmt.Sprintf("unknown API key %d", int16(binary.BigEndian.Uint16(b)))
	case ErrBadVersion:
		key, ver := int16(binary.BigEndian.Uint16(b)), int16(binary.BigEndian.Uint16(b[2:]))
		return fmt.Sprintf("%s version %d out of range", APIName(key), ver)
	}
	return err.Error()
}

// badFrame skips the rest of a frame whose length is trusted but whose
// header is not; a FramingError is reported when it ends.
func (c *Conn) badFrame(h *half, detail string) {
	h.kind = frBad
	h.rare().detail = detail
	h.st = stSkip
}

// responseHead matches a response's correlation ID with its request.
func (c *Conn) responseHead(h *half) {
	if len(h.buf) < 4 { // a raw SASL token shorter than a correlation ID
		h.kind = frRawToken
		h.st = stSkip
		return
	}
	c.corr = int32(binary.BigEndian.Uint32(h.buf))
	if h.raw {
		r, ok := c.pending.get(c.corr)
		if !ok || r.seq <= c.x.rawSeq {
			h.kind = frRawToken
			h.st = stSkip
			return
		}
		h.raw = false
	}
	r, ok := c.pending.take(c.corr)
	if !ok {
		h.kind = frUnmatched
		h.st = stSkip
		return
	}
	c.req = r
	h.kind = frResponse
	c.bodyOrSkip(h, r.key, true)
}

// finish ends the current frame of h: its event is emitted now, with the
// flow.Meta of the packet that carried its last byte.
func (c *Conn) finish(h *half, at flow.Meta) {
	switch h.kind {
	case frRequest:
		c.emitRequest(h, at)
	case frResponse:
		c.emitResponse(h, at)
	case frUnmatched:
		c.begin(KindCoverage, at)
		c.d.ev.Coverage = UnmatchedResponse
		c.d.ev.CorrelationID = c.corr
		c.d.ev.Size = int32(h.size)
		c.d.ev.Bytes = int64(h.size) + 4
		c.d.ev.Detail = "response matches no request"
		if c.pending.dropped > 0 {
			c.d.ev.Detail = fmt.Sprintf("response matches no request (%d requests forgotten past the in-flight cap of %d)", c.pending.dropped, c.d.opts.MaxInFlight)
		}
		c.emit()
	case frRawToken:
		c.rare().rawBytes += int64(h.size) + 4
	case frBad:
		c.begin(KindCoverage, at)
		c.d.ev.Coverage = FramingError
		c.d.ev.Size = int32(h.size)
		c.d.ev.Detail = h.x.detail
		c.emit()
	}
	if h.role == respHalf && h.kind == frResponse && !c.halves[respHalf].raw && c.x != nil && c.x.rawBytes > 0 {
		c.flushRaw(at)
	}
	h.kind = frNone
	h.st = stSize
	h.sizeN = 0
	h.buf = h.buf[:0]
	if cap(h.buf) > keepBuf {
		h.buf = nil // do not keep a long header's or an identity body's buffer
	}
	if h.role == reqHalf {
		// The header was emitted: its client ID, which points into the
		// frame's bytes, keeps neither them nor a buffer let go alive.
		c.hdr.ClientID = nil
	}
}

func (c *Conn) emitRequest(h *half, at flow.Meta) {
	if c.quiet {
		c.announce()
	}
	hd := &c.hdr
	if !hd.ClientIDNull {
		// h.buf may have grown since the header was parsed: re-point.
		hd.ClientID = h.buf[10 : 10+len(hd.ClientID) : 10+len(hd.ClientID)]
	}
	c.requestEvent(h.size, at)
	if h.cutAt != 0 {
		c.markCut(h)
	}
	if codecFor(hd.APIKey).request != nil {
		c.decodeBody(h)
	}
	c.request(at)
}

// request remembers the request whose event is filled as awaiting its
// answer, and emits it.
func (c *Conn) request(at flow.Meta) {
	hd := &c.hdr
	c.seq++
	c.lastCorr = hd.CorrelationID
	c.pending.add(hd.CorrelationID, inflight{key: hd.APIKey, ver: hd.APIVersion, respHV: hd.respHV, frame: at.Frame, seq: c.seq})
	if hd.APIKey == keySASLHandshake && hd.APIVersion == 0 {
		x := c.rare()
		x.rawNull = hd.ClientIDNull
		x.rawClient = append(x.rawClient[:0], hd.ClientID...)
	}
	c.emit()
}

func (c *Conn) emitResponse(h *half, at flow.Meta) {
	if c.quiet {
		c.announce()
	}
	r := c.req
	c.responseEvent(h.size, at)
	if codecFor(r.key).response != nil {
		c.decodeBody(h)
	}
	if r.key == keySASLHandshake && r.ver == 0 && c.d.ev.Body.Decoded && c.d.ev.Body.ErrorCode == 0 {
		// From now on the client sends raw, length-prefixed SASL tokens.
		c.halves[reqHalf].raw = true
		c.halves[respHalf].raw = true
		c.rare().rawSeq = c.seq
	}
	c.emit()
}

// decodeBody reads the identity fields of h's frame into the event. When
// the snap length cut the frame (see cut.go), they are the sender's only if
// the cut fell after them: the cut bytes read as zeros. A body that does not
// parse from a cut frame may have failed on the zeros: it is cut, not in
// error.
func (c *Conn) decodeBody(h *half) {
	c.d.evPDU = nil
	b := &c.d.ev.Body
	off, end, need, bad := c.identity(h, b)
	failed := need > 0 || bad
	cut := h.cutAt - 1
	switch {
	case h.cutAt != 0 && (failed || max(cut, off) < end):
		*b = Body{}
		c.d.ev.Cut = max(c.d.ev.Cut, CutBody)
	case failed:
		*b = Body{BodyError: true}
	default:
		b.Decoded = true
	}
}

// rawExit reports whether a frame seen in raw SASL mode is the client's
// next Kafka request: a sane header whose client ID matches the
// handshake's, or at least looks like a client ID, or a null one on a
// clean flexible header numbered after the handshake (a KIP-1313 client
// sends its client ID once, so the handshake may have had it).
func (c *Conn) rawExit(hd *RequestHeader) bool {
	if hd.HeaderVersion == 0 {
		return false
	}
	if hd.ClientIDNull {
		return c.x.rawNull || hd.HeaderVersion >= 2 && hd.TagProblem == TagOK && c.haveCorr() && corrFollows(c.lastCorr, hd.CorrelationID)
	}
	if !c.x.rawNull && string(hd.ClientID) == string(c.x.rawClient) {
		return true
	}
	return printable(hd.ClientID) && len(hd.ClientID) > 0
}

// flushRaw reports the raw SASL tokens skipped, once per connection.
func (c *Conn) flushRaw(at flow.Meta) {
	if c.x == nil || c.x.rawEmitted || c.x.rawBytes == 0 {
		return
	}
	c.x.rawEmitted = true
	c.begin(KindCoverage, at)
	c.d.ev.Coverage = SASLRawTokens
	c.d.ev.Bytes = c.x.rawBytes
	c.d.ev.Detail = "raw SASL tokens after SaslHandshake v0 (skipped, not shown)"
	c.emit()
}

func printable(b []byte) bool {
	for _, x := range b {
		if x < 0x20 || x == 0x7f {
			return false
		}
	}
	return true
}
