package corpus

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kwatch/kwatch/internal/pcapgen"
)

// twin is a rule capture and its compliant twin, built by one function so
// that they differ only where bad says.
type twin struct {
	name, doc string
	build     func(c *pcapgen.Capture, bad bool)
	// bad is what the rule capture yields; ok what the twin yields (none of
	// the rule's own findings, sometimes another rule's).
	bad, ok []Expected
	profile string
	args    []string
}

func (t twin) scenarios() []Scenario {
	return []Scenario{
		{Name: "rule-" + t.name, Doc: t.doc, Build: func(c *pcapgen.Capture) { t.build(c, true) }, Expect: t.bad, Profile: t.profile, Args: t.args},
		{Name: "rule-" + t.name + "-ok", Doc: "compliant twin of rule-" + t.name, Build: func(c *pcapgen.Capture) { t.build(c, false) }, Expect: t.ok, Profile: t.profile, Args: t.args},
	}
}

// pick returns a when bad, else b.
func pick[T any](bad bool, a, b T) T {
	if bad {
		return a
	}
	return b
}

func ruleScenarios() []Scenario {
	var all []Scenario
	for _, group := range [][]twin{instanceTwins, clientIDTwins(), telemetryTwins(), memberTwins, brokerTwins(), acceptedTwins()} {
		for _, t := range group {
			all = append(all, t.scenarios()...)
		}
	}
	return all
}

// Instance IDs of the rule captures.
var (
	idH  = uid(0x10) // the client's instance ID
	idH2 = uid(0x20) // another instance ID
	idR  = uid(0x30) // an unrelated UUID (telemetry or member ID)
	idB  = uid(0x40) // a broker-assigned telemetry ID
	idM  = uid(0x50) // a legacy client's member ID
	idM2 = uid(0x60) // a second member ID
)

// --- 3.1 client instance ID in the request header ---

// headerRequest sends corr 3 with a header changed by bad, then corr 4
// as the connection's first request had it (which is compliant).
func headerRequest(opts pcapgen.ConnOptions, badID *[16]byte) func(*pcapgen.Capture, bool) {
	return func(c *pcapgen.Capture, bad bool) {
		cn := c.Conn(opts)
		s := modern(cn, "orders-app", idH)
		withInstance(s, pick(bad, badID, &idH), func() { metadata(s) })
		metadata(s)
		cn.Close()
	}
}

// malformed sends corr 3 with the raw tagged fields raw when bad, else
// with fixed (nil: the session's own header), then corr 4 as the first.
func malformed(raw []byte, fixed []byte) func(*pcapgen.Capture, bool) {
	return onModern(func(s *pcapgen.Session, bad bool) {
		if bad || fixed != nil {
			withRawTags(s, pick(bad, raw, fixed), func() { metadata(s) })
		} else {
			metadata(s)
		}
		metadata(s)
	})
}

// Tagged fields of the malformed-header twins, and the connections of the
// header twins: from its start, and joined mid-stream.
var (
	tag0    = append([]byte{1, 0, 16}, idH[:]...)
	dup     = append(append([]byte{2, 0, 16}, idH[:]...), append([]byte{0, 16}, idH[:]...)...)
	desc    = append([]byte{2, 1, 1, 0xAA, 0, 16}, idH[:]...)
	asc     = append(append([]byte{2, 0, 16}, idH[:]...), 1, 1, 0xAA)
	fromSYN = pcapgen.ConnOptions{Client: clientAt(1, firstClientPort), Broker: broker(1)}
	midway  = pcapgen.ConnOptions{Client: clientAt(1, firstClientPort), Broker: broker(1), NoSYN: true}
)

