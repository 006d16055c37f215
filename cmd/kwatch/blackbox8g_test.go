package main

// Black-box scenarios (batch 8g): whole client/broker flows derived step by
// step from the seeds (KIP-1313 seeds 000/001/004, KIP-1082 seed 003, the
// KIP-714 table of seed 004), each conforming flow first (no finding), then
// the non-conforming variants the seeds mention (exactly one rule each).
// Expectations come from SPEC.md, the seeds and README.md's "Rules: where
// SPEC.md is silent" only.

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kwatch/kwatch/internal/pcapgen"
)

const (
	bb8gErrFenced          = 110 // FENCED_MEMBER_EPOCH
	bb8gErrUnknownSub      = 117 // UNKNOWN_SUBSCRIPTION_ID
	bb8gErrUnknownMemberID = 25
)

var (
	bb8gH  = pcapgen.SeqUUID(0x31)
	bb8gH2 = pcapgen.SeqUUID(0x41)
	bb8gB  = pcapgen.SeqUUID(0x51)
	bb8gR  = pcapgen.SeqUUID(0x61)
	// bb8gPlus is a v4 UUID whose standard base64 holds '+' and '/'.
	bb8gPlus = [16]byte{0xfb, 0xef, 0xbe, 0xfb, 0xff, 0xff, 0x4f, 0xbf, 0xbb, 0xef, 0xff, 0xfb, 0xef, 0xbe, 0xfb, 0xef}
)

func bb8gNew() *pcapgen.Capture { return pcapgen.New(pcapgen.Options{Seed: 0x8a}) }

// bb8gSasl is a SaslHandshake v1 (header v1, null client ID) and a
// SaslAuthenticate v2 (header v2) round trip on s.
func bb8gSasl(s *pcapgen.Session) {
	s.RoundTrip(pcapgen.SaslHandshake(1, "PLAIN"), pcapgen.SaslHandshakeResponse(1, "PLAIN"))
	a := kmsg.NewPtrSASLAuthenticateRequest()
	a.Version = 2
	a.SASLAuthBytes = []byte("\x00user\x00secret")
	ar := kmsg.NewPtrSASLAuthenticateResponse()
	s.RoundTrip(a, ar)
}

func bb8gGTS(s *pcapgen.Session, body [16]byte, code int16, answer [16]byte, sub int32) int {
	f, _ := s.RoundTrip(pcapgen.GetTelemetrySubscriptions(body), pcapgen.GetTelemetrySubscriptionsResponse(code, answer, sub))
	return f
}

func bb8gPush(s *pcapgen.Session, body [16]byte, sub int32, code int16) int {
	f, _ := s.RoundTrip(pcapgen.PushTelemetry(body, sub), pcapgen.PushTelemetryResponse(code))
	return f
}

