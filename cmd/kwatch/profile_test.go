package main

// SPEC.md section 4: the accepted-2026 profile (header v3, instance-id-missing-
// first, instance-id-repeated, identity unobservable), each scenario also run
// under the default seed profile for contrast.
// Expectations come from SPEC.md and README.md's "Rules: where SPEC.md is
// silent" only, never from kwatch's implementation.

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"testing"

	"github.com/kwatch/kwatch/internal/pcapgen"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// SPEC section 4 (accepted-2026): "requires it on the first request of a
// connection and omits it afterwards"; "instance-id-dropped and
// instance-id-late are off, and instance-id-missing-first (error: the first
// v3 request has none) and instance-id-repeated (info) run instead".
func TestProfileV3(t *testing.T) {
	t.Run("compliant", func(t *testing.T) {
		rep := bbOneConn(t, pcapgen.Ptr("orders-app"), nil, func(s *pcapgen.Session) {
			bbOffsetDelete(s, bbID(bbX))
			s.Header.ClientID = nil
			bbOffsetDelete(s, nil)
			bbOffsetDelete(s, nil)
		}, "--profile", "accepted-2026")
		bbExpect(t, rep, map[string]int{})
	})
	t.Run("missing-first", func(t *testing.T) {
		c := pcapgen.New(pcapgen.Options{})
		cn := c.Conn(pcapgen.ConnOptions{})
		s := bbSession(cn, pcapgen.Ptr("orders-app"), nil)
		f1 := bbOffsetDelete(s, nil)
		s.Header.ClientID = nil
		bbOffsetDelete(s, nil)
		cn.Close()
		path := bbCaptureFile(t, c, "")
		rep := bbRead(t, path, "--profile", "accepted-2026")
		bbExpect(t, rep, map[string]int{"instance-id-missing-first": 1})
		f := bbFirst(t, rep, "instance-id-missing-first")
		bbField(t, f, "severity", "error")
		bbField(t, f, "frame", f1)
		if code, _, _ := runKwatch("read", "--profile", "accepted-2026", path); code != 1 {
			t.Errorf("accepted-2026 missing-first: exit %d, want 1", code)
		}
		if rep.Profile != "accepted-2026" {
			t.Errorf("report profile %q", rep.Profile)
		}
	})
	t.Run("repeated", func(t *testing.T) {
		rep := bbOneConn(t, pcapgen.Ptr("orders-app"), nil, func(s *pcapgen.Session) {
			bbOffsetDelete(s, bbID(bbX))
			s.Header.ClientID = nil
			bbOffsetDelete(s, bbID(bbX))
		}, "--profile", "accepted-2026")
		bbExpect(t, rep, map[string]int{"instance-id-repeated": 1})
		bbField(t, bbFirst(t, rep, "instance-id-repeated"), "severity", "info")
	})
}

// SPEC section 4: under accepted-2026 "instance-id-dropped and
// instance-id-late are off" (unconditionally), while the seed profile
// reports them on the same capture.
func TestProfileDroppedLateOff(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bbSession(cn, pcapgen.Ptr("orders-app"), bbID(bbX))
	bbMeta(s)
	s.Header.ClientID = nil
	s.Header.InstanceID = nil
	bbMeta(s) // seed: dropped
	cn.Close()
	cn2 := c.Conn(pcapgen.ConnOptions{})
	s2 := bbSession(cn2, pcapgen.Ptr("orders-app"), nil)
	bbMeta(s2)
	s2.Header.ClientID = nil
	s2.Header.InstanceID = bbID(bbY)
	bbMeta(s2) // seed: late
	cn2.Close()
	path := bbCaptureFile(t, c, "")
	seed := bbRead(t, path)
	bbExpect(t, seed, map[string]int{"instance-id-dropped": 1, "instance-id-late": 1})
	acc := bbRead(t, path, "--profile", "accepted-2026")
	for _, r := range []string{"instance-id-dropped", "instance-id-late"} {
		if n := len(bbOf(acc, r)); n != 0 {
			t.Errorf("accepted-2026: %s fired %d times, the profile turns it off", r, n)
		}
	}
	t.Logf("accepted-2026 findings on v2 headers:\n%s", acc.summary())
}

// SPEC section 4: "A connection whose first request was not seen is
// "identity unobservable" under this profile: never non-compliant on that
// ground."
func TestProfileUnobservable(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{NoSYN: true})
	s := bbSession(cn, nil, nil)
	bbOffsetDelete(s, nil)
	bbOffsetDelete(s, nil)
	cn.Close()
	rep := bbRun(t, c, "--profile", "accepted-2026")
	bbExpect(t, rep, map[string]int{})
}

// SPEC 6 "--profile seed|accepted-2026"; SPEC 4: "Under this profile
// instance-id-dropped and instance-id-late are off".
func TestProfileFlag(t *testing.T) {
	c, _ := bb3Fleet()
	path := bbCaptureFile(t, c, "fleet.pcap")
	seed := bb3ReadJSON(t, path)
	if len(bb3Rule(bb3Findings(t, seed), "instance-id-dropped")) != 1 {
		t.Errorf("seed profile: no instance-id-dropped")
	}
	if p, ok := seed["profile"]; ok {
		bb3Eq(t, "profile", p, "seed")
	}
	acc := bb3ReadJSON(t, "--profile", "accepted-2026", path)
	if n := len(bb3Rule(bb3Findings(t, acc), "instance-id-dropped")); n != 0 {
		t.Errorf("accepted-2026: %d instance-id-dropped findings, rule is off", n)
	}
	if p, ok := acc["profile"]; ok {
		bb3Eq(t, "profile", p, "accepted-2026")
	}
}

