package main

// Black-box scenarios (batch 8i): response matching (SPEC.md section 1,
// "matched to requests by correlation id per connection (a broker answers in
// order, but never rely on it alone)") and the broker rules of 3.5, with the
// README's rules 5, 9, 13 and 18. Expectations come from SPEC.md and the
// README only.

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kwatch/kwatch/internal/pcapgen"
)

var (
	bb8iX    = pcapgen.SeqUUID(0x31)
	bb8iY    = pcapgen.SeqUUID(0x32)
	bb8iR    = pcapgen.SeqUUID(0x33)
	bb8iB    = pcapgen.SeqUUID(0x34)
	bb8iZero [16]byte
)

type bb8iReport struct {
	Totals struct {
		Requests     int            `json:"requests"`
		Responses    int            `json:"responses"`
		Coverage     map[string]int `json:"coverage"`
		StateLimited int            `json:"state_limited"`
	} `json:"totals"`
	Findings []bbFinding `json:"findings"`
}

func (r bb8iReport) b7() bb7Report {
	var o bb7Report
	o.Findings = r.Findings
	return o
}

func bb8iRead(t *testing.T, path string) bb8iReport {
	t.Helper()
	rep, _ := bbReadAs[bb8iReport](t, path)
	return rep
}

func bb8iRun(t *testing.T, c *pcapgen.Capture) bb8iReport {
	t.Helper()
	return bb8iRead(t, bbCaptureFile(t, c, ""))
}

func bb8iExpect(t *testing.T, rep bb8iReport, want map[string]int) {
	t.Helper()
	bb7Expect(t, rep.b7(), want)
}

// bb8iExpectNoMisaligned is bb8iExpect ignoring member-id-misaligned (on a
// request whose header ID changed, "the same connection's header instance
// ID" may be read as the first or the request's: SPEC is ambiguous).
func bb8iExpectNoMisaligned(t *testing.T, rep bb8iReport, want map[string]int) {
	t.Helper()
	var r bb7Report
	for _, f := range rep.Findings {
		if f.Rule != "member-id-misaligned" {
			r.Findings = append(r.Findings, f)
		}
	}
	bb7Expect(t, r, want)
}

func bb8iUnmatched(t *testing.T, rep bb8iReport, want int) {
	t.Helper()
	if n := rep.Totals.Coverage["unmatched-response"]; n != want {
		t.Errorf("totals.coverage[unmatched-response] = %d, want %d\n%s", n, want, rep.b7().summary())
	}
}

func bb8iOne(t *testing.T, rep bb8iReport, rule string) bbFinding {
	t.Helper()
	fs := bb7All(rep.b7(), rule)
	if len(fs) != 1 {
		t.Fatalf("%s: %d findings, want 1\n%s", rule, len(fs), rep.b7().summary())
	}
	return fs[0]
}

// bb8iModern is a connection whose first request (Metadata, answered) carries
// client ID and header instance ID X; later requests carry a null client ID.
func bb8iModern(c *pcapgen.Capture) (*pcapgen.Conn, *pcapgen.Session) {
	cn := c.Conn(pcapgen.ConnOptions{})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("orders-app"), InstanceID: bbID(bb8iX), CorrelationID: 1})
	s.RoundTrip(pcapgen.Metadata(12, "orders"), pcapgen.MetadataResponse(12, "10.0.0.1", 9092))
	s.Header.ClientID = nil
	return cn, s
}

func bb8iLegacy(c *pcapgen.Capture) (*pcapgen.Conn, *pcapgen.Session) {
	cn := c.Conn(pcapgen.ConnOptions{})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("legacy-app"), CorrelationID: 1})
	s.RoundTrip(pcapgen.Metadata(12, "orders"), pcapgen.MetadataResponse(12, "10.0.0.1", 9092))
	return cn, s
}

func bb8iAPIVResp(code int16) *kmsg.ApiVersionsResponse {
	r := pcapgen.APIVersionsResponse(3)
	r.ErrorCode = code
	return r
}

func bb8iAPIV() *kmsg.ApiVersionsRequest {
	return pcapgen.APIVersions(3, "apache-kafka-java", "4.2.0")
}

