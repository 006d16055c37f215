package main

// SPEC.md section 3.3: the telemetry client instance ID of KIP-714 as changed
// by KIP-1313 (the GetTelemetrySubscriptions table, PushTelemetry), and the
// broker echoes of section 3.5 that follow from it.
// Expectations come from SPEC.md and README.md's "Rules: where SPEC.md is
// silent" only, never from kwatch's implementation.

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/kwatch/kwatch/internal/pcapgen"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ---------------------------------------------------------------- 3.3

// SPEC 3.3 rows 1 and 2: "absent or 0 | 0 | B != 0, NONE | legacy first
// request: remember B"; "absent or 0 | R != 0 | 0, NONE | legacy later
// request". Pushing with B is compliant.
func TestTelemetryLegacyCompliant(t *testing.T) {
	rep := bbOneConn(t, pcapgen.Ptr("orders-app"), nil, func(s *pcapgen.Session) {
		bbGTS(s, bbZero, 0, bbB)
		bbPush(s, bbB, 0)
		bbGTS(s, bbB, 0, bbZero)
		bbPush(s, bbB, 0)
	})
	bbExpect(t, rep, map[string]int{})
}

// SPEC 3.3 row 4: "H | 0 | INVALID_REQUEST | telemetry-id-requested-with-
// header (error)". Answered 42: no broker rule.
func TestTelemetryRequestedWithHeader(t *testing.T) {
	var f1 int
	rep := bbOneConn(t, pcapgen.Ptr("orders-app"), bbID(bbX), func(s *pcapgen.Session) {
		s.Header.ClientID = nil
		bbMeta(s)
		f1 = bbGTS(s, bbZero, 42, bbZero)
	})
	bbExpect(t, rep, map[string]int{"telemetry-id-requested-with-header": 1})
	f := bbFirst(t, rep, "telemetry-id-requested-with-header")
	bbField(t, f, "severity", "error")
	bbField(t, f, "frame", f1)
	bbField(t, f, "api_key", 71)
}

// SPEC 3.5 broker-accepted-invalid (warn): a request a conforming broker
// rejects (the error rules of 3.3) "was answered without INVALID_REQUEST".
// Row 4 answered NONE (with a B, or with 0): the row is not the legacy
// first request, so no broker-telemetry-id-missing ("rows ... are
// exclusive") and no echo (body ID is 0).
func TestTelemetryRequestedWithHeaderAccepted(t *testing.T) {
	for _, b := range []struct {
		name string
		id   [16]byte
	}{{"assigned", bbB}, {"zero", bbZero}} {
		t.Run(b.name, func(t *testing.T) {
			rep := bbOneConn(t, pcapgen.Ptr("orders-app"), bbID(bbX), func(s *pcapgen.Session) {
				s.Header.ClientID = nil
				bbMeta(s)
				bbGTS(s, bbZero, 0, b.id)
			})
			bbExpect(t, rep, map[string]int{"telemetry-id-requested-with-header": 1, "broker-accepted-invalid": 1})
			bbField(t, bbFirst(t, rep, "broker-accepted-invalid"), "severity", "warn")
		})
	}
}

// SPEC 3.3 row 5: "H | R != H | INVALID_REQUEST | telemetry-id-mismatch".
func TestTelemetryMismatchGTS(t *testing.T) {
	rep := bbOneConn(t, pcapgen.Ptr("orders-app"), bbID(bbX), func(s *pcapgen.Session) {
		s.Header.ClientID = nil
		bbMeta(s)
		bbGTS(s, bbY, 42, bbZero)
	})
	bbExpect(t, rep, map[string]int{"telemetry-id-mismatch": 1})
	f := bbFirst(t, rep, "telemetry-id-mismatch")
	bbField(t, f, "severity", "error")
	bbField(t, f, "expected", bbJ(bbX))
	bbField(t, f, "observed", bbJ(bbY))
}

// SPEC 3.5: row 5 answered NONE with 0 is broker-accepted-invalid too.
func TestTelemetryMismatchAccepted(t *testing.T) {
	rep := bbOneConn(t, pcapgen.Ptr("orders-app"), bbID(bbX), func(s *pcapgen.Session) {
		s.Header.ClientID = nil
		bbMeta(s)
		bbGTS(s, bbY, 0, bbZero)
	})
	bbExpect(t, rep, map[string]int{"telemetry-id-mismatch": 1, "broker-accepted-invalid": 1})
}