// SPEC 4 / README 10: under accepted-2026 the header version comes from a
// table ("the first v3 user is OffsetDelete v1"); SPEC 5 totals count
// "requests by header version", so the v3 requests are counted as v3.
func TestProfileHeaderV3Counted(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("od-app"), CorrelationID: 1})
	for i := 0; i < 2; i++ {
		s.Header.HeaderVersion = 3
		if i == 0 {
			s.Header.InstanceID = bbID(bb3X)
		} else {
			s.Header.InstanceID = nil
			s.Header.ClientID = nil
		}
		r := kmsg.NewPtrOffsetDeleteRequest()
		r.Version = 1
		r.Group = "g"
		s.Request(r)
	}
	s.Header.HeaderVersion = pcapgen.HeaderAuto
	bbMeta9(s)
	cn.Close()
	rep := bb3ReadJSON(t, "--profile", "accepted-2026", bbCaptureFile(t, c, "v3.pcap"))
	hv := rep["totals"].(map[string]any)["requests_by_header_version"].(map[string]any)
	bb3Eq(t, "requests_by_header_version.v3", hv["v3"], json.Number("2"))
	bb3Eq(t, "requests_by_header_version.v2", hv["v2"], json.Number("1"))
	if fs := bb3Findings(t, rep); len(fs) != 0 {
		t.Errorf("compliant accepted-2026 client has findings: %v", fs)
	}
}

// bb5ODResp answers an OffsetDelete v1 with a top-level error code.
func bb5ODResp(s *pcapgen.Session, corr int32, code int16) {
	r := kmsg.NewPtrOffsetDeleteResponse()
	r.Version = 1
	r.ErrorCode = code
	s.Respond(corr, r)
}

// bb5Meta is a Metadata v12 round trip (header v2) with header instance ID id.
func bb5Meta(s *pcapgen.Session, id *[16]byte) int {
	s.Header.InstanceID = id
	f, _ := s.RoundTrip(pcapgen.Metadata(12, "orders"), pcapgen.MetadataResponse(12, "10.0.0.1", 9092))
	s.Header.InstanceID = nil
	return f
}

// bb5APIV is an ApiVersions v3 round trip (header v2, no instance ID).
func bb5APIV(s *pcapgen.Session) int {
	f, _ := s.RoundTrip(pcapgen.APIVersions(3, "apache-kafka-java", "4.3.0"), pcapgen.APIVersionsResponse(3))
	return f
}

// bb5CGH is a ConsumerGroupHeartbeat v1 round trip (header v2, no instance
// ID) answered NONE with the same member ID.
func bb5CGH(s *pcapgen.Session, member string, epoch int32) int {
	resp := epoch + 1
	if epoch < 0 {
		resp = epoch
	}
	f, _ := s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(1, "orders-group", member, epoch),
		pcapgen.ConsumerGroupHeartbeatResponse(1, 0, pcapgen.Ptr(member), resp))
	return f
}

func bb5Instance(rep bbReport, id [16]byte) map[string]any {
	for _, in := range rep.Instances {
		if in["instance_id"] == bbJ(id) {
			return in
		}
	}
	return nil
}

// ---------------------------------------------------------------- compliant

// SPEC 4: "requires it on the first request of a connection and omits it
// afterwards, as with the client ID"; "the header version must come from a
// table keyed by API key and version, with kmsg's flexible/non-flexible
// knowledge as the default and an override list for v3"; README 10: "Only v3
// requests feed the instance-ID state". A modern client: ApiVersions (v2, no
// ID), OffsetDelete v1 (v3, X), Metadata (v2, none), a heartbeat whose member
// ID is Java(X) (v2, none), OffsetDelete v1 (v3, none): no finding, exit 0
// even with --fail-on info; the instance row of X carries its member ID and
// software (SPEC 5). Under seed OffsetDelete v1 is non-flexible, so header v1
// (SPEC 1 table): X is never seen, no instance row for X, no finding either.
func TestProfileCompliantModernMixed(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bb5Sess(cn, bb5App)
	bb5APIV(s)
	s.Header.ClientID = nil
	corr, _ := bb5OD(s, &bb5X, nil)
	bb5ODResp(s, corr, 0)
	bb5Meta(s, nil)
	bb5CGH(s, bbJ(bb5X), 0)
	bb5CGH(s, bbJ(bb5X), 1)
	bb5OD(s, nil, nil)
	cn.Close()
	path := bbCaptureFile(t, c, "")

	acc := bb5Read(t, path, bb5Acc)
	bb5Expect(t, "accepted-2026", acc, map[string]int{})
	if acc.Profile != bb5Acc {
		t.Errorf("profile %q", acc.Profile)
	}
	if hv := acc.Totals.ByHeaderVersion; hv["v3"] != 2 || hv["v2"] != 4 {
		t.Errorf("accepted-2026 requests_by_header_version %v, want v2:4 v3:2", hv)
	}
	if code := bb5Exit(path, "--profile", bb5Acc, "--fail-on", "info"); code != 0 {
		t.Errorf("accepted-2026 --fail-on info: exit %d, want 0", code)
	}
	in := bb5Instance(acc, bb5X)
	if in == nil {
		t.Fatalf("accepted-2026: no instance row for %s: %v", bbJ(bb5X), acc.Instances)
	}
	if fmt.Sprint(in["member_ids"]) != fmt.Sprint(map[string]any{"orders-group": []any{bbJ(bb5X)}}) {
		t.Errorf("instance row member_ids %v, want orders-group:[%s]", in["member_ids"], bbJ(bb5X))
	}
	if in["software_name"] != "apache-kafka-java" || fmt.Sprint(in["client_ids"]) != "[orders-app]" {
		t.Errorf("instance row software %v client_ids %v", in["software_name"], in["client_ids"])
	}

	seed := bb5Read(t, path, "")
	bb5Expect(t, "seed", seed, map[string]int{})
	if hv := seed.Totals.ByHeaderVersion; hv["v3"] != 0 || hv["v1"] != 2 {
		t.Errorf("seed requests_by_header_version %v, want v1:2 v3:0 (OffsetDelete v1 is not flexible)", hv)
	}
	if bb5Instance(seed, bb5X) != nil {
		t.Errorf("seed: instance row for %s although it only travels in header v1 bytes", bbJ(bb5X))
	}
}

