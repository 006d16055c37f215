package main

// SPEC.md section 3.5: broker conformance as seen from the responses:
// broker-accepted-invalid (scope, kip, frame), broker-generated-member-id and
// the telemetry echo rows.
// Expectations come from SPEC.md and README.md's "Rules: where SPEC.md is
// silent" only, never from kwatch's implementation.

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/kwatch/kwatch/internal/pcapgen"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ---------------------------------------------------------------- 3.5 / 3.1

// SPEC 3.5 broker-accepted-invalid: "(the error rules of 3.1 ...) was
// answered without INVALID_REQUEST, where the response has a top-level
// error code (APIs of section 1)". ApiVersions has one; Metadata does not.
func TestBrokerAcceptedInvalidHeader(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	// changed on ApiVersions answered NONE: changed + accepted-invalid.
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bbSession(cn, pcapgen.Ptr("orders-app"), bbID(bbX))
	bbMeta(s)
	s.Header.ClientID = nil
	s.Header.InstanceID = bbID(bbY)
	corrA := s.Header.CorrelationID
	bbAPIV(s, 0)
	// changed on ApiVersions answered 42: changed only.
	bbAPIV(s, 42)
	// dropped on Metadata (no top-level error code): dropped only.
	s.Header.InstanceID = nil
	bbMeta(s)
	cn.Close()
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"instance-id-changed": 2, "instance-id-dropped": 1, "broker-accepted-invalid": 1})
	f := bbFirst(t, rep, "broker-accepted-invalid")
	bbField(t, f, "api_key", 18)
	bbField(t, f, "correlation_id", corrA)
}

// SPEC 3.5 broker-accepted-invalid for instance-id-late and
// instance-id-malformed (error rules of 3.1) on APIs with a top-level
// error code answered NONE.
func TestBrokerAcceptedInvalidLateMalformed(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bbSession(cn, pcapgen.Ptr("orders-app"), nil)
	bbMeta(s)
	s.Header.ClientID = nil
	s.Header.InstanceID = bbID(bbX)
	bbGTS(s, bbX, 0, bbZero) // late; telemetry row 3 aligned
	cn.Close()
	cn2 := c.Conn(pcapgen.ConnOptions{})
	s2 := bbSession(cn2, pcapgen.Ptr("orders-app"), nil)
	s2.Header.RawTags = []byte{1, 0, 2, 0xab, 0xcd}
	bbAPIV(s2, 0) // malformed
	cn2.Close()
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"instance-id-late": 1, "instance-id-malformed": 1, "broker-accepted-invalid": 2})
}

// ---------------------------------------------------------------- harder cases

// SPEC section 1: "Responses are matched to requests by correlation id per
// connection (a broker answers in order, but never rely on it alone)". Two
// pipelined ApiVersions, both instance-id-changed; the broker answers the
// second (NONE) before the first (42): only the second was accepted.
func TestBrokerAcceptedInvalidByCorrelation(t *testing.T) {
	var corrs []int32
	rep := bbOneConn(t, pcapgen.Ptr("orders-app"), bbID(bbX), func(s *pcapgen.Session) {
		bbMeta(s)
		s.Header.ClientID = nil
		s.Header.InstanceID = bbID(bbY)
		corrs, _ = s.Pipeline(pcapgen.APIVersions(3, "apache-kafka-java", "4.2.0"), pcapgen.APIVersions(3, "apache-kafka-java", "4.2.0"))
		ok := pcapgen.APIVersionsResponse(3)
		bad := pcapgen.APIVersionsResponse(3)
		bad.ErrorCode = 42
		s.Respond(corrs[1], ok)
		s.Respond(corrs[0], bad)
	})
	bbExpect(t, rep, map[string]int{"instance-id-changed": 2, "broker-accepted-invalid": 1})
	bbField(t, bbFirst(t, rep, "broker-accepted-invalid"), "correlation_id", int(corrs[1]))
}