// SPEC 3.5 broker-telemetry-id-echo (info): "GetTelemetrySubscriptions with
// non-zero body ID answered with a non-zero ID (KIP-714 says 0)": aligned
// row 3 and legacy row 2 both.
func TestTelemetryBrokerEcho(t *testing.T) {
	t.Run("aligned", func(t *testing.T) {
		rep := bbOneConn(t, pcapgen.Ptr("orders-app"), bbID(bbX), func(s *pcapgen.Session) {
			s.Header.ClientID = nil
			bbMeta(s)
			bbGTS(s, bbX, 0, bbX)
		})
		bbExpect(t, rep, map[string]int{"broker-telemetry-id-echo": 1})
		bbField(t, bbFirst(t, rep, "broker-telemetry-id-echo"), "severity", "info")
	})
	t.Run("legacy", func(t *testing.T) {
		rep := bbOneConn(t, pcapgen.Ptr("orders-app"), nil, func(s *pcapgen.Session) {
			bbGTS(s, bbZero, 0, bbB)
			bbGTS(s, bbB, 0, bbB)
		})
		bbExpect(t, rep, map[string]int{"broker-telemetry-id-echo": 1})
	})
}

// SPEC 3.5 broker-telemetry-id-missing (error): "a legacy first
// GetTelemetrySubscriptions (body 0) answered NONE with a zero ID". A zero
// header counts as "absent or 0". An error answer is no NONE answer.
func TestTelemetryBrokerMissing(t *testing.T) {
	for _, h := range []struct {
		name string
		id   *[16]byte
	}{{"absent", nil}, {"zero", bbID(bbZero)}} {
		t.Run(h.name, func(t *testing.T) {
			rep := bbOneConn(t, pcapgen.Ptr("orders-app"), h.id, func(s *pcapgen.Session) {
				bbGTS(s, bbZero, 0, bbZero)
			})
			bbExpect(t, rep, map[string]int{"broker-telemetry-id-missing": 1})
			f := bbFirst(t, rep, "broker-telemetry-id-missing")
			bbField(t, f, "severity", "error")
			// frame: kwatch gives the response's packet for broker rules
			// (section 5 speaks of "the packet that completed the request";
			// ambiguous for findings seen from responses), not asserted.
		})
	}
	t.Run("error-answer", func(t *testing.T) {
		rep := bbOneConn(t, pcapgen.Ptr("orders-app"), nil, func(s *pcapgen.Session) {
			bbGTS(s, bbZero, 35, bbZero) // UNSUPPORTED_VERSION
		})
		bbExpect(t, rep, map[string]int{})
	})
}

// SPEC 3.3 telemetry-id-mismatch: "also PushTelemetry whose body ID differs
// from a non-zero header ID"; telemetry-id-zero-push: "PushTelemetry with a
// zero ClientInstanceId"; 3.7: "PushTelemetry with a zero body ID is
// telemetry-id-zero-push only". Answered 42: no broker rule.
func TestTelemetryPushRejected(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bbSession(cn, pcapgen.Ptr("orders-app"), bbID(bbX))
	s.Header.ClientID = nil
	bbGTS(s, bbX, 0, bbZero)
	fm := bbPush(s, bbY, 42)
	fz := bbPush(s, bbZero, 42)
	cn.Close()
	// Legacy zero push on another connection.
	cn2 := c.Conn(pcapgen.ConnOptions{})
	s2 := bbSession(cn2, pcapgen.Ptr("orders-app"), nil)
	bbPush(s2, bbZero, 42)
	cn2.Close()
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"telemetry-id-mismatch": 1, "telemetry-id-zero-push": 2})
	bbField(t, bbFirst(t, rep, "telemetry-id-mismatch"), "frame", fm)
	bbField(t, bbFirst(t, rep, "telemetry-id-mismatch"), "observed", bbJ(bbY))
	bbField(t, bbFirst(t, rep, "telemetry-id-zero-push"), "frame", fz)
	bbField(t, bbFirst(t, rep, "telemetry-id-zero-push"), "severity", "error")
}

