package main

// SPEC.md sections 2 and 3.6: what "first" means when a connection is joined
// mid-stream or loses bytes (confidence partial), the coverage events
// (midstream-join, stream-gap, truncated-packet), resynchronisation after gaps
// in either direction, and when a connection ends (idle, reuse, reset).
// Expectations come from SPEC.md and README.md's "Rules: where SPEC.md is
// silent" only, never from kwatch's implementation.

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kwatch/kwatch/internal/pcapgen"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// SPEC section 2: "A connection joined mid-stream still yields findings, but
// any finding that depends on the first request carries "confidence":
// "partial"." Also client-id-changed depends on the first request.
func TestCoverageMidstreamPartial(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{NoSYN: true})
	s := bbSession(cn, pcapgen.Ptr("orders-app"), bbID(bbX))
	bbMeta(s)
	s.Header.InstanceID = bbID(bbY)
	s.Header.ClientID = pcapgen.Ptr("payments-app")
	bbMeta(s)
	cn.Close()
	rep := bbRun(t, c)
	if n := len(bbOf(rep, "instance-id-changed")); n != 1 {
		t.Errorf("instance-id-changed: %d findings, want 1\n%s", n, rep.summary())
	}
	if n := len(bbOf(rep, "client-id-changed")); n != 1 {
		t.Errorf("client-id-changed: %d findings, want 1\n%s", n, rep.summary())
	}
	for _, f := range rep.Findings {
		if f["rule"] == "instance-id-changed" || f["rule"] == "client-id-changed" {
			bbField(t, f, "confidence", "partial")
		}
	}
	if rep.Totals.Coverage["midstream-join"] != 1 {
		t.Errorf("coverage midstream-join %d, want 1", rep.Totals.Coverage["midstream-join"])
	}
}

// SPEC 3.7: "A connection is observed from its start when its SYN or its
// SYN-ACK was captured": without the SYN but with the SYN-ACK, findings
// are "full" and there is no midstream join.
func TestCoverageSynAckIsStart(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{SkipSYN: true})
	s := bbSession(cn, pcapgen.Ptr("orders-app"), bbID(bbX))
	bbMeta(s)
	s.Header.ClientID = nil
	s.Header.InstanceID = bbID(bbY)
	bbMeta(s)
	cn.Close()
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"instance-id-changed": 1})
	bbField(t, bbFirst(t, rep, "instance-id-changed"), "confidence", "full")
	if rep.Totals.Coverage["midstream-join"] != 0 {
		t.Errorf("coverage midstream-join %d, want 0", rep.Totals.Coverage["midstream-join"])
	}
}

// SPEC section 2: "A connection with lost bytes resyncs to the next
// plausible frame; findings after a gap carry partial too." A finding
// before the gap stays full.
func TestCoverageGapPartial(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bbSession(cn, pcapgen.Ptr("orders-app"), bbID(bbX))
	bbMeta(s)
	s.Header.ClientID = nil
	s.Header.InstanceID = bbID(bbY)
	bbMeta(s) // changed, full
	s.Header.InstanceID = bbID(bbX)
	cn.DropNext(1)
	s.Request(pcapgen.Metadata(12, "orders")) // lost
	s.Header.InstanceID = bbID(bbY)
	bbMeta(s) // changed, after the gap: partial
	cn.Close()
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"instance-id-changed": 2})
	fs := bbOf(rep, "instance-id-changed")
	if len(fs) == 2 {
		bbField(t, fs[0], "confidence", "full")
		bbField(t, fs[1], "confidence", "partial")
	}
	if rep.Totals.Coverage["stream-gap"] < 1 {
		t.Errorf("coverage stream-gap %d, want >= 1", rep.Totals.Coverage["stream-gap"])
	}
}

// SPEC section 2: "any finding that depends on the first request carries
// partial": findings that depend only on the request itself (reserved,
// malformed, PushTelemetry mismatch) stay full on a mid-stream connection.
func TestCoverageMidstreamIndependentFull(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{NoSYN: true})
	one := pcapgen.OneUUID()
	s := bbSession(cn, pcapgen.Ptr("orders-app"), &one)
	bbMeta(s)
	s.Header.ClientID = nil
	s.Header.RawTags = []byte{1, 0, 3, 1, 2, 3}
	bbMeta(s)
	s.Header.RawTags = nil
	bbPush(s, bbY, 42)
	cn.Close()
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"instance-id-reserved": 1, "instance-id-malformed": 1, "telemetry-id-mismatch": 1})
	for _, f := range rep.Findings {
		bbField(t, f, "confidence", "full")
	}
}

// SPEC section 2: "findings after a gap carry partial too": a zero push
// after lost bytes.
func TestCoverageGapPartialTelemetry(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bbSession(cn, pcapgen.Ptr("orders-app"), nil)
	bbMeta(s)
	cn.DropNext(1)
	s.Request(pcapgen.Metadata(12, "orders"))
	bbPush(s, bbZero, 42)
	cn.Close()
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"telemetry-id-zero-push": 1})
	bbField(t, bbFirst(t, rep, "telemetry-id-zero-push"), "confidence", "partial")
}

// SPEC section 2: "A connection joined mid-stream still yields findings";
// section 5: frame is "the packet that completed the request"; 3.5/3.7:
// broker-accepted-invalid once per offending request answered without 42.
// A KIP-1313 client joined mid-stream sends null client IDs (it sent its
// client ID once, before the capture started). Three PushTelemetry with
// header X and body Y (telemetry-id-mismatch, which does not depend on the
// first request), each answered NONE.
func TestCoverageMidstreamNullClientIDFrames(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{NoSYN: true})
	s := bbSession(cn, nil, bbID(bbX))
	var frames []int
	for i := 0; i < 3; i++ {
		frames = append(frames, bbPush(s, bbY, 0))
	}
	cn.Close()
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"telemetry-id-mismatch": 3, "broker-accepted-invalid": 3})
	for i, f := range bbOf(rep, "telemetry-id-mismatch") {
		if i < len(frames) {
			bbField(t, f, "frame", frames[i])
		}
	}
}

// SPEC section 2: "A connection joined mid-stream still yields findings".
// A mid-stream connection with one request (null client ID, header X, body
// Y: telemetry-id-mismatch) answered NONE; with --port naming the broker
// port it is Kafka by configuration, not by guess.
func TestCoverageMidstreamSingleRequest(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{NoSYN: true})
	s := bbSession(cn, nil, bbID(bbX))
	bbPush(s, bbY, 0)
	cn.Close()
	path := bbCaptureFile(t, c, "")
	for _, extra := range [][]string{nil, {"--port", "9092"}} {
		rep := bbRead(t, path, extra...)
		if n := len(bbOf(rep, "telemetry-id-mismatch")); n != 1 {
			t.Errorf("%v: telemetry-id-mismatch %d, spec requires 1 (requests decoded: %d)", extra, n, rep.Totals.Requests)
		}
		if n := len(bbOf(rep, "broker-accepted-invalid")); n != 1 {
			t.Errorf("%v: broker-accepted-invalid %d, spec requires 1", extra, n)
		}
	}
}

// SPEC 3.1 instance-id-malformed on a mid-stream connection of a KIP-1313
// client (null client IDs): "A connection joined mid-stream still yields
// findings".
func TestCoverageMidstreamMalformed(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	bbPlay(c, pcapgen.ConnOptions{NoSYN: true}, []bbStep{
		{id: bbID(bbX), kind: "m"},
		{raw: []byte{1, 0, 3, 1, 2, 3}, kind: "m"},
		{id: bbID(bbX), kind: "p", r: bbX},
	})
	path := bbCaptureFile(t, c, "")
	for _, extra := range [][]string{nil, {"--port", "9092"}} {
		rep := bbRead(t, path, extra...)
		if n := len(bbOf(rep, "instance-id-malformed")); n != 1 {
			t.Errorf("%v: instance-id-malformed %d, spec requires 1 (requests decoded: %d of 3)", extra, n, rep.Totals.Requests)
		}
	}
}

// ---------------------------------------------------- coverage and section 2

// Section 2: "A connection is observed from its start when its SYN or
// SYN-ACK was seen". With only the SYN-ACK (SkipSYN) there is no
// midstream-join, and a finding depending on the first request
// (instance-id-late) is "full".
func TestCoverageSynAckIsStartMember(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{SkipSYN: true})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("app"), CorrelationID: 1})
	s.RoundTrip(pcapgen.APIVersions(4, "x", "1"), pcapgen.APIVersionsResponse(4))
	inst := pcapgen.SeqUUID(0x60)
	s.Header.InstanceID = &inst
	s.Header.ClientID = nil
	lf, _ := s.RoundTrip(pcapgen.Metadata(12, "t"), pcapgen.MetadataResponse(12, "10.0.0.1", 9092))
	cn.Close()
	rep := bbRun2(t, c)
	bbExpect(t, rep, map[string]int{"instance-id-late": 1})
	bbCheck(t, rep, "instance-id-late", "error", "full", lf)
	if n := rep.Totals.Coverage["midstream-join"]; n != 0 {
		t.Errorf("midstream-join %d with a SYN-ACK seen, want 0", n)
	}
}

