package corpus

import (
	"net/netip"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kwatch/kwatch/internal/pcapgen"
)

// Building blocks shared by the scenarios. Every client session numbers its
// correlation IDs from 1, and both start functions send two requests, so a
// scenario's own requests start at correlation ID 3.

// Kafka error codes the scenarios' brokers answer with.
const (
	errNone                  int16 = 0
	errCoordinatorNotAvail   int16 = 15
	errUnknownMemberID       int16 = 25
	errInvalidRequest        int16 = 42
	errUnknownSubscription   int16 = 117
	groupOrders                    = "orders-group"
	clientSoftwareJava             = "apache-kafka-java"
	clientSoftwareJavaVer          = "4.2.0"
	clientSoftwareRdkafka          = "librdkafka"
	clientSoftwareRdkafkaVer       = "2.3.0"
	metadataVersion          int16 = 12
	offsetDeleteV3Version    int16 = 1 // accepted-2026: OffsetDelete v1 uses header v3
	headerV3                       = 3
	brokerPort                     = 9092
	firstClientPort                = 40001
	telemetrySubscriptionID  int32 = 7
)

// ID constants: readable version-4 UUIDs (see pcapgen.SeqUUID).
var (
	// idB64Special is a v4 UUID whose standard base64 holds '+' and '/'
	// differs from its URL-safe form (SeqUUID(8) has a '+').
	idB64Special = pcapgen.SeqUUID(8)
)

// ids returns n distinct v4 UUIDs starting at SeqUUID(base).
func uid(n int) [16]byte { return pcapgen.SeqUUID(byte(n)) }

// zeroID is the all-zero UUID.
var zeroID [16]byte

// host is client host n: 10.1.0.n.
func host(n int) netip.Addr { return netip.AddrFrom4([4]byte{10, 1, 0, byte(n)}) }

// broker is broker n: 10.0.0.n:9092.
func broker(n int) netip.AddrPort {
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 0, byte(n)}), brokerPort)
}

// clientAt is client host h, port p.
func clientAt(h, p int) netip.AddrPort { return netip.AddrPortFrom(host(h), uint16(p)) }

// open opens a connection from client host h, port p, to broker b, with its
// TCP handshake (observed from its start).
func open(c *pcapgen.Capture, h, p, b int) *pcapgen.Conn {
	return c.Conn(pcapgen.ConnOptions{Client: netip.AddrPortFrom(host(h), uint16(p)), Broker: broker(b)})
}

// modern starts a KIP-1313 client on cn: header instance ID id on every
// request, client ID cid on the first request only. It sends ApiVersions
// v4 naming the software (corr 1) and Metadata (corr 2).
func modern(cn *pcapgen.Conn, cid string, id [16]byte) *pcapgen.Session {
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr(cid), InstanceID: &id, CorrelationID: 1})
	s.RoundTrip(pcapgen.APIVersions(4, clientSoftwareJava, clientSoftwareJavaVer), pcapgen.APIVersionsResponse(4))
	s.Header.ClientID = nil
	metadata(s)
	return s
}

// legacy starts a pre-KIP-1313 client on cn: no header instance ID, client
// ID cid repeated on every request (a statistic for legacy clients, not a
// finding). It sends ApiVersions v3 (corr 1) and Metadata (corr 2).
func legacy(cn *pcapgen.Conn, cid string) *pcapgen.Session {
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr(cid), CorrelationID: 1})
	s.RoundTrip(pcapgen.APIVersions(3, clientSoftwareRdkafka, clientSoftwareRdkafkaVer), pcapgen.APIVersionsResponse(3))
	metadata(s)
	return s
}

// metadata round-trips a Metadata request (no top-level error code, so no
// broker conformance rule judges its answer).
func metadata(s *pcapgen.Session) {
	b := s.Conn.Broker()
	s.RoundTrip(pcapgen.Metadata(metadataVersion, "orders"), pcapgen.MetadataResponse(metadataVersion, b.Addr().String(), int32(b.Port())))
}

// cgh round-trips a ConsumerGroupHeartbeat of version v answered by errCode
// and respMember (nil = null). A successful join is answered with epoch 1,
// a leave with its own epoch.
func cghAnswered(s *pcapgen.Session, v int16, member string, epoch int32, errCode int16, respMember *string) {
	respEpoch := epoch
	if epoch >= 0 {
		respEpoch = epoch + 1
	}
	if errCode != errNone {
		respEpoch = 0
	}
	s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(v, groupOrders, member, epoch), pcapgen.ConsumerGroupHeartbeatResponse(v, errCode, respMember, respEpoch))
}

// cghReq is cghAnswered at v1 with the request adjusted by mod (static
// membership, for instance).
func cghReq(s *pcapgen.Session, member string, epoch int32, mod func(*kmsg.ConsumerGroupHeartbeatRequest), errCode int16, respMember *string) {
	respEpoch := epoch
	if epoch >= 0 {
		respEpoch = epoch + 1
	}
	if errCode != errNone {
		respEpoch = 0
	}
	req := pcapgen.ConsumerGroupHeartbeat(1, groupOrders, member, epoch)
	mod(req)
	s.RoundTrip(req, pcapgen.ConsumerGroupHeartbeatResponse(1, errCode, respMember, respEpoch))
}

