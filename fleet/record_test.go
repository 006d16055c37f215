package fleet

import (
	"encoding/json"
	"net/netip"
	"reflect"
	"testing"
	"time"

	"github.com/kwatch/kwatch/audit"
	"github.com/kwatch/kwatch/capture"
	"github.com/kwatch/kwatch/decode"
	"github.com/kwatch/kwatch/flow"
)

// TestStepRoundTrip: an observation and its verdict survive a record,
// frames renumbered in the record's capture and back (0 stays 0).
func TestStepRoundTrip(t *testing.T) {
	id := decode.UUID{1, 2, 3}
	at := time.Unix(1700000000, 123456789).UTC()
	tests := []struct {
		name string
		o    audit.Observation
		v    audit.Verdict
	}{
		{"verdict on a response", audit.Observation{Step: audit.StepVerdict, PDU: decode.KindResponse,
			Conn: flow.ConnID{Client: netip.MustParseAddrPort("10.0.0.1:40000"), Broker: netip.MustParseAddrPort("[fd00::1]:9092"),
				StartFrame: capture.PackFrame(2, 3)},
			Frame: capture.PackFrame(2, 40), Time: at, APIKey: 68, APIVersion: 1, CorrelationID: 7,
			ClientID: "app\x00\xff", HasClientID: true, Instance: id, InstanceFixed: true, FromStart: true, Kafka: true},
			audit.Verdict{Rule: "broker-generated-member-id", Severity: audit.SeverityWarn, Group: "g\xfe", MemberID: "m\xff",
				Expected: "e", Observed: "o", Message: "m", RequestFrame: capture.PackFrame(2, 39), RequestTime: at}},
		{"connection end without a frame", audit.Observation{Step: audit.StepConnEnd, PDU: decode.KindConnEnd,
			Conn: flow.ConnID{Client: netip.MustParseAddrPort("10.0.0.1:40000"), Broker: netip.MustParseAddrPort("10.0.0.2:9092"),
				StartFrame: capture.PackFrame(2, 1)}, Time: at, NoInstance: true},
			audit.Verdict{RequestTime: time.Unix(0, 0).UTC()}},
	}
	for _, tt := range tests {
		o, v := tt.o, tt.v
		frames(&o, &v, func(f uint64) uint64 { _, n := capture.SplitFrame(f); return n })
		var s Step
		s.Obs, _ = o.AppendBinary(nil)
		if o.Step == audit.StepVerdict {
			s.Verdict, _ = v.AppendBinary(nil)
		}
		b, err := json.Marshal(&Record{V: RecordVersion, Kind: KindObs, Agent: "a", Seq: 1, Capture: "c", Steps: []Step{s}})
		if err != nil {
			t.Fatal(err)
		}
		r, err := ParseRecord(b)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := r.decodeSteps(nil, 2)
		want := audit.Observed{Observation: tt.o}
		if tt.o.Step == audit.StepVerdict {
			want.Verdict = tt.v
		}
		if !ok || len(got) != 1 || !reflect.DeepEqual(got[0], want) {
			t.Errorf("%s: round trip:\n got %+v\nwant %+v", tt.name, got, want)
		}
	}
}

// TestParseRecordRejects: records of another version, without an agent or
// a payload, or not JSON, are refused with a reason; a malformed step is
// refused when decoded.
func TestParseRecordRejects(t *testing.T) {
	for _, b := range []string{
		`{`, `{"v":1,"kind":"event","agent":"a","event":{}}`, `{"v":2,"kind":"obs","steps":[{"o":"AQ=="}]}`,
		`{"v":2,"kind":"obs","agent":"a"}`, `{"v":2,"kind":"end","agent":"a"}`, `{"v":2,"kind":"x","agent":"a"}`,
	} {
		if _, err := ParseRecord([]byte(b)); err == nil {
			t.Errorf("%s: accepted", b)
		}
	}
	r, err := ParseRecord([]byte(`{"v":2,"kind":"obs","agent":"a","steps":[{"o":"AQ=="}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.decodeSteps(nil, 0); ok {
		t.Errorf("a truncated observation decoded")
	}
}

// FuzzParseRecord: any bytes give a record or an error, never a panic,
// and an accepted record's steps decode or are refused.
func FuzzParseRecord(f *testing.F) {
	f.Add([]byte(`{"v":2,"kind":"obs","agent":"a","steps":[{"o":"AQ==","d":"AQ=="}]}`))
	f.Add([]byte(`{"v":2,"kind":"end","agent":"a","totals":{"packets":1,"audit":{"requests":[1,2,3,4]}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseRecord(b)
		if err != nil {
			return
		}
		r.decodeSteps(nil, 1)
	})
}

// TestParseTarget: HOST:PORT[,HOST:PORT...]/TOPIC.
func TestParseTarget(t *testing.T) {
	got, err := ParseTarget("k1:9092,k2:9093/obs")
	if err != nil || !reflect.DeepEqual(got, Target{Brokers: []string{"k1:9092", "k2:9093"}, Topic: "obs"}) {
		t.Errorf("got %+v, %v", got, err)
	}
	for _, bad := range []string{"", "k1:9092", "/t", "k1:9092/", "k1/t", "k1:9092,,k2:1/t"} {
		if _, err := ParseTarget(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
