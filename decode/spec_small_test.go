package decode

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/kwatch/kwatch/flow"
)

// A response of size 4..9 vouches for a held request only if its first 8
// bytes arrive in one Feed: with 4..7 of them, requestCandidate's size < 10
// says vNo for good.
func TestSpecSmallAnswerChunking(t *testing.T) {
	b := reqFrame(t, 3, 12, 77, nil, nil, metadataReq())
	stream := cat([]byte{0xEE}, b)
	resp := frame(binary.BigEndian.AppendUint32(nil, 77), []byte{0, 0, 0, 0, 0})
	feed := func(split int) *recorder {
		r := &recorder{}
		c := NewConn(testID, false, Options{}, r)
		c.Feed(flow.Client, append([]byte(nil), stream...), flow.Meta{Frame: 1, Time: time.Unix(1700000000, 0).UTC()})
		at := flow.Meta{Frame: 2, Time: time.Unix(1700000001, 0).UTC()}
		if split > 0 {
			c.Feed(flow.Broker, append([]byte(nil), resp[:split]...), at)
		}
		c.Feed(flow.Broker, append([]byte(nil), resp[split:]...), at)
		c.Close(flow.Meta{Frame: 3})
		return r
	}
	want := feed(0)
	t.Logf("whole:\n%s", want)
	if got := feed(5); got.String() != want.String() {
		t.Fatalf("split 5:\n%s", got)
	}
}