// SPEC 3.5: the same PushTelemetry violations answered NONE are
// broker-accepted-invalid, once per offending request (3.7).
func TestTelemetryPushAccepted(t *testing.T) {
	rep := bbOneConn(t, pcapgen.Ptr("orders-app"), bbID(bbX), func(s *pcapgen.Session) {
		s.Header.ClientID = nil
		bbGTS(s, bbX, 0, bbZero)
		bbPush(s, bbY, 0)
		bbPush(s, bbZero, 0)
	})
	bbExpect(t, rep, map[string]int{"telemetry-id-mismatch": 1, "telemetry-id-zero-push": 1, "broker-accepted-invalid": 2})
}

// SPEC 3.3 telemetry-id-not-adopted (warn): "after the broker assigned B
// (legacy flow), a later telemetry request from the same client instance
// uses an ID other than B"; a request rule of 3.3, once per offending
// request.
func TestTelemetryNotAdopted(t *testing.T) {
	var f1, f2 int
	rep := bbOneConn(t, pcapgen.Ptr("orders-app"), nil, func(s *pcapgen.Session) {
		bbGTS(s, bbZero, 0, bbB)
		bbPush(s, bbB, 0)
		f1 = bbPush(s, bbC, 0)
		f2 = bbGTS(s, bbC, 0, bbZero)
	})
	bbExpect(t, rep, map[string]int{"telemetry-id-not-adopted": 2})
	fs := bbOf(rep, "telemetry-id-not-adopted")
	if len(fs) == 2 {
		bbField(t, fs[0], "severity", "warn")
		bbField(t, fs[0], "frame", f1)
		bbField(t, fs[0], "expected", bbJ(bbB))
		bbField(t, fs[0], "observed", bbJ(bbC))
		bbField(t, fs[1], "frame", f2)
	}
}

// SPEC 3.3 row 3 with a changed header: H=Y, R=Y is aligned for telemetry
// (no 3.3 finding), but the header is instance-id-changed (3.1).
func TestTelemetryChangedHeaderAligned(t *testing.T) {
	rep := bbOneConn(t, pcapgen.Ptr("orders-app"), bbID(bbX), func(s *pcapgen.Session) {
		bbMeta(s)
		s.Header.ClientID = nil
		s.Header.InstanceID = bbID(bbY)
		bbGTS(s, bbY, 42, bbZero)
	})
	bbExpect(t, rep, map[string]int{"instance-id-changed": 1})
}

// SPEC 3.1 dropped on PushTelemetry: first X, a push with no header ID and
// body X answered NONE: dropped + broker-accepted-invalid; no mismatch
// ("needs two non-zero IDs") and no zero-push.
func TestTelemetryDroppedOnPush(t *testing.T) {
	rep := bbOneConn(t, pcapgen.Ptr("orders-app"), bbID(bbX), func(s *pcapgen.Session) {
		bbGTS(s, bbX, 0, bbZero)
		s.Header.ClientID = nil
		s.Header.InstanceID = nil
		bbPush(s, bbX, 0)
	})
	bbExpect(t, rep, map[string]int{"instance-id-dropped": 1, "broker-accepted-invalid": 1})
}

// SPEC 3.5 broker-telemetry-id-missing then a zero push: the client had no
// ID to push with; both findings stand (answered 42: no broker-accepted).
func TestTelemetryMissingThenZeroPush(t *testing.T) {
	rep := bbOneConn(t, pcapgen.Ptr("orders-app"), nil, func(s *pcapgen.Session) {
		bbGTS(s, bbZero, 0, bbZero)
		bbPush(s, bbZero, 42)
	})
	bbExpect(t, rep, map[string]int{"broker-telemetry-id-missing": 1, "telemetry-id-zero-push": 1})
}

// SPEC 3.3 row 2 without a prior assignment: "legacy later request: R is
// the telemetry ID": no finding (nothing was assigned, so nothing to adopt).
func TestTelemetryLegacyLaterWithoutAssignment(t *testing.T) {
	rep := bbOneConn(t, pcapgen.Ptr("orders-app"), nil, func(s *pcapgen.Session) {
		bbGTS(s, bbC, 0, bbZero)
		bbPush(s, bbC, 0)
	})
	bbExpect(t, rep, map[string]int{})
}