// instanceTwins are the rules of SPEC.md 3.1.
var instanceTwins = []twin{
	{name: "instance-id-dropped", doc: "a v2 request (corr 3) omits the instance ID the first request carried",
		build: headerRequest(fromSYN, nil), bad: []Expected{ex("instance-id-dropped", 3)}},
	{name: "instance-id-dropped-zero", doc: "a v2 request (corr 3) carries a zero instance ID after a non-zero first",
		build: headerRequest(fromSYN, &zeroID), bad: []Expected{ex("instance-id-dropped", 3)}},
	{name: "instance-id-changed", doc: "a v2 request (corr 3) carries a second instance ID",
		build: headerRequest(fromSYN, &idH2), bad: []Expected{ex("instance-id-changed", 3)}},
	{name: "instance-id-changed-midstream", doc: "instance-id-changed on a connection joined mid-stream: partial confidence",
		build: headerRequest(midway, &idH2), bad: []Expected{{Rule: "instance-id-changed", Count: 1, CorrelationIDs: []int32{3}, Confidence: "partial"}}},
	{name: "instance-id-late", doc: "the first v2 requests carry no instance ID, a later one (corr 3) does",
		build: func(c *pcapgen.Capture, bad bool) {
			cn := open(c, 1, firstClientPort, 1)
			s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("orders-app"), CorrelationID: 1})
			s.RoundTrip(pcapgen.APIVersions(4, clientSoftwareJava, clientSoftwareJavaVer), pcapgen.APIVersionsResponse(4))
			s.Header.ClientID = nil
			metadata(s)
			withInstance(s, pick(bad, &idH, nil), func() { metadata(s) })
			metadata(s)
			cn.Close()
		}, bad: []Expected{ex("instance-id-late", 3)}},
	{name: "instance-id-malformed-size", doc: "tag 0 of corr 3 is 8 bytes, not 16",
		build: malformed(append([]byte{1, 0, 8}, idH[:8]...), nil), bad: []Expected{ex("instance-id-malformed", 3)}},
	{name: "instance-id-malformed-duplicate", doc: "corr 3 carries tag 0 twice",
		build: malformed(dup, tag0), bad: []Expected{ex("instance-id-malformed", 3)}},
	{name: "instance-id-malformed-descending", doc: "corr 3 has tag 1 before tag 0; the twin has them ascending (unknown tag 1 skipped)",
		build: malformed(desc, asc), bad: []Expected{ex("instance-id-malformed", 3)}},
	{name: "instance-id-malformed-overrun", doc: "tag 0 of corr 3 claims 127 bytes, more than the frame holds",
		build: malformed([]byte{1, 0, 0x7f}, nil), bad: []Expected{ex("instance-id-malformed", 3)}},
	{name: "instance-id-malformed-first", doc: "the connection's first v2 request (corr 1) has a malformed tag 0: it sets no state, so corr 2 and 3 (with the ID) are fine",
		build: func(c *pcapgen.Capture, bad bool) {
			cn := open(c, 1, firstClientPort, 1)
			s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("orders-app"), InstanceID: &idH, CorrelationID: 1})
			if bad {
				withRawTags(s, append([]byte{1, 0, 8}, idH[:8]...), func() { metadata(s) })
			} else {
				metadata(s)
			}
			s.Header.ClientID = nil
			metadata(s)
			metadata(s)
			cn.Close()
		}, bad: []Expected{ex("instance-id-malformed", 1)}},
	{name: "instance-id-reserved", doc: "the instance ID is ONE_UUID (finding at the first request)",
		build: func(c *pcapgen.Capture, bad bool) {
			cn := open(c, 1, firstClientPort, 1)
			s := modern(cn, "orders-app", pick(bad, pcapgen.OneUUID(), idH))
			metadata(s)
			cn.Close()
		}, bad: []Expected{ex("instance-id-reserved", 1)}},
	{name: "instance-id-shared-hosts", doc: "one instance ID from two client hosts (second host's first request, corr 1); the twin's second connection is from the same host",
		build: sharedH(func(bad bool) (int, string) { return pick(bad, 2, 1), "orders-app" }), bad: []Expected{ex("instance-id-shared", 1)}},
	{name: "instance-id-shared-client-ids", doc: "one instance ID with two client IDs (second connection's first request, corr 1)",
		build: sharedH(func(bad bool) (int, string) { return 1, pick(bad, "billing-app", "orders-app") }), bad: []Expected{ex("instance-id-shared", 1)}},
}