// TestBB8GJavaKIP1313FullLifecycle: the Java client after KIP-1313 end to
// end, including a reconnect to a second broker. seed 000: "If it specifies
// the value in its request headers, every request on a connection must
// specify the same value"; "(only SaslHandshake and OffsetDelete use the v1
// request header for their latest versions)"; seed 001: "sending the client
// ID only on the initial request on each connection, and then sending a null
// client ID for all subsequent requests"; seed 004 row 3: "header = UUID-H
// request = UUID-H | response.ClientInstanceId = 0 NONE | This is what we
// expect from the Apache Kafka Java client after this KIP"; seed 000:
// "when a client-generated member ID is required for the group protocol, it
// uses the client instance ID"; seed 003: "should not be reset or changed,
// even if the consumer leaves and rejoins the group". Nothing to report.
func TestBB8GJavaKIP1313FullLifecycle(t *testing.T) {
	c := bb8gNew()
	m := bb7J(bb8gH)
	_, s := bb7Modern(c, pcapgen.ConnOptions{Client: bb7Host("10.1.0.9", 40001)}, "orders-app", bb8gH)
	bb8gSasl(s)
	bb7Meta(s)
	bb8gGTS(s, bb8gH, bb7ErrNone, bb7Zero, 7)
	bb8gPush(s, bb8gH, 7, bb7ErrNone)
	// subscription changed: re-fetch with the same ID, push again.
	bb8gPush(s, bb8gH, 7, bb8gErrUnknownSub)
	bb8gGTS(s, bb8gH, bb7ErrNone, bb7Zero, 8)
	bb8gPush(s, bb8gH, 8, bb7ErrNone)
	// coordinator on a second broker: new connection, client ID again once.
	_, g := bb7Modern(c, pcapgen.ConnOptions{Client: bb7Host("10.1.0.9", 40002), Broker: bb7Host("10.0.0.2", 9092)}, "orders-app", bb8gH)
	bb8gSasl(g)
	bb7CG.join(g, "orders-group", m)
	bb7CG.beat(g, "orders-group", m, 1)
	// fenced: rejoin with epoch 0 and the same member ID.
	bb7CG.rt(g, "orders-group", m, 1, bb8gErrFenced, pcapgen.Ptr(m), 1)
	bb7CG.join(g, "orders-group", m)
	bb7CG.beat(g, "orders-group", m, 2)
	bb7CG.leave(g, "orders-group", m)
	bb7CG.join(g, "orders-group", m)
	bb7CG.leave(g, "orders-group", m)
	rep := bb7Run(t, c)
	bb7Expect(t, rep, map[string]int{})
}

// TestBB8GTelemetryHeaderClientVariants: seed 004 (KIP-1313 GTS section):
// "If the client sends a zero ClientInstanceId in the request body, it must
// not send a ClientInstanceId in the request header"; "It is not permitted
// to use one client instance ID for request headers and a different client
// instance ID for telemetry"; the table's rows 4 and 5 are INVALID_REQUEST.
// The superseded revision ("the broker will respond with the
// ClientInstanceId from the request header") is a broker that accepts: SPEC
// 3.3 "kwatch follows the table", so that answer is broker-accepted-invalid
// (SPEC wins over the earlier seed revision).
func TestBB8GTelemetryHeaderClientVariants(t *testing.T) {
	cases := []struct {
		name string
		run  func(s *pcapgen.Session)
		want map[string]int
	}{
		{"row4-rejected", func(s *pcapgen.Session) {
			bb8gGTS(s, bb7Zero, bb7ErrInvalidRequest, bb7Zero, 0)
		}, map[string]int{"telemetry-id-requested-with-header": 1}},
		{"row4-old-revision-echo", func(s *pcapgen.Session) {
			bb8gGTS(s, bb7Zero, bb7ErrNone, bb8gH, 3)
		}, map[string]int{"telemetry-id-requested-with-header": 1, "broker-accepted-invalid": 1}},
		{"row5-rejected", func(s *pcapgen.Session) {
			bb8gGTS(s, bb8gR, bb7ErrInvalidRequest, bb7Zero, 0)
		}, map[string]int{"telemetry-id-mismatch": 1}},
		{"row3-then-push-other-id", func(s *pcapgen.Session) {
			bb8gGTS(s, bb8gH, bb7ErrNone, bb7Zero, 3)
			bb8gPush(s, bb8gR, 3, bb7ErrInvalidRequest)
		}, map[string]int{"telemetry-id-mismatch": 1}},
		{"row3-then-push-zero", func(s *pcapgen.Session) {
			bb8gGTS(s, bb8gH, bb7ErrNone, bb7Zero, 3)
			bb8gPush(s, bb7Zero, 3, bb7ErrInvalidRequest)
		}, map[string]int{"telemetry-id-zero-push": 1}},
		{"refetch-after-subscription-change-asks-zero", func(s *pcapgen.Session) {
			bb8gGTS(s, bb8gH, bb7ErrNone, bb7Zero, 3)
			bb8gPush(s, bb8gH, 3, bb8gErrUnknownSub)
			bb8gGTS(s, bb7Zero, bb7ErrInvalidRequest, bb7Zero, 0)
		}, map[string]int{"telemetry-id-requested-with-header": 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := bb8gNew()
			_, s := bb7Modern(c, pcapgen.ConnOptions{}, "orders-app", bb8gH)
			bb7Meta(s)
			tc.run(s)
			rep := bb7Run(t, c)
			bb7Expect(t, rep, tc.want)
		})
	}
}