// Section 2: "A connection joined mid-stream still yields findings, but any
// finding that depends on the first request carries confidence partial";
// 3.6 midstream-join is counted.
func TestCoverageMidstreamPartialMember(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{NoSYN: true})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("app"), CorrelationID: 100})
	s.RoundTrip(pcapgen.Metadata(12, "t"), pcapgen.MetadataResponse(12, "10.0.0.1", 9092))
	inst := pcapgen.SeqUUID(0x61)
	s.Header.InstanceID = &inst
	s.Header.ClientID = nil
	lf, _ := s.RoundTrip(pcapgen.Metadata(12, "t"), pcapgen.MetadataResponse(12, "10.0.0.1", 9092))
	cn.Close()
	// Member rules still run on a mid-stream connection (legacy client).
	cn2 := c.Conn(pcapgen.ConnOptions{NoSYN: true})
	s2 := cn2.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("legacy-app"), CorrelationID: 50})
	nf := cgJoin(s2, 1, bbGroup, "not-a-uuid-member")
	cn2.Close()
	rep := bbRun2(t, c)
	bbExpect(t, rep, map[string]int{"instance-id-late": 1, "member-id-not-uuid": 1})
	bbCheck(t, rep, "instance-id-late", "error", "partial", lf)
	bbCheck(t, rep, "member-id-not-uuid", "warn", "", nf)
	if n := rep.Totals.Coverage["midstream-join"]; n != 2 {
		t.Errorf("midstream-join %d, want 2", n)
	}
}

// Section 2: "A connection with lost bytes resyncs to the next plausible
// frame; findings after a gap carry partial too"; 3.6 stream-gap counted.
func TestCoverageGapPartialMember(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn, s := bbLegacy(c, pcapgen.ConnOptions{})
	a := pcapgen.JavaString(pcapgen.SeqUUID(0x62))
	b := pcapgen.JavaString(pcapgen.SeqUUID(0x63))
	cgJoin(s, 1, bbGroup, a)
	cgLeave(s, 1, bbGroup, a, -1)
	cn.DropNext(1)
	s.Request(pcapgen.Metadata(12, "lost")) // never seen, never answered
	jf := cgJoin(s, 1, bbGroup, b)
	cn.Close()
	rep := bbRun2(t, c)
	bbExpect(t, rep, map[string]int{"member-id-changed": 1})
	bbCheck(t, rep, "member-id-changed", "warn", "partial", jf)
	if n := rep.Totals.Coverage["stream-gap"]; n != 1 {
		t.Errorf("stream-gap %d, want 1", n)
	}
	// The join with B (corr 5) and its answer were both captured.
	if n := rep.Totals.Coverage["unmatched-response"]; n != 0 {
		t.Errorf("unmatched-response %d, want 0: the answer to the join with B matches a captured request", n)
	}
}

// 3.6 truncated-packet (snaplen): packets cut by the snaplen are counted.
func TestCoverageTruncatedPacket(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{Snaplen: 80})
	cn, s := bbLegacy(c, pcapgen.ConnOptions{})
	cgJoin(s, 1, bbGroup, pcapgen.JavaString(pcapgen.SeqUUID(0x68)))
	cn.Close()
	rep := bbRun2(t, c)
	if n := rep.Totals.Coverage["truncated-packet"]; n < 1 {
		t.Errorf("truncated-packet %d, want at least 1", n)
	}
}

// Section 2 "findings after a gap carry partial"; 3.7 "A member ID that a
// broker assigned (the client learned it from a heartbeat response) is the
// broker's ... the member-ID property rules ... do not judge it"; 3.5
// broker-generated-member-id. After a lost segment kwatch must resync and
// keep matching responses by correlation ID ("Responses are matched to
// requests by correlation id per connection"): the empty v1 join after the
// gap is answered with a broker-assigned, non-UUID member ID, which the
// client then uses.
func TestCoverageGapThenBrokerAssigned(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn, s := bbLegacy(c, pcapgen.ConnOptions{})
	s.RoundTrip(pcapgen.Metadata(12, "t"), pcapgen.MetadataResponse(12, "10.0.0.1", 9092))
	cn.DropNext(1)
	s.Request(pcapgen.Metadata(12, "lost")) // never seen, never answered
	assigned := "broker-assigned-member-2"
	jf, _ := s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(1, bbGroup, "", 0), pcapgen.ConsumerGroupHeartbeatResponse(1, errNone, pcapgen.Ptr(assigned), 1))
	cgBeat(s, 1, bbGroup, assigned, 1)
	cgBeat(s, 1, bbGroup, assigned, 1)
	cn.Close()
	rep := bbRun2(t, c)
	bbExpect(t, rep, map[string]int{"member-id-empty": 1, "broker-generated-member-id": 1, "broker-accepted-invalid": 1})
	bbCheck(t, rep, "member-id-empty", "error", "partial", jf)
	if n := rep.Totals.Coverage["unmatched-response"]; n != 0 {
		t.Errorf("unmatched-response %d: every response after the gap answers a request that was seen", n)
	}
	if rep.Totals.Responses != 5 {
		t.Errorf("responses %d, want 5 (ApiVersions, Metadata, 3 heartbeats)", rep.Totals.Responses)
	}
}

// Same root cause as TestCoverageGapThenBrokerAssigned, seen through
// ghost-member: "a join with member ID A got no response or an error, and
// the client retried the join with a different ID B". After an early lost
// segment the join with A is answered NONE (the capture holds the answer),
// a heartbeat is fenced, and the client rejoins with B: that is
// member-id-changed (warn, partial after the gap), not ghost-member (error).
func TestCoverageGapNoFalseGhost(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn, s := bbLegacy(c, pcapgen.ConnOptions{})
	cn.DropNext(1)
	s.Request(pcapgen.Metadata(12, "lost")) // never seen, never answered
	a := pcapgen.JavaString(pcapgen.SeqUUID(0x62))
	b := pcapgen.JavaString(pcapgen.SeqUUID(0x63))
	cgJoin(s, 1, bbGroup, a)
	s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(1, bbGroup, a, 4), pcapgen.ConsumerGroupHeartbeatResponse(1, errFencedMemberEpoch, nil, 0))
	jf := cgJoin(s, 1, bbGroup, b)
	cn.Close()
	rep := bbRun2(t, c)
	bbExpect(t, rep, map[string]int{"member-id-changed": 1})
	bbCheck(t, rep, "member-id-changed", "warn", "partial", jf)
}

func bb4Fmt(m map[string]int) string {
	var ks []string
	for k, n := range m {
		ks = append(ks, fmt.Sprintf("%s=%d", k, n))
	}
	sort.Strings(ks)
	return strings.Join(ks, " ")
}

// bb4LossSteps: a KIP-1313 client; step 2 (corr 3) or its answer is lost;
// steps 3-6 give findings after the gap.
func bb4LossSteps(cidEvery bool) []bb4Step {
	x, y := bbID(bb4X), bbID(bb4Y)
	meta := func(id *[16]byte) bb4Step {
		return bb4Step{nil, id, pcapgen.Metadata(12, "orders"), pcapgen.MetadataResponse(12, "10.0.0.1", 9092)}
	}
	steps := []bb4Step{
		{pcapgen.Ptr("orders-app"), x, pcapgen.APIVersions(3, "apache-kafka-java", "4.2.0"), pcapgen.APIVersionsResponse(3)},
		meta(x),
		{nil, x, pcapgen.Produce(9, "orders", [16]byte{}, bb4Records(600)), pcapgen.ProduceResponse(9, "orders", [16]byte{})}, // the lost one
		meta(y), // instance-id-changed
		{nil, x, pcapgen.GetTelemetrySubscriptions(bb4Z), pcapgen.GetTelemetrySubscriptionsResponse(0, [16]byte{}, 7)}, // mismatch + accepted-invalid
		{nil, x, pcapgen.ConsumerGroupHeartbeat(1, "g-empty", "", 0), pcapgen.ConsumerGroupHeartbeatResponse(1, 42, nil, 0)},
		meta(x),
	}
	if cidEvery {
		for i := range steps {
			steps[i].cid = pcapgen.Ptr("orders-app")
		}
	}
	return steps
}

// bb4Lossy writes frame in direction d losing part of it: "whole" (one
// segment, lost), "head" (the first k bytes lost, the rest seen), "tail"
// (the first k bytes seen, the rest lost), "middle" (bytes k..2k lost).
func bb4Lossy(cn *pcapgen.Conn, d pcapgen.Dir, frame []byte, mode string, k int) {
	switch mode {
	case "whole":
		cn.DropNext(1)
		cn.Raw(d, frame)
	case "head":
		cn.DropNext(1)
		cn.Raw(d, frame[:k])
		cn.Raw(d, frame[k:])
	case "tail":
		cn.Raw(d, frame[:k])
		cn.DropNext(1)
		cn.Raw(d, frame[k:])
	case "middle":
		cn.Raw(d, frame[:k])
		cn.DropNext(1)
		cn.Raw(d, frame[k:2*k])
		cn.Raw(d, frame[2*k:])
	}
}

// bb4CheckMatched checks with kwatch dump that every request with a
// correlation ID in want has a response with the same correlation ID, and
// that the requests in lost were not decoded.
func bb4CheckMatched(t *testing.T, c *pcapgen.Capture, want []int, lost []int) {
	t.Helper()
	reqs, resps := map[int]bool{}, map[int]bool{}
	for _, o := range bb4Dump(t, c) {
		corr, _ := o["correlation_id"].(float64)
		switch o["kind"] {
		case "request":
			reqs[int(corr)] = true
		case "response":
			resps[int(corr)] = true
		}
	}
	for _, w := range want {
		if !reqs[w] {
			t.Errorf("request corr %d after the gap not decoded (dump requests %v)", w, reqs)
		}
		if !resps[w] {
			t.Errorf("response corr %d after the gap not decoded/matched (dump responses %v)", w, resps)
		}
	}
	for _, l := range lost {
		if reqs[l] {
			t.Errorf("lost request corr %d appears in dump", l)
		}
	}
}

