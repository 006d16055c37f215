package fleet

import (
	"encoding/json"
	"net/netip"
	"reflect"
	"testing"
	"time"

	"github.com/kwatch/kwatch/capture"
	"github.com/kwatch/kwatch/decode"
)

// TestEventRoundTrip: every field of a decoded event survives a record,
// frames renumbered in the record's capture and back.
func TestEventRoundTrip(t *testing.T) {
	id := decode.UUID{1, 2, 3}
	in := decode.Event{
		Kind: decode.KindResponse, Frame: capture.PackFrame(2, 40), Time: time.Unix(1700000000, 123456789).UTC(),
		Conn: decode.ConnID{
			Client: netip.MustParseAddrPort("10.0.0.1:40000"), Broker: netip.MustParseAddrPort("[fd00::1]:9092"),
			StartFrame: capture.PackFrame(2, 3),
		},
		FromStart: true, Partial: true, APIKey: 68, APIVersion: 1, HeaderVersion: 1, CorrelationID: 7, Size: 99,
		ClientID: []byte("app\x00\xff"), InstanceID: id, HasInstanceID: true, TagProblem: decode.TagOK,
		RequestAmbiguous: true, RequestFrame: capture.PackFrame(2, 39),
		Body: decode.Body{Decoded: true, Group: "g\xfe", MemberID: "m\xff", HasMemberID: true, MemberEpoch: 3,
			TelemetryInstanceID: id, HasTelemetryInstanceID: true, ErrorCode: 25, HasErrorCode: true},
		Coverage: decode.StreamGap, Detail: "d", Bytes: 12,
	}
	local := func(f uint64) uint64 { _, n := capture.SplitFrame(f); return n }
	b, err := json.Marshal(&Record{V: RecordVersion, Kind: KindEvent, Agent: "a", Seq: 1, Capture: "c", Event: fromDecode(&in, local)})
	if err != nil {
		t.Fatal(err)
	}
	r, err := ParseRecord(b)
	if err != nil {
		t.Fatal(err)
	}
	var out decode.Event
	r.Event.toDecode(&out, func(f uint64) uint64 { return capture.PackFrame(2, f) })
	if !reflect.DeepEqual(in, out) {
		t.Errorf("round trip:\n got %+v\nwant %+v", out, in)
	}
	null := in
	null.ClientID, null.ClientIDNull, null.HasInstanceID, null.InstanceID = nil, true, false, decode.UUID{}
	b, _ = json.Marshal(&Record{V: RecordVersion, Kind: KindEvent, Agent: "a", Event: fromDecode(&null, local)})
	r, _ = ParseRecord(b)
	r.Event.toDecode(&out, func(f uint64) uint64 { return capture.PackFrame(2, f) })
	if !out.ClientIDNull || out.ClientID != nil || out.HasInstanceID {
		t.Errorf("null client ID and no instance ID: %+v", out)
	}
}

// TestParseRecordRejects: records of another version, without an agent or
// a payload, or not JSON, are refused with a reason.
func TestParseRecordRejects(t *testing.T) {
	for _, b := range []string{
		`{`, `{"v":2,"kind":"event","agent":"a","event":{}}`, `{"v":1,"kind":"event","event":{}}`,
		`{"v":1,"kind":"event","agent":"a"}`, `{"v":1,"kind":"end","agent":"a"}`, `{"v":1,"kind":"x","agent":"a"}`,
	} {
		if _, err := ParseRecord([]byte(b)); err == nil {
			t.Errorf("%s: accepted", b)
		}
	}
}

// FuzzParseRecord: any bytes give a record or an error, never a panic,
// and an accepted event converts.
func FuzzParseRecord(f *testing.F) {
	f.Add([]byte(`{"v":1,"kind":"event","agent":"a","event":{"k":1,"c":"1.2.3.4:5","b":"1.2.3.4:9092","f":3}}`))
	f.Add([]byte(`{"v":1,"kind":"end","agent":"a","totals":{"packets":1}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseRecord(b)
		if err != nil || r.Event == nil {
			return
		}
		var e decode.Event
		r.Event.toDecode(&e, func(f uint64) uint64 { return f })
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
