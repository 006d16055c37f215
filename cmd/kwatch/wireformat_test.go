package main

// SPEC.md section 1, the wire format: framing errors and frame-size limits,
// TLS and non-Kafka bytes, SASL (raw v0 tokens, v1 handshakes,
// re-authentication), ApiVersions fallbacks, header v0, unknown keys, versions
// and tags, payloads skipped by length, and response matching by correlation
// ID (out of order, duplicated, unknown, the pending bound).
// Expectations come from SPEC.md and README.md's "Rules: where SPEC.md is
// silent" only, never from kwatch's implementation.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net/netip"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/kwatch/kwatch/internal/pcapgen"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// SPEC section 1 SaslHandshake: "after a v0 handshake the client sends raw
// SASL tokens without Kafka headers until authentication ends: skip them,
// do not flag them". The tokens are no requests and do not touch the
// instance-ID state: a later request without the ID is still dropped.
func TestWireSaslTokensSkipped(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bbSession(cn, pcapgen.Ptr("orders-app"), bbID(bbX))
	bbAPIV(s, 0)
	s.Header.ClientID = nil
	s.RoundTrip(pcapgen.SaslHandshake(0, "PLAIN"), pcapgen.SaslHandshakeResponse(0, "PLAIN"))
	cn.Send(pcapgen.SASLToken([]byte("\x00user\x00password-is-long-enough")))
	cn.Reply(pcapgen.SASLToken(nil))
	bbMeta(s)
	s.Header.InstanceID = nil
	bbMeta(s)
	cn.Close()
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"instance-id-dropped": 1})
	if rep.Totals.Requests != 4 {
		t.Errorf("totals.requests %d, want 4 (tokens are not requests)", rep.Totals.Requests)
	}
}

// Section 1: "A frame size < 8 ... is a framing error, never a panic"; 3.6
// framing-error counted.
func TestWireFramingError(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn, s := bbLegacy(c, pcapgen.ConnOptions{})
	cgJoin(s, 1, bbGroup, pcapgen.JavaString(pcapgen.SeqUUID(0x64)))
	cn.Raw(pcapgen.ToBroker, []byte{0, 0, 0, 3, 1, 2, 3})
	cn.Close()
	rep := bbRun2(t, c)
	bbExpect(t, rep, nil)
	if n := rep.Totals.Coverage["framing-error"]; n != 1 {
		t.Errorf("framing-error %d, want 1", n)
	}
}

// Section 2: "TLS traffic (first client byte 0x16) cannot be audited: it is
// counted and reported, never decoded as Kafka."
func TestWireTLSCounted(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{Broker: netip.MustParseAddrPort("10.0.0.1:9093")})
	cn.Raw(pcapgen.ToBroker, pcapgen.TLSClientHello())
	cn.Raw(pcapgen.ToClient, append([]byte{0x16, 0x03, 0x03, 0x00, 0x10}, make([]byte, 16)...))
	cn.Close()
	rep := bbRun2(t, c)
	bbExpect(t, rep, nil)
	if n := rep.Totals.Coverage["tls-connection"]; n != 1 {
		t.Errorf("tls-connection %d, want 1", n)
	}
	if rep.Totals.Requests != 0 {
		t.Errorf("requests %d from a TLS connection, want 0", rep.Totals.Requests)
	}
}

// Section 1: "after a v0 handshake the client sends raw SASL tokens without
// Kafka headers until authentication ends: skip them, do not flag them";
// 3.6 sasl-raw-tokens. The broker's empty (size 0) token answer must not be
// a framing error; member rules run after authentication.
func TestWireSaslV0RawTokens(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("sasl-app"), CorrelationID: 1})
	s.RoundTrip(pcapgen.SaslHandshake(0, "PLAIN"), pcapgen.SaslHandshakeResponse(0, "PLAIN"))
	cn.Raw(pcapgen.ToBroker, pcapgen.SASLToken([]byte("\x00alice\x00alice-secret")))
	cn.Raw(pcapgen.ToClient, pcapgen.SASLToken(nil))
	s.RoundTrip(pcapgen.APIVersions(3, "librdkafka", "2.6.0"), pcapgen.APIVersionsResponse(3))
	m := pcapgen.JavaString(pcapgen.SeqUUID(0x65))
	cgJoin(s, 1, bbGroup, m)
	cgLeave(s, 1, bbGroup, m, -1)
	cgJoin(s, 1, bbGroup, pcapgen.JavaString(pcapgen.SeqUUID(0x66)))
	cn.Close()
	rep := bbRun2(t, c)
	bbExpect(t, rep, map[string]int{"member-id-changed": 1})
	bbCheck(t, rep, "member-id-changed", "warn", "full", 0)
	if n := rep.Totals.Coverage["sasl-raw-tokens"]; n < 1 {
		t.Errorf("sasl-raw-tokens %d, want at least 1", n)
	}
	for _, ev := range []string{"framing-error", "stream-gap", "unmatched-response", "midstream-join"} {
		if n := rep.Totals.Coverage[ev]; n != 0 {
			t.Errorf("coverage %s = %d after raw SASL tokens, want 0", ev, n)
		}
	}
}

