package main

// Black-box scenarios (batch 7): a coverage audit of SPEC.md. Every test here
// pins a normative statement (or one of README.md's "Rules: where SPEC.md is
// silent") that batches 1-6 and the testdata/pcaps goldens left unpinned or
// pinned on one side only: the frame/time/kip of the 3.5 findings, per-request
// counting of the client-ID rules, property rules once per (connection,
// group, member ID), ghost-member's boundaries, member rules on all three
// heartbeat APIs, the required-version flag, idle connections, tagged-field
// corner cases, --max-frame's boundary, short responses and --workers.
// Expectations come from SPEC.md and the README's documented choices only,
// never from kwatch's implementation.

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kwatch/kwatch/internal/pcapgen"
)

// ------------------------------------------------------------------ helpers

// Kafka error codes (kerr).
const (
	bb7ErrNone                = 0
	bb7ErrCoordNotAvailable   = 15
	bb7ErrUnknownMember       = 25
	bb7ErrInvalidRequest      = 42
	bb7ErrUnknownSubscription = 117
)

var (
	bb7X    = pcapgen.SeqUUID(0x81)
	bb7Y    = pcapgen.SeqUUID(0x91)
	bb7B    = pcapgen.SeqUUID(0xa1) // broker-assigned telemetry ID
	bb7C    = pcapgen.SeqUUID(0xb1)
	bb7Zero [16]byte
)

type bb7Report struct {
	Totals struct {
		Packets          int            `json:"packets"`
		Connections      int            `json:"connections"`
		KafkaConnections int            `json:"kafka_connections"`
		Requests         int            `json:"requests"`
		Responses        int            `json:"responses"`
		Coverage         map[string]int `json:"coverage"`
	} `json:"totals"`
	Findings []bbFinding `json:"findings"`
}

func bb7Read(t *testing.T, path string, extra ...string) bb7Report {
	t.Helper()
	rep, _ := bbReadAs[bb7Report](t, path, extra...)
	return rep
}

func bb7Run(t *testing.T, c *pcapgen.Capture, extra ...string) bb7Report {
	t.Helper()
	return bb7Read(t, bbCaptureFile(t, c, ""), extra...)
}

func (r bb7Report) summary() string {
	var b strings.Builder
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "  %s %s conf=%s frame=%d corr=%d conn=%s kip=%s exp=%q obs=%q msg=%q\n",
			f.Rule, f.Severity, f.Confidence, f.Frame, f.CorrelationID, f.Conn.Client, f.KIP, f.Expected, f.Observed, f.Message)
	}
	return b.String()
}

func bb7Counts(rep bb7Report) map[string]int {
	got := map[string]int{}
	for _, f := range rep.Findings {
		got[f.Rule]++
	}
	return got
}

// bb7Expect asserts exactly these rule counts (every other rule: zero).
func bb7Expect(t *testing.T, rep bb7Report, want map[string]int) {
	t.Helper()
	bbCompareCounts(t, "", bb7Counts(rep), want, rep.summary)
}

func bb7All(rep bb7Report, rule string) []bbFinding {
	var out []bbFinding
	for _, f := range rep.Findings {
		if f.Rule == rule {
			out = append(out, f)
		}
	}
	return out
}

// bb7Frames returns the frames of rule's findings, sorted.
func bb7Frames(rep bb7Report, rule string) []int {
	var fs []int
	for _, f := range bb7All(rep, rule) {
		fs = append(fs, f.Frame)
	}
	sort.Ints(fs)
	return fs
}

func bb7EqInts(t *testing.T, what string, got, want []int) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s: got %v, spec requires %v", what, got, want)
	}
}

// bb7Sev asserts the severity (and confidence unless "") of every finding
// of rule.
func bb7Sev(t *testing.T, rep bb7Report, rule, severity, confidence string) {
	t.Helper()
	for _, f := range bb7All(rep, rule) {
		if f.Severity != severity {
			t.Errorf("%s at frame %d: severity %q, spec requires %q", rule, f.Frame, f.Severity, severity)
		}
		if confidence != "" && f.Confidence != confidence {
			t.Errorf("%s at frame %d: confidence %q, spec requires %q", rule, f.Frame, f.Confidence, confidence)
		}
	}
}

// bb7Time is the section 5 time of a packet.
func bb7Time(c *pcapgen.Capture, frame int) string {
	return c.Packets()[frame-1].Time.UTC().Format("2006-01-02T15:04:05.000000Z")
}

func bb7J(id [16]byte) string { return pcapgen.JavaString(id) }

func bb7Host(host string, port uint16) netip.AddrPort {
	return netip.AddrPortFrom(netip.MustParseAddr(host), port)
}

// bb7Legacy opens a connection of a client without header instance IDs: an
// ApiVersions v3 round trip with client ID cid, which the session keeps
// repeating (legacy clients do; "a statistic, not a finding").
func bb7Legacy(c *pcapgen.Capture, o pcapgen.ConnOptions, cid string) (*pcapgen.Conn, *pcapgen.Session) {
	cn := c.Conn(o)
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr(cid), CorrelationID: 1})
	s.RoundTrip(pcapgen.APIVersions(3, "librdkafka", "2.6.0"), pcapgen.APIVersionsResponse(3))
	return cn, s
}

// bb7Modern opens a connection of a KIP-1313 client: instance ID inst on
// every v2 request, client ID cid on the first request only.
func bb7Modern(c *pcapgen.Capture, o pcapgen.ConnOptions, cid string, inst [16]byte) (*pcapgen.Conn, *pcapgen.Session) {
	cn := c.Conn(o)
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr(cid), InstanceID: &inst, CorrelationID: 1})
	s.RoundTrip(pcapgen.APIVersions(4, "apache-kafka-java", "4.2.0"), pcapgen.APIVersionsResponse(4))
	s.Header.ClientID = nil
	return cn, s
}

func bb7Meta(s *pcapgen.Session) int {
	f, _ := s.RoundTrip(pcapgen.Metadata(12, "orders"), pcapgen.MetadataResponse(12, "10.0.0.1", 9092))
	return f
}

// bb7HB is one of the three heartbeat APIs of SPEC 3.4 at a version where a
// client-generated member ID is required (ConsumerGroupHeartbeat from v1 by
// default, share and streams from v0).
type bb7HB struct {
	name string
	key  int16
	ver  int16
}

var (
	bb7CG = bb7HB{"ConsumerGroupHeartbeat", 68, 1}
	bb7SG = bb7HB{"ShareGroupHeartbeat", 76, 1}
	bb7ST = bb7HB{"StreamsGroupHeartbeat", 88, 0}
)

func (h bb7HB) at(v int16) bb7HB { h.ver = v; return h }

func (h bb7HB) req(group, member string, epoch int32) kmsg.Request {
	switch h.key {
	case 76:
		return pcapgen.ShareGroupHeartbeat(h.ver, group, member, epoch)
	case 88:
		return pcapgen.StreamsGroupHeartbeat(h.ver, group, member, epoch)
	}
	return pcapgen.ConsumerGroupHeartbeat(h.ver, group, member, epoch)
}

func (h bb7HB) resp(code int16, member *string, epoch int32) kmsg.Response {
	switch h.key {
	case 76:
		return pcapgen.ShareGroupHeartbeatResponse(h.ver, code, member, epoch)
	case 88:
		m := ""
		if member != nil {
			m = *member
		}
		return pcapgen.StreamsGroupHeartbeatResponse(h.ver, code, m, epoch)
	}
	return pcapgen.ConsumerGroupHeartbeatResponse(h.ver, code, member, epoch)
}

// rt sends a heartbeat and its answer; returns the request's frame.
func (h bb7HB) rt(s *pcapgen.Session, group, member string, epoch int32, code int16, respMember *string, respEpoch int32) int {
	f, _ := s.RoundTrip(h.req(group, member, epoch), h.resp(code, respMember, respEpoch))
	return f
}

// join is a join (epoch 0) answered NONE with the same member ID.
func (h bb7HB) join(s *pcapgen.Session, group, member string) int {
	return h.rt(s, group, member, 0, bb7ErrNone, pcapgen.Ptr(member), 1)
}

func (h bb7HB) beat(s *pcapgen.Session, group, member string, epoch int32) int {
	return h.rt(s, group, member, epoch, bb7ErrNone, pcapgen.Ptr(member), epoch)
}

func (h bb7HB) leave(s *pcapgen.Session, group, member string) int {
	return h.rt(s, group, member, -1, bb7ErrNone, pcapgen.Ptr(member), -1)
}

// send sends a heartbeat that never gets an answer.
func (h bb7HB) send(s *pcapgen.Session, group, member string, epoch int32) int {
	_, f := s.Request(h.req(group, member, epoch))
	return f
}

// bb7V1 returns id as a version-1 UUID.
func bb7V1(id [16]byte) [16]byte {
	id[6] = id[6]&0x0f | 0x10
	return id
}

// ------------------------------------------------ 3.5 findings name the request