// ---------------------------------------------------------------- missing-first

// SPEC 4: "instance-id-missing-first (error: the first v3 request has none)";
// README 10: only v3 requests feed the state, so earlier v2 requests (one even
// carrying X the old way) do not make the first v3 request a later one. Frame
// is the request's packet (SPEC 5), confidence full (observed from its SYN),
// exit 1 by default. Seed: the same bytes are v1 headers, exempt (SPEC 2):
// no finding, exit 0.
func TestProfileMissingFirstAfterV2(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bb5Sess(cn, bb5App)
	bb5APIV(s)
	s.Header.ClientID = nil
	bb5Meta(s, nil)
	_, f1 := bb5OD(s, nil, nil)
	bb5OD(s, nil, nil)
	bb5OD(s, nil, nil)
	cn.Close()
	path := bbCaptureFile(t, c, "")
	acc := bb5Read(t, path, bb5Acc)
	bb5Expect(t, "accepted-2026", acc, map[string]int{"instance-id-missing-first": 1})
	f := bb5First(acc, "instance-id-missing-first")
	bb5Field(t, f, "severity", "error")
	bb5Field(t, f, "frame", f1)
	bb5Field(t, f, "confidence", "full")
	bb5Field(t, f, "api_key", 47)
	bb5Field(t, f, "kip", "KIP-1313")
	if code := bb5Exit(path, "--profile", bb5Acc); code != 1 {
		t.Errorf("accepted-2026 exit %d, want 1", code)
	}
	seed := bb5Read(t, path, "")
	bb5Expect(t, "seed", seed, map[string]int{})
	if code := bb5Exit(path); code != 0 {
		t.Errorf("seed exit %d, want 0", code)
	}
}

// SPEC 1: "A zero UUID and an absent tag mean the same thing"; SPEC 4:
// missing-first when "the first v3 request has none". A first v3 request
// with an explicit zero UUID is missing-first.
func TestProfileMissingFirstZeroUUID(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bb5Sess(cn, bb5App)
	_, f1 := bb5OD(s, &[16]byte{}, nil)
	s.Header.ClientID = nil
	bb5OD(s, nil, nil)
	cn.Close()
	acc := bb5Read(t, bbCaptureFile(t, c, ""), bb5Acc)
	bb5Expect(t, "accepted-2026", acc, map[string]int{"instance-id-missing-first": 1})
	bb5Field(t, bb5First(acc, "instance-id-missing-first"), "frame", f1)
}

// SPEC 4: the profile's rules concern "the first v3 request"; a connection
// with v2 headers only has none: under accepted-2026 neither "X then none"
// (seed: instance-id-dropped) nor "none, none" gives a finding, since
// "instance-id-dropped and instance-id-late are off".
func TestProfileV2OnlyConnections(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bb5Sess(cn, bb5App)
	bb5Meta(s, &bb5X)
	s.Header.ClientID = nil
	bb5Meta(s, nil)
	cn.Close()
	cn2 := c.Conn(pcapgen.ConnOptions{})
	s2 := bb5Sess(cn2, bb5App)
	bb5Meta(s2, nil)
	s2.Header.ClientID = nil
	bb5Meta(s2, nil)
	cn2.Close()
	path := bbCaptureFile(t, c, "")
	bb5Expect(t, "accepted-2026", bb5Read(t, path, bb5Acc), map[string]int{})
	bb5Expect(t, "seed", bb5Read(t, path, ""), map[string]int{"instance-id-dropped": 1})
}

// SPEC 4: the first v3 request must carry the ID; SPEC 2: "Requests with a
// v0/v1 header are exempt". A v2 request first (with or without X) and then
// a v3 request carrying X is compliant: instance-id-late is off and the
// first v3 request has one.
func TestProfileV2FirstThenV3WithID(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bb5Sess(cn, bb5App)
	bb5APIV(s)
	s.Header.ClientID = nil
	bb5OD(s, &bb5X, nil)
	bb5OD(s, nil, nil)
	cn.Close()
	bb5Expect(t, "accepted-2026", bb5Read(t, bbCaptureFile(t, c, ""), bb5Acc), map[string]int{})
}

// SPEC 1: "A zero UUID and an absent tag mean the same thing"; 3.7: "A zero
// header instance ID is no claim of KIP-1313 support". After a first v3
// request with X, later v3 requests with a zero UUID are omissions, not
// repeats and not changes: no finding.
func TestProfileZeroLaterIsOmission(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bb5Sess(cn, bb5App)
	bb5OD(s, &bb5X, nil)
	s.Header.ClientID = nil
	bb5OD(s, &[16]byte{}, nil)
	bb5OD(s, nil, nil)
	cn.Close()
	bb5Expect(t, "accepted-2026", bb5Read(t, bbCaptureFile(t, c, ""), bb5Acc), map[string]int{})
}

// ---------------------------------------------------------------- 3.1 rules that still apply

