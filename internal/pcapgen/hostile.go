package pcapgen

import "github.com/twmb/franz-go/pkg/kmsg"

// Captures for the memory bounds of issue 12 (connection table, out-of-order
// buffer), built in memory: a few hundred thousand connections take a few
// hundred MB here, which a test or gencaps affords once.

// Handshakes opens n connections, each a SYN, SYN-ACK and ACK and nothing
// more: the connection table's worst case, no data to decode.
func Handshakes(c *Capture, n int) {
	for range n {
		c.Conn(ConnOptions{})
	}
}

// OpenRequests opens n connections that each send one ApiVersions request
// and stay open, unanswered: the decoder state of n open connections.
func OpenRequests(c *Capture, n int) {
	req := EncodeRequest(RequestHeader{APIKey: int16(kmsg.ApiVersions), APIVersion: 3, CorrelationID: 1, ClientID: Ptr("hostile")},
		APIVersions(3, "kwatch-hostile", "1.0"))
	for range n {
		c.Conn(ConnOptions{}).Send(req)
	}
}

// Holes opens conns connections whose first data segment is lost, then
// sends segs segments of size bytes on each, round-robin: every connection
// holds segs segments out of order behind its hole until the capture ends.
func Holes(c *Capture, conns, segs, size int) {
	cs := make([]*Conn, conns)
	for i := range cs {
		cs[i] = c.Conn(ConnOptions{})
		cs[i].DropNext(1)
	}
	chunk := make([]byte, size)
	for i := range chunk {
		chunk[i] = byte(i)
	}
	for range segs + 1 {
		for _, cn := range cs {
			cn.Raw(ToBroker, chunk)
		}
	}
}