// README "where SPEC.md is silent" 9: "The 3.5 findings are seen in the
// answer but are about the request (3.7 counts them per request): their
// frame and time are the request's packet (SPEC.md section 5, "the packet
// that completed the request"), and the message names the answer's frame";
// broker-accepted-invalid's "kip is that of the rule it answers". Each
// answer comes two seconds after its request, so that frame and time of the
// request and of the answer differ.
func TestBB7BrokerFindingsNameTheRequest(t *testing.T) {
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
			a := slow(c, s, pcapgen.ConsumerGroupHeartbeat(1, "g", "", 0), pcapgen.ConsumerGroupHeartbeatResponse(1, bb7ErrNone, &assigned, 1))
			cn.Close()
			return a
		}, 68, []string{"broker-accepted-invalid", "broker-generated-member-id"}, "member-id-empty"},
		{"telemetry-id-zero-push", func(c *pcapgen.Capture) answered {
			cn, s := bb7Modern(c, pcapgen.ConnOptions{}, "orders-app", bb7X)
			a := slow(c, s, pcapgen.PushTelemetry(bb7Zero, 7), pcapgen.PushTelemetryResponse(bb7ErrNone))
			cn.Close()
			return a
		}, 72, []string{"broker-accepted-invalid"}, "telemetry-id-zero-push"},
		{"broker-telemetry-id-echo", func(c *pcapgen.Capture) answered {
			cn, s := bb7Modern(c, pcapgen.ConnOptions{}, "orders-app", bb7X)
			a := slow(c, s, pcapgen.GetTelemetrySubscriptions(bb7X), pcapgen.GetTelemetrySubscriptionsResponse(bb7ErrNone, bb7X, 7))
			cn.Close()
			return a
		}, 71, []string{"broker-telemetry-id-echo"}, ""},
		{"broker-telemetry-id-missing", func(c *pcapgen.Capture) answered {
			cn, s := bb7Legacy(c, pcapgen.ConnOptions{}, "legacy-app")
			a := slow(c, s, pcapgen.GetTelemetrySubscriptions(bb7Zero), pcapgen.GetTelemetrySubscriptionsResponse(bb7ErrNone, bb7Zero, 7))
			cn.Close()
			return a
		}, 71, []string{"broker-telemetry-id-missing"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			a := tc.build(c)
			rep := bb7Run(t, c)
			want := map[string]int{}
			for _, r := range tc.broker {
				want[r] = 1
			}
			if tc.answers != "" {
				want[tc.answers] = 1
			}
			bb7Expect(t, rep, want)
			respWord := regexp.MustCompile(`\b` + strconv.Itoa(a.respFrame) + `\b`)
			for _, r := range tc.broker {
				for _, f := range bb7All(rep, r) {
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
						for _, g := range bb7All(rep, tc.answers) {
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
func TestBB7BrokerAcceptedInvalidScope(t *testing.T) {
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
			bb7CG.rt(s, "g", "", -1, bb7ErrNone, nil, -1)
			bb7SG.rt(s, "sg", "", -1, bb7ErrNone, nil, -1)
			cn.Close()
		}, map[string]int{"leave-without-member-id": 2}},
		{"instance-id-dropped-share-none", func(c *pcapgen.Capture) {
			cn, s := bb7Modern(c, pcapgen.ConnOptions{}, "orders-app", bb7X)
			s.Header.InstanceID = nil
			bb7SG.join(s, "sg", bb7J(bb7X))
			cn.Close()
		}, map[string]int{"instance-id-dropped": 1, "broker-accepted-invalid": 1}},
		{"telemetry-id-mismatch-unknown-subscription", func(c *pcapgen.Capture) {
			cn, s := bb7Modern(c, pcapgen.ConnOptions{}, "orders-app", bb7X)
			s.RoundTrip(pcapgen.GetTelemetrySubscriptions(bb7X), pcapgen.GetTelemetrySubscriptionsResponse(bb7ErrNone, bb7Zero, 7))
			s.RoundTrip(pcapgen.PushTelemetry(bb7Y, 7), pcapgen.PushTelemetryResponse(bb7ErrUnknownSubscription))
			cn.Close()
		}, map[string]int{"telemetry-id-mismatch": 1, "broker-accepted-invalid": 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			tc.build(c)
			bb7Expect(t, bb7Run(t, c), tc.want)
		})
	}
}

// ---------------------------------------------- member rules on every API

// SPEC 3.4: the member rules "apply to ConsumerGroupHeartbeat (68),
// ShareGroupHeartbeat (76) and StreamsGroupHeartbeat (88)"; "Share and
// streams groups require it from v0". The same scenario gives the same
// findings, with the severities of the 3.4 table, on each API.
func TestBB7MemberRulesOnAllHeartbeatAPIs(t *testing.T) {
	a, b := bb7J(pcapgen.SeqUUID(0x01)), bb7J(pcapgen.SeqUUID(0x41))
	scenarios := []struct {
		name string
		play func(c *pcapgen.Capture, h bb7HB)
		want map[string]int
		sev  string
	}{
		{"aligned-compliant", func(c *pcapgen.Capture, h bb7HB) {
			cn, s := bb7Modern(c, pcapgen.ConnOptions{}, "orders-app", bb7X)
			h.join(s, "g", bb7J(bb7X))
			h.beat(s, "g", bb7J(bb7X), 1)
			h.leave(s, "g", bb7J(bb7X))
			cn.Close()
		}, nil, ""},
		{"member-id-changed", func(c *pcapgen.Capture, h bb7HB) {
			cn, s := bb7Legacy(c, pcapgen.ConnOptions{}, "legacy-app")
			h.join(s, "g", a)
			h.leave(s, "g", a)
			h.join(s, "g", b)
			h.beat(s, "g", b, 1)
			cn.Close()
		}, map[string]int{"member-id-changed": 1}, "warn"},
		{"member-id-not-uuid", func(c *pcapgen.Capture, h bb7HB) {
			cn, s := bb7Legacy(c, pcapgen.ConnOptions{}, "legacy-app")
			h.join(s, "g", "consumer-1-1732894512")
			h.beat(s, "g", "consumer-1-1732894512", 1)
			cn.Close()
		}, map[string]int{"member-id-not-uuid": 1}, "warn"},
		{"member-id-misaligned", func(c *pcapgen.Capture, h bb7HB) {
			cn, s := bb7Modern(c, pcapgen.ConnOptions{}, "orders-app", bb7X)
			h.join(s, "g", bb7J(bb7Y))
			h.beat(s, "g", bb7J(bb7Y), 1)
			cn.Close()
		}, map[string]int{"member-id-misaligned": 1}, "warn"},
		{"ghost-member", func(c *pcapgen.Capture, h bb7HB) {
			cn, s := bb7Legacy(c, pcapgen.ConnOptions{}, "legacy-app")
			h.rt(s, "g", a, 0, bb7ErrCoordNotAvailable, nil, 0)
			h.join(s, "g", b)
			cn.Close()
		}, map[string]int{"ghost-member": 1}, "error"},
		{"leave-without-member-id", func(c *pcapgen.Capture, h bb7HB) {
			cn, s := bb7Legacy(c, pcapgen.ConnOptions{}, "legacy-app")
			h.rt(s, "g", "", -1, bb7ErrUnknownMember, nil, 0)
			cn.Close()
		}, map[string]int{"leave-without-member-id": 1}, "error"},
		{"member-id-empty-rejected", func(c *pcapgen.Capture, h bb7HB) {
			cn, s := bb7Legacy(c, pcapgen.ConnOptions{}, "legacy-app")
			h.rt(s, "g", "", 0, bb7ErrInvalidRequest, nil, 0)
			cn.Close()
		}, map[string]int{"member-id-empty": 1}, "error"},
	}
	for _, h := range []bb7HB{bb7CG, bb7SG, bb7ST} {
		for _, sc := range scenarios {
			t.Run(h.name+"/"+sc.name, func(t *testing.T) {
				c := pcapgen.New(pcapgen.Options{})
				sc.play(c, h)
				rep := bb7Run(t, c)
				bb7Expect(t, rep, sc.want)
				for r := range sc.want {
					bb7Sev(t, rep, r, sc.sev, "full")
					for _, f := range bb7All(rep, r) {
						if f.APIKey != int(h.key) || f.API != h.name {
							t.Errorf("%s: api %q/%d, want %s/%d", r, f.API, f.APIKey, h.name, h.key)
						}
					}
				}
			})
		}
	}
}

// README "where SPEC.md is silent" 6: "An empty member ID on a heartbeat that
// is neither a join nor a leave gives no finding"; SPEC 3.7 "an empty member
// ID gives only member-id-empty or leave-without-member-id (and 3.5 rules),
// no other member rule" (so no member-id-changed either). Answered
// UNKNOWN_MEMBER_ID (as a broker does) or NONE: no rule fired, so no 3.5
// finding.
func TestBB7EmptyMemberIDOnPlainHeartbeat(t *testing.T) {
	m := bb7J(pcapgen.SeqUUID(0x02))
	for _, h := range []bb7HB{bb7CG, bb7CG.at(0), bb7SG, bb7ST} {
		for _, code := range []int16{bb7ErrUnknownMember, bb7ErrNone} {
			t.Run(fmt.Sprintf("%s-v%d/answer-%d", h.name, h.ver, code), func(t *testing.T) {
				c := pcapgen.New(pcapgen.Options{})
				cn, s := bb7Legacy(c, pcapgen.ConnOptions{}, "legacy-app")
				h.join(s, "g", m)
				h.beat(s, "g", m, 1)
				h.rt(s, "g", "", 5, code, nil, 5)
				h.beat(s, "g", m, 5)
				h.leave(s, "g", m)
				cn.Close()
				bb7Expect(t, bb7Run(t, c), nil)
			})
		}
	}
}

// SPEC 3.4: "kwatch uses 1 by default and makes the threshold a profile
// setting. Share and streams groups require it from v0"; member-id-empty is
// "error (info below the required version)"; 3.5 broker-generated-member-id
// and broker-accepted-invalid apply to "member-id-empty at or above the
// required version". README: --member-id-required-from N is the
// ConsumerGroupHeartbeat threshold. Every join is empty and answered NONE
// with a broker-assigned ID. leave-without-member-id does not depend on the
// version.
func TestBB7MemberIDRequiredFromFlag(t *testing.T) {
	assigned := "broker-assigned-1"
	atOrAbove := map[string]int{"member-id-empty": 1, "broker-generated-member-id": 1, "broker-accepted-invalid": 1}
	below := map[string]int{"member-id-empty": 1}
	cases := []struct {
		flag string
		h    bb7HB
		want map[string]int
		sev  string
	}{
		{"", bb7CG.at(0), below, "info"},
		{"", bb7CG, atOrAbove, "error"},
		{"2", bb7CG, below, "info"},
		{"0", bb7CG.at(0), atOrAbove, "error"},
		{"2", bb7SG.at(0), atOrAbove, "error"},
		{"2", bb7SG, atOrAbove, "error"},
		{"2", bb7ST, atOrAbove, "error"},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("from-%q/%s-v%d", tc.flag, tc.h.name, tc.h.ver), func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			cn, s := bb7Legacy(c, pcapgen.ConnOptions{}, "legacy-app")
			tc.h.rt(s, "g", "", 0, bb7ErrNone, &assigned, 1)
			tc.h.beat(s, "g", assigned, 1)
			tc.h.leave(s, "g", assigned)
			cn.Close()
			var extra []string
			if tc.flag != "" {
				extra = []string{"--member-id-required-from", tc.flag}
			}
			rep := bb7Run(t, c, extra...)
			bb7Expect(t, rep, tc.want)
			bb7Sev(t, rep, "member-id-empty", tc.sev, "")
		})
	}
	t.Run("leave-without-member-id-below-threshold", func(t *testing.T) {
		c := pcapgen.New(pcapgen.Options{})
		cn, s := bb7Legacy(c, pcapgen.ConnOptions{}, "legacy-app")
		bb7CG.at(0).rt(s, "g", "", -1, bb7ErrUnknownMember, nil, 0)
		cn.Close()
		rep := bb7Run(t, c, "--member-id-required-from", "2")
		bb7Expect(t, rep, map[string]int{"leave-without-member-id": 1})
		bb7Sev(t, rep, "leave-without-member-id", "error", "")
	})
}