// TestBB8GTelemetryLegacyResubscribe: a pre-KIP-1313 client. seed 004 row 1:
// "request.ClientInstanceId = 0 | response.ClientInstanceId = UUID-B ... The
// client will henceforth use UUID-B for client telemetry"; row 2:
// "request.ClientInstanceId = UUID-R | response.ClientInstanceId = 0". After
// a subscription change (push answered UNKNOWN_SUBSCRIPTION_ID) the client
// re-fetches with B. Variants: README rule 5, "so is asking again with body
// 0 on the connection that was given B", and a re-fetch with another ID.
func TestBB8GTelemetryLegacyResubscribe(t *testing.T) {
	cases := []struct {
		name  string
		refID [16]byte
		want  map[string]int
	}{
		{"conforming", bb8gB, map[string]int{}},
		{"asks-again-with-zero", bb7Zero, map[string]int{"telemetry-id-not-adopted": 1}},
		{"other-id", bb8gR, map[string]int{"telemetry-id-not-adopted": 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := bb8gNew()
			_, s := bb7Legacy(c, pcapgen.ConnOptions{}, "legacy-app")
			bb7Meta(s)
			bb8gGTS(s, bb7Zero, bb7ErrNone, bb8gB, 4)
			bb8gPush(s, bb8gB, 4, bb7ErrNone)
			bb8gPush(s, bb8gB, 4, bb8gErrUnknownSub)
			ans := bb7Zero
			if tc.refID == bb7Zero {
				ans = bb8gB // a broker answers a row-1 request with an ID
			}
			bb8gGTS(s, tc.refID, bb7ErrNone, ans, 5)
			if tc.refID == bb8gB {
				bb8gPush(s, bb8gB, 5, bb7ErrNone)
			}
			rep := bb7Run(t, c)
			bb7Expect(t, rep, tc.want)
		})
	}
}

// TestBB8GJoinResponseLostRetry: seed 003 test plan, "Ensure the client
// retries with the same UUID member ID if a heartbeat request fails"; the
// join answered with an error (COORDINATOR_NOT_AVAILABLE) is retried with
// the same ID: nothing. Variant: "the client will retry the heartbeat
// request, leading potentially creating a new member each time" with a new
// ID: ghost-member (SPEC 3.4), on all three heartbeat APIs.
func TestBB8GJoinResponseLostRetry(t *testing.T) {
	for _, h := range []bb7HB{bb7CG, bb7SG, bb7ST} {
		for _, ghost := range []bool{false, true} {
			name := h.name + "/same-id"
			if ghost {
				name = h.name + "/new-id"
			}
			t.Run(name, func(t *testing.T) {
				c := bb8gNew()
				_, s := bb7Modern(c, pcapgen.ConnOptions{}, "orders-app", bb8gH)
				m := bb7J(bb8gH)
				h.send(s, "g1", m, 0) // answer lost
				h.rt(s, "g1", m, 0, bb7ErrCoordNotAvailable, nil, 0)
				retry := m
				if ghost {
					retry = bb7J(bb8gH2)
				}
				h.join(s, "g1", retry)
				h.beat(s, "g1", retry, 1)
				rep := bb7Run(t, c)
				want := map[string]int{}
				if ghost {
					// the retried ID is not the header instance ID either.
					want = map[string]int{"ghost-member": 1, "member-id-misaligned": 1}
				}
				bb7Expect(t, rep, want)
			})
		}
	}
}