// SPEC 4: only dropped and late are off, so instance-id-changed ("a later
// request carries a non-zero instance ID different from the first") still
// runs, once per offending request (3.7), expected = first ID. A request that
// changes the ID does not repeat the first one: no instance-id-repeated ("one
// problem gives one finding"). Seed: v1 headers, nothing.
func TestProfileChangedV3(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bb5Sess(cn, bb5App)
	bb5OD(s, &bb5X, nil)
	s.Header.ClientID = nil
	_, f2 := bb5OD(s, &bb5Y, nil)
	_, f3 := bb5OD(s, &bb5Y, nil)
	bb5OD(s, nil, nil)
	cn.Close()
	path := bbCaptureFile(t, c, "")
	acc := bb5Read(t, path, bb5Acc)
	bb5Expect(t, "accepted-2026", acc, map[string]int{"instance-id-changed": 2})
	fs := bbOf(acc, "instance-id-changed")
	for i, want := range []int{f2, f3} {
		if i < len(fs) {
			bb5Field(t, fs[i], "frame", want)
			bb5Field(t, fs[i], "expected", bbJ(bb5X))
			bb5Field(t, fs[i], "observed", bbJ(bb5Y))
			bb5Field(t, fs[i], "severity", "error")
		}
	}
	bb5Expect(t, "seed", bb5Read(t, path, ""), map[string]int{})
}

// SPEC 4: "decode v3 as the v2 layout with the instance ID as tag 0", so
// instance-id-malformed applies to v3 headers; 3.7: "A request whose tag 0 is
// malformed neither sets nor breaks the connection's state" (README 1: the
// first request is the first whose tagged fields are well formed). Case A:
// malformed, then X, then none: malformed only. Case B: malformed, then none:
// malformed plus missing-first on the second request. Seed: v1 headers, the
// tag bytes are body bytes: nothing.
func TestProfileMalformedV3(t *testing.T) {
	bad := []byte{1, 0, 3, 1, 2, 3} // tag 0, size 3
	for _, tc := range []struct {
		name string
		next *[16]byte
		want map[string]int
	}{
		{"then-X", &bb5X, map[string]int{"instance-id-malformed": 1}},
		{"then-none", nil, map[string]int{"instance-id-malformed": 1, "instance-id-missing-first": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			cn := c.Conn(pcapgen.ConnOptions{})
			s := bb5Sess(cn, bb5App)
			_, f1 := bb5OD(s, nil, bad)
			s.Header.ClientID = nil
			_, f2 := bb5OD(s, tc.next, nil)
			bb5OD(s, nil, nil)
			cn.Close()
			path := bbCaptureFile(t, c, "")
			acc := bb5Read(t, path, bb5Acc)
			bb5Expect(t, "accepted-2026", acc, tc.want)
			bb5Field(t, bb5First(acc, "instance-id-malformed"), "frame", f1)
			if tc.next == nil {
				bb5Field(t, bb5First(acc, "instance-id-missing-first"), "frame", f2)
			}
			bb5Expect(t, "seed", bb5Read(t, path, ""), map[string]int{})
		})
	}
}

// SPEC 3.1 instance-id-reserved (warn) "the instance ID is ONE_UUID"; 3.7
// "once per instance ID". Under accepted-2026 two connections whose first v3
// request carries ONE_UUID: one reserved finding, and ONE_UUID is non-zero,
// so no missing-first.
func TestProfileReservedV3(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	one := pcapgen.OneUUID()
	var f1 int
	for i := 0; i < 2; i++ {
		cn := c.Conn(pcapgen.ConnOptions{Client: bb5Host(i)})
		s := bb5Sess(cn, bb5App)
		_, f := bb5OD(s, &one, nil)
		if i == 0 {
			f1 = f
		}
		s.Header.ClientID = nil
		bb5OD(s, nil, nil)
		cn.Close()
	}
	acc := bb5Read(t, bbCaptureFile(t, c, ""), bb5Acc)
	bb5Expect(t, "accepted-2026", acc, map[string]int{"instance-id-reserved": 1})
	f := bb5First(acc, "instance-id-reserved")
	bb5Field(t, f, "severity", "warn")
	bb5Field(t, f, "frame", f1)
}

// SPEC 3.1 instance-id-shared (warn) "one instance ID is used from two
// different client hosts"; 3.7 once per instance ID. Under accepted-2026 the
// ID travels once per connection, on the v3 request: two hosts, two
// connections each, all with X on the first request: one shared finding.
func TestProfileSharedV3(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	hosts := []string{"10.9.0.1", "10.9.0.2"}
	for i := 0; i < 4; i++ {
		cl := netip.AddrPortFrom(netip.MustParseAddr(hosts[i%2]), uint16(50000+i))
		cn := c.Conn(pcapgen.ConnOptions{Client: cl})
		s := bb5Sess(cn, bb5App)
		bb5OD(s, &bb5X, nil)
		s.Header.ClientID = nil
		bb5Meta(s, nil)
		cn.Close()
	}
	acc := bb5Read(t, bbCaptureFile(t, c, ""), bb5Acc)
	bb5Expect(t, "accepted-2026", acc, map[string]int{"instance-id-shared": 1})
	bb5Field(t, bb5First(acc, "instance-id-shared"), "severity", "warn")
	in := bb5Instance(acc, bb5X)
	if in == nil || fmt.Sprint(in["client_hosts"]) != "[10.9.0.1 10.9.0.2]" {
		t.Errorf("instance row of X: client_hosts %v, want both hosts", in["client_hosts"])
	}
}

// ---------------------------------------------------------------- member-ID alignment

