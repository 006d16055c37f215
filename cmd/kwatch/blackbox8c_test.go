package main

// Black-box scenarios (batch 8c): the decoder and the protocol flows real
// Kafka clients produce. Resynchronisation after stream gaps in either
// direction (inside a Produce body, inside a header, at a frame boundary,
// after several pipelined requests, misaligned response chunks), SASL
// (v0 raw tokens over several rounds, v1 handshakes, KIP-368
// re-authentication, a KIP-1313 client naming itself on the handshake),
// ApiVersions fallbacks and old versions, header v0, API keys and versions
// kmsg does not know, unknown header tags, telemetry across connections and
// the GetTelemetrySubscriptions rows, and frame-size boundaries.
// Expectations come from SPEC.md and README.md's "Rules: where SPEC.md is
// silent" only, never from kwatch's implementation.

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/netip"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kwatch/kwatch/internal/pcapgen"
)

// ------------------------------------------------------------------ helpers

// Kafka error codes (kerr).
const (
	bb8cErrNone            = 0
	bb8cErrUnsupportedVer  = 35
	bb8cErrInvalidRequest  = 42
	bb8cErrUnknownServer   = -1
	bb8cErrUnsupportedMech = 33
)

var (
	bb8cX    = pcapgen.SeqUUID(0xc1)
	bb8cY    = pcapgen.SeqUUID(0xd1)
	bb8cB    = pcapgen.SeqUUID(0xe1)
	bb8cR    = pcapgen.SeqUUID(0xf1)
	bb8cZero [16]byte
)

type bb8cReport struct {
	Totals struct {
		Packets          int            `json:"packets"`
		Connections      int            `json:"connections"`
		KafkaConnections int            `json:"kafka_connections"`
		Requests         int            `json:"requests"`
		ByHeaderVersion  map[string]int `json:"requests_by_header_version"`
		Responses        int            `json:"responses"`
		Coverage         map[string]int `json:"coverage"`
	} `json:"totals"`
	Instances []map[string]any `json:"instances"`
	Findings  []bbFinding      `json:"findings"`
}

func bb8cRead(t *testing.T, path string, extra ...string) bb8cReport {
	t.Helper()
	rep, _ := bbReadAs[bb8cReport](t, path, extra...)
	return rep
}

func bb8cRun(t *testing.T, c *pcapgen.Capture, extra ...string) bb8cReport {
	t.Helper()
	return bb8cRead(t, bbCaptureFile(t, c, ""), extra...)
}

func (r bb8cReport) summary() string {
	var b strings.Builder
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "  %s %s conf=%s frame=%d api=%s corr=%d conn=%s exp=%q obs=%q\n",
			f.Rule, f.Severity, f.Confidence, f.Frame, f.API, f.CorrelationID, f.Conn.Client, f.Expected, f.Observed)
	}
	fmt.Fprintf(&b, "  totals: requests=%d responses=%d by_header=%v coverage=%v\n",
		r.Totals.Requests, r.Totals.Responses, r.Totals.ByHeaderVersion, r.Totals.Coverage)
	return b.String()
}

// bb8cW is one expected finding: conf "" and frame 0 are not checked.
type bb8cW struct {
	rule, sev, conf string
	frame           int
}

func (w bb8cW) String() string { return fmt.Sprintf("%s/%s/%s@%d", w.rule, w.sev, w.conf, w.frame) }

// bb8cExact asserts that the report's findings are exactly want (as a
// multiset; conf "" and frame 0 match anything).
func bb8cExact(t *testing.T, rep bb8cReport, want ...bb8cW) {
	t.Helper()
	used := make([]bool, len(rep.Findings))
	var missing []string
	for _, w := range want {
		found := false
		for i, f := range rep.Findings {
			if used[i] || f.Rule != w.rule || f.Severity != w.sev {
				continue
			}
			if (w.conf != "" && f.Confidence != w.conf) || (w.frame != 0 && f.Frame != w.frame) {
				continue
			}
			used[i], found = true, true
			break
		}
		if !found {
			missing = append(missing, w.String())
		}
	}
	var extra []string
	for i, f := range rep.Findings {
		if !used[i] {
			extra = append(extra, fmt.Sprintf("%s/%s/%s@%d", f.Rule, f.Severity, f.Confidence, f.Frame))
		}
	}
	if len(missing) > 0 || len(extra) > 0 {
		t.Errorf("findings differ from the spec:\n  missing (spec requires): %v\n  unexpected (kwatch gave): %v\nreport:\n%s", missing, extra, rep.summary())
	}
}

// bb8cCov asserts exact coverage-event counts for the named events.
func bb8cCov(t *testing.T, rep bb8cReport, want map[string]int) {
	t.Helper()
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range want {
			if !yield(k) {
				return
			}
		}
	}) {
		if got := rep.Totals.Coverage[k]; got != want[k] {
			t.Errorf("coverage %s = %d, spec requires %d\n%s", k, got, want[k], rep.summary())
		}
	}
}

// bb8cTotals asserts the request and response counts (-1: not checked).
func bb8cTotals(t *testing.T, rep bb8cReport, requests, responses int) {
	t.Helper()
	if requests >= 0 && rep.Totals.Requests != requests {
		t.Errorf("totals.requests = %d, spec requires %d\n%s", rep.Totals.Requests, requests, rep.summary())
	}
	if responses >= 0 && rep.Totals.Responses != responses {
		t.Errorf("totals.responses = %d, spec requires %d\n%s", rep.Totals.Responses, responses, rep.summary())
	}
}

// bb8cDump runs kwatch dump --format ndjson and returns its objects.
func bb8cDump(t *testing.T, path string, extra ...string) []map[string]any {
	t.Helper()
	args := append(append([]string{"dump", "--format", "ndjson"}, extra...), path)
	code, stdout, stderr := runKwatch(args...)
	if code != 0 {
		t.Fatalf("kwatch %v: exit %d: %s", args, code, stderr)
	}
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimRight(stdout, "\n"), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("dump line is not JSON: %q", l)
		}
		out = append(out, m)
	}
	return out
}

// bb8cPDUs returns the dump objects of kind with correlation ID corr.
func bb8cPDUs(d []map[string]any, kind string, corr int32) []map[string]any {
	var out []map[string]any
	for _, o := range d {
		if o["kind"] == kind && o["correlation_id"] == float64(corr) {
			out = append(out, o)
		}
	}
	return out
}

func bb8cDumpLines(d []map[string]any) string {
	var b strings.Builder
	for _, o := range d {
		switch o["kind"] {
		case "event":
			fmt.Fprintf(&b, "  event %v frame=%v\n", o["event"], o["frame"])
		default:
			fmt.Fprintf(&b, "  %v %v v%v hv%v corr=%v frame=%v req_frame=%v cid=%v inst=%v err=%v\n", o["kind"], o["api"], o["api_version"],
				o["header_version"], o["correlation_id"], o["frame"], o["request_frame"], o["client_id"], o["instance_id"], o["error_code"])
		}
	}
	return b.String()
}