// ---------------------------------------------------------------- telemetry

// SPEC 3.3 rows 1-2 (H absent): "legacy first request" / "legacy later
// request: R is the telemetry ID" give no finding. A compliant accepted-2026
// client names X on its first v3 request and then sends GetTelemetry-
// Subscriptions (header v2, no ID) with body X, answered "0, NONE", and
// PushTelemetry with body X: no finding.
func TestTelemetryBodyWithoutHeader(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bb5Sess(cn, bb5App)
	bb5OD(s, &bb5X, nil)
	s.Header.ClientID = nil
	s.RoundTrip(pcapgen.GetTelemetrySubscriptions(bb5X), pcapgen.GetTelemetrySubscriptionsResponse(0, [16]byte{}, 7))
	s.RoundTrip(pcapgen.PushTelemetry(bb5X, 7), pcapgen.PushTelemetryResponse(0))
	cn.Close()
	bb5Expect(t, "accepted-2026", bb5Read(t, bbCaptureFile(t, c, ""), bb5Acc), map[string]int{})
}

// SPEC 3: profiles "may change which rules run and their severity, never
// their meaning"; 3.3 row 4 (H != 0, body 0: telemetry-id-requested-with-
// header, error) and telemetry-id-zero-push are not turned off by section 4.
// A GetTelemetrySubscriptions whose (v2) header carries X with body 0,
// answered INVALID_REQUEST, is row 4; a PushTelemetry with a zero body
// answered INVALID_REQUEST is zero-push only. Both answered 42: no
// broker-accepted-invalid. (Whether the v2 header's X also counts as a
// repeat is not asserted.)
func TestTelemetryRulesStillApply(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bb5Sess(cn, bb5App)
	bb5OD(s, &bb5X, nil)
	s.Header.ClientID = nil
	s.Header.InstanceID = &bb5X
	g, _ := s.RoundTrip(pcapgen.GetTelemetrySubscriptions([16]byte{}), pcapgen.GetTelemetrySubscriptionsResponse(42, [16]byte{}, 0))
	s.Header.InstanceID = nil
	p, _ := s.RoundTrip(pcapgen.PushTelemetry([16]byte{}, 7), pcapgen.PushTelemetryResponse(42))
	cn.Close()
	acc := bb5Read(t, bbCaptureFile(t, c, ""), bb5Acc)
	got := bbCounts(acc)
	for rule, want := range map[string]int{"telemetry-id-requested-with-header": 1, "telemetry-id-zero-push": 1, "broker-accepted-invalid": 0, "telemetry-id-mismatch": 0, "instance-id-missing-first": 0} {
		if got[rule] != want {
			t.Errorf("%s: %d, spec requires %d\n%s", rule, got[rule], want, acc.summary())
		}
	}
	bb5Field(t, bb5First(acc, "telemetry-id-requested-with-header"), "frame", g)
	bb5Field(t, bb5First(acc, "telemetry-id-zero-push"), "frame", p)
}

// SPEC 3.3 telemetry-id-not-adopted: "after the broker assigned B (legacy
// flow), a later telemetry request from the same client instance uses an ID
// other than B". Under accepted-2026 instance X is named on the first v3
// request of each connection; GetTelemetrySubscriptions (header v2, no ID)
// with body 0 on the first connection is row 1 (B assigned, no finding; the
// request header has no H), and on the second connection of the same
// instance a body Y != B is not-adopted. Seed: no instance ID is seen, and
// README 5 exempts another connection of a client without instance ID.
func TestTelemetryNotAdoptedAcrossConnections(t *testing.T) {
	B := pcapgen.SeqUUID(0x44)
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{Client: bb5Host(0)})
	s := bb5Sess(cn, bb5App)
	bb5OD(s, &bb5X, nil)
	s.Header.ClientID = nil
	s.RoundTrip(pcapgen.GetTelemetrySubscriptions([16]byte{}), pcapgen.GetTelemetrySubscriptionsResponse(0, B, 7))
	cn.Close()
	cn2 := c.Conn(pcapgen.ConnOptions{Client: bb5Host(1)})
	s2 := bb5Sess(cn2, bb5App)
	bb5OD(s2, &bb5X, nil)
	s2.Header.ClientID = nil
	f, _ := s2.RoundTrip(pcapgen.GetTelemetrySubscriptions(bb5Y), pcapgen.GetTelemetrySubscriptionsResponse(0, [16]byte{}, 7))
	cn2.Close()
	path := bbCaptureFile(t, c, "")
	acc := bb5Read(t, path, bb5Acc)
	bb5Expect(t, "accepted-2026", acc, map[string]int{"telemetry-id-not-adopted": 1})
	bb5Field(t, bb5First(acc, "telemetry-id-not-adopted"), "frame", f)
	bb5Field(t, bb5First(acc, "telemetry-id-not-adopted"), "expected", bbJ(B))
	bb5Expect(t, "seed", bb5Read(t, path, ""), map[string]int{})
}

