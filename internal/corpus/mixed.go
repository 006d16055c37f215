package corpus

import (
	"github.com/kwatch/kwatch/internal/pcapgen"
)

// Compliant, fleet and quick-start captures: several clients in one capture.
// Each client kind writes its connections and returns the findings SPEC.md
// gives it, so a mixed capture's expectation is the merge of its clients'.

// client writes one client instance from host h to broker b.
type client func(c *pcapgen.Capture, h, b int) []Expected

const (
	groupShare   = "orders-share"
	groupStreams = "orders-streams"
	records      = "kwatch-corpus-record-batch"
)

// javaModern is a compliant KIP-1313 client: header instance ID on every v2
// request (a v1-header Produce is exempt), client ID on the first request
// only, member ID = Java string of the instance ID in a consumer and a share
// group, across leave and rejoin, aligned telemetry, and a second connection
// to broker b+1 from the same host with the same instance ID.
func javaModern(cid string, id [16]byte) client {
	return func(c *pcapgen.Capture, h, b int) []Expected {
		m := pcapgen.JavaString(id)
		cn := open(c, h, firstClientPort, b)
		s := modern(cn, cid, id)
		gts(s, id, errNone, zeroID)
		push(s, id, errNone)
		cgh(s, m, 0)
		cgh(s, m, 1)
		s.RoundTrip(pcapgen.Produce(8, "orders", zeroID, []byte(records)), pcapgen.ProduceResponse(8, "orders", zeroID))
		s.RoundTrip(pcapgen.Produce(11, "orders", zeroID, []byte(records)), pcapgen.ProduceResponse(11, "orders", zeroID))
		s.RoundTrip(pcapgen.ShareGroupHeartbeat(1, groupShare, m, 0), pcapgen.ShareGroupHeartbeatResponse(1, errNone, &m, 1))
		cgh(s, m, -1)
		cgh(s, m, 0)
		push(s, id, errNone)
		cn.Close()

		cn2 := open(c, h, firstClientPort+1, b+1)
		s2 := modern(cn2, cid, id)
		s2.RoundTrip(pcapgen.Fetch(13, "orders", idR), pcapgen.FetchResponse(13, "orders", idR, []byte(records)))
		cn2.Close()
		return nil
	}
}

// legacyCompliant is a pre-KIP-1313 client that breaks nothing: no header
// instance ID, its client ID on every request, the legacy telemetry flow
// (body 0, the broker assigns tid, later requests use tid), and a
// client-generated version-4 member ID in Java's spelling from v1, kept
// across leave and rejoin, also in a streams group.
func legacyCompliant(cid string, member, tid [16]byte) client {
	return func(c *pcapgen.Capture, h, b int) []Expected {
		m := pcapgen.JavaString(member)
		cn := open(c, h, firstClientPort, b)
		s := legacy(cn, cid)
		gts(s, zeroID, errNone, tid)
		push(s, tid, errNone)
		cgh(s, m, 0)
		cgh(s, m, 1)
		s.RoundTrip(pcapgen.StreamsGroupHeartbeat(0, groupStreams, m, 0), pcapgen.StreamsGroupHeartbeatResponse(0, errNone, m, 1))
		cgh(s, m, -1)
		cgh(s, m, 0)
		gts(s, tid, errNone, zeroID)
		push(s, tid, errNone)
		cn.Close()
		return nil
	}
}

// modernChanged switches its header instance ID on a Metadata (corr 3).
func modernChanged(cid string, id, other [16]byte) client {
	return oneSession(asModern(cid, id), func(s *pcapgen.Session) {
		withInstance(s, &other, func() { metadata(s) })
		metadata(s)
	}, ex("instance-id-changed", 3))
}

// modernRepeatsClientID sends header instance IDs and its client ID on
// every request: one client-id-repeated at the connection's end.
func modernRepeatsClientID(cid string, id [16]byte) client {
	return oneSession(asModern(cid, id), func(s *pcapgen.Session) {
		s.Header.ClientID = pcapgen.Ptr(cid)
		metadata(s)
		m := pcapgen.JavaString(id)
		cgh(s, m, 0)
		cgh(s, m, -1)
	}, exConn("client-id-repeated", 1))
}

// legacyGhost joins with a (corr 3), gets no answer, and retries with b
// (corr 4).
func legacyGhost(cid string, first, second [16]byte) client {
	return oneSession(asLegacy(cid), func(s *pcapgen.Session) {
		cghNoAnswer(s, pcapgen.JavaString(first), 0)
		cgh(s, pcapgen.JavaString(second), 0)
		cgh(s, pcapgen.JavaString(second), 1)
	}, ex("ghost-member", 4))
}

