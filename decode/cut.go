package decode

import (
	"github.com/kwatch/kwatch/flow"
	"github.com/kwatch/kwatch/internal/enum"
)

// Bytes cut by the capture's snap length (SPEC.md 2.1 "Snap length"). The
// reassembler knows how many bytes a cut packet lost and where, from its IP
// length, and says so with Skip. Unlike a Gap this loses no framing while
// the cut falls inside a frame whose size was read: a body skipped by length
// is counted down; a header or an identity body is decoded from what was
// captured, the cut bytes read as zeros, and the event says which of its
// fields the cut reached (Event.Cut), so that a rule needing one of them
// does not judge that request.

// Cut says which fields of a request or response the snap length cut off:
// each value includes those after it. The decoder reads cut bytes as zeros;
// the fields named here are therefore not the sender's.
type Cut uint8

const (
	// CutNone: every field kwatch reads was captured.
	CutNone Cut = iota
	// CutBody: the body's identity fields (section 1) were cut; Body is
	// left undecoded (Decoded and BodyError false).
	CutBody
	// CutTags: the request header's tagged fields were cut: the header
	// instance ID is unknown, and so is the body.
	CutTags
	// CutClientID: the request header's client ID was cut, and all after.
	CutClientID
)

var cutNames = [...]string{"none", "body", "tags", "client-id"}

func (c Cut) String() string { return enum.Name(cutNames[:], c, "unknown") }

// zeros stands in for cut bytes; never written.
var zeros [4096]byte

// Skip says n bytes on dir were on the wire but not captured: the snap
// length cut them. at is the packet they belonged to.
func (c *Conn) Skip(dir flow.Side, n int, at flow.Meta) {
	if c.closed || n <= 0 || c.state == StateTLS || c.state == StateNotKafka {
		return
	}
	if c.judging() {
		c.holdSkip(dir, n, at)
		return
	}
	h := c.halfFor(dir)
	for n > 0 {
		switch h.st {
		case stDead:
			return
		case stSkip:
			k := min(n, h.size-h.got)
			h.got += k
			n -= k
			if h.got == h.size {
				c.finish(h, at)
			}
		case stHead, stBody:
			k := c.cutFrame(h, n, at)
			if k == 0 {
				// A header that asks for more than its frame holds:
				// nothing more of the frame to take, its end unsure.
				c.cutFraming(h, dir, n, at)
				return
			}
			n -= k
		case stScan:
			// The position was unknown already: the scan starts again
			// after the cut, with nothing more lost.
			if h.x != nil {
				h.x.scan = h.x.scan[:0]
			}
			return
		default: // stSize: a frame starts in the cut
			c.cutFraming(h, dir, n, at)
			return
		}
	}
}

// cutFrame reads up to n cut bytes of the frame h is buffering as zeros,
// and returns how many it took (up to the frame's end). A frame whose
// identifying header bytes were cut (the request's key, version and
// correlation ID; the response's correlation ID) is skipped by length,
// without an event.
func (c *Conn) cutFrame(h *half, n int, at flow.Meta) int {
	k := min(n, h.size-h.got)
	if h.cutAt == 0 {
		h.cutAt = h.got + 1
	}
	if h.st == stHead && (h.got < 8 && h.role == reqHalf || h.got < 4) {
		h.kind = frNone
		if h.raw {
			h.kind = frRawToken
		}
		h.st = stSkip
		h.got += k
		if h.got == h.size {
			c.finish(h, at)
		}
		return k
	}
	for left := k; left > 0; {
		if h.st == stSkip {
			h.got += left
			if h.got == h.size {
				c.finish(h, at)
			}
			break
		}
		if h.st != stHead && h.st != stBody {
			break // finished
		}
		z := min(left, len(zeros))
		c.process(h, zeros[:z:z], at)
		left -= z
	}
	return k
}

// cutFraming handles a cut that takes the start of the next frame: its size
// is unknown, so the position is lost, as after a gap.
func (c *Conn) cutFraming(h *half, dir flow.Side, n int, at flow.Meta) {
	c.partial = true
	if c.state == StateKafka {
		c.streamGap(n, "frame start cut by the capture's snap length on "+dir.Direction(), at)
	}
	c.resync(h)
}

// streamGap reports n bytes lost (a stream-gap).
func (c *Conn) streamGap(n int, detail string, at flow.Meta) {
	c.begin(KindCoverage, at)
	c.d.ev.Coverage = StreamGap
	c.d.ev.Bytes = int64(n)
	c.d.ev.Detail = detail
	c.emit()
}

// markCut sets ev.Cut for a request whose frame the snap length cut.
func (c *Conn) markCut(h *half) {
	at := h.cutAt - 1
	hd := &c.hdr
	switch {
	case hd.HeaderVersion >= 1 && at < 10+len(hd.ClientID):
		c.d.ev.Cut = CutClientID
	case at < hd.Len:
		c.d.ev.Cut = CutTags
	}
}

// flushEarlyCuts reports the packets the snap length cut before the
// connection was recognised as Kafka: one truncated-packet each.
func (c *Conn) flushEarlyCuts(at flow.Meta) {
	if c.x == nil {
		return
	}
	for dir, n := range c.x.earlyCuts {
		for range n {
			c.truncated(flow.Side(dir), at)
		}
		c.x.earlyCuts[dir] = 0
	}
}