// ------------------------------------------------------------- telemetry

// SPEC 3.3 telemetry-id-not-adopted: "after the broker assigned B (legacy
// flow), a later telemetry request from the same client instance uses an ID
// other than B"; README 5: "and so is asking again with body 0 on the
// connection that was given B"; 3.7: "PushTelemetry with a zero body ID is
// telemetry-id-zero-push only".
func TestTelemetryAskAgainWithZero(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn, s := bb7Legacy(c, pcapgen.ConnOptions{}, "legacy-app")
	s.RoundTrip(pcapgen.GetTelemetrySubscriptions(bb7Zero), pcapgen.GetTelemetrySubscriptionsResponse(errNone, bb7B, 7))
	s.RoundTrip(pcapgen.PushTelemetry(bb7B, 7), pcapgen.PushTelemetryResponse(errNone))
	again, _ := s.RoundTrip(pcapgen.GetTelemetrySubscriptions(bb7Zero), pcapgen.GetTelemetrySubscriptionsResponse(errNone, bb7B, 8))
	s.RoundTrip(pcapgen.PushTelemetry(bb7B, 8), pcapgen.PushTelemetryResponse(errNone))
	zero, _ := s.RoundTrip(pcapgen.PushTelemetry(bb7Zero, 8), pcapgen.PushTelemetryResponse(errInvalidRequest))
	cn.Close()
	rep := bbRunF(t, c)
	bbExpect(t, rep, map[string]int{"telemetry-id-not-adopted": 1, "telemetry-id-zero-push": 1})
	bb7EqInts(t, "telemetry-id-not-adopted frame", bb7Frames(rep, "telemetry-id-not-adopted"), []int{again})
	bb7EqInts(t, "telemetry-id-zero-push frame", bb7Frames(rep, "telemetry-id-zero-push"), []int{zero})
	for _, f := range bbOf(rep, "telemetry-id-not-adopted") {
		if f.Expected != bbJ(bb7B) {
			t.Errorf("telemetry-id-not-adopted expected %q, want B %s", f.Expected, bbJ(bb7B))
		}
	}
}

// ------------------------------------------------------------- telemetry

