package main

// SPEC.md section 3.2: the client ID sent once (KIP-1313): client-id-changed,
// client-id-missing-first and client-id-repeated with the bytes it would save.
// Expectations come from SPEC.md and README.md's "Rules: where SPEC.md is
// silent" only, never from kwatch's implementation.

import (
	"fmt"
	"net/netip"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/kwatch/kwatch/internal/pcapgen"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ---------------------------------------------------------------- 3.2

// SPEC 3.2 client-id-changed (warn): "a later request carries a non-null
// client ID different from the first request's". A later null client ID
// and a later repeat of the first are not changes; legacy repeats are no
// finding ("For legacy clients this is a statistic").
func TestClientIDChanged(t *testing.T) {
	var f1 int
	rep := bbOneConn(t, pcapgen.Ptr("orders-app"), nil, func(s *pcapgen.Session) {
		bbMeta(s)
		bbMeta(s)
		s.Header.ClientID = nil
		bbMeta(s)
		s.Header.ClientID = pcapgen.Ptr("payments-app")
		f1 = bbMeta(s)
	})
	bbExpect(t, rep, map[string]int{"client-id-changed": 1})
	f := bbFirst(t, rep, "client-id-changed")
	bbField(t, f, "severity", "warn")
	bbField(t, f, "frame", f1)
	bbField(t, f, "expected", "orders-app")
	bbField(t, f, "observed", "payments-app")
}

// SPEC 3.2 client-id-missing-first (warn): "the first request's client ID is
// null or empty but a later request sets one"; 3.7: "a null first client
// ID followed by a set one is client-id-missing-first only".
func TestClientIDMissingFirst(t *testing.T) {
	for _, first := range []struct {
		name string
		cid  *string
	}{{"null", nil}, {"empty", pcapgen.Ptr("")}} {
		t.Run(first.name, func(t *testing.T) {
			var f1 int
			rep := bbOneConn(t, first.cid, nil, func(s *pcapgen.Session) {
				bbMeta(s)
				s.Header.ClientID = pcapgen.Ptr("orders-app")
				f1 = bbMeta(s)
			})
			bbExpect(t, rep, map[string]int{"client-id-missing-first": 1})
			f := bbFirst(t, rep, "client-id-missing-first")
			bbField(t, f, "severity", "warn")
			bbField(t, f, "frame", f1)
		})
	}
}

// SPEC 3.2, negative: null client IDs throughout are neither missing-first
// nor changed (no later request sets one).
func TestClientIDAllNull(t *testing.T) {
	rep := bbOneConn(t, nil, nil, func(s *pcapgen.Session) {
		bbMeta(s)
		bbMeta(s)
		bbMeta(s)
	})
	bbExpect(t, rep, map[string]int{})
}

// SPEC 3.7: "The client-ID rules' "first request" is the connection's first
// request with header v1 or higher (the first that has a client ID
// field)." A v0-header ControlledShutdown first is no null first client ID:
// the first client ID is the Metadata request's, and a later different one
// is client-id-changed, not client-id-missing-first.
func TestClientIDFirstIsFirstV1(t *testing.T) {
	rep := bbOneConn(t, nil, nil, func(s *pcapgen.Session) {
		cs := kmsg.NewPtrControlledShutdownRequest()
		cs.Version = 0
		s.RoundTrip(cs, kmsg.NewPtrControlledShutdownResponse())
		s.Header.ClientID = pcapgen.Ptr("orders-app")
		bbMeta(s)
		bbMeta(s)
		s.Header.ClientID = pcapgen.Ptr("payments-app")
		bbMeta(s)
	})
	bbExpect(t, rep, map[string]int{"client-id-changed": 1})
	bbField(t, bbFirst(t, rep, "client-id-changed"), "expected", "orders-app")
}

// SPEC 3.2 client-id-repeated (info): "a client that sends header instance
// IDs ... still repeats the client ID on later requests; the finding counts
// the bytes that sending null would save"; 3.7: "once per connection, when
// the connection ends, with the bytes saved". 3 later requests x 10 bytes.
func TestClientIDRepeated(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	for i := 0; i < 2; i++ {
		cn := c.Conn(pcapgen.ConnOptions{Client: netip.MustParseAddrPort(fmt.Sprintf("10.1.0.1:%d", 40001+i))})
		s := bbSession(cn, pcapgen.Ptr("orders-app"), bbID(bbX))
		bbAPIV(s, 0)
		bbMeta(s)
		bbMeta(s)
		bbMeta(s)
		cn.Close()
	}
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"client-id-repeated": 2})
	for _, f := range bbOf(rep, "client-id-repeated") {
		bbField(t, f, "severity", "info")
		if !strings.Contains(fmt.Sprint(f["observed"], " ", f["message"]), "30 bytes") {
			t.Errorf("client-id-repeated does not count 30 bytes saved: observed %v, message %v", f["observed"], f["message"])
		}
	}
}

