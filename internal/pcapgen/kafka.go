package pcapgen

import (
	"encoding/binary"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Request header versions for RequestHeader.HeaderVersion.
const (
	// HeaderAuto picks the version Kafka uses for the API key and version:
	// v2 for flexible versions, v1 otherwise, v0 for ControlledShutdown v0.
	HeaderAuto = 0
	// HeaderV0 forces the v0 header (no client ID) on any request.
	HeaderV0 = -1
)

// ControlledShutdown is the only API whose v0 request uses header v0.
const controlledShutdownKey = 7

// RequestHeader is a Kafka request header as pcapgen writes it.
type RequestHeader struct {
	APIKey        int16
	APIVersion    int16
	CorrelationID int32
	// ClientID nil is written as the null string (length -1).
	ClientID *string
	// InstanceID, when non-nil, is written as tag 0 (ClientInstanceId,
	// KIP-1313) of a v2 or v3 header; a pointer to a zero array writes a zero
	// UUID, which is not the same bytes as an absent tag.
	InstanceID *[16]byte
	// RawTags, when non-nil, is written verbatim as the header's tagged-field
	// section (count included) instead of one built from InstanceID: the way
	// to write malformed tags. Only v2 and v3 headers have one.
	RawTags []byte
	// HeaderVersion is HeaderAuto, HeaderV0, 1, 2 or 3. v3 (the provisional
	// accepted-2026 layout) is written like v2.
	HeaderVersion int
}

// RequestHeaderVersion is the header version Kafka uses for a request of
// this key and version, from kmsg's flexible-version knowledge. Unknown keys
// get v1.
func RequestHeaderVersion(key, version int16) int {
	if key == controlledShutdownKey && version == 0 {
		return 0
	}
	if r := kmsg.RequestForKey(key); r != nil && flexible(r, version) {
		return 2
	}
	return 1
}

// ResponseHeaderVersion is the header version of a response of this key and
// version: v1 (with tagged fields) for flexible versions, except ApiVersions,
// whose responses always use v0 so that old clients can read them.
func ResponseHeaderVersion(key, version int16) int {
	if key == apiVersionsKey {
		return 0
	}
	if r := kmsg.ResponseForKey(key); r != nil && flexible(r, version) {
		return 1
	}
	return 0
}

// flexible reports whether version of a request or response is flexible
// (tagged fields, compact strings).
func flexible(m interface {
	SetVersion(int16)
	IsFlexible() bool
}, version int16) bool {
	m.SetVersion(version)
	return m.IsFlexible()
}

const apiVersionsKey = 18

// resolved returns the header version actually written.
func (h RequestHeader) resolved() int {
	switch h.HeaderVersion {
	case HeaderAuto:
		return RequestHeaderVersion(h.APIKey, h.APIVersion)
	case HeaderV0:
		return 0
	default:
		return h.HeaderVersion
	}
}

// AppendRequestHeader appends h's wire form (without the frame size).
func AppendRequestHeader(dst []byte, h RequestHeader) []byte {
	v := h.resolved()
	dst = binary.BigEndian.AppendUint16(dst, uint16(h.APIKey))
	dst = binary.BigEndian.AppendUint16(dst, uint16(h.APIVersion))
	dst = binary.BigEndian.AppendUint32(dst, uint32(h.CorrelationID))
	if v < 1 {
		return dst
	}
	// client_id keeps its int16 length even in v2 (not a compact string).
	if h.ClientID == nil {
		dst = binary.BigEndian.AppendUint16(dst, 0xffff)
	} else {
		dst = binary.BigEndian.AppendUint16(dst, uint16(len(*h.ClientID)))
		dst = append(dst, *h.ClientID...)
	}
	if v < 2 {
		return dst
	}
	switch {
	case h.RawTags != nil:
		dst = append(dst, h.RawTags...)
	case h.InstanceID != nil:
		dst = append(dst, 1, 0, 16) // one field, tag 0, 16 bytes
		dst = append(dst, h.InstanceID[:]...)
	default:
		dst = append(dst, 0)
	}
	return dst
}

// EncodeRequest returns a whole request frame (int32 size, header, body).
// The API key comes from body; body is encoded at h.APIVersion (EncodeRequest
// calls body.SetVersion).
func EncodeRequest(h RequestHeader, body kmsg.Request) []byte {
	h.APIKey = body.Key()
	body.SetVersion(h.APIVersion)
	dst := make([]byte, 4, 64)
	dst = AppendRequestHeader(dst, h)
	dst = body.AppendTo(dst)
	return putSize(dst)
}

// EncodeRequestRaw returns a request frame with body written verbatim; h's
// APIKey is used as given.
func EncodeRequestRaw(h RequestHeader, body []byte) []byte {
	dst := make([]byte, 4, 4+32+len(body))
	dst = AppendRequestHeader(dst, h)
	dst = append(dst, body...)
	return putSize(dst)
}

// EncodeResponse returns a whole response frame for body encoded at version,
// with the header version Kafka uses (see ResponseHeaderVersion).
func EncodeResponse(correlationID int32, version int16, body kmsg.Response) []byte {
	body.SetVersion(version)
	dst := make([]byte, 4, 64)
	dst = appendResponseHeader(dst, correlationID, ResponseHeaderVersion(body.Key(), version))
	dst = body.AppendTo(dst)
	return putSize(dst)
}

// EncodeResponseRaw returns a response frame with header version hv (0 or
// 1) and body written verbatim.
func EncodeResponseRaw(correlationID int32, hv int, body []byte) []byte {
	dst := make([]byte, 4, 4+5+len(body))
	dst = appendResponseHeader(dst, correlationID, hv)
	dst = append(dst, body...)
	return putSize(dst)
}

func appendResponseHeader(dst []byte, correlationID int32, hv int) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(correlationID))
	if hv >= 1 {
		dst = append(dst, 0) // no tagged fields
	}
	return dst
}

// putSize fills the int32 size prefix reserved at dst[0:4].
func putSize(dst []byte) []byte {
	binary.BigEndian.PutUint32(dst, uint32(len(dst)-4))
	return dst
}

// SASLToken frames a raw SASL token as a client sends it after a
// SaslHandshake v0: an int32 length and the bytes, with no Kafka header.
func SASLToken(token []byte) []byte {
	dst := make([]byte, 4, 4+len(token))
	dst = append(dst, token...)
	return putSize(dst)
}

// TLSClientHello returns the first bytes of a TLS 1.2/1.3 ClientHello record
// (content type 0x16), enough for a sniffer to recognise TLS. It is not a
// complete handshake message.
func TLSClientHello() []byte {
	return []byte{
		0x16, 0x03, 0x01, 0x00, 0x2f, // handshake record, TLS 1.0 record version, 47 bytes
		0x01, 0x00, 0x00, 0x2b, // ClientHello, 43 bytes
		0x03, 0x03, // client version TLS 1.2
		0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
		0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f, // random
		0x00,       // session id length
		0x00, 0x02, // cipher suites length
		0x13, 0x01, // TLS_AES_128_GCM_SHA256
		0x01, 0x00, // one compression method: null
		0x00, 0x00, // extensions length
	}
}
