// Package fleet carries kwatch's observations over Kafka (SPEC.md section
// 7): agents, where the packets are, publish the decoded identity events of
// their captures as versioned records; an aggregator consumes them from
// every agent, merges them by capture time and feeds one auditor, so that
// its findings are those of kwatch read over the same captures merged by
// time.
//
// What crosses the wire is a decode.Event without its packet: headers,
// identity fields, coverage events and connection boundaries. Never packet
// bytes, SASL tokens or TLS secrets (the decoder never puts them in an
// event).
//
// Concurrency: a Publisher is used by the pipeline's goroutine; an
// Aggregator by one goroutine. Buffers: records are encoded into buffers
// the package owns; decoded events are valid until the next call, as the
// decoder's are.
package fleet

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"time"

	"github.com/kwatch/kwatch/decode"
)

// RecordVersion is the version of Record this package writes and reads.
const RecordVersion = 1

// Record kinds.
const (
	// KindEvent carries one decoded event.
	KindEvent = "event"
	// KindEnd says an agent's capture ended and carries its totals.
	KindEnd = "end"
)

// Record is one message on the fleet topic (docs/fleet.md describes it).
type Record struct {
	V     int    `json:"v"`
	Kind  string `json:"kind"`
	Agent string `json:"agent"`
	// Seq numbers an agent's records from 1, in the order they were made.
	Seq uint64 `json:"seq"`
	// At is the capture time (Unix nanoseconds) of the packet the agent
	// was analyzing when it made the record: the order in which kwatch read
	// over merged captures would have made it. The aggregator merges by it.
	At int64 `json:"at"`
	// Capture names the capture file (or the agent) the event's frames
	// are numbered in.
	Capture string  `json:"capture,omitempty"`
	Event   *Event  `json:"event,omitempty"`
	Totals  *Totals `json:"totals,omitempty"`

	// Where the aggregator consumed the record.
	partition int32
	offset    int64
}

// Totals is what an agent read, sent with its end record.
type Totals struct {
	Packets     uint64 `json:"packets"`
	Bytes       uint64 `json:"bytes"`
	Connections uint64 `json:"connections"`
	// Last is the capture time of the agent's last packet (Unix ns).
	Last int64 `json:"last"`
}

// Event is a decode.Event as a record carries it: frames are numbers in
// the record's capture.
type Event struct {
	Kind          decode.Kind       `json:"k"`
	Client        netip.AddrPort    `json:"c"`
	Broker        netip.AddrPort    `json:"b"`
	StartFrame    uint64            `json:"sf"`
	Frame         uint64            `json:"f"`
	Time          int64             `json:"t"`
	FromStart     bool              `json:"fs,omitempty"`
	Partial       bool              `json:"p,omitempty"`
	APIKey        decode.APIKey     `json:"ak,omitempty"`
	APIVersion    int16             `json:"av,omitempty"`
	HeaderVersion int8              `json:"hv,omitempty"`
	CorrelationID int32             `json:"cid,omitempty"`
	Size          int32             `json:"sz,omitempty"`
	ClientID      *[]byte           `json:"id,omitempty"` // nil: null; bytes, as on the wire
	InstanceID    *decode.UUID      `json:"iid,omitempty"`
	TagProblem    decode.TagProblem `json:"tp,omitempty"`
	Ambiguous     bool              `json:"amb,omitempty"`
	RequestFrame  uint64            `json:"rf,omitempty"`
	Body          *Body             `json:"body,omitempty"`
	Coverage      decode.Coverage   `json:"cov,omitempty"`
	Detail        string            `json:"d,omitempty"`
	Bytes         int64             `json:"n,omitempty"`
}

// Body is decode.Body with its strings as bytes: wire text need not be
// UTF-8, and a JSON string would change it.
type Body struct {
	Decoded, BodyError     bool
	Group, MemberID        []byte
	HasMemberID            bool
	MemberEpoch            int32
	TelemetryInstanceID    decode.UUID
	HasTelemetryInstanceID bool
	SubscriptionID         int32
	HasSubscriptionID      bool
	ErrorCode              int16
	HasErrorCode           bool
	SoftwareName           []byte
	SoftwareVersion        []byte
}

