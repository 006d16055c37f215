package decode

import (
	"testing"
	"time"

	"github.com/kwatch/kwatch/flow"
)

// Mid-stream --port connection: the broker's first captured segment is
// inside a TLS record, then the client's starts with a record header.
func TestSpecMidstreamTLSBrokerFirst(t *testing.T) {
	r := &recorder{}
	c := NewConn(testID, false, Options{AssumeKafka: true}, r)
	at := flow.Meta{Frame: 1, Time: time.Unix(1700000000, 0).UTC()}
	c.Feed(flow.Broker, []byte{0x8a, 0x33, 0x10, 0x99, 0x42, 0x01, 0x02, 0x03}, at)
	c.Feed(flow.Client, append([]byte{0x17, 0x03, 0x03, 0x00, 0x40}, make([]byte, 64)...), flow.Meta{Frame: 2})
	t.Logf("state %s\n%s", c.State(), r)
	if c.State() != StateTLS {
		t.Errorf("state %s, want tls", c.State())
	}
}
