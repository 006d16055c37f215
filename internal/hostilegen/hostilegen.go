// Package hostilegen writes the captures of issue 12's hostile scenarios
// (hostile/): traffic an attacker on the network, or a large fleet, sends
// to make kwatch slow or large. Each generator streams its packets to a
// file (pcapgen.Stream), holding one connection's frames at most, and is
// deterministic: equal arguments give equal files. Packets are 1 µs apart,
// so that no idle timeout of kwatch ends a connection during a scenario.
//
// It imports pcapgen and kmsg only; tests of any package may use it.
package hostilegen

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"net/netip"
	"os"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kwatch/kwatch/internal/pcapgen"
)

// mss is the segment size of every scenario but the one-segment header.
const mss = 1448

// writer is a scenario's output: a pcap on a buffered file.
type writer struct {
	f *os.File
	b *bufio.Writer
	s *pcapgen.Stream
}

// generate writes the capture at path with body, and returns its size.
func generate(path string, body func(w *writer) error) (int64, error) {
	w, err := create(path)
	if err != nil {
		return 0, err
	}
	return w.close(body(w))
}

func create(path string) (*writer, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("hostilegen: %w", err)
	}
	b := bufio.NewWriterSize(f, 1<<20)
	s, err := pcapgen.NewStream(b, pcapgen.LinkEthernet, time.Microsecond)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &writer{f: f, b: b, s: s}, nil
}

// close ends the capture, keeping the first error; it returns the bytes
// written.
func (w *writer) close(err error) (int64, error) {
	n, cerr := w.s.Close()
	if err == nil {
		err = cerr
	}
	if ferr := w.b.Flush(); err == nil && ferr != nil {
		err = fmt.Errorf("hostilegen: %w", ferr)
	}
	if ferr := w.f.Close(); err == nil && ferr != nil {
		err = fmt.Errorf("hostilegen: %w", ferr)
	}
	return n, err
}

// conn is one connection of a scenario: its endpoints and the next
// sequence number of each direction (pcapgen.ToBroker, ToClient).
type conn struct {
	client, broker netip.AddrPort
	next           [2]uint32
}

// newConn is connection i: client 10.x.y.z:40000 (x.y.z from i, so up to
// 16M connections are distinct) to broker 172.16.0.1:9092.
func newConn(i int) *conn {
	return &conn{
		client: netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}), 40000),
		broker: netip.MustParseAddrPort("172.16.0.1:9092"),
		next:   [2]uint32{uint32(i)*7919 + 1000, uint32(i)*104729 + 5000},
	}
}

// syn writes the client's SYN alone.
func (c *conn) syn(w *writer) error {
	return w.s.Packet(c.client, c.broker, true, c.next[0], 0, pcapgen.FlagSYN, nil)
}

// open writes the handshake.
func (c *conn) open(w *writer) error {
	if err := c.syn(w); err != nil {
		return err
	}
	if err := w.s.Packet(c.broker, c.client, false, c.next[1], c.next[0]+1, pcapgen.FlagSYN|pcapgen.FlagACK, nil); err != nil {
		return err
	}
	c.next[0]++
	c.next[1]++
	return w.s.Packet(c.client, c.broker, true, c.next[0], c.next[1], pcapgen.FlagACK, nil)
}

// send writes data in direction d cut in segments of at most seg bytes.
func (c *conn) send(w *writer, d pcapgen.Dir, data []byte, seg int) error {
	for len(data) > 0 {
		n := min(len(data), seg)
		if err := c.segment(w, d, data[:n]); err != nil {
			return err
		}
		data = data[n:]
	}
	return nil
}

// segment writes one segment of data in direction d, at the next sequence
// number.
func (c *conn) segment(w *writer, d pcapgen.Dir, data []byte) error {
	src, dst := c.client, c.broker
	if d == pcapgen.ToClient {
		src, dst = dst, src
	}
	err := w.s.Packet(src, dst, d == pcapgen.ToBroker, c.next[d], c.next[1-d], pcapgen.FlagACK|pcapgen.FlagPSH, data)
	c.next[d] += uint32(len(data))
	return err
}

