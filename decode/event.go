package decode

import (
	"time"

	"github.com/kwatch/kwatch/flow"
	"github.com/kwatch/kwatch/internal/enum"
)

// Kind says what an Event describes.
type Kind uint8

const (
	// KindRequest is a decoded request frame (client to broker).
	KindRequest Kind = iota + 1
	// KindResponse is a decoded response frame (broker to client).
	KindResponse
	// KindCoverage is a coverage event (section 3.6 of SPEC.md).
	KindCoverage
	// KindConnStart opens a connection once it is recognised as Kafka.
	KindConnStart
	// KindConnEnd closes a connection (FIN, RST, idle flush, end of input).
	KindConnEnd
)

var kindNames = [...]string{KindRequest: "request", KindResponse: "response", KindCoverage: "event", KindConnStart: "conn-start", KindConnEnd: "conn-end"}

func (k Kind) String() string { return enum.Name(kindNames[:], k, "unknown") }

// Coverage names what a coverage event says could not be seen.
type Coverage uint8

const (
	CoverageNone Coverage = iota
	// MidstreamJoin: the connection's SYN and SYN-ACK were not captured.
	MidstreamJoin
	// StreamGap: bytes were lost (missing segment, reassembly buffer cap).
	StreamGap
	// FramingError: a frame size or header made no sense; the decoder resyncs.
	FramingError
	// TLSConnection: the client's first byte was a TLS record (0x16).
	TLSConnection
	// SASLRawTokens: raw SASL tokens after a SaslHandshake v0 were skipped.
	SASLRawTokens
	// UnmatchedResponse: a response whose correlation ID matches no request.
	UnmatchedResponse
	// TruncatedPacket: the packet was cut by the capture's snap length.
	TruncatedPacket
	// TLSDecryptFailed: a TLS connection's record failed to authenticate
	// with the key log's secrets (or was malformed); nothing after it was
	// decrypted or decoded.
	TLSDecryptFailed
	// NumCoverage is the number of Coverage values (arrays indexed by one).
	NumCoverage
)

var coverageNames = [...]string{
	CoverageNone:      "none",
	MidstreamJoin:     "midstream-join",
	StreamGap:         "stream-gap",
	FramingError:      "framing-error",
	TLSConnection:     "tls-connection",
	SASLRawTokens:     "sasl-raw-tokens",
	UnmatchedResponse: "unmatched-response",
	TruncatedPacket:   "truncated-packet",
	TLSDecryptFailed:  "tls-decrypt-failed",
}

// String returns the event name used in reports and JSON.
func (c Coverage) String() string { return enum.Name(coverageNames[:], c, "unknown") }

// Coverages lists every coverage event, in report order.
func Coverages() []Coverage {
	return []Coverage{MidstreamJoin, StreamGap, FramingError, TLSConnection, SASLRawTokens, UnmatchedResponse, TruncatedPacket, TLSDecryptFailed}
}

// TagProblem says why the request header's tagged fields are malformed
// (rule instance-id-malformed). TagOK means they parsed cleanly.
type TagProblem uint8

const (
	TagOK TagProblem = iota
	// TagBadSize: tag 0 present with a size other than 16.
	TagBadSize
	// TagDuplicate: the same tag appears twice.
	TagDuplicate
	// TagDescending: tags are not strictly ascending.
	TagDescending
	// TagOverrun: the tagged fields run past the end of the frame.
	TagOverrun
)

var tagProblemNames = [...]string{TagOK: "ok", TagBadSize: "tag 0 size is not 16", TagDuplicate: "duplicate tag",
	TagDescending: "tags not ascending", TagOverrun: "tagged fields overrun the header"}

func (t TagProblem) String() string { return enum.Name(tagProblemNames[:], t, "unknown") }

// UUID is a 16-byte Kafka Uuid.
type UUID [16]byte

// IsZero reports whether u is the all-zero UUID (Kafka's "no ID").
func (u UUID) IsZero() bool { return u == UUID{} }

// Body holds the identity fields of the bodies SPEC.md section 1 decodes.
// Only the fields of the decoded API are meaningful; Has* flags say which.
// Strings here are copies: they stay valid after the event.
type Body struct {
	// Decoded is true when the body was parsed. BodyError is set when a body
	// kwatch decodes did not parse; the header fields are still valid.
	Decoded   bool
	BodyError bool

	// Group: ConsumerGroupHeartbeat, ShareGroupHeartbeat, StreamsGroupHeartbeat requests.
	Group string
	// MemberID: heartbeat requests, and heartbeat responses (the member ID
	// the broker answers with; HasMemberID false when null).
	MemberID    string
	HasMemberID bool
	// MemberEpoch: heartbeat requests and responses.
	MemberEpoch int32

	// TelemetryInstanceID: GetTelemetrySubscriptions request and response,
	// PushTelemetry request (the body's ClientInstanceId).
	TelemetryInstanceID    UUID
	HasTelemetryInstanceID bool
	SubscriptionID         int32
	HasSubscriptionID      bool

	// ErrorCode: top-level error code of a decoded response.
	ErrorCode    int16
	HasErrorCode bool

	// ClientSoftwareName and Version: ApiVersions request v3+.
	ClientSoftwareName    string
	ClientSoftwareVersion string
}