// SPEC 3.4 member-id-misaligned: "the member ID is not the Java string form
// of the same connection's header instance ID"; 3.7 precedence: another
// encoding of the same bytes is alignment-encoding plus member-id-encoding,
// "never member-id-misaligned". Under accepted-2026 the connection's ID
// comes from its first v3 request, while the heartbeat itself (header v2)
// omits it. Seed: no header instance ID is seen ("Without a header instance
// ID, member-id-misaligned cannot fire").
func TestProfileMemberAlignmentUsesConnectionID(t *testing.T) {
	for _, tc := range []struct {
		name      string
		member    string
		acc, seed map[string]int
	}{
		{"aligned", bbJ(bb5X), map[string]int{}, map[string]int{}},
		{"misaligned", bbJ(bb5Y), map[string]int{"member-id-misaligned": 1}, map[string]int{}},
		{"padded", pcapgen.PaddedURL(bb5X),
			map[string]int{"member-id-alignment-encoding": 1, "member-id-encoding": 1},
			map[string]int{"member-id-encoding": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			cn := c.Conn(pcapgen.ConnOptions{})
			s := bb5Sess(cn, bb5App)
			bb5OD(s, &bb5X, nil)
			s.Header.ClientID = nil
			f := bb5CGH(s, tc.member, 0)
			bb5CGH(s, tc.member, 1)
			cn.Close()
			path := bbCaptureFile(t, c, "")
			acc := bb5Read(t, path, bb5Acc)
			bb5Expect(t, "accepted-2026", acc, tc.acc)
			if m := bb5First(acc, "member-id-misaligned"); m != nil {
				bb5Field(t, m, "frame", f)
				bb5Field(t, m, "expected", bbJ(bb5X))
				bb5Field(t, m, "instance_id", bbJ(bb5X))
			}
			bb5Expect(t, "seed", bb5Read(t, path, ""), tc.seed)
		})
	}
}

// SPEC 3.7: "Without a header instance ID, member-id-misaligned cannot
// fire". A connection whose first v3 request has no ID (missing-first) has no
// instance ID: its heartbeat with an unrelated member ID is not misaligned.
func TestProfileMissingFirstNoMisaligned(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bb5Sess(cn, bb5App)
	bb5OD(s, nil, nil)
	s.Header.ClientID = nil
	bb5CGH(s, bbJ(bb5Y), 0)
	cn.Close()
	bb5Expect(t, "accepted-2026", bb5Read(t, bbCaptureFile(t, c, ""), bb5Acc), map[string]int{"instance-id-missing-first": 1})
}

// SPEC 3.4 member-id-changed: "the same client (connection, or instance ID
// across connections) uses a second member ID in the same group". Under
// accepted-2026 X is named once per connection (its first v3 request); the
// heartbeats on two successive connections belong to instance X, so the
// second member ID is member-id-changed (and misaligned, being not Java(X)).
// Seed: no instance ID is seen, the connections are separate clients:
// nothing.
func TestProfileMemberChangedAcrossConnections(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{Client: bb5Host(0)})
	s := bb5Sess(cn, bb5App)
	bb5OD(s, &bb5X, nil)
	s.Header.ClientID = nil
	bb5CGH(s, bbJ(bb5X), 0)
	bb5CGH(s, bbJ(bb5X), -1)
	cn.Close()
	cn2 := c.Conn(pcapgen.ConnOptions{Client: bb5Host(1)})
	s2 := bb5Sess(cn2, bb5App)
	bb5OD(s2, &bb5X, nil)
	s2.Header.ClientID = nil
	f := bb5CGH(s2, bbJ(bb5Y), 0)
	cn2.Close()
	path := bbCaptureFile(t, c, "")
	acc := bb5Read(t, path, bb5Acc)
	bb5Expect(t, "accepted-2026", acc, map[string]int{"member-id-changed": 1, "member-id-misaligned": 1})
	bb5Field(t, bb5First(acc, "member-id-changed"), "frame", f)
	bb5Expect(t, "seed", bb5Read(t, path, ""), map[string]int{})
}

// ---------------------------------------------------------------- client ID

// SPEC 3.2 client-id-repeated (info): "a client that sends header instance
// IDs (so claims KIP-1313) still repeats the client ID on later requests ...
// For legacy clients this is a statistic, not a finding"; once per
// connection (3.7). Under accepted-2026 the v3 request names X, so repeating
// the client ID afterwards is a finding; under seed the same bytes are a v1
// header without instance ID: a legacy client, no finding.
func TestProfileClientIDRepeatedNeedsV3ID(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bb5Sess(cn, bb5App)
	bb5OD(s, &bb5X, nil)
	bb5Meta(s, nil)
	bb5OD(s, nil, nil)
	cn.Close()
	path := bbCaptureFile(t, c, "")
	acc := bb5Read(t, path, bb5Acc)
	bb5Expect(t, "accepted-2026", acc, map[string]int{"client-id-repeated": 1})
	bb5Field(t, bb5First(acc, "client-id-repeated"), "severity", "info")
	bb5Expect(t, "seed", bb5Read(t, path, ""), map[string]int{})
}

// ---------------------------------------------------------------- broker conformance

