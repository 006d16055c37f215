package decode

import (
	"encoding/binary"

	"github.com/kwatch/kwatch/flow"
	"github.com/kwatch/kwatch/internal/wire"
)

// Recognition of a connection seen from its start (or joined mid-stream at
// a TLS handshake record), without --port (docs/recognition.md; scan.go
// searches the other connections joined mid-stream). Until it is judged,
// a connection is a candidate:
// its first bytes are held, nothing is emitted, and nothing else is
// decoded. The client's first frame is judged on its own when it carries
// strong evidence; when its evidence is weak (a null, empty or unprintable
// client ID), the broker's first answer or the client's next request
// decides. A believed connection's held bytes
// are then fed through the normal path, in the order and with the packets
// they came in, so that its events are those it would have had without
// the wait. A rejected one is given up at once (StateNotKafka).

const (
	// holdWindow bounds the bytes of a frame judged (the client's first
	// frame, the broker's first answer): room for the largest request
	// header the decoder takes; a body past it is not checked.
	holdWindow = 4 + maxHeader
	// holdMax bounds the bytes held per direction: a first frame's window
	// and the scan window of the next (judgeNext). A Kafka client waits for
	// the answer to its first request before it sends much more.
	holdMax = holdWindow + maxScanNeed
	// holdCalls bounds the packets held (their flow.Meta are kept for the
	// replay): a Kafka client's first request and its answer come in far
	// fewer, a peer trickling bytes in many more.
	holdCalls = 1024
)

// held is one packet's bytes held while the connection is judged.
type held struct {
	dir flow.Side
	n   int // bytes, taken in order from cand.bytes[dir]; cut bytes with skip
	at  flow.Meta
	// skip: n bytes the snap length cut (Skip), held nowhere.
	skip bool
}

// cand is the state of a connection being judged; it exists only between
// the first byte and the verdict.
type cand struct {
	bytes [2][]byte // by flow.Side
	calls []held
	// walk resumes the first request header's tag walk from one Feed to
	// the next; hd is that header once parsed (headed), so that it is
	// parsed once however the frame is cut.
	walk   tagWalk
	headed bool
	hd     RequestHeader
	// exact caches whether the first frame, once whole, is exactly one
	// request (0 not known yet, 1 yes, -1 no): kmsg reads it once.
	exact int8
	// next caches judgeNext's verdict once it has one (jWait before).
	next judgement
	// cut: the snap length cut bytes of this direction (by flow.Side): its
	// first frame is judged on what was captured of it, as if whole.
	// cutAt is where in bytes[dir] the first cut fell, cutN how many
	// bytes the cuts took in all.
	cut   [2]bool
	cutAt [2]int
	cutN  [2]int
}

// firstExact reports whether the first frame f, whole, is exactly one
// request of the header's version.
func (k *cand) firstExact(f []byte) bool {
	if k.exact == 0 {
		k.exact = -1
		if k.hd.TagProblem != TagOverrun && exactRequest(k.hd.APIKey, k.hd.APIVersion, f[k.hd.Len:]) {
			k.exact = 1
		}
	}
	return k.exact > 0
}

// judgement is the outcome of looking at a candidate's held bytes.
type judgement uint8

const (
	jWait   judgement = iota // not enough bytes yet
	jKafka                   // believed: replay as Kafka
	jTLS                     // TLS that may carry Kafka: tls-connection
	jReject                  // not Kafka
	jWeak                    // a request header with weak evidence: the answer decides
)

// judging reports whether c holds its bytes for judgement: seen from its
// start, or joined mid-stream at a TLS handshake record (tlsFirst).
func (c *Conn) judging() bool {
	return c.state == StateProbing && (c.fromStart || c.cand != nil) && !c.d.opts.AssumeKafka && !c.judged
}