// Event is one decoded PDU, coverage event or connection boundary. The
// decoder reuses one Event, and all the Conns of a Decoder share it: it is
// valid only during the Sink call, the next event of any of those Conns
// overwrites it, and ClientID points into the decoder's buffer or into the
// bytes being fed. Whoever keeps a value copies it (strings in Body are
// already copies); no sink keeps the *Event past its call. Those of
// kwatch, as of issue 12: audit reads it during the call (its lazily
// filled Observation points to it until the next step, which the same
// call completes), the TUI's recorder and fleet's publisher copy what they
// keep, output renders it, the pipeline's sharded workers copy it into
// their batch. A Sink must not modify the Event: the decoder leaves fields
// it knows to be unchanged in place from one event to the next (only the
// pipeline's TLS layer sets Decrypted on the events it passes on, which
// the decoder resets for each Conn).
type Event struct {
	Kind  Kind
	Conn  flow.ConnID
	Frame uint64
	Time  time.Time

	// Slot is storage for a sink's own state about the connection, so that
	// it need not look Conn up in a map keyed by flow.ConnID on every event. It
	// points to the same variable in every event of one Conn (whose flow.ConnID
	// does not change once it has emitted an event), to another for each
	// Conn, and is nil in events no Conn made. The decoder never reads or
	// writes *Slot, and a copied Event carries the pointer along. A sink
	// stores there only when it finds nil or a value of its own: sinks
	// chained on the same events share it. It is per Conn, not per flow.ConnID:
	// a sink whose state is per flow.ConnID looks it up once per Slot.
	Slot *any

	// FromStart: the connection's SYN or SYN-ACK was seen (SPEC.md section 2).
	FromStart bool
	// Partial: this PDU was decoded after a stream gap or a resync, so what
	// came before it on the connection is not fully known.
	Partial bool
	// Cut: the snap length cut fields of this request or response (see
	// Cut); a rule that needs one of them does not judge it.
	Cut Cut

	// Header fields (requests and responses). For responses APIKey and
	// APIVersion come from the matched request.
	APIKey        APIKey
	APIVersion    int16
	HeaderVersion int8
	CorrelationID int32
	// Size is the frame size (the int32 before the header), in bytes.
	Size int32

	// Request header only. ClientIDNull is true for a null client ID (v1+
	// headers) and for v0 headers, which have no client ID field.
	ClientID     []byte
	ClientIDNull bool
	// InstanceID is tag 0 of a v2 request header when it is well formed
	// (size 16); HasInstanceID is false when the tag is absent. A present but
	// zero ID has HasInstanceID true and InstanceID zero: the audit treats it
	// as absent, dump prints neither.
	InstanceID    UUID
	HasInstanceID bool
	TagProblem    TagProblem
	// Response only (here, in the padding before RequestFrame, so that
	// Event keeps its size): the client reused the correlation ID while a
	// request with it awaited its answer; RequestFrame names the later
	// request, but which of the two this answers cannot be told.
	RequestAmbiguous bool

	// Response only: the frame of the request it answers. Unmatched
	// responses are reported as coverage events, not as responses.
	RequestFrame uint64

	Body Body

	// Coverage events.
	Coverage Coverage
	// Decrypted (every kind; here, in Coverage's padding, so that Event
	// keeps its size): the connection is TLS and the event was decoded from
	// bytes decrypted with the key log's secrets (tlsdec).
	Decrypted bool
	// Detail is a short human-readable reason (never secret bytes).
	Detail string
	// Bytes counts what the coverage event is about: bytes lost in a gap,
	// bytes of skipped SASL tokens or TLS records.
	Bytes int64
}

// Sink receives decoded events in order for one connection. Events of
// different connections may interleave.
type Sink interface {
	Event(*Event)
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(*Event)

// Event calls f(e).
func (f SinkFunc) Event(e *Event) { f(e) }

// Options tunes a decoder. The zero value is usable.
type Options struct {
	// MaxFrame is the largest frame size accepted (default 100 MiB).
	MaxFrame int32
	// AssumeKafka skips recognition by content: the connection is on a port
	// the user named, so framing errors are reported from the first byte.
	AssumeKafka bool
	// MaxInFlight caps remembered requests awaiting a response (default 4096).
	MaxInFlight int
	// HeaderV3, when set, names the API versions whose requests use header
	// v3 (SPEC.md section 4, profile accepted-2026). Until Kafka publishes
	// its layout, v3 is decoded as the v2 layout with the instance ID as
	// tag 0, and Event.HeaderVersion says 3.
	HeaderV3 func(key, version int16) bool
}

// DefaultMaxFrame is SPEC.md's default frame size limit.
const DefaultMaxFrame = 100 << 20
