package decode

import (
	"encoding/binary"
	"net/netip"
	"testing"

	"github.com/kwatch/kwatch/flow"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// BenchmarkConnSmallPDUs is the decoder's share of the packet-heavy bench
// capture: 200 connections in round robin, small Produce and Fetch
// requests and responses, one frame per Feed; ns/op is per PDU.
func BenchmarkConnSmallPDUs(b *testing.B) {
	const conns = 200
	type conn struct {
		c         *Conn
		req, resp [2][]byte
		corr      int32
	}
	cs := make([]conn, conns)
	body := make([]byte, 100)
	for i := range cs {
		id := flow.ConnID{Client: netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 2, 0, byte(i)}), uint16(30000+i)),
			Broker: netip.MustParseAddrPort("10.0.0.1:9092"), StartFrame: uint64(i + 1)}
		c := &cs[i]
		c.c = NewConn(id, true, Options{}, SinkFunc(func(*Event) {}))
		// Opened as clients do, so that the connection is believed by its
		// content (the requests below carry no client ID).
		c.c.Feed(flow.Client, reqFrame(b, 18, 3, 0, strp("bench"), nil, apiVersionsReq()), flow.Meta{})
		c.c.Feed(flow.Broker, respFrame(18, 3, 0, kmsg.NewPtrApiVersionsResponse()), flow.Meta{})
		if c.c.State() != StateKafka {
			b.Fatalf("connection %d not recognised", i)
		}
		c.req[0] = reqFrame(b, 0, 11, 0, nil, []tag{{0, iid[:]}}, body)
		c.resp[0] = respFrame(0, 11, 0, body[:50])
		c.req[1] = reqFrame(b, 1, 15, 0, nil, []tag{{0, iid[:]}}, body[:60])
		c.resp[1] = respFrame(1, 15, 0, body)
	}
	b.ReportAllocs()
	var frame uint64
	i := 0
	for b.Loop() {
		c := &cs[(i>>1)%conns]
		frame++
		m := flow.Meta{Frame: frame}
		kind := (i >> 1) / conns & 1
		if i&1 == 0 {
			c.corr++
			binary.BigEndian.PutUint32(c.req[kind][8:], uint32(c.corr))
			c.c.Feed(flow.Client, c.req[kind], m)
		} else {
			binary.BigEndian.PutUint32(c.resp[kind][4:], uint32(c.corr))
			c.c.Feed(flow.Broker, c.resp[kind], m)
		}
		i++
	}
}

// BenchmarkConnIdentityPDUs decodes heartbeat requests and responses, one
// frame per Feed: the identity bodies' share of a consumer group's traffic;
// ns/op is per PDU.
func BenchmarkConnIdentityPDUs(b *testing.B) {
	c := NewConn(testID, true, Options{AssumeKafka: true}, SinkFunc(func(*Event) {}))
	req := reqFrame(b, keyConsumerGroupHeartbeat, 1, 0, nil, []tag{{0, iid[:]}}, cghReq("AAECAwQFBgcICQoLDA0ODw", 5))
	member := "AAECAwQFBgcICQoLDA0ODw"
	resp := respFrame(keyConsumerGroupHeartbeat, 1, 0, cghResp(&member, 6, 0))
	b.ReportAllocs()
	b.SetBytes(int64(len(req) + len(resp)))
	var corr int32
	for b.Loop() {
		corr++
		binary.BigEndian.PutUint32(req[8:], uint32(corr))
		binary.BigEndian.PutUint32(resp[4:], uint32(corr))
		c.Feed(flow.Client, req, flow.Meta{Frame: uint64(corr)})
		c.Feed(flow.Broker, resp, flow.Meta{Frame: uint64(corr)})
	}
}