// SPEC 3.5 broker-accepted-invalid: judged "where the response has a
// top-level error code (APIs of section 1)"; section 1: "Other bodies are
// skipped by length, never parsed". OffsetDelete (47), today's only header-v3
// user, is not among section 1's APIs, so a missing-first OffsetDelete
// answered NONE is missing-first only, and answered INVALID_REQUEST likewise.
// (Spec gap: under accepted-2026 broker-accepted-invalid can thus never
// answer instance-id-missing-first.)
func TestProfileMissingFirstAnsweredNone(t *testing.T) {
	for _, code := range []int16{0, 42} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			cn := c.Conn(pcapgen.ConnOptions{})
			s := bb5Sess(cn, bb5App)
			corr, _ := bb5OD(s, nil, nil)
			bb5ODResp(s, corr, code)
			cn.Close()
			acc := bb5Read(t, bbCaptureFile(t, c, ""), bb5Acc)
			bb5Expect(t, "accepted-2026", acc, map[string]int{"instance-id-missing-first": 1})
			if acc.Totals.Coverage["unmatched-response"] != 0 {
				t.Errorf("unmatched-response %d", acc.Totals.Coverage["unmatched-response"])
			}
		})
	}
}

// SPEC 4: the header version comes "from a table keyed by API key and
// version, with kmsg's flexible/non-flexible knowledge as the default and an
// override list for v3 (the first v3 user is OffsetDelete v1)". OffsetDelete
// v0 stays header v1 (exempt, SPEC 2), so the v1 request after it is the
// first v3 request: missing-first there, and totals count v1:1 v3:2.
func TestProfileTableOffsetDeleteV0IsV1(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bb5Sess(cn, bb5App)
	r := kmsg.NewPtrOffsetDeleteRequest()
	r.Version = 0
	r.Group = "orders-group"
	s.Request(r) // HeaderAuto: v1 for a non-flexible version
	s.Header.ClientID = nil
	_, f := bb5OD(s, nil, nil)
	bb5OD(s, nil, nil)
	cn.Close()
	acc := bb5Read(t, bbCaptureFile(t, c, ""), bb5Acc)
	bb5Expect(t, "accepted-2026", acc, map[string]int{"instance-id-missing-first": 1})
	bb5Field(t, bb5First(acc, "instance-id-missing-first"), "frame", f)
	if hv := acc.Totals.ByHeaderVersion; hv["v1"] != 1 || hv["v3"] != 2 {
		t.Errorf("requests_by_header_version %v, want v1:1 v3:2", hv)
	}
}

// SPEC 3.4 member-id-collision: "two different client instances (different
// instance IDs, or different client host:port without instance IDs, alive at
// the same time)"; README 7: "a second process starts with a join". Under
// accepted-2026 two concurrent connections of instance X (same host, two
// ports, X on each first v3 request) both join with Java(X): one claimant,
// no collision, no finding. Under seed no instance ID is seen: two host:port
// claimants, the second starting with a join: one collision.
func TestProfileCollisionClaimantIsConnectionID(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn1 := c.Conn(pcapgen.ConnOptions{Client: bb5Host(0)})
	s1 := bb5Sess(cn1, bb5App)
	bb5OD(s1, &bb5X, nil)
	s1.Header.ClientID = nil
	bb5CGH(s1, bbJ(bb5X), 0)
	cn2 := c.Conn(pcapgen.ConnOptions{Client: bb5Host(1)})
	s2 := bb5Sess(cn2, bb5App)
	bb5OD(s2, &bb5X, nil)
	s2.Header.ClientID = nil
	bb5CGH(s2, bbJ(bb5X), 0)
	bb5CGH(s1, bbJ(bb5X), 1)
	cn2.Close()
	cn1.Close()
	path := bbCaptureFile(t, c, "")
	bb5Expect(t, "accepted-2026", bb5Read(t, path, bb5Acc), map[string]int{})
	bb5Expect(t, "seed", bb5Read(t, path, ""), map[string]int{"member-id-collision": 1})
}

// ---------------------------------------------------------------- probes (log only)

// Points SPEC.md leaves open under accepted-2026; logged, not asserted:
// (a) a later v2 request that still carries X (old-style) after the v3 one;
// (b) GetTelemetrySubscriptions without header ID and body 0 on a connection
// whose first v3 request named X (row 1 by the request header, row 4 by the
// connection's ID); (c) a v2 request with Y after the v3 one with X.
func TestProfileProbeAmbiguities(t *testing.T) {
	run := func(name string, body func(s *pcapgen.Session)) {
		c := pcapgen.New(pcapgen.Options{})
		cn := c.Conn(pcapgen.ConnOptions{})
		s := bb5Sess(cn, bb5App)
		bb5OD(s, &bb5X, nil)
		s.Header.ClientID = nil
		body(s)
		cn.Close()
		rep := bb5Read(t, bbCaptureFile(t, c, ""), bb5Acc)
		t.Logf("%s: %v\n%s", name, bbCounts(rep), rep.summary())
	}
	run("(a) v2 later with X", func(s *pcapgen.Session) { bb5Meta(s, &bb5X); bb5Meta(s, &bb5X) })
	run("(b) GTS no H, body 0", func(s *pcapgen.Session) {
		s.RoundTrip(pcapgen.GetTelemetrySubscriptions([16]byte{}), pcapgen.GetTelemetrySubscriptionsResponse(0, bb5Y, 7))
	})
	run("(c) v2 later with Y", func(s *pcapgen.Session) { bb5Meta(s, &bb5Y) })
}

// ------------------------------------------------------ (3) accepted-2026

