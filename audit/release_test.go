package audit

import (
	"net/netip"
	"runtime"
	"testing"
	"weak"

	"github.com/kwatch/kwatch/decode"
	"github.com/kwatch/kwatch/flow"
)

// TestFinishKeepsNoEvent: the Auditor keeps no pointer to its caller's
// Event once Finish begins. The Event lives in the decoder, which reaches
// the whole pipeline: kept, it held every connection's reassembly and
// decoder state alive while the report was built (100k open connections:
// half the heap).
func TestFinishKeepsNoEvent(t *testing.T) {
	type owner struct {
		ev  decode.Event
		big [1 << 16]byte // what the Event's owner reaches
	}
	id := flow.ConnID{Client: netip.MustParseAddrPort("10.0.0.1:40000"), Broker: netip.MustParseAddrPort("10.0.0.2:9092")}
	a := New(Options{SingleGoroutine: true})
	o := &owner{}
	w := weak.Make(o)
	var slot any
	o.ev = decode.Event{Kind: decode.KindConnStart, Conn: id, FromStart: true, Time: t0, Slot: &slot}
	a.Event(&o.ev)
	o.ev = decode.Event{Kind: decode.KindRequest, Conn: id, FromStart: true, Time: t0, Frame: 3, Slot: &slot,
		APIKey: decode.KeyConsumerGroupHeartbeat, APIVersion: 1, HeaderVersion: 2, ClientID: []byte("app"), CorrelationID: 1,
		Body: decode.Body{Decoded: true, Group: "g", MemberID: "m", HasMemberID: true}}
	a.Event(&o.ev)
	o = nil
	rep := a.Finish(t0)
	runtime.GC()
	if w.Value() != nil {
		t.Error("the last Event's owner is still reachable after Finish")
	}
	runtime.KeepAlive(a)
	runtime.KeepAlive(rep)
}