// ------------------------------------------------------------- ghost-member

// SPEC 3.4 ghost-member: "a join with member ID A got no response or an
// error, and the client retried the join with a different ID B"; 3.7 "a
// retried join that is a ghost-member is not also reported as
// member-id-changed", request rules "once per offending request", "an empty
// member ID gives only member-id-empty ...". README 6: "A successful answer
// to any heartbeat of A proves A's join ..., and a leave with A ends it: a
// join with B after either is a rejoin, member-id-changed."
func TestBB7GhostMemberBoundaries(t *testing.T) {
	a := bb7J(pcapgen.SeqUUID(0x03))
	b := bb7J(pcapgen.SeqUUID(0x13))
	cc := bb7J(pcapgen.SeqUUID(0x23))
	cases := []struct {
		name string
		play func(s *pcapgen.Session) []int // frames of the expected findings
		want map[string]int
	}{
		{"join-proved-by-heartbeat-answer", func(s *pcapgen.Session) []int {
			bb7CG.send(s, "g", a, 0)
			bb7CG.beat(s, "g", a, 1)
			return []int{bb7CG.join(s, "g", b)}
		}, map[string]int{"member-id-changed": 1}},
		{"join-ended-by-leave", func(s *pcapgen.Session) []int {
			bb7CG.send(s, "g", a, 0)
			bb7CG.leave(s, "g", a)
			return []int{bb7CG.join(s, "g", b)}
		}, map[string]int{"member-id-changed": 1}},
		{"chain-of-unanswered-joins", func(s *pcapgen.Session) []int {
			bb7CG.send(s, "g", a, 0)
			fb := bb7CG.send(s, "g", b, 0)
			return []int{fb, bb7CG.join(s, "g", cc)}
		}, map[string]int{"ghost-member": 2}},
		{"retry-with-same-id", func(s *pcapgen.Session) []int {
			bb7CG.send(s, "g", a, 0)
			bb7CG.join(s, "g", a)
			return nil
		}, nil},
		{"retry-with-empty-id", func(s *pcapgen.Session) []int {
			bb7CG.send(s, "g", a, 0)
			return []int{bb7CG.rt(s, "g", "", 0, bb7ErrInvalidRequest, nil, 0)}
		}, map[string]int{"member-id-empty": 1}},
		{"streams-join-error", func(s *pcapgen.Session) []int {
			bb7ST.rt(s, "g", a, 0, bb7ErrCoordNotAvailable, nil, 0)
			return []int{bb7ST.join(s, "g", b)}
		}, map[string]int{"ghost-member": 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			cn, s := bb7Legacy(c, pcapgen.ConnOptions{}, "legacy-app")
			frames := tc.play(s)
			cn.Close()
			rep := bb7Run(t, c)
			bb7Expect(t, rep, tc.want)
			var got []int
			for _, f := range rep.Findings {
				got = append(got, f.Frame)
			}
			sort.Ints(got)
			bb7EqInts(t, "finding frames", got, frames)
		})
	}
}

// SPEC 3.7: "an empty member ID gives only member-id-empty or
// leave-without-member-id (and 3.5 rules), no other member rule". After the
// client used A in the group, an empty join or an empty leave is no
// member-id-changed; a KIP-1313 client's empty join is no
// member-id-misaligned.
func TestBB7EmptyMemberIDAfterAnID(t *testing.T) {
	a := bb7J(pcapgen.SeqUUID(0x04))
	t.Run("empty-join-after-leave", func(t *testing.T) {
		c := pcapgen.New(pcapgen.Options{})
		cn, s := bb7Legacy(c, pcapgen.ConnOptions{}, "legacy-app")
		bb7CG.join(s, "g", a)
		bb7CG.leave(s, "g", a)
		bb7CG.rt(s, "g", "", 0, bb7ErrInvalidRequest, nil, 0)
		cn.Close()
		bb7Expect(t, bb7Run(t, c), map[string]int{"member-id-empty": 1})
	})
	t.Run("empty-leave-after-join", func(t *testing.T) {
		c := pcapgen.New(pcapgen.Options{})
		cn, s := bb7Legacy(c, pcapgen.ConnOptions{}, "legacy-app")
		bb7CG.join(s, "g", a)
		bb7CG.beat(s, "g", a, 1)
		bb7CG.rt(s, "g", "", -1, bb7ErrUnknownMember, nil, 0)
		cn.Close()
		bb7Expect(t, bb7Run(t, c), map[string]int{"leave-without-member-id": 1})
	})
	t.Run("kip1313-empty-join", func(t *testing.T) {
		c := pcapgen.New(pcapgen.Options{})
		cn, s := bb7Modern(c, pcapgen.ConnOptions{}, "orders-app", bb7X)
		bb7SG.rt(s, "g", "", 0, bb7ErrInvalidRequest, nil, 0)
		cn.Close()
		bb7Expect(t, bb7Run(t, c), map[string]int{"member-id-empty": 1})
	})
}

// ------------------------------------------------------- property rules

// SPEC 3.7: "member-id-not-uuid, -encoding, -not-v4, -misaligned,
// -alignment-encoding once per (connection, group, member ID)", "at the
// first request that shows it". The same member ID in two groups of one
// connection is two subjects; heartbeats and leaves add none.
func TestBB7PropertyRulesOncePerGroup(t *testing.T) {
	v1 := bb7J(bb7V1(pcapgen.SeqUUID(0x05)))
	cases := []struct {
		name   string
		modern bool
		member string
		want   map[string]int
	}{
		{"misaligned", true, bb7J(bb7Y), map[string]int{"member-id-misaligned": 2}},
		{"alignment-encoding", true, pcapgen.PaddedURL(bb7X), map[string]int{"member-id-alignment-encoding": 2, "member-id-encoding": 2}},
		{"not-v4", false, v1, map[string]int{"member-id-not-v4": 2}},
		{"encoding", false, pcapgen.Dashed(pcapgen.SeqUUID(0x06)), map[string]int{"member-id-encoding": 2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			var cn *pcapgen.Conn
			var s *pcapgen.Session
			if tc.modern {
				cn, s = bb7Modern(c, pcapgen.ConnOptions{}, "orders-app", bb7X)
			} else {
				cn, s = bb7Legacy(c, pcapgen.ConnOptions{}, "legacy-app")
			}
			var joins []int
			for _, g := range []string{"g1", "g2"} {
				joins = append(joins, bb7CG.join(s, g, tc.member))
				bb7CG.beat(s, g, tc.member, 1)
				bb7CG.beat(s, g, tc.member, 1)
			}
			bb7CG.leave(s, "g1", tc.member)
			bb7CG.leave(s, "g2", tc.member)
			cn.Close()
			rep := bb7Run(t, c)
			bb7Expect(t, rep, tc.want)
			for r := range tc.want {
				bb7EqInts(t, r+" frames (the first request of each group)", bb7Frames(rep, r), joins)
			}
		})
	}
}

