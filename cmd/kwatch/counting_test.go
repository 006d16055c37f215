package main

// SPEC.md section 3.7: counting and precedence: once per request, per
// connection, per instance ID or per (connection, group, member ID); which
// request is first; the frame of a finding under segmentation.
// Expectations come from SPEC.md and README.md's "Rules: where SPEC.md is
// silent" only, never from kwatch's implementation.

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/kwatch/kwatch/internal/pcapgen"
)

// SPEC 3.1 instance-id-reserved (warn): "the instance ID is ONE_UUID"; 3.7:
// "instance-id-reserved ... once per instance ID", across connections.
func TestCountingReservedOncePerID(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	one := pcapgen.OneUUID()
	var first int
	for i := 0; i < 2; i++ {
		cn := c.Conn(pcapgen.ConnOptions{Client: netip.MustParseAddrPort(fmt.Sprintf("10.1.0.1:%d", 40001+i))})
		s := bbSession(cn, pcapgen.Ptr("orders-app"), &one)
		if f := bbMeta(s); i == 0 {
			first = f
		}
		s.Header.ClientID = nil
		bbMeta(s)
		cn.Close()
	}
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"instance-id-reserved": 1})
	f := bbFirst(t, rep, "instance-id-reserved")
	bbField(t, f, "severity", "warn")
	bbField(t, f, "frame", first) // "at the first request that shows it"
	bbField(t, f, "instance_id", "AAAAAAAAAAAAAAAAAAAAAQ")
}

// SPEC 3.1/3.7: the state compares with the first v2 request, once per
// offending request: X,Y,Y is changed twice; X,Y,none is changed then
// dropped (expected X both times); none,X,Y is late twice (never changed:
// the first carried none).
func TestCountingStateIsTheFirstRequest(t *testing.T) {
	a := pcapgen.Ptr("orders-app")
	X, Y := bbID(bbX), bbID(bbY)
	for _, tc := range []struct {
		name  string
		steps []bbStep
		want  map[string]int
	}{
		{"X,Y,Y", []bbStep{{cid: a, id: X, kind: "m"}, {id: Y, kind: "m"}, {id: Y, kind: "m"}}, map[string]int{"instance-id-changed": 2}},
		{"X,Y,none", []bbStep{{cid: a, id: X, kind: "m"}, {id: Y, kind: "m"}, {kind: "m"}}, map[string]int{"instance-id-changed": 1, "instance-id-dropped": 1}},
		{"none,X,Y", []bbStep{{cid: a, kind: "m"}, {id: X, kind: "m"}, {id: Y, kind: "m"}}, map[string]int{"instance-id-late": 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			bbPlay(c, pcapgen.ConnOptions{}, tc.steps)
			rep := bbRun(t, c)
			bbExpect(t, rep, tc.want)
			for _, f := range rep.Findings {
				if f["rule"] != "instance-id-late" {
					bbField(t, f, "expected", bbJ(bbX))
				}
			}
		})
	}
}

// SPEC section 5: "frame is the 1-based packet number ... of the packet that
// completed the request". Requests cut into 20-byte segments, reordered and
// retransmitted: the frame is the one pcapgen reports as completing the
// request, and retransmitted bytes never count a request twice (3.7 "once
// per offending request").
func TestCountingFrameUnderSegmentation(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{Seed: 3, Perturb: pcapgen.Perturb{MSS: 20, Reorder: 3, RetransmitEvery: 2, OverlapEvery: 5}})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bbSession(cn, pcapgen.Ptr("orders-app"), bbID(bbX))
	bbAPIV(s, 0)
	s.Header.ClientID = nil
	s.Header.InstanceID = bbID(bbY)
	f1 := bbMeta(s)
	s.Header.InstanceID = nil
	f2 := bbMeta(s)
	cn.Close()
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"instance-id-changed": 1, "instance-id-dropped": 1})
	bbField(t, bbFirst(t, rep, "instance-id-changed"), "frame", f1)
	bbField(t, bbFirst(t, rep, "instance-id-dropped"), "frame", f2)
}

// ------------------------------------------------------- property rules

// 3.4 member-id-not-uuid "warn | the member ID decodes to 16 bytes in none
// of the known encodings"; 3.7 "once per (connection, group, member ID)".
// Same ID in two groups on one connection = 2; repeated heartbeats add none;
// another connection (sequential, different host) = 1 more.
func TestCountingNotUUIDOncePerSubject(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	m := "consumer-7-1732894512"
	cn, s := bbLegacy(c, pcapgen.ConnOptions{})
	jf := cgJoin(s, 1, bbGroup, m)
	cgBeat(s, 1, bbGroup, m, 1)
	cgBeat(s, 1, bbGroup, m, 1)
	cgJoin(s, 1, "g2", m)
	cgLeave(s, 1, bbGroup, m, -1)
	cgLeave(s, 1, "g2", m, -1)
	cn.Close()
	cn2, s2 := bbLegacy(c, pcapgen.ConnOptions{})
	cgJoin(s2, 1, bbGroup, m)
	cn2.Close()
	rep := bbRun2(t, c)
	bbExpect(t, rep, map[string]int{"member-id-not-uuid": 3})
	bbCheck(t, rep, "member-id-not-uuid", "warn", "full", 0)
	if fs := bbOf(rep, "member-id-not-uuid"); len(fs) > 0 && fs[0].Frame != jf {
		t.Errorf("first member-id-not-uuid frame %d, want %d (the first request that shows it)", fs[0].Frame, jf)
	}
}

