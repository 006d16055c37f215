package decode

import "encoding/binary"

// The bodies of SPEC.md section 1 are read only as far as their identity
// fields go: each API's file declares, per direction, the fields at the
// start of its body up to the last one kwatch keeps (a layout), and the
// decoder holds a frame's bytes only up to there, counting the rest down
// (topic lists, assignments, PushTelemetry's metrics) without buffering
// it. A string of Kafka's protocol is at most 32767 bytes (its generated
// readers refuse longer ones), so the bytes held for an identity prefix are
// bounded whatever the frame's size: see maxIdentity.

// field is one field of an identity prefix: one kwatch keeps, or one before
// those that it steps over.
type field uint8

const (
	fThrottle         field = iota // int32 ThrottleMillis, stepped over
	fErrorCode                     // int16 ErrorCode
	fErrorMessage                  // nullable string ErrorMessage, stepped over
	fGroup                         // string: the group ID
	fMemberID                      // string: a request's member ID
	fNullableMemberID              // nullable string: a response's member ID
	fMemberEpoch                   // int32
	fTelemetryID                   // uuid ClientInstanceId of a telemetry body
	fSubscriptionID                // int32
	fSoftwareName                  // string ClientSoftwareName
	fSoftwareVersion               // string ClientSoftwareVersion
)

// layout is the identity prefix of one direction's body: its fields in
// wire order, present from version since on (older versions have none).
type layout struct {
	since  int16
	fields []field
}

// bodyCodec holds an API's layouts; nil: that direction's body is skipped
// by length.
type bodyCodec struct {
	request, response *layout
}

// bodyCodecs is indexed by API key (an array, not a map: it is looked up
// for every request and response); immutable. Each entry lives in the file
// named by its key.
var bodyCodecs = [...]bodyCodec{
	keySASLHandshake:             saslHandshake,
	keyAPIVersions:               apiVersions,
	keyConsumerGroupHeartbeat:    consumerGroupHeartbeat,
	keyGetTelemetrySubscriptions: getTelemetrySubscriptions,
	keyPushTelemetry:             pushTelemetry,
	keyShareGroupHeartbeat:       shareGroupHeartbeat,
	keyStreamsGroupHeartbeat:     streamsGroupHeartbeat,
}

// decodesResponse tells the resync scan whether key's answers are decoded.
func decodesResponse(key int16) bool { return codecFor(key).response != nil }

// codecFor returns key's codec; the zero bodyCodec (nothing decoded) for
// keys outside the table.
func codecFor(key int16) bodyCodec {
	if key < 0 || int(key) >= len(bodyCodecs) {
		return bodyCodec{}
	}
	return bodyCodecs[key]
}

// maxString is the longest string Kafka's generated readers accept.
const maxString = 0x7fff

// maxIdentity bounds the bytes of a body held for its identity fields: the
// longest layout (a heartbeat response: throttle, error code, error
// message, member ID, epoch) with both strings at maxString and 5-byte
// lengths.
const maxIdentity = 4 + 2 + 2*(5+maxString) + 4

// bodyChunk is how much of a body is held at first, and at least how much
// more each time its identity fields ask for more (each ask re-reads
// them). It is at least headChunk, so that the bytes held when a frame's
// header ends never pass it, and what is held does not depend on how the
// frame was chunked.
const bodyChunk = 256

// fieldReader reads a layout from a prefix of a body: "need more" is an
// answer (need > 0: the body's first need bytes must be held), not an
// error; bad means a field runs past the body or breaks Kafka's limits.
// Once either is set, reads return zero values.
type fieldReader struct {
	b    []byte // the bytes of the body held so far
	n    int    // the body's length
	off  int
	need int
	bad  bool
	flex bool
}

func (r *fieldReader) span(l int) ([]byte, bool) {
	end := r.off + l
	switch {
	case r.need > 0 || r.bad:
		return nil, false
	case l < 0 || end > r.n:
		r.bad = true
		return nil, false
	case end > len(r.b):
		r.need = end
		return nil, false
	}
	s := r.b[r.off:end:end]
	r.off = end
	return s, true
}

func (r *fieldReader) int16() int16 {
	if s, ok := r.span(2); ok {
		return int16(binary.BigEndian.Uint16(s))
	}
	return 0
}

func (r *fieldReader) int32() int32 {
	if s, ok := r.span(4); ok {
		return int32(binary.BigEndian.Uint32(s))
	}
	return 0
}

// str reads a string (compact when flexible); null reports a negative
// length, which only a nullable string may have (as kmsg reads them).
func (r *fieldReader) str(nullable bool) (s []byte, null bool) {
	var l int
	if r.flex {
		if r.need > 0 || r.bad {
			return nil, false
		}
		v, next, need, bad := uvarint(r.b, r.off, r.n)
		switch {
		case need > 0:
			r.need = need
			return nil, false
		case bad:
			r.bad = true
			return nil, false
		}
		r.off, l = next, int(v)-1
	} else {
		l = int(r.int16())
	}
	switch {
	case r.need > 0 || r.bad:
		return nil, false
	case l < 0 && nullable:
		return nil, true
	case l > maxString:
		r.bad = true
		return nil, false
	}
	s, _ = r.span(l)
	return s, false
}

// read reads l's fields for version ver into out (nil: only steps over
// them, to learn how far they go). Strings in out are copies.
func (l *layout) read(ver int16, r *fieldReader, out *Body) {
	if ver < l.since {
		return
	}
	var scratch Body
	if out == nil {
		out = &scratch
	}
	keep := out != &scratch
	for _, f := range l.fields {
		switch f {
		case fThrottle:
			r.int32()
		case fErrorCode:
			out.ErrorCode, out.HasErrorCode = r.int16(), true
		case fErrorMessage:
			r.str(true)
		case fGroup:
			out.Group = r.text(keep)
		case fMemberID:
			out.MemberID, out.HasMemberID = r.text(keep), true
		case fNullableMemberID:
			s, null := r.str(true)
			out.MemberID, out.HasMemberID = copyIf(keep, s), !null
		case fMemberEpoch:
			out.MemberEpoch = r.int32()
		case fTelemetryID:
			if s, ok := r.span(16); ok {
				out.TelemetryInstanceID = UUID(s)
			}
			out.HasTelemetryInstanceID = true
		case fSubscriptionID:
			out.SubscriptionID, out.HasSubscriptionID = r.int32(), true
		case fSoftwareName:
			out.ClientSoftwareName = r.text(keep)
		case fSoftwareVersion:
			out.ClientSoftwareVersion = r.text(keep)
		}
		if r.need > 0 || r.bad {
			return
		}
	}
}

// text reads a non-nullable string and copies it when keep is set.
func (r *fieldReader) text(keep bool) string {
	s, _ := r.str(false)
	return copyIf(keep, s)
}

func copyIf(keep bool, s []byte) string {
	if !keep || len(s) == 0 {
		return ""
	}
	return string(s)
}