// bb8cMatched asserts that the dump has exactly one request with corr,
// completed at reqFrame, and exactly one response with corr naming that
// request (request_frame), with error code code when code >= 0.
func bb8cMatched(t *testing.T, d []map[string]any, corr int32, reqFrame int, code int) {
	t.Helper()
	reqs, resps := bb8cPDUs(d, "request", corr), bb8cPDUs(d, "response", corr)
	if len(reqs) != 1 || reqs[0]["frame"] != float64(reqFrame) {
		t.Errorf("corr %d: want one request at frame %d, dump has %d:\n%s", corr, reqFrame, len(reqs), bb8cDumpLines(d))
		return
	}
	if len(resps) != 1 || resps[0]["request_frame"] != float64(reqFrame) {
		t.Errorf("corr %d: want one response matched to the request at frame %d, dump has %d:\n%s", corr, reqFrame, len(resps), bb8cDumpLines(d))
		return
	}
	if code >= 0 && resps[0]["error_code"] != float64(code) {
		t.Errorf("corr %d: response error_code %v, want %d", corr, resps[0]["error_code"], code)
	}
}

func bb8cID(id [16]byte) *[16]byte { return &id }

// bb8cModern opens a connection of a KIP-1313 client: ApiVersions v3 with
// client ID cid and instance ID inst, then null client IDs.
func bb8cModern(c *pcapgen.Capture, o pcapgen.ConnOptions, cid string, inst [16]byte) (*pcapgen.Conn, *pcapgen.Session) {
	cn := c.Conn(o)
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr(cid), InstanceID: bb8cID(inst), CorrelationID: 1})
	s.RoundTrip(pcapgen.APIVersions(3, "apache-kafka-java", "4.2.0"), pcapgen.APIVersionsResponse(3))
	s.Header.ClientID = nil
	return cn, s
}

// bb8cMeta is a Metadata v12 round trip (header v2); it returns the
// request's completion frame.
func bb8cMeta(s *pcapgen.Session) int {
	f, _ := s.RoundTrip(pcapgen.Metadata(12, "orders"), pcapgen.MetadataResponse(12, "10.0.0.1", 9092))
	return f
}

// bb8cMetaWith is bb8cMeta with the header instance ID id for this request
// only.
func bb8cMetaWith(s *pcapgen.Session, id *[16]byte) int {
	old := s.Header.InstanceID
	s.Header.InstanceID = id
	f := bb8cMeta(s)
	s.Header.InstanceID = old
	return f
}

func bb8cMetaResp(corr int32) []byte {
	return pcapgen.EncodeResponse(corr, 12, pcapgen.MetadataResponse(12, "10.0.0.1", 9092))
}

// bb8cFiller is n bytes no Kafka decoder can take for a header: 'x' read as
// a frame size is 2 GB.
func bb8cFiller(n int) []byte { return bytes.Repeat([]byte{'x'}, n) }

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

func bb8cSaslAuth(data string) *kmsg.SASLAuthenticateRequest {
	r := kmsg.NewPtrSASLAuthenticateRequest()
	r.Version = 2
	r.SASLAuthBytes = []byte(data)
	return r
}