// 3.6 unmatched-response: "Responses are matched to requests by correlation
// id per connection"; a response to no request is counted.
func TestWireUnmatchedResponse(t *testing.T) {
	rep := bbLegacyConn(t, func(s *pcapgen.Session) {
		s.Respond(999, pcapgen.MetadataResponse(12, "10.0.0.1", 9092))
		cgJoin(s, 1, bbGroup, pcapgen.JavaString(pcapgen.SeqUUID(0x67)))
	})
	bbExpect(t, rep, nil)
	if n := rep.Totals.Coverage["unmatched-response"]; n != 1 {
		t.Errorf("unmatched-response %d, want 1", n)
	}
}

// bb4PlayBatches sends the reference steps in batches of n pipelined
// requests; each batch's responses follow in one write, reversed if rev.
func bb4PlayBatches(cn *pcapgen.Conn, steps []bb4Step, n int, rev bool) {
	for lo := 0; lo < len(steps); lo += n {
		var reqs, resps [][]byte
		for i := lo; i < min(lo+n, len(steps)); i++ {
			q, r := bb4Encode(i, steps[i])
			reqs = append(reqs, q)
			resps = append(resps, r)
		}
		if rev {
			for i, j := 0, len(resps)-1; i < j; i, j = i+1, j-1 {
				resps[i], resps[j] = resps[j], resps[i]
			}
		}
		cn.Write(pcapgen.ToBroker, reqs...)
		cn.Write(pcapgen.ToClient, resps...)
	}
}

// TestWirePipelined: SPEC 1 "Responses are matched to requests by
// correlation id per connection (a broker answers in order, but never rely
// on it alone)". The reference conversation with several requests in flight
// (and answers in reverse order) gives the same findings as one at a time.
func TestWirePipelined(t *testing.T) {
	for _, tc := range []struct {
		n   int
		rev bool
		mss int
	}{{1, false, 0}, {3, false, 0}, {11, false, 0}, {4, true, 0}, {11, true, 0}, {5, true, 60}} {
		t.Run(fmt.Sprintf("batch%d-rev%v-mss%d", tc.n, tc.rev, tc.mss), func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{Perturb: pcapgen.Perturb{MSS: tc.mss}})
			cn := c.Conn(pcapgen.ConnOptions{})
			bb4PlayBatches(cn, bb4RefSteps(), tc.n, tc.rev)
			cn.Close()
			bb4Same(t, bbRun(t, c))
		})
	}
}

// TestWireGarbageInStream: SPEC 1 "A frame size < 8 or > 100 MiB ... is
// a framing error, never a panic"; 2 "resyncs to the next plausible frame".
// Garbage bytes between two requests of a Kafka connection (text whose first
// four bytes read as a 1.2 GB size, and a tiny size) are framing errors and
// the later requests are decoded; a second connection on port 9092 that
// carries only HTTP gives no finding.
func TestWireGarbageInStream(t *testing.T) {
	for _, garbage := range [][]byte{[]byte("GARBAGE GARBAGE GARBAGE\r\n"), {0, 0, 0, 2, 0xff, 0xff}} {
		t.Run(fmt.Sprintf("%x", garbage[:4]), func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			cn := c.Conn(pcapgen.ConnOptions{})
			s := bb4Sess(cn, pcapgen.Ptr("orders-app"), bbID(bb4X))
			bbMeta(s)
			s.Header.ClientID = nil
			cn.Raw(pcapgen.ToBroker, garbage)
			bb4AfterBad(s)
			cn.Close()
			http := c.Conn(pcapgen.ConnOptions{})
			http.Raw(pcapgen.ToBroker, []byte("GET /metrics HTTP/1.1\r\nHost: broker\r\n\r\n"))
			http.Raw(pcapgen.ToClient, []byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"))
			http.Close()
			for _, extra := range [][]string{nil, {"--port", "9092"}} {
				rep := bbRun(t, c, extra...)
				bbExpect(t, rep, map[string]int{"instance-id-changed": 1})
				bb4CovAtLeast(t, rep, "framing-error", 1)
				if rep.Totals.Requests != 4 {
					t.Errorf("%v: requests %d, want 4", extra, rep.Totals.Requests)
				}
			}
		})
	}
}