// hello writes an ApiVersions v3 round trip (correlation ID 0), as clients
// open a connection: it is recognised as Kafka by its content.
func (c *conn) hello(w *writer, software string) error {
	id := "app"
	req := pcapgen.EncodeRequest(pcapgen.RequestHeader{APIVersion: 3, ClientID: &id}, pcapgen.APIVersions(3, software, "1.0"))
	if err := c.send(w, pcapgen.ToBroker, req, mss); err != nil {
		return err
	}
	return c.send(w, pcapgen.ToClient, pcapgen.EncodeResponse(0, 3, pcapgen.APIVersionsResponse(3)), mss)
}

// ManyTagsFrame is a Fetch v12 request (correlation ID corr) whose header
// carries tags empty tagged fields numbered from 1, and a body of bodyLen
// zero bytes: 20,000 tags make a header of 62 KiB, just under kwatch's
// 64 KiB bound.
func ManyTagsFrame(tags int, corr int32, bodyLen int) []byte {
	h := binary.BigEndian.AppendUint16(make([]byte, 4, 4+4*tags+bodyLen), 1)
	h = binary.BigEndian.AppendUint16(h, 12)
	h = binary.BigEndian.AppendUint32(h, uint32(corr))
	h = binary.BigEndian.AppendUint16(h, 3)
	h = append(h, "app"...)
	h = binary.AppendUvarint(h, uint64(tags))
	for i := 1; i <= tags; i++ {
		h = binary.AppendUvarint(h, uint64(i))
		h = append(h, 0)
	}
	h = append(h, make([]byte, bodyLen)...)
	binary.BigEndian.PutUint32(h, uint32(len(h)-4))
	return h
}

// ManyTags writes one connection that, after its ApiVersions round trip,
// sends frames requests of 20,000 empty tags each (ManyTagsFrame), cut in
// 1448-byte segments when segmented, else each in one segment.
func ManyTags(path string, frames int, segmented bool) (int64, error) {
	seg := 1 << 16
	if segmented {
		seg = mss
	}
	return generate(path, func(w *writer) error {
		c := newConn(1)
		err := c.open(w)
		if err == nil {
			err = c.hello(w, "tags")
		}
		for i := 1; i <= frames && err == nil; i++ {
			err = c.send(w, pcapgen.ToBroker, ManyTagsFrame(20000, int32(i), 0), seg)
		}
		return err
	})
}

// Pipelined writes conns connections that each send perConn Metadata v12
// requests back to back, cut in 1448-byte segments: unanswered, or with
// the broker answering each segment's requests after it, as a pipelining
// client sees. The client is legacy (no instance ID), so the requests give
// no finding.
func Pipelined(path string, conns, perConn int, answered bool) (int64, error) {
	id := "app"
	req := pcapgen.EncodeRequest(pcapgen.RequestHeader{APIVersion: 12, ClientID: &id}, pcapgen.Metadata(12))
	resp := pcapgen.EncodeResponse(0, 12, pcapgen.MetadataResponse(12, "172.16.0.1", 9092))
	per := mss / len(req) // requests in a segment
	return generate(path, func(w *writer) error {
		cs, err := openAll(w, conns, "pipelined")
		var reqs, resps []byte
		for sent := 0; sent < perConn && err == nil; sent += per {
			for _, c := range cs {
				reqs, resps = reqs[:0], resps[:0]
				for k := 1; k <= min(per, perConn-sent); k++ {
					corr := uint32(sent + k)
					reqs = binary.BigEndian.AppendUint32(append(reqs, req[:8]...), corr)
					reqs = append(reqs, req[12:]...)
					resps = binary.BigEndian.AppendUint32(append(resps, resp[:4]...), corr)
					resps = append(resps, resp[8:]...)
				}
				err = c.segment(w, pcapgen.ToBroker, reqs)
				if err == nil && answered {
					err = c.send(w, pcapgen.ToClient, resps, mss)
				}
				if err != nil {
					break
				}
			}
		}
		return err
	})
}

// openAll opens n connections, each with its ApiVersions round trip when
// software is not empty.
func openAll(w *writer, n int, software string) ([]*conn, error) {
	cs := make([]*conn, n)
	for i := range cs {
		cs[i] = newConn(i)
		if err := cs[i].open(w); err != nil {
			return cs, err
		}
		if software == "" {
			continue
		}
		if err := cs[i].hello(w, software); err != nil {
			return cs, err
		}
	}
	return cs, nil
}