// SPEC 3.4: the property rules judge different properties of one member ID,
// and nothing makes them exclusive except 3.7's precedence sentences:
// "member-id-not-v4 | the UUID is not version 4, or is reserved" holds for
// a UUID in any encoding, beside member-id-encoding. README 8: "A member ID
// that is no UUID at all is also member-id-misaligned when the connection
// has a header instance ID"; "Base64 is decoded strictly (non-zero trailing
// bits are not a UUID); a 22- or 24-character string without + or / is read
// as URL-safe" (so Java's form with '-' and '_' is Java's form).
func TestBB7PropertyRulesCombine(t *testing.T) {
	dashUnderscore := pcapgen.SeqUUID(0x07)
	dashUnderscore[0] = 0xfb // first character '-'
	dashUnderscore[3] = 0xfc // fifth character '_'
	java := bb7J(dashUnderscore)
	if !strings.Contains(java, "-") || !strings.Contains(java, "_") {
		t.Fatalf("scenario bug: %q", java)
	}
	// A Java-form string whose last character carries non-zero trailing bits.
	const alpha = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	base := bb7J(pcapgen.SeqUUID(0x08))
	last := strings.IndexByte(alpha, base[21])
	dirty := base[:21] + string(alpha[last&0x30|0x05])
	cases := []struct {
		name   string
		modern bool
		member string
		want   map[string]int
		sev    map[string]string
	}{
		{"hex-of-v1-uuid", false, pcapgen.Hex(bb7V1(pcapgen.SeqUUID(0x09))),
			map[string]int{"member-id-encoding": 1, "member-id-not-v4": 1}, map[string]string{"member-id-encoding": "info", "member-id-not-v4": "info"}},
		{"padded-one-uuid", false, pcapgen.PaddedURL(pcapgen.OneUUID()),
			map[string]int{"member-id-encoding": 1, "member-id-not-v4": 1}, map[string]string{"member-id-encoding": "info", "member-id-not-v4": "info"}},
		{"not-uuid-with-instance-id", true, "consumer-1-1732894512",
			map[string]int{"member-id-not-uuid": 1, "member-id-misaligned": 1}, map[string]string{"member-id-not-uuid": "warn", "member-id-misaligned": "warn"}},
		{"java-form-with-dash-underscore", false, java, nil, nil},
		{"base64-with-trailing-bits", false, dirty,
			map[string]int{"member-id-not-uuid": 1}, map[string]string{"member-id-not-uuid": "warn"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			var cn *pcapgen.Conn
			var s *pcapgen.Session
			if tc.modern {
				cn, s = bb7Modern(c, pcapgen.ConnOptions{}, "orders-app", bb7X)
			} else {
				cn, s = bb7Legacy(c, pcapgen.ConnOptions{}, "legacy-app")
			}
			jf := bb7CG.join(s, "g", tc.member)
			bb7CG.beat(s, "g", tc.member, 1)
			cn.Close()
			rep := bb7Run(t, c)
			bb7Expect(t, rep, tc.want)
			for r, sev := range tc.sev {
				bb7Sev(t, rep, r, sev, "full")
				bb7EqInts(t, r+" frame", bb7Frames(rep, r), []int{jf})
			}
		})
	}
}

// ------------------------------------------------------ member-id-collision

// SPEC 3.4 member-id-collision: "two different client instances (different
// instance IDs, ...) alive at the same time use the same member ID in the
// same group"; 3.7 "once per (group, member ID, second claimant)". README 7:
// "a claim is alive while the claimant's latest connection is open"; "A
// claimant whose connections had all closed and that comes back while
// another claimant holds the ID collides too (once)". The member ID is
// Java(I1), so I2 is also member-id-misaligned once per group.
func TestBB7CollisionClaims(t *testing.T) {
	i1, i2 := pcapgen.SeqUUID(0x0a), pcapgen.SeqUUID(0x1a)
	m := bb7J(i1)
	h1 := func(p uint16) pcapgen.ConnOptions { return pcapgen.ConnOptions{Client: bb7Host("10.7.2.1", p)} }
	h2 := func(p uint16) pcapgen.ConnOptions { return pcapgen.ConnOptions{Client: bb7Host("10.7.2.2", p)} }
	t.Run("two-groups-two-findings", func(t *testing.T) {
		c := pcapgen.New(pcapgen.Options{})
		cn1, s1 := bb7Modern(c, h1(41001), "app-1", i1)
		cn2, s2 := bb7Modern(c, h2(41001), "app-2", i2)
		for _, g := range []string{"g1", "g2"} {
			bb7CG.join(s1, g, m)
			bb7CG.join(s2, g, m)
			bb7CG.beat(s1, g, m, 1)
			bb7CG.beat(s2, g, m, 1)
		}
		cn1.Close()
		cn2.Close()
		bb7Expect(t, bb7Run(t, c), map[string]int{"member-id-collision": 2, "member-id-misaligned": 2})
	})
	t.Run("not-alive-at-the-same-time", func(t *testing.T) {
		c := pcapgen.New(pcapgen.Options{})
		cn1, s1 := bb7Modern(c, h1(41001), "app-1", i1)
		bb7CG.join(s1, "g", m)
		bb7CG.leave(s1, "g", m)
		cn1.Close()
		cn2, s2 := bb7Modern(c, h2(41001), "app-2", i2)
		bb7CG.join(s2, "g", m)
		cn2.Close()
		bb7Expect(t, bb7Run(t, c), map[string]int{"member-id-misaligned": 1})
	})
	t.Run("claimant-comes-back", func(t *testing.T) {
		c := pcapgen.New(pcapgen.Options{})
		cn1, s1 := bb7Modern(c, h1(41001), "app-1", i1)
		bb7CG.join(s1, "g", m)
		cn1.Close()
		cn2, s2 := bb7Modern(c, h2(41001), "app-2", i2)
		bb7CG.join(s2, "g", m) // i1 is gone: no collision yet
		cn3, s3 := bb7Modern(c, h1(41002), "app-1", i1)
		back := bb7CG.join(s3, "g", m)
		bb7CG.beat(s2, "g", m, 1)
		bb7CG.beat(s3, "g", m, 1)
		bb7CG.beat(s3, "g", m, 1)
		cn2.Close()
		cn3.Close()
		rep := bb7Run(t, c)
		bb7Expect(t, rep, map[string]int{"member-id-collision": 1, "member-id-misaligned": 1})
		bb7EqInts(t, "member-id-collision frame", bb7Frames(rep, "member-id-collision"), []int{back})
	})
}

// ----------------------------------------------------- instance-id-shared

// SPEC 3.1 instance-id-shared: "one instance ID is used from two different
// client hosts, or with two different client IDs"; README 2: "with a second
// distinct non-empty first client ID of a connection". One host; X on four
// connections: first client ID "a" twice (the second connection later sends
// "b": client-id-changed, but not a first client ID), null, and empty.
// Not shared. And ONE_UUID from two hosts is both reserved and shared, each
// "once per instance ID" (3.7).
func TestBB7SharedCountsFirstClientIDs(t *testing.T) {
	t.Run("later-client-id-is-not-a-second-client", func(t *testing.T) {
		c := pcapgen.New(pcapgen.Options{})
		for i, first := range []*string{pcapgen.Ptr("a"), pcapgen.Ptr("a"), nil, pcapgen.Ptr("")} {
			cn := c.Conn(pcapgen.ConnOptions{Client: bb7Host("10.7.3.1", uint16(41001+i))})
			s := cn.Session(pcapgen.RequestHeader{ClientID: first, InstanceID: &bb7X, CorrelationID: 1})
			bb7Meta(s)
			s.Header.ClientID = nil
			bb7Meta(s)
			if i == 1 {
				s.Header.ClientID = pcapgen.Ptr("b")
				bb7Meta(s)
			}
			cn.Close()
		}
		rep := bb7Run(t, c)
		got := bb7Counts(rep)
		if got["instance-id-shared"] != 0 || got["client-id-changed"] != 1 {
			t.Errorf("instance-id-shared %d (want 0), client-id-changed %d (want 1)\n%s", got["instance-id-shared"], got["client-id-changed"], rep.summary())
		}
	})
	t.Run("one-uuid-from-two-hosts", func(t *testing.T) {
		c := pcapgen.New(pcapgen.Options{})
		one := pcapgen.OneUUID()
		var second int
		for i, h := range []string{"10.7.3.1", "10.7.3.2"} {
			cn := c.Conn(pcapgen.ConnOptions{Client: bb7Host(h, 41001)})
			s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("a"), InstanceID: &one, CorrelationID: 1})
			if f := bb7Meta(s); i == 1 {
				second = f
			}
			s.Header.ClientID = nil
			bb7Meta(s)
			cn.Close()
		}
		rep := bb7Run(t, c)
		bb7Expect(t, rep, map[string]int{"instance-id-reserved": 1, "instance-id-shared": 1})
		bb7Sev(t, rep, "instance-id-shared", "warn", "full")
		bb7EqInts(t, "instance-id-shared frame", bb7Frames(rep, "instance-id-shared"), []int{second})
	})
}