func bb8cSaslAuthResp(data string) *kmsg.SASLAuthenticateResponse {
	r := kmsg.NewPtrSASLAuthenticateResponse()
	r.Version = 2
	r.SASLAuthBytes = []byte(data)
	r.SessionLifetimeMillis = 3600000
	return r
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
func TestBB8CGapInProduceBodyRecordsLookLikeRequests(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn, s := bb8cModern(c, pcapgen.ConnOptions{}, "orders-app", bb8cX)
	bb8cMeta(s) // corr 2
	fakeA := pcapgen.EncodeRequest(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("evil-app"), InstanceID: bb8cID(bb8cY), CorrelationID: 4}, pcapgen.Metadata(12, "orders"))
	fakeB := pcapgen.EncodeRequest(pcapgen.RequestHeader{InstanceID: bb8cID(bb8cY), CorrelationID: 4}, pcapgen.Metadata(12, "orders"))
	records := slices.Concat(bb8cFiller(400), fakeA, fakeB, bb8cFiller(600))
	prodCorr, prod := s.Encode(pcapgen.Produce(9, "orders", bb8cZero, records))
	bb8cLose(cn, pcapgen.ToBroker, prod, 100, 250)
	cn.Reply(pcapgen.EncodeResponse(prodCorr, 9, pcapgen.ProduceResponse(9, "orders", bb8cZero)))
	f4 := bb8cMeta(s)
	f5 := bb8cMetaWith(s, bb8cID(bb8cY))
	cn.Close()
	path := bbCaptureFile(t, c, "")
	rep := bb8cRead(t, path)
	bb8cExact(t, rep, bb8cW{"instance-id-changed", "error", "partial", f5})
	bb8cCov(t, rep, map[string]int{"stream-gap": 1, "framing-error": 0, "unmatched-response": 0})
	d := bb8cDump(t, path)
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
func TestBB8CGapScanRejectsOldCorrelationID(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn, s := bb8cModern(c, pcapgen.ConnOptions{}, "orders-app", bb8cX)
	bb8cMeta(s) // corr 2
	fake := pcapgen.EncodeRequest(pcapgen.RequestHeader{InstanceID: bb8cID(bb8cY), CorrelationID: 1}, pcapgen.Metadata(12, "orders"))
	records := slices.Concat(bb8cFiller(200), fake, bb8cFiller(300))
	prodCorr, prod := s.Encode(pcapgen.Produce(9, "orders", bb8cZero, records))
	bb8cLose(cn, pcapgen.ToBroker, prod, 0, 40)
	cn.Reply(pcapgen.EncodeResponse(prodCorr, 9, pcapgen.ProduceResponse(9, "orders", bb8cZero)))
	f4 := bb8cMeta(s)
	f5 := bb8cMeta(s)
	cn.Close()
	path := bbCaptureFile(t, c, "")
	rep := bb8cRead(t, path)
	bb8cExact(t, rep)
	bb8cCov(t, rep, map[string]int{"stream-gap": 1})
	d := bb8cDump(t, path)
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
func TestBB8CGapPositionsInOneRequest(t *testing.T) {
	for _, kind := range []string{"kip1313", "legacy"} {
		for _, pos := range []string{"size-split", "header-after-size", "last-byte", "whole-frame"} {
			t.Run(kind+"/"+pos, func(t *testing.T) {
				c := pcapgen.New(pcapgen.Options{})
				cn := c.Conn(pcapgen.ConnOptions{})
				h := pcapgen.RequestHeader{ClientID: pcapgen.Ptr("orders-app"), CorrelationID: 1}
				if kind == "kip1313" {
					h.InstanceID = bb8cID(bb8cX)
				}
				s := cn.Session(h)
				s.RoundTrip(pcapgen.APIVersions(3, "apache-kafka-java", "4.2.0"), pcapgen.APIVersionsResponse(3))
				if kind == "kip1313" {
					s.Header.ClientID = nil
				}
				bb8cMeta(s) // corr 2
				corr3, q3 := s.Encode(pcapgen.Metadata(12, "orders", "payments", "audit"))
				hole := map[string][2]int{"size-split": {2, 6}, "header-after-size": {6, 14}, "last-byte": {len(q3) - 1, len(q3)}, "whole-frame": {0, len(q3)}}[pos]
				bb8cLose(cn, pcapgen.ToBroker, q3, hole[0], hole[1])
				cn.Reply(bb8cMetaResp(corr3))
				f4 := bb8cMeta(s)
				want := bb8cW{"instance-id-changed", "error", "partial", 0}
				if kind == "kip1313" {
					want.frame = bb8cMetaWith(s, bb8cID(bb8cY))
				} else {
					s.Header.ClientID = pcapgen.Ptr("other-app")
					want = bb8cW{"client-id-changed", "warn", "partial", bb8cMeta(s)}
				}
				cn.Close()
				path := bbCaptureFile(t, c, "")
				rep := bb8cRead(t, path)
				bb8cExact(t, rep, want)
				bb8cCov(t, rep, map[string]int{"stream-gap": 1, "framing-error": 0})
				d := bb8cDump(t, path)
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
func TestBB8CGapFivePipelinedRequestsLost(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn, s := bb8cModern(c, pcapgen.ConnOptions{Perturb: &pcapgen.Perturb{MSS: 60000}}, "orders-app", bb8cX)
	bb8cMeta(s) // corr 2
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
	f8 := bb8cMeta(s)
	f9 := bb8cMetaWith(s, bb8cID(bb8cY))
	cn.Close()
	path := bbCaptureFile(t, c, "")
	rep := bb8cRead(t, path)
	bb8cExact(t, rep, bb8cW{"instance-id-changed", "error", "partial", f9})
	bb8cCov(t, rep, map[string]int{"stream-gap": 1, "framing-error": 0})
	d := bb8cDump(t, path)
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
func TestBB8CResponseResyncMisalignedChunk(t *testing.T) {
	for _, mode := range []string{"middle", "head", "head-no-lookalike"} {
		t.Run(mode, func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			cn, s := bb8cModern(c, pcapgen.ConnOptions{Perturb: &pcapgen.Perturb{MSS: 60000}}, "orders-app", bb8cX)
			bb8cMeta(s) // corr 2
			c3, q3 := s.Encode(pcapgen.Fetch(12, "orders", bb8cZero))
			s.Header.InstanceID = bb8cID(bb8cY)
			c4, q4 := s.Encode(pcapgen.APIVersions(3, "apache-kafka-java", "4.2.0"))
			s.Header.InstanceID = bb8cID(bb8cX)
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
			rej.ErrorCode = bb8cErrInvalidRequest
			rest := slices.Concat(pcapgen.EncodeResponse(c4, 3, rej), bb8cMetaResp(c5))
			if mode == "middle" {
				bb8cLose(cn, pcapgen.ToClient, slices.Concat(r3, rest), 30, 100)
			} else {
				bb8cLose(cn, pcapgen.ToClient, slices.Concat(r3, rest), 0, 20)
			}
			f6 := bb8cMeta(s) // acknowledges past the hole
			cn.Close()
			path := bbCaptureFile(t, c, "")
			rep := bb8cRead(t, path)
			bb8cExact(t, rep, bb8cW{"instance-id-changed", "error", "full", fr[1]})
			bb8cCov(t, rep, map[string]int{"stream-gap": 1, "unmatched-response": 0})
			d := bb8cDump(t, path)
			bb8cMatched(t, d, c4, fr[1], bb8cErrInvalidRequest)
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
func TestBB8CResponseResyncInsideAnswerBody(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn, s := bb8cModern(c, pcapgen.ConnOptions{Perturb: &pcapgen.Perturb{MSS: 60000}}, "orders-app", bb8cX)
	bb8cMeta(s) // corr 2
	c3, q3 := s.Encode(pcapgen.APIVersions(3, "apache-kafka-java", "4.2.0"))
	c4, q4 := s.Encode(pcapgen.Metadata(12, "orders"))
	s.Header.InstanceID = bb8cID(bb8cY)
	c5, q5 := s.Encode(pcapgen.APIVersions(3, "apache-kafka-java", "4.2.0"))
	s.Header.InstanceID = bb8cID(bb8cX)
	fr := cn.Write(pcapgen.ToBroker, q3, q4, q5)
	rej := pcapgen.APIVersionsResponse(3)
	rej.ErrorCode = bb8cErrInvalidRequest
	all := slices.Concat(pcapgen.EncodeResponse(c3, 3, pcapgen.APIVersionsResponse(3)), bb8cMetaResp(c4), pcapgen.EncodeResponse(c5, 3, rej))
	bb8cLose(cn, pcapgen.ToClient, all, 0, 20)
	f6 := bb8cMeta(s)
	cn.Close()
	path := bbCaptureFile(t, c, "")
	rep := bb8cRead(t, path)
	bb8cExact(t, rep, bb8cW{"instance-id-changed", "error", "full", fr[2]})
	bb8cCov(t, rep, map[string]int{"stream-gap": 1, "unmatched-response": 0, "framing-error": 0})
	d := bb8cDump(t, path)
	bb8cMatched(t, d, c4, fr[1], -1)
	bb8cMatched(t, d, c5, fr[2], bb8cErrInvalidRequest)
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
func TestBB8CMidstreamFirstRequestAnsweredWithPort(t *testing.T) {
	for _, port := range []bool{false, true} {
		t.Run(fmt.Sprintf("port=%v", port), func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			cn := c.Conn(pcapgen.ConnOptions{NoSYN: true})
			s := cn.Session(pcapgen.RequestHeader{InstanceID: bb8cID(bb8cX), CorrelationID: 812})
			corr, prod := s.Encode(pcapgen.Produce(9, "orders", bb8cZero, bb8cFiller(1000)))
			cn.Raw(pcapgen.ToBroker, prod[len(prod)-300:])
			cn.Reply(pcapgen.EncodeResponse(corr, 9, pcapgen.ProduceResponse(9, "orders", bb8cZero)))
			f813 := bb8cMeta(s)
			f814 := bb8cMetaWith(s, bb8cID(bb8cY))
			cn.Close()
			path := bbCaptureFile(t, c, "")
			var extra []string
			if port {
				extra = []string{"--port", "9092"}
			}
			rep := bb8cRead(t, path, extra...)
			bb8cExact(t, rep, bb8cW{"instance-id-changed", "error", "partial", f814})
			bb8cCov(t, rep, map[string]int{"midstream-join": 1})
			d := bb8cDump(t, path, extra...)
			bb8cMatched(t, d, 813, f813, -1)
			bb8cMatched(t, d, 814, f814, -1)
		})
	}
}

// ------------------------------------------------------------------- SASL

// KIP-368 re-authentication on a KIP-1313 Java client's connection:
// ApiVersions (client ID, X), SaslHandshake v1 (header v1, null client ID),
// two SaslAuthenticate v2 rounds (header v2, X), Metadata every 5 minutes,
// then SaslHandshake v1 and SaslAuthenticate again, then Metadata. SPEC 1: raw
// tokens follow only "a v0 handshake"; SPEC 2: "Requests with a v0/v1 header
// are exempt from the header instance-ID rules". Compliant: no finding, no
// sasl-raw-tokens, every request answered. Variant: the re-authentication's
// SaslAuthenticate requests omit X: instance-id-dropped on each (error,
// full, at its frame), and no broker-accepted-invalid: SaslAuthenticate is
// not among the APIs of section 1 (README 9: "ApiVersions, SaslHandshake,
// the group heartbeats, telemetry").
func TestBB8CSaslReauthentication(t *testing.T) {
	for _, drop := range []bool{false, true} {
		t.Run(fmt.Sprintf("reauth-drops-id=%v", drop), func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			cn, s := bb8cModern(c, pcapgen.ConnOptions{}, "orders-app", bb8cX)
			login := func() []int {
				s.RoundTrip(pcapgen.SaslHandshake(1, "SCRAM-SHA-512"), pcapgen.SaslHandshakeResponse(1, "SCRAM-SHA-512"))
				a, _ := s.RoundTrip(bb8cSaslAuth("n,,n=alice,r=rOprNGfwEbeRWgbNEkqO"), bb8cSaslAuthResp("r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"))
				b, _ := s.RoundTrip(bb8cSaslAuth("c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="), bb8cSaslAuthResp("v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="))
				return []int{a, b}
			}
			login()
			bb8cMeta(s)
			// Traffic goes on (a metadata refresh every 5 minutes) until the
			// session lifetime is near.
			for i := 0; i < 3; i++ {
				c.Sleep(5 * time.Minute)
				bb8cMeta(s)
			}
			if drop {
				s.Header.InstanceID = nil
			}
			auth := login()
			s.Header.InstanceID = bb8cID(bb8cX)
			bb8cMeta(s)
			cn.Close()
			rep := bb8cRun(t, c)
			var want []bb8cW
			if drop {
				want = []bb8cW{{"instance-id-dropped", "error", "full", auth[0]}, {"instance-id-dropped", "error", "full", auth[1]}}
			}
			bb8cExact(t, rep, want...)
			bb8cCov(t, rep, map[string]int{"sasl-raw-tokens": 0, "framing-error": 0, "unmatched-response": 0, "stream-gap": 0})
			bb8cTotals(t, rep, 12, 12)
			if rep.Totals.ByHeaderVersion["v1"] != 2 || rep.Totals.ByHeaderVersion["v2"] != 10 {
				t.Errorf("requests_by_header_version %v, want v1=2 (the handshakes) v2=10", rep.Totals.ByHeaderVersion)
			}
		})
	}
}

// SPEC 1: "after a v0 handshake the client sends raw SASL tokens without
// Kafka headers until authentication ends: skip them, do not flag them";
// README 13: raw tokens are skipped "until a request header follows: one
// with a printable client ID, or a null one on a clean flexible header
// numbered after the handshake". SCRAM over SaslHandshake v0 takes two
// rounds of raw tokens in each direction (client-first, server-first,
// client-final, server-final), the server's tokens non-empty. Then a
// KIP-1313 client (ApiVersions v3 with null client ID and X, Metadata X,
// Metadata Y: instance-id-changed, full) or a legacy one (client ID on
// every request; the last one names another: client-id-changed, full).
// No framing error, stream gap or unmatched response; 4 requests and 4
// responses.
func TestBB8CSaslV0ScramTwoRounds(t *testing.T) {
	for _, kind := range []string{"kip1313", "legacy"} {
		t.Run(kind, func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			cn := c.Conn(pcapgen.ConnOptions{})
			s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("py-app"), CorrelationID: 1})
			s.RoundTrip(pcapgen.SaslHandshake(0, "SCRAM-SHA-256"), pcapgen.SaslHandshakeResponse(0, "SCRAM-SHA-256"))
			cn.Raw(pcapgen.ToBroker, pcapgen.SASLToken([]byte("n,,n=user,r=fyko+d2lbbFgONRv9qkxdawL")))
			cn.Raw(pcapgen.ToClient, pcapgen.SASLToken([]byte("r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096")))
			cn.Raw(pcapgen.ToBroker, pcapgen.SASLToken([]byte("c=biws,r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,p=v0X8v3Bz2T0CJGbJQyF0X+HI4Ts=")))
			cn.Raw(pcapgen.ToClient, pcapgen.SASLToken([]byte("v=rmF9pqV8S7suAoZWja4dJRkFsKQ=")))
			var want bb8cW
			if kind == "kip1313" {
				s.Header.ClientID = nil
				s.Header.InstanceID = bb8cID(bb8cX)
				s.RoundTrip(pcapgen.APIVersions(3, "kafka-python", "3.0.0"), pcapgen.APIVersionsResponse(3))
				bb8cMeta(s)
				want = bb8cW{"instance-id-changed", "error", "full", bb8cMetaWith(s, bb8cID(bb8cY))}
			} else {
				s.RoundTrip(pcapgen.APIVersions(3, "kafka-python", "3.0.0"), pcapgen.APIVersionsResponse(3))
				bb8cMeta(s)
				s.Header.ClientID = pcapgen.Ptr("other-app")
				want = bb8cW{"client-id-changed", "warn", "full", bb8cMeta(s)}
			}
			cn.Close()
			rep := bb8cRun(t, c)
			bb8cExact(t, rep, want)
			bb8cCov(t, rep, map[string]int{"framing-error": 0, "stream-gap": 0, "unmatched-response": 0, "midstream-join": 0})
			if rep.Totals.Coverage["sasl-raw-tokens"] < 1 {
				t.Errorf("sasl-raw-tokens %d, want >= 1", rep.Totals.Coverage["sasl-raw-tokens"])
			}
			bb8cTotals(t, rep, 4, 4)
		})
	}
}

// A KIP-1313 client whose first request is SaslHandshake v1 (header v1, its
// client ID there), then SaslAuthenticate v2 (null client ID, X: the first
// v2 request), Metadata with X, then one Metadata that repeats the client
// ID. SPEC 3.7: "The client-ID rules' first request is the connection's
// first request with header v1 or higher" (so no client-id-missing-first);
// SPEC 2: v1 requests "neither set nor break" the instance state; SPEC 3.2
// client-id-repeated (info) "once per connection, when the connection
// ends"; README 12: its frame is "the packet that ended the connection: its
// second FIN".
func TestBB8CSaslHandshakeFirstNamesClient(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("orders-app"), CorrelationID: 1})
	s.RoundTrip(pcapgen.SaslHandshake(1, "PLAIN"), pcapgen.SaslHandshakeResponse(1, "PLAIN"))
	s.Header.ClientID = nil
	s.Header.InstanceID = bb8cID(bb8cX)
	s.RoundTrip(bb8cSaslAuth("\x00alice\x00alice-secret"), bb8cSaslAuthResp(""))
	bb8cMeta(s)
	s.Header.ClientID = pcapgen.Ptr("orders-app")
	bb8cMeta(s)
	cn.Close()
	rep := bb8cRun(t, c)
	bb8cExact(t, rep, bb8cW{"client-id-repeated", "info", "full", c.Frames() - 1})
	bb8cCov(t, rep, map[string]int{"sasl-raw-tokens": 0, "framing-error": 0, "unmatched-response": 0})
	bb8cTotals(t, rep, 4, 4)
	if rep.Totals.ByHeaderVersion["v1"] != 1 || rep.Totals.ByHeaderVersion["v2"] != 3 {
		t.Errorf("requests_by_header_version %v, want v1=1 v2=3", rep.Totals.ByHeaderVersion)
	}
}

// ------------------------------------------------------------ ApiVersions

// SPEC 1: "Response header: v0 ... except ApiVersions responses, which
// always use v0"; "Responses are matched to requests by correlation id". A
// KIP-1313 Java client opens with ApiVersions v4; an older broker answers
// UNSUPPORTED_VERSION (35) in a v0 body listing ApiVersions up to v3; the
// client retries at v3 (null client ID: no longer its first request), then
// Metadata twice. No finding, no framing error, gap or unmatched response;
// 4 requests, 4 responses; the first answer (error 35) matched to the v4
// request; the instance's row names the software from the request.
func TestBB8CApiVersionsV4UnsupportedThenV3(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("orders-app"), InstanceID: bb8cID(bb8cX), CorrelationID: 1})
	corr, f1 := s.Request(pcapgen.APIVersions(4, "apache-kafka-java", "4.2.0"))
	fb := kmsg.NewPtrApiVersionsResponse()
	fb.ErrorCode = bb8cErrUnsupportedVer
	fb.ApiKeys = []kmsg.ApiVersionsResponseApiKey{{ApiKey: 18, MinVersion: 0, MaxVersion: 3}}
	cn.Reply(pcapgen.EncodeResponse(corr, 0, fb))
	s.Header.ClientID = nil
	s.RoundTrip(pcapgen.APIVersions(3, "apache-kafka-java", "4.2.0"), pcapgen.APIVersionsResponse(3))
	bb8cMeta(s)
	bb8cMeta(s)
	cn.Close()
	path := bbCaptureFile(t, c, "")
	rep := bb8cRead(t, path)
	bb8cExact(t, rep)
	bb8cCov(t, rep, map[string]int{"framing-error": 0, "stream-gap": 0, "unmatched-response": 0})
	bb8cTotals(t, rep, 4, 4)
	d := bb8cDump(t, path)
	bb8cMatched(t, d, corr, f1, bb8cErrUnsupportedVer)
	if r := bb8cPDUs(d, "response", corr); len(r) == 1 && r[0]["header_version"] != float64(0) {
		t.Errorf("ApiVersions answer header_version %v, want 0", r[0]["header_version"])
	}
	found := false
	for _, in := range rep.Instances {
		if in["instance_id"] == pcapgen.JavaString(bb8cX) {
			found = true
			if in["software_name"] != "apache-kafka-java" || in["software_version"] != "4.2.0" {
				t.Errorf("instance row software %v %v, want apache-kafka-java 4.2.0", in["software_name"], in["software_version"])
			}
		}
	}
	if !found {
		t.Errorf("no instance row for X")
	}
}

// SPEC 1: "18 | ApiVersions (v3+ request has ClientSoftwareName/Version)";
// ApiVersions v0-v2 are non-flexible (header v1); SPEC 5: decoded bodies add
// client_software_name "where they apply". Three legacy connections open
// with ApiVersions v0, v1 and v2 (answered at the same version, header v0),
// then Metadata v1 (header v1) with the same client ID and one with another
// (client-id-changed, warn, full). No framing error or unmatched response;
// the dump's ApiVersions requests carry no client_software_name.
func TestBB8CApiVersionsOldVersions(t *testing.T) {
	for _, v := range []int16{0, 1, 2} {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			cn := c.Conn(pcapgen.ConnOptions{})
			s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("old-client"), CorrelationID: 1})
			f1, _ := s.RoundTrip(pcapgen.APIVersions(v, "", ""), pcapgen.APIVersionsResponse(v))
			meta := func() int {
				f, _ := s.RoundTrip(pcapgen.Metadata(1, "orders"), pcapgen.MetadataResponse(1, "10.0.0.1", 9092))
				return f
			}
			meta()
			s.Header.ClientID = pcapgen.Ptr("renamed")
			f3 := meta()
			cn.Close()
			path := bbCaptureFile(t, c, "")
			rep := bb8cRead(t, path)
			bb8cExact(t, rep, bb8cW{"client-id-changed", "warn", "full", f3})
			bb8cCov(t, rep, map[string]int{"framing-error": 0, "unmatched-response": 0, "stream-gap": 0})
			bb8cTotals(t, rep, 3, 3)
			if rep.Totals.ByHeaderVersion["v1"] != 3 {
				t.Errorf("requests_by_header_version %v, want v1=3", rep.Totals.ByHeaderVersion)
			}
			d := bb8cDump(t, path)
			bb8cMatched(t, d, 1, f1, 0)
			if r := bb8cPDUs(d, "request", 1); len(r) == 1 {
				if _, ok := r[0]["client_software_name"]; ok {
					t.Errorf("ApiVersions v%d request has client_software_name %v; v0-v2 have none", v, r[0]["client_software_name"])
				}
				if r[0]["header_version"] != float64(1) {
					t.Errorf("ApiVersions v%d header_version %v, want 1", v, r[0]["header_version"])
				}
			}
		})
	}
}