// TestWireTLSBesideKafka: SPEC 2 "TLS traffic (first client byte 0x16) cannot be
// audited: it is counted and reported, never decoded as Kafka"; 6 "--port N
// (repeatable; default: every TCP port, Kafka recognised by content)". A TLS
// connection on 9093 beside the reference connection on 9092, with no
// --port, with --port 9092 --port 9093, and the TLS connection joined
// mid-stream (broker's record first): one tls-connection, and the reference
// findings unchanged.
func TestWireTLSBesideKafka(t *testing.T) {
	for _, tc := range []struct {
		name  string
		noSYN bool
		args  []string
	}{
		{"default", false, nil},
		{"ports", false, []string{"--port", "9092", "--port", "9093"}},
		{"midstream-ports", true, []string{"--port", "9092", "--port", "9093"}},
		{"midstream-default", true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			tls := c.Conn(pcapgen.ConnOptions{Broker: netip.MustParseAddrPort("10.0.0.1:9093"), NoSYN: tc.noSYN})
			if tc.noSYN {
				tls.Raw(pcapgen.ToClient, append([]byte{0x16, 0x03, 0x03, 0x00, 0x10}, make([]byte, 16)...))
			}
			tls.Raw(pcapgen.ToBroker, pcapgen.TLSClientHello())
			bb4Ref(c, pcapgen.ConnOptions{}).Close()
			tls.Raw(pcapgen.ToClient, append([]byte{0x16, 0x03, 0x03, 0x00, 0x10}, make([]byte, 16)...))
			tls.Raw(pcapgen.ToBroker, append([]byte{0x17, 0x03, 0x03, 0x00, 0x20}, make([]byte, 32)...))
			tls.Close()
			rep := bbRun(t, c, tc.args...)
			bb4Same(t, rep, "tls-connection", "midstream-join")
			bb4Cov(t, rep, "tls-connection", 1)
		})
	}
}

// TestWireSaslRawKIP1313: SPEC 1 "after a v0 handshake the client sends
// raw SASL tokens without Kafka headers until authentication ends: skip
// them, do not flag them"; 3.6 sasl-raw-tokens. A KIP-1313 client names
// itself once (on the handshake, header v1), sends raw tokens (segmented at
// 5 bytes in one variant), then null-client-ID v2 requests: the header
// rules run as usual (one instance-id-changed, full) and nothing else is
// flagged (no client-id-missing-first: the first v1+ request set it).
func TestWireSaslRawKIP1313(t *testing.T) {
	for _, mss := range []int{0, 5} {
		t.Run(fmt.Sprintf("mss%d", mss), func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{Perturb: pcapgen.Perturb{MSS: mss}})
			cn := c.Conn(pcapgen.ConnOptions{})
			s := bb4Sess(cn, pcapgen.Ptr("orders-app"), nil)
			s.RoundTrip(pcapgen.SaslHandshake(0, "PLAIN"), pcapgen.SaslHandshakeResponse(0, "PLAIN"))
			cn.Raw(pcapgen.ToBroker, pcapgen.SASLToken([]byte("\x00alice\x00alice-secret")))
			cn.Raw(pcapgen.ToClient, pcapgen.SASLToken(nil))
			s.Header.ClientID = nil
			s.Header.InstanceID = bbID(bb4X)
			s.RoundTrip(pcapgen.APIVersions(3, "apache-kafka-java", "4.2.0"), pcapgen.APIVersionsResponse(3))
			bb4AfterBad(s)
			cn.Close()
			rep := bbRun(t, c)
			bb4ExpectConf(t, rep, map[string]int{"instance-id-changed/full": 1})
			bb4CovAtLeast(t, rep, "sasl-raw-tokens", 1)
			for _, ev := range []string{"framing-error", "stream-gap", "unmatched-response", "midstream-join"} {
				bb4Cov(t, rep, ev, 0)
			}
			if rep.Totals.Requests != 5 {
				t.Errorf("requests %d, want 5 (handshake, ApiVersions, 3 Metadata)", rep.Totals.Requests)
			}
		})
	}
}

// TestWireSaslHandshakeV1NoRaw: SPEC 1 raw tokens only "after a v0
// handshake". After SaslHandshake v1 the client authenticates with
// SaslAuthenticate requests (key 36, Kafka headers): no sasl-raw-tokens,
// and they are ordinary requests.
func TestWireSaslHandshakeV1NoRaw(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bb4Sess(cn, pcapgen.Ptr("orders-app"), nil)
	s.RoundTrip(pcapgen.SaslHandshake(1, "PLAIN"), pcapgen.SaslHandshakeResponse(1, "PLAIN"))
	auth := kmsg.NewPtrSASLAuthenticateRequest()
	auth.Version = 2
	auth.SASLAuthBytes = []byte("\x00alice\x00alice-secret")
	authResp := kmsg.NewPtrSASLAuthenticateResponse()
	s.Header.InstanceID = bbID(bb4X)
	s.RoundTrip(auth, authResp)
	s.Header.ClientID = nil
	bb4AfterBad(s)
	cn.Close()
	rep := bbRun(t, c)
	// 3.2 client-id-repeated: SaslAuthenticate repeats the client ID with an
	// instance ID.
	bb4ExpectConf(t, rep, map[string]int{"instance-id-changed/full": 1, "client-id-repeated/full": 1})
	bb4Cov(t, rep, "sasl-raw-tokens", 0)
	if rep.Totals.Requests != 5 || rep.Totals.Responses != 5 {
		t.Errorf("requests %d responses %d, want 5 each", rep.Totals.Requests, rep.Totals.Responses)
	}
}