// sharedH is two connections of instance H, each sending one Metadata
// (corr 1): the first from host 1 as orders-app, the second from the host
// and with the client ID second gives for the twin.
func sharedH(second func(bad bool) (host int, clientID string)) func(*pcapgen.Capture, bool) {
	return func(c *pcapgen.Capture, bad bool) {
		host, cid := second(bad)
		c1 := open(c, 1, firstClientPort, 1)
		s1 := modern(c1, "orders-app", idH)
		c2 := open(c, host, firstClientPort+1, 2)
		s2 := modern(c2, cid, idH)
		metadata(s1)
		metadata(s2)
		c1.Close()
		c2.Close()
	}
}

// --- 3.2 client ID sent once ---

func clientIDTwins() []twin {
	return []twin{
		{name: "client-id-changed", doc: "a legacy client's corr 3 carries a client ID other than the first request's",
			build: onLegacy(func(s *pcapgen.Session, bad bool) {
				withClientID(s, pcapgen.Ptr(pick(bad, "billing-app", "orders-app")), func() { metadata(s) })
				metadata(s)
			}), bad: []Expected{ex("client-id-changed", 3)}},
		{name: "client-id-missing-first", doc: "the first request's client ID is null; corr 3 sets one",
			build: clientIDMissingFirst(nil), bad: []Expected{ex("client-id-missing-first", 3)}},
		{name: "client-id-missing-first-empty", doc: "the first request's client ID is empty; corr 3 sets one",
			build: clientIDMissingFirst(pcapgen.Ptr("")), bad: []Expected{ex("client-id-missing-first", 3)}},
		{name: "client-id-repeated", doc: "a client sending header instance IDs repeats its client ID on every request (one finding at the connection's end)",
			build: func(c *pcapgen.Capture, bad bool) {
				cn := open(c, 1, firstClientPort, 1)
				s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("orders-app"), InstanceID: &idH, CorrelationID: 1})
				s.RoundTrip(pcapgen.APIVersions(4, clientSoftwareJava, clientSoftwareJavaVer), pcapgen.APIVersionsResponse(4))
				if !bad {
					s.Header.ClientID = nil
				}
				metadata(s)
				metadata(s)
				cn.Close()
			}, bad: []Expected{exConn("client-id-repeated", 1)}},
	}
}

// clientIDMissingFirst: a legacy client whose first two requests carry
// first (null or empty) and whose corr 3 carries a client ID when bad.
func clientIDMissingFirst(first *string) func(*pcapgen.Capture, bool) {
	return func(c *pcapgen.Capture, bad bool) {
		cn := open(c, 1, firstClientPort, 1)
		s := cn.Session(pcapgen.RequestHeader{ClientID: first, CorrelationID: 1})
		s.RoundTrip(pcapgen.APIVersions(3, clientSoftwareRdkafka, clientSoftwareRdkafkaVer), pcapgen.APIVersionsResponse(3))
		metadata(s)
		withClientID(s, pick(bad, pcapgen.Ptr("orders-app"), first), func() { metadata(s) })
		metadata(s)
		cn.Close()
	}
}

// --- 3.3 telemetry client instance ID ---