// modernTelemetryMismatch asks for subscriptions (corr 3) with a body ID
// other than its header ID; the broker rejects it.
func modernTelemetryMismatch(cid string, id, body [16]byte) client {
	return oneSession(asModern(cid, id), func(s *pcapgen.Session) {
		gts(s, body, errInvalidRequest, zeroID)
	}, ex("telemetry-id-mismatch", 3))
}

// kgoPadded is a franz-go client without header instance IDs whose member
// ID is URL-safe base64 with padding (corr 3).
func kgoPadded(cid string, member [16]byte) client {
	kgo := func(cn *pcapgen.Conn) *pcapgen.Session {
		return cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr(cid), CorrelationID: 1})
	}
	return oneSession(kgo, func(s *pcapgen.Session) {
		s.RoundTrip(pcapgen.APIVersions(4, "kgo", "1.22.3"), pcapgen.APIVersionsResponse(4))
		metadata(s)
		m := pcapgen.PaddedURL(member)
		cgh(s, m, 0)
		cgh(s, m, 1)
		cgh(s, m, -1)
	}, exSev("member-id-encoding", "info", 3))
}

// modernMisaligned uses another UUID than its instance ID as member ID.
func modernMisaligned(cid string, id, member [16]byte) client {
	return oneSession(asModern(cid, id), func(s *pcapgen.Session) {
		m := pcapgen.JavaString(member)
		cgh(s, m, 0)
		cgh(s, m, 1)
	}, ex("member-id-misaligned", 3))
}

// legacyOnOldBroker joins at v1 with an empty member ID (corr 3); the old
// broker accepts it and assigns an ID, which the client then uses (corr 4).
func legacyOnOldBroker(cid, assigned string) client {
	return oneSession(asLegacy(cid), func(s *pcapgen.Session) {
		cghAnswered(s, 1, "", 0, errNone, &assigned)
		cgh(s, assigned, 1)
	}, exSev("member-id-empty", "error", 3), ex("broker-accepted-invalid", 3), ex("broker-generated-member-id", 3))
}

// legacyPair is two legacy clients on two hosts whose member IDs collide
// (a PRNG seeded per second); both connections are open when the second
// joins (its corr 3).
func legacyPair(cid string, member [16]byte) client {
	return func(c *pcapgen.Capture, h, b int) []Expected {
		m := pcapgen.JavaString(member)
		c1 := open(c, h, firstClientPort, b)
		c2 := open(c, h+1, firstClientPort, b)
		s1, s2 := legacy(c1, cid), legacy(c2, cid)
		joinTogether(s1, s2, m, m)
		c1.Close()
		c2.Close()
		return []Expected{ex("member-id-collision", 3)}
	}
}

// modernReserved uses ONE_UUID as its instance ID.
func modernReserved(cid string) client {
	return oneSession(asModern(cid, pcapgen.OneUUID()), metadata, ex("instance-id-reserved", 1))
}

// legacyLeaveEmpty joins (corr 3), heartbeats (corr 4) and leaves with an
// empty member ID (corr 5).
func legacyLeaveEmpty(cid string, member [16]byte) client {
	m := pcapgen.JavaString(member)
	return oneSession(asLegacy(cid), func(s *pcapgen.Session) {
		cgh(s, m, 0)
		cgh(s, m, 1)
		cghAnswered(s, 1, "", -1, errUnknownMemberID, nil)
	}, ex("leave-without-member-id", 5))
}

// legacyNotAdopted gets telemetry ID tid (corr 3) and pushes with other
// (corr 4).
func legacyNotAdopted(cid string, tid, other [16]byte) client {
	return oneSession(asLegacy(cid), func(s *pcapgen.Session) {
		gts(s, zeroID, errNone, tid)
		push(s, other, errUnknownSubscription)
	}, ex("telemetry-id-not-adopted", 4))
}

// oneSession is a client of one connection from host h to broker b: start
// opens its session, steps writes its requests, and want is what SPEC.md
// gives it.
func oneSession(start func(*pcapgen.Conn) *pcapgen.Session, steps func(*pcapgen.Session), want ...Expected) client {
	return func(c *pcapgen.Capture, h, b int) []Expected {
		cn := open(c, h, firstClientPort, b)
		steps(start(cn))
		cn.Close()
		return want
	}
}

// asModern starts a modern client's session (header instance ID id).
func asModern(cid string, id [16]byte) func(*pcapgen.Conn) *pcapgen.Session {
	return func(cn *pcapgen.Conn) *pcapgen.Session { return modern(cn, cid, id) }
}

// asLegacy starts a legacy client's session (no header instance ID).
func asLegacy(cid string) func(*pcapgen.Conn) *pcapgen.Session {
	return func(cn *pcapgen.Conn) *pcapgen.Session { return legacy(cn, cid) }
}

// placed is a client at host h talking to broker b.
type placed struct {
	h, b int
	c    client
}

