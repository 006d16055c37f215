package audit

import (
	"encoding/binary"
	"net/netip"
	"testing"
	"time"

	"github.com/kwatch/kwatch/decode"
	"github.com/kwatch/kwatch/flow"
	"github.com/kwatch/kwatch/internal/pcapgen"
)

// benchConns is the connection count of the packet-heavy bench capture.
const benchConns = 200

func benchConnID(i int) flow.ConnID {
	return flow.ConnID{Client: netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 2, byte((i + 1) >> 8), byte(i + 1)}), uint16(30000+i)),
		Broker: netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 0, byte(1 + i%3)}), 9092), StartFrame: uint64(1 + 4*i)}
}

func benchInstance(i int) decode.UUID {
	u := v4A
	u[14], u[15] = byte(i>>8), byte(i)
	return u
}

// BenchmarkAuditorEvent is the cost of one ordinary event (ns/op is per
// event), requests and responses alternating over benchConns connections
// in round robin, as the decoder delivers them (with a connection slot).
func BenchmarkAuditorEvent(b *testing.B) {
	tests := []struct {
		name string
		// first, when set, fills in a request each connection sends once
		// before req and resp alternate.
		first func(i int, e *decode.Event)
		// req and resp fill in the events of connection i.
		req, resp func(i int, e *decode.Event)
	}{
		{
			name: "produce-instance-id",
			req: func(i int, e *decode.Event) {
				e.APIKey, e.APIVersion, e.HeaderVersion, e.ClientIDNull = 0, 11, 2, true
				e.InstanceID, e.HasInstanceID = benchInstance(i), true
			},
			resp: func(i int, e *decode.Event) { e.APIKey, e.APIVersion, e.HeaderVersion = 0, 11, 1 },
		},
		{
			name: "fetch-legacy-client-id",
			req: func(i int, e *decode.Event) {
				e.APIKey, e.APIVersion, e.HeaderVersion = 1, 12, 2
				e.ClientID = []byte("orders-app")
			},
			resp: func(i int, e *decode.Event) { e.APIKey, e.APIVersion, e.HeaderVersion = 1, 12, 1 },
		},
		{
			name: "heartbeat",
			req: func(i int, e *decode.Event) {
				e.APIKey, e.APIVersion, e.HeaderVersion, e.ClientIDNull = decode.KeyConsumerGroupHeartbeat, 1, 2, true
				e.InstanceID, e.HasInstanceID = benchInstance(i), true
				e.Body = decode.Body{Decoded: true, Group: "g", MemberID: JavaString(benchInstance(i)), HasMemberID: true, MemberEpoch: 5}
			},
			resp: func(i int, e *decode.Event) {
				e.APIKey, e.APIVersion, e.HeaderVersion = decode.KeyConsumerGroupHeartbeat, 1, 1
				e.Body = decode.Body{Decoded: true, HasErrorCode: true, MemberEpoch: 5}
			},
		},
		{
			// A client that drops its instance ID after the first request:
			// a finding on every request, past the report's kept findings.
			name: "instance-id-dropped",
			first: func(i int, e *decode.Event) {
				e.APIKey, e.APIVersion, e.HeaderVersion, e.ClientIDNull = 0, 11, 2, true
				e.InstanceID, e.HasInstanceID = benchInstance(i), true
			},
			req: func(i int, e *decode.Event) {
				e.APIKey, e.APIVersion, e.HeaderVersion, e.ClientIDNull = 0, 11, 2, true
			},
			resp: func(i int, e *decode.Event) { e.APIKey, e.APIVersion, e.HeaderVersion = 0, 11, 1 },
		},
	}
	for _, tt := range tests {
		b.Run(tt.name, func(b *testing.B) {
			a := New(Options{})
			reqs := make([]decode.Event, benchConns)
			resps := make([]decode.Event, benchConns)
			slots := make([]any, benchConns)
			for i := range reqs {
				id := benchConnID(i)
				reqs[i] = decode.Event{Kind: decode.KindRequest, Conn: id, FromStart: true, Slot: &slots[i]}
				resps[i] = decode.Event{Kind: decode.KindResponse, Conn: id, FromStart: true, Slot: &slots[i]}
				tt.req(i, &reqs[i])
				tt.resp(i, &resps[i])
				a.Event(&decode.Event{Kind: decode.KindConnStart, Conn: id, FromStart: true, Time: t0, Slot: &slots[i]})
				if tt.first != nil {
					first := decode.Event{Kind: decode.KindRequest, Conn: id, FromStart: true, Time: t0, Slot: &slots[i], CorrelationID: -1}
					tt.first(i, &first)
					a.Event(&first)
				}
			}
			b.ReportAllocs()
			at := t0
			i := 0
			for b.Loop() {
				k := (i >> 1) % benchConns
				e := &reqs[k]
				if i&1 == 1 {
					e = &resps[k]
				}
				at = at.Add(time.Microsecond)
				e.Time, e.Frame, e.CorrelationID = at, uint64(i), int32(i>>1)
				a.Event(e)
				i++
			}
		})
	}
}