func telemetryTwins() []twin {
	return []twin{
		{name: "telemetry-id-requested-with-header", doc: "GetTelemetrySubscriptions (corr 3) with header H and body 0, rejected with INVALID_REQUEST",
			build: onModern(func(s *pcapgen.Session, bad bool) {
				gts(s, pick(bad, zeroID, idH), pick(bad, errInvalidRequest, errNone), zeroID)
			}), bad: []Expected{ex("telemetry-id-requested-with-header", 3)}},
		{name: "telemetry-id-mismatch-subscriptions", doc: "GetTelemetrySubscriptions (corr 3) with header H and body R != H, rejected with INVALID_REQUEST",
			build: onModern(func(s *pcapgen.Session, bad bool) {
				gts(s, pick(bad, idR, idH), pick(bad, errInvalidRequest, errNone), zeroID)
			}), bad: []Expected{ex("telemetry-id-mismatch", 3)}},
		{name: "telemetry-id-mismatch-push", doc: "PushTelemetry (corr 4) with header H and body R != H, rejected with INVALID_REQUEST",
			build: pushAfterSubscriptions(false, idR, errInvalidRequest), bad: []Expected{ex("telemetry-id-mismatch", 4)}},
		{name: "telemetry-id-zero-push", doc: "PushTelemetry (corr 4) with a zero body ID under header H: zero-push only, not mismatch",
			build: pushAfterSubscriptions(false, zeroID, errInvalidRequest), bad: []Expected{ex("telemetry-id-zero-push", 4)}},
		{name: "telemetry-id-zero-push-legacy", doc: "legacy flow: the broker assigned B, PushTelemetry (corr 4) sends 0: zero-push only, not not-adopted",
			build: pushAfterSubscriptions(true, zeroID, errInvalidRequest), bad: []Expected{ex("telemetry-id-zero-push", 4)}},
		{name: "telemetry-id-not-adopted", doc: "legacy flow: the broker assigned B, PushTelemetry (corr 4) uses R != B",
			build: pushAfterSubscriptions(true, idR, errUnknownSubscription), bad: []Expected{ex("telemetry-id-not-adopted", 4)}},
		{name: "telemetry-id-not-adopted-subscriptions", doc: "legacy flow: the broker assigned B, a later GetTelemetrySubscriptions (corr 4) asks with R != B",
			build: onLegacy(func(s *pcapgen.Session, bad bool) {
				gts(s, zeroID, errNone, idB)
				gts(s, pick(bad, idR, idB), errNone, zeroID)
			}), bad: []Expected{ex("telemetry-id-not-adopted", 4)}},
	}
}

// pushAfterSubscriptions is one connection's GetTelemetrySubscriptions
// (corr 3) then PushTelemetry (corr 4) with the ID in use: the header ID H
// of a modern client, or the ID B the broker assigned a legacy one. The bad
// twin pushes badID instead, and the broker rejects it with badErr.
func pushAfterSubscriptions(legacyFlow bool, badID [16]byte, badErr int16) func(*pcapgen.Capture, bool) {
	on, header, assigned, inUse := onModern, idH, zeroID, idH
	if legacyFlow {
		on, header, assigned, inUse = onLegacy, zeroID, idB, idB
	}
	return on(func(s *pcapgen.Session, bad bool) {
		gts(s, header, errNone, assigned)
		push(s, pick(bad, badID, inUse), pick(bad, badErr, errNone))
	})
}

// --- 3.4 member IDs ---

// joinBeatLeave: member joins (corr 3), heartbeats (corr 4) and leaves
// (corr 5), all accepted.
func joinBeatLeave(s *pcapgen.Session, member string) {
	cgh(s, member, 0)
	cgh(s, member, 1)
	cgh(s, member, -1)
}

// Member IDs of the member twins: M, M2 and H in Java's form.
var (
	jm  = pcapgen.JavaString(idM)
	jm2 = pcapgen.JavaString(idM2)
	jh  = pcapgen.JavaString(idH)
)

// legacyJoin: a legacy client joins with member (corr 3), heartbeats
// (corr 4) and leaves (corr 5), all accepted; the twin uses M.
func legacyJoin(bad string) func(*pcapgen.Capture, bool) {
	return onLegacy(func(s *pcapgen.Session, isBad bool) { joinBeatLeave(s, pick(isBad, bad, jm)) })
}

// modernJoin: the same for a client with header instance ID H.
func modernJoin(bad string) func(*pcapgen.Capture, bool) {
	return onModern(func(s *pcapgen.Session, isBad bool) { joinBeatLeave(s, pick(isBad, bad, jh)) })
}

// emptyJoin: a legacy client's join (corr 3) with an empty member ID,
// rejected with INVALID_REQUEST; the twin sends M and is accepted.
func emptyJoin(send func(s *pcapgen.Session, member string, errCode int16)) func(*pcapgen.Capture, bool) {
	return onLegacy(func(s *pcapgen.Session, bad bool) {
		send(s, pick(bad, "", jm), pick(bad, errInvalidRequest, errNone))
	})
}