// SYNs writes n SYNs of n different connections, none answered.
func SYNs(path string, n int) (int64, error) {
	return generate(path, func(w *writer) error {
		var err error
		for i := 0; i < n && err == nil; i++ {
			err = newConn(i).syn(w)
		}
		return err
	})
}

// OpenConns writes n connections that each open and send one ApiVersions
// v3 request, unanswered and never closed.
func OpenConns(path string, n int) (int64, error) {
	id := "app"
	req := pcapgen.EncodeRequest(pcapgen.RequestHeader{APIVersion: 3, ClientID: &id}, pcapgen.APIVersions(3, "open", "1.0"))
	return generate(path, func(w *writer) error {
		var err error
		for i := 0; i < n && err == nil; i++ {
			c := newConn(i)
			if err = c.open(w); err == nil {
				err = c.send(w, pcapgen.ToBroker, req, mss)
			}
		}
		return err
	})
}

// Holes writes conns connections that each lose their first data segment
// and then send segs more of 1448 bytes, all conns in turn (the holes are
// concurrent), never acknowledged: the reassembler holds what comes after
// each hole. The data is one Produce frame large enough for all of it.
func Holes(path string, conns, segs int) (int64, error) {
	id := "app"
	size := (segs + 1) * mss
	frame := pcapgen.EncodeRequest(pcapgen.RequestHeader{APIVersion: 9, ClientID: &id}, pcapgen.Produce(9, "t", [16]byte{}, nil))
	frame = append(frame, make([]byte, size-len(frame))...)
	binary.BigEndian.PutUint32(frame, uint32(size-4))
	return generate(path, func(w *writer) error {
		cs, err := openAll(w, conns, "")
		for _, c := range cs {
			c.next[pcapgen.ToBroker] += mss // the lost segment
		}
		for k := 1; k <= segs && err == nil; k++ {
			for _, c := range cs {
				if err = c.segment(w, pcapgen.ToBroker, frame[k*mss:(k+1)*mss]); err != nil {
					break
				}
			}
		}
		return err
	})
}

// PartialIdentity writes conns connections that each, after their
// ApiVersions round trip, leave an identity frame of just under 1 MiB (one of
// IdentityFrames, in turn) unfinished: all its bytes but the last 100, in
// 1448-byte segments. A response is preceded by its request, whole.
func PartialIdentity(path string, conns int) (int64, error) {
	frames := IdentityFrames()
	return generate(path, func(w *writer) error {
		cs, err := openAll(w, conns, "partial")
		for i, c := range cs {
			if err != nil {
				break
			}
			f := frames[i%len(frames)]
			if f.Response == nil {
				err = c.send(w, pcapgen.ToBroker, f.Request[:len(f.Request)-100], mss)
				continue
			}
			if err = c.send(w, pcapgen.ToBroker, f.Request, mss); err == nil {
				err = c.send(w, pcapgen.ToClient, f.Response[:len(f.Response)-100], mss)
			}
		}
		return err
	})
}

// IdentityFrame is a frame of an identity API (SPEC.md section 1) of just
// under 1 MiB (TailSize and a few bytes: the largest frame kwatch buffered
// whole for a heartbeat or PushTelemetry before it held identity prefixes
// only), its size after the identity fields, as legitimate peers send them
// (topic lists, assignments, metrics) or, where the body has no list, in
// an unknown tagged field.
type IdentityFrame struct {
	Name     string
	Key, Ver int16
	// Request is the whole request frame (correlation ID 1, client ID
	// "app"); Response, when not nil, the large frame is the answer to it.
	Request, Response []byte
}

// TailSize is about how much of an IdentityFrame follows its identity
// fields.
const TailSize = 1000 << 10