// SPEC 3.5: "was answered without INVALID_REQUEST": a violating request
// that got no response at all was not answered: no broker rule.
func TestBrokerUnansweredNoBrokerRule(t *testing.T) {
	rep := bbOneConn(t, pcapgen.Ptr("orders-app"), bbID(bbX), func(s *pcapgen.Session) {
		bbMeta(s)
		s.Header.ClientID = nil
		s.Header.InstanceID = bbID(bbY)
		s.Request(pcapgen.APIVersions(3, "apache-kafka-java", "4.2.0"))
		s.Request(pcapgen.GetTelemetrySubscriptions(bbZ))
	})
	bbExpect(t, rep, map[string]int{"instance-id-changed": 2, "telemetry-id-mismatch": 1})
}

// SPEC 3.7: request rules "fire once per offending request", and 3.5 is one
// of them: a GetTelemetrySubscriptions that is both instance-id-changed and
// telemetry-id-mismatch, answered NONE, is one broker-accepted-invalid.
func TestBrokerAcceptedInvalidOncePerRequest(t *testing.T) {
	rep := bbOneConn(t, pcapgen.Ptr("orders-app"), bbID(bbX), func(s *pcapgen.Session) {
		bbMeta(s)
		s.Header.ClientID = nil
		s.Header.InstanceID = bbID(bbY)
		bbGTS(s, bbZ, 0, bbZero) // H=Y changed; R=Z != H mismatch
	})
	bbExpect(t, rep, map[string]int{"instance-id-changed": 1, "telemetry-id-mismatch": 1, "broker-accepted-invalid": 1})
}

// SPEC 3.5 broker-telemetry-id-echo "GetTelemetrySubscriptions with
// non-zero body ID answered with a non-zero ID" holds on row 5 too: a row-5
// request answered NONE with Y is mismatch + broker-accepted-invalid +
// broker-telemetry-id-echo.
func TestBrokerRow5AcceptedWithEcho(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	bbPlay(c, pcapgen.ConnOptions{}, []bbStep{{cid: pcapgen.Ptr("orders-app"), id: bbID(bbX), kind: "g", r: bbY, b: bbY}})
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"telemetry-id-mismatch": 1, "broker-accepted-invalid": 1, "broker-telemetry-id-echo": 1})
}

// ------------------------------------------------------------ member-id-empty

// 3.4 member-id-empty "error (info below the required version)", threshold
// "CONSUMER_GENERATED_MEMBER_ID_REQUIRED_VERSION = 1" by default; 3.5
// broker-generated-member-id "a join with an empty member ID at or above the
// required version was answered with a broker-assigned member ID" and
// broker-accepted-invalid "member-id-empty at or above the required version
// ... answered without INVALID_REQUEST". 3.7: "A member ID that a broker
// assigned ... moving from an empty member ID to it is no member-id-changed,
// and the member-ID property rules (-not-uuid, -encoding, -not-v4,
// -misaligned) do not judge it."
func TestBrokerEmptyJoinV1Assigns(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	inst := pcapgen.SeqUUID(0x32)
	cn, s := bbModern(c, pcapgen.ConnOptions{}, inst)
	assigned := "broker-assigned-member-1" // not a UUID, not aligned
	jf, _ := s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(1, bbGroup, "", 0), pcapgen.ConsumerGroupHeartbeatResponse(1, errNone, pcapgen.Ptr(assigned), 1))
	cgBeat(s, 1, bbGroup, assigned, 1)
	cgBeat(s, 1, bbGroup, assigned, 1)
	cgLeave(s, 1, bbGroup, assigned, -1)
	cn.Close()
	rep := bbRun2(t, c)
	bbExpect(t, rep, map[string]int{"member-id-empty": 1, "broker-generated-member-id": 1, "broker-accepted-invalid": 1})
	bbCheck(t, rep, "member-id-empty", "error", "full", jf)
	bbCheck(t, rep, "broker-generated-member-id", "warn", "", 0)
	bbCheck(t, rep, "broker-accepted-invalid", "warn", "", 0)
	for _, f := range bbOf(rep, "member-id-empty") {
		if f.APIKey != 68 || f.APIVersion != 1 || f.API != "ConsumerGroupHeartbeat" || f.KIP != "KIP-1082" {
			t.Errorf("member-id-empty api %s/%d v%d kip %s", f.API, f.APIKey, f.APIVersion, f.KIP)
		}
	}
}