// emptyBelow: a join (corr 3) with an empty member ID at a version
// below the required one; the broker assigns an ID (no UUID) that the
// client then uses (corr 4): not judged, not a change.
func emptyBelow(v int16) func(*pcapgen.Capture, bool) {
	return onLegacy(func(s *pcapgen.Session, bad bool) {
		assigned := pick(bad, "consumer-orders-app-1-assigned", jm)
		cghAnswered(s, v, pick(bad, "", jm), 0, errNone, &assigned)
		cghAnswered(s, v, assigned, 1, errNone, &assigned)
	})
}

// leave: a legacy member joins, heartbeats and leaves with epoch (-2: a
// static member), the leave (corr 5) with an empty member ID when bad.
func leave(epoch int32) func(*pcapgen.Capture, bool) {
	static := func(r *kmsg.ConsumerGroupHeartbeatRequest) {
		if epoch == -2 {
			r.InstanceID = pcapgen.Ptr("orders-app-static-1")
		}
	}
	return onLegacy(func(s *pcapgen.Session, bad bool) {
		cghReq(s, jm, 0, static, errNone, pcapgen.Ptr(jm))
		cghReq(s, jm, 1, static, errNone, pcapgen.Ptr(jm))
		cghReq(s, pick(bad, "", jm), epoch, static, pick(bad, errUnknownMemberID, errNone), pcapgen.Ptr(pick(bad, "", jm)))
	})
}

// ghost: a legacy client's join (corr 3) fails or goes unanswered, and it
// joins again (corr 4) with another member ID when bad.
func ghost(firstAnswered bool) func(*pcapgen.Capture, bool) {
	return onLegacy(func(s *pcapgen.Session, bad bool) {
		if firstAnswered {
			cghAnswered(s, 1, jm, 0, errCoordinatorNotAvail, nil)
		} else {
			cghNoAnswer(s, jm, 0)
		}
		cgh(s, pick(bad, jm2, jm), 0)
	})
}

// collision: two clients (legacy, or with instance IDs H and H2) join and
// heartbeat with the same member ID when bad.
func collision(modernClients bool) func(*pcapgen.Capture, bool) {
	return func(c *pcapgen.Capture, bad bool) {
		c1 := open(c, 1, firstClientPort, 1)
		var c2 *pcapgen.Conn
		var s1, s2 *pcapgen.Session
		first, second := jm, pick(bad, jm, jm2)
		if modernClients {
			c2 = open(c, 2, firstClientPort, 1)
			s1, s2 = modern(c1, "orders-app", idH), modern(c2, "orders-app", idH2)
			first, second = jh, pick(bad, jh, pcapgen.JavaString(idH2))
		} else {
			c2 = open(c, 1, firstClientPort+1, 1)
			s1, s2 = legacy(c1, "orders-app"), legacy(c2, "orders-app")
		}
		joinTogether(s1, s2, first, second)
		c1.Close()
		c2.Close()
	}
}

// joinTogether: two members join (corr 3) and heartbeat (corr 4) in turn.
func joinTogether(s1, s2 *pcapgen.Session, first, second string) {
	cgh(s1, first, 0)
	cgh(s2, second, 0)
	cgh(s1, first, 1)
	cgh(s2, second, 1)
}

// encoding is the twin of a member ID encoding that kwatch recognises.
func encoding(name, doc, member, severity string) twin {
	return twin{name: "member-id-encoding-" + name, doc: doc, build: legacyJoin(member),
		bad: []Expected{exSev("member-id-encoding", severity, 3)}}
}

