package audit

import (
	"bytes"
	"net/netip"
	"reflect"
	"testing"
	"time"

	"github.com/kwatch/kwatch/decode"
	"github.com/kwatch/kwatch/flow"
)

// An Observation survives its encoding field for field (the in-process
// book aside), and damaged bytes are an error, never a panic.
func TestObservationEncoding(t *testing.T) {
	at := time.Date(2026, 11, 29, 16, 49, 25, 123456000, time.UTC)
	tests := []struct {
		name string
		o    Observation
	}{
		{"zero", Observation{}},
		{"instance step", Observation{Step: StepInstance, PDU: decode.KindRequest,
			Conn:  flow.ConnID{Client: netip.MustParseAddrPort("10.0.0.5:53122"), Broker: netip.MustParseAddrPort("10.0.0.9:9092"), StartFrame: 3},
			Frame: 1234, Time: at, APIKey: decode.KeyMetadata, APIVersion: 12, CorrelationID: -7,
			ClientID: "orders-app", HasClientID: true, Instance: v4A, InstanceFixed: true, HeaderID: v4A, FromStart: true, Kafka: true}},
		{"heartbeat answer over IPv6", Observation{Step: StepHeartbeatAnswer, PDU: decode.KindResponse,
			Conn:  flow.ConnID{Client: netip.MustParseAddrPort("[fd00::5]:40000"), Broker: netip.MustParseAddrPort("[fd00::9]:9092")},
			Frame: 1 << 40, Time: at, APIKey: decode.KeyConsumerGroupHeartbeat, NoInstance: true, Partial: true,
			Payload: Payload{Group: "orders\x00\u2028", MemberID: JavaString(v4A), MemberEpoch: -2, Assigned: "broker-given", OK: true, Join: true}}},
		{"telemetry and software", Observation{Step: StepTelemetry, Payload: Payload{Telemetry: v4B, Set: true, AdoptedHere: true,
			Software: "apache-kafka-java", SwVersion: "4.2.0"}}},
	}
	for _, tt := range tests {
		b, err := tt.o.AppendBinary([]byte("prefix"))
		if err != nil || !bytes.HasPrefix(b, []byte("prefix")) {
			t.Fatalf("%s: AppendBinary = %v, %v", tt.name, b, err)
		}
		var got Observation
		if err := got.UnmarshalBinary(b[len("prefix"):]); err != nil {
			t.Fatalf("%s: UnmarshalBinary: %v", tt.name, err)
		}
		want := tt.o
		if want.Time.IsZero() {
			want.Time = time.Unix(0, want.Time.UnixNano()).UTC() // the zero time has no nanosecond count
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: round trip\n got %+v\nwant %+v", tt.name, got, want)
		}
		for n := range len(b) - len("prefix") {
			if err := got.UnmarshalBinary(b[len("prefix") : len("prefix")+n]); err == nil {
				t.Errorf("%s: %d of its bytes decoded", tt.name, n)
			}
		}
		bad := append([]byte{}, b[len("prefix"):]...)
		bad[0] = observationVersion + 1
		if err := got.UnmarshalBinary(bad); err == nil {
			t.Errorf("%s: an unknown version decoded", tt.name)
		}
	}
}

// FuzzObservation: UnmarshalBinary never panics, and what it accepts
// encodes back to bytes that decode to the same Observation.
func FuzzObservation(f *testing.F) {
	o := Observation{Step: StepHeartbeat, Payload: Payload{Group: "g", MemberID: JavaString(v4A)}}
	seed, _ := o.AppendBinary(nil)
	f.Add(seed)
	f.Add([]byte{observationVersion})
	f.Add([]byte{observationVersion, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, data []byte) {
		var o, again Observation
		if o.UnmarshalBinary(data) != nil {
			return
		}
		b, _ := o.AppendBinary(nil)
		if err := again.UnmarshalBinary(b); err != nil || !reflect.DeepEqual(o, again) {
			t.Fatalf("re-encoding changed %+v into %+v (%v)", o, again, err)
		}
	})
}