// 3.7 "the member-ID property rules (-not-uuid, -encoding, -not-v4,
// -misaligned) do not judge" a broker-assigned member ID; below the required
// version (v0) the assignment is legitimate. A KIP-1313 client at v0 gets a
// padded, non-v4, misaligned ID from the broker: only member-id-empty (info).
func TestBrokerAssignedNotJudged(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	inst := pcapgen.SeqUUID(0x3f)
	assigned := pcapgen.PaddedURL(withVersion(pcapgen.SeqUUID(0x5c), 1))
	cn, s := bbModern(c, pcapgen.ConnOptions{}, inst)
	s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(0, bbGroup, "", 0), pcapgen.ConsumerGroupHeartbeatResponse(0, errNone, pcapgen.Ptr(assigned), 1))
	cgBeat(s, 0, bbGroup, assigned, 1)
	cgLeave(s, 0, bbGroup, assigned, -1)
	cn.Close()
	rep := bbRun2(t, c)
	bbExpect(t, rep, map[string]int{"member-id-empty": 1})
	bbCheck(t, rep, "member-id-empty", "info", "", 0)
}

// 3.5 for streams: an empty StreamsGroupHeartbeat v0 join (required from v0)
// answered NONE with an assigned member ID: member-id-empty error plus both
// broker rules.
func TestBrokerStreamsAssigned(t *testing.T) {
	assigned := pcapgen.JavaString(pcapgen.SeqUUID(0x70))
	rep := bbLegacyConn(t, func(s *pcapgen.Session) {
		s.RoundTrip(pcapgen.StreamsGroupHeartbeat(0, "streams-g", "", 0), pcapgen.StreamsGroupHeartbeatResponse(0, errNone, assigned, 1))
		s.RoundTrip(pcapgen.StreamsGroupHeartbeat(0, "streams-g", assigned, 1), pcapgen.StreamsGroupHeartbeatResponse(0, errNone, assigned, 1))
	})
	bbExpect(t, rep, map[string]int{"member-id-empty": 1, "broker-generated-member-id": 1, "broker-accepted-invalid": 1})
	bbCheck(t, rep, "member-id-empty", "error", "", 0)
}

// ------------------------------------------------ 3.5 findings name the request