// TestBB8GCloseBeforeJoinAnswerV0: seed 003 Motivation: "When an
// AsyncKafkaConsumer sends a join group heartbeat but closes before
// receiving the response, it may attempt to send a leave group heartbeat
// without a member ID. This results in ... UNKNOWN_MEMBER_ID". At
// ConsumerGroupHeartbeat v0 (below the required version) the empty join is
// member-id-empty at info (SPEC 3.4) and the leave is
// leave-without-member-id (error), with no broker rule (the leave is not in
// SPEC 3.5's list).
func TestBB8GCloseBeforeJoinAnswerV0(t *testing.T) {
	c := bb8gNew()
	_, s := bb7Legacy(c, pcapgen.ConnOptions{}, "old-consumer")
	h := bb7CG.at(0)
	h.send(s, "g1", "", 0)
	h.rt(s, "g1", "", -1, bb8gErrUnknownMemberID, nil, -1)
	rep := bb7Run(t, c)
	bb7Expect(t, rep, map[string]int{"member-id-empty": 1, "leave-without-member-id": 1})
	bb7Sev(t, rep, "member-id-empty", "info", "")
	bb7Sev(t, rep, "leave-without-member-id", "error", "")
}

// TestBB8GStaticMembershipRestart: static membership (group.instance.id).
// seed 003: "The consumer instance must generate a member ID when it starts
// ... It must remain the same until the process is completely stopped";
// SPEC 3.7 "A static leave (epoch -2) is a leave". A restarted process has a
// new instance ID and a new member ID under the same group.instance.id:
// nothing. Variants: the static leave without a member ID
// (leave-without-member-id), and the same process rejoining after its static
// leave with a new member ID (member-id-changed, plus misaligned).
func TestBB8GStaticMembershipRestart(t *testing.T) {
	static := func(h bb7HB, s *pcapgen.Session, member string, epoch int32, code int16) {
		req := h.req("static-g", member, epoch)
		switch r := req.(type) {
		case *kmsg.ConsumerGroupHeartbeatRequest:
			r.InstanceID = pcapgen.Ptr("pod-0")
		case *kmsg.StreamsGroupHeartbeatRequest:
			r.InstanceID = pcapgen.Ptr("pod-0")
		}
		resp := h.resp(code, pcapgen.Ptr(member), epoch)
		s.RoundTrip(req, resp)
	}
	for _, h := range []bb7HB{bb7CG, bb7ST} {
		t.Run(h.name+"/restart", func(t *testing.T) {
			c := bb8gNew()
			cn, s := bb7Modern(c, pcapgen.ConnOptions{Client: bb7Host("10.1.0.5", 40001)}, "orders-app", bb8gH)
			static(h, s, bb7J(bb8gH), 0, bb7ErrNone)
			static(h, s, bb7J(bb8gH), 1, bb7ErrNone)
			static(h, s, bb7J(bb8gH), -2, bb7ErrNone)
			cn.Close()
			_, s2 := bb7Modern(c, pcapgen.ConnOptions{Client: bb7Host("10.1.0.5", 40002)}, "orders-app", bb8gH2)
			static(h, s2, bb7J(bb8gH2), 0, bb7ErrNone)
			static(h, s2, bb7J(bb8gH2), 1, bb7ErrNone)
			bb7Expect(t, bb7Run(t, c), map[string]int{})
		})
		t.Run(h.name+"/static-leave-empty", func(t *testing.T) {
			c := bb8gNew()
			_, s := bb7Modern(c, pcapgen.ConnOptions{}, "orders-app", bb8gH)
			static(h, s, bb7J(bb8gH), 0, bb7ErrNone)
			static(h, s, "", -2, bb8gErrUnknownMemberID)
			bb7Expect(t, bb7Run(t, c), map[string]int{"leave-without-member-id": 1})
		})
		t.Run(h.name+"/same-process-new-id", func(t *testing.T) {
			c := bb8gNew()
			_, s := bb7Modern(c, pcapgen.ConnOptions{}, "orders-app", bb8gH)
			static(h, s, bb7J(bb8gH), 0, bb7ErrNone)
			static(h, s, bb7J(bb8gH), -2, bb7ErrNone)
			static(h, s, bb7J(bb8gR), 0, bb7ErrNone)
			bb7Expect(t, bb7Run(t, c), map[string]int{"member-id-changed": 1, "member-id-misaligned": 1})
		})
	}
}