// Section 5: "frame is the 1-based packet number ... of the packet that
// completed the request". With 20-byte segments, retransmissions and a
// pipelined pair, the ghost-member finding points at the completing packet.
func TestCountingFrameOfSegmentedRequest(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{Perturb: pcapgen.Perturb{MSS: 20, RetransmitEvery: 3, ACKs: true}})
	cn, s := bbLegacy(c, pcapgen.ConnOptions{})
	a := pcapgen.JavaString(pcapgen.SeqUUID(0x69))
	b := pcapgen.JavaString(pcapgen.SeqUUID(0x6a))
	_, frames := s.Pipeline(pcapgen.ConsumerGroupHeartbeat(1, bbGroup, a, 0), pcapgen.ConsumerGroupHeartbeat(1, bbGroup, b, 0))
	cn.Close()
	rep := bbRun2(t, c)
	bbExpect(t, rep, map[string]int{"ghost-member": 1})
	bbCheck(t, rep, "ghost-member", "error", "full", frames[1])
}

// ---------------------------------------------------------------- repeated

// SPEC 4: "omits it afterwards"; "instance-id-repeated (info)". Later v3
// requests repeating X are info (never error or warn): exit 0 by default, 1
// with --fail-on info. SPEC 3.7 does not list instance-id-repeated, so the
// count may be per request (3, like the 3.1 request rules) or per connection
// (1, like client-id-repeated); either is accepted here and logged. The first
// finding is at the first repeating request (3.7: "at the first request that
// shows it").
func TestCountingRepeatedCount(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bb5Sess(cn, bb5App)
	bb5OD(s, &bb5X, nil)
	s.Header.ClientID = nil
	_, f2 := bb5OD(s, &bb5X, nil)
	bb5OD(s, &bb5X, nil)
	bb5OD(s, &bb5X, nil)
	cn.Close()
	path := bbCaptureFile(t, c, "")
	acc := bb5Read(t, path, bb5Acc)
	got := bbCounts(acc)
	n := got["instance-id-repeated"]
	if n != 1 && n != 3 {
		t.Errorf("instance-id-repeated %d, want 1 (per connection) or 3 (per request)", n)
	}
	if len(got) != 1 {
		t.Errorf("other rules fired: %v", got)
	}
	for _, f := range bbOf(acc, "instance-id-repeated") {
		bb5Field(t, f, "severity", "info")
		bb5Field(t, f, "confidence", "full")
	}
	bb5Field(t, bb5First(acc, "instance-id-repeated"), "frame", f2)
	t.Logf("instance-id-repeated for 3 repeating requests: %d finding(s)\n%s", n, acc.summary())
	if code := bb5Exit(path, "--profile", bb5Acc); code != 0 {
		t.Errorf("default --fail-on error: exit %d, want 0 (repeated is info)", code)
	}
	if code := bb5Exit(path, "--profile", bb5Acc, "--fail-on", "info"); code != 1 {
		t.Errorf("--fail-on info: exit %d, want 1", code)
	}
	bb5Expect(t, "seed", bb5Read(t, path, ""), map[string]int{})
}

// bb7V1 returns id as a version-1 UUID.
func bb7V1(id [16]byte) [16]byte {
	id[6] = id[6]&0x0f | 0x10
	return id
}

// ------------------------------------------------------- property rules