// tlsFirst reports whether p, on dir, is the first client bytes of a
// connection joined mid-stream and starts a TLS handshake record: its
// ClientHello, if that is what it is, is judged as from the start (a
// capture that missed only the handshake).
func (c *Conn) tlsFirst(dir flow.Side, p []byte) bool {
	return c.state == StateProbing && !c.fromStart && !c.d.opts.AssumeKafka && !c.judged && c.cand == nil &&
		dir == flow.Client && c.swapped == 0 && c.halfFor(dir).seen == 0 && p[0] == 0x16
}

// holdFeed holds p and judges the connection when it can.
func (c *Conn) holdFeed(dir flow.Side, p []byte, at flow.Meta) {
	if c.cand == nil {
		c.cand = &cand{}
	}
	k := c.cand
	last := len(k.calls) - 1
	// The same packet's bytes, fed in pieces, are one call in the replay.
	same := last >= 0 && k.calls[last].dir == dir && k.calls[last].at == at && !k.calls[last].skip
	if !same && len(k.calls) == holdCalls {
		c.reject() // more packets than a Kafka candidate sends before it is believed
		return
	}
	// Hold what fits: the rest is judged with it or not at all.
	q := p[:min(len(p), holdMax-len(k.bytes[dir]))]
	k.bytes[dir] = appendHeld(k.bytes[dir], q)
	if same {
		k.calls[last].n += len(q)
	} else {
		k.calls = append(k.calls, held{dir: dir, n: len(q), at: at})
	}
	switch j := c.judge(false); {
	case j == jKafka, j == jTLS:
		c.replay()
		if rest := p[len(q):]; len(rest) > 0 {
			c.Feed(dir, rest, at)
		}
	case j == jReject, len(q) < len(p):
		// More than a Kafka candidate sends before it is believed.
		c.reject()
	}
}

// appendHeld appends p to b, growing it by doubling but never past
// holdMax: a candidate's buffer is not twice what it may hold.
func appendHeld(b, p []byte) []byte {
	if n := len(b) + len(p); n > cap(b) {
		grown := make([]byte, len(b), min(max(2*cap(b), n, 512), holdMax))
		copy(grown, b)
		b = grown
	}
	return append(b, p...)
}

// settle judges the bytes held at the end: believed or not Kafka.
func (c *Conn) settle() {
	if j := c.judge(true); j == jKafka || j == jTLS {
		c.replay()
		return
	}
	c.reject()
}

// holdGap handles a hole while the connection is judged: the first frame,
// if convincing on what is held, is believed and the hole follows it;
// otherwise the held bytes are dropped and both directions are scanned for
// frames as after any loss (scan.go), which asks for its own evidence.
func (c *Conn) holdGap(dir flow.Side, lost int, at flow.Meta) {
	if c.cand != nil {
		k := c.cand
		if j := c.judge(true); j == jKafka || j == jTLS {
			c.replay()
			c.Gap(dir, lost, at)
			return
		}
		for d := range k.bytes {
			c.halfFor(flow.Side(d)).seen += int64(len(k.bytes[d]))
		}
	}
	c.judged, c.cand = true, nil
	c.resync(&c.halves[reqHalf])
	c.resync(&c.halves[respHalf])
	c.Gap(dir, lost, at)
}

// reject gives the candidate up as not Kafka.
func (c *Conn) reject() {
	c.judged, c.cand = true, nil
	c.giveUp()
}

// replay feeds the held calls through the normal path.
func (c *Conn) replay() {
	k := c.cand
	c.judged, c.cand = true, nil
	var off [2]int
	for _, h := range k.calls {
		if h.skip {
			c.Skip(h.dir, h.n, h.at)
			continue
		}
		c.Feed(h.dir, k.bytes[h.dir][off[h.dir]:off[h.dir]+h.n], h.at)
		off[h.dir] += h.n
	}
	// The first frames were buffered (the connection was not Kafka's yet
	// when they were fed): a half between frames lets that buffer go, as
	// the frames to come most often arrive whole and need none.
	for i := range c.halves {
		if h := &c.halves[i]; h.st == stSize && h.sizeN == 0 {
			h.buf = nil
		}
	}
}