// -------------------------------------------------------------- header v0

// SPEC 1: header "v0 | ... | ControlledShutdown v0 only", "v1 | ... | every
// non-flexible request version", "v2 | ... | every flexible request
// version"; SPEC 2: "Requests with a v0/v1 header are exempt from the header
// instance-ID rules". On a connection whose first v2 request carries X:
// ControlledShutdown v0 (header v0) and v1 (header v1) in between give
// nothing; ControlledShutdown v3 (flexible, header v2) without X is
// instance-id-dropped (error, full), and no broker-accepted-invalid
// (ControlledShutdown is not an API of section 1).
func TestBB8CControlledShutdownHeaders(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("broker-3"), InstanceID: bb8cID(bb8cX), CorrelationID: 1})
	bb8cMeta(s)
	s.Header.ClientID = nil
	cs := func(v int16) int {
		r := kmsg.NewPtrControlledShutdownRequest()
		r.Version = v
		r.BrokerID = 3
		r.BrokerEpoch = 17
		resp := kmsg.NewPtrControlledShutdownResponse()
		f, _ := s.RoundTrip(r, resp)
		return f
	}
	cs(0)
	bb8cMeta(s)
	cs(1)
	bb8cMeta(s)
	s.Header.InstanceID = nil
	f := cs(3)
	s.Header.InstanceID = bb8cID(bb8cX)
	bb8cMeta(s)
	cn.Close()
	rep := bb8cRun(t, c)
	bb8cExact(t, rep, bb8cW{"instance-id-dropped", "error", "full", f})
	bb8cCov(t, rep, map[string]int{"framing-error": 0, "unmatched-response": 0, "stream-gap": 0})
	bb8cTotals(t, rep, 7, 7)
	if hv := rep.Totals.ByHeaderVersion; hv["v0"] != 1 || hv["v1"] != 1 || hv["v2"] != 5 {
		t.Errorf("requests_by_header_version %v, want v0=1 v1=1 v2=5", hv)
	}
}