// IdentityFrames returns one IdentityFrame per identity API and direction.
func IdentityFrames() []IdentityFrame {
	topics := make([]string, TailSize/40) // 39 bytes each as compact strings, 40 as strings

	for i := range topics {
		topics[i] = fmt.Sprintf("topic-%032d", i)
	}
	big := func(tags *kmsg.Tags) { tags.Set(99, make([]byte, TailSize)) }
	member := "AAECAwQFBgcICQoLDA0ODw"
	tid := [16]byte{0xaa, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 0xbb}

	av := pcapgen.APIVersions(3, "kgo", "1.22.3")
	avBig := pcapgen.APIVersions(3, "kgo", "1.22.3")
	big(&avBig.UnknownTags)
	avR := pcapgen.APIVersionsResponse(3)
	avR.ApiKeys = make([]kmsg.ApiVersionsResponseApiKey, TailSize/7)
	sasl := pcapgen.SaslHandshakeResponse(1, topics...)
	cgh := pcapgen.ConsumerGroupHeartbeat(1, "g1", member, 5)
	cgh.SubscribedTopicNames = topics
	cghR := pcapgen.ConsumerGroupHeartbeatResponse(1, 0, &member, 6)
	cghR.Assignment = &kmsg.ConsumerGroupHeartbeatResponseAssignment{Topics: make([]kmsg.ConsumerGroupHeartbeatResponseAssignmentTopic, TailSize/18)}
	sgh := pcapgen.ShareGroupHeartbeat(1, "sg", member, 2)
	sgh.SubscribedTopicNames = topics
	sghR := pcapgen.ShareGroupHeartbeatResponse(1, 0, &member, 3)
	big(&sghR.UnknownTags)
	stg := pcapgen.StreamsGroupHeartbeat(0, "st", member, 0)
	big(&stg.UnknownTags)
	stgR := pcapgen.StreamsGroupHeartbeatResponse(0, 0, member, 4)
	big(&stgR.UnknownTags)
	gts := pcapgen.GetTelemetrySubscriptions(tid)
	big(&gts.UnknownTags)
	gtsR := pcapgen.GetTelemetrySubscriptionsResponse(0, tid, 7)
	gtsR.RequestedMetrics = topics
	push := pcapgen.PushTelemetry(tid, 7)
	push.Metrics = make([]byte, TailSize)
	pushR := pcapgen.PushTelemetryResponse(42)
	big(&pushR.UnknownTags)

	id := "app"
	req := func(ver int16, body kmsg.Request) []byte {
		return pcapgen.EncodeRequest(pcapgen.RequestHeader{APIVersion: ver, CorrelationID: 1, ClientID: &id}, body)
	}
	return []IdentityFrame{
		{"SaslHandshake response", 17, 1, req(1, pcapgen.SaslHandshake(1, "PLAIN")), pcapgen.EncodeResponse(1, 1, sasl)},
		{"ApiVersions request", 18, 3, req(3, avBig), nil},
		{"ApiVersions response", 18, 3, req(3, av), pcapgen.EncodeResponse(1, 3, avR)},
		{"ConsumerGroupHeartbeat request", 68, 1, req(1, cgh), nil},
		{"ConsumerGroupHeartbeat response", 68, 1, req(1, pcapgen.ConsumerGroupHeartbeat(1, "g1", member, 0)), pcapgen.EncodeResponse(1, 1, cghR)},
		{"ShareGroupHeartbeat request", 76, 1, req(1, sgh), nil},
		{"ShareGroupHeartbeat response", 76, 1, req(1, pcapgen.ShareGroupHeartbeat(1, "sg", member, 0)), pcapgen.EncodeResponse(1, 1, sghR)},
		{"StreamsGroupHeartbeat request", 88, 0, req(0, stg), nil},
		{"StreamsGroupHeartbeat response", 88, 0, req(0, pcapgen.StreamsGroupHeartbeat(0, "st", member, 0)), pcapgen.EncodeResponse(1, 0, stgR)},
		{"GetTelemetrySubscriptions request", 71, 0, req(0, gts), nil},
		{"GetTelemetrySubscriptions response", 71, 0, req(0, pcapgen.GetTelemetrySubscriptions(tid)), pcapgen.EncodeResponse(1, 0, gtsR)},
		{"PushTelemetry request", 72, 0, req(0, push), nil},
		{"PushTelemetry response", 72, 0, req(0, pcapgen.PushTelemetry(tid, 7)), pcapgen.EncodeResponse(1, 0, pushR)},
	}
}
