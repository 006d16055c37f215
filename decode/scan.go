package decode

import (
	"encoding/binary"

	"github.com/kwatch/kwatch/flow"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// verdict is the answer of a resync candidate test at one position.
type verdict uint8

const (
	vNo verdict = iota
	vYes
	// vMore: not enough bytes to judge. The answer never depends on how
	// the bytes were chunked: given more bytes a test answers the same.
	vMore
	// vAnswer: a response to the request held in the request half's scan
	// buffer starts here (see answersHeld).
	vAnswer
)

// scanFeed looks for the next frame start in h's stream, position by
// position, then hands the rest to process. A position that needs more
// bytes to be judged is kept in h.scan (fewer than maxScanNeed bytes of
// it), with everything after it.
func (c *Conn) scanFeed(h *half, p []byte, at flow.Meta) {
	// pos is the stream position of p[0] among the bytes this half has
	// seen (Feed counted p already).
	pos := h.seen - int64(len(p))
	x := h.rare() // moves with h when accept swaps the halves
	if carried := len(x.scan); carried > 0 {
		k := min(len(p), maxScanNeed)
		x.scan = append(x.scan, p[:k]...)
		s := x.scan
		for i := 0; i < carried; i++ {
			switch c.candidate(h, s[i:], pos-int64(carried)+int64(i) == 0) {
			case vMore: // only when p is exhausted (k == len(p))
				prev := carried - i
				if i > 0 {
					// Another position is held now: which packet completed
					// its frame is not kept; this one stands for it.
					x.scanAt, prev = flow.Meta{}, 0
				}
				x.scan = s[:copy(s, s[i:])]
				x.noteScanAt(prev, at)
				return
			case vAnswer:
				if c.acceptHeld() {
					x.scan, x.spare = x.spare[:0], s
					c.process(h, s[i:], at)
					c.process(h, p[k:], at)
					return
				}
			case vYes:
				if h2 := c.accept(h, at); h2 != nil {
					// s is detached so that processing may scan again.
					x.scan, x.spare = x.spare[:0], s
					c.process(h2, s[i:], at)
					c.process(h2, p[k:], at)
					return
				}
			}
			if !c.rejected() {
				return
			}
		}
		x.scan = x.scan[:0]
	}
	for i := 0; i < len(p); i++ {
		switch c.candidate(h, p[i:], pos+int64(i) == 0) {
		case vMore:
			x.scan = append(x.scan[:0], p[i:]...)
			x.scanAt = flow.Meta{}
			x.noteScanAt(0, at)
			return
		case vAnswer:
			if c.acceptHeld() {
				c.process(h, p[i:], at)
				return
			}
		case vYes:
			if h2 := c.accept(h, at); h2 != nil {
				c.process(h2, p[i:], at)
				return
			}
		}
		if !c.rejected() {
			return
		}
	}
}

// noteScanAt records in x.scanAt the packet that completed the frame held
// in x.scan, when the bytes after the first prev did.
func (x *halfRare) noteScanAt(prev int, at flow.Meta) {
	if len(x.scan) < 4 {
		return
	}
	end := 4 + int64(binary.BigEndian.Uint32(x.scan))
	if int64(prev) < end && int64(len(x.scan)) >= end {
		x.scanAt = at
	}
}

// answersHeld: while a connection joined mid-stream is probed, the request
// half may hold a candidate that needs the next request to be believed (a
// null client ID; see requestCandidate). A response with its correlation
// ID, from the other side, vouches for it as well, and must not be lost
// waiting: the broker often answers before the client asks again.
func (c *Conn) answersHeld(h *half, b []byte) verdict {
	rq := c.halves[reqHalf].x
	if h == &c.halves[reqHalf] || rq == nil || len(rq.scan) < 12 || rq.scanAt == (flow.Meta{}) {
		return vNo
	}
	if len(b) < 8 {
		return vMore
	}
	size := int32(binary.BigEndian.Uint32(b))
	if size >= 4 && size <= c.d.opts.MaxFrame && binary.BigEndian.Uint32(b[4:]) == binary.BigEndian.Uint32(rq.scan[8:]) {
		return vYes
	}
	return vNo
}

// acceptHeld believes the request held by the request half, at the packet
// that completed it, and decodes it; the response half then starts afresh.
func (c *Conn) acceptHeld() bool {
	rq := &c.halves[reqHalf]
	held, at := rq.x.scan, rq.x.scanAt
	h2 := c.accept(rq, at)
	if h2 == nil {
		return false
	}
	x := h2.x
	x.scan, x.spare, x.scanAt = x.spare[:0], held, flow.Meta{}
	c.process(h2, held, at)
	return true
}

// rejected counts a position rejected while probing; it returns false when
// the connection is given up as not Kafka.
func (c *Conn) rejected() bool {
	if c.state != StateProbing || c.d.opts.AssumeKafka {
		return true
	}
	x := c.halves[reqHalf].rare()
	x.probed++
	if x.probed > probeLimit {
		c.giveUp()
		return false
	}
	return true
}

// candidate tests whether a frame of h's direction starts at b[0], which is
// the first byte seen on the half when first is true.
func (c *Conn) candidate(h *half, b []byte, first bool) verdict {
	// A request the request half holds for want of evidence is vouched for
	// by its answer, whether the connection is still probed or was taken
	// for Kafka at once (--port).
	switch c.answersHeld(h, b) {
	case vYes:
		return vAnswer
	case vMore:
		return vMore
	}
	if h.role == reqHalf || (c.state == StateProbing && !c.fromStart) {
		// While probing a connection joined mid-stream, both directions
		// are searched for requests: the reassembler's guess of who is the
		// client may be wrong.
		return c.requestCandidate(b, first)
	}
	return c.responseCandidate(b)
}

// requestCandidate: a plausible request starts at b[0]: sane size, known
// API key, version in range, a header that parses, tags that do not
// overrun. A non-empty printable client ID is evidence enough. KIP-1313
// clients send a null client ID after a connection's first request, in
// flexible (v2) headers and in v1 ones (SaslHandshake, SaslAuthenticate
// v0-1, Produce < 9 ...), so a null one is accepted too (an empty one only
// in a v2 header; there the tags must be clean), but only when its
// correlation ID follows the connection's last request's, or, with no
// request seen yet, when it carries a non-zero instance ID in a v2 header,
// when the next frame is such a request too, or when it starts at the
// first byte seen on the connection (a capture that starts between frames,
// as most do: clients write whole frames; one that starts inside a frame
// would have to show a known API key and version and 0xffff at that very
// byte). v0 headers (ControlledShutdown v0) are too weak to resync on.
func (c *Conn) requestCandidate(b []byte, first bool) verdict {
	c.named = false
	if len(b) < 4 {
		return vMore
	}
	size := int32(binary.BigEndian.Uint32(b))
	if size < 10 || size > c.d.opts.MaxFrame {
		return vNo
	}
	if v := quickRequestCheck(b); v != vMore {
		return v
	}
	var hd RequestHeader
	switch v := c.scanHeader(b[4:], int(size), 4, &hd); {
	case v != vYes:
		return v
	case hd.TagProblem == TagOverrun:
		return vNo
	case !hd.ClientIDNull && len(hd.ClientID) > 0:
		if !printable(hd.ClientID) {
			return vNo
		}
		if checkedFirst(hd.APIKey) && 4+int(size) <= maxScanNeed {
			// As for a connection's first frame (recog.go): a body that
			// is not exactly one request of its version is another
			// protocol's message (a PostgreSQL startup).
			if len(b) < 4+int(size) {
				return vMore
			}
			if !exactRequest(hd.APIKey, hd.APIVersion, b[4+hd.Len:4+int(size)]) {
				return vNo
			}
		}
		c.named = len(hd.ClientID) >= minNamed
		return vYes
	case hd.TagProblem != TagOK:
		return vNo
	case hd.HeaderVersion < 2 && !hd.ClientIDNull:
		// An empty client ID is two zero bytes, common in any body;
		// without tags to check, only null (0xffff) is evidence.
		return vNo
	case c.haveCorr():
		if corrFollows(c.lastCorr, hd.CorrelationID) {
			return vYes
		}
		return vNo
	case first:
		return vYes
	case hd.HeaderVersion >= 2 && hd.HasInstanceID && hd.InstanceID != (UUID{}):
		// A KIP-1313 client's request: a non-zero instance ID in clean
		// tags besides the null client ID is evidence enough, and a
		// Produce of such a client is often too large for the next
		// request to be looked at (a producer joined mid-stream would
		// never be recognised).
		return vYes
	}
	return c.nextRequestFollows(b, int(size), hd.CorrelationID)
}

// scanHeader parses the request header of a candidate frame of size bytes
// (b starts after its int32 size, at offset at of the scan window): vMore
// when it needs more bytes that the window still holds, vNo when it does
// not parse, needs more than the window, or is a v0 header (too weak to
// resync on), vYes with hd filled otherwise.
func (c *Conn) scanHeader(b []byte, size, at int, hd *RequestHeader) verdict {
	need, err := parseReqHeader(b, size, hd, c.d.opts.HeaderV3, nil)
	switch {
	case err != nil, need > 0 && at+need > maxScanNeed, need == 0 && hd.HeaderVersion == 0:
		return vNo
	case need > 0:
		return vMore
	}
	return vYes
}

// corrWindow bounds how far a connection's next correlation ID may jump:
// the Java client numbers requests per client, across all its connections.
const corrWindow = 1 << 20

// corrFollows reports whether next is a plausible correlation ID for the
// request after the one numbered prev.
func corrFollows(prev, next int32) bool {
	d := uint32(next) - uint32(prev)
	return d >= 1 && d <= corrWindow
}

// nextRequestFollows checks the frame after a candidate whose own evidence
// is weak: it must be a request header numbered after corr. b starts at
// the candidate frame, of size bytes after its int32 size. Too large a
// candidate to look past within the scan window is refused; scanning goes
// on to the next position.
func (c *Conn) nextRequestFollows(b []byte, size int, corr int32) verdict {
	if 4+size+14 > maxScanNeed {
		return vNo
	}
	if len(b) < 4+size+4 {
		return vMore
	}
	b = b[4+size:]
	nsize := int32(binary.BigEndian.Uint32(b))
	if nsize < 10 || nsize > c.d.opts.MaxFrame {
		return vNo
	}
	if len(b) < 12 {
		return vMore
	}
	if a := lookupAPI(int16(binary.BigEndian.Uint16(b[4:]))); a == nil || !a.versionOK(int16(binary.BigEndian.Uint16(b[6:]))) {
		return vNo
	}
	if !corrFollows(corr, int32(binary.BigEndian.Uint32(b[8:]))) {
		return vNo
	}
	var hd RequestHeader
	switch v := c.scanHeader(b[4:], int(nsize), 4+size+4, &hd); {
	case v != vYes:
		return v
	case hd.TagProblem != TagOK:
		return vNo
	case !hd.ClientIDNull && len(hd.ClientID) > 0 && !printable(hd.ClientID):
		return vNo
	}
	return vYes
}

// quickRequestCheck rejects most positions from their first bytes, before
// the tagged fields are walked (which may ask for more bytes). It answers
// vMore when it has nothing against the position. Like every test here it
// is monotone: a byte that fails it fails it however many follow.
func quickRequestCheck(b []byte) verdict {
	if len(b) < 8 {
		return vMore
	}
	a := lookupAPI(int16(binary.BigEndian.Uint16(b[4:])))
	ver := int16(binary.BigEndian.Uint16(b[6:]))
	if a == nil || !a.versionOK(ver) {
		return vNo
	}
	if len(b) < 14 {
		return vMore
	}
	n := int(int16(binary.BigEndian.Uint16(b[12:])))
	if n < -1 || 14+n > maxScanNeed {
		return vNo
	}
	if n > 0 && !printable(b[14:min(len(b), 14+n)]) {
		return vNo
	}
	return vMore
}

// responseCandidate: a response starts at b[0] when its size is sane, its
// correlation ID is that of a request awaiting an answer, and what follows
// reads as that request's answer: the tagged fields of a flexible header
// parse within the frame, and a body kwatch decodes (the APIs of SPEC.md
// section 1, whose answers are small) decodes. Inside a lost answer's
// remains small integers abound, and a correlation ID after a size is no
// rare sight: a false start would be matched, would skip whatever its
// size says, and a decoded body would be judged by the broker rules.
func (c *Conn) responseCandidate(b []byte) verdict {
	if len(b) < 4 {
		return vMore
	}
	size := int32(binary.BigEndian.Uint32(b))
	if size < 4 || size > c.d.opts.MaxFrame {
		return vNo
	}
	if len(b) < 8 {
		return vMore
	}
	r, ok := c.pending.get(int32(binary.BigEndian.Uint32(b[4:])))
	if !ok {
		return vNo
	}
	frame := 4 + int(size)
	off := 8
	if r.respHV >= 1 {
		end, need, problem := parseTags(b[:min(len(b), frame)], off, frame, nil, nil)
		switch {
		case need > maxScanNeed:
			return vNo
		case need > 0:
			return vMore
		case problem != TagOK:
			return vNo
		}
		off = end
	}
	if decodesResponse(r.key) {
		if frame > maxScanNeed {
			return vNo
		}
		if len(b) < frame {
			return vMore
		}
		if !exactAnswer(r.key, r.ver, b[off:frame]) {
			return vNo
		}
	}
	return vYes
}

// exactBody reports whether body is one whole response of key at version
// ver, as the body codecs read it: read by kmsg and written back, it has
// body's length. Bytes inside a lost answer's remains can read as a short
// answer followed by more; only a frame its own fields fill end to end is
// taken.
func exactBody(key, ver int16, body []byte) bool {
	m := kmsg.ResponseForKey(key)
	return m != nil && exactMessage(m, key, ver, body)
}

// exactRequest is exactBody for a request.
func exactRequest(key, ver int16, body []byte) bool {
	m := kmsg.RequestForKey(key)
	return m != nil && exactMessage(m, key, ver, body)
}

// exactAnswer is exactBody, also taking an ApiVersions answer in the v0
// layout (a broker answers an ApiVersions version it does not support so,
// with UNSUPPORTED_VERSION).
func exactAnswer(key, ver int16, body []byte) bool {
	return exactBody(key, ver, body) || key == keyAPIVersions && exactBody(key, 0, body)
}

// kmsgMessage is what exactMessage needs of a kmsg request or response.
type kmsgMessage interface {
	SetVersion(int16)
	ReadFrom([]byte) error
	AppendTo([]byte) []byte
}

func exactMessage(m kmsgMessage, key, ver int16, body []byte) bool {
	m.SetVersion(clampVersion(key, ver))
	if m.ReadFrom(body) != nil {
		return false
	}
	return len(m.AppendTo(nil)) == len(body)
}

// accept takes a candidate found in h: it returns the half to go on with
// (the same, or after a swap the request half), or nil to reject it.
func (c *Conn) accept(h *half, at flow.Meta) *half {
	if c.state == StateProbing {
		if h.role == respHalf {
			// Requests in the direction the reassembler called the
			// broker's (it guesses from the ports when it saw no
			// handshake): believe it if it names its client, or if the
			// other direction has shown enough bytes without one.
			if c.fromStart || c.halves[reqHalf].seen < swapEvidence && !c.named {
				return nil
			}
			c.swapped ^= 1
			c.id.Client, c.id.Broker = c.id.Broker, c.id.Client
			c.d.evPDU = nil // c.d.ev.Conn is stale
			c.halves[reqHalf], c.halves[respHalf] = c.halves[respHalf], c.halves[reqHalf]
			c.halves[reqHalf].role, c.halves[respHalf].role = reqHalf, respHalf
			h = &c.halves[reqHalf]
		}
		// Believed, but announced only with its first whole request or
		// response (announce): a false start whose frame never ends (a
		// size read inside another protocol's message) shows nothing.
		c.state, c.quiet, c.rare().quietAt = StateKafka, true, at
		// Bytes the broker side sent before are answers to requests never
		// seen: start its search afresh.
		other := &c.halves[respHalf]
		other.st = stScan
		if other.x != nil {
			other.x.scan = other.x.scan[:0]
		}
	}
	h.st = stSize
	h.sizeN = 0
	return h
}
