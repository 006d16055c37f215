package decode

import (
	"strings"
	"testing"

	"github.com/kwatch/kwatch/flow"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// SPEC.md section 1, SaslHandshake: "after a v0 handshake the client sends
// raw SASL tokens without Kafka headers until authentication ends: skip
// them". Section 3.2: post-KIP-1313 clients send the client ID on the
// connection's first request only (null afterwards). Here the handshake is
// the first request (client ID "app"); after authentication the client's
// Kafka requests carry a null client ID and a header instance ID. They must
// be decoded, not swallowed as raw SASL tokens.
func TestSpecSASLv0ThenNullClientID(t *testing.T) {
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Mechanism = "PLAIN"
	segs := []seg{
		{dir: flow.Client, data: reqFrame(t, 17, 0, 1, strp("app"), nil, hs)},
		{dir: flow.Broker, data: respFrame(17, 0, 1, kmsg.NewPtrSASLHandshakeResponse())},
		{dir: flow.Client, data: frame([]byte("\x00user\x00secret-password"))},
		{dir: flow.Broker, data: frame(nil)}, // empty server token: authenticated
		{dir: flow.Client, data: reqFrame(t, 3, 12, 2, nil, []tag{{0, iid[:]}}, metadataReq())},
		{dir: flow.Broker, data: respFrame(3, 12, 2, kmsg.NewPtrMetadataResponse())},
		{dir: flow.Client, data: reqFrame(t, 3, 12, 3, nil, []tag{{0, iid[:]}}, metadataReq())},
		{dir: flow.Broker, data: respFrame(3, 12, 3, kmsg.NewPtrMetadataResponse())},
	}
	r, _ := run(testID, true, Options{}, segs, 0)
	got := r.String()
	for _, want := range []string{"request f=5 Metadata v12 hv2 corr=2", "response f=6 Metadata v12", "request f=7 Metadata v12 hv2 corr=3"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q: the requests after authentication were not decoded; events:\n%s", want, got)
		}
	}
}
