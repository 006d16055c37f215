package audit

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"
)

// A Verdict survives its encoding field for field, and damaged bytes are
// an error, never a panic.
func TestVerdictEncoding(t *testing.T) {
	at := time.Date(2026, 11, 29, 16, 49, 25, 123456000, time.UTC)
	tests := []struct {
		name string
		v    Verdict
	}{
		{"rule defaults", Verdict{Rule: "instance-id-dropped", Expected: JavaString(v4A), Observed: "none", Message: "dropped",
			RequestTime: time.Unix(0, 0).UTC()}},
		{"answer with wire text", Verdict{Rule: "broker-generated-member-id", Severity: SeverityWarn, KIP: "KIP-1082",
			Expected: "INVALID_REQUEST (42)", Observed: "m\xff", Message: "generated", Group: "g\x00\u2028", MemberID: "m\xff",
			Instance: v4B, RequestFrame: 1 << 40, RequestTime: at}},
	}
	for _, tt := range tests {
		var got Verdict
		if err := decodesOnlyWhole(tt.v.AppendBinary, got.UnmarshalBinary); err != nil || !reflect.DeepEqual(got, tt.v) {
			t.Errorf("%s: %v; round trip %+v\nwant %+v", tt.name, err, got, tt.v)
		}
		if _, ok := tt.v.ruleID(); !ok {
			t.Errorf("%s: rule %q not known", tt.name, tt.v.Rule)
		}
	}
	for _, bad := range []Verdict{{Rule: "no-such-rule"}, {Rule: "instance-id-dropped", Severity: SeverityError + 1}} {
		if _, ok := bad.ruleID(); ok {
			t.Errorf("%+v taken", bad)
		}
	}
}

// decodesOnlyWhole encodes with appendTo after a prefix, and checks that
// decode takes the encoding, but none of its truncations, nor another
// version; decode is left holding the whole encoding's value.
func decodesOnlyWhole(appendTo func([]byte) ([]byte, error), decode func([]byte) error) error {
	b, err := appendTo([]byte("prefix"))
	if err != nil || !bytes.HasPrefix(b, []byte("prefix")) {
		return fmt.Errorf("appending: %q, %v", b, err)
	}
	enc := b[len("prefix"):]
	for n := range len(enc) {
		if decode(enc[:n]) == nil {
			return fmt.Errorf("%d of its %d bytes decoded", n, len(enc))
		}
	}
	if decode(append([]byte{enc[0] + 1}, enc[1:]...)) == nil {
		return errors.New("an unknown version decoded")
	}
	return decode(enc)
}

// FuzzVerdict: UnmarshalBinary never panics, and what it accepts encodes
// back to bytes that decode to the same Verdict.
func FuzzVerdict(f *testing.F) {
	v := Verdict{Rule: "ghost-member", Group: "g", MemberID: JavaString(v4A), RequestFrame: 7}
	seed, _ := v.AppendBinary(nil)
	f.Add(seed)
	f.Add([]byte{verdictVersion})
	f.Add([]byte{verdictVersion, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, data []byte) {
		var v, again Verdict
		if v.UnmarshalBinary(data) != nil {
			return
		}
		b, _ := v.AppendBinary(nil)
		if err := again.UnmarshalBinary(b); err != nil || !reflect.DeepEqual(v, again) {
			t.Fatalf("re-encoding changed %+v into %+v (%v)", v, again, err)
		}
	})
}