// README "where SPEC.md is silent" 9: "The 3.5 findings are seen in the
// answer but are about the request (3.7 counts them per request): their
// frame and time are the request's packet (SPEC.md section 5, "the packet
// that completed the request"), and the message names the answer's frame";
// broker-accepted-invalid's "kip is that of the rule it answers". Each
// answer comes two seconds after its request, so that frame and time of the
// request and of the answer differ.
func TestBrokerFindingsNameTheRequest(t *testing.T) {
	type answered struct{ reqFrame, respFrame int }
	slow := func(c *pcapgen.Capture, s *pcapgen.Session, req kmsg.Request, resp kmsg.Response) answered {
		corr, rf := s.Request(req)
		c.Sleep(2 * time.Second)
		resp.SetVersion(req.GetVersion())
		return answered{rf, s.Respond(corr, resp)}
	}
	assigned := "broker-assigned-member-7"
	cases := []struct {
		name    string
		build   func(c *pcapgen.Capture) answered
		apiKey  int
		broker  []string // the 3.5 rules the answer gives
		answers string   // the client rule broker-accepted-invalid answers
	}{
		{"instance-id-changed-on-apiversions", func(c *pcapgen.Capture) answered {
			cn, s := bb7Modern(c, pcapgen.ConnOptions{}, "orders-app", bb7X)
			s.Header.InstanceID = &bb7Y
			a := slow(c, s, pcapgen.APIVersions(3, "apache-kafka-java", "4.2.0"), pcapgen.APIVersionsResponse(3))
			cn.Close()
			return a
		}, 18, []string{"broker-accepted-invalid"}, "instance-id-changed"},
		{"member-id-empty-assigned", func(c *pcapgen.Capture) answered {
			cn, s := bb7Legacy(c, pcapgen.ConnOptions{}, "legacy-app")
			a := slow(c, s, pcapgen.ConsumerGroupHeartbeat(1, "g", "", 0), pcapgen.ConsumerGroupHeartbeatResponse(1, errNone, &assigned, 1))
			cn.Close()
			return a
		}, 68, []string{"broker-accepted-invalid", "broker-generated-member-id"}, "member-id-empty"},
		{"telemetry-id-zero-push", func(c *pcapgen.Capture) answered {
			cn, s := bb7Modern(c, pcapgen.ConnOptions{}, "orders-app", bb7X)
			a := slow(c, s, pcapgen.PushTelemetry(bb7Zero, 7), pcapgen.PushTelemetryResponse(errNone))
			cn.Close()
			return a
		}, 72, []string{"broker-accepted-invalid"}, "telemetry-id-zero-push"},
		{"broker-telemetry-id-echo", func(c *pcapgen.Capture) answered {
			cn, s := bb7Modern(c, pcapgen.ConnOptions{}, "orders-app", bb7X)
			a := slow(c, s, pcapgen.GetTelemetrySubscriptions(bb7X), pcapgen.GetTelemetrySubscriptionsResponse(errNone, bb7X, 7))
			cn.Close()
			return a
		}, 71, []string{"broker-telemetry-id-echo"}, ""},
		{"broker-telemetry-id-missing", func(c *pcapgen.Capture) answered {
			cn, s := bb7Legacy(c, pcapgen.ConnOptions{}, "legacy-app")
			a := slow(c, s, pcapgen.GetTelemetrySubscriptions(bb7Zero), pcapgen.GetTelemetrySubscriptionsResponse(errNone, bb7Zero, 7))
			cn.Close()
			return a
		}, 71, []string{"broker-telemetry-id-missing"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			a := tc.build(c)
			rep := bbRunF(t, c)
			want := map[string]int{}
			for _, r := range tc.broker {
				want[r] = 1
			}
			if tc.answers != "" {
				want[tc.answers] = 1
			}
			bbExpect(t, rep, want)
			respWord := regexp.MustCompile(`\b` + strconv.Itoa(a.respFrame) + `\b`)
			for _, r := range tc.broker {
				for _, f := range bbOf(rep, r) {
					if f.Frame != a.reqFrame {
						t.Errorf("%s: frame %d, README 9 requires the request's frame %d (the answer is frame %d)", r, f.Frame, a.reqFrame, a.respFrame)
					}
					if want := bb7Time(c, a.reqFrame); f.Time != want {
						t.Errorf("%s: time %s, README 9 requires the request's time %s", r, f.Time, want)
					}
					if f.APIKey != tc.apiKey {
						t.Errorf("%s: api_key %d, want %d", r, f.APIKey, tc.apiKey)
					}
					// README 9: "The 3.5 findings are seen in the answer but
					// are about the request ...: their frame and time are the
					// request's packet ..., and the message names the
					// answer's frame".
					if !respWord.MatchString(f.Message) {
						t.Errorf("%s: message %q does not name the answer's frame %d (README 9)", r, f.Message, a.respFrame)
					}
					if r == "broker-accepted-invalid" && tc.answers != "" {
						for _, g := range bbOf(rep, tc.answers) {
							if g.KIP != f.KIP {
								t.Errorf("broker-accepted-invalid kip %q, README 9 requires the kip of %s (%q)", f.KIP, tc.answers, g.KIP)
							}
							if g.CorrelationID != f.CorrelationID {
								t.Errorf("broker-accepted-invalid correlation_id %d, the request it answers has %d", f.CorrelationID, g.CorrelationID)
							}
						}
					}
				}
			}
		})
	}
}