// SPEC 3.3 telemetry-id-not-adopted: "after the broker assigned B (legacy
// flow), a later telemetry request from the same client instance uses an ID
// other than B"; README 5: "The broker-assigned ID B is remembered per
// connection and per client instance; a later telemetry request of either
// that uses another ID is telemetry-id-not-adopted". Profile accepted-2026
// (instance X named on each connection's first v3 request, OffsetDelete v1):
// GetTelemetrySubscriptions body 0 on connection 1 is assigned B; on
// connection 2 of the same instance PushTelemetry with B is adopted
// (nothing), PushTelemetry with R is not-adopted (warn, full, at its frame,
// expected B, observed R).
func TestTelemetryPushAcrossConnections(t *testing.T) {
	od := func(s *pcapgen.Session) {
		s.Header.HeaderVersion = 3
		s.Header.InstanceID = bbID(bb8cX)
		r := kmsg.NewPtrOffsetDeleteRequest()
		r.Version = 1
		r.Group = "orders-group"
		corr, _ := s.Request(r)
		s.Header.HeaderVersion = pcapgen.HeaderAuto
		s.Header.InstanceID = nil
		resp := kmsg.NewPtrOffsetDeleteResponse()
		resp.Version = 1
		s.Respond(corr, resp)
		s.Header.ClientID = nil
	}
	c := pcapgen.New(pcapgen.Options{})
	c1 := c.Conn(pcapgen.ConnOptions{Client: netip.MustParseAddrPort("10.8.0.1:51001")})
	s1 := c1.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("orders-app"), CorrelationID: 1})
	od(s1)
	s1.RoundTrip(pcapgen.GetTelemetrySubscriptions(bb8cZero), pcapgen.GetTelemetrySubscriptionsResponse(errNone, bb8cB, 7))
	c2 := c.Conn(pcapgen.ConnOptions{Client: netip.MustParseAddrPort("10.8.0.1:51002")})
	s2 := c2.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("orders-app"), CorrelationID: 1})
	od(s2)
	s2.RoundTrip(pcapgen.PushTelemetry(bb8cB, 7), pcapgen.PushTelemetryResponse(errNone))
	bad, _ := s2.RoundTrip(pcapgen.PushTelemetry(bb8cR, 7), pcapgen.PushTelemetryResponse(errNone))
	c1.Close()
	c2.Close()
	rep := bbRunF(t, c, "--profile", "accepted-2026")
	bb8cExact(t, rep, bb8cW{"telemetry-id-not-adopted", "warn", "full", bad})
	for _, f := range rep.Findings {
		if f.Rule == "telemetry-id-not-adopted" && (f.Expected != pcapgen.JavaString(bb8cB) || f.Observed != pcapgen.JavaString(bb8cR)) {
			t.Errorf("telemetry-id-not-adopted expected %q observed %q, want B %s and R %s", f.Expected, f.Observed, pcapgen.JavaString(bb8cB), pcapgen.JavaString(bb8cR))
		}
	}
}

// SPEC 3.3 table, row 1: "absent or 0 | 0 | B != 0, NONE | legacy first
// request"; SPEC 3.1 instance-id-dropped: "the first v2 request carried an
// instance ID; a later v2 request carries none"; SPEC 3.5
// broker-accepted-invalid "(the error rules of 3.1 ...) was answered without
// INVALID_REQUEST", broker-telemetry-id-missing "a legacy first
// GetTelemetrySubscriptions (body 0) answered NONE with a zero ID". A
// KIP-1313 client's GetTelemetrySubscriptions that omits X from its header
// (body 0) is instance-id-dropped (error, full) whatever the answer; answered
// INVALID_REQUEST nothing more; answered NONE with B also
// broker-accepted-invalid (warn); answered NONE with 0 also
// broker-telemetry-id-missing (error). README 9: the 3.5 findings carry the
// request's frame.
func TestTelemetryRequestDroppingHeaderID(t *testing.T) {
	for _, tc := range []struct {
		name string
		code int16
		id   [16]byte
		more []string
	}{
		{"invalid-request", errInvalidRequest, bb8cZero, nil},
		{"none-with-B", errNone, bb8cB, []string{"broker-accepted-invalid/warn"}},
		{"none-with-zero", errNone, bb8cZero, []string{"broker-accepted-invalid/warn", "broker-telemetry-id-missing/error"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			cn, s := bb8cModern(c, pcapgen.ConnOptions{}, "orders-app", bb8cX)
			s.Header.InstanceID = nil
			f, _ := s.RoundTrip(pcapgen.GetTelemetrySubscriptions(bb8cZero), pcapgen.GetTelemetrySubscriptionsResponse(tc.code, tc.id, 7))
			s.Header.InstanceID = bbID(bb8cX)
			bbMeta(s)
			cn.Close()
			rep := bbRunF(t, c)
			want := []bb8cW{{"instance-id-dropped", "error", "full", f}}
			for _, m := range tc.more {
				r, sev, _ := strings.Cut(m, "/")
				want = append(want, bb8cW{r, sev, "full", f})
			}
			bb8cExact(t, rep, want...)
		})
	}
}