// TestCoverageLossClientAcked: SPEC 2 "A connection with lost bytes
// resyncs to the next plausible frame; findings after a gap carry partial
// too"; 3.6 stream-gap. One lost stretch in the client direction (the
// broker's answers acknowledge past it), whole segment at a frame boundary,
// or the head, tail or middle of the frame: the requests after it are
// decoded and matched with their answers, and every finding after the gap
// is partial. With client IDs null after the first request (KIP-1313
// clients) and with client IDs on every request.
func TestCoverageLossClientAcked(t *testing.T) {
	for _, cidEvery := range []bool{false, true} {
		for _, mode := range []string{"whole", "head", "tail", "middle"} {
			t.Run(fmt.Sprintf("%s-cid%v", mode, cidEvery), func(t *testing.T) {
				c := pcapgen.New(pcapgen.Options{})
				cn := c.Conn(pcapgen.ConnOptions{})
				steps := bb4LossSteps(cidEvery)
				for i, st := range steps {
					q, r := bb4Encode(i, st)
					if i == 2 {
						bb4Lossy(cn, pcapgen.ToBroker, q, mode, 200)
					} else {
						cn.Send(q)
					}
					cn.Reply(r)
				}
				cn.Close()
				rep := bbRun(t, c)
				want := map[string]int{
					"instance-id-changed/partial":     1,
					"telemetry-id-mismatch/partial":   1,
					"broker-accepted-invalid/partial": 1,
					"member-id-empty/partial":         1,
				}
				got := bb4Rules(rep, true)
				delete(got, "client-id-repeated/full")
				delete(got, "client-id-repeated/partial")
				bbCompareCounts(t, "rule/confidence", got, want, rep.summary)
				bb4CovAtLeast(t, rep, "stream-gap", 1)
				if n := rep.Totals.Coverage["unmatched-response"]; n > 1 {
					t.Errorf("unmatched-response %d: only the lost request's answer may be unmatched\n%s", n, rep.summary())
				}
				var lost []int
				if mode == "whole" || mode == "head" {
					lost = []int{3} // its header was never captured
				}
				bb4CheckMatched(t, c, []int{4, 5, 6, 7}, lost)
			})
		}
	}
}

// TestCoverageLossClientUnacked: the same loss when the broker never sends
// another packet (nothing acknowledges past the hole; the capture just
// ends). SPEC 2 "findings after a gap carry partial too": the requests after
// the hole must still be decoded when the capture ends.
func TestCoverageLossClientUnacked(t *testing.T) {
	for _, mode := range []string{"whole", "tail"} {
		t.Run(mode, func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			cn := c.Conn(pcapgen.ConnOptions{})
			for i, st := range bb4LossSteps(false) {
				q, r := bb4Encode(i, st)
				switch {
				case i < 2:
					cn.Send(q)
					cn.Reply(r)
				case i == 2:
					bb4Lossy(cn, pcapgen.ToBroker, q, mode, 200)
				default:
					cn.Send(q)
				}
			}
			rep := bbRun(t, c)
			bb4ExpectConf(t, rep, map[string]int{
				"instance-id-changed/partial":   1,
				"telemetry-id-mismatch/partial": 1,
				"member-id-empty/partial":       1,
			})
			bb4CovAtLeast(t, rep, "stream-gap", 1)
		})
	}
}

// TestCoverageLossBroker: one lost stretch in the broker direction (an
// answer, whole or in part), acknowledged by the client's later requests or
// not (the client pipelined everything before). SPEC 1 "Responses are
// matched to requests by correlation id per connection"; 2 "resyncs to the
// next plausible frame". The answers after the gap are matched (no
// unmatched-response), so broker-accepted-invalid on the GTS answered after
// the gap is still found.
func TestCoverageLossBroker(t *testing.T) {
	for _, acked := range []bool{true, false} {
		for _, mode := range []string{"whole", "head", "tail"} {
			t.Run(fmt.Sprintf("%s-acked%v", mode, acked), func(t *testing.T) {
				c := pcapgen.New(pcapgen.Options{})
				cn := c.Conn(pcapgen.ConnOptions{})
				steps := bb4LossSteps(false)
				q, r := bb4EncodeAll(steps)
				for i := 0; i < 2; i++ {
					cn.Send(q[i])
					cn.Reply(r[i])
				}
				if acked {
					for i := 2; i < len(steps); i++ {
						cn.Send(q[i])
						if i == 2 {
							bb4Lossy(cn, pcapgen.ToClient, r[i], mode, 12)
						} else {
							cn.Reply(r[i])
						}
					}
					cn.Close()
				} else {
					cn.Write(pcapgen.ToBroker, q[2:]...)
					bb4Lossy(cn, pcapgen.ToClient, r[2], mode, 12)
					for i := 3; i < len(steps); i++ {
						cn.Reply(r[i])
					}
				}
				rep := bbRun(t, c)
				bbExpect(t, rep, map[string]int{
					"instance-id-changed":     1,
					"telemetry-id-mismatch":   1,
					"broker-accepted-invalid": 1,
					"member-id-empty":         1,
				})
				bb4CovAtLeast(t, rep, "stream-gap", 1)
				bb4Cov(t, rep, "unmatched-response", 0)
				bb4CheckMatched(t, c, []int{4, 5, 6, 7}, nil)
				t.Logf("confidences: %s", bb4Fmt(bb4Rules(rep, true)))
			})
		}
	}
}

// TestCoverageMidstreamRef: SPEC 2 "A connection joined mid-stream still
// yields findings, but any finding that depends on the first request
// carries "confidence": "partial"." The reference conversation without any
// handshake packet (at a frame boundary, and segmented/reordered): same
// rules; the first-request rules (instance-id-changed, client-id-changed,
// client-id-repeated) partial; the others (a request judged on its own, the
// broker's answer to it) full. 3.6 midstream-join counted once.
func TestCoverageMidstreamRef(t *testing.T) {
	for _, p := range []pcapgen.Perturb{{}, {MSS: 100, Reorder: 3, RetransmitEvery: 4}} {
		t.Run(fmt.Sprintf("mss%d", p.MSS), func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{Perturb: p})
			bb4Ref(c, pcapgen.ConnOptions{NoSYN: true}).Close()
			rep := bbRun(t, c)
			bb4ExpectConf(t, rep, map[string]int{
				"instance-id-changed/partial":  1,
				"client-id-changed/partial":    1,
				"client-id-repeated/partial":   1,
				"telemetry-id-mismatch/full":   1,
				"broker-accepted-invalid/full": 1,
				"member-id-empty/full":         1,
			})
			bb4Cov(t, rep, "midstream-join", 1)
			if rep.Totals.Requests != bb4RefRequests || rep.Totals.Responses != bb4RefRequests {
				t.Errorf("requests %d responses %d, want %d each", rep.Totals.Requests, rep.Totals.Responses, bb4RefRequests)
			}
		})
	}
}

// bb4MidSteps: requests of a KIP-1313 client well after its first request
// (client ID null), or of a client that repeats its client ID.
func bb4MidSteps(cid *string) []bb4Step {
	x, y := bbID(bb4X), bbID(bb4Y)
	meta := func(id *[16]byte) bb4Step {
		return bb4Step{cid, id, pcapgen.Metadata(12, "orders"), pcapgen.MetadataResponse(12, "10.0.0.1", 9092)}
	}
	return []bb4Step{
		meta(x),
		meta(x),
		meta(y), // instance-id-changed
		{cid, x, pcapgen.GetTelemetrySubscriptions(bb4Z), pcapgen.GetTelemetrySubscriptionsResponse(0, [16]byte{}, 7)},
		meta(x),
		meta(x),
	}
}

// TestCoverageMidstreamMidFrame: SPEC 2 "A connection joined mid-stream
// still yields findings ... partial"; "resyncs to the next plausible frame".
// The capture starts inside a Produce request (its tail, then its answer),
// optionally preceded by the tail of a broker answer; the client's later
// requests carry a null client ID (KIP-1313 clients send it once) or a
// repeated one. instance-id-changed is still found (partial), and so are
// the per-request telemetry rules.
//
// DISCREPANCY (cidnull variants): same root cause as
// TestCoverageMidstreamFirstNullAnswered: the answer to the first
// null-client-ID request after the join (corr 51) is lost silently.
func TestCoverageMidstreamMidFrame(t *testing.T) {
	for _, cidNull := range []bool{true, false} {
		for _, brokerFirst := range []bool{false, true} {
			t.Run(fmt.Sprintf("cidnull%v-brokerfirst%v", cidNull, brokerFirst), func(t *testing.T) {
				var cid *string
				if !cidNull {
					cid = pcapgen.Ptr("orders-app")
				}
				c := pcapgen.New(pcapgen.Options{})
				cn := c.Conn(pcapgen.ConnOptions{NoSYN: true})
				if brokerFirst {
					_, r := bb4Encode(40, bb4Step{cid, bbID(bb4X), pcapgen.Metadata(12, "orders"), pcapgen.MetadataResponse(12, "10.0.0.1", 9092)})
					cn.Reply(r[len(r)/2:])
				}
				pq, pr := bb4Encode(49, bb4Step{cid, bbID(bb4X), pcapgen.Produce(9, "orders", [16]byte{}, bb4Records(800)), pcapgen.ProduceResponse(9, "orders", [16]byte{})})
				cn.Raw(pcapgen.ToBroker, pq[len(pq)-300:])
				cn.Reply(pr)
				for i, st := range bb4MidSteps(cid) {
					q, r := bb4Encode(50+i, st)
					cn.Send(q)
					cn.Reply(r)
				}
				cn.Close()
				rep := bbRun(t, c)
				got := bb4Rules(rep, true)
				delete(got, "client-id-repeated/partial")
				want := map[string]int{
					"instance-id-changed/partial": 1,
				}
				// Per-request rules: full unless kwatch counts the join as a resync.
				for _, r := range []string{"telemetry-id-mismatch", "broker-accepted-invalid"} {
					if got[r+"/full"]+got[r+"/partial"] == 1 {
						delete(got, r+"/full")
						delete(got, r+"/partial")
					} else {
						want[r] = 1
					}
				}
				bbCompareCounts(t, "rule/confidence", got, want, rep.summary)
				bb4Cov(t, rep, "midstream-join", 1)
				if rep.Totals.Requests < 6 {
					t.Errorf("requests %d, want >= 6 decoded after the join\n%s", rep.Totals.Requests, rep.summary())
				}
				bb4CheckMatched(t, c, []int{51, 52, 53, 54, 55, 56}, nil)
				if n := rep.Totals.Coverage["unmatched-response"]; n > 1 {
					t.Errorf("unmatched-response %d, want at most 1 (the answer to the unseen request)", n)
				}
			})
		}
	}
}