// ------------------------------------------- keys and versions kmsg lacks

// SPEC 1: header versions are "chosen by API key and API version" from
// kmsg; SPEC 2 "resyncs to the next plausible frame"; a frame of valid size
// is no framing error by SPEC 1 ("A frame size < 8 or > 100 MiB ... is a
// framing error"). A newer client and broker exchange one request kmsg
// cannot place: an unknown API key 200, or Metadata v14 (kmsg knows up to
// v13). Its size is valid, so the stream stays in step: the requests around
// it are decoded, no bytes were lost (no stream-gap) and the later
// instance-id-changed (Y) is full at its frame. Reported: framing-error and
// what the dump shows for the unknown request (README is silent on it).
func TestBB8CUnknownKeyAndVersion(t *testing.T) {
	for _, tc := range []struct {
		name     string
		key, ver int16
	}{{"key200", 200, 0}, {"metadata-v14", 3, 14}} {
		t.Run(tc.name, func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			cn, s := bb8cModern(c, pcapgen.ConnOptions{}, "orders-app", bb8cX)
			bb8cMeta(s) // 2
			q := pcapgen.EncodeRequestRaw(pcapgen.RequestHeader{APIKey: tc.key, APIVersion: tc.ver, CorrelationID: 3, InstanceID: bb8cID(bb8cX), HeaderVersion: 2},
				[]byte{0, 0, 0, 7, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0})
			s.Header.CorrelationID = 4
			cn.Send(q)
			cn.Reply(pcapgen.EncodeResponseRaw(3, 1, []byte{0, 0, 0, 0, 0, 0, 0, 0, 0}))
			f4 := bb8cMeta(s)
			f5 := bb8cMetaWith(s, bb8cID(bb8cY))
			cn.Close()
			path := bbCaptureFile(t, c, "")
			rep := bb8cRead(t, path)
			bb8cExact(t, rep, bb8cW{"instance-id-changed", "error", "full", f5})
			bb8cCov(t, rep, map[string]int{"stream-gap": 0})
			d := bb8cDump(t, path)
			bb8cMatched(t, d, 4, f4, -1)
			bb8cMatched(t, d, 5, f5, -1)
			t.Logf("framing-error=%d unmatched-response=%d requests=%d responses=%d; dump of corr 3: %v / %v",
				rep.Totals.Coverage["framing-error"], rep.Totals.Coverage["unmatched-response"], rep.Totals.Requests, rep.Totals.Responses,
				bb8cPDUs(d, "request", 3), bb8cPDUs(d, "response", 3))
		})
	}
}

