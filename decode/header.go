package decode

import (
	"encoding/binary"
	"errors"
)

// RequestHeader is a parsed request header. ClientID points into the bytes
// given to ParseRequestHeader: it is valid as long as they are.
type RequestHeader struct {
	APIKey        int16
	APIVersion    int16
	CorrelationID int32
	// HeaderVersion is 0, 1 or 2, chosen from the API key and version
	// (it is not on the wire).
	HeaderVersion int8
	// respHV is ResponseHeaderVersion of the API key and version, worked
	// out with HeaderVersion (the decoder keeps it with the request, so a
	// response costs no look-up of its API).
	respHV   int8
	ClientID []byte
	// ClientIDNull is true for a null client ID and for v0 headers.
	ClientIDNull bool
	// InstanceID is tag 0 (KIP-1313) when well formed; see Event.
	InstanceID    UUID
	HasInstanceID bool
	TagProblem    TagProblem
	// Len is the header's length in bytes: the body starts at frame[Len:].
	// With TagOverrun it is the frame's length.
	Len int
}

// Errors of ParseRequestHeader. A header with malformed tagged fields is no
// error: it parses with a TagProblem, as the audit needs to see it.
var (
	ErrShortHeader   = errors.New("decode: frame ends inside the request header")
	ErrUnknownAPIKey = errors.New("decode: unknown API key")
	ErrBadVersion    = errors.New("decode: API version out of range")
	ErrBadClientID   = errors.New("decode: client ID length below -1")
)

// ParseRequestHeader parses the request header at the start of frame, the
// bytes after the int32 size (the whole frame, or at least all of its
// header: tagged fields that run past the end of frame are TagOverrun). It
// never reads past frame and does not allocate.
func ParseRequestHeader(frame []byte, h *RequestHeader) error {
	_, err := parseReqHeader(frame, len(frame), h, nil, nil)
	return err
}

// tagWalk is how far a walk of tagged fields went when it ran out of
// bytes, so that the next parse of the same, longer prefix resumes there
// instead of starting over: a header of many tags arriving in pieces then
// costs time linear in its length, not in its length times its pieces.
// The zero value starts a walk.
type tagWalk struct {
	on      bool
	off     int    // offset of the next tag
	left    uint64 // tags not yet read
	prev    int64  // last tag number read, -1 before the first
	problem TagProblem
	iid     UUID
	hasIID  bool
}

// parseReqHeader parses a request header from b, a prefix of a frame of
// frameLen bytes. When b is too short to finish but the frame is long
// enough, it returns need > len(b): the number of bytes of the frame to
// buffer before calling again ("need more data" is no error). Reads that
// would pass frameLen are errors, or TagOverrun inside the tagged fields.
//
// v3, when not nil, says which (key, version) pairs use request header v3
// (the accepted-2026 profile): v3 is decoded with the v2 layout. w, when
// not nil, keeps the tag walk's progress between calls on growing
// prefixes of one frame (see tagWalk); it is zeroed once the header ends.
func parseReqHeader(b []byte, frameLen int, h *RequestHeader, v3 func(key, version int16) bool, w *tagWalk) (need int, err error) {
	if len(b) > frameLen {
		b = b[:frameLen]
	}
	*h = RequestHeader{}
	short := func(upto int) (int, error) {
		if upto > frameLen {
			return 0, ErrShortHeader
		}
		return upto, nil
	}
	if len(b) < 8 {
		return short(8)
	}
	h.APIKey = int16(binary.BigEndian.Uint16(b))
	h.APIVersion = int16(binary.BigEndian.Uint16(b[2:]))
	h.CorrelationID = int32(binary.BigEndian.Uint32(b[4:]))
	a := lookupAPI(h.APIKey)
	if a == nil {
		return 0, ErrUnknownAPIKey
	}
	if !a.versionOK(h.APIVersion) {
		return 0, ErrBadVersion
	}
	h.HeaderVersion, h.respHV = a.headerVersions(h.APIKey, h.APIVersion)
	if v3 != nil && h.HeaderVersion > 0 && v3(h.APIKey, h.APIVersion) {
		h.HeaderVersion = 3
	}
	if h.HeaderVersion == 0 {
		h.ClientIDNull = true
		h.Len = 8
		return 0, nil
	}
	if len(b) < 10 {
		return short(10)
	}
	off := 10
	switch n := int(int16(binary.BigEndian.Uint16(b[8:]))); {
	case n == -1:
		h.ClientIDNull = true
	case n < -1:
		return 0, ErrBadClientID
	default:
		if off+n > len(b) {
			return short(off + n)
		}
		h.ClientID = b[off : off+n : off+n]
		off += n
	}
	if h.HeaderVersion == 1 {
		h.Len = off
		return 0, nil
	}
	if w == nil || !w.on {
		// The tags of almost every flexible header: none, or tag 0 alone
		// with 16 bytes (KIP-1313's instance ID). They read as parseTags
		// would read them, without its walk.
		switch {
		case off < len(b) && b[off] == 0:
			h.Len = off + 1
			return 0, nil
		case off+19 <= len(b) && b[off] == 1 && b[off+1] == 0 && b[off+2] == 16:
			h.InstanceID, h.HasInstanceID = UUID(b[off+3:off+19]), true
			h.Len = off + 19
			return 0, nil
		}
	}
	end, need, problem := parseTags(b, off, frameLen, h, w)
	if need > 0 {
		return need, nil
	}
	h.TagProblem = problem
	if problem != TagOK {
		h.HasInstanceID = false
		h.InstanceID = UUID{}
	}
	h.Len = end
	return 0, nil
}