// holdSkip holds a snap-length cut while the connection is judged (SPEC.md
// 2.1): the frame it falls in is judged on what was captured of it, and
// the cut is replayed as the Skip it is, never as lost bytes.
func (c *Conn) holdSkip(dir flow.Side, n int, at flow.Meta) {
	if c.cand == nil {
		c.cand = &cand{}
	}
	k := c.cand
	if len(k.calls) == holdCalls {
		c.reject()
		return
	}
	k.calls = append(k.calls, held{dir: dir, n: n, at: at, skip: true})
	if !k.cut[dir] {
		k.cut[dir], k.cutAt[dir] = true, len(k.bytes[dir])
	}
	k.cutN[dir] += n
	switch c.judge(false) {
	case jKafka, jTLS:
		c.replay()
	case jReject:
		c.reject()
	}
}

// judge looks at the held bytes; final: no more will come.
func (c *Conn) judge(final bool) judgement {
	cl, br := c.cand.bytes[flow.Client], c.cand.bytes[flow.Broker]
	if len(cl) == 0 {
		return jWait
	}
	if cl[0] == 0x16 {
		return judgeTLS(cl, final)
	}
	f, size, j := c.firstFrame(cl, 8)
	if j != jKafka {
		return j
	}
	f = c.cand.captured(flow.Client, f)
	j = c.judgeRequest(f, size, final || c.cand.cut[flow.Client])
	if j == jReject && c.cand.cut[flow.Client] && len(f) < size {
		// The snap length cut the first request inside its header: what
		// was captured of it is all there is to judge.
		j = judgeCutRequest(f)
	}
	if j != jWeak {
		return j
	}
	// Weak: the broker's answer, or the client's next request, decides.
	answer := jWait
	if f, size, j := c.firstFrame(br, 4); j != jKafka {
		answer = j
	} else {
		f = c.cand.captured(flow.Broker, f)
		answer = c.judgeAnswer(f, size, &c.cand.hd, final || c.cand.cut[flow.Broker])
	}
	next := c.cand.next
	if next == jWait {
		next = c.judgeNext(f, size, c.cand.afterFirst(cl, f, size))
		c.cand.next = next
	}
	switch {
	case answer == jKafka || next == jKafka:
		return jKafka
	case answer == jReject || final:
		return jReject
	}
	return jWait
}

// judgeNext believes a weak first request f (of size bytes) when it is
// exactly one request of its version and the client's next frame, in b,
// is a request numbered after it, with a clean header and, when held
// whole, an exact body too: a client that sends without waiting for
// answers (or whose answers were not captured). It never waits on its
// own: jWait means "not this way, not yet".
func (c *Conn) judgeNext(f []byte, size int, b []byte) judgement {
	hd := &c.cand.hd
	// A first frame the snap length cut cannot be checked whole: the next
	// frame speaks for both, its correlation ID following the first's
	// when that was captured.
	cutFirst := len(f) < size && c.cand.cut[flow.Client]
	if !cutFirst && (len(f) != size || !c.cand.firstExact(f)) {
		return jWait
	}
	prevCorr, haveCorr := hd.CorrelationID, true
	if cutFirst {
		haveCorr = len(f) >= 8
		if haveCorr {
			prevCorr = int32(binary.BigEndian.Uint32(f[4:]))
		}
	}
	if len(b) < 4 {
		return jWait
	}
	size2 := int32(binary.BigEndian.Uint32(b))
	if size2 < 8 || size2 > c.d.opts.MaxFrame {
		return jReject
	}
	f2 := b[4:min(len(b), 4+int(size2), maxScanNeed)]
	if len(f2) < int(size2) && 4+len(f2) < maxScanNeed {
		// Parsed once, whole or at the end of the scan window: a frame
		// trickling in a byte at a time costs no more than its length.
		return jWait
	}
	var hd2 RequestHeader
	need, err := parseReqHeader(f2, int(size2), &hd2, c.d.opts.HeaderV3, nil)
	switch {
	case err != nil, need > 0:
		return jReject
	case hd2.TagProblem != TagOK, haveCorr && !corrFollows(prevCorr, hd2.CorrelationID):
		return jReject
	case !hd2.ClientIDNull && !printable(hd2.ClientID):
		return jReject
	case len(f2) == int(size2) && !exactRequest(hd2.APIKey, hd2.APIVersion, f2[hd2.Len:]):
		return jReject
	}
	return jKafka
}