// memberTwins are the rules of SPEC.md 3.4.
var memberTwins = []twin{
	{name: "member-id-empty", doc: "ConsumerGroupHeartbeat v1 join (corr 3) with an empty member ID, rejected with INVALID_REQUEST",
		build: emptyJoin(func(s *pcapgen.Session, m string, e int16) { cghAnswered(s, 1, m, 0, e, nilIfEmpty(m)) }),
		bad:   []Expected{exSev("member-id-empty", "error", 3)}},
	{name: "member-id-empty-v0", doc: "ConsumerGroupHeartbeat v0 join (corr 3) with an empty member ID: info below the required version; the broker-assigned ID is then used (corr 4) unjudged",
		build: emptyBelow(0), bad: []Expected{exSev("member-id-empty", "info", 3)}},
	{name: "member-id-empty-required-from-2", doc: "as member-id-empty at v1, but with --member-id-required-from 2: info, and the broker-assigned ID is no broker finding",
		build: emptyBelow(1), bad: []Expected{exSev("member-id-empty", "info", 3)}, args: []string{"--member-id-required-from", "2"}},
	{name: "member-id-empty-share-v0", doc: "ShareGroupHeartbeat v0 join (corr 3) with an empty member ID: error from v0",
		build: emptyJoin(func(s *pcapgen.Session, m string, e int16) {
			s.RoundTrip(pcapgen.ShareGroupHeartbeat(0, groupOrders, m, 0), pcapgen.ShareGroupHeartbeatResponse(0, e, nilIfEmpty(m), pick(e == errNone, int32(1), 0)))
		}), bad: []Expected{exSev("member-id-empty", "error", 3)}},
	{name: "member-id-empty-streams-v0", doc: "StreamsGroupHeartbeat v0 join (corr 3) with an empty member ID: error from v0",
		build: emptyJoin(func(s *pcapgen.Session, m string, e int16) {
			s.RoundTrip(pcapgen.StreamsGroupHeartbeat(0, groupOrders, m, 0), pcapgen.StreamsGroupHeartbeatResponse(0, e, m, pick(e == errNone, int32(1), 0)))
		}), bad: []Expected{exSev("member-id-empty", "error", 3)}},
	{name: "leave-without-member-id", doc: "a leave (epoch -1, corr 5) with an empty member ID, answered UNKNOWN_MEMBER_ID",
		build: leave(-1), bad: []Expected{ex("leave-without-member-id", 5)}},
	{name: "leave-without-member-id-static", doc: "a static leave (epoch -2, corr 5) with an empty member ID",
		build: leave(-2), bad: []Expected{ex("leave-without-member-id", 5)}},
	{name: "member-id-changed", doc: "a legacy client joins with M (corr 3), leaves (corr 4) and rejoins with M2 (corr 5) on one connection",
		build: onLegacy(func(s *pcapgen.Session, bad bool) {
			cgh(s, jm, 0)
			cgh(s, jm, -1)
			cgh(s, pick(bad, jm2, jm), 0)
		}), bad: []Expected{ex("member-id-changed", 5)}},
	{name: "member-id-changed-instance", doc: "instance H joins with its Java string on one connection, then with another ID on a second (corr 3 there), which is also misaligned",
		build: func(c *pcapgen.Capture, bad bool) {
			c1 := open(c, 1, firstClientPort, 1)
			s1 := modern(c1, "orders-app", idH)
			cgh(s1, jh, 0)
			cgh(s1, jh, -1)
			c1.Close()
			c2 := open(c, 1, firstClientPort+1, 2)
			s2 := modern(c2, "orders-app", idH)
			cgh(s2, pick(bad, jm2, jh), 0)
			c2.Close()
		}, bad: []Expected{ex("member-id-changed", 3), ex("member-id-misaligned", 3)}},
	{name: "ghost-member-no-response", doc: "a join with M (corr 3) gets no response; the retry (corr 4) uses M2",
		build: ghost(false), bad: []Expected{ex("ghost-member", 4)}},
	{name: "ghost-member-error", doc: "a join with M (corr 3) gets COORDINATOR_NOT_AVAILABLE; the retry (corr 4) uses M2",
		build: ghost(true), bad: []Expected{ex("ghost-member", 4)}},
	{name: "member-id-collision-instances", doc: "instances H and H2 both join with H's Java string (the second at its corr 3), which is misaligned for H2",
		build: collision(true), bad: []Expected{ex("member-id-collision", 3), ex("member-id-misaligned", 3)}},
	{name: "member-id-collision-legacy", doc: "two legacy connections (one host, two ports), both open, join with the same member ID (the second at its corr 3)",
		build: collision(false), bad: []Expected{ex("member-id-collision", 3)}},
	{name: "member-id-not-uuid", doc: "a legacy client's member ID is no UUID in any encoding",
		build: legacyJoin("consumer-orders-app-1-5d8f"), bad: []Expected{ex("member-id-not-uuid", 3)}},
	{name: "member-id-not-uuid-after-gap", doc: "member-id-not-uuid after the capture lost the Metadata request (a gap in the client's stream): partial confidence",
		build: func(c *pcapgen.Capture, bad bool) {
			cn := open(c, 1, firstClientPort, 1)
			s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("orders-app"), CorrelationID: 1})
			s.RoundTrip(pcapgen.APIVersions(3, clientSoftwareRdkafka, clientSoftwareRdkafkaVer), pcapgen.APIVersionsResponse(3))
			cn.DropNext(1) // the Metadata request (corr 2): a gap before the join
			metadata(s)
			m := pick(bad, "consumer-orders-app-1-5d8f", jm)
			cgh(s, m, 0)
			cgh(s, m, 1)
			cn.Close()
		}, bad: []Expected{{Rule: "member-id-not-uuid", Count: 1, CorrelationIDs: []int32{3}, Confidence: "partial"}}},
	encoding("padded", "the member ID is URL-safe base64 with == padding (kgo's spelling): info", pcapgen.PaddedURL(idM), "info"),
	encoding("std", "the member ID is standard base64 with '+': warn", pcapgen.StdBase64(idB64Special), "warn"),
	encoding("std-nopad", "the member ID is standard base64 without padding, with '+': warn", pcapgen.StdBase64NoPad(idB64Special), "warn"),
	encoding("hex", "the member ID is 32-char hex: info", pcapgen.Hex(idM), "info"),
	encoding("dashed", "the member ID is 8-4-4-4-12 hex: info", pcapgen.Dashed(idM), "info"),
	{name: "member-id-not-v4", doc: "the member ID is a version-1 UUID",
		build: legacyJoin(pcapgen.JavaString(pcapgen.MustUUID("6ba7b810-9dad-11d1-80b4-00c04fd430c8"))), bad: []Expected{ex("member-id-not-v4", 3)}},
	{name: "member-id-not-v4-reserved", doc: "the member ID is ONE_UUID",
		build: legacyJoin(pcapgen.JavaString(pcapgen.OneUUID())), bad: []Expected{ex("member-id-not-v4", 3)}},
	{name: "member-id-misaligned", doc: "a client with header instance ID H uses another UUID as member ID (once, though it heartbeats with it)",
		build: modernJoin(pcapgen.JavaString(idR)), bad: []Expected{ex("member-id-misaligned", 3)}},
	{name: "member-id-alignment-encoding", doc: "the member ID is H in padded URL-safe base64: alignment-encoding plus encoding, never misaligned",
		build: modernJoin(pcapgen.PaddedURL(idH)), bad: []Expected{ex("member-id-alignment-encoding", 3), exSev("member-id-encoding", "info", 3)}},
	{name: "member-id-alignment-encoding-hex", doc: "the member ID is H in 8-4-4-4-12 hex",
		build: modernJoin(pcapgen.Dashed(idH)), bad: []Expected{ex("member-id-alignment-encoding", 3), exSev("member-id-encoding", "info", 3)}},
}