// --------------------------------------------------------- header tags

// SPEC 1: "Tagged fields: uvarint count, then per field uvarint tag, uvarint
// size, size bytes. Tags must be strictly ascending. Tag 0 in a request
// header is ClientInstanceId ... Unknown tags are skipped, never fatal."
// Unknown tags beside tag 0 = X, with multi-byte uvarints (a 200-byte field,
// tag 300) and a 16-byte tag 1 holding Y, are skipped: X throughout, no
// finding. A first request whose only tags are unknown (1 and 2) carries no
// instance ID, so a later X is instance-id-late (error, full).
func TestBB8CUnknownHeaderTags(t *testing.T) {
	tag0 := append([]byte{0, 16}, bb8cX[:]...)
	big := append([]byte{2, 0xc8, 0x01}, bytes.Repeat([]byte{0xee}, 200)...)
	cases := []struct {
		name string
		raw  []byte
	}{
		{"tags-0-1-2-with-2-byte-size", slices.Concat([]byte{3}, tag0, []byte{1, 3, 'a', 'b', 'c'}, big)},
		{"tag-300-empty", slices.Concat([]byte{2}, tag0, []byte{0xac, 0x02, 0})},
		{"tag-1-holds-another-uuid", slices.Concat([]byte{2}, tag0, []byte{1, 16}, bb8cY[:])},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			cn, s := bb8cModern(c, pcapgen.ConnOptions{}, "orders-app", bb8cX)
			s.Header.RawTags = tc.raw
			bb8cMeta(s)
			s.RoundTrip(pcapgen.APIVersions(3, "apache-kafka-java", "4.2.0"), pcapgen.APIVersionsResponse(3))
			s.Header.RawTags = nil
			bb8cMeta(s)
			cn.Close()
			rep := bb8cRun(t, c)
			bb8cExact(t, rep)
			bb8cCov(t, rep, map[string]int{"framing-error": 0, "unmatched-response": 0})
			bb8cTotals(t, rep, 4, 4)
		})
	}
	t.Run("first-request-unknown-tags-only", func(t *testing.T) {
		c := pcapgen.New(pcapgen.Options{})
		cn := c.Conn(pcapgen.ConnOptions{})
		s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("orders-app"), CorrelationID: 1, RawTags: []byte{2, 1, 1, 'a', 2, 2, 'b', 'c'}})
		s.RoundTrip(pcapgen.APIVersions(3, "apache-kafka-java", "4.2.0"), pcapgen.APIVersionsResponse(3))
		s.Header.RawTags = nil
		s.Header.ClientID = nil
		bb8cMeta(s)
		f := bb8cMetaWith(s, bb8cID(bb8cX))
		cn.Close()
		rep := bb8cRun(t, c)
		bb8cExact(t, rep, bb8cW{"instance-id-late", "error", "full", f})
	})
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
func TestBB8CTelemetryPushAcrossConnections(t *testing.T) {
	od := func(s *pcapgen.Session) {
		s.Header.HeaderVersion = 3
		s.Header.InstanceID = bb8cID(bb8cX)
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
	s1.RoundTrip(pcapgen.GetTelemetrySubscriptions(bb8cZero), pcapgen.GetTelemetrySubscriptionsResponse(bb8cErrNone, bb8cB, 7))
	c2 := c.Conn(pcapgen.ConnOptions{Client: netip.MustParseAddrPort("10.8.0.1:51002")})
	s2 := c2.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("orders-app"), CorrelationID: 1})
	od(s2)
	s2.RoundTrip(pcapgen.PushTelemetry(bb8cB, 7), pcapgen.PushTelemetryResponse(bb8cErrNone))
	bad, _ := s2.RoundTrip(pcapgen.PushTelemetry(bb8cR, 7), pcapgen.PushTelemetryResponse(bb8cErrNone))
	c1.Close()
	c2.Close()
	rep := bb8cRun(t, c, "--profile", "accepted-2026")
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
func TestBB8CTelemetryRequestDroppingHeaderID(t *testing.T) {
	for _, tc := range []struct {
		name string
		code int16
		id   [16]byte
		more []string
	}{
		{"invalid-request", bb8cErrInvalidRequest, bb8cZero, nil},
		{"none-with-B", bb8cErrNone, bb8cB, []string{"broker-accepted-invalid/warn"}},
		{"none-with-zero", bb8cErrNone, bb8cZero, []string{"broker-accepted-invalid/warn", "broker-telemetry-id-missing/error"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			cn, s := bb8cModern(c, pcapgen.ConnOptions{}, "orders-app", bb8cX)
			s.Header.InstanceID = nil
			f, _ := s.RoundTrip(pcapgen.GetTelemetrySubscriptions(bb8cZero), pcapgen.GetTelemetrySubscriptionsResponse(tc.code, tc.id, 7))
			s.Header.InstanceID = bb8cID(bb8cX)
			bb8cMeta(s)
			cn.Close()
			rep := bb8cRun(t, c)
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
func TestBB8CTelemetryTableRowsAndAnswers(t *testing.T) {
	type row struct {
		name   string
		header *[16]byte
		body   [16]byte
		code   int16
		answer [16]byte
		want   []string
	}
	X := bb8cID(bb8cX)
	rows := []row{
		{"1-conforming", nil, bb8cZero, 0, bb8cB, nil},
		{"1-zero-answer", nil, bb8cZero, 0, bb8cZero, []string{"broker-telemetry-id-missing/error"}},
		{"1-zero-header", bb8cID(bb8cZero), bb8cZero, 0, bb8cB, nil},
		{"2-conforming", nil, bb8cR, 0, bb8cZero, nil},
		{"2-echo", nil, bb8cR, 0, bb8cR, []string{"broker-telemetry-id-echo/info"}},
		{"3-conforming", X, bb8cX, 0, bb8cZero, nil},
		{"3-echo", X, bb8cX, 0, bb8cX, []string{"broker-telemetry-id-echo/info"}},
		{"4-conforming", X, bb8cZero, 42, bb8cZero, []string{"telemetry-id-requested-with-header/error"}},
		{"4-unknown-server-error", X, bb8cZero, bb8cErrUnknownServer, bb8cZero, []string{"telemetry-id-requested-with-header/error", "broker-accepted-invalid/warn"}},
		{"4-none-B", X, bb8cZero, 0, bb8cB, []string{"telemetry-id-requested-with-header/error", "broker-accepted-invalid/warn"}},
		{"5-conforming", X, bb8cR, 42, bb8cZero, []string{"telemetry-id-mismatch/error"}},
		{"5-none-echo", X, bb8cR, 0, bb8cR, []string{"telemetry-id-mismatch/error", "broker-accepted-invalid/warn", "broker-telemetry-id-echo/info"}},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			cn := c.Conn(pcapgen.ConnOptions{})
			s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("tele-app"), InstanceID: r.header, CorrelationID: 1})
			bb8cMeta(s)
			s.Header.ClientID = nil
			f, _ := s.RoundTrip(pcapgen.GetTelemetrySubscriptions(r.body), pcapgen.GetTelemetrySubscriptionsResponse(r.code, r.answer, 7))
			cn.Close()
			rep := bb8cRun(t, c)
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
func TestBB8CTelemetryMissingThenAssigned(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("tele-app"), CorrelationID: 1})
	s.RoundTrip(pcapgen.APIVersions(3, "librdkafka", "2.6.0"), pcapgen.APIVersionsResponse(3))
	f, _ := s.RoundTrip(pcapgen.GetTelemetrySubscriptions(bb8cZero), pcapgen.GetTelemetrySubscriptionsResponse(bb8cErrNone, bb8cZero, 7))
	s.RoundTrip(pcapgen.GetTelemetrySubscriptions(bb8cZero), pcapgen.GetTelemetrySubscriptionsResponse(bb8cErrNone, bb8cB, 8))
	s.RoundTrip(pcapgen.PushTelemetry(bb8cB, 8), pcapgen.PushTelemetryResponse(bb8cErrNone))
	cn.Close()
	rep := bb8cRun(t, c)
	bb8cExact(t, rep, bb8cW{"broker-telemetry-id-missing", "error", "full", f})
}

// ------------------------------------------------------------ frame sizes

// SPEC 1: "A frame size < 8 or > 100 MiB (configurable) is a framing error,
// never a panic"; README 13: "SPEC.md's minimum frame size of 8 applies to
// requests (header v0 is 8 bytes)". On a legacy connection (client ID "a"
// first, "b" later: client-id-changed, warn, at that request's frame):
// size 8 (a ControlledShutdown v0 header alone) is a request, no framing
// error; size 7, -1 and -2^31 are framing errors; a Produce whose size field
// says exactly 100 MiB (104857600) is no framing error, 100 MiB + 1 is one;
// both are followed by the end of the connection (the client sent 2 KB of
// it). The client-id-changed finding before them is unaffected.
func TestBB8CRequestFrameSizes(t *testing.T) {
	withSize := func(frame []byte, size uint32) []byte {
		out := slices.Clone(frame)
		binary.BigEndian.PutUint32(out, size)
		return out
	}
	for _, tc := range []struct {
		name    string
		framing bool
	}{{"size-8", false}, {"size-7", true}, {"size-minus-1", true}, {"size-min-int32", true}, {"100MiB", false}, {"100MiB+1", true}} {
		t.Run(tc.name, func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			cn := c.Conn(pcapgen.ConnOptions{})
			s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("a"), CorrelationID: 1})
			var want []bb8cW
			reqs := 2
			meta := func() int {
				f, _ := s.RoundTrip(pcapgen.Metadata(1, "orders"), pcapgen.MetadataResponse(1, "10.0.0.1", 9092))
				return f
			}
			switch tc.name {
			case "size-8":
				// ControlledShutdown v0, correlation ID 1, no body.
				cn.Send([]byte{0, 0, 0, 8, 0, 7, 0, 0, 0, 0, 0, 1})
				cn.Reply(pcapgen.EncodeResponseRaw(1, 0, []byte{0, 0, 0, 0, 0, 0}))
				s.Header.CorrelationID = 2
				meta()
				s.Header.ClientID = pcapgen.Ptr("b")
				want = append(want, bb8cW{"client-id-changed", "warn", "full", meta()})
				reqs = 3
			case "size-7", "size-minus-1", "size-min-int32":
				meta()
				s.Header.ClientID = pcapgen.Ptr("b")
				want = append(want, bb8cW{"client-id-changed", "warn", "full", meta()})
				bad := map[string][]byte{
					"size-7":         {0, 0, 0, 7, 0, 3, 0, 1, 0, 0, 0},
					"size-minus-1":   {0xff, 0xff, 0xff, 0xff},
					"size-min-int32": {0x80, 0, 0, 0},
				}[tc.name]
				cn.Raw(pcapgen.ToBroker, bad)
				cn.Close()
			default:
				meta()
				s.Header.ClientID = pcapgen.Ptr("b")
				want = append(want, bb8cW{"client-id-changed", "warn", "full", meta()})
				_, q := s.Encode(pcapgen.Produce(7, "orders", bb8cZero, bb8cFiller(4000)))
				size := uint32(100 << 20)
				if tc.name == "100MiB+1" {
					size++
				}
				cn.Raw(pcapgen.ToBroker, withSize(q, size)[:2048])
				cn.Close()
			}
			if tc.name == "size-8" {
				cn.Close()
			}
			rep := bb8cRun(t, c)
			bb8cExact(t, rep, want...)
			n := rep.Totals.Coverage["framing-error"]
			if tc.framing && n != 1 {
				t.Errorf("framing-error %d, spec requires 1\n%s", n, rep.summary())
			}
			if !tc.framing && n != 0 {
				t.Errorf("framing-error %d, spec requires 0\n%s", n, rep.summary())
			}
			if tc.name == "size-8" {
				bb8cTotals(t, rep, reqs, reqs)
				if rep.Totals.ByHeaderVersion["v0"] != 1 {
					t.Errorf("requests_by_header_version %v, want v0=1", rep.Totals.ByHeaderVersion)
				}
			}
		})
	}
}