// TestBB8GFencedRejoinNewIDStreamsShare: seed 003 "should not be reset or
// changed, even if the consumer leaves and rejoins the group"; SPEC 3.4
// member-id-changed "across leave and rejoin and after fencing". Streams and
// share groups (the consumer case is pinned elsewhere); one finding plus
// misaligned (the new ID is not the header ID).
func TestBB8GFencedRejoinNewIDStreamsShare(t *testing.T) {
	for _, h := range []bb7HB{bb7SG, bb7ST} {
		t.Run(h.name, func(t *testing.T) {
			c := bb8gNew()
			_, s := bb7Modern(c, pcapgen.ConnOptions{}, "orders-app", bb8gH)
			m := bb7J(bb8gH)
			h.join(s, "g1", m)
			h.rt(s, "g1", m, 1, bb8gErrFenced, pcapgen.Ptr(m), 1)
			h.join(s, "g1", bb7J(bb8gR))
			rep := bb7Run(t, c)
			bb7Expect(t, rep, map[string]int{"member-id-changed": 1, "member-id-misaligned": 1})
			bb7Sev(t, rep, "member-id-changed", "warn", "full")
		})
	}
}

// TestBB8GShareStdBase64Aligned: seed 000 "at least one other Kafka client
// implementation uses a slightly different string encoding of the member ID
// ... This is valid"; SPEC 3.4 member-id-encoding "warn if it holds '+' or
// '/'" (share fetches broke before KAFKA-19846) and 3.7 "a member ID that
// spells the instance ID's bytes in another encoding is
// member-id-alignment-encoding (plus member-id-encoding), never
// member-id-misaligned". Once per (connection, group, member ID) over a
// whole share lifecycle.
func TestBB8GShareStdBase64Aligned(t *testing.T) {
	c := bb8gNew()
	_, s := bb7Modern(c, pcapgen.ConnOptions{}, "share-app", bb8gPlus)
	m := pcapgen.StdBase64(bb8gPlus)
	h := bb7SG
	h.join(s, "sg", m)
	h.beat(s, "sg", m, 1)
	h.beat(s, "sg", m, 2)
	h.leave(s, "sg", m)
	h.join(s, "sg", m)
	rep := bb7Run(t, c)
	bb7Expect(t, rep, map[string]int{"member-id-encoding": 1, "member-id-alignment-encoding": 1})
	bb7Sev(t, rep, "member-id-encoding", "warn", "")
	bb7Sev(t, rep, "member-id-alignment-encoding", "info", "")
}

// TestBB8GReconnectVariants: seed 000 "The initial client instance ID for
// each connection will be cached by the broker": state is per connection.
// A reconnect whose first request carries no instance ID and that then sends
// one is instance-id-late on the new connection only; a reconnect that sends
// its client ID only on a later request is client-id-missing-first (seed
// 001 "sending the client ID only on the initial request on each
// connection").
func TestBB8GReconnectVariants(t *testing.T) {
	t.Run("late-on-second-connection", func(t *testing.T) {
		c := bb8gNew()
		cn, s := bb7Modern(c, pcapgen.ConnOptions{Client: bb7Host("10.1.0.9", 40001)}, "orders-app", bb8gH)
		bb7Meta(s)
		cn.Close()
		cn2 := c.Conn(pcapgen.ConnOptions{Client: bb7Host("10.1.0.9", 40002)})
		s2 := cn2.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("orders-app"), CorrelationID: 1})
		s2.RoundTrip(pcapgen.APIVersions(4, "apache-kafka-java", "4.2.0"), pcapgen.APIVersionsResponse(4))
		s2.Header.ClientID = nil
		s2.Header.InstanceID = &bb8gH
		bb7Meta(s2)
		bb7Expect(t, bb7Run(t, c), map[string]int{"instance-id-late": 1})
	})
	t.Run("client-id-on-second-request", func(t *testing.T) {
		c := bb8gNew()
		cn, s := bb7Modern(c, pcapgen.ConnOptions{Client: bb7Host("10.1.0.9", 40001)}, "orders-app", bb8gH)
		bb7Meta(s)
		cn.Close()
		cn2 := c.Conn(pcapgen.ConnOptions{Client: bb7Host("10.1.0.9", 40002)})
		s2 := cn2.Session(pcapgen.RequestHeader{InstanceID: &bb8gH, CorrelationID: 1})
		s2.RoundTrip(pcapgen.APIVersions(4, "apache-kafka-java", "4.2.0"), pcapgen.APIVersionsResponse(4))
		s2.Header.ClientID = pcapgen.Ptr("orders-app")
		bb7Meta(s2)
		bb7Expect(t, bb7Run(t, c), map[string]int{"client-id-missing-first": 1})
	})
}