// BenchmarkDecodeAudit is the packet-heavy capture's analysis after
// reassembly: small Produce and Fetch requests and responses, one per
// packet, decoded and audited; ns/op is per PDU.
func BenchmarkDecodeAudit(b *testing.B) {
	for _, tt := range []struct {
		name string
		o    Options
	}{
		{name: "locked", o: Options{}},
		{name: "single-goroutine", o: Options{SingleGoroutine: true}},
	} {
		b.Run(tt.name, func(b *testing.B) { benchDecodeAudit(b, tt.o) })
	}
}

func benchDecodeAudit(b *testing.B, o Options) {
	a := New(o)
	type conn struct {
		dc        *decode.Conn
		req, resp [2][]byte
		corr      int32
	}
	payload := make([]byte, 60)
	conns := make([]conn, benchConns)
	frame := uint64(0)
	at := t0
	for i := range conns {
		c := &conns[i]
		c.dc = decode.NewConn(benchConnID(i), true, decode.Options{}, a)
		id := [16]byte(benchInstance(i))
		topic := [16]byte{0x42, 15: byte(i)}
		h := pcapgen.RequestHeader{InstanceID: &id, APIVersion: 11}
		c.req[0] = pcapgen.EncodeRequest(h, pcapgen.Produce(11, "bulk", topic, payload))
		c.resp[0] = pcapgen.EncodeResponse(0, 11, pcapgen.ProduceResponse(11, "bulk", topic))
		h.APIVersion = 15
		c.req[1] = pcapgen.EncodeRequest(h, pcapgen.Fetch(15, "bulk", topic))
		c.resp[1] = pcapgen.EncodeResponse(0, 15, pcapgen.FetchResponse(15, "bulk", topic, payload))
		cid := "bulk-client"
		h = pcapgen.RequestHeader{ClientID: &cid, InstanceID: &id, APIVersion: 4}
		frame++
		c.dc.Feed(flow.Client, pcapgen.EncodeRequest(h, pcapgen.APIVersions(4, "kwatch-bulk", "1.0")), flow.Meta{Frame: frame, Time: at})
		frame++
		c.dc.Feed(flow.Broker, pcapgen.EncodeResponse(0, 4, pcapgen.APIVersionsResponse(4)), flow.Meta{Frame: frame, Time: at})
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		c := &conns[(i>>1)%benchConns]
		frame++
		at = at.Add(time.Microsecond)
		m := flow.Meta{Frame: frame, Time: at}
		kind := (i >> 1) / benchConns & 1
		if i&1 == 0 {
			c.corr++
			binary.BigEndian.PutUint32(c.req[kind][8:], uint32(c.corr))
			c.dc.Feed(flow.Client, c.req[kind], m)
		} else {
			binary.BigEndian.PutUint32(c.resp[kind][4:], uint32(c.corr))
			c.dc.Feed(flow.Broker, c.resp[kind], m)
		}
		i++
	}
	if r := a.Finish(at); r.Totals.Responses == 0 {
		b.Fatal("no responses audited")
	}
}