// TestCoverageMidstreamNullFirstAtBoundary: SPEC 2 mid-stream join; README
// 13 "a null-client-ID request is believed when it starts at the first byte
// captured ... or when the next request follows it". A capture that starts
// exactly at a null-client-ID request, segmented at 100 bytes, and one whose
// first packet is a broker answer: instance-id-dropped (partial) is still
// found, the connection yields all its requests.
func TestCoverageMidstreamNullFirstAtBoundary(t *testing.T) {
	for _, brokerFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("brokerfirst%v", brokerFirst), func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{Perturb: pcapgen.Perturb{MSS: 100}})
			cn := c.Conn(pcapgen.ConnOptions{NoSYN: true})
			if brokerFirst {
				cn.Reply(pcapgen.EncodeResponse(19, 12, pcapgen.MetadataResponse(12, "10.0.0.1", 9092)))
			}
			s := cn.Session(pcapgen.RequestHeader{InstanceID: bbID(bb4X), CorrelationID: 20})
			bbMeta(s)
			bbMeta(s)
			s.Header.InstanceID = nil
			bbMeta(s) // dropped
			s.Header.InstanceID = bbID(bb4X)
			bbMeta(s)
			cn.Close()
			rep := bbRun(t, c)
			bb4ExpectConf(t, rep, map[string]int{"instance-id-dropped/partial": 1})
			if rep.Totals.Requests != 4 {
				t.Errorf("requests %d, want 4", rep.Totals.Requests)
			}
		})
	}
}

// TestCoverageMidstreamFirstNullAnswered: SPEC 1 "Responses are matched to
// requests by correlation id per connection"; 3.5 broker-accepted-invalid
// "was answered without INVALID_REQUEST"; 5 "frame is the 1-based packet
// number ... of the packet that completed the request". A capture that
// starts inside a frame; the first whole request after it is a KIP-1313
// request (null client ID) that breaks row 5 of 3.3, and the broker accepts
// it before the client sends its next request. kwatch must report the
// mismatch at the request's own packet and judge the broker's answer.
//
// DISCREPANCY (null client ID, capture starting mid-frame): kwatch holds the
// request until the next one arrives (frame 5 instead of 3) and silently
// drops the broker's answer sent in between: no broker-accepted-invalid, no
// response, no unmatched-response.
func TestCoverageMidstreamFirstNullAnswered(t *testing.T) {
	for _, tc := range []struct {
		cidNull, midFrame bool
	}{{true, true}, {false, true}, {true, false}} {
		t.Run(fmt.Sprintf("cidnull%v-midframe%v", tc.cidNull, tc.midFrame), func(t *testing.T) {
			var cid *string
			want := map[string]int{"telemetry-id-mismatch": 1, "broker-accepted-invalid": 1}
			if !tc.cidNull {
				cid = pcapgen.Ptr("orders-app")
				want["client-id-repeated"] = 1 // 3.2: instance IDs sent, client ID repeated
			}
			c := pcapgen.New(pcapgen.Options{})
			cn := c.Conn(pcapgen.ConnOptions{NoSYN: true})
			if tc.midFrame {
				pq, pr := bb4Encode(49, bb4Step{cid, bbID(bb4X), pcapgen.Produce(9, "orders", [16]byte{}, bb4Records(800)), pcapgen.ProduceResponse(9, "orders", [16]byte{})})
				cn.Raw(pcapgen.ToBroker, pq[len(pq)-300:])
				cn.Reply(pr)
			}
			s := cn.Session(pcapgen.RequestHeader{ClientID: cid, InstanceID: bbID(bb4X), CorrelationID: 51})
			reqFrame, _ := s.RoundTrip(pcapgen.GetTelemetrySubscriptions(bb4Z), pcapgen.GetTelemetrySubscriptionsResponse(0, [16]byte{}, 7))
			bbMeta(s)
			bbMeta(s)
			cn.Close()
			rep := bbRun(t, c)
			bbExpect(t, rep, want)
			if fs := bbOf(rep, "telemetry-id-mismatch"); len(fs) == 1 && fs[0]["frame"] != float64(reqFrame) {
				t.Errorf("telemetry-id-mismatch at frame %v, the request was completed by frame %d", fs[0]["frame"], reqFrame)
			}
			if rep.Totals.Responses != 3 {
				t.Errorf("responses %d, want 3 (the answers to corr 51..53), unmatched-response %d", rep.Totals.Responses, rep.Totals.Coverage["unmatched-response"])
			}
		})
	}
}

// TestCoverageSnaplen: SPEC 3.6 "truncated-packet (snaplen)": coverage
// events "keep a report honest about what it could not see". Packets cut at
// 200 bytes (only the big Produce and its segments exceed it): no crash, the
// truncation is counted, decoding goes on after it and the later
// instance-id-changed is found with full confidence: SPEC 2.1, the bytes a
// snap length cut are known in number and place, so they are no loss.
func TestCoverageSnaplen(t *testing.T) {
	for _, link := range []pcapgen.Link{pcapgen.LinkEthernet, pcapgen.LinkSLL2} {
		t.Run(link.String(), func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{Snaplen: 200, Link: link})
			cn := c.Conn(pcapgen.ConnOptions{})
			s := bb4Sess(cn, pcapgen.Ptr("orders-app"), bbID(bb4X))
			bbMeta(s)
			s.Header.ClientID = nil
			s.RoundTrip(pcapgen.Produce(9, "orders", [16]byte{}, bb4Records(4000)), pcapgen.ProduceResponse(9, "orders", [16]byte{}))
			bb4AfterBad(s)
			cn.Close()
			rep := bbRun(t, c)
			bb4ExpectConf(t, rep, map[string]int{"instance-id-changed/full": 1})
			if n := rep.Totals.Coverage["stream-gap"]; n != 0 {
				t.Errorf("stream-gap %d: a snap-length cut is no loss (SPEC 2.1)", n)
			}
			bb4CovAtLeast(t, rep, "truncated-packet", 1)
			if rep.Totals.Packets != c.Frames() {
				t.Errorf("packets %d, capture has %d", rep.Totals.Packets, c.Frames())
			}
		})
	}
}

// TestCoverageFirstRequestLost: SPEC 2 "findings after a gap carry partial
// too" and "any finding that depends on the first request carries partial".
// On a connection observed from its start, the client's very first request
// (client ID and instance ID X) is lost; the later ones have a null client
// ID, then one repeats "orders-app". Whatever kwatch concludes about the
// first request, every finding is partial and instance-id-changed (X then
// Y) is still found.
//
// DISCREPANCY (coverage): the lost bytes are counted nowhere: stream-gap 0,
// and the answer to the lost request is neither decoded nor counted as
// unmatched-response (findings are correctly partial).
func TestCoverageFirstRequestLost(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bb4Sess(cn, pcapgen.Ptr("orders-app"), bbID(bb4X))
	cn.DropNext(1)
	s.RoundTrip(pcapgen.APIVersions(3, "apache-kafka-java", "4.2.0"), pcapgen.APIVersionsResponse(3))
	s.Header.ClientID = nil
	bb4AfterBad(s)
	s.Header.ClientID = pcapgen.Ptr("orders-app")
	bbMeta(s)
	cn.Close()
	rep := bbRun(t, c)
	if n := len(bbOf(rep, "instance-id-changed")); n != 1 {
		t.Errorf("instance-id-changed %d, want 1\n%s", n, rep.summary())
	}
	for _, f := range rep.Findings {
		if f["confidence"] != "partial" {
			t.Errorf("%v is %v after the first request was lost, spec requires partial", f["rule"], f["confidence"])
		}
	}
	bb4CovAtLeast(t, rep, "stream-gap", 1)
}

// TestCoverageLossSpansFrames: SPEC 2 "resyncs to the next plausible
// frame; findings after a gap carry partial too". One lost segment covers
// the tail of one request and the head of the next (pipelined in one
// write): the requests after both are decoded and their findings partial.
func TestCoverageLossSpansFrames(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	steps := bb4LossSteps(false)
	q, r := bb4EncodeAll(steps)
	for i := 0; i < 2; i++ {
		cn.Send(q[i])
		cn.Reply(r[i])
	}
	pair := append(append([]byte{}, q[2]...), q[3]...)
	k := len(q[2]) - 100
	cn.Raw(pcapgen.ToBroker, pair[:k])
	cn.DropNext(1)
	cn.Raw(pcapgen.ToBroker, pair[k:k+130])
	cn.Raw(pcapgen.ToBroker, pair[k+130:])
	cn.Reply(r[2], r[3])
	for i := 4; i < len(steps); i++ {
		cn.Send(q[i])
		cn.Reply(r[i])
	}
	cn.Close()
	rep := bbRun(t, c)
	bb4ExpectConf(t, rep, map[string]int{
		"telemetry-id-mismatch/partial":   1,
		"broker-accepted-invalid/partial": 1,
		"member-id-empty/partial":         1,
	})
	bb4CovAtLeast(t, rep, "stream-gap", 1)
	bb4CheckMatched(t, c, []int{5, 6, 7}, []int{4})
}