// ------------------------------------------------------- 3.5 scope

// SPEC 3.5 broker-accepted-invalid: "a request that a conforming broker
// rejects (the error rules of 3.1, 3.3, member-id-empty at or above the
// required version) was answered without INVALID_REQUEST, where the response
// has a top-level error code (APIs of section 1)". Near misses: warn rules
// of 3.1 (reserved, shared) and leave-without-member-id (an error rule of
// 3.4 not in the list) answered NONE on APIs with a top-level error code
// give no 3.5 finding; on the other side, an error rule of 3.1 on a share
// heartbeat, and a 3.3 rule answered with an error other than
// INVALID_REQUEST, do.
func TestBrokerAcceptedInvalidScope(t *testing.T) {
	one := pcapgen.OneUUID()
	cases := []struct {
		name  string
		build func(c *pcapgen.Capture)
		want  map[string]int
	}{
		{"instance-id-reserved-apiversions-none", func(c *pcapgen.Capture) {
			cn, s := bb7Modern(c, pcapgen.ConnOptions{}, "orders-app", one)
			s.RoundTrip(pcapgen.APIVersions(3, "apache-kafka-java", "4.2.0"), pcapgen.APIVersionsResponse(3))
			cn.Close()
		}, map[string]int{"instance-id-reserved": 1}},
		{"instance-id-shared-apiversions-none", func(c *pcapgen.Capture) {
			for _, h := range []string{"10.7.1.1", "10.7.1.2"} {
				cn, _ := bb7Modern(c, pcapgen.ConnOptions{Client: bb7Host(h, 41000)}, "orders-app", bb7X)
				cn.Close()
			}
		}, map[string]int{"instance-id-shared": 1}},
		{"leave-without-member-id-none", func(c *pcapgen.Capture) {
			cn, s := bb7Legacy(c, pcapgen.ConnOptions{}, "legacy-app")
			bb7CG.rt(s, "g", "", -1, errNone, nil, -1)
			bb7SG.rt(s, "sg", "", -1, errNone, nil, -1)
			cn.Close()
		}, map[string]int{"leave-without-member-id": 2}},
		{"instance-id-dropped-share-none", func(c *pcapgen.Capture) {
			cn, s := bb7Modern(c, pcapgen.ConnOptions{}, "orders-app", bb7X)
			s.Header.InstanceID = nil
			bb7SG.join(s, "sg", bbJ(bb7X))
			cn.Close()
		}, map[string]int{"instance-id-dropped": 1, "broker-accepted-invalid": 1}},
		{"telemetry-id-mismatch-unknown-subscription", func(c *pcapgen.Capture) {
			cn, s := bb7Modern(c, pcapgen.ConnOptions{}, "orders-app", bb7X)
			s.RoundTrip(pcapgen.GetTelemetrySubscriptions(bb7X), pcapgen.GetTelemetrySubscriptionsResponse(errNone, bb7Zero, 7))
			s.RoundTrip(pcapgen.PushTelemetry(bb7Y, 7), pcapgen.PushTelemetryResponse(errUnknownSubscription))
			cn.Close()
		}, map[string]int{"telemetry-id-mismatch": 1, "broker-accepted-invalid": 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			tc.build(c)
			bbExpect(t, bbRunF(t, c), tc.want)
		})
	}
}