// Out of order: the broker answers a later compliant request first, then
// the violating one NONE. The 3.5 finding is about the violating request
// (its frame and correlation ID), and every answer is matched.
func TestBB8IOutOfOrderAnswers(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn, s := bb8iModern(c)
	s.Header.InstanceID = bbID(bb8iY)
	corrBad, fBad := s.Request(pcapgen.ConsumerGroupHeartbeat(1, "g", pcapgen.JavaString(bb8iX), 0))
	s.Header.InstanceID = bbID(bb8iX)
	corrOK1, _ := s.Request(bb8iAPIV())
	corrOK2, _ := s.Request(pcapgen.Metadata(12, "orders"))
	s.Respond(corrOK2, pcapgen.MetadataResponse(12, "10.0.0.1", 9092))
	s.Respond(corrOK1, bb8iAPIVResp(0))
	s.Respond(corrBad, pcapgen.ConsumerGroupHeartbeatResponse(1, 0, pcapgen.Ptr(pcapgen.JavaString(bb8iX)), 1))
	cn.Close()
	rep := bb8iRun(t, c)
	bb8iExpectNoMisaligned(t, rep, map[string]int{"instance-id-changed": 1, "broker-accepted-invalid": 1})
	f := bb8iOne(t, rep, "broker-accepted-invalid")
	if f.Frame != fBad || f.CorrelationID != corrBad || f.Confidence != "full" || f.KIP != "KIP-1313" {
		t.Errorf("broker-accepted-invalid: frame %d corr %d conf %s kip %s; want frame %d corr %d conf full kip KIP-1313",
			f.Frame, f.CorrelationID, f.Confidence, f.KIP, fBad, corrBad)
	}
	bb8iUnmatched(t, rep, 0)
}

// A response whose correlation ID was never requested, arriving while a
// violating request waits, must not be taken for its answer; the real
// answer (INVALID_REQUEST) then matches: no 3.5 finding, one unmatched.
func TestBB8IUnknownCorrelationNotTakenInOrder(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn, s := bb8iModern(c)
	s.Header.InstanceID = bbID(bb8iY)
	corr, _ := s.Request(bb8iAPIV())
	s.Respond(999, bb8iAPIVResp(0))
	s.Respond(corr, bb8iAPIVResp(42))
	cn.Close()
	rep := bb8iRun(t, c)
	bb8iExpect(t, rep, map[string]int{"instance-id-changed": 1})
	bb8iUnmatched(t, rep, 1)
}

// Two requests pipelined with the same correlation ID (a buggy client): the
// first violating, the second compliant. README rule 9: which request an
// answer belongs to cannot be told, so the broker is not judged on it
// (counted in state_limited), and the later request replaces the earlier:
// the second answer matches none (one unmatched-response). A finding that
// may be wrong is worse than none.
func TestBB8IDuplicateCorrelation(t *testing.T) {
	for _, badFirst := range []bool{true, false} {
		name := "badFirst"
		if !badFirst {
			name = "badSecond"
		}
		t.Run(name, func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			cn, s := bb8iModern(c)
			dup := s.Header.CorrelationID
			ids := [2]*[16]byte{bbID(bb8iY), bbID(bb8iX)}
			if !badFirst {
				ids = [2]*[16]byte{bbID(bb8iX), bbID(bb8iY)}
			}
			var frames [2][]byte
			for i := range 2 {
				s.Header.InstanceID = ids[i]
				s.Header.CorrelationID = dup
				_, frames[i] = s.Encode(bb8iAPIV())
			}
			f0 := cn.Send(frames[0])
			f1 := cn.Send(frames[1])
			badF := f0
			if !badFirst {
				badF = f1
			}
			s.Respond(dup, bb8iAPIVResp(0))
			s.Respond(dup, bb8iAPIVResp(0))
			cn.Close()
			rep := bb8iRun(t, c)
			bb8iExpect(t, rep, map[string]int{"instance-id-changed": 1})
			if fs := bb7All(rep.b7(), "instance-id-changed"); len(fs) == 1 && fs[0].Frame != badF {
				t.Errorf("instance-id-changed at frame %d, want %d (the violating request)", fs[0].Frame, badF)
			}
			bb8iUnmatched(t, rep, 1)
			if rep.Totals.StateLimited == 0 {
				t.Errorf("state_limited 0: the answer not judged must be counted")
			}
		})
	}
}

// Many (20) violating requests pipelined before any answer, then all
// answered NONE. README 18: 16 requests await an answer per connection, the
// oldest dropped, counted in state_limited. So 16 broker-accepted-invalid
// (the newest 16) and the 4 skipped judgements counted, never silent.
func TestBB8IPendingBound(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn, s := bb8iModern(c)
	s.Header.InstanceID = bbID(bb8iY)
	var bodies []kmsg.Request
	for range 20 {
		bodies = append(bodies, bb8iAPIV())
	}
	corrs, _ := s.Pipeline(bodies...)
	for _, corr := range corrs {
		s.Respond(corr, bb8iAPIVResp(0))
	}
	cn.Close()
	rep := bb8iRun(t, c)
	bb8iExpect(t, rep, map[string]int{"instance-id-changed": 20, "broker-accepted-invalid": 16})
	got := map[int32]bool{}
	for _, f := range bb7All(rep.b7(), "broker-accepted-invalid") {
		got[f.CorrelationID] = true
	}
	for _, corr := range corrs[4:] {
		if !got[corr] {
			t.Errorf("no broker-accepted-invalid for corr %d (one of the newest 16)", corr)
		}
	}
	if rep.Totals.StateLimited < 4 {
		t.Errorf("state_limited = %d, want >= 4 (4 pending requests dropped)", rep.Totals.StateLimited)
	}
}