// TestBB8GSaslFlowDroppedOnAuthenticate: seed 000 "any subsequent requests
// which are missing the client instance ID (with the exception of requests
// using the v1 request header) ... will be rejected with error code
// INVALID_REQUEST". SaslHandshake v1 (v1 header) without an ID is exempt;
// SaslAuthenticate v2 (v2 header) without it is instance-id-dropped only:
// SaslAuthenticate is not among SPEC section 1's decoded bodies, so README
// rule 9 judges no broker-accepted-invalid on its answer.
func TestBB8GSaslFlowDroppedOnAuthenticate(t *testing.T) {
	c := bb8gNew()
	_, s := bb7Modern(c, pcapgen.ConnOptions{}, "orders-app", bb8gH)
	s.Header.InstanceID = nil
	bb8gSasl(s)
	s.Header.InstanceID = &bb8gH
	bb7Meta(s)
	bb7Expect(t, bb7Run(t, c), map[string]int{"instance-id-dropped": 1})
}

// TestBB8GAccepted2026Flow: SPEC section 4, "the revision accepted in Aug
// 2026 puts the instance ID in a new request header v3, requires it on the
// first request of a connection and omits it afterwards, as with the client
// ID"; under the profile "instance-id-dropped and instance-id-late are off".
// A conforming client: ApiVersions and Metadata on v2 headers without ID,
// OffsetDelete v1 (v3) with the ID first, then without: nothing (README
// rule 10: "Only v3 requests feed the instance-ID state"). Variant: the ID
// repeated on a later v3 request is instance-id-repeated (info).
func TestBB8GAccepted2026Flow(t *testing.T) {
	c := bb8gNew()
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bb5Sess(cn, pcapgen.Ptr("admin-app"))
	s.RoundTrip(pcapgen.APIVersions(4, "apache-kafka-java", "4.3.0"), pcapgen.APIVersionsResponse(4))
	s.Header.ClientID = nil
	bb7Meta(s)
	corr, _ := bb5OD(s, &bb8gH, nil)
	bb5ODResp(s, corr, bb7ErrNone)
	corr, _ = bb5OD(s, nil, nil)
	bb5ODResp(s, corr, bb7ErrNone)
	bb7Meta(s)
	corr, _ = bb5OD(s, nil, nil)
	bb5ODResp(s, corr, bb7ErrNone)
	rep := bb7Run(t, c, "--profile", "accepted-2026")
	bb7Expect(t, rep, map[string]int{})

	// variant: the ID repeated on a later v3 request (info).
	c2 := bb8gNew()
	cn2 := c2.Conn(pcapgen.ConnOptions{})
	s2 := bb5Sess(cn2, pcapgen.Ptr("admin-app"))
	s2.RoundTrip(pcapgen.APIVersions(4, "apache-kafka-java", "4.3.0"), pcapgen.APIVersionsResponse(4))
	s2.Header.ClientID = nil
	corr, _ = bb5OD(s2, &bb8gH, nil)
	bb5ODResp(s2, corr, bb7ErrNone)
	corr, _ = bb5OD(s2, &bb8gH, nil)
	bb5ODResp(s2, corr, bb7ErrNone)
	rep2 := bb7Run(t, c2, "--profile", "accepted-2026")
	bb7Expect(t, rep2, map[string]int{"instance-id-repeated": 1})
	bb7Sev(t, rep2, "instance-id-repeated", "info", "")
}