// TestWireApiVersionsFallback: SPEC 1 "Response header: v0 = ...
// except ApiVersions responses, which always use v0"; "Responses are matched
// to requests by correlation id". A client tries ApiVersions v5 (newer than
// the broker knows); the broker answers at v0 with UNSUPPORTED_VERSION (35)
// and the client retries at v3. The v0 answer to a v5 request is matched, no
// framing error, and later rules run as usual.
func TestWireApiVersionsFallback(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bb4Sess(cn, pcapgen.Ptr("orders-app"), bbID(bb4X))
	corr, _ := s.Request(pcapgen.APIVersions(5, "apache-kafka-java", "4.3.0"))
	fallback := pcapgen.APIVersionsResponse(0)
	fallback.ErrorCode = 35
	cn.Reply(pcapgen.EncodeResponse(corr, 0, fallback))
	s.RoundTrip(pcapgen.APIVersions(3, "apache-kafka-java", "4.3.0"), pcapgen.APIVersionsResponse(3))
	s.Header.ClientID = nil
	bb4AfterBad(s)
	cn.Close()
	rep := bbRun(t, c)
	// 3.2 client-id-repeated: the retried ApiVersions repeats the client ID.
	bb4ExpectConf(t, rep, map[string]int{"instance-id-changed/full": 1, "client-id-repeated/full": 1})
	for _, ev := range []string{"framing-error", "stream-gap", "unmatched-response"} {
		bb4Cov(t, rep, ev, 0)
	}
	if rep.Totals.Requests != 5 || rep.Totals.Responses != 5 {
		t.Errorf("requests %d responses %d, want 5 each", rep.Totals.Requests, rep.Totals.Responses)
	}
	found := false
	for _, o := range bb4Dump(t, c) {
		if o["kind"] == "response" && o["correlation_id"] == float64(corr) {
			found = true
			if o["error_code"] != float64(35) {
				t.Errorf("fallback answer error_code %v, want 35", o["error_code"])
			}
		}
	}
	if !found {
		t.Errorf("no response with correlation ID %d in dump", corr)
	}
}

// TestWireHeaderV0: SPEC 1 "v0 | api_key int16, api_version int16,
// correlation_id int32 | ControlledShutdown v0 only"; 3.7 "The client-ID
// rules' "first request" is the connection's first request with header v1
// or higher"; 2 "Requests with a v0/v1 header are exempt from the header
// instance-ID rules". A ControlledShutdown v0 first (8-byte header, no
// client ID) then Metadata with "a-app" then "b-app": client-id-changed
// once; header v0 counted in totals; no framing error.
func TestWireHeaderV0(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{Perturb: pcapgen.Perturb{MSS: 3}})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bb4Sess(cn, pcapgen.Ptr("ignored"), nil)
	cs := kmsg.NewPtrControlledShutdownRequest()
	cs.Version = 0
	cs.BrokerID = 3
	csr := kmsg.NewPtrControlledShutdownResponse()
	s.RoundTrip(cs, csr)
	s.Header.ClientID = pcapgen.Ptr("a-app")
	bbMeta(s)
	s.Header.InstanceID = bbID(bb4X) // first v2 was without: late
	s.Header.ClientID = pcapgen.Ptr("b-app")
	bbMeta(s)
	cn.Close()
	rep := bbRun(t, c)
	bb4ExpectConf(t, rep, map[string]int{"client-id-changed/full": 1, "instance-id-late/full": 1, "client-id-repeated/full": 1})
	for _, ev := range []string{"framing-error", "stream-gap", "unmatched-response"} {
		bb4Cov(t, rep, ev, 0)
	}
	if rep.Totals.ByHeaderVersion["v0"] != 1 || rep.Totals.ByHeaderVersion["v2"] != 2 {
		t.Errorf("requests_by_header_version %v, want v0=1 v2=2", rep.Totals.ByHeaderVersion)
	}
	if fs := bbOf(rep, "client-id-changed"); len(fs) == 1 && fs[0]["expected"] != "a-app" {
		t.Errorf("client-id-changed expected %v, want a-app", fs[0]["expected"])
	}
}

// README 13: "SPEC.md's minimum frame size of 8 applies to requests (header
// v0 is 8 bytes); a real response can be shorter (Heartbeat v0: correlation
// ID and error code, 6 bytes), so only responses under 4 bytes are framing
// errors." SPEC 1: responses are matched by correlation ID.
func TestWireShortResponses(t *testing.T) {
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
		bbMeta(s)
		cn.Close()
		rep := bbRunF(t, c)
		bbExpect(t, rep, nil)
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
		rep := bbRunF(t, c)
		if n := rep.Totals.Coverage["framing-error"]; n < 1 {
			t.Errorf("framing-error %d on a 3-byte response, want >= 1", n)
		}
	})
}