// nilIfEmpty is the member ID a broker answers: null after a rejected
// empty join.
func nilIfEmpty(m string) *string {
	if m == "" {
		return nil
	}
	return &m
}

// --- 3.5 broker conformance ---

func brokerTwins() []twin {
	return []twin{
		{name: "broker-accepted-invalid", doc: "a mismatched GetTelemetrySubscriptions (corr 3) is answered NONE instead of INVALID_REQUEST",
			build: onModern(func(s *pcapgen.Session, bad bool) {
				gts(s, idR, pick(bad, errNone, errInvalidRequest), zeroID)
			}), bad: []Expected{ex("broker-accepted-invalid", 3), ex("telemetry-id-mismatch", 3)},
			ok: []Expected{ex("telemetry-id-mismatch", 3)}},
		{name: "broker-accepted-invalid-header", doc: "an ApiVersions (corr 3) with a changed header instance ID is answered NONE",
			build: onModern(func(s *pcapgen.Session, bad bool) {
				resp := pcapgen.APIVersionsResponse(4)
				resp.ErrorCode = pick(bad, errNone, errInvalidRequest)
				withInstance(s, &idH2, func() { s.RoundTrip(pcapgen.APIVersions(4, clientSoftwareJava, clientSoftwareJavaVer), resp) })
			}), bad: []Expected{ex("broker-accepted-invalid", 3), ex("instance-id-changed", 3)},
			ok: []Expected{ex("instance-id-changed", 3)}},
		{name: "broker-generated-member-id", doc: "a v1 join (corr 3) with an empty member ID is accepted with a broker-assigned ID",
			build: onLegacy(func(s *pcapgen.Session, bad bool) {
				if bad {
					cghAnswered(s, 1, "", 0, errNone, pcapgen.Ptr("consumer-orders-app-1-assigned"))
				} else {
					cghAnswered(s, 1, "", 0, errInvalidRequest, nil)
				}
			}), bad: []Expected{ex("broker-accepted-invalid", 3), ex("broker-generated-member-id", 3), exSev("member-id-empty", "error", 3)},
			ok: []Expected{exSev("member-id-empty", "error", 3)}},
		{name: "broker-telemetry-id-echo", doc: "an aligned GetTelemetrySubscriptions (corr 3) is answered with a non-zero ID",
			build: onModern(func(s *pcapgen.Session, bad bool) {
				gts(s, idH, errNone, pick(bad, idH, zeroID))
				push(s, idH, errNone)
			}), bad: []Expected{ex("broker-telemetry-id-echo", 3)}},
		{name: "broker-telemetry-id-echo-legacy", doc: "a legacy later GetTelemetrySubscriptions (corr 4, body B) is answered with B again",
			build: onLegacy(func(s *pcapgen.Session, bad bool) {
				gts(s, zeroID, errNone, idB)
				gts(s, idB, errNone, pick(bad, idB, zeroID))
			}), bad: []Expected{ex("broker-telemetry-id-echo", 4)}},
		{name: "broker-telemetry-id-missing", doc: "a legacy first GetTelemetrySubscriptions (corr 3, body 0) is answered NONE with a zero ID",
			build: onLegacy(func(s *pcapgen.Session, bad bool) {
				gts(s, zeroID, errNone, pick(bad, zeroID, idB))
			}), bad: []Expected{ex("broker-telemetry-id-missing", 3)}},
	}
}