// ---------------------------------------------------------------- mid-stream

// SPEC 4: "A connection whose first request was not seen is "identity
// unobservable" under this profile: never non-compliant on that ground";
// README 10: "counted in the totals and never instance-id-missing-first".
// SPEC 2/3.7: a connection is observed from its start when its SYN or its
// SYN-ACK was captured. Three connections with v3 requests without ID: no
// handshake (unobservable: no finding, counted), SYN-ACK only (observed:
// missing-first, full), full handshake (missing-first).
func TestCoverageMidstreamUnobservableCounted(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	var frames []int
	for _, o := range []pcapgen.ConnOptions{{NoSYN: true}, {SkipSYN: true}, {}} {
		cn := c.Conn(o)
		s := bb5Sess(cn, nil)
		_, f := bb5OD(s, nil, nil)
		bb5OD(s, nil, nil)
		frames = append(frames, f)
		cn.Close()
	}
	acc := bb5Read(t, bbCaptureFile(t, c, ""), bb5Acc)
	bb5Expect(t, "accepted-2026", acc, map[string]int{"instance-id-missing-first": 2})
	fs := bbOf(acc, "instance-id-missing-first")
	for i, f := range fs {
		if i < 2 {
			bb5Field(t, f, "frame", frames[i+1])
			bb5Field(t, f, "confidence", "full")
		}
	}
	if acc.Totals.Unobservable != 1 {
		t.Errorf("totals.unobservable_connections %v, want 1", acc.Totals.Unobservable)
	}
	if acc.Totals.Coverage["midstream-join"] != 1 {
		t.Errorf("coverage midstream-join %d, want 1", acc.Totals.Coverage["midstream-join"])
	}
	if acc.Totals.ByHeaderVersion["v3"] != 6 {
		t.Errorf("requests_by_header_version %v, want v3:6", acc.Totals.ByHeaderVersion)
	}
}

// SPEC 2: "any finding that depends on the first request carries
// "confidence": "partial"" (README 3 lists instance-id-repeated among
// them); SPEC 4: an unobservable connection is "never non-compliant on that
// ground". A mid-stream connection whose v3 requests all carry X: no error or
// warn finding, and whatever fires is partial.
func TestCoverageMidstreamRepeatsPartial(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{NoSYN: true})
	s := bb5Sess(cn, nil)
	for i := 0; i < 3; i++ {
		bb5OD(s, &bb5X, nil)
	}
	cn.Close()
	acc := bb5Read(t, bbCaptureFile(t, c, ""), bb5Acc)
	if acc.Totals.Requests != 3 {
		t.Errorf("requests %d, want 3", acc.Totals.Requests)
	}
	for _, f := range acc.Findings {
		if f["severity"] != "info" || f["confidence"] != "partial" {
			t.Errorf("mid-stream finding %v %v confidence %v: only partial info allowed", f["rule"], f["severity"], f["confidence"])
		}
	}
	t.Logf("mid-stream X,X,X findings:\n%s", acc.summary())
}

// SPEC 4: "A connection whose first request was not seen is "identity
// unobservable" under this profile: never non-compliant on that ground".
// Here the handshake is captured but the first request's only segment is
// lost (a stream gap): the first request was not seen, so the v3 requests
// without ID after the gap are no instance-id-missing-first (not even
// partial): the lost request may have carried the ID.
func TestCoverageFirstRequestLostInGap(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bb5Sess(cn, bb5App)
	cn.DropNext(1)
	bb5OD(s, &bb5X, nil)
	s.Header.ClientID = nil
	bb5OD(s, nil, nil)
	bb5OD(s, nil, nil)
	cn.Close()
	acc := bb5Read(t, bbCaptureFile(t, c, ""), bb5Acc)
	t.Logf("requests %d, stream-gap %d, unobservable_connections %d", acc.Totals.Requests, acc.Totals.Coverage["stream-gap"], acc.Totals.Unobservable)
	bb5Expect(t, "accepted-2026", acc, map[string]int{})
}

// -------------------------------------------------- confidence, mid-stream