func fromBody(b *decode.Body) *Body {
	return &Body{
		Decoded: b.Decoded, BodyError: b.BodyError, Group: []byte(b.Group), MemberID: []byte(b.MemberID),
		HasMemberID: b.HasMemberID, MemberEpoch: b.MemberEpoch, TelemetryInstanceID: b.TelemetryInstanceID,
		HasTelemetryInstanceID: b.HasTelemetryInstanceID, SubscriptionID: b.SubscriptionID,
		HasSubscriptionID: b.HasSubscriptionID, ErrorCode: b.ErrorCode, HasErrorCode: b.HasErrorCode,
		SoftwareName: []byte(b.ClientSoftwareName), SoftwareVersion: []byte(b.ClientSoftwareVersion),
	}
}

func (b *Body) toDecode() decode.Body {
	return decode.Body{
		Decoded: b.Decoded, BodyError: b.BodyError, Group: string(b.Group), MemberID: string(b.MemberID),
		HasMemberID: b.HasMemberID, MemberEpoch: b.MemberEpoch, TelemetryInstanceID: b.TelemetryInstanceID,
		HasTelemetryInstanceID: b.HasTelemetryInstanceID, SubscriptionID: b.SubscriptionID,
		HasSubscriptionID: b.HasSubscriptionID, ErrorCode: b.ErrorCode, HasErrorCode: b.HasErrorCode,
		ClientSoftwareName: string(b.SoftwareName), ClientSoftwareVersion: string(b.SoftwareVersion),
	}
}

// fromDecode copies e into a record's Event; frame turns the pipeline's
// frames into numbers in the event's capture.
func fromDecode(e *decode.Event, frame func(uint64) uint64) *Event {
	r := &Event{
		Kind: e.Kind, Client: e.Conn.Client, Broker: e.Conn.Broker, StartFrame: frame(e.Conn.StartFrame),
		Frame: frame(e.Frame), Time: e.Time.UnixNano(), FromStart: e.FromStart, Partial: e.Partial,
		APIKey: e.APIKey, APIVersion: e.APIVersion, HeaderVersion: e.HeaderVersion, CorrelationID: e.CorrelationID,
		Size: e.Size, TagProblem: e.TagProblem, Ambiguous: e.RequestAmbiguous, Coverage: e.Coverage,
		Detail: e.Detail, Bytes: e.Bytes,
	}
	if e.RequestFrame != 0 {
		r.RequestFrame = frame(e.RequestFrame)
	}
	if !e.ClientIDNull {
		id := append([]byte{}, e.ClientID...)
		r.ClientID = &id
	}
	if e.HasInstanceID {
		id := e.InstanceID
		r.InstanceID = &id
	}
	if e.Body != (decode.Body{}) {
		r.Body = fromBody(&e.Body)
	}
	return r
}

// toDecode fills e from r; frame turns numbers in the record's capture
// into the aggregator's frames.
func (r *Event) toDecode(e *decode.Event, frame func(uint64) uint64) {
	*e = decode.Event{
		Kind: r.Kind, Conn: decode.ConnID{Client: r.Client, Broker: r.Broker, StartFrame: frame(r.StartFrame)},
		Frame: frame(r.Frame), Time: time.Unix(0, r.Time).UTC(), FromStart: r.FromStart, Partial: r.Partial,
		APIKey: r.APIKey, APIVersion: r.APIVersion, HeaderVersion: r.HeaderVersion, CorrelationID: r.CorrelationID,
		Size: r.Size, TagProblem: r.TagProblem, RequestAmbiguous: r.Ambiguous, Coverage: r.Coverage,
		Detail: r.Detail, Bytes: r.Bytes, ClientIDNull: r.ClientID == nil,
	}
	if r.RequestFrame != 0 {
		e.RequestFrame = frame(r.RequestFrame)
	}
	if r.ClientID != nil {
		e.ClientID = *r.ClientID
	}
	if r.InstanceID != nil {
		e.InstanceID, e.HasInstanceID = *r.InstanceID, true
	}
	if r.Body != nil {
		e.Body = r.Body.toDecode()
	}
}

// ParseRecord decodes one record and checks its version and kind.
func ParseRecord(b []byte) (*Record, error) {
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("fleet: record: %w", err)
	}
	switch {
	case r.V != RecordVersion:
		return nil, fmt.Errorf("fleet: record version %d, this kwatch reads %d", r.V, RecordVersion)
	case r.Agent == "":
		return nil, fmt.Errorf("fleet: record without an agent")
	case r.Kind == KindEvent && r.Event == nil, r.Kind == KindEnd && r.Totals == nil:
		return nil, fmt.Errorf("fleet: %s record without its payload", r.Kind)
	case r.Kind != KindEvent && r.Kind != KindEnd:
		return nil, fmt.Errorf("fleet: unknown record kind %q", r.Kind)
	}
	return &r, nil
}