// SPEC 4: under accepted-2026 "instance-id-dropped and instance-id-late are
// off", and the header version "must come from a table keyed by API key and
// version, with kmsg's flexible/non-flexible knowledge as the default and an
// override list for v3"; README 10: "Only v3 requests feed the instance-ID
// state". The reference session (compliant under seed) has no v3 request
// (no OffsetDelete), so under accepted-2026 no header rule can fire; its
// telemetry is aligned (3.3 row 3, or row 2 if the v2 header ID is ignored)
// and no client ID is repeated. SPEC 3: profiles "may change which rules run
// and their severity, never their meaning": still no finding, exit 0 with
// --fail-on info, the same totals, no connection unobservable (all start
// with a SYN).
func TestProfileReferenceSession(t *testing.T) {
	c, _ := bb8bSession(nil)
	rep, path := bb8bRun(t, c, "--profile", "accepted-2026")
	bbExpect(t, rep, nil)
	if rep.Profile != "accepted-2026" {
		t.Errorf("profile %q", rep.Profile)
	}
	if code, _, errOut := runKwatch("read", "--profile", "accepted-2026", "--fail-on", "info", path); code != 0 {
		t.Errorf("accepted-2026 --fail-on info: exit %d (%s)", code, errOut)
	}
	if hv := rep.Totals.ByHeaderVersion; hv["v1"] != 1 || hv["v2"] != 30 || hv["v3"] != 0 {
		t.Errorf("requests_by_header_version %v, want v1:1 v2:30 v3:0", hv)
	}
	if rep.Totals.Unobservable != 0 {
		t.Errorf("unobservable_connections %d, want 0", rep.Totals.Unobservable)
	}
}

// bb8bOffsetDelete sends OffsetDelete v1 (SPEC 4: "the first v3 user is
// OffsetDelete v1") with a v3 header carrying id (nil: absent) and returns
// the completing frame; the broker answers NONE.
func bb8bOffsetDelete(s *pcapgen.Session, id *[16]byte) int {
	s.Header.HeaderVersion = 3
	s.Header.InstanceID = id
	r := kmsg.NewPtrOffsetDeleteRequest()
	r.Version = 1
	r.Group = bb8bGroup
	corr, f := s.Request(r)
	s.Header.HeaderVersion = pcapgen.HeaderAuto
	s.Header.InstanceID = nil
	resp := kmsg.NewPtrOffsetDeleteResponse()
	resp.Version = 1
	s.Respond(corr, resp)
	return f
}

// An accepted-2026 admin client end to end on three connections.
//   - A (from its SYN): ApiVersions (v2 header, client ID, no instance ID),
//     OffsetDelete v1 with X (its first v3 request: compliant), OffsetDelete
//     v1 with X again: instance-id-repeated (info) (SPEC 4: the ID is
//     required on the first request "and omits it afterwards").
//   - B (joined mid-stream, no handshake): OffsetDelete v1 without an ID:
//     "A connection whose first request was not seen is "identity
//     unobservable" under this profile: never non-compliant on that
//     ground"; README 10: "counted in the totals and never
//     instance-id-missing-first"; SPEC 3.6 midstream-join.
//   - C (from its SYN): OffsetDelete v1 without an ID first:
//     instance-id-missing-first ("error: the first v3 request has none"),
//     full confidence; then OffsetDelete with X: late is off, no finding.
//
// Exit 1 by default (an error finding), 0 with --fail-on never. Under seed
// OffsetDelete v1 is non-flexible, header v1 (exempt, SPEC 2): no finding.
func TestProfileAdminEndToEnd(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	x := bb8bX
	host := netip.MustParseAddr("10.70.0.5")
	ca := c.Conn(pcapgen.ConnOptions{Client: netip.AddrPortFrom(host, 45001), Broker: bb8bB1})
	sa := ca.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("admin-1"), CorrelationID: 1})
	sa.RoundTrip(pcapgen.APIVersions(4, "apache-kafka-java", "4.3.0"), pcapgen.APIVersionsResponse(4))
	sa.Header.ClientID = nil
	bb8bOffsetDelete(sa, &x)
	repF := bb8bOffsetDelete(sa, &x)
	cb := c.Conn(pcapgen.ConnOptions{Client: netip.AddrPortFrom(host, 45002), Broker: bb8bB2, NoSYN: true})
	sb := cb.Session(pcapgen.RequestHeader{ClientID: nil, CorrelationID: 40})
	bb8bOffsetDelete(sb, nil)
	bb8bOffsetDelete(sb, nil)
	cc := c.Conn(pcapgen.ConnOptions{Client: netip.AddrPortFrom(host, 45003), Broker: bb8bB3})
	sc := cc.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("admin-1"), CorrelationID: 1})
	missF := bb8bOffsetDelete(sc, nil)
	sc.Header.ClientID = nil
	bb8bOffsetDelete(sc, &x)
	ca.Close()
	cb.Close()
	cc.Close()
	rep, path := bb8bRun(t, c, "--profile", "accepted-2026")
	bbExpect(t, rep, map[string]int{"instance-id-repeated": 1, "instance-id-missing-first": 1})
	bb8bCheck(t, bbOne(t, rep, "instance-id-repeated"), bb8bWant{severity: "info", confidence: "full", frame: repF,
		client: "10.70.0.5:45001", broker: bb8bB1.String(), api: "OffsetDelete"})
	bb8bCheck(t, bbOne(t, rep, "instance-id-missing-first"), bb8bWant{severity: "error", confidence: "full", frame: missF,
		client: "10.70.0.5:45003", broker: bb8bB3.String(), api: "OffsetDelete"})
	if rep.Totals.Unobservable != 1 {
		t.Errorf("unobservable_connections %d, want 1 (connection B)", rep.Totals.Unobservable)
	}
	if rep.Totals.Coverage["midstream-join"] != 1 {
		t.Errorf("coverage midstream-join %d, want 1", rep.Totals.Coverage["midstream-join"])
	}
	if hv := rep.Totals.ByHeaderVersion; hv["v2"] != 1 || hv["v3"] != 6 {
		t.Errorf("requests_by_header_version %v, want v2:1 v3:6", hv)
	}
	if code, _, _ := runKwatch("read", "--profile", "accepted-2026", path); code != 1 {
		t.Errorf("accepted-2026 default --fail-on: exit %d, want 1", code)
	}
	if code, _, _ := runKwatch("read", "--profile", "accepted-2026", "--fail-on", "never", path); code != 0 {
		t.Errorf("accepted-2026 --fail-on never: exit %d, want 0", code)
	}
	seed := bb8bRead(t, path)
	bbExpect(t, seed, nil)
	if code, _, _ := runKwatch("read", path); code != 0 {
		t.Errorf("seed: exit %d, want 0", code)
	}
}