// 16 pipelined violating requests fit the bound: all 16 judged, nothing
// state-limited, nothing unmatched.
func TestBB8IPendingAtBound(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn, s := bb8iModern(c)
	s.Header.InstanceID = bbID(bb8iY)
	var bodies []kmsg.Request
	for range 16 {
		bodies = append(bodies, bb8iAPIV())
	}
	corrs, _ := s.Pipeline(bodies...)
	for _, corr := range corrs {
		s.Respond(corr, bb8iAPIVResp(0))
	}
	cn.Close()
	rep := bb8iRun(t, c)
	bb8iExpect(t, rep, map[string]int{"instance-id-changed": 16, "broker-accepted-invalid": 16})
	if rep.Totals.StateLimited != 0 {
		t.Errorf("state_limited = %d, want 0", rep.Totals.StateLimited)
	}
	bb8iUnmatched(t, rep, 0)
}

// instance-id-changed on a ConsumerGroupHeartbeat answered NONE.
func TestBB8IChangedOnHeartbeatAccepted(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn, s := bb8iModern(c)
	s.Header.InstanceID = bbID(bb8iY)
	reqF, respF := s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(1, "g", pcapgen.JavaString(bb8iX), 0),
		pcapgen.ConsumerGroupHeartbeatResponse(1, 0, pcapgen.Ptr(pcapgen.JavaString(bb8iX)), 1))
	cn.Close()
	rep := bb8iRun(t, c)
	bb8iExpectNoMisaligned(t, rep, map[string]int{"instance-id-changed": 1, "broker-accepted-invalid": 1})
	f := bb8iOne(t, rep, "broker-accepted-invalid")
	if f.Frame != reqF || f.KIP != "KIP-1313" || f.API != "ConsumerGroupHeartbeat" {
		t.Errorf("frame %d kip %s api %s; want frame %d (request; answer %d) KIP-1313 ConsumerGroupHeartbeat", f.Frame, f.KIP, f.API, reqF, respF)
	}
}

// Telemetry rows 4 and 5 answered NONE (with a zero ID): broker-accepted-invalid,
// kip of the rule answered (KIP-714).
func TestBB8ITelemetryRows45Accepted(t *testing.T) {
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
			rep := bb8iRun(t, c)
			bb8iExpect(t, rep, map[string]int{row.rule: 1, "broker-accepted-invalid": 1})
			f := bb8iOne(t, rep, "broker-accepted-invalid")
			rf := bb8iOne(t, rep, row.rule)
			if f.Frame != reqF || f.KIP != rf.KIP {
				t.Errorf("frame %d kip %s; want frame %d kip %s", f.Frame, f.KIP, reqF, rf.KIP)
			}
		})
	}
}

// member-id-empty on a v1 join answered with a broker-assigned ID: both 3.5
// rules; at v0 (below the required version) neither.
func TestBB8IMemberIDEmptyAnswered(t *testing.T) {
	for _, v := range []int16{0, 1} {
		t.Run("v"+strconv.Itoa(int(v)), func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			cn, s := bb8iLegacy(c)
			s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(v, "g", "", 0),
				pcapgen.ConsumerGroupHeartbeatResponse(v, 0, pcapgen.Ptr(pcapgen.JavaString(bb8iB)), 1))
			cn.Close()
			rep := bb8iRun(t, c)
			want := map[string]int{"member-id-empty": 1}
			if v >= 1 {
				want["broker-accepted-invalid"] = 1
				want["broker-generated-member-id"] = 1
			}
			bb8iExpect(t, rep, want)
		})
	}
}

// broker-telemetry-id-echo / -missing for each GetTelemetrySubscriptions row.
func TestBB8ITelemetryEchoMissingRows(t *testing.T) {
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
			rep := bb8iRun(t, c)
			bb8iExpect(t, rep, tc.want)
		})
	}
}

// PushTelemetry answered with an error code: a compliant push answered
// with an error is no finding; a zero push answered with an error that is
// not INVALID_REQUEST is broker-accepted-invalid (README 9), answered 42 not.
func TestBB8IPushTelemetryErrorAnswers(t *testing.T) {
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
			rep := bb8iRun(t, c)
			bb8iExpect(t, rep, tc.want)
		})
	}
}

func bb8iGTSBody(code int16, id [16]byte) []byte {
	r := pcapgen.GetTelemetrySubscriptionsResponse(code, id, 7)
	r.SetVersion(0)
	return r.AppendTo(nil)
}