// TestBB8GTelemetryLegacyReconnect: seed 004 row 1 "The client will
// henceforth use UUID-B for client telemetry" and row 2 (non-initial, body
// UUID-R, answer 0 NONE). A legacy client reconnects (same host, no header
// ID) and re-fetches with B: nothing. Asking with body 0 on the new
// connection is README rule 5's "on another connection of a client without
// instance ID it may be a restarted process": nothing either.
func TestBB8GTelemetryLegacyReconnect(t *testing.T) {
	for _, again := range []bool{false, true} {
		name := "refetch-with-B"
		if again {
			name = "ask-zero-on-new-connection"
		}
		t.Run(name, func(t *testing.T) {
			c := bb8gNew()
			cn, s := bb7Legacy(c, pcapgen.ConnOptions{Client: bb7Host("10.1.0.7", 40001)}, "legacy-app")
			bb8gGTS(s, bb7Zero, bb7ErrNone, bb8gB, 4)
			bb8gPush(s, bb8gB, 4, bb7ErrNone)
			cn.Close()
			_, s2 := bb7Legacy(c, pcapgen.ConnOptions{Client: bb7Host("10.1.0.7", 40002)}, "legacy-app")
			if again {
				bb8gGTS(s2, bb7Zero, bb7ErrNone, bb8gR, 5)
				bb8gPush(s2, bb8gR, 5, bb7ErrNone)
			} else {
				bb8gGTS(s2, bb8gB, bb7ErrNone, bb7Zero, 5)
				bb8gPush(s2, bb8gB, 5, bb7ErrNone)
			}
			bb7Expect(t, bb7Run(t, c), map[string]int{})
		})
	}
}

// TestBB8GPreKIPBrokerEchoesAlignedID: seed 004 "Pre-KIP-1313 - broker does
// not expect ClientInstanceId in request header and ignores it"; row 3
// expects "response.ClientInstanceId = 0". A broker that answers the
// Java client's aligned request (H, H) with a non-zero ID is
// broker-telemetry-id-echo (info, SPEC 3.5); the client itself conforms.
func TestBB8GPreKIPBrokerEchoesAlignedID(t *testing.T) {
	c := bb8gNew()
	_, s := bb7Modern(c, pcapgen.ConnOptions{}, "orders-app", bb8gH)
	bb8gGTS(s, bb8gH, bb7ErrNone, bb8gH, 3)
	bb8gPush(s, bb8gH, 3, bb7ErrNone)
	rep := bb7Run(t, c)
	bb7Expect(t, rep, map[string]int{"broker-telemetry-id-echo": 1})
	bb7Sev(t, rep, "broker-telemetry-id-echo", "info", "")
}

// TestBB8GHeartbeatEmptyMidSession: README rule 6, "An empty member ID on a
// heartbeat that is neither a join nor a leave gives no finding"; SPEC 3.7
// "an empty member ID gives only member-id-empty or
// leave-without-member-id". A KIP-1313 consumer's session with one such
// heartbeat (answered UNKNOWN_MEMBER_ID) then a proper leave: nothing.
func TestBB8GHeartbeatEmptyMidSession(t *testing.T) {
	c := bb8gNew()
	_, s := bb7Modern(c, pcapgen.ConnOptions{}, "orders-app", bb8gH)
	m := bb7J(bb8gH)
	bb7CG.join(s, "g1", m)
	bb7CG.rt(s, "g1", "", 1, bb8gErrUnknownMemberID, nil, 1)
	bb7CG.leave(s, "g1", m)
	bb7Expect(t, bb7Run(t, c), map[string]int{})
}
