package decode

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/kwatch/kwatch/flow"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestSpecHeldScanAtChunking: a held null-client-ID request B, complete
// inside the bytes carried from an earlier Feed of the same packet, behind an
// earlier candidate A that is only rejected by the next Feed, loses its
// scanAt: the broker's answer no longer vouches for it. The same bytes fed
// at once do. Chunking invariance is broken.
func TestSpecHeldScanAtChunking(t *testing.T) {
	b := reqFrame(t, 3, 12, 77, nil, nil, metadataReq())
	// A: a null-client-ID flexible header whose frame ends one byte before
	// B's does, so that A's "next request" size reads B's last byte and the
	// three tail bytes (00 00 05: size 5, not a request).
	sA := len(b) + 10
	a := binary.BigEndian.AppendUint32(nil, uint32(sA))
	a = append(a, 0, 3, 0, 12, 0, 0, 0, 5, 0xff, 0xff, 0)
	tail := []byte{0, 0, 5}
	stream := cat([]byte{0xEE}, a, b, tail)
	resp := respFrame(3, 12, 77, kmsg.NewPtrMetadataResponse())
	split := 1 + len(a) + len(b) // B complete in the first chunk

	feed := func(splits []int) *recorder {
		r := &recorder{}
		c := NewConn(testID, false, Options{}, r)
		at := flow.Meta{Frame: 1, Time: time.Unix(1700000000, 0).UTC()}
		prev := 0
		for _, s := range append(splits, len(stream)) {
			c.Feed(flow.Client, append([]byte(nil), stream[prev:s]...), at)
			prev = s
		}
		c.Feed(flow.Broker, resp, flow.Meta{Frame: 2, Time: time.Unix(1700000001, 0).UTC()})
		c.Close(flow.Meta{Frame: 3})
		return r
	}
	want := feed(nil)
	got := feed([]int{split})
	t.Logf("one Feed:\n%s", want)
	if got.String() != want.String() {
		t.Fatalf("split at %d:\n%s\nwant (one Feed):\n%s", split, got, want)
	}
}