// mixedScenario builds clients one after the other and merges their
// expectations.
func mixedScenario(name, doc string, pcapng bool, clients []placed) Scenario {
	var expect []Expected
	for _, p := range clients {
		// Dry run on a scratch capture to collect the expectation; the
		// build below writes the same packets for real.
		expect = merge(expect, p.c(pcapgen.New(pcapgen.Options{}), p.h, p.b))
	}
	return Scenario{Name: name, Doc: doc, PCAPNG: pcapng, Expect: expect, Build: func(c *pcapgen.Capture) {
		for _, p := range clients {
			p.c(c, p.h, p.b)
		}
	}}
}

// edgeScenarios are compliant captures at the edge of a rule, each
// producing no finding.
func edgeScenarios() []Scenario {
	return []Scenario{
		{Name: "rule-member-id-collision-legacy-closed-ok",
			Doc: "a legacy client reconnects from a new port with the same member ID after its first connection closed: not alive at the same time, no collision",
			Build: func(c *pcapgen.Capture) {
				m := pcapgen.JavaString(idM)
				c1 := open(c, 1, firstClientPort, 1)
				s1 := legacy(c1, "orders-app")
				cgh(s1, m, 0)
				cgh(s1, m, 1)
				c1.Close()
				c2 := open(c, 1, firstClientPort+1, 1)
				s2 := legacy(c2, "orders-app")
				cgh(s2, m, 0)
				cgh(s2, m, 1)
				c2.Close()
			}},
		{Name: "rule-client-id-repeated-zero-instance-ok",
			Doc: "a client sends a zero header instance ID on every request and repeats its client ID: a zero ID is no claim of KIP-1313, so no client-id-repeated and no member-id-misaligned",
			Build: func(c *pcapgen.Capture) {
				cn := open(c, 1, firstClientPort, 1)
				s := modern(cn, "orders-app", zeroID)
				s.Header.ClientID = pcapgen.Ptr("orders-app")
				metadata(s)
				m := pcapgen.JavaString(idM)
				cgh(s, m, 0)
				cgh(s, m, 1)
				cn.Close()
			}},
	}
}

func mixedScenarios() []Scenario {
	return []Scenario{
		mixedScenario("compliant-modern", "two KIP-1313 clients that break no rule", false, []placed{
			{1, 1, javaModern("orders-app", uid(0x70))},
			{2, 2, javaModern("billing-app", uid(0x71))},
		}),
		mixedScenario("compliant-legacy", "two pre-KIP-1313 clients that break no rule (legacy telemetry flow, client-generated member IDs)", false, []placed{
			{1, 1, legacyCompliant("legacy-app", uid(0x72), uid(0x73))},
			{2, 2, legacyCompliant("legacy-reports", uid(0x74), uid(0x75))},
		}),
		mixedScenario("quickstart", "the README quick start: two compliant clients and four classic mistakes", false, []placed{
			{1, 1, javaModern("orders-app", uid(0x70))},
			{2, 2, legacyCompliant("legacy-app", uid(0x72), uid(0x73))},
			{3, 1, modernChanged("payments-app", uid(0x76), uid(0x77))},
			{4, 2, legacyGhost("rd-consumer", uid(0x78), uid(0x79))},
			{5, 1, modernTelemetryMismatch("metrics-app", uid(0x7a), uid(0x7b))},
			{6, 2, kgoPadded("kgo-consumer", uid(0x7c))},
		}),
		mixedScenario("fleet-mixed", "16 client instances on 3 brokers, compliant and faulty", true, []placed{
			{21, 1, javaModern("svc-orders", uid(0x81))},
			{22, 2, javaModern("svc-billing", uid(0x82))},
			{23, 1, legacyCompliant("rd-reports", uid(0x83), uid(0x93))},
			{24, 3, legacyCompliant("rd-audit", uid(0x84), uid(0x94))},
			{25, 2, modernChanged("svc-payments", uid(0x85), uid(0x95))},
			{26, 1, modernRepeatsClientID("svc-chatty", uid(0x86))},
			{27, 3, legacyGhost("rd-ghost", uid(0x87), uid(0x97))},
			{28, 2, modernTelemetryMismatch("svc-metrics", uid(0x88), uid(0x98))},
			{29, 1, kgoPadded("kgo-consumer", uid(0x89))},
			{30, 2, modernMisaligned("svc-search", uid(0x8a), uid(0x9a))},
			{31, 3, legacyOnOldBroker("rd-old", "consumer-rd-old-1-assigned")},
			{32, 1, legacyPair("rd-twins", uid(0x8c))}, // hosts 32 and 33
			{34, 2, modernReserved("svc-reserved")},
			{35, 3, legacyLeaveEmpty("rd-leaver", uid(0x8e))},
			{36, 1, legacyNotAdopted("rd-telemetry", uid(0x8f), uid(0x9f))},
		}),
	}
}