// SPEC 1: "A frame size < 8 or > 100 MiB (configurable) is a framing error";
// README 13: "a real response can be shorter ..., so only responses under 4
// bytes are framing errors"; SPEC 1 responses "matched to requests by
// correlation id"; SPEC 3.5 broker-accepted-invalid only without
// INVALID_REQUEST. A 4-byte response (correlation ID only) is matched, no
// framing error. A response whose size is negative is a framing error, and
// the real answer after it (INVALID_REQUEST to an ApiVersions carrying Y:
// instance-id-changed) still keeps broker-accepted-invalid away. With
// --max-frame 2000 a 3000-byte Fetch answer is a framing error and the
// answers after it are matched.
func TestBB8CResponseFrameSizes(t *testing.T) {
	t.Run("4-bytes", func(t *testing.T) {
		c := pcapgen.New(pcapgen.Options{})
		cn, s := bb8cModern(c, pcapgen.ConnOptions{}, "orders-app", bb8cX)
		corr, f2 := s.Request(pcapgen.Metadata(12, "orders"))
		cn.Reply([]byte{0, 0, 0, 4, 0, 0, 0, byte(corr)})
		bb8cMeta(s)
		cn.Close()
		path := bbCaptureFile(t, c, "")
		rep := bb8cRead(t, path)
		bb8cExact(t, rep)
		bb8cCov(t, rep, map[string]int{"framing-error": 0, "unmatched-response": 0, "stream-gap": 0})
		bb8cTotals(t, rep, 3, 3)
		bb8cMatched(t, bb8cDump(t, path), corr, f2, -1)
	})
	t.Run("negative", func(t *testing.T) {
		c := pcapgen.New(pcapgen.Options{})
		cn, s := bb8cModern(c, pcapgen.ConnOptions{}, "orders-app", bb8cX)
		s.Header.InstanceID = bb8cID(bb8cY)
		corr, f2 := s.Request(pcapgen.APIVersions(3, "apache-kafka-java", "4.2.0"))
		s.Header.InstanceID = bb8cID(bb8cX)
		rej := pcapgen.APIVersionsResponse(3)
		rej.ErrorCode = bb8cErrInvalidRequest
		cn.Reply(slices.Concat([]byte{0xff, 0xff, 0xff, 0xfe}, pcapgen.EncodeResponse(corr, 3, rej)))
		bb8cMeta(s)
		cn.Close()
		rep := bb8cRun(t, c)
		bb8cExact(t, rep, bb8cW{"instance-id-changed", "error", "full", f2})
		if n := rep.Totals.Coverage["framing-error"]; n < 1 {
			t.Errorf("framing-error %d, want >= 1 for a negative response size", n)
		}
	})
	t.Run("over-max-frame", func(t *testing.T) {
		c := pcapgen.New(pcapgen.Options{})
		cn, s := bb8cModern(c, pcapgen.ConnOptions{}, "orders-app", bb8cX)
		s.RoundTrip(pcapgen.Fetch(12, "orders", bb8cZero), pcapgen.FetchResponse(12, "orders", bb8cZero, bb8cFiller(3000)))
		s.Header.InstanceID = bb8cID(bb8cY)
		corr, f3 := s.Request(pcapgen.APIVersions(3, "apache-kafka-java", "4.2.0"))
		s.Header.InstanceID = bb8cID(bb8cX)
		rej := pcapgen.APIVersionsResponse(3)
		rej.ErrorCode = bb8cErrInvalidRequest
		cn.Reply(pcapgen.EncodeResponse(corr, 3, rej))
		f4 := bb8cMeta(s)
		cn.Close()
		path := bbCaptureFile(t, c, "")
		rep := bb8cRead(t, path, "--max-frame", "2000")
		// README 3 "partial when the PDU follows a stream gap or resync on
		// its connection": the broker direction's resync may make the
		// request partial; confidence not checked.
		bb8cExact(t, rep, bb8cW{"instance-id-changed", "error", "", f3})
		if n := rep.Totals.Coverage["framing-error"]; n != 1 {
			t.Errorf("framing-error %d, want 1 (the 3000-byte answer)\n%s", n, rep.summary())
		}
		d := bb8cDump(t, path, "--max-frame", "2000")
		bb8cMatched(t, d, corr, f3, bb8cErrInvalidRequest)
		bb8cMatched(t, d, 4, f4, -1)
	})
}

