// Package flow owns kwatch's vocabulary of connections, shared by every
// stage that follows one: which TCP connection (ConnID), which end of it
// sent bytes (Side), and which packet delivered them (Meta). It is a leaf:
// it imports nothing of kwatch, and capture's consumers (reassembly,
// tlsdec, decode, audit, pipeline, fleet) import it rather than one
// another's types, as gopacket's layers and reassembly share Flow and
// Endpoint.
//
// Concurrency: values only. Buffers: none.
package flow

import (
	"cmp"
	"net/netip"
	"time"
)

// ConnID names a TCP connection. StartFrame (the frame of the first packet
// seen for it) tells apart two connections that reuse the same 4-tuple and
// is the same whether the capture is analyzed on one goroutine or sharded.
type ConnID struct {
	Client     netip.AddrPort
	Broker     netip.AddrPort
	StartFrame uint64
}

// Compare orders connections as every stage replays them: by StartFrame,
// then client, then broker. It is the one connection ordering of kwatch
// (reassembly's replay of flushes, the sharded merger, the audit's end).
func (x ConnID) Compare(y ConnID) int {
	if c := cmp.Compare(x.StartFrame, y.StartFrame); c != 0 {
		return c
	}
	if c := x.Client.Compare(y.Client); c != 0 {
		return c
	}
	return x.Broker.Compare(y.Broker)
}

// Side is one end of a connection, and so the direction of the bytes it
// sends: the client sends requests, the broker responses.
type Side uint8

const (
	// Client sends requests (client to broker).
	Client Side = iota
	// Broker sends responses (broker to client).
	Broker
)

// String names the side: "client" or "broker".
func (s Side) String() string {
	if s == Client {
		return "client"
	}
	return "broker"
}

// Direction names the way the side's bytes go, as dumps print it:
// "client->broker" or "broker->client".
func (s Side) Direction() string {
	if s == Client {
		return "client->broker"
	}
	return "broker->client"
}

// Other returns the opposite side.
func (s Side) Other() Side { return 1 - s }

// Meta names the packet that delivered bytes: Frame is the 1-based packet
// number in the capture (Wireshark's numbering), Time its capture time.
type Meta struct {
	Frame uint64
	Time  time.Time
}