// An answer kwatch cannot decode (truncated body, or trailing bytes of a
// "v1-looking" body) gives no broker finding and no crash; the answer is
// still matched (not unmatched).
func TestBB8IUndecodableAnswers(t *testing.T) {
	full := bb8iGTSBody(0, bb8iZero)
	cases := []struct {
		name   string
		modern bool
		body   [16]byte
		resp   []byte
		want   map[string]int
	}{
		// legacy row 1 answered with 3 bytes (throttle cut): no missing.
		{"row1-truncated", false, bb8iZero, full[:3], nil},
		// legacy row 1 cut inside the ID: no missing.
		{"row1-cut-id", false, bb8iZero, full[:12], nil},
		// row 4 answered with 3 bytes: no top-level error code, no 3.5.
		{"row4-truncated", true, bb8iZero, full[:3], map[string]int{"telemetry-id-requested-with-header": 1}},
		// legacy row 1, B assigned, with 8 trailing bytes (v1-looking).
		{"row1-trailing", false, bb8iZero, append(bb8iGTSBody(0, bb8iB), 1, 2, 3, 4, 5, 6, 7, 8), nil},
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
			corr, _ := s.Request(pcapgen.GetTelemetrySubscriptions(tc.body))
			cn.Reply(pcapgen.EncodeResponseRaw(corr, 1, tc.resp))
			s.RoundTrip(pcapgen.Metadata(12, "orders"), pcapgen.MetadataResponse(12, "10.0.0.1", 9092))
			cn.Close()
			rep := bb8iRun(t, c)
			bb8iExpect(t, rep, tc.want)
			bb8iUnmatched(t, rep, 0)
		})
	}
}

// GetTelemetrySubscriptions v0 answered with a v1-looking body (flexible
// header written as if with extra tag bytes): here a response header v0
// (no tag byte) instead of v1: the body is off by one; no crash, no
// broker finding.
func TestBB8IGTSWrongResponseHeader(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn, s := bb8iLegacy(c)
	corr, _ := s.Request(pcapgen.GetTelemetrySubscriptions(bb8iZero))
	cn.Reply(pcapgen.EncodeResponseRaw(corr, 0, bb8iGTSBody(0, bb8iB)))
	cn.Close()
	rep := bb8iRun(t, c)
	for _, f := range rep.Findings {
		if f.Rule == "broker-telemetry-id-missing" || f.Rule == "broker-accepted-invalid" {
			t.Errorf("unexpected %s\n%s", f.Rule, rep.b7().summary())
		}
	}
}

// A request whose tag 0 is malformed (size 15), answered NONE: SPEC 3.5
// "the error rules of 3.1": broker-accepted-invalid.
func TestBB8IMalformedAnsweredNone(t *testing.T) {
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
	rep := bb8iRun(t, c)
	bb8iExpect(t, rep, map[string]int{"instance-id-malformed": 1, "broker-accepted-invalid": 1})
	if f := bb8iOne(t, rep, "broker-accepted-invalid"); f.Frame != reqF || f.KIP != "KIP-1313" {
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
func TestBB8IAnswerAfterClientFIN(t *testing.T) {
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
	rep := bb8iRead(t, path)
	bb8iExpect(t, rep, map[string]int{"instance-id-changed": 1, "broker-accepted-invalid": 1})
	if f := bb8iOne(t, rep, "broker-accepted-invalid"); f.Frame != reqF || f.CorrelationID != corr {
		t.Errorf("frame %d corr %d; want %d %d", f.Frame, f.CorrelationID, reqF, corr)
	}
	bb8iUnmatched(t, rep, 0)
}

// Same correlation ID twice, compliant first, violating second; a
// conforming broker answers in order: NONE (the compliant one), then
// INVALID_REQUEST (the violating one). No 3.5 finding may fire: the NONE
// answers the compliant request (README rule 9: with a reused correlation
// ID the answer is not judged; the later request replaced the earlier, so
// the second answer matches none).
func TestBB8IDuplicateCorrelationConformingBroker(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn, s := bb8iModern(c)
	dup := s.Header.CorrelationID
	s.Header.InstanceID = bbID(bb8iX)
	_, good := s.Encode(bb8iAPIV())
	s.Header.CorrelationID = dup
	s.Header.InstanceID = bbID(bb8iY)
	_, bad := s.Encode(bb8iAPIV())
	cn.Send(good)
	cn.Send(bad)
	s.Respond(dup, bb8iAPIVResp(0))
	s.Respond(dup, bb8iAPIVResp(42))
	cn.Close()
	rep := bb8iRun(t, c)
	bb8iExpect(t, rep, map[string]int{"instance-id-changed": 1})
	bb8iUnmatched(t, rep, 1)
}