// instance-id-changed on a ConsumerGroupHeartbeat answered NONE.
func TestBrokerChangedOnHeartbeatAccepted(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn, s := bb8iModern(c)
	s.Header.InstanceID = bbID(bb8iY)
	reqF, respF := s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(1, "g", pcapgen.JavaString(bb8iX), 0),
		pcapgen.ConsumerGroupHeartbeatResponse(1, 0, pcapgen.Ptr(pcapgen.JavaString(bb8iX)), 1))
	cn.Close()
	rep := bbRunF(t, c)
	bb8iExpectNoMisaligned(t, rep, map[string]int{"instance-id-changed": 1, "broker-accepted-invalid": 1})
	f := bbOne(t, rep, "broker-accepted-invalid")
	if f.Frame != reqF || f.KIP != "KIP-1313" || f.API != "ConsumerGroupHeartbeat" {
		t.Errorf("frame %d kip %s api %s; want frame %d (request; answer %d) KIP-1313 ConsumerGroupHeartbeat", f.Frame, f.KIP, f.API, reqF, respF)
	}
}

// Telemetry rows 4 and 5 answered NONE (with a zero ID): broker-accepted-invalid,
// kip of the rule answered (KIP-714).
func TestBrokerTelemetryRows45Accepted(t *testing.T) {
	for _, row := range []struct {
		name string
		body [16]byte
		rule string
	}{{"row4", bb8iZero, "telemetry-id-requested-with-header"}, {"row5", bb8iR, "telemetry-id-mismatch"}} {
		t.Run(row.name, func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			cn, s := bb8iModern(c)
			reqF, _ := s.RoundTrip(pcapgen.GetTelemetrySubscriptions(row.body), pcapgen.GetTelemetrySubscriptionsResponse(0, bb8iZero, 7))
			cn.Close()
			rep := bbRunF(t, c)
			bbExpect(t, rep, map[string]int{row.rule: 1, "broker-accepted-invalid": 1})
			f := bbOne(t, rep, "broker-accepted-invalid")
			rf := bbOne(t, rep, row.rule)
			if f.Frame != reqF || f.KIP != rf.KIP {
				t.Errorf("frame %d kip %s; want frame %d kip %s", f.Frame, f.KIP, reqF, rf.KIP)
			}
		})
	}
}

// member-id-empty on a v1 join answered with a broker-assigned ID: both 3.5
// rules; at v0 (below the required version) neither.
func TestBrokerMemberIDEmptyAnswered(t *testing.T) {
	for _, v := range []int16{0, 1} {
		t.Run("v"+strconv.Itoa(int(v)), func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			cn, s := bb8iLegacy(c)
			s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(v, "g", "", 0),
				pcapgen.ConsumerGroupHeartbeatResponse(v, 0, pcapgen.Ptr(pcapgen.JavaString(bb8iB)), 1))
			cn.Close()
			rep := bbRunF(t, c)
			want := map[string]int{"member-id-empty": 1}
			if v >= 1 {
				want["broker-accepted-invalid"] = 1
				want["broker-generated-member-id"] = 1
			}
			bbExpect(t, rep, want)
		})
	}
}

// broker-telemetry-id-echo / -missing for each GetTelemetrySubscriptions row.
func TestBrokerTelemetryEchoMissingRows(t *testing.T) {
	cases := []struct {
		name   string
		modern bool
		body   [16]byte
		code   int16
		answer [16]byte
		want   map[string]int
	}{
		{"row1-assigned", false, bb8iZero, 0, bb8iB, nil},
		{"row1-zero", false, bb8iZero, 0, bb8iZero, map[string]int{"broker-telemetry-id-missing": 1}},
		{"row1-zero-error", false, bb8iZero, 42, bb8iZero, nil},
		{"row2-zero", false, bb8iR, 0, bb8iZero, nil},
		{"row2-echo", false, bb8iR, 0, bb8iR, map[string]int{"broker-telemetry-id-echo": 1}},
		{"row3-zero", true, bb8iX, 0, bb8iZero, nil},
		{"row3-echo", true, bb8iX, 0, bb8iX, map[string]int{"broker-telemetry-id-echo": 1}},
		{"row4-rejected", true, bb8iZero, 42, bb8iZero, map[string]int{"telemetry-id-requested-with-header": 1}},
		{"row4-assigned", true, bb8iZero, 0, bb8iB, map[string]int{"telemetry-id-requested-with-header": 1, "broker-accepted-invalid": 1}},
		{"row5-rejected", true, bb8iR, 42, bb8iZero, map[string]int{"telemetry-id-mismatch": 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			var cn *pcapgen.Conn
			var s *pcapgen.Session
			if tc.modern {
				cn, s = bb8iModern(c)
			} else {
				cn, s = bb8iLegacy(c)
			}
			s.RoundTrip(pcapgen.GetTelemetrySubscriptions(tc.body), pcapgen.GetTelemetrySubscriptionsResponse(tc.code, tc.answer, 7))
			cn.Close()
			rep := bbRunF(t, c)
			bbExpect(t, rep, tc.want)
		})
	}
}