// firstFrame returns the first frame of b after its size (held so far, up
// to holdWindow) and its size, or jWait for its size, or jReject when the
// size is out of range (below lo or over MaxFrame).
func (c *Conn) firstFrame(b []byte, lo int32) ([]byte, int, judgement) {
	if len(b) < 4 {
		return nil, 0, jWait
	}
	size := int32(binary.BigEndian.Uint32(b))
	if size < lo || size > c.d.opts.MaxFrame {
		return nil, 0, jReject
	}
	return b[4:min(len(b), 4+int(size), holdWindow)], int(size), jKafka
}

// whole says whether f, the held part of a frame of size bytes, is all
// of it that will be looked at.
func whole(f []byte, size int) bool { return len(f) == size || 4+len(f) == holdWindow }

// judgeRequest judges the client's first frame f (the held part of a
// frame of size bytes): a header that parses with an API key and version
// kmsg knows. A printable non-empty client ID is strong evidence (jKafka),
// unless the API is one a client opens with (checkedFirst) and its body,
// held whole, is not exactly one request of its version (a PostgreSQL
// startup can read as Metadata v0 with a printable client ID). Any other
// header (a null, empty or unprintable client ID, a v0 header) is weak
// (jWeak): the broker's answer decides.
func (c *Conn) judgeRequest(f []byte, size int, final bool) judgement {
	k := c.cand
	hd := &k.hd
	if !k.headed {
		need, err := parseReqHeader(f, size, hd, c.d.opts.HeaderV3, &k.walk)
		switch {
		case err != nil, need > 0 && (final || whole(f, size)):
			return jReject
		case need > 0:
			return jWait
		}
		k.headed = true
	}
	if hd.ClientIDNull || len(hd.ClientID) == 0 || !printable(hd.ClientID) {
		return jWeak
	}
	if !checkedFirst(hd.APIKey) || hd.TagProblem == TagOverrun {
		return jKafka
	}
	switch {
	case len(f) == size:
		if !k.firstExact(f) {
			return jReject
		}
	case !whole(f, size) && !final:
		return jWait
	}
	return jKafka
}

// checkedFirst: APIs a client opens a connection with, whose small body is
// checked against its own structure before a named client is believed.
func checkedFirst(key int16) bool {
	return key == keyAPIVersions || key == keySASLHandshake || key == keyMetadata
}

// judgeAnswer judges the broker's first frame f (the held part of a frame
// of size bytes) as the answer to hd: the same correlation ID, clean tags
// in a flexible response header, and a body (when held whole) that kmsg
// reads to the last byte.
func (c *Conn) judgeAnswer(f []byte, size int, hd *RequestHeader, final bool) judgement {
	if len(f) < 4 {
		return jWait
	}
	if int32(binary.BigEndian.Uint32(f)) != hd.CorrelationID {
		return jReject
	}
	if len(f) < size && !whole(f, size) && !final {
		// Parsed once, whole or at the end of the window.
		return jWait
	}
	off := 4
	if ResponseHeaderVersion(hd.APIKey, hd.APIVersion) >= 1 {
		end, need, problem := parseTags(f, off, size, nil, nil)
		if need > 0 || problem != TagOK {
			return jReject
		}
		off = end
	}
	if len(f) < size {
		return jKafka
	}
	if exactAnswer(hd.APIKey, hd.APIVersion, f[off:]) {
		return jKafka
	}
	return jReject
}