// SPEC 6: the profile selects the header versions (dump takes --profile
// too: "--profile seed|accepted-2026"); SPEC 4: "the header version must
// come from a table keyed by API key and version ... an override list for
// v3 (the first v3 user is OffsetDelete v1)"; "decode v3 as the v2 layout
// with the instance ID as tag 0". Under accepted-2026 dump shows
// OffsetDelete v1 with header_version 3 and its instance_id; OffsetDelete v0
// keeps header v1; under seed OffsetDelete v1 is header v1 (non-flexible),
// so no instance_id, and the client ID is read all the same (SPEC 1: "v1 =
// v0 + client_id").
func TestProfileDumpHeaderV3(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	x := bb8bX
	cn := c.Conn(pcapgen.ConnOptions{Client: netip.MustParseAddrPort("10.81.0.5:46100"), Broker: bb8bB1})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("admin-od"), CorrelationID: 1})
	od0 := kmsg.NewPtrOffsetDeleteRequest()
	od0.Version = 0
	od0.Group = bb8bGroup
	f0, _ := s.RoundTrip(od0, kmsg.NewPtrOffsetDeleteResponse())
	f1 := bb8bOffsetDelete(s, &x)
	cn.Close()
	path := bbCaptureFile(t, c, "")
	for _, tc := range []struct {
		profile string
		hv1     int
		inst    bool
	}{{"accepted-2026", 3, true}, {"seed", 1, false}} {
		objs := bbDump(t, "--profile", tc.profile, path)
		by := map[string]map[string]any{}
		for _, o := range objs {
			if o["kind"] == "request" {
				by[fmt.Sprint(o["frame"])] = o
			}
		}
		o0, o1 := by[fmt.Sprint(f0)], by[fmt.Sprint(f1)]
		if o0 == nil || o1 == nil {
			t.Fatalf("%s: requests at frames %d and %d not dumped: %v", tc.profile, f0, f1, objs)
		}
		if fmt.Sprint(o0["header_version"]) != "1" || o0["client_id"] != "admin-od" {
			t.Errorf("%s: OffsetDelete v0 header_version %v client_id %v, want 1 and admin-od", tc.profile, o0["header_version"], o0["client_id"])
		}
		if fmt.Sprint(o1["header_version"]) != fmt.Sprint(tc.hv1) || o1["client_id"] != "admin-od" {
			t.Errorf("%s: OffsetDelete v1 header_version %v client_id %v, want %d and admin-od", tc.profile, o1["header_version"], o1["client_id"], tc.hv1)
		}
		if v, ok := o1["instance_id"]; ok != tc.inst || (ok && v != bbJ(x)) {
			t.Errorf("%s: OffsetDelete v1 instance_id %v (present %v), want present=%v %s", tc.profile, v, ok, tc.inst, bbJ(x))
		}
	}
}

// TestProfileClientFlow: SPEC section 4, "the revision accepted in Aug
// 2026 puts the instance ID in a new request header v3, requires it on the
// first request of a connection and omits it afterwards, as with the client
// ID"; under the profile "instance-id-dropped and instance-id-late are off".
// A conforming client: ApiVersions and Metadata on v2 headers without ID,
// OffsetDelete v1 (v3) with the ID first, then without: nothing (README
// rule 10: "Only v3 requests feed the instance-ID state"). Variant: the ID
// repeated on a later v3 request is instance-id-repeated (info).
func TestProfileClientFlow(t *testing.T) {
	c := bb8gNew()
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bb5Sess(cn, pcapgen.Ptr("admin-app"))
	s.RoundTrip(pcapgen.APIVersions(4, "apache-kafka-java", "4.3.0"), pcapgen.APIVersionsResponse(4))
	s.Header.ClientID = nil
	bbMeta(s)
	corr, _ := bb5OD(s, &bb8gH, nil)
	bb5ODResp(s, corr, errNone)
	corr, _ = bb5OD(s, nil, nil)
	bb5ODResp(s, corr, errNone)
	bbMeta(s)
	corr, _ = bb5OD(s, nil, nil)
	bb5ODResp(s, corr, errNone)
	rep := bbRunF(t, c, "--profile", "accepted-2026")
	bbExpect(t, rep, map[string]int{})

	// variant: the ID repeated on a later v3 request (info).
	c2 := bb8gNew()
	cn2 := c2.Conn(pcapgen.ConnOptions{})
	s2 := bb5Sess(cn2, pcapgen.Ptr("admin-app"))
	s2.RoundTrip(pcapgen.APIVersions(4, "apache-kafka-java", "4.3.0"), pcapgen.APIVersionsResponse(4))
	s2.Header.ClientID = nil
	corr, _ = bb5OD(s2, &bb8gH, nil)
	bb5ODResp(s2, corr, errNone)
	corr, _ = bb5OD(s2, &bb8gH, nil)
	bb5ODResp(s2, corr, errNone)
	rep2 := bbRunF(t, c2, "--profile", "accepted-2026")
	bbExpect(t, rep2, map[string]int{"instance-id-repeated": 1})
	bb7Sev(t, rep2, "instance-id-repeated", "info", "")
}
