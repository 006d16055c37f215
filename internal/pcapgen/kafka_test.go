package pcapgen

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// parsedHeader is a request header read back by an independent parser.
type parsedHeader struct {
	key, version int16
	corr         int32
	clientID     *string
	tags         []byte // tagged-field section, verbatim
	instanceID   *[16]byte
}

// parseRequest splits a request frame into header fields and body, reading
// a header of version hv.
func parseRequest(t *testing.T, frame []byte, hv int) (parsedHeader, []byte) {
	t.Helper()
	if len(frame) < 4 || int(binary.BigEndian.Uint32(frame)) != len(frame)-4 {
		t.Fatalf("size prefix does not match frame length %d", len(frame))
	}
	b := frame[4:]
	h := parsedHeader{key: int16(binary.BigEndian.Uint16(b)), version: int16(binary.BigEndian.Uint16(b[2:])), corr: int32(binary.BigEndian.Uint32(b[4:]))}
	b = b[8:]
	if hv >= 1 {
		n := int16(binary.BigEndian.Uint16(b))
		b = b[2:]
		if n >= 0 {
			s := string(b[:n])
			h.clientID = &s
			b = b[n:]
		}
	}
	if hv >= 2 {
		start := b
		count, n := binary.Uvarint(b)
		b = b[n:]
		for range count {
			tag, n := binary.Uvarint(b)
			b = b[n:]
			size, n := binary.Uvarint(b)
			b = b[n:]
			if tag == 0 && size == 16 {
				var id [16]byte
				copy(id[:], b)
				h.instanceID = &id
			}
			b = b[size:]
		}
		h.tags = start[:len(start)-len(b)]
	}
	return h, b
}

func TestEncodeRequest(t *testing.T) {
	id := SeqUUID(1)
	zero := [16]byte{}
	tests := []struct {
		name       string
		h          RequestHeader
		body       kmsg.Request
		wantHV     int
		wantTags   []byte // nil: not checked
		wantCID    *string
		wantInstID *[16]byte
	}{
		{name: "ApiVersions v4 with instance ID", h: RequestHeader{APIVersion: 4, CorrelationID: 1, ClientID: Ptr("app"), InstanceID: &id},
			body: APIVersions(4, "apache-kafka-java", "4.2.0"), wantHV: 2, wantCID: Ptr("app"), wantInstID: &id},
		{name: "ApiVersions v2 is header v1", h: RequestHeader{APIVersion: 2, CorrelationID: 2, ClientID: Ptr("app"), InstanceID: &id},
			body: APIVersions(2, "", ""), wantHV: 1, wantCID: Ptr("app")},
		{name: "null client ID, no tags", h: RequestHeader{APIVersion: 12, CorrelationID: 3},
			body: Metadata(12, "orders"), wantHV: 2, wantTags: []byte{0}},
		{name: "zero instance ID is written", h: RequestHeader{APIVersion: 1, CorrelationID: 4, ClientID: Ptr(""), InstanceID: &zero},
			body: ConsumerGroupHeartbeat(1, "g", "m", 0), wantHV: 2, wantCID: Ptr(""), wantInstID: &zero},
		{name: "raw tags override instance ID", h: RequestHeader{APIVersion: 0, CorrelationID: 5, InstanceID: &id, RawTags: []byte{1, 0, 3, 7, 7, 7}},
			body: GetTelemetrySubscriptions(id), wantHV: 2, wantTags: []byte{1, 0, 3, 7, 7, 7}},
		{name: "SaslHandshake v1 is header v1", h: RequestHeader{APIVersion: 1, CorrelationID: 6, ClientID: Ptr("sasl")},
			body: SaslHandshake(1, "PLAIN"), wantHV: 1, wantCID: Ptr("sasl")},
		{name: "ControlledShutdown v0 is header v0", h: RequestHeader{APIVersion: 0, CorrelationID: 7, ClientID: Ptr("x")},
			body: kmsg.NewPtrControlledShutdownRequest(), wantHV: 0},
		{name: "forced v0", h: RequestHeader{APIVersion: 9, CorrelationID: 8, ClientID: Ptr("x"), HeaderVersion: HeaderV0},
			body: Metadata(9), wantHV: 0},
		{name: "header v3 written like v2", h: RequestHeader{APIVersion: 0, CorrelationID: 9, ClientID: Ptr("x"), InstanceID: &id, HeaderVersion: 3},
			body: PushTelemetry(id, 3), wantHV: 2, wantCID: Ptr("x"), wantInstID: &id},
		{name: "Produce v11 flexible", h: RequestHeader{APIVersion: 11, CorrelationID: 10, ClientID: Ptr("p"), InstanceID: &id},
			body: Produce(11, "orders", [16]byte{}, bytes.Repeat([]byte{0xab}, 300)), wantHV: 2, wantCID: Ptr("p"), wantInstID: &id},
		{name: "Produce v8 not flexible", h: RequestHeader{APIVersion: 8, CorrelationID: 11, ClientID: Ptr("p"), InstanceID: &id},
			body: Produce(8, "orders", [16]byte{}, []byte{1, 2, 3}), wantHV: 1, wantCID: Ptr("p")},
		{name: "Fetch v15", h: RequestHeader{APIVersion: 15, CorrelationID: 12, ClientID: Ptr("f")},
			body: Fetch(15, "", SeqUUID(9)), wantHV: 2, wantCID: Ptr("f")},
		{name: "ShareGroupHeartbeat v1", h: RequestHeader{APIVersion: 1, CorrelationID: 13, ClientID: Ptr("s"), InstanceID: &id},
			body: ShareGroupHeartbeat(1, "sg", JavaString(id), 0), wantHV: 2, wantCID: Ptr("s"), wantInstID: &id},
		{name: "StreamsGroupHeartbeat v0", h: RequestHeader{APIVersion: 0, CorrelationID: 14, ClientID: Ptr("st"), InstanceID: &id},
			body: StreamsGroupHeartbeat(0, "stg", JavaString(id), 0), wantHV: 2, wantCID: Ptr("st"), wantInstID: &id},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			frame := EncodeRequest(tt.h, tt.body)
			if got := RequestHeaderVersion(tt.body.Key(), tt.h.APIVersion); tt.h.HeaderVersion == HeaderAuto && got != tt.wantHV {
				t.Errorf("RequestHeaderVersion = %d, want %d", got, tt.wantHV)
			}
			h, body := parseRequest(t, frame, tt.wantHV)
			if h.key != tt.body.Key() || h.version != tt.h.APIVersion || h.corr != tt.h.CorrelationID {
				t.Errorf("header key/version/corr = %d/%d/%d, want %d/%d/%d", h.key, h.version, h.corr, tt.body.Key(), tt.h.APIVersion, tt.h.CorrelationID)
			}
			if !reflect.DeepEqual(h.clientID, tt.wantCID) {
				t.Errorf("client ID = %v, want %v", h.clientID, tt.wantCID)
			}
			if !reflect.DeepEqual(h.instanceID, tt.wantInstID) {
				t.Errorf("instance ID = %v, want %v", h.instanceID, tt.wantInstID)
			}
			if tt.wantTags != nil && !bytes.Equal(h.tags, tt.wantTags) {
				t.Errorf("tags = %x, want %x", h.tags, tt.wantTags)
			}
			back := kmsg.RequestForKey(tt.body.Key())
			back.SetVersion(tt.h.APIVersion)
			if err := back.ReadFrom(body); err != nil {
				t.Fatalf("kmsg ReadFrom: %v", err)
			}
			if !reflect.DeepEqual(back, tt.body) {
				t.Errorf("body round trip:\n got %+v\nwant %+v", back, tt.body)
			}
		})
	}
}