// SPEC 3.2 client-id-repeated, negative: a KIP-1313 client that sends null
// after its first request saves nothing; no finding.
func TestClientIDNotRepeated(t *testing.T) {
	rep := bbOneConn(t, pcapgen.Ptr("orders-app"), bbID(bbX), func(s *pcapgen.Session) {
		bbMeta(s)
		s.Header.ClientID = nil
		bbMeta(s)
		bbMeta(s)
	})
	bbExpect(t, rep, map[string]int{})
}

// SPEC 3.2 client-id-repeated: "repeats the client ID on later requests";
// 3.7: the client-ID rules' requests are those "with header v1 or higher".
// Later requests: null, v1 repeat, null, v2 repeat = 2 repeats x 10 bytes.
func TestClientIDRepeatedBytes(t *testing.T) {
	rep := bbOneConn(t, pcapgen.Ptr("orders-app"), bbID(bbX), func(s *pcapgen.Session) {
		bbAPIV(s, 0)
		s.Header.ClientID = nil
		bbMeta(s)
		s.Header.ClientID = pcapgen.Ptr("orders-app")
		s.RoundTrip(pcapgen.Metadata(8, "orders"), pcapgen.MetadataResponse(8, "10.0.0.1", 9092))
		s.Header.ClientID = nil
		bbMeta(s)
		s.Header.ClientID = pcapgen.Ptr("orders-app")
		bbMeta(s)
	})
	bbExpect(t, rep, map[string]int{"client-id-repeated": 1})
	f := bbFirst(t, rep, "client-id-repeated")
	if f != nil && !strings.Contains(fmt.Sprint(f["observed"], " ", f["message"]), "20 bytes") {
		t.Errorf("client-id-repeated: observed %v, message %v; want 20 bytes saved (2 requests)", f["observed"], f["message"])
	}
}

// SPEC 3.7: "a null first client ID followed by a set one is
// client-id-missing-first only" -- also for a KIP-1313 client (header
// instance IDs), where the later set client ID must not also count as
// client-id-repeated or client-id-changed.
func TestClientIDMissingFirstOnlyWithInstanceID(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	bbPlay(c, pcapgen.ConnOptions{}, []bbStep{
		{id: bbID(bbX), kind: "m"},
		{cid: pcapgen.Ptr("orders-app"), id: bbID(bbX), kind: "m"},
		{id: bbID(bbX), kind: "m"},
	})
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"client-id-missing-first": 1})
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
func TestClientIDRulesPerRequest(t *testing.T) {
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
			bbMeta(s)
			var frames []int
			for _, cid := range tc.later {
				s.Header.ClientID = cid
				frames = append(frames, bbMeta(s))
			}
			cn.Close()
			rep := bbRunF(t, c)
			bbExpect(t, rep, map[string]int{tc.rule: len(tc.hits)})
			var want []int
			for _, i := range tc.hits {
				want = append(want, frames[i])
			}
			bb7EqInts(t, tc.rule+" frames", bb7Frames(rep, tc.rule), want)
			bb7Sev(t, rep, tc.rule, "warn", "full")
			if tc.rule == "client-id-changed" {
				for _, f := range bbOf(rep, tc.rule) {
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
func TestClientIDRepeatedObserved(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn, s := bb7Modern(c, pcapgen.ConnOptions{}, "orders-app", bb7X)
	for _, cid := range []*string{pcapgen.Ptr("orders-app"), pcapgen.Ptr(""), pcapgen.Ptr("orders-app"), nil, pcapgen.Ptr("orders-app")} {
		s.Header.ClientID = cid
		bbMeta(s)
	}
	cn.Close()
	rep := bbRunF(t, c)
	bbExpect(t, rep, map[string]int{"client-id-repeated": 1, "client-id-changed": 1})
	for _, f := range bbOf(rep, "client-id-repeated") {
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