// SPEC 1: "Other bodies are skipped by length, never parsed: Produce and
// Fetch payloads must cost no more than the bytes they occupy in the
// capture"; "A frame size ... > 100 MiB ... is a framing error, never a
// panic". A Produce request and a Fetch answer whose size fields claim
// 100 MiB, of which the capture holds 3 KB before the connection ends: the
// run allocates about as much as when they claim 8 KB (within 16 MiB), and
// neither is a framing error.
func TestBB8CHugeFrameClaimThenEnd(t *testing.T) {
	build := func(claim uint32) string {
		c := pcapgen.New(pcapgen.Options{})
		cn, s := bb8cModern(c, pcapgen.ConnOptions{}, "orders-app", bb8cX)
		_, q := s.Encode(pcapgen.Produce(9, "orders", bb8cZero, bb8cFiller(3000)))
		binary.BigEndian.PutUint32(q, claim)
		cn.Raw(pcapgen.ToBroker, q)
		cn.Close()
		c2 := c.Conn(pcapgen.ConnOptions{})
		s2 := c2.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("consumer"), InstanceID: bb8cID(bb8cY), CorrelationID: 1})
		corr, _ := s2.Request(pcapgen.Fetch(12, "orders", bb8cZero))
		r := pcapgen.EncodeResponse(corr, 12, pcapgen.FetchResponse(12, "orders", bb8cZero, bb8cFiller(3000)))
		binary.BigEndian.PutUint32(r, claim)
		c2.Raw(pcapgen.ToClient, r)
		c2.Close()
		return bbCaptureFile(t, c, fmt.Sprintf("claim%d.pcap", claim))
	}
	measure := func(path string) (uint64, bb8cReport) {
		runtime.GC()
		var a, b runtime.MemStats
		runtime.ReadMemStats(&a)
		rep := bb8cRead(t, path)
		runtime.ReadMemStats(&b)
		return b.TotalAlloc - a.TotalAlloc, rep
	}
	small, _ := measure(build(8 << 10))
	huge, rep := measure(build(100 << 20))
	t.Logf("allocated: %d bytes with 8 KiB claims, %d with 100 MiB claims", small, huge)
	if huge > small+16<<20 {
		t.Errorf("a 100 MiB size claim allocated %d MiB more than an 8 KiB claim (%d vs %d bytes): payloads must cost no more than the bytes captured",
			(huge-small)>>20, huge, small)
	}
	bb8cExact(t, rep)
	bb8cCov(t, rep, map[string]int{"framing-error": 0})
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
func TestBB8CIdleConnectionSpeaksAgain(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn, s := bb8cModern(c, pcapgen.ConnOptions{Client: netip.MustParseAddrPort("10.8.4.1:41001")}, "orders-app", bb8cX)
	bb8cMeta(s)
	other, os := bb8cModern(c, pcapgen.ConnOptions{Client: netip.MustParseAddrPort("10.8.4.2:41001")}, "other-app", bb8cR)
	for i := 0; i < 11; i++ {
		c.Sleep(time.Minute)
		bb8cMeta(os)
	}
	other.Close()
	bb8cMeta(s)
	f := bb8cMetaWith(s, bb8cID(bb8cY))
	cn.Close()
	rep := bb8cRun(t, c)
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
func TestBB8CMidstreamStartsAtNullClientIDV1(t *testing.T) {
	for _, first := range []string{"sasl-reauth", "metadata-v8", "metadata-v12"} {
		for _, port := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/port=%v", first, port), func(t *testing.T) {
				c := pcapgen.New(pcapgen.Options{})
				cn := c.Conn(pcapgen.ConnOptions{NoSYN: true})
				s := cn.Session(pcapgen.RequestHeader{InstanceID: bb8cID(bb8cX), CorrelationID: 812})
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
					bb8cMeta(s)
				}
				bb8cMeta(s)
				f := bb8cMetaWith(s, bb8cID(bb8cY))
				cn.Close()
				path := bbCaptureFile(t, c, "")
				var extra []string
				if port {
					extra = []string{"--port", "9092"}
				}
				rep := bb8cRead(t, path, extra...)
				bb8cExact(t, rep, bb8cW{"instance-id-changed", "error", "partial", f})
				bb8cCov(t, rep, map[string]int{"midstream-join": 1, "unmatched-response": 0, "sasl-raw-tokens": 0})
				bb8cTotals(t, rep, n, n)
				bb8cMatched(t, bb8cDump(t, path, extra...), 812, 1, -1)
			})
		}
	}
}
