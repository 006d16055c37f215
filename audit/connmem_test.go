package audit

import (
	"net/netip"
	"runtime"
	"testing"

	"github.com/kwatch/kwatch/decode"
	"github.com/kwatch/kwatch/flow"
)

// openConnBytes is the heap one open connection holds in the auditor
// after events, measured over n connections from distinct hosts (each
// its own report row, as in issue 12's 100k open connections).
func openConnBytes(t *testing.T, n int, events func(i int, id flow.ConnID, slot *any, a *Auditor)) float64 {
	t.Helper()
	slots := make([]any, n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	a := New(Options{})
	for i := range n {
		id := flow.ConnID{Client: netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}), 40000),
			Broker: netip.MustParseAddrPort("172.16.0.1:9092"), StartFrame: uint64(1 + 4*i)}
		events(i, id, &slots[i], a)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(a)
	runtime.KeepAlive(slots)
	return float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(n)
}

// TestOpenConnMemory bounds what the audit keeps of an open connection
// (issue 12: 100k open connections with one request each under 256 MB),
// so that its state does not grow back unnoticed: a SYN-only connection,
// one ApiVersions request (the hostile "open" scenario: a row per host),
// and a connection that heartbeats in a group.
func TestOpenConnMemory(t *testing.T) {
	const n = 20_000
	start := func(id flow.ConnID, slot *any, a *Auditor) {
		a.Event(&decode.Event{Kind: decode.KindConnStart, Conn: id, FromStart: true, Time: t0, Slot: slot})
	}
	request := func(i int, id flow.ConnID, slot *any, a *Auditor, key decode.APIKey, ver int16, body decode.Body) {
		a.Event(&decode.Event{Kind: decode.KindRequest, Conn: id, FromStart: true, Time: t0, Frame: uint64(4*i + 3), Slot: slot,
			APIKey: key, APIVersion: ver, HeaderVersion: 2, ClientID: []byte("app"), CorrelationID: 1, Body: body})
	}
	tests := []struct {
		name   string
		events func(i int, id flow.ConnID, slot *any, a *Auditor)
		max    float64 // bytes per connection
	}{
		{name: "start only", max: 480, events: func(i int, id flow.ConnID, slot *any, a *Auditor) { start(id, slot, a) }},
		{name: "one ApiVersions request", max: 480, events: func(i int, id flow.ConnID, slot *any, a *Auditor) {
			start(id, slot, a)
			request(i, id, slot, a, decode.KeyAPIVersions, 3, decode.Body{Decoded: true, ClientSoftwareName: "open", ClientSoftwareVersion: "1.0"})
		}},
		{name: "one ApiVersions request, ended", max: 1200, events: func(i int, id flow.ConnID, slot *any, a *Auditor) {
			start(id, slot, a)
			request(i, id, slot, a, decode.KeyAPIVersions, 3, decode.Body{Decoded: true, ClientSoftwareName: "open", ClientSoftwareVersion: "1.0"})
			a.Event(&decode.Event{Kind: decode.KindConnEnd, Conn: id, FromStart: true, Time: t0, Frame: uint64(4*i + 4), Slot: slot})
		}},
		{name: "one heartbeat", max: 2900, events: func(i int, id flow.ConnID, slot *any, a *Auditor) {
			start(id, slot, a)
			request(i, id, slot, a, decode.KeyConsumerGroupHeartbeat, 1, decode.Body{Decoded: true, Group: "g", MemberID: JavaString(benchInstance(i)), HasMemberID: true})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := openConnBytes(t, n, tt.events)
			t.Logf("%.0f bytes per connection", got)
			if got > tt.max {
				t.Errorf("%.0f bytes per open connection, want at most %.0f", got, tt.max)
			}
		})
	}
}