// ------------------------------------------------------------ more boundaries

// SPEC 1: "Other bodies are skipped by length, never parsed: Produce and
// Fetch payloads must cost no more than the bytes they occupy in the
// capture." A Produce whose records are copies of a whole Kafka request
// frame (another client ID, another instance ID) and a Fetch response whose
// records are copies of a response frame, cut into 64-byte segments: the
// copies are payload, not requests or responses.
func TestWirePayloadsSkippedByLength(t *testing.T) {
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
	bbMeta(s)
	cn.Close()
	rep := bbRunF(t, c)
	bbExpect(t, rep, nil)
	if rep.Totals.Requests != 4 || rep.Totals.Responses != 4 {
		t.Errorf("requests %d responses %d, want 4 and 4 (payload copies are no PDUs)", rep.Totals.Requests, rep.Totals.Responses)
	}
	for _, ev := range []string{"framing-error", "unmatched-response", "stream-gap"} {
		if n := rep.Totals.Coverage[ev]; n != 0 {
			t.Errorf("%s %d, want 0", ev, n)
		}
	}
}

// TestWireProduceAcksZero: a producer with acks=0 gets no answer to its
// Produce requests, ever (Kafka sends none); its connection carries
// thousands of them, pipelined many to a segment, between answered
// requests. SPEC 1 "Responses are matched to requests by correlation id
// per connection": the answered requests are matched however many
// unanswered ones came before (no unmatched-response), so the ApiVersions
// with Y answered NONE is instance-id-changed and broker-accepted-invalid
// (3.5), each at the request's packet (README 9).
func TestWireProduceAcksZero(t *testing.T) {
	c := bb8aNew()
	f := c.flow("10.8.20.1:45020", "10.0.0.1:9092", 8_000, 9_000)
	f.open()
	k := bb8aModern(f)
	produce := func() kmsg.Request {
		p := pcapgen.Produce(9, "metrics", [16]byte{}, []byte("0123456789abcdef0123456789abcdef"))
		p.Acks = 0
		return p
	}
	const batches, perBatch = 50, 100
	for range batches {
		var frames []byte
		for range perBatch {
			_, b := k.enc(produce())
			frames = append(frames, b...)
		}
		f.send(bb8aToBroker, frames, 0)
		f.ack(bb8aToClient)
		k.meta()
	}
	y := bb8aY
	k.h.InstanceID = &y
	changed, _ := k.rt(pcapgen.APIVersions(3, "apache-kafka-java", "4.2.0"), pcapgen.APIVersionsResponse(3))
	f.close()
	bb8aCheck(t, c, 2+batches*(perBatch+1), 2+batches, nil,
		bb8aF{"instance-id-changed", changed, "full", "10.8.20.1:45020"},
		bb8aF{"broker-accepted-invalid", changed, "full", "10.8.20.1:45020"})
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
func TestWireSaslReauthentication(t *testing.T) {
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
			bbMeta(s)
			// Traffic goes on (a metadata refresh every 5 minutes) until the
			// session lifetime is near.
			for i := 0; i < 3; i++ {
				c.Sleep(5 * time.Minute)
				bbMeta(s)
			}
			if drop {
				s.Header.InstanceID = nil
			}
			auth := login()
			s.Header.InstanceID = bbID(bb8cX)
			bbMeta(s)
			cn.Close()
			rep := bbRunF(t, c)
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
func TestWireSaslV0ScramTwoRounds(t *testing.T) {
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
				s.Header.InstanceID = bbID(bb8cX)
				s.RoundTrip(pcapgen.APIVersions(3, "kafka-python", "3.0.0"), pcapgen.APIVersionsResponse(3))
				bbMeta(s)
				want = bb8cW{"instance-id-changed", "error", "full", bb8cMetaWith(s, bbID(bb8cY))}
			} else {
				s.RoundTrip(pcapgen.APIVersions(3, "kafka-python", "3.0.0"), pcapgen.APIVersionsResponse(3))
				bbMeta(s)
				s.Header.ClientID = pcapgen.Ptr("other-app")
				want = bb8cW{"client-id-changed", "warn", "full", bbMeta(s)}
			}
			cn.Close()
			rep := bbRunF(t, c)
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
func TestWireSaslHandshakeFirstNamesClient(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("orders-app"), CorrelationID: 1})
	s.RoundTrip(pcapgen.SaslHandshake(1, "PLAIN"), pcapgen.SaslHandshakeResponse(1, "PLAIN"))
	s.Header.ClientID = nil
	s.Header.InstanceID = bbID(bb8cX)
	s.RoundTrip(bb8cSaslAuth("\x00alice\x00alice-secret"), bb8cSaslAuthResp(""))
	bbMeta(s)
	s.Header.ClientID = pcapgen.Ptr("orders-app")
	bbMeta(s)
	cn.Close()
	rep := bbRunF(t, c)
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
func TestWireApiVersionsV4UnsupportedThenV3(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("orders-app"), InstanceID: bbID(bb8cX), CorrelationID: 1})
	corr, f1 := s.Request(pcapgen.APIVersions(4, "apache-kafka-java", "4.2.0"))
	fb := kmsg.NewPtrApiVersionsResponse()
	fb.ErrorCode = errUnsupportedVersion
	fb.ApiKeys = []kmsg.ApiVersionsResponseApiKey{{ApiKey: 18, MinVersion: 0, MaxVersion: 3}}
	cn.Reply(pcapgen.EncodeResponse(corr, 0, fb))
	s.Header.ClientID = nil
	s.RoundTrip(pcapgen.APIVersions(3, "apache-kafka-java", "4.2.0"), pcapgen.APIVersionsResponse(3))
	bbMeta(s)
	bbMeta(s)
	cn.Close()
	path := bbCaptureFile(t, c, "")
	rep := bbReadF(t, path)
	bb8cExact(t, rep)
	bb8cCov(t, rep, map[string]int{"framing-error": 0, "stream-gap": 0, "unmatched-response": 0})
	bb8cTotals(t, rep, 4, 4)
	d := bbDumpObjs(t, path)
	bb8cMatched(t, d, corr, f1, errUnsupportedVersion)
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
func TestWireApiVersionsOldVersions(t *testing.T) {
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
			rep := bbReadF(t, path)
			bb8cExact(t, rep, bb8cW{"client-id-changed", "warn", "full", f3})
			bb8cCov(t, rep, map[string]int{"framing-error": 0, "unmatched-response": 0, "stream-gap": 0})
			bb8cTotals(t, rep, 3, 3)
			if rep.Totals.ByHeaderVersion["v1"] != 3 {
				t.Errorf("requests_by_header_version %v, want v1=3", rep.Totals.ByHeaderVersion)
			}
			d := bbDumpObjs(t, path)
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
func TestWireControlledShutdownHeaders(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("broker-3"), InstanceID: bbID(bb8cX), CorrelationID: 1})
	bbMeta(s)
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
	bbMeta(s)
	cs(1)
	bbMeta(s)
	s.Header.InstanceID = nil
	f := cs(3)
	s.Header.InstanceID = bbID(bb8cX)
	bbMeta(s)
	cn.Close()
	rep := bbRunF(t, c)
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
func TestWireUnknownKeyAndVersion(t *testing.T) {
	for _, tc := range []struct {
		name     string
		key, ver int16
	}{{"key200", 200, 0}, {"metadata-v14", 3, 14}} {
		t.Run(tc.name, func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			cn, s := bb8cModern(c, pcapgen.ConnOptions{}, "orders-app", bb8cX)
			bbMeta(s) // 2
			q := pcapgen.EncodeRequestRaw(pcapgen.RequestHeader{APIKey: tc.key, APIVersion: tc.ver, CorrelationID: 3, InstanceID: bbID(bb8cX), HeaderVersion: 2},
				[]byte{0, 0, 0, 7, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0})
			s.Header.CorrelationID = 4
			cn.Send(q)
			cn.Reply(pcapgen.EncodeResponseRaw(3, 1, []byte{0, 0, 0, 0, 0, 0, 0, 0, 0}))
			f4 := bbMeta(s)
			f5 := bb8cMetaWith(s, bbID(bb8cY))
			cn.Close()
			path := bbCaptureFile(t, c, "")
			rep := bbReadF(t, path)
			bb8cExact(t, rep, bb8cW{"instance-id-changed", "error", "full", f5})
			bb8cCov(t, rep, map[string]int{"stream-gap": 0})
			d := bbDumpObjs(t, path)
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
func TestWireUnknownHeaderTags(t *testing.T) {
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
			bbMeta(s)
			s.RoundTrip(pcapgen.APIVersions(3, "apache-kafka-java", "4.2.0"), pcapgen.APIVersionsResponse(3))
			s.Header.RawTags = nil
			bbMeta(s)
			cn.Close()
			rep := bbRunF(t, c)
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
		bbMeta(s)
		f := bb8cMetaWith(s, bbID(bb8cX))
		cn.Close()
		rep := bbRunF(t, c)
		bb8cExact(t, rep, bb8cW{"instance-id-late", "error", "full", f})
	})
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
func TestWireRequestFrameSizes(t *testing.T) {
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
			rep := bbRunF(t, c)
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
func TestWireResponseFrameSizes(t *testing.T) {
	t.Run("4-bytes", func(t *testing.T) {
		c := pcapgen.New(pcapgen.Options{})
		cn, s := bb8cModern(c, pcapgen.ConnOptions{}, "orders-app", bb8cX)
		corr, f2 := s.Request(pcapgen.Metadata(12, "orders"))
		cn.Reply([]byte{0, 0, 0, 4, 0, 0, 0, byte(corr)})
		bbMeta(s)
		cn.Close()
		path := bbCaptureFile(t, c, "")
		rep := bbReadF(t, path)
		bb8cExact(t, rep)
		bb8cCov(t, rep, map[string]int{"framing-error": 0, "unmatched-response": 0, "stream-gap": 0})
		bb8cTotals(t, rep, 3, 3)
		bb8cMatched(t, bbDumpObjs(t, path), corr, f2, -1)
	})
	t.Run("negative", func(t *testing.T) {
		c := pcapgen.New(pcapgen.Options{})
		cn, s := bb8cModern(c, pcapgen.ConnOptions{}, "orders-app", bb8cX)
		s.Header.InstanceID = bbID(bb8cY)
		corr, f2 := s.Request(pcapgen.APIVersions(3, "apache-kafka-java", "4.2.0"))
		s.Header.InstanceID = bbID(bb8cX)
		rej := pcapgen.APIVersionsResponse(3)
		rej.ErrorCode = errInvalidRequest
		cn.Reply(slices.Concat([]byte{0xff, 0xff, 0xff, 0xfe}, pcapgen.EncodeResponse(corr, 3, rej)))
		bbMeta(s)
		cn.Close()
		rep := bbRunF(t, c)
		bb8cExact(t, rep, bb8cW{"instance-id-changed", "error", "full", f2})
		if n := rep.Totals.Coverage["framing-error"]; n < 1 {
			t.Errorf("framing-error %d, want >= 1 for a negative response size", n)
		}
	})
	t.Run("over-max-frame", func(t *testing.T) {
		c := pcapgen.New(pcapgen.Options{})
		cn, s := bb8cModern(c, pcapgen.ConnOptions{}, "orders-app", bb8cX)
		s.RoundTrip(pcapgen.Fetch(12, "orders", bb8cZero), pcapgen.FetchResponse(12, "orders", bb8cZero, bb8cFiller(3000)))
		s.Header.InstanceID = bbID(bb8cY)
		corr, f3 := s.Request(pcapgen.APIVersions(3, "apache-kafka-java", "4.2.0"))
		s.Header.InstanceID = bbID(bb8cX)
		rej := pcapgen.APIVersionsResponse(3)
		rej.ErrorCode = errInvalidRequest
		cn.Reply(pcapgen.EncodeResponse(corr, 3, rej))
		f4 := bbMeta(s)
		cn.Close()
		path := bbCaptureFile(t, c, "")
		rep := bbReadF(t, path, "--max-frame", "2000")
		// README 3 "partial when the PDU follows a stream gap or resync on
		// its connection": the broker direction's resync may make the
		// request partial; confidence not checked.
		bb8cExact(t, rep, bb8cW{"instance-id-changed", "error", "", f3})
		if n := rep.Totals.Coverage["framing-error"]; n != 1 {
			t.Errorf("framing-error %d, want 1 (the 3000-byte answer)\n%s", n, rep.summary())
		}
		d := bbDumpObjs(t, path, "--max-frame", "2000")
		bb8cMatched(t, d, corr, f3, errInvalidRequest)
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
func TestWireHugeFrameClaimThenEnd(t *testing.T) {
	build := func(claim uint32) string {
		c := pcapgen.New(pcapgen.Options{})
		cn, s := bb8cModern(c, pcapgen.ConnOptions{}, "orders-app", bb8cX)
		_, q := s.Encode(pcapgen.Produce(9, "orders", bb8cZero, bb8cFiller(3000)))
		binary.BigEndian.PutUint32(q, claim)
		cn.Raw(pcapgen.ToBroker, q)
		cn.Close()
		c2 := c.Conn(pcapgen.ConnOptions{})
		s2 := c2.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("consumer"), InstanceID: bbID(bb8cY), CorrelationID: 1})
		corr, _ := s2.Request(pcapgen.Fetch(12, "orders", bb8cZero))
		r := pcapgen.EncodeResponse(corr, 12, pcapgen.FetchResponse(12, "orders", bb8cZero, bb8cFiller(3000)))
		binary.BigEndian.PutUint32(r, claim)
		c2.Raw(pcapgen.ToClient, r)
		c2.Close()
		return bbCaptureFile(t, c, fmt.Sprintf("claim%d.pcap", claim))
	}
	measure := func(path string) (uint64, bbFindingsReport) {
		runtime.GC()
		var a, b runtime.MemStats
		runtime.ReadMemStats(&a)
		rep := bbReadF(t, path)
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

// Out of order: the broker answers a later compliant request first, then
// the violating one NONE. The 3.5 finding is about the violating request
// (its frame and correlation ID), and every answer is matched.
func TestWireOutOfOrderAnswers(t *testing.T) {
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
	rep := bbRunF(t, c)
	bb8iExpectNoMisaligned(t, rep, map[string]int{"instance-id-changed": 1, "broker-accepted-invalid": 1})
	f := bbOne(t, rep, "broker-accepted-invalid")
	if f.Frame != fBad || f.CorrelationID != corrBad || f.Confidence != "full" || f.KIP != "KIP-1313" {
		t.Errorf("broker-accepted-invalid: frame %d corr %d conf %s kip %s; want frame %d corr %d conf full kip KIP-1313",
			f.Frame, f.CorrelationID, f.Confidence, f.KIP, fBad, corrBad)
	}
	bb8iUnmatched(t, rep, 0)
}

// A response whose correlation ID was never requested, arriving while a
// violating request waits, must not be taken for its answer; the real
// answer (INVALID_REQUEST) then matches: no 3.5 finding, one unmatched.
func TestWireUnknownCorrelationNotTakenInOrder(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn, s := bb8iModern(c)
	s.Header.InstanceID = bbID(bb8iY)
	corr, _ := s.Request(bb8iAPIV())
	s.Respond(999, bb8iAPIVResp(0))
	s.Respond(corr, bb8iAPIVResp(42))
	cn.Close()
	rep := bbRunF(t, c)
	bbExpect(t, rep, map[string]int{"instance-id-changed": 1})
	bb8iUnmatched(t, rep, 1)
}

// Two requests pipelined with the same correlation ID (a buggy client): the
// first violating, the second compliant. README rule 9: which request an
// answer belongs to cannot be told, so the broker is not judged on it
// (counted in state_limited), and the later request replaces the earlier:
// the second answer matches none (one unmatched-response). A finding that
// may be wrong is worse than none.
func TestWireDuplicateCorrelation(t *testing.T) {
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
			rep := bbRunF(t, c)
			bbExpect(t, rep, map[string]int{"instance-id-changed": 1})
			if fs := bbOf(rep, "instance-id-changed"); len(fs) == 1 && fs[0].Frame != badF {
				t.Errorf("instance-id-changed at frame %d, want %d (the violating request)", fs[0].Frame, badF)
			}
			bb8iUnmatched(t, rep, 1)
			if rep.Totals.StateLimited == 0 {
				t.Errorf("state_limited 0: the answer not judged must be counted")
			}
		})
	}
}

// README 18: 16 requests await an answer per connection, the oldest
// dropped, counted in state_limited. Violating requests pipelined before any
// answer, then all answered NONE. "over": 20 of them, so 16
// broker-accepted-invalid (the newest 16) and the 4 skipped judgements
// counted, never silent. "at": 16 fit the bound: all 16 judged, nothing
// state-limited, nothing unmatched.
func TestWirePendingBound(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    int
	}{{"over", 20}, {"at", 16}} {
		t.Run(tc.name, func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			cn, s := bb8iModern(c)
			s.Header.InstanceID = bbID(bb8iY)
			var bodies []kmsg.Request
			for range tc.n {
				bodies = append(bodies, bb8iAPIV())
			}
			corrs, _ := s.Pipeline(bodies...)
			for _, corr := range corrs {
				s.Respond(corr, bb8iAPIVResp(0))
			}
			cn.Close()
			rep := bbRunF(t, c)
			bbExpect(t, rep, map[string]int{"instance-id-changed": tc.n, "broker-accepted-invalid": 16})
			got := map[int32]bool{}
			for _, f := range bbOf(rep, "broker-accepted-invalid") {
				got[f.CorrelationID] = true
			}
			for _, corr := range corrs[tc.n-16:] {
				if !got[corr] {
					t.Errorf("no broker-accepted-invalid for corr %d (one of the newest 16)", corr)
				}
			}
			if tc.n == 16 {
				if rep.Totals.StateLimited != 0 {
					t.Errorf("state_limited = %d, want 0", rep.Totals.StateLimited)
				}
				bb8iUnmatched(t, rep, 0)
			} else if rep.Totals.StateLimited < tc.n-16 {
				t.Errorf("state_limited = %d, want >= %d (%d pending requests dropped)", rep.Totals.StateLimited, tc.n-16, tc.n-16)
			}
		})
	}
}

// An answer kwatch cannot decode (truncated body, or trailing bytes of a
// "v1-looking" body) gives no broker finding and no crash; the answer is
// still matched (not unmatched).
func TestWireUndecodableAnswers(t *testing.T) {
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
			rep := bbRunF(t, c)
			bbExpect(t, rep, tc.want)
			bb8iUnmatched(t, rep, 0)
		})
	}
}

// Same correlation ID twice, compliant first, violating second; a
// conforming broker answers in order: NONE (the compliant one), then
// INVALID_REQUEST (the violating one). No 3.5 finding may fire: the NONE
// answers the compliant request (README rule 9: with a reused correlation
// ID the answer is not judged; the later request replaced the earlier, so
// the second answer matches none).
func TestWireDuplicateCorrelationConformingBroker(t *testing.T) {
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
	rep := bbRunF(t, c)
	bbExpect(t, rep, map[string]int{"instance-id-changed": 1})
	bb8iUnmatched(t, rep, 1)
}