func TestEncodeResponse(t *testing.T) {
	id := SeqUUID(5)
	tests := []struct {
		name    string
		version int16
		body    kmsg.Response
		wantHV  int
	}{
		{name: "ApiVersions v4 uses header v0", version: 4, body: APIVersionsResponse(4), wantHV: 0},
		{name: "ConsumerGroupHeartbeat v1 uses header v1", version: 1, body: ConsumerGroupHeartbeatResponse(1, 0, Ptr(JavaString(id)), 3), wantHV: 1},
		{name: "GetTelemetrySubscriptions", version: 0, body: GetTelemetrySubscriptionsResponse(42, id, 2), wantHV: 1},
		{name: "PushTelemetry", version: 0, body: PushTelemetryResponse(0), wantHV: 1},
		{name: "Metadata v8 uses header v0", version: 8, body: MetadataResponse(8, "b", 9092), wantHV: 0},
		{name: "Fetch v15", version: 15, body: FetchResponse(15, "", id, []byte("records")), wantHV: 1},
		{name: "SaslHandshake", version: 1, body: SaslHandshakeResponse(1, "PLAIN"), wantHV: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			frame := EncodeResponse(77, tt.version, tt.body)
			if got := ResponseHeaderVersion(tt.body.Key(), tt.version); got != tt.wantHV {
				t.Errorf("ResponseHeaderVersion = %d, want %d", got, tt.wantHV)
			}
			if int(binary.BigEndian.Uint32(frame)) != len(frame)-4 {
				t.Fatal("size prefix does not match")
			}
			if corr := binary.BigEndian.Uint32(frame[4:]); corr != 77 {
				t.Errorf("correlation ID = %d", corr)
			}
			body := frame[8:]
			if tt.wantHV == 1 {
				if body[0] != 0 {
					t.Fatalf("response header tags = %d, want 0", body[0])
				}
				body = body[1:]
			}
			back := kmsg.ResponseForKey(tt.body.Key())
			back.SetVersion(tt.version)
			if err := back.ReadFrom(body); err != nil {
				t.Fatalf("kmsg ReadFrom: %v", err)
			}
			if !reflect.DeepEqual(back, tt.body) {
				t.Errorf("body round trip:\n got %+v\nwant %+v", back, tt.body)
			}
		})
	}
}

func TestRawFrames(t *testing.T) {
	tests := []struct {
		name string
		got  []byte
		want []byte
	}{
		{name: "request raw", got: EncodeRequestRaw(RequestHeader{APIKey: 3, APIVersion: 1, CorrelationID: 2, ClientID: Ptr("c")}, []byte{9}),
			want: []byte{0, 0, 0, 12, 0, 3, 0, 1, 0, 0, 0, 2, 0, 1, 'c', 9}},
		{name: "response raw v1", got: EncodeResponseRaw(5, 1, []byte{1, 2}), want: []byte{0, 0, 0, 7, 0, 0, 0, 5, 0, 1, 2}},
		{name: "sasl token", got: SASLToken([]byte("secret")), want: append([]byte{0, 0, 0, 6}, "secret"...)},
		{name: "tls client hello length", got: TLSClientHello()[3:5], want: []byte{0, byte(len(TLSClientHello()) - 5)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !bytes.Equal(tt.got, tt.want) {
				t.Errorf("got %x, want %x", tt.got, tt.want)
			}
		})
	}
}