// PushTelemetry answered with an error code: a compliant push answered
// with an error is no finding; a zero push answered with an error that is
// not INVALID_REQUEST is broker-accepted-invalid (README 9), answered 42 not.
func TestBrokerPushTelemetryErrorAnswers(t *testing.T) {
	cases := []struct {
		name string
		body [16]byte
		code int16
		want map[string]int
	}{
		{"compliant-117", bb8iX, 117, nil},
		{"zero-117", bb8iZero, 117, map[string]int{"telemetry-id-zero-push": 1, "broker-accepted-invalid": 1}},
		{"zero-42", bb8iZero, 42, map[string]int{"telemetry-id-zero-push": 1}},
		{"mismatch-0", bb8iR, 0, map[string]int{"telemetry-id-mismatch": 1, "broker-accepted-invalid": 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			cn, s := bb8iModern(c)
			s.RoundTrip(pcapgen.PushTelemetry(tc.body, 7), pcapgen.PushTelemetryResponse(tc.code))
			cn.Close()
			rep := bbRunF(t, c)
			bbExpect(t, rep, tc.want)
		})
	}
}

// GetTelemetrySubscriptions v0 answered with a v1-looking body (flexible
// header written as if with extra tag bytes): here a response header v0
// (no tag byte) instead of v1: the body is off by one; no crash, no
// broker finding.
func TestBrokerGTSWrongResponseHeader(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn, s := bb8iLegacy(c)
	corr, _ := s.Request(pcapgen.GetTelemetrySubscriptions(bb8iZero))
	cn.Reply(pcapgen.EncodeResponseRaw(corr, 0, bb8iGTSBody(0, bb8iB)))
	cn.Close()
	rep := bbRunF(t, c)
	for _, f := range rep.Findings {
		if f.Rule == "broker-telemetry-id-missing" || f.Rule == "broker-accepted-invalid" {
			t.Errorf("unexpected %s\n%s", f.Rule, rep.summary())
		}
	}
}

// A request whose tag 0 is malformed (size 15), answered NONE: SPEC 3.5
// "the error rules of 3.1": broker-accepted-invalid.
func TestBrokerMalformedAnsweredNone(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn, s := bb8iModern(c)
	bad := append([]byte{1, 0, 15}, make([]byte, 15)...)
	for i := 3; i < len(bad); i++ {
		bad[i] = 0x40
	}
	s.Header.RawTags = bad
	reqF, _ := s.RoundTrip(bb8iAPIV(), bb8iAPIVResp(0))
	s.Header.RawTags = nil
	cn.Close()
	rep := bbRunF(t, c)
	bbExpect(t, rep, map[string]int{"instance-id-malformed": 1, "broker-accepted-invalid": 1})
	if f := bbOne(t, rep, "broker-accepted-invalid"); f.Frame != reqF || f.KIP != "KIP-1313" {
		t.Errorf("frame %d kip %s; want %d KIP-1313", f.Frame, f.KIP, reqF)
	}
}

// ---- response after the client's FIN