// SPEC 3.3 table rows with conforming and non-conforming answers, each on a
// connection of its own (GetTelemetrySubscriptions v0 after a first
// Metadata). SPEC 3.5: broker-accepted-invalid when a 3.3 error rule "was
// answered without INVALID_REQUEST" (README 9: any code other than 42),
// broker-telemetry-id-echo (info) "GetTelemetrySubscriptions with non-zero
// body ID answered with a non-zero ID", broker-telemetry-id-missing (error)
// for row 1 answered NONE with zero. README 9: every 3.5 finding carries the
// request's frame.
func TestTelemetryTableRowsAndAnswers(t *testing.T) {
	type row struct {
		name   string
		header *[16]byte
		body   [16]byte
		code   int16
		answer [16]byte
		want   []string
	}
	X := bbID(bb8cX)
	rows := []row{
		{"1-conforming", nil, bb8cZero, 0, bb8cB, nil},
		{"1-zero-answer", nil, bb8cZero, 0, bb8cZero, []string{"broker-telemetry-id-missing/error"}},
		{"1-zero-header", bbID(bb8cZero), bb8cZero, 0, bb8cB, nil},
		{"2-conforming", nil, bb8cR, 0, bb8cZero, nil},
		{"2-echo", nil, bb8cR, 0, bb8cR, []string{"broker-telemetry-id-echo/info"}},
		{"3-conforming", X, bb8cX, 0, bb8cZero, nil},
		{"3-echo", X, bb8cX, 0, bb8cX, []string{"broker-telemetry-id-echo/info"}},
		{"4-conforming", X, bb8cZero, 42, bb8cZero, []string{"telemetry-id-requested-with-header/error"}},
		{"4-unknown-server-error", X, bb8cZero, errUnknownServer, bb8cZero, []string{"telemetry-id-requested-with-header/error", "broker-accepted-invalid/warn"}},
		{"4-none-B", X, bb8cZero, 0, bb8cB, []string{"telemetry-id-requested-with-header/error", "broker-accepted-invalid/warn"}},
		{"5-conforming", X, bb8cR, 42, bb8cZero, []string{"telemetry-id-mismatch/error"}},
		{"5-none-echo", X, bb8cR, 0, bb8cR, []string{"telemetry-id-mismatch/error", "broker-accepted-invalid/warn", "broker-telemetry-id-echo/info"}},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			cn := c.Conn(pcapgen.ConnOptions{})
			s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("tele-app"), InstanceID: r.header, CorrelationID: 1})
			bbMeta(s)
			s.Header.ClientID = nil
			f, _ := s.RoundTrip(pcapgen.GetTelemetrySubscriptions(r.body), pcapgen.GetTelemetrySubscriptionsResponse(r.code, r.answer, 7))
			cn.Close()
			rep := bbRunF(t, c)
			var want []bb8cW
			for _, m := range r.want {
				rule, sev, _ := strings.Cut(m, "/")
				want = append(want, bb8cW{rule, sev, "full", f})
			}
			bb8cExact(t, rep, want...)
		})
	}
}

// SPEC 3.5 broker-telemetry-id-missing: "a legacy first
// GetTelemetrySubscriptions (body 0) answered NONE with a zero ID"; README 5:
// only a connection "that was given B" is judged for asking again with body
// 0. A legacy client asks with body 0, gets NONE and 0 (missing, error,
// full), asks again with body 0, gets B, and pushes with B: nothing more (it
// was never given an ID before; no telemetry-id-not-adopted).
func TestTelemetryMissingThenAssigned(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("tele-app"), CorrelationID: 1})
	s.RoundTrip(pcapgen.APIVersions(3, "librdkafka", "2.6.0"), pcapgen.APIVersionsResponse(3))
	f, _ := s.RoundTrip(pcapgen.GetTelemetrySubscriptions(bb8cZero), pcapgen.GetTelemetrySubscriptionsResponse(errNone, bb8cZero, 7))
	s.RoundTrip(pcapgen.GetTelemetrySubscriptions(bb8cZero), pcapgen.GetTelemetrySubscriptionsResponse(errNone, bb8cB, 8))
	s.RoundTrip(pcapgen.PushTelemetry(bb8cB, 8), pcapgen.PushTelemetryResponse(errNone))
	cn.Close()
	rep := bbRunF(t, c)
	bb8cExact(t, rep, bb8cW{"broker-telemetry-id-missing", "error", "full", f})
}
