package decode

// bodyCodec decodes the identity fields of one API's bodies into a Body.
// Either function may be nil: that direction's body is skipped by length.
// They run only for the rare APIs of SPEC.md section 1, so they may
// allocate (kmsg's ReadFrom does); body is the frame after the header and
// is only valid during the call.
type bodyCodec struct {
	request  func(ver int16, body []byte, out *Body) error
	response func(ver int16, body []byte, out *Body) error
}

// bodyCodecs is indexed by API key (an array, not a map: it is looked up
// for every request and response); immutable. Each entry lives in the file
// named by its key.
var bodyCodecs = [...]bodyCodec{
	keySASLHandshake:             {response: saslHandshakeResponse},
	keyAPIVersions:               {request: apiVersionsRequest, response: apiVersionsResponse},
	keyConsumerGroupHeartbeat:    {request: consumerGroupHeartbeatRequest, response: consumerGroupHeartbeatResponse},
	keyGetTelemetrySubscriptions: {request: getTelemetrySubscriptionsRequest, response: getTelemetrySubscriptionsResponse},
	keyPushTelemetry:             {request: pushTelemetryRequest, response: pushTelemetryResponse},
	keyShareGroupHeartbeat:       {request: shareGroupHeartbeatRequest, response: shareGroupHeartbeatResponse},
	keyStreamsGroupHeartbeat:     {request: streamsGroupHeartbeatRequest, response: streamsGroupHeartbeatResponse},
}

// decodesRequest / decodesResponse tell the framer whether to buffer a
// body. Every other body (Produce, Fetch, SaslAuthenticate, ...) is counted
// down without being copied.
func decodesRequest(key int16) bool  { return codecFor(key).request != nil }
func decodesResponse(key int16) bool { return codecFor(key).response != nil }

// codecFor returns key's codec; the zero bodyCodec (nothing decoded) for
// keys outside the table.
func codecFor(key int16) bodyCodec {
	if key < 0 || int(key) >= len(bodyCodecs) {
		return bodyCodec{}
	}
	return bodyCodecs[key]
}

// maxBody bounds the body buffered for a decoded API; a larger frame is
// skipped with Body.BodyError set.
const maxBody = 1 << 20

// bodyLimit is the largest frame of key buffered to decode its body, in
// one direction: room for the largest a legitimate client or broker sends,
// so that a peer cannot make the decoder hold more. ApiVersions,
// SaslHandshake and GetTelemetrySubscriptions bodies are lists of a few
// hundred short entries at most; heartbeats carry assignments and
// topologies, and PushTelemetry its metrics (the broker's
// telemetry.max.bytes is 1 MiB), so they keep maxBody.
func bodyLimit(key int16, response bool) int {
	switch key {
	case keyAPIVersions:
		if response {
			return 64 << 10
		}
		return 16 << 10
	case keyGetTelemetrySubscriptions:
		if response {
			return 256 << 10
		}
		return 16 << 10
	case keySASLHandshake:
		return 16 << 10
	case keyPushTelemetry:
		if response {
			return 16 << 10
		}
	}
	return maxBody
}

// kmsgBody is the part of kmsg's request and response types the codecs use.
type kmsgBody interface {
	SetVersion(int16)
	ReadFrom([]byte) error
}

func readBody(m kmsgBody, ver int16, body []byte) error {
	m.SetVersion(ver)
	return m.ReadFrom(body)
}

func nullableString(s *string) (string, bool) {
	if s == nil {
		return "", false
	}
	return *s, true
}