// --------------------------------------------------------- tagged fields

// SPEC 1: "Tags must be strictly ascending ... Unknown tags are skipped,
// never fatal"; 3.1 instance-id-malformed: "tag 0 present with size != 16,
// duplicate tags, descending tags, or tagged-field bytes that overrun the
// header" (any tags, not only tag 0); 3.7 "A request whose tag 0 is
// malformed neither sets nor breaks the connection's instance-ID state".
// First X, then the request under test, then X again. Ascending unknown
// tags without tag 0 are well formed and carry no instance ID: dropped.
func TestBB7MalformedTagVariants(t *testing.T) {
	seventeen := append([]byte{1, 0, 17}, make([]byte, 17)...)
	seventeen[3] = 0x81
	cases := []struct {
		name string
		tags []byte
		want map[string]int
	}{
		{"unknown-tags-descending", []byte{2, 5, 1, 'a', 3, 1, 'b'}, map[string]int{"instance-id-malformed": 1}},
		{"unknown-tag-duplicate", []byte{2, 5, 1, 'a', 5, 1, 'b'}, map[string]int{"instance-id-malformed": 1}},
		{"tag0-size-0", []byte{1, 0, 0}, map[string]int{"instance-id-malformed": 1}},
		{"tag0-size-17", seventeen, map[string]int{"instance-id-malformed": 1}},
		{"unknown-tags-ascending-no-tag0", []byte{2, 1, 1, 'a', 5, 1, 'b'}, map[string]int{"instance-id-dropped": 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			cn, s := bb7Modern(c, pcapgen.ConnOptions{}, "orders-app", bb7X)
			s.Header.RawTags = tc.tags
			f := bb7Meta(s)
			s.Header.RawTags = nil
			bb7Meta(s)
			cn.Close()
			rep := bb7Run(t, c)
			bb7Expect(t, rep, tc.want)
			for r := range tc.want {
				bb7Sev(t, rep, r, "error", "full")
				bb7EqInts(t, r+" frame", bb7Frames(rep, r), []int{f})
			}
		})
	}
}

// ------------------------------------------------------------ client ID

// SPEC 3.2 client-id-changed "a later request carries a non-null client ID
// different from the first request's", client-id-missing-first "the first
// request's client ID is null or empty but a later request sets one"; README
// 4: "A later empty client ID is non-null, so it is client-id-changed when
// the first was set"; "client-id-changed and client-id-missing-first fire
// once per offending request; after a null or empty first client ID, every
// later request that sets one is client-id-missing-first only". Legacy
// clients (no instance ID, so no client-id-repeated).
func TestBB7ClientIDRulesPerRequest(t *testing.T) {
	p := pcapgen.Ptr[string]
	cases := []struct {
		name  string
		first *string
		later []*string
		rule  string
		hits  []int // indexes into later of the offending requests
	}{
		{"changed-each-request", p("a"), []*string{p("b"), p("b"), p("a"), nil, p("c"), p("")}, "client-id-changed", []int{0, 1, 4, 5}},
		{"missing-first-null", nil, []*string{p("a"), nil, p("a"), p("b")}, "client-id-missing-first", []int{0, 2, 3}},
		{"missing-first-empty", p(""), []*string{p("a"), p("b")}, "client-id-missing-first", []int{0, 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			cn := c.Conn(pcapgen.ConnOptions{})
			s := cn.Session(pcapgen.RequestHeader{ClientID: tc.first, CorrelationID: 1})
			bb7Meta(s)
			var frames []int
			for _, cid := range tc.later {
				s.Header.ClientID = cid
				frames = append(frames, bb7Meta(s))
			}
			cn.Close()
			rep := bb7Run(t, c)
			bb7Expect(t, rep, map[string]int{tc.rule: len(tc.hits)})
			var want []int
			for _, i := range tc.hits {
				want = append(want, frames[i])
			}
			bb7EqInts(t, tc.rule+" frames", bb7Frames(rep, tc.rule), want)
			bb7Sev(t, rep, tc.rule, "warn", "full")
			if tc.rule == "client-id-changed" {
				for _, f := range bb7All(rep, tc.rule) {
					if f.Expected != "a" {
						t.Errorf("client-id-changed at frame %d: expected %q, want the first request's %q", f.Frame, f.Expected, "a")
					}
				}
			}
		})
	}
}

// SPEC 3.2 client-id-repeated: "the finding counts the bytes that sending
// null would save", 3.7 "once per connection, when the connection ends,
// with the bytes saved"; README 4: "its observed value gives the request
// count and the bytes null would save", and a later empty client ID is
// client-id-changed "(but no repeat: there are no bytes to save)". A
// KIP-1313 client repeats "orders-app" (10 bytes) on 3 later requests,
// sends "" once and null once: 3 requests, 30 bytes.
func TestBB7ClientIDRepeatedObserved(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn, s := bb7Modern(c, pcapgen.ConnOptions{}, "orders-app", bb7X)
	for _, cid := range []*string{pcapgen.Ptr("orders-app"), pcapgen.Ptr(""), pcapgen.Ptr("orders-app"), nil, pcapgen.Ptr("orders-app")} {
		s.Header.ClientID = cid
		bb7Meta(s)
	}
	cn.Close()
	rep := bb7Run(t, c)
	bb7Expect(t, rep, map[string]int{"client-id-repeated": 1, "client-id-changed": 1})
	for _, f := range bb7All(rep, "client-id-repeated") {
		var nums []int
		for _, m := range regexp.MustCompile(`\d+`).FindAllString(f.Observed, -1) {
			n, _ := strconv.Atoi(m)
			nums = append(nums, n)
		}
		sort.Ints(nums)
		if fmt.Sprint(nums) != fmt.Sprint([]int{3, 30}) {
			t.Errorf("client-id-repeated observed %q: numbers %v, want the request count 3 and the bytes 30 (README 4)", f.Observed, nums)
		}
	}
}

// ------------------------------------------------------------- telemetry

// SPEC 3.3 telemetry-id-not-adopted: "after the broker assigned B (legacy
// flow), a later telemetry request from the same client instance uses an ID
// other than B"; README 5: "and so is asking again with body 0 on the
// connection that was given B"; 3.7: "PushTelemetry with a zero body ID is
// telemetry-id-zero-push only".
func TestBB7TelemetryAskAgainWithZero(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn, s := bb7Legacy(c, pcapgen.ConnOptions{}, "legacy-app")
	s.RoundTrip(pcapgen.GetTelemetrySubscriptions(bb7Zero), pcapgen.GetTelemetrySubscriptionsResponse(bb7ErrNone, bb7B, 7))
	s.RoundTrip(pcapgen.PushTelemetry(bb7B, 7), pcapgen.PushTelemetryResponse(bb7ErrNone))
	again, _ := s.RoundTrip(pcapgen.GetTelemetrySubscriptions(bb7Zero), pcapgen.GetTelemetrySubscriptionsResponse(bb7ErrNone, bb7B, 8))
	s.RoundTrip(pcapgen.PushTelemetry(bb7B, 8), pcapgen.PushTelemetryResponse(bb7ErrNone))
	zero, _ := s.RoundTrip(pcapgen.PushTelemetry(bb7Zero, 8), pcapgen.PushTelemetryResponse(bb7ErrInvalidRequest))
	cn.Close()
	rep := bb7Run(t, c)
	bb7Expect(t, rep, map[string]int{"telemetry-id-not-adopted": 1, "telemetry-id-zero-push": 1})
	bb7EqInts(t, "telemetry-id-not-adopted frame", bb7Frames(rep, "telemetry-id-not-adopted"), []int{again})
	bb7EqInts(t, "telemetry-id-zero-push frame", bb7Frames(rep, "telemetry-id-zero-push"), []int{zero})
	for _, f := range bb7All(rep, "telemetry-id-not-adopted") {
		if f.Expected != bb7J(bb7B) {
			t.Errorf("telemetry-id-not-adopted expected %q, want B %s", f.Expected, bb7J(bb7B))
		}
	}
}

// -------------------------------------------------- confidence, mid-stream