// cgh is a ConsumerGroupHeartbeat v1 that the broker accepts, echoing member.
func cgh(s *pcapgen.Session, member string, epoch int32) {
	cghAnswered(s, 1, member, epoch, errNone, pcapgen.Ptr(member))
}

// cghNoAnswer sends a ConsumerGroupHeartbeat v1 that is never answered.
func cghNoAnswer(s *pcapgen.Session, member string, epoch int32) {
	s.Request(pcapgen.ConsumerGroupHeartbeat(1, groupOrders, member, epoch))
}

// gts round-trips GetTelemetrySubscriptions with body ID req, answered by
// errCode and the ID assigned.
func gts(s *pcapgen.Session, req [16]byte, errCode int16, assigned [16]byte) {
	s.RoundTrip(pcapgen.GetTelemetrySubscriptions(req), pcapgen.GetTelemetrySubscriptionsResponse(errCode, assigned, telemetrySubscriptionID))
}

// push round-trips PushTelemetry with body ID id, answered by errCode.
func push(s *pcapgen.Session, id [16]byte, errCode int16) {
	s.RoundTrip(pcapgen.PushTelemetry(id, telemetrySubscriptionID), pcapgen.PushTelemetryResponse(errCode))
}

// offsetDeleteV3 round-trips an OffsetDelete v1, which the accepted-2026
// revision puts in request header v3, with header instance ID id (nil =
// none).
func offsetDeleteV3(s *pcapgen.Session, id *[16]byte) {
	saved := s.Header
	s.Header.HeaderVersion = headerV3
	s.Header.InstanceID = id
	req := kmsg.NewPtrOffsetDeleteRequest()
	req.Version = offsetDeleteV3Version
	req.Group = groupOrders
	t := kmsg.NewOffsetDeleteRequestTopic()
	t.Topic = "orders"
	t.Partitions = []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}
	req.Topics = []kmsg.OffsetDeleteRequestTopic{t}
	resp := kmsg.NewPtrOffsetDeleteResponse()
	s.RoundTrip(req, resp)
	s.Header.HeaderVersion = saved.HeaderVersion
	s.Header.InstanceID = saved.InstanceID
}

// withInstance runs fn with the session's header instance ID set to id
// (nil = absent) for the requests fn sends, then restores it.
func withInstance(s *pcapgen.Session, id *[16]byte, fn func()) {
	saved := s.Header.InstanceID
	s.Header.InstanceID = id
	fn()
	s.Header.InstanceID = saved
}

// withRawTags runs fn with the header's tagged-field section replaced by raw.
func withRawTags(s *pcapgen.Session, raw []byte, fn func()) {
	s.Header.RawTags = raw
	fn()
	s.Header.RawTags = nil
}

// withClientID runs fn with the header client ID set to cid (nil = null).
func withClientID(s *pcapgen.Session, cid *string, fn func()) {
	saved := s.Header.ClientID
	s.Header.ClientID = cid
	fn()
	s.Header.ClientID = saved
}

// ex is the expectation of len(corrs) findings of rule at those requests.
func ex(rule string, corrs ...int32) Expected {
	return Expected{Rule: rule, Count: len(corrs), CorrelationIDs: corrs}
}

// exSev is ex with an explicit severity.
func exSev(rule, severity string, corrs ...int32) Expected {
	e := ex(rule, corrs...)
	e.Severity = severity
	return e
}

// exConn is the expectation of n connection-level findings (no request).
func exConn(rule string, n int) Expected { return Expected{Rule: rule, Count: n} }

// mixed marks a severity or confidence that differs between the findings
// of one rule in a merged expectation.
const mixed = "mixed"

// merge adds up expectations rule by rule (for captures that mix clients).
func merge(lists ...[]Expected) []Expected {
	var out []Expected
	idx := map[string]int{}
	for _, l := range lists {
		for _, e := range l {
			i, ok := idx[e.Rule]
			if !ok {
				idx[e.Rule] = len(out)
				e.CorrelationIDs = append([]int32(nil), e.CorrelationIDs...)
				out = append(out, e)
				continue
			}
			o := &out[i]
			if o.Severity != e.Severity || o.Confidence != e.Confidence {
				// Findings of one rule with different severities or
				// confidences: only their count and requests are checked.
				o.Severity, o.Confidence = mixed, mixed
			}
			o.Count += e.Count
			o.CorrelationIDs = append(o.CorrelationIDs, e.CorrelationIDs...)
		}
	}
	return out
}

// onModern builds a capture of one connection from a client with header
// instance ID H (host 1 to broker 1): steps run in its session, then it
// closes.
func onModern(steps func(s *pcapgen.Session, bad bool)) func(*pcapgen.Capture, bool) {
	return oneConn(func(cn *pcapgen.Conn) *pcapgen.Session { return modern(cn, "orders-app", idH) }, steps)
}

// onLegacy is onModern for a legacy client (no header instance ID).
func onLegacy(steps func(s *pcapgen.Session, bad bool)) func(*pcapgen.Capture, bool) {
	return oneConn(func(cn *pcapgen.Conn) *pcapgen.Session { return legacy(cn, "orders-app") }, steps)
}

func oneConn(start func(*pcapgen.Conn) *pcapgen.Session, steps func(s *pcapgen.Session, bad bool)) func(*pcapgen.Capture, bool) {
	return func(c *pcapgen.Capture, bad bool) {
		cn := open(c, 1, firstClientPort, 1)
		steps(start(cn), bad)
		cn.Close()
	}
}