// SPEC 2: "A connection joined mid-stream still yields findings, but any
// finding that depends on the first request carries "confidence":
// "partial"". README 3 names those rules: "instance-id-dropped/-changed/
// -late/-repeated, client-id-*, member-id-changed, telemetry-id-not-adopted";
// every other rule judges the request itself and stays full. Each scenario
// on its own connection without a handshake.
func TestCoverageMidstreamConfidenceByRule(t *testing.T) {
	a := bbJ(pcapgen.SeqUUID(0x0b))
	b := bbJ(pcapgen.SeqUUID(0x1b))
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
			s.RoundTrip(pcapgen.GetTelemetrySubscriptions(bb7Zero), pcapgen.GetTelemetrySubscriptionsResponse(errNone, bb7B, 7))
			s.RoundTrip(pcapgen.PushTelemetry(bb7C, 7), pcapgen.PushTelemetryResponse(errNone))
			cn.Close()
		}, map[string]int{"telemetry-id-not-adopted": 1}, "partial"},
		{"client-id-missing-first", func(c *pcapgen.Capture) {
			// The first request captured has a null client ID (clean v2
			// header at the first byte captured, answered: README 13).
			cn := c.Conn(mid)
			s := cn.Session(pcapgen.RequestHeader{CorrelationID: 40})
			bbMeta(s)
			s.Header.ClientID = pcapgen.Ptr("legacy-app")
			bbMeta(s)
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
			bb7CG.rt(s, "g", "", 0, errNone, pcapgen.Ptr("assigned-1"), 1)
			cn.Close()
		}, map[string]int{"member-id-empty": 1, "broker-generated-member-id": 1, "broker-accepted-invalid": 1}, "full"},
		{"leave-without-member-id", func(c *pcapgen.Capture) {
			cn, s := bb7Legacy(c, mid, "legacy-app")
			bb7CG.rt(s, "g", "", -1, errUnknownMemberID, nil, 0)
			cn.Close()
		}, map[string]int{"leave-without-member-id": 1}, "full"},
		{"member-id-misaligned", func(c *pcapgen.Capture) {
			cn, s := bb7Modern(c, mid, "orders-app", bb7X)
			bb7CG.join(s, "g", bbJ(bb7Y))
			cn.Close()
		}, map[string]int{"member-id-misaligned": 1}, "full"},
		{"telemetry-id-requested-with-header", func(c *pcapgen.Capture) {
			cn, s := bb7Modern(c, mid, "orders-app", bb7X)
			s.RoundTrip(pcapgen.GetTelemetrySubscriptions(bb7Zero), pcapgen.GetTelemetrySubscriptionsResponse(errInvalidRequest, bb7Zero, 0))
			cn.Close()
		}, map[string]int{"telemetry-id-requested-with-header": 1}, "full"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			tc.play(c)
			rep := bbRunF(t, c)
			bbExpect(t, rep, tc.want)
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
func TestCoverageIdleConnectionEnds(t *testing.T) {
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
			bbMeta(s)
			other, os := bb7Modern(c, pcapgen.ConnOptions{Client: bb7Host("10.7.4.2", 41001)}, "other-app", bb7C)
			for el := time.Duration(0); el < tc.idle; el += time.Minute {
				c.Sleep(time.Minute)
				bbMeta(os)
			}
			other.Close()
			s.Header.InstanceID = &bb7Y
			bbMeta(s)
			bbMeta(s)
			cn.Close()
			rep := bbRunF(t, c)
			bbExpect(t, rep, tc.want)
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

// README 16 (idle connections end after 10 minutes of packet time) with
// README 7 ("a claim is alive while the claimant's latest connection is
// open") and README 12 (client-id-repeated's "frame is the connection's
// last"), SPEC 3.7 (client-id-repeated "once per connection, when the
// connection ends"). A third client keeps packet time moving.
func TestCoverageIdleEndsClaimsAndConnections(t *testing.T) {
	m := bbJ(pcapgen.SeqUUID(0x0e))
	keepBusy := func(c *pcapgen.Capture, d time.Duration) {
		cn, s := bb7Legacy(c, pcapgen.ConnOptions{Client: bb7Host("10.7.9.9", 41009)}, "busy-app")
		for el := time.Duration(0); el < d; el += time.Minute {
			c.Sleep(time.Minute)
			bbMeta(s)
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
			bbExpect(t, bbRunF(t, c), map[string]int{"member-id-collision": tc.collision})
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
		bbMeta(s)
		bbMeta(s)
		last := c.Frames()
		keepBusy(c, 11*time.Minute)
		_ = cn // never closed: it falls silent
		rep := bbRunF(t, c)
		bbExpect(t, rep, map[string]int{"client-id-repeated": 1})
		for _, f := range bbOf(rep, "client-id-repeated") {
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
func TestCoverageConnectionEndsByReuseAndReset(t *testing.T) {
	// README 12: the first incarnation's finding has its own last packet,
	// not the new SYN (the next connection's packet that ended it).
	t.Run("client-id-repeated-tuple-reuse", func(t *testing.T) {
		c := pcapgen.New(pcapgen.Options{})
		o := pcapgen.ConnOptions{Client: bb7Host("10.7.10.1", 41001)}
		_, s := bb7Modern(c, o, "orders-app", bb7X)
		s.Header.ClientID = pcapgen.Ptr("orders-app")
		bbMeta(s)
		last := c.Frames()
		cn2, s2 := bb7Modern(c, o, "orders-app", bb7X)
		bbMeta(s2)
		cn2.Close()
		rep := bbRunF(t, c)
		bbExpect(t, rep, map[string]int{"client-id-repeated": 1})
		bb7EqInts(t, "client-id-repeated frame", bb7Frames(rep, "client-id-repeated"), []int{last})
	})
	// README 12: on a connection closed by FIN, FIN, ACK the packet that
	// ended it is the second FIN, not the final ACK that follows.
	t.Run("client-id-repeated-fin-close", func(t *testing.T) {
		c := pcapgen.New(pcapgen.Options{})
		cn, s := bb7Modern(c, pcapgen.ConnOptions{}, "orders-app", bb7X)
		s.Header.ClientID = pcapgen.Ptr("orders-app")
		bbMeta(s)
		cn.Close()
		rep := bbRunF(t, c)
		bbExpect(t, rep, map[string]int{"client-id-repeated": 1})
		bb7EqInts(t, "client-id-repeated frame", bb7Frames(rep, "client-id-repeated"), []int{c.Frames() - 1})
	})
	t.Run("claim-ends-with-reset", func(t *testing.T) {
		c := pcapgen.New(pcapgen.Options{})
		m := bbJ(pcapgen.SeqUUID(0x0f))
		cn1, s1 := bb7Legacy(c, pcapgen.ConnOptions{Client: bb7Host("10.7.10.1", 41001)}, "app-1")
		bb7CG.join(s1, "g", m)
		cn1.Reset()
		cn2, s2 := bb7Legacy(c, pcapgen.ConnOptions{Client: bb7Host("10.7.10.2", 41001)}, "app-2")
		bb7CG.join(s2, "g", m)
		cn2.Close()
		bbExpect(t, bbRunF(t, c), nil)
	})
}

func bb8cMetaResp(corr int32) []byte {
	return pcapgen.EncodeResponse(corr, 12, pcapgen.MetadataResponse(12, "10.0.0.1", 9092))
}

// bb8cLose writes frame in direction d with bytes [a, b) lost (a segment of
// their own the capture never saw); the rest is sent as segments around it.
func bb8cLose(cn *pcapgen.Conn, d pcapgen.Dir, frame []byte, a, b int) {
	if a > 0 {
		cn.Raw(d, frame[:a])
	}
	cn.DropNext(1)
	cn.Raw(d, frame[a:b])
	if b < len(frame) {
		cn.Raw(d, frame[b:])
	}
}

// ------------------------------------------------- resync, client direction

// SPEC 2: "A connection with lost bytes resyncs to the next plausible frame;
// findings after a gap carry partial too"; SPEC 1: "Other bodies are skipped
// by length, never parsed". A KIP-1313 producer's Produce v9 loses 150
// bytes of its record batch; the frame's size (and so where the next frame
// starts) was captured before the hole, and the hole's length is known from
// the TCP sequence numbers. The rest of the records hold bytes that look
// like two Kafka requests (one with a printable client ID "evil-app", one
// with a null client ID and the next correlation ID, both with instance ID
// Y): they are record data, not requests, and must give no finding. The real
// requests after the Produce (X, then Y) give one instance-id-changed,
// partial. One stream-gap; the Produce's own answer and the later ones are
// matched.
func TestCoverageGapInProduceBodyRecordsLookLikeRequests(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn, s := bb8cModern(c, pcapgen.ConnOptions{}, "orders-app", bb8cX)
	bbMeta(s) // corr 2
	fakeA := pcapgen.EncodeRequest(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("evil-app"), InstanceID: bbID(bb8cY), CorrelationID: 4}, pcapgen.Metadata(12, "orders"))
	fakeB := pcapgen.EncodeRequest(pcapgen.RequestHeader{InstanceID: bbID(bb8cY), CorrelationID: 4}, pcapgen.Metadata(12, "orders"))
	records := slices.Concat(bb8cFiller(400), fakeA, fakeB, bb8cFiller(600))
	prodCorr, prod := s.Encode(pcapgen.Produce(9, "orders", bb8cZero, records))
	bb8cLose(cn, pcapgen.ToBroker, prod, 100, 250)
	cn.Reply(pcapgen.EncodeResponse(prodCorr, 9, pcapgen.ProduceResponse(9, "orders", bb8cZero)))
	f4 := bbMeta(s)
	f5 := bb8cMetaWith(s, bbID(bb8cY))
	cn.Close()
	path := bbCaptureFile(t, c, "")
	rep := bbReadF(t, path)
	bb8cExact(t, rep, bb8cW{"instance-id-changed", "error", "partial", f5})
	bb8cCov(t, rep, map[string]int{"stream-gap": 1, "framing-error": 0, "unmatched-response": 0})
	d := bbDumpObjs(t, path)
	bb8cMatched(t, d, 4, f4, -1)
	bb8cMatched(t, d, 5, f5, -1)
	for _, o := range d {
		if o["kind"] == "request" && o["client_id"] == "evil-app" {
			t.Errorf("record bytes decoded as a request: %v", o)
		}
	}
}

// README 13: "After a gap the decoder resyncs on a request header with a
// known API key and version and either a printable, non-empty client ID or
// (KIP-1313 clients send a null client ID after the first request) a
// flexible header with clean tags whose correlation ID follows the
// connection's last request's". The head of a Produce (its size and header)
// is lost, so the decoder must scan; its records hold a clean flexible
// null-client-ID header with instance ID Y whose correlation ID (1) does not
// follow the last request's (2): not a resync point. The real requests after
// it (3 lost; 4 with X, 5 with X) give nothing: no finding at all.
func TestCoverageGapScanRejectsOldCorrelationID(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn, s := bb8cModern(c, pcapgen.ConnOptions{}, "orders-app", bb8cX)
	bbMeta(s) // corr 2
	fake := pcapgen.EncodeRequest(pcapgen.RequestHeader{InstanceID: bbID(bb8cY), CorrelationID: 1}, pcapgen.Metadata(12, "orders"))
	records := slices.Concat(bb8cFiller(200), fake, bb8cFiller(300))
	prodCorr, prod := s.Encode(pcapgen.Produce(9, "orders", bb8cZero, records))
	bb8cLose(cn, pcapgen.ToBroker, prod, 0, 40)
	cn.Reply(pcapgen.EncodeResponse(prodCorr, 9, pcapgen.ProduceResponse(9, "orders", bb8cZero)))
	f4 := bbMeta(s)
	f5 := bbMeta(s)
	cn.Close()
	path := bbCaptureFile(t, c, "")
	rep := bbReadF(t, path)
	bb8cExact(t, rep)
	bb8cCov(t, rep, map[string]int{"stream-gap": 1})
	d := bbDumpObjs(t, path)
	bb8cMatched(t, d, 4, f4, -1)
	bb8cMatched(t, d, 5, f5, -1)
	if n := len(bb8cPDUs(d, "request", 1)); n != 1 {
		t.Errorf("requests with correlation ID 1: %d, want 1 (the real ApiVersions; the record bytes are no request)\n%s", n, bb8cDumpLines(d))
	}
}

// SPEC 2 "resyncs to the next plausible frame; findings after a gap carry
// partial too"; README 13 (printable client ID, or null client ID on a clean
// flexible header whose correlation ID follows). One hole in a Metadata
// request at four places: half of the size field, the header right after
// the size, the request's last byte, the whole frame. Two kinds of client:
// KIP-1313 (null client ID after the first request; request 5 carries Y:
// instance-id-changed) and legacy (client ID on every request; request 5
// names "other-app": client-id-changed). Each gives its one finding,
// partial, at request 5's frame; one stream-gap; requests 4 and 5 matched.
func TestCoverageGapPositionsInOneRequest(t *testing.T) {
	for _, kind := range []string{"kip1313", "legacy"} {
		for _, pos := range []string{"size-split", "header-after-size", "last-byte", "whole-frame"} {
			t.Run(kind+"/"+pos, func(t *testing.T) {
				c := pcapgen.New(pcapgen.Options{})
				cn := c.Conn(pcapgen.ConnOptions{})
				h := pcapgen.RequestHeader{ClientID: pcapgen.Ptr("orders-app"), CorrelationID: 1}
				if kind == "kip1313" {
					h.InstanceID = bbID(bb8cX)
				}
				s := cn.Session(h)
				s.RoundTrip(pcapgen.APIVersions(3, "apache-kafka-java", "4.2.0"), pcapgen.APIVersionsResponse(3))
				if kind == "kip1313" {
					s.Header.ClientID = nil
				}
				bbMeta(s) // corr 2
				corr3, q3 := s.Encode(pcapgen.Metadata(12, "orders", "payments", "audit"))
				hole := map[string][2]int{"size-split": {2, 6}, "header-after-size": {6, 14}, "last-byte": {len(q3) - 1, len(q3)}, "whole-frame": {0, len(q3)}}[pos]
				bb8cLose(cn, pcapgen.ToBroker, q3, hole[0], hole[1])
				cn.Reply(bb8cMetaResp(corr3))
				f4 := bbMeta(s)
				want := bb8cW{"instance-id-changed", "error", "partial", 0}
				if kind == "kip1313" {
					want.frame = bb8cMetaWith(s, bbID(bb8cY))
				} else {
					s.Header.ClientID = pcapgen.Ptr("other-app")
					want = bb8cW{"client-id-changed", "warn", "partial", bbMeta(s)}
				}
				cn.Close()
				path := bbCaptureFile(t, c, "")
				rep := bbReadF(t, path)
				bb8cExact(t, rep, want)
				bb8cCov(t, rep, map[string]int{"stream-gap": 1, "framing-error": 0})
				d := bbDumpObjs(t, path)
				bb8cMatched(t, d, 4, f4, -1)
				bb8cMatched(t, d, 5, want.frame, -1)
			})
		}
	}
}

// README 13: a null-client-ID request is a resync point when its
// correlation ID "follows the connection's last request's". A Java producer
// keeps up to five requests in flight (max.in.flight.requests.per.connection
// = 5): one lost stretch takes all five pipelined Produce requests (3..7,
// the first's size and key excepted). The next request (8) follows the last
// one the connection sent; it and request 9 (instance ID Y) are decoded:
// instance-id-changed, partial, at request 9's frame; one stream-gap;
// requests 8 and 9 matched with their answers.
func TestCoverageGapFivePipelinedRequestsLost(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn, s := bb8cModern(c, pcapgen.ConnOptions{Perturb: &pcapgen.Perturb{MSS: 60000}}, "orders-app", bb8cX)
	bbMeta(s) // corr 2
	var all []byte
	var corrs []int32
	for i := 0; i < 5; i++ {
		corr, q := s.Encode(pcapgen.Produce(9, "orders", bb8cZero, bb8cFiller(900)))
		corrs = append(corrs, corr)
		all = append(all, q...)
	}
	bb8cLose(cn, pcapgen.ToBroker, all, 6, len(all)-3)
	var resps [][]byte
	for _, corr := range corrs {
		resps = append(resps, pcapgen.EncodeResponse(corr, 9, pcapgen.ProduceResponse(9, "orders", bb8cZero)))
	}
	cn.Reply(resps...)
	f8 := bbMeta(s)
	f9 := bb8cMetaWith(s, bbID(bb8cY))
	cn.Close()
	path := bbCaptureFile(t, c, "")
	rep := bbReadF(t, path)
	bb8cExact(t, rep, bb8cW{"instance-id-changed", "error", "partial", f9})
	bb8cCov(t, rep, map[string]int{"stream-gap": 1, "framing-error": 0})
	d := bbDumpObjs(t, path)
	bb8cMatched(t, d, 8, f8, -1)
	bb8cMatched(t, d, 9, f9, -1)
}

// ------------------------------------------------ resync, broker direction

// SPEC 1: "Responses are matched to requests by correlation id per
// connection (a broker answers in order, but never rely on it alone)"; SPEC
// 2 "resyncs to the next plausible frame"; SPEC 3.5 broker-accepted-invalid
// only when the answer is "without INVALID_REQUEST". A client pipelines
// Fetch (3), ApiVersions with instance ID Y (4: instance-id-changed) and
// Metadata (5). The broker's Fetch answer loses bytes; its record data holds
// a chunk that reads as a 12-byte ApiVersions answer to correlation ID 4
// with error NONE. The real answer to 4 is INVALID_REQUEST. The chunk is
// not a response: no broker-accepted-invalid, exactly one response with
// correlation ID 4 (error 42, matched to request 4), no unmatched-response.
// "middle": the Fetch answer's size was captured (the next frame's place is
// known); "head": its size was lost too (the decoder must scan);
// "head-no-lookalike": the same with plain record bytes (the control).
func TestCoverageResponseResyncMisalignedChunk(t *testing.T) {
	for _, mode := range []string{"middle", "head", "head-no-lookalike"} {
		t.Run(mode, func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			cn, s := bb8cModern(c, pcapgen.ConnOptions{Perturb: &pcapgen.Perturb{MSS: 60000}}, "orders-app", bb8cX)
			bbMeta(s) // corr 2
			c3, q3 := s.Encode(pcapgen.Fetch(12, "orders", bb8cZero))
			s.Header.InstanceID = bbID(bb8cY)
			c4, q4 := s.Encode(pcapgen.APIVersions(3, "apache-kafka-java", "4.2.0"))
			s.Header.InstanceID = bbID(bb8cX)
			c5, q5 := s.Encode(pcapgen.Metadata(12, "orders"))
			fr := cn.Write(pcapgen.ToBroker, q3, q4, q5)
			// A frame that starts as an ApiVersions v3 answer to
			// correlation ID 4, error NONE, whose fields end 4 bytes short
			// of its size: as record data reads. (A chunk that is a whole,
			// well-formed answer end to end is taken for one: README 13.)
			fake := pcapgen.EncodeResponseRaw(c4, 0, []byte{0, 0, 1, 0, 0, 0, 0, 0, 'x', 'x', 'x', 'x'})
			if mode == "head-no-lookalike" {
				fake = bb8cFiller(len(fake))
			}
			r3 := pcapgen.EncodeResponse(c3, 12, pcapgen.FetchResponse(12, "orders", bb8cZero, slices.Concat(bb8cFiller(200), fake, bb8cFiller(200))))
			rej := pcapgen.APIVersionsResponse(3)
			rej.ErrorCode = errInvalidRequest
			rest := slices.Concat(pcapgen.EncodeResponse(c4, 3, rej), bb8cMetaResp(c5))
			if mode == "middle" {
				bb8cLose(cn, pcapgen.ToClient, slices.Concat(r3, rest), 30, 100)
			} else {
				bb8cLose(cn, pcapgen.ToClient, slices.Concat(r3, rest), 0, 20)
			}
			f6 := bbMeta(s) // acknowledges past the hole
			cn.Close()
			path := bbCaptureFile(t, c, "")
			rep := bbReadF(t, path)
			bb8cExact(t, rep, bb8cW{"instance-id-changed", "error", "full", fr[1]})
			bb8cCov(t, rep, map[string]int{"stream-gap": 1, "unmatched-response": 0})
			d := bbDumpObjs(t, path)
			bb8cMatched(t, d, c4, fr[1], errInvalidRequest)
			bb8cMatched(t, d, c5, fr[2], -1)
			bb8cMatched(t, d, 6, f6, -1)
		})
	}
}

// SPEC 1: "Responses are matched to requests by correlation id per
// connection (a broker answers in order, but never rely on it alone)"; SPEC
// 2 "resyncs to the next plausible frame". No crafted bytes this time: a
// client pipelines ApiVersions (3, X), Metadata (4, X) and ApiVersions (5,
// Y: instance-id-changed); the capture loses the first 20 bytes of the
// broker's answer to 3, so the decoder scans its ApiVersions key list, whose
// entries {17,0,1},{18,0,5} read "01 00 00 12 | 00 00 00 05": a 16 MiB
// "frame" answering the pending correlation ID 5. That is no response: the
// answers to 4 and 5 (INVALID_REQUEST) and to a later Metadata (6) are
// matched, nothing is unmatched, and the one finding is instance-id-changed
// (error, full: the client's direction lost nothing).
func TestCoverageResponseResyncInsideAnswerBody(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn, s := bb8cModern(c, pcapgen.ConnOptions{Perturb: &pcapgen.Perturb{MSS: 60000}}, "orders-app", bb8cX)
	bbMeta(s) // corr 2
	c3, q3 := s.Encode(pcapgen.APIVersions(3, "apache-kafka-java", "4.2.0"))
	c4, q4 := s.Encode(pcapgen.Metadata(12, "orders"))
	s.Header.InstanceID = bbID(bb8cY)
	c5, q5 := s.Encode(pcapgen.APIVersions(3, "apache-kafka-java", "4.2.0"))
	s.Header.InstanceID = bbID(bb8cX)
	fr := cn.Write(pcapgen.ToBroker, q3, q4, q5)
	rej := pcapgen.APIVersionsResponse(3)
	rej.ErrorCode = errInvalidRequest
	all := slices.Concat(pcapgen.EncodeResponse(c3, 3, pcapgen.APIVersionsResponse(3)), bb8cMetaResp(c4), pcapgen.EncodeResponse(c5, 3, rej))
	bb8cLose(cn, pcapgen.ToClient, all, 0, 20)
	f6 := bbMeta(s)
	cn.Close()
	path := bbCaptureFile(t, c, "")
	rep := bbReadF(t, path)
	bb8cExact(t, rep, bb8cW{"instance-id-changed", "error", "full", fr[2]})
	bb8cCov(t, rep, map[string]int{"stream-gap": 1, "unmatched-response": 0, "framing-error": 0})
	d := bbDumpObjs(t, path)
	bb8cMatched(t, d, c4, fr[1], -1)
	bb8cMatched(t, d, c5, fr[2], errInvalidRequest)
	bb8cMatched(t, d, 6, f6, -1)
}

// README 13: on a connection joined mid-stream, "a null-client-ID request
// is believed ... when the broker answers it (a response with its
// correlation ID), and it keeps the frame of the packet that completed it";
// README 15 and SPEC 6: --port names Kafka ports (recognition only). The
// capture starts inside a Produce (its last 300 bytes, then its answer);
// then a KIP-1313 client's Metadata X (null client ID, corr 813, answered),
// Metadata Y (814, answered). With and without --port 9092: request 813 at
// its own frame, matched with its answer; Y is instance-id-changed (error,
// partial) at its frame.
func TestCoverageMidstreamFirstRequestAnsweredWithPort(t *testing.T) {
	for _, port := range []bool{false, true} {
		t.Run(fmt.Sprintf("port=%v", port), func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			cn := c.Conn(pcapgen.ConnOptions{NoSYN: true})
			s := cn.Session(pcapgen.RequestHeader{InstanceID: bbID(bb8cX), CorrelationID: 812})
			corr, prod := s.Encode(pcapgen.Produce(9, "orders", bb8cZero, bb8cFiller(1000)))
			cn.Raw(pcapgen.ToBroker, prod[len(prod)-300:])
			cn.Reply(pcapgen.EncodeResponse(corr, 9, pcapgen.ProduceResponse(9, "orders", bb8cZero)))
			f813 := bbMeta(s)
			f814 := bb8cMetaWith(s, bbID(bb8cY))
			cn.Close()
			path := bbCaptureFile(t, c, "")
			extra := bb8cPortArgs(port)
			rep := bbReadF(t, path, extra...)
			bb8cExact(t, rep, bb8cW{"instance-id-changed", "error", "partial", f814})
			bb8cCov(t, rep, map[string]int{"midstream-join": 1})
			d := bbDumpObjs(t, path, extra...)
			bb8cMatched(t, d, 813, f813, -1)
			bb8cMatched(t, d, 814, f814, -1)
		})
	}
}

// README 16: "Idle connections are ended after 10 minutes of packet time
// without a packet ...; a connection that speaks again later is a new,
// mid-stream connection"; README 13: "A connection joined mid-stream is
// decoded from its first plausible request header; ... a null-client-ID
// request is believed when it starts at the first byte captured ..., when
// the next request follows it, or when the broker answers it"; README 3:
// on a mid-stream connection instance-id-changed is partial. A KIP-1313
// client (X) falls silent for 11 minutes while another client's traffic
// moves packet time on, then sends Metadata with X and Metadata with Y (null
// client IDs, answered): the new mid-stream connection's requests are
// decoded (16 requests in all), and Y is instance-id-changed (error,
// partial) at its frame.
func TestCoverageIdleConnectionSpeaksAgain(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn, s := bb8cModern(c, pcapgen.ConnOptions{Client: netip.MustParseAddrPort("10.8.4.1:41001")}, "orders-app", bb8cX)
	bbMeta(s)
	other, os := bb8cModern(c, pcapgen.ConnOptions{Client: netip.MustParseAddrPort("10.8.4.2:41001")}, "other-app", bb8cR)
	for i := 0; i < 11; i++ {
		c.Sleep(time.Minute)
		bbMeta(os)
	}
	other.Close()
	bbMeta(s)
	f := bb8cMetaWith(s, bbID(bb8cY))
	cn.Close()
	rep := bbRunF(t, c)
	bb8cExact(t, rep, bb8cW{"instance-id-changed", "error", "partial", f})
	bb8cCov(t, rep, map[string]int{"midstream-join": 1})
	bb8cTotals(t, rep, 16, 16)
}

// README 13: "A connection joined mid-stream is decoded from its first
// plausible request header; ... on a connection joined mid-stream with no
// request seen yet, a null-client-ID request is believed when it starts at
// the first byte captured (clients write whole frames, so captures mostly
// start between them), when the next request follows it, or when the
// broker answers it, and it keeps the frame of the packet that completed
// it"; README 3: instance-id-changed on a mid-stream connection is partial.
// A capture starts (no handshake) on a KIP-1313 client's long-lived
// connection at a request with a null client ID in a v1 header (the client
// named itself long ago): a KIP-368 re-authentication (SaslHandshake v1,
// then two SaslAuthenticate v2 with X), or a Metadata v8. Then Metadata X,
// Metadata Y, all answered. Every request is decoded, the first at frame 1
// and matched with its answer, and Y is instance-id-changed (error,
// partial) at its frame; with and without --port 9092. Control: the same
// starting at a Metadata v12 (header v2).
func TestCoverageMidstreamStartsAtNullClientIDV1(t *testing.T) {
	t.Parallel()
	for _, first := range []string{"sasl-reauth", "metadata-v8", "metadata-v12"} {
		for _, port := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/port=%v", first, port), func(t *testing.T) {
				c := pcapgen.New(pcapgen.Options{})
				cn := c.Conn(pcapgen.ConnOptions{NoSYN: true})
				s := cn.Session(pcapgen.RequestHeader{InstanceID: bbID(bb8cX), CorrelationID: 812})
				n := 3
				switch first {
				case "sasl-reauth":
					s.RoundTrip(pcapgen.SaslHandshake(1, "SCRAM-SHA-512"), pcapgen.SaslHandshakeResponse(1, "SCRAM-SHA-512"))
					s.RoundTrip(bb8cSaslAuth("n,,n=alice,r=rOprNGfwEbeRWgbNEkqO"), bb8cSaslAuthResp("r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"))
					s.RoundTrip(bb8cSaslAuth("c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="), bb8cSaslAuthResp("v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="))
					n = 5
				case "metadata-v8":
					s.RoundTrip(pcapgen.Metadata(8, "orders"), pcapgen.MetadataResponse(8, "10.0.0.1", 9092))
				default:
					bbMeta(s)
				}
				bbMeta(s)
				f := bb8cMetaWith(s, bbID(bb8cY))
				cn.Close()
				path := bbCaptureFile(t, c, "")
				extra := bb8cPortArgs(port)
				rep := bbReadF(t, path, extra...)
				bb8cExact(t, rep, bb8cW{"instance-id-changed", "error", "partial", f})
				bb8cCov(t, rep, map[string]int{"midstream-join": 1, "unmatched-response": 0, "sasl-raw-tokens": 0})
				bb8cTotals(t, rep, n, n)
				bb8cMatched(t, bbDumpObjs(t, path, extra...), 812, 1, -1)
			})
		}
	}
}