// judgeTLS judges a client that opened with a TLS handshake record: once
// the record is held (or holdWindow of it), a ClientHello that offers an
// HTTP protocol by ALPN is not Kafka; any other TLS is counted as such.
func judgeTLS(b []byte, final bool) judgement {
	if len(b) < 5 && !final {
		return jWait
	}
	end := min(len(b), holdWindow)
	if len(b) >= 5 {
		end = min(end, 5+int(binary.BigEndian.Uint16(b[3:])))
	}
	if len(b) < end && !final {
		return jWait
	}
	if end > 5 && offersHTTP(b[5:end]) {
		return jReject
	}
	return jTLS
}

// offersHTTP reports whether hs, a TLS handshake message (as far as held),
// is a ClientHello whose ALPN extension names an HTTP protocol.
func offersHTTP(hs []byte) bool {
	r := wire.Reader{B: hs}
	if r.U8() != 1 { // client_hello
		return false
	}
	r.Skip(3 + 2 + 32)    // length, legacy_version, random
	r.Skip(r.U8())        // legacy_session_id
	r.Skip(r.U16())       // cipher_suites
	r.Skip(r.U8())        // legacy_compression_methods
	ext := r.Sub(r.U16()) // extensions
	for !ext.Bad && len(ext.B) > 0 {
		typ := ext.U16()
		data := ext.Sub(ext.U16())
		if typ != 16 { // application_layer_protocol_negotiation
			continue
		}
		list := data.Sub(data.U16())
		for !list.Bad && len(list.B) > 0 {
			switch string(list.Sub(list.U8()).B) {
			case "h2", "h2c", "http/1.1", "http/1.0":
				return true
			}
		}
	}
	return false
}

// judgeCutRequest judges a first request whose header the snap length cut
// (SPEC.md 2.1): an API key and version kmsg knows and a printable,
// non-empty client ID whole in the captured bytes are the evidence a whole
// header gives (jKafka); a header cut before its client ID ends is weak
// (the broker's answer decides).
func judgeCutRequest(f []byte) judgement {
	if len(f) < 10 {
		return jWeak
	}
	key, ver := int16(binary.BigEndian.Uint16(f)), int16(binary.BigEndian.Uint16(f[2:]))
	a := lookupAPI(key)
	if a == nil || !a.versionOK(ver) {
		return jReject
	}
	if hv, _ := RequestHeaderVersion(key, ver); hv < 1 {
		return jWeak
	}
	n := int(int16(binary.BigEndian.Uint16(f[8:])))
	if n <= 0 || 10+n > len(f) || !printable(f[10:10+n]) {
		return jWeak
	}
	return jKafka
}

// afterFirst is what the client sent after its first frame (f, of size
// bytes, held in cl): when the snap length cut the first frame's end, the
// next frame starts where the cut ended, if it ended with that frame.
func (k *cand) afterFirst(cl, f []byte, size int) []byte {
	if !k.cut[flow.Client] || len(f) >= size {
		return cl[min(len(cl), 4+size):]
	}
	if k.cutAt[flow.Client] != 4+len(f) || k.cutN[flow.Client] != size-len(f) {
		return nil // the cut took the next frame's start: no evidence there
	}
	return cl[4+len(f):]
}

// captured is the part of dir's first frame f (held from offset 4) that
// was captured: up to the first cut, when the snap length cut it (what is
// held after the cut belongs to later frames).
func (k *cand) captured(dir flow.Side, f []byte) []byte {
	if k.cut[dir] && k.cutAt[dir] >= 4 && k.cutAt[dir] < 4+len(f) {
		return f[:k.cutAt[dir]-4]
	}
	return f
}