// parseTags walks tagged fields starting at off. It returns the offset after
// them, or need > 0 when b (a prefix of a frameLen-byte frame) is too short,
// and the first problem seen. Tag 0 with size 16 fills h's instance ID; the
// caller clears it when there is a problem. h may be nil (response headers).
// w, when not nil, resumes an earlier walk of a shorter prefix and keeps
// this one's progress when it needs more bytes. (The walk's state is kept
// in locals, and w written only when the walk stops short: this runs for
// every request.)
func parseTags(b []byte, off, frameLen int, h *RequestHeader, w *tagWalk) (end, need int, problem TagProblem) {
	if len(b) > frameLen {
		b = b[:frameLen] // never so at the callers; the loop's fast path relies on it
	}
	var left uint64
	prev := int64(-1)
	if w != nil && w.on {
		off, left, prev, problem = w.off, w.left, w.prev, w.problem
		if h != nil {
			h.InstanceID, h.HasInstanceID = w.iid, w.hasIID
		}
		w.on = false
	} else {
		var bad bool
		left, off, need, bad = uvarint(b, off, frameLen)
		if need > 0 {
			return 0, need, TagOK
		}
		if bad {
			return frameLen, 0, TagOverrun
		}
	}
	for ; left > 0; left-- {
		var tag, size uint64
		var next int
		if off >= 0 && off+1 < len(b) && b[off] < 0x80 && b[off+1] < 0x80 {
			// A tag and a size of one byte each, as in almost every
			// header: uvarint's loop is not needed.
			tag, size, next = uint64(b[off]), uint64(b[off+1]), off+2
		} else {
			var need int
			var bad bool
			tag, next, need, bad = uvarint(b, off, frameLen)
			if need > 0 {
				return suspend(w, h, tagWalk{on: true, off: off, left: left, prev: prev, problem: problem}, need)
			}
			if bad {
				return frameLen, 0, TagOverrun
			}
			size, next, need, bad = uvarint(b, next, frameLen)
			if need > 0 {
				return suspend(w, h, tagWalk{on: true, off: off, left: left, prev: prev, problem: problem}, need)
			}
			if bad {
				return frameLen, 0, TagOverrun
			}
		}
		if uint64(frameLen-next) < size {
			return frameLen, 0, TagOverrun
		}
		end := next + int(size)
		if end > len(b) {
			return suspend(w, h, tagWalk{on: true, off: off, left: left, prev: prev, problem: problem}, end)
		}
		p := TagOK
		switch t := int64(tag); {
		case t == prev:
			p = TagDuplicate
		case t < prev:
			p = TagDescending
		case tag == 0 && size != 16:
			p = TagBadSize
		case tag == 0 && h != nil:
			h.InstanceID = UUID(b[next:end]) // 16 bytes, as the case above says
			h.HasInstanceID = true
		}
		if problem == TagOK {
			problem = p
		}
		prev = int64(tag)
		off = end
	}
	return off, 0, problem
}

// suspend keeps a walk's progress in w (when not nil) and asks for need
// bytes. Not inlined: it is the cold path of parseTags's loop.
//
//go:noinline
func suspend(w *tagWalk, h *RequestHeader, st tagWalk, need int) (int, int, TagProblem) {
	if w != nil {
		*w = st
		if h != nil {
			w.iid, w.hasIID = h.InstanceID, h.HasInstanceID
		}
	}
	return 0, need, TagOK
}

// uvarint reads an unsigned varint of at most 5 bytes (Kafka's uint32
// varints) at off. need > 0 asks for more bytes; bad means the varint runs
// past the frame or is longer than 5 bytes.
func uvarint(b []byte, off, frameLen int) (v uint64, next, need int, bad bool) {
	var shift uint
	for i := 0; i < 5; i++ {
		p := off + i
		if p >= frameLen {
			return 0, 0, 0, true
		}
		if p >= len(b) {
			return 0, 0, p + 1, false
		}
		c := b[p]
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v, p + 1, 0, false
		}
		shift += 7
	}
	return 0, 0, 0, true
}