// SPEC 2: "A connection joined mid-stream still yields findings, but any
// finding that depends on the first request carries "confidence":
// "partial"". README 3 names those rules: "instance-id-dropped/-changed/
// -late/-repeated, client-id-*, member-id-changed, telemetry-id-not-adopted";
// every other rule judges the request itself and stays full. Each scenario
// on its own connection without a handshake.
func TestBB7MidstreamConfidenceByRule(t *testing.T) {
	a := bb7J(pcapgen.SeqUUID(0x0b))
	b := bb7J(pcapgen.SeqUUID(0x1b))
	mid := pcapgen.ConnOptions{NoSYN: true}
	cases := []struct {
		name string
		play func(c *pcapgen.Capture)
		want map[string]int
		conf string
	}{
		{"member-id-changed", func(c *pcapgen.Capture) {
			cn, s := bb7Legacy(c, mid, "legacy-app")
			bb7CG.join(s, "g", a)
			bb7CG.leave(s, "g", a)
			bb7CG.join(s, "g", b)
			cn.Close()
		}, map[string]int{"member-id-changed": 1}, "partial"},
		{"telemetry-id-not-adopted", func(c *pcapgen.Capture) {
			cn, s := bb7Legacy(c, mid, "legacy-app")
			s.RoundTrip(pcapgen.GetTelemetrySubscriptions(bb7Zero), pcapgen.GetTelemetrySubscriptionsResponse(bb7ErrNone, bb7B, 7))
			s.RoundTrip(pcapgen.PushTelemetry(bb7C, 7), pcapgen.PushTelemetryResponse(bb7ErrNone))
			cn.Close()
		}, map[string]int{"telemetry-id-not-adopted": 1}, "partial"},
		{"client-id-missing-first", func(c *pcapgen.Capture) {
			// The first request captured has a null client ID (clean v2
			// header at the first byte captured, answered: README 13).
			cn := c.Conn(mid)
			s := cn.Session(pcapgen.RequestHeader{CorrelationID: 40})
			bb7Meta(s)
			s.Header.ClientID = pcapgen.Ptr("legacy-app")
			bb7Meta(s)
			cn.Close()
		}, map[string]int{"client-id-missing-first": 1}, "partial"},
		{"ghost-member", func(c *pcapgen.Capture) {
			cn, s := bb7Legacy(c, mid, "legacy-app")
			bb7CG.send(s, "g", a, 0)
			bb7CG.join(s, "g", b)
			cn.Close()
		}, map[string]int{"ghost-member": 1}, "full"},
		{"member-id-empty-and-broker-rules", func(c *pcapgen.Capture) {
			cn, s := bb7Legacy(c, mid, "legacy-app")
			bb7CG.rt(s, "g", "", 0, bb7ErrNone, pcapgen.Ptr("assigned-1"), 1)
			cn.Close()
		}, map[string]int{"member-id-empty": 1, "broker-generated-member-id": 1, "broker-accepted-invalid": 1}, "full"},
		{"leave-without-member-id", func(c *pcapgen.Capture) {
			cn, s := bb7Legacy(c, mid, "legacy-app")
			bb7CG.rt(s, "g", "", -1, bb7ErrUnknownMember, nil, 0)
			cn.Close()
		}, map[string]int{"leave-without-member-id": 1}, "full"},
		{"member-id-misaligned", func(c *pcapgen.Capture) {
			cn, s := bb7Modern(c, mid, "orders-app", bb7X)
			bb7CG.join(s, "g", bb7J(bb7Y))
			cn.Close()
		}, map[string]int{"member-id-misaligned": 1}, "full"},
		{"telemetry-id-requested-with-header", func(c *pcapgen.Capture) {
			cn, s := bb7Modern(c, mid, "orders-app", bb7X)
			s.RoundTrip(pcapgen.GetTelemetrySubscriptions(bb7Zero), pcapgen.GetTelemetrySubscriptionsResponse(bb7ErrInvalidRequest, bb7Zero, 0))
			cn.Close()
		}, map[string]int{"telemetry-id-requested-with-header": 1}, "full"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			tc.play(c)
			rep := bb7Run(t, c)
			bb7Expect(t, rep, tc.want)
			for _, f := range rep.Findings {
				if f.Confidence != tc.conf {
					t.Errorf("%s at frame %d: confidence %q, want %q", f.Rule, f.Frame, f.Confidence, tc.conf)
				}
			}
			if n := rep.Totals.Coverage["midstream-join"]; n != 1 {
				t.Errorf("midstream-join %d, want 1", n)
			}
		})
	}
}

// ------------------------------------------------------------ idle connections

// README "where SPEC.md is silent" 16: "Idle connections are ended after 10
// minutes of packet time without a packet (Kafka's own
// connections.max.idle.ms default); a connection that speaks again later is
// a new, mid-stream connection." A KIP-1313 client with X falls silent, then
// (same 4-tuple, no handshake) sends requests with Y. After 9 minutes it is
// the same connection: instance-id-changed per request (full). After 11
// minutes (another client's traffic keeps packet time moving) it is a new
// mid-stream connection whose first request carries Y: nothing to compare,
// no finding; midstream-join counted once, and it counts as one more TCP
// connection followed (README 14).
func TestBB7IdleConnectionEnds(t *testing.T) {
	for _, tc := range []struct {
		idle  time.Duration
		want  map[string]int
		mid   int
		conns int
	}{
		{9 * time.Minute, map[string]int{"instance-id-changed": 2}, 0, 2},
		{11 * time.Minute, nil, 1, 3},
	} {
		t.Run(tc.idle.String(), func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			cn, s := bb7Modern(c, pcapgen.ConnOptions{Client: bb7Host("10.7.4.1", 41001)}, "orders-app", bb7X)
			bb7Meta(s)
			other, os := bb7Modern(c, pcapgen.ConnOptions{Client: bb7Host("10.7.4.2", 41001)}, "other-app", bb7C)
			for el := time.Duration(0); el < tc.idle; el += time.Minute {
				c.Sleep(time.Minute)
				bb7Meta(os)
			}
			other.Close()
			s.Header.InstanceID = &bb7Y
			bb7Meta(s)
			bb7Meta(s)
			cn.Close()
			rep := bb7Run(t, c)
			bb7Expect(t, rep, tc.want)
			bb7Sev(t, rep, "instance-id-changed", "error", "full")
			if n := rep.Totals.Coverage["midstream-join"]; n != tc.mid {
				t.Errorf("midstream-join %d, want %d", n, tc.mid)
			}
			if rep.Totals.Connections != tc.conns {
				t.Errorf("connections %d, want %d (README 14: every TCP connection followed)", rep.Totals.Connections, tc.conns)
			}
		})
	}
}

// --------------------------------------------------------------- framing

// SPEC 1: "A frame size < 8 or > 100 MiB (configurable) is a framing error";
// 6 "--max-frame BYTES". The limit is inclusive: a request whose size field
// equals --max-frame is no framing error, one byte more is.
func TestBB7MaxFrameBoundary(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn, s := bb7Legacy(c, pcapgen.ConnOptions{}, "big-app")
	corr, frame := s.Encode(pcapgen.Produce(7, "orders", bb7Zero, make([]byte, 3000)))
	cn.Send(frame)
	s.Respond(corr, pcapgen.ProduceResponse(7, "orders", bb7Zero))
	bb7Meta(s)
	cn.Close()
	size := int(binary.BigEndian.Uint32(frame[:4]))
	path := bbCaptureFile(t, c, "")
	for _, tc := range []struct {
		max     int
		framing bool
	}{{size, false}, {size + 1, false}, {size - 1, true}} {
		rep := bb7Read(t, path, "--max-frame", strconv.Itoa(tc.max))
		n := rep.Totals.Coverage["framing-error"]
		if tc.framing && n < 1 {
			t.Errorf("--max-frame %d, request size %d: framing-error %d, want >= 1", tc.max, size, n)
		}
		if !tc.framing && n != 0 {
			t.Errorf("--max-frame %d, request size %d: framing-error %d, want 0 (only a size > max is an error)", tc.max, size, n)
		}
	}
}

// README 13: "SPEC.md's minimum frame size of 8 applies to requests (header
// v0 is 8 bytes); a real response can be shorter (Heartbeat v0: correlation
// ID and error code, 6 bytes), so only responses under 4 bytes are framing
// errors." SPEC 1: responses are matched by correlation ID.
func TestBB7ShortResponses(t *testing.T) {
	hb := func() *kmsg.HeartbeatRequest {
		r := kmsg.NewPtrHeartbeatRequest()
		r.Version = 0
		r.Group = "classic-group"
		r.Generation = 1
		r.MemberID = "consumer-1-abc"
		return r
	}
	t.Run("heartbeat-v0-6-bytes", func(t *testing.T) {
		c := pcapgen.New(pcapgen.Options{})
		cn, s := bb7Legacy(c, pcapgen.ConnOptions{}, "classic-app")
		corr, _ := s.Request(hb())
		resp := pcapgen.EncodeResponse(corr, 0, kmsg.NewPtrHeartbeatResponse())
		if n := binary.BigEndian.Uint32(resp[:4]); n != 6 {
			t.Fatalf("scenario bug: Heartbeat v0 response size %d", n)
		}
		cn.Reply(resp)
		bb7Meta(s)
		cn.Close()
		rep := bb7Run(t, c)
		bb7Expect(t, rep, nil)
		for _, ev := range []string{"framing-error", "unmatched-response", "stream-gap"} {
			if n := rep.Totals.Coverage[ev]; n != 0 {
				t.Errorf("%s %d, want 0", ev, n)
			}
		}
		if rep.Totals.Requests != 3 || rep.Totals.Responses != 3 {
			t.Errorf("requests %d responses %d, want 3 and 3", rep.Totals.Requests, rep.Totals.Responses)
		}
	})
	t.Run("response-3-bytes", func(t *testing.T) {
		c := pcapgen.New(pcapgen.Options{})
		cn, s := bb7Legacy(c, pcapgen.ConnOptions{}, "classic-app")
		s.Request(hb())
		cn.Reply([]byte{0, 0, 0, 3, 0, 0, 2})
		cn.Close()
		rep := bb7Run(t, c)
		if n := rep.Totals.Coverage["framing-error"]; n < 1 {
			t.Errorf("framing-error %d on a 3-byte response, want >= 1", n)
		}
	})
}