// bb8fMidstream writes a mid-stream KIP-1313 (Java) connection whose
// capture starts as described by first, then rounds of answered pipelined
// Produce requests with Java correlation-ID jumps, and returns the capture
// and the correlation IDs README 13 requires decoded.
func bb8fMidstream(t *testing.T, p *pcapgen.Perturb, cutFirst bool, jump int32, sizes ...int) (*pcapgen.Capture, []int32) {
	t.Helper()
	c := pcapgen.New(pcapgen.Options{Seed: 3})
	id := pcapgen.SeqUUID(0x44)
	cn := c.Conn(pcapgen.ConnOptions{Client: netip.MustParseAddrPort("10.2.0.9:41000"), Broker: bb8fBrokers[0], NoSYN: true, Perturb: p})
	s := cn.Session(pcapgen.RequestHeader{InstanceID: &id})
	s.Header.CorrelationID = 2005
	rng := rand.New(rand.NewPCG(1, 2))
	var want []int32
	for r := range 6 {
		var bodies []kmsg.Request
		var resps [][]byte
		if len(sizes) == 0 {
			sizes = []int{3000, 900, 180}
		}
		for _, size := range sizes {
			bodies = append(bodies, pcapgen.Produce(11, "orders", bb8fTopicID, bb8fRecords(rng, size)))
		}
		if r == 0 && cutFirst {
			cn.DropNext(1)
		}
		corrs, frames := s.Pipeline(bodies...)
		for i, cr := range corrs {
			if frames[i] != 0 && !(r == 0 && i == 0) {
				want = append(want, cr)
			}
			resps = append(resps, pcapgen.EncodeResponse(cr, 11, pcapgen.ProduceResponse(11, "orders", bb8fTopicID)))
		}
		cn.Reply(resps...)
		s.Header.CorrelationID += jump
		c.Sleep(time.Second)
	}
	if err := c.Err(); err != nil {
		t.Fatal(err)
	}
	return c, want
}

