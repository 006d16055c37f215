package decode

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// exactBody takes a decoded API's answer only when its fields fill the
// frame end to end: bytes inside a lost answer's remains that start like
// an answer and go on with anything else are no resync point.
func TestExactBody(t *testing.T) {
	member := "m"
	cghb := kmsg.NewPtrConsumerGroupHeartbeatResponse()
	cghb.MemberID = &member
	tel := kmsg.NewPtrGetTelemetrySubscriptionsResponse()
	tel.ClientInstanceID = [16]byte{1}
	api := kmsg.NewPtrApiVersionsResponse()
	api.ApiKeys = []kmsg.ApiVersionsResponseApiKey{{ApiKey: 3, MaxVersion: 12}}
	tests := []struct {
		name string
		key  int16
		ver  int16
		msg  interface {
			SetVersion(int16)
			AppendTo([]byte) []byte
		}
	}{
		{"ApiVersions v0", keyAPIVersions, 0, api},
		{"ApiVersions v3", keyAPIVersions, 3, api},
		{"ConsumerGroupHeartbeat v1", keyConsumerGroupHeartbeat, 1, cghb},
		{"GetTelemetrySubscriptions v0", keyGetTelemetrySubscriptions, 0, tel},
		{"PushTelemetry v0", keyPushTelemetry, 0, kmsg.NewPtrPushTelemetryResponse()},
		{"SaslHandshake v1", keySASLHandshake, 1, kmsg.NewPtrSASLHandshakeResponse()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := encodeBody(tt.msg, tt.ver)
			if !exactBody(tt.key, tt.ver, body) {
				t.Errorf("a whole answer (%d bytes) is not taken", len(body))
			}
			if exactBody(tt.key, tt.ver, append(body, 'x', 'x', 'x', 'x')) {
				t.Errorf("an answer followed by 4 more bytes in its frame is taken")
			}
		})
	}
}