// --- section 4, profile accepted-2026 ---

func acceptedTwins() []twin {
	// A client whose v2 requests (ApiVersions corr 1, Metadata corr 2)
	// carry no instance ID, as the accepted revision has it, followed by
	// two OffsetDelete v1 requests in header v3 (corr 3 and 4).
	build := func(first, second func(bad bool) *[16]byte) func(*pcapgen.Capture, bool) {
		return func(c *pcapgen.Capture, bad bool) {
			cn := open(c, 1, firstClientPort, 1)
			s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("orders-app"), CorrelationID: 1})
			s.RoundTrip(pcapgen.APIVersions(4, clientSoftwareJava, clientSoftwareJavaVer), pcapgen.APIVersionsResponse(4))
			s.Header.ClientID = nil
			metadata(s)
			offsetDeleteV3(s, first(bad))
			offsetDeleteV3(s, second(bad))
			cn.Close()
		}
	}
	none := func(bool) *[16]byte { return nil }
	return []twin{
		{name: "instance-id-missing-first", doc: "accepted-2026: the first v3-header request (OffsetDelete v1, corr 3) has no instance ID",
			build:   build(func(bad bool) *[16]byte { return pick(bad, nil, &idH) }, none),
			bad:     []Expected{ex("instance-id-missing-first", 3)},
			profile: "accepted-2026"},
		{name: "instance-id-repeated", doc: "accepted-2026: the second v3-header request (corr 4) repeats the instance ID",
			build:   build(func(bool) *[16]byte { return &idH }, func(bad bool) *[16]byte { return pick(bad, &idH, nil) }),
			bad:     []Expected{ex("instance-id-repeated", 4)},
			profile: "accepted-2026"},
	}
}