func bb8fCheckCorrs(t *testing.T, c *pcapgen.Capture, want []int32) {
	t.Helper()
	path := bbCaptureFile(t, c, "")
	code, out, stderr := runKwatch("dump", "--format", "ndjson", path)
	if code != 0 {
		t.Fatalf("dump: exit %d: %s", code, stderr)
	}
	got := map[int32]bool{}
	var gotList []int32
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var o struct {
			Kind string `json:"kind"`
			Corr int32  `json:"correlation_id"`
		}
		if err := json.Unmarshal([]byte(line), &o); err == nil && o.Kind == "request" {
			got[o.Corr] = true
			gotList = append(gotList, o.Corr)
		}
	}
	var missing []int32
	for _, w := range want {
		if !got[w] {
			missing = append(missing, w)
		}
	}
	if len(missing) > 0 {
		t.Errorf("requests not decoded: %v (decoded %v; README 13: a null-client-ID request on a mid-stream connection is believed when the next request follows it or the broker answers it)", missing, gotList)
	}
	rep := bbReadF(t, path)
	bbExpect(t, rep, map[string]int{})
}

// TestCoverageMidstreamCutFirstWrite: the capture starts inside a Produce
// (its first segment was before the capture); every later request, all
// answered, is decoded and nothing is flagged.
func TestCoverageMidstreamCutFirstWrite(t *testing.T) {
	for _, jump := range []int32{0, 11, 400} {
		t.Run(fmt.Sprint("jump", jump), func(t *testing.T) {
			c, want := bb8fMidstream(t, nil, true, jump)
			bb8fCheckCorrs(t, c, want)
		})
		// every request larger than 2 KB: only the broker's answers
		// vouch for them (README 13)
		t.Run(fmt.Sprint("large-jump", jump), func(t *testing.T) {
			c, want := bb8fMidstream(t, nil, true, jump, 3000, 3000, 7000)
			bb8fCheckCorrs(t, c, want)
		})
	}
}

// TestCoverageMidstreamReorderedStart: the capture's first segment of a
// connection is the second of a reordered write (README 17: the stream
// starts there). Requests wholly after that point, all answered, are
// decoded; nothing is flagged.
func TestCoverageMidstreamReorderedStart(t *testing.T) {
	for _, tc := range []struct {
		name  string
		p     pcapgen.Perturb
		jump  int32
		sizes []int
	}{
		{"small", pcapgen.Perturb{Reorder: 2}, 0, nil},
		{"small-jump", pcapgen.Perturb{Reorder: 2}, 11, nil},
		{"7seg", pcapgen.Perturb{Reorder: 2}, 0, []int{3000, 3000, 3000, 900}},
		{"7seg-jump", pcapgen.Perturb{Reorder: 2}, 11, []int{3000, 3000, 3000, 900}},
		{"shuffle3", pcapgen.Perturb{Reorder: 3, Shuffle: true, MSS: 1448}, 7, []int{3000, 3000, 7000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, want := bb8fMidstream(t, &tc.p, false, tc.jump, tc.sizes...)
			// the first Produce's header is in the segment before the start
			bb8fCheckCorrs(t, c, want)
		})
	}
}