// ------------------------------------------------------------- command line

// README (Commands): "--workers N (connections sharded by flow over N
// goroutines ...; the report is byte for byte the same for any N)". A capture
// of interleaved connections with findings of every kind, read with 1, 2, 3
// and 4 workers, in json and ndjson.
func TestBB7WorkersSameReport(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{Perturb: pcapgen.Perturb{MSS: 40}})
	type cl struct {
		cn *pcapgen.Conn
		s  *pcapgen.Session
	}
	var cls []cl
	for i := 0; i < 6; i++ {
		o := pcapgen.ConnOptions{Client: bb7Host(fmt.Sprintf("10.7.5.%d", i+1), 41001)}
		if i%2 == 0 {
			cn, s := bb7Modern(c, o, "app", bb7X)
			cls = append(cls, cl{cn, s})
		} else {
			cn, s := bb7Legacy(c, o, fmt.Sprintf("legacy-%d", i))
			cls = append(cls, cl{cn, s})
		}
	}
	m := bb7J(pcapgen.SeqUUID(0x0c))
	for round := 0; round < 3; round++ {
		for i, x := range cls {
			switch round {
			case 0:
				bb7CG.join(x.s, "g", m)
			case 1:
				x.s.Header.InstanceID = &bb7Y
				x.s.Header.ClientID = pcapgen.Ptr(fmt.Sprintf("other-%d", i))
				bb7Meta(x.s)
			case 2:
				x.s.RoundTrip(pcapgen.PushTelemetry(bb7Zero, 7), pcapgen.PushTelemetryResponse(bb7ErrNone))
			}
		}
	}
	for _, x := range cls {
		x.cn.Close()
	}
	path := bbCaptureFile(t, c, "")
	for _, format := range []string{"json", "ndjson"} {
		var first string
		for _, w := range []string{"1", "2", "3", "4"} {
			code, out, errOut := runKwatch("read", "--format", format, "--fail-on", "never", "--workers", w, path)
			if code != 0 {
				t.Fatalf("--workers %s: exit %d (%s)", w, code, errOut)
			}
			if w == "1" {
				first = out
				if strings.Count(out, `"rule"`) < 10 {
					t.Fatalf("scenario gives too few findings:\n%s", out)
				}
				continue
			}
			if out != first {
				t.Errorf("--format %s --workers %s: report differs from --workers 1", format, w)
			}
		}
	}
}

// SPEC 5: "2 when the input cannot be read or the command line is wrong
// (with a one-line reason on stderr)", for the README's numeric flags.
func TestBB7NumericFlagErrors(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn, s := bb7Legacy(c, pcapgen.ConnOptions{}, "app")
	bb7Meta(s)
	cn.Close()
	path := bbCaptureFile(t, c, "")
	for _, args := range [][]string{
		{"read", "--member-id-required-from", "one", path},
		{"read", "--workers", "many", path},
		{"read", "--max-frame", "big", path},
	} {
		code, out, errOut := runKwatch(args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
		if errOut == "" || strings.Count(strings.TrimRight(errOut, "\n"), "\n") != 0 {
			t.Errorf("%v: stderr %q, want one line", args, errOut)
		}
		if out != "" {
			t.Errorf("%v: stdout %q on a usage error", args, out)
		}
	}
}

// ------------------------------------------------------------ more boundaries

// SPEC 1: "Other bodies are skipped by length, never parsed: Produce and
// Fetch payloads must cost no more than the bytes they occupy in the
// capture." A Produce whose records are copies of a whole Kafka request
// frame (another client ID, another instance ID) and a Fetch response whose
// records are copies of a response frame, cut into 64-byte segments: the
// copies are payload, not requests or responses.
func TestBB7PayloadsSkippedByLength(t *testing.T) {
	fakeReq := pcapgen.EncodeRequest(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("evil"), InstanceID: &bb7Y, CorrelationID: 999}, pcapgen.Metadata(12, "x"))
	fakeResp := pcapgen.EncodeResponse(4242, 12, pcapgen.MetadataResponse(12, "10.9.9.9", 9092))
	var reqs, resps []byte
	for i := 0; i < 5; i++ {
		reqs = append(reqs, fakeReq...)
		resps = append(resps, fakeResp...)
	}
	c := pcapgen.New(pcapgen.Options{Perturb: pcapgen.Perturb{MSS: 64}})
	cn, s := bb7Modern(c, pcapgen.ConnOptions{}, "orders-app", bb7X)
	s.RoundTrip(pcapgen.Produce(9, "orders", bb7Zero, reqs), pcapgen.ProduceResponse(9, "orders", bb7Zero))
	s.RoundTrip(pcapgen.Fetch(12, "orders", bb7Zero), pcapgen.FetchResponse(12, "orders", bb7Zero, resps))
	bb7Meta(s)
	cn.Close()
	rep := bb7Run(t, c)
	bb7Expect(t, rep, nil)
	if rep.Totals.Requests != 4 || rep.Totals.Responses != 4 {
		t.Errorf("requests %d responses %d, want 4 and 4 (payload copies are no PDUs)", rep.Totals.Requests, rep.Totals.Responses)
	}
	for _, ev := range []string{"framing-error", "unmatched-response", "stream-gap"} {
		if n := rep.Totals.Coverage[ev]; n != 0 {
			t.Errorf("%s %d, want 0", ev, n)
		}
	}
}

// README 6: ghost-member is "a join with B while the client's previous join
// with A != B has no response yet (or never gets one) or got an error (an
// answer whose body kwatch cannot decode is neither: no ghost is claimed on
// it)". Two joins pipelined in one write (A, then B before A's answer), both
// answered afterwards: ghost-member at B. A join with A whose answer is
// undecodable (a truncated body), then a join with B: no ghost-member; the
// client still uses a second member ID (SPEC 3.4 member-id-changed).
func TestBB7GhostPipelinedAndUndecodable(t *testing.T) {
	a := bb7J(pcapgen.SeqUUID(0x0d))
	b := bb7J(pcapgen.SeqUUID(0x1d))
	t.Run("pipelined", func(t *testing.T) {
		c := pcapgen.New(pcapgen.Options{})
		cn, s := bb7Legacy(c, pcapgen.ConnOptions{}, "legacy-app")
		corrs, frames := s.Pipeline(bb7CG.req("g", a, 0), bb7CG.req("g", b, 0))
		s.Respond(corrs[0], bb7CG.resp(bb7ErrNone, &a, 1))
		s.Respond(corrs[1], bb7CG.resp(bb7ErrNone, &b, 1))
		cn.Close()
		rep := bb7Run(t, c)
		bb7Expect(t, rep, map[string]int{"ghost-member": 1})
		bb7EqInts(t, "ghost-member frame", bb7Frames(rep, "ghost-member"), []int{frames[1]})
	})
	t.Run("undecodable-answer", func(t *testing.T) {
		c := pcapgen.New(pcapgen.Options{})
		cn, s := bb7Legacy(c, pcapgen.ConnOptions{}, "legacy-app")
		corr, _ := s.Request(bb7CG.req("g", a, 0))
		cn.Reply(pcapgen.EncodeResponseRaw(corr, 1, []byte{0, 0}))
		jf := bb7CG.join(s, "g", b)
		cn.Close()
		rep := bb7Run(t, c)
		bb7Expect(t, rep, map[string]int{"member-id-changed": 1})
		bb7EqInts(t, "member-id-changed frame", bb7Frames(rep, "member-id-changed"), []int{jf})
	})
}

// README 7: member-id-collision claimants are "instance IDs, or client
// host:port without one"; "Broker-assigned IDs count too". Two legacy
// consumers on two hosts, both below the required version (v0: empty joins
// are member-id-empty, info), are given the same member ID by the broker
// and heartbeat with it at the same time: one collision.
func TestBB7BrokerAssignedCollision(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	dup := "broker-assigned-dup"
	cn1, s1 := bb7Legacy(c, pcapgen.ConnOptions{Client: bb7Host("10.7.7.1", 41001)}, "app-1")
	cn2, s2 := bb7Legacy(c, pcapgen.ConnOptions{Client: bb7Host("10.7.7.2", 41001)}, "app-2")
	v0 := bb7CG.at(0)
	v0.rt(s1, "g", "", 0, bb7ErrNone, &dup, 1)
	v0.rt(s2, "g", "", 0, bb7ErrNone, &dup, 1)
	v0.beat(s1, "g", dup, 1)
	v0.beat(s2, "g", dup, 1)
	cn1.Close()
	cn2.Close()
	rep := bb7Run(t, c)
	bb7Expect(t, rep, map[string]int{"member-id-empty": 2, "member-id-collision": 1})
	bb7Sev(t, rep, "member-id-empty", "info", "")
	bb7Sev(t, rep, "member-id-collision", "error", "")
}