// SPEC 3.7: "member-id-not-uuid, -encoding, -not-v4, -misaligned,
// -alignment-encoding once per (connection, group, member ID)", "at the
// first request that shows it". The same member ID in two groups of one
// connection is two subjects; heartbeats and leaves add none.
func TestCountingPropertyRulesOncePerGroup(t *testing.T) {
	v1 := bbJ(bb7V1(pcapgen.SeqUUID(0x05)))
	cases := []struct {
		name   string
		modern bool
		member string
		want   map[string]int
	}{
		{"misaligned", true, bbJ(bb7Y), map[string]int{"member-id-misaligned": 2}},
		{"alignment-encoding", true, pcapgen.PaddedURL(bb7X), map[string]int{"member-id-alignment-encoding": 2, "member-id-encoding": 2}},
		{"not-v4", false, v1, map[string]int{"member-id-not-v4": 2}},
		{"encoding", false, pcapgen.Dashed(pcapgen.SeqUUID(0x06)), map[string]int{"member-id-encoding": 2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			cn, s := bb7Client(c, tc.modern)
			var joins []int
			for _, g := range []string{"g1", "g2"} {
				joins = append(joins, bb7CG.join(s, g, tc.member))
				bb7CG.beat(s, g, tc.member, 1)
				bb7CG.beat(s, g, tc.member, 1)
			}
			bb7CG.leave(s, "g1", tc.member)
			bb7CG.leave(s, "g2", tc.member)
			cn.Close()
			rep := bbRunF(t, c)
			bbExpect(t, rep, tc.want)
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
func TestCountingPropertyRulesCombine(t *testing.T) {
	dashUnderscore := pcapgen.SeqUUID(0x07)
	dashUnderscore[0] = 0xfb // first character '-'
	dashUnderscore[3] = 0xfc // fifth character '_'
	java := bbJ(dashUnderscore)
	if !strings.Contains(java, "-") || !strings.Contains(java, "_") {
		t.Fatalf("scenario bug: %q", java)
	}
	// A Java-form string whose last character carries non-zero trailing bits.
	const alpha = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	base := bbJ(pcapgen.SeqUUID(0x08))
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
			cn, s := bb7Client(c, tc.modern)
			jf := bb7CG.join(s, "g", tc.member)
			bb7CG.beat(s, "g", tc.member, 1)
			cn.Close()
			rep := bbRunF(t, c)
			bbExpect(t, rep, tc.want)
			for r, sev := range tc.sev {
				bb7Sev(t, rep, r, sev, "full")
				bb7EqInts(t, r+" frame", bb7Frames(rep, r), []int{jf})
			}
		})
	}
}

// ----------------------------------------------------- instance-id-shared

// SPEC 3.1 instance-id-shared: "one instance ID is used from two different
// client hosts, or with two different client IDs"; README 2: "with a second
// distinct non-empty first client ID of a connection". One host; X on four
// connections: first client ID "a" twice (the second connection later sends
// "b": client-id-changed, but not a first client ID), null, and empty.
// Not shared. And ONE_UUID from two hosts is both reserved and shared, each
// "once per instance ID" (3.7).
func TestCountingSharedFirstClientIDs(t *testing.T) {
	t.Run("later-client-id-is-not-a-second-client", func(t *testing.T) {
		c := pcapgen.New(pcapgen.Options{})
		for i, first := range []*string{pcapgen.Ptr("a"), pcapgen.Ptr("a"), nil, pcapgen.Ptr("")} {
			cn := c.Conn(pcapgen.ConnOptions{Client: bb7Host("10.7.3.1", uint16(41001+i))})
			s := cn.Session(pcapgen.RequestHeader{ClientID: first, InstanceID: &bb7X, CorrelationID: 1})
			bbMeta(s)
			s.Header.ClientID = nil
			bbMeta(s)
			if i == 1 {
				s.Header.ClientID = pcapgen.Ptr("b")
				bbMeta(s)
			}
			cn.Close()
		}
		rep := bbRunF(t, c)
		got := bbCounts(rep)
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
			if f := bbMeta(s); i == 1 {
				second = f
			}
			s.Header.ClientID = nil
			bbMeta(s)
			cn.Close()
		}
		rep := bbRunF(t, c)
		bbExpect(t, rep, map[string]int{"instance-id-reserved": 1, "instance-id-shared": 1})
		bb7Sev(t, rep, "instance-id-shared", "warn", "full")
		bb7EqInts(t, "instance-id-shared frame", bb7Frames(rep, "instance-id-shared"), []int{second})
	})
}

// SPEC 3.7: request rules (3.1 "malformed") "fire once per offending
// request"; README 1: the first request "is the first v2-header request whose
// tagged fields are well formed". Two malformed requests are two findings;
// a malformed first request followed by one without an ID and then one with
// X is instance-id-late (the well-formed request without an ID is first).
func TestCountingMalformed(t *testing.T) {
	bad := []byte{1, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8}
	t.Run("twice", func(t *testing.T) {
		c := pcapgen.New(pcapgen.Options{})
		cn, s := bb7Modern(c, pcapgen.ConnOptions{}, "orders-app", bb7X)
		s.Header.RawTags = bad
		f1 := bbMeta(s)
		f2 := bbMeta(s)
		s.Header.RawTags = nil
		bbMeta(s)
		cn.Close()
		rep := bbRunF(t, c)
		bbExpect(t, rep, map[string]int{"instance-id-malformed": 2})
		bb7EqInts(t, "instance-id-malformed frames", bb7Frames(rep, "instance-id-malformed"), []int{f1, f2})
	})
	t.Run("malformed-none-then-id", func(t *testing.T) {
		c := pcapgen.New(pcapgen.Options{})
		cn := c.Conn(pcapgen.ConnOptions{})
		s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("orders-app"), RawTags: bad, CorrelationID: 1})
		bbMeta(s)
		s.Header.RawTags = nil
		s.Header.ClientID = nil
		bbMeta(s)
		s.Header.InstanceID = &bb7X
		lf := bbMeta(s)
		cn.Close()
		rep := bbRunF(t, c)
		bbExpect(t, rep, map[string]int{"instance-id-malformed": 1, "instance-id-late": 1})
		bb7EqInts(t, "instance-id-late frame", bb7Frames(rep, "instance-id-late"), []int{lf})
	})
}