// bb8iWritePcap writes packets (raw IP link) as a classic pcap file.
func bb8iWritePcap(t *testing.T, c *pcapgen.Capture, pkts [][]byte) string {
	t.Helper()
	var b bytes.Buffer
	hdr := make([]byte, 24)
	binary.LittleEndian.PutUint32(hdr[0:], 0xa1b2c3d4)
	binary.LittleEndian.PutUint16(hdr[4:], 2)
	binary.LittleEndian.PutUint16(hdr[6:], 4)
	binary.LittleEndian.PutUint32(hdr[16:], 262144)
	binary.LittleEndian.PutUint32(hdr[20:], uint32(c.LinkType()))
	b.Write(hdr)
	base := pcapgen.BaseTime()
	for i, p := range pkts {
		ts := base.Add(time.Duration(i) * time.Millisecond)
		rec := make([]byte, 16)
		binary.LittleEndian.PutUint32(rec[0:], uint32(ts.Unix()))
		binary.LittleEndian.PutUint32(rec[4:], uint32(ts.Nanosecond()/1000))
		binary.LittleEndian.PutUint32(rec[8:], uint32(len(p)))
		binary.LittleEndian.PutUint32(rec[12:], uint32(len(p)))
		b.Write(rec)
		b.Write(p)
	}
	path := filepath.Join(t.TempDir(), "finfirst.pcap")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// bb8iFixTCP sets a raw IPv4 packet's TCP ack number and recomputes the
// TCP checksum.
func bb8iFixTCP(p []byte, ack uint32) []byte {
	p = bytes.Clone(p)
	ihl := int(p[0]&0x0f) * 4
	tcp := p[ihl:]
	binary.BigEndian.PutUint32(tcp[8:], ack)
	tcp[16], tcp[17] = 0, 0
	var s uint32
	add := func(b []byte) {
		for i := 0; i+1 < len(b); i += 2 {
			s += uint32(binary.BigEndian.Uint16(b[i:]))
		}
		if len(b)%2 == 1 {
			s += uint32(b[len(b)-1]) << 8
		}
	}
	add(p[12:20])
	s += 6 + uint32(len(tcp))
	add(tcp)
	for s>>16 != 0 {
		s = s&0xffff + s>>16
	}
	binary.BigEndian.PutUint16(tcp[16:], ^uint16(s))
	return p
}

// A violating request, the client's FIN (half-close), then the broker's
// answer NONE, then the broker's FIN: the answer is still matched and the
// request is broker-accepted-invalid.
func TestBrokerAnswerAfterClientFIN(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{Link: pcapgen.LinkRaw})
	cn, s := bb8iModern(c)
	s.Header.InstanceID = bbID(bb8iY)
	corr, reqF := s.Request(pcapgen.GetTelemetrySubscriptions(bb8iY))
	respF := s.Respond(corr, pcapgen.GetTelemetrySubscriptionsResponse(0, bb8iZero, 7))
	cn.Close()
	pk := c.Packets()
	if len(pk) != respF+3 {
		t.Fatalf("unexpected packet layout: %d packets, response at %d", len(pk), respF)
	}
	var out [][]byte
	for _, p := range pk[:respF-1] {
		out = append(out, p.Data)
	}
	resp := pk[respF-1].Data
	ihl := int(resp[0]&0x0f) * 4
	respSeq := binary.BigEndian.Uint32(resp[ihl+4:])
	fin := bb8iFixTCP(pk[respF].Data, respSeq) // client FIN acks only what it had
	out = append(out, fin, resp, pk[respF+1].Data, pk[respF+2].Data)
	path := bb8iWritePcap(t, c, out)
	rep := bbReadF(t, path)
	bbExpect(t, rep, map[string]int{"instance-id-changed": 1, "broker-accepted-invalid": 1})
	if f := bbOne(t, rep, "broker-accepted-invalid"); f.Frame != reqF || f.CorrelationID != corr {
		t.Errorf("frame %d corr %d; want %d %d", f.Frame, f.CorrelationID, reqF, corr)
	}
	bb8iUnmatched(t, rep, 0)
}