// SPEC 3.4 member-id-changed: "the same client (connection, or instance ID
// across connections) uses a second member ID in the same group";
// member-id-collision needs "two different client instances". One instance
// on two open connections (same host) with two member IDs in one group is a
// change, not a collision; the second ID is also misaligned. (Whether the
// first connection's next heartbeat with the first ID is a second
// member-id-changed -- "A, B, A" -- SPEC leaves open: not asserted.)
func TestBB7SameInstanceTwoMemberIDsAtOnce(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn1, s1 := bb7Modern(c, pcapgen.ConnOptions{Client: bb7Host("10.7.8.1", 41001)}, "app", bb7X)
	cn2, s2 := bb7Modern(c, pcapgen.ConnOptions{Client: bb7Host("10.7.8.1", 41002), Broker: bb7Host("10.0.0.2", 9092)}, "app", bb7X)
	bb7CG.join(s1, "g", bb7J(bb7X))
	jf := bb7CG.join(s2, "g", bb7J(bb7Y))
	bb7CG.beat(s1, "g", bb7J(bb7X), 1)
	cn1.Close()
	cn2.Close()
	rep := bb7Run(t, c)
	got := bb7Counts(rep)
	if got["member-id-collision"] != 0 || got["member-id-misaligned"] != 1 || got["member-id-changed"] < 1 || len(got) != 2 {
		t.Errorf("want member-id-changed (>= 1), member-id-misaligned 1, no collision\n%s", rep.summary())
	}
	if fs := bb7Frames(rep, "member-id-changed"); len(fs) == 0 || fs[0] != jf {
		t.Errorf("member-id-changed frames %v, want the first at %d", fs, jf)
	}
}

// SPEC 3.7: request rules (3.1 "malformed") "fire once per offending
// request"; README 1: the first request "is the first v2-header request whose
// tagged fields are well formed". Two malformed requests are two findings;
// a malformed first request followed by one without an ID and then one with
// X is instance-id-late (the well-formed request without an ID is first).
func TestBB7MalformedCounts(t *testing.T) {
	bad := []byte{1, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8}
	t.Run("twice", func(t *testing.T) {
		c := pcapgen.New(pcapgen.Options{})
		cn, s := bb7Modern(c, pcapgen.ConnOptions{}, "orders-app", bb7X)
		s.Header.RawTags = bad
		f1 := bb7Meta(s)
		f2 := bb7Meta(s)
		s.Header.RawTags = nil
		bb7Meta(s)
		cn.Close()
		rep := bb7Run(t, c)
		bb7Expect(t, rep, map[string]int{"instance-id-malformed": 2})
		bb7EqInts(t, "instance-id-malformed frames", bb7Frames(rep, "instance-id-malformed"), []int{f1, f2})
	})
	t.Run("malformed-none-then-id", func(t *testing.T) {
		c := pcapgen.New(pcapgen.Options{})
		cn := c.Conn(pcapgen.ConnOptions{})
		s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("orders-app"), RawTags: bad, CorrelationID: 1})
		bb7Meta(s)
		s.Header.RawTags = nil
		s.Header.ClientID = nil
		bb7Meta(s)
		s.Header.InstanceID = &bb7X
		lf := bb7Meta(s)
		cn.Close()
		rep := bb7Run(t, c)
		bb7Expect(t, rep, map[string]int{"instance-id-malformed": 1, "instance-id-late": 1})
		bb7EqInts(t, "instance-id-late frame", bb7Frames(rep, "instance-id-late"), []int{lf})
	})
}

// README 16 (idle connections end after 10 minutes of packet time) with
// README 7 ("a claim is alive while the claimant's latest connection is
// open") and README 12 (client-id-repeated's "frame is the connection's
// last"), SPEC 3.7 (client-id-repeated "once per connection, when the
// connection ends"). A third client keeps packet time moving.
func TestBB7IdleEndsClaimsAndConnections(t *testing.T) {
	m := bb7J(pcapgen.SeqUUID(0x0e))
	keepBusy := func(c *pcapgen.Capture, d time.Duration) {
		cn, s := bb7Legacy(c, pcapgen.ConnOptions{Client: bb7Host("10.7.9.9", 41009)}, "busy-app")
		for el := time.Duration(0); el < d; el += time.Minute {
			c.Sleep(time.Minute)
			bb7Meta(s)
		}
		cn.Close()
	}
	for _, tc := range []struct {
		idle      time.Duration
		collision int
	}{{9 * time.Minute, 1}, {11 * time.Minute, 0}} {
		t.Run("collision-after-"+tc.idle.String(), func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			cn1, s1 := bb7Legacy(c, pcapgen.ConnOptions{Client: bb7Host("10.7.9.1", 41001)}, "app-1")
			bb7CG.join(s1, "g", m)
			keepBusy(c, tc.idle)
			cn2, s2 := bb7Legacy(c, pcapgen.ConnOptions{Client: bb7Host("10.7.9.2", 41001)}, "app-2")
			bb7CG.join(s2, "g", m)
			cn2.Close()
			_ = cn1 // never closed: it falls silent
			bb7Expect(t, bb7Run(t, c), map[string]int{"member-id-collision": tc.collision})
		})
	}
	// README 12: client-id-repeated's frame is "the packet that ended the
	// connection", for one ended by the idle timeout its own last packet
	// (not the packet of another connection at which the timeout was
	// noticed, 10 minutes later); SPEC 3.7 "once per connection, when the
	// connection ends".
	t.Run("client-id-repeated-at-idle-end", func(t *testing.T) {
		c := pcapgen.New(pcapgen.Options{})
		cn, s := bb7Modern(c, pcapgen.ConnOptions{Client: bb7Host("10.7.9.1", 41001)}, "orders-app", bb7X)
		s.Header.ClientID = pcapgen.Ptr("orders-app")
		bb7Meta(s)
		bb7Meta(s)
		last := c.Frames()
		keepBusy(c, 11*time.Minute)
		_ = cn // never closed: it falls silent
		rep := bb7Run(t, c)
		bb7Expect(t, rep, map[string]int{"client-id-repeated": 1})
		for _, f := range bb7All(rep, "client-id-repeated") {
			if f.Frame != last {
				t.Errorf("client-id-repeated frame %d, want the connection's last packet %d", f.Frame, last)
			}
			if want := bb7Time(c, last); f.Time != want {
				t.Errorf("client-id-repeated time %s, want %s", f.Time, want)
			}
		}
	})
}

// SPEC 2: "The audit state is per TCP connection"; a connection is
// "observed from its start when its SYN or SYN-ACK was seen". A new SYN on a
// 4-tuple whose previous connection was never seen to end starts a new
// connection, which ends the old one: client-id-repeated "once per
// connection, when the connection ends" (3.7), at "the connection's last"
// frame (README 12). Likewise for a connection closed with FIN. And a member ID claim ends with
// its connection, however it ends (README 7 "a claim is alive while the
// claimant's latest connection is open"): after an RST, another host's join
// with the same member ID is no collision.
func TestBB7ConnectionEndsByReuseAndReset(t *testing.T) {
	// README 12: the first incarnation's finding has its own last packet,
	// not the new SYN (the next connection's packet that ended it).
	t.Run("client-id-repeated-tuple-reuse", func(t *testing.T) {
		c := pcapgen.New(pcapgen.Options{})
		o := pcapgen.ConnOptions{Client: bb7Host("10.7.10.1", 41001)}
		_, s := bb7Modern(c, o, "orders-app", bb7X)
		s.Header.ClientID = pcapgen.Ptr("orders-app")
		bb7Meta(s)
		last := c.Frames()
		cn2, s2 := bb7Modern(c, o, "orders-app", bb7X)
		bb7Meta(s2)
		cn2.Close()
		rep := bb7Run(t, c)
		bb7Expect(t, rep, map[string]int{"client-id-repeated": 1})
		bb7EqInts(t, "client-id-repeated frame", bb7Frames(rep, "client-id-repeated"), []int{last})
	})
	// README 12: on a connection closed by FIN, FIN, ACK the packet that
	// ended it is the second FIN, not the final ACK that follows.
	t.Run("client-id-repeated-fin-close", func(t *testing.T) {
		c := pcapgen.New(pcapgen.Options{})
		cn, s := bb7Modern(c, pcapgen.ConnOptions{}, "orders-app", bb7X)
		s.Header.ClientID = pcapgen.Ptr("orders-app")
		bb7Meta(s)
		cn.Close()
		rep := bb7Run(t, c)
		bb7Expect(t, rep, map[string]int{"client-id-repeated": 1})
		bb7EqInts(t, "client-id-repeated frame", bb7Frames(rep, "client-id-repeated"), []int{c.Frames() - 1})
	})
	t.Run("claim-ends-with-reset", func(t *testing.T) {
		c := pcapgen.New(pcapgen.Options{})
		m := bb7J(pcapgen.SeqUUID(0x0f))
		cn1, s1 := bb7Legacy(c, pcapgen.ConnOptions{Client: bb7Host("10.7.10.1", 41001)}, "app-1")
		bb7CG.join(s1, "g", m)
		cn1.Reset()
		cn2, s2 := bb7Legacy(c, pcapgen.ConnOptions{Client: bb7Host("10.7.10.2", 41001)}, "app-2")
		bb7CG.join(s2, "g", m)
		cn2.Close()
		bb7Expect(t, bb7Run(t, c), nil)
	})
}
