package main

// SPEC.md section 3.1: the client instance ID in the request header (KIP-1313):
// dropped, changed, late, malformed, reserved and shared, on one connection and
// across connections.
// Expectations come from SPEC.md and README.md's "Rules: where SPEC.md is
// silent" only, never from kwatch's implementation.

import (
	"fmt"
	"net/netip"
	"testing"

	"github.com/kwatch/kwatch/internal/pcapgen"
)

// ---------------------------------------------------------------- 3.1

// SPEC 3.1: "If its first v2-header request specifies one, every later
// v2-header request specifies the same value". A compliant modern client
// (client ID once, instance ID on every request, aligned telemetry, row 3
// of 3.3 answered "0, NONE") gives no finding at all, exit 0 even with
// --fail-on info.
func TestInstanceIDCompliantModern(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := bbSession(cn, pcapgen.Ptr("orders-app"), bbID(bbX))
	bbAPIV(s, 0)
	s.Header.ClientID = nil
	bbMeta(s)
	bbGTS(s, bbX, 0, bbZero)
	bbPush(s, bbX, 0)
	bbMeta(s)
	cn.Close()
	path := bbCaptureFile(t, c, "")
	rep := bbRead(t, path)
	bbExpect(t, rep, map[string]int{})
	if code, _, stderr := runKwatch("read", "--fail-on", "info", path); code != 0 {
		t.Errorf("compliant capture with --fail-on info: exit %d, want 0 (%s)", code, stderr)
	}
	// Section 5: one row per client instance with ... telemetry ID.
	found := false
	for _, in := range rep.Instances {
		if in["instance_id"] == bbJ(bbX) {
			found = true
			if in["telemetry_id"] != bbJ(bbX) {
				t.Errorf("instance row telemetry_id %v, want %s", in["telemetry_id"], bbJ(bbX))
			}
		}
	}
	if !found {
		t.Errorf("no instance row for %s", bbJ(bbX))
	}
}

// SPEC 3.1 instance-id-dropped: "the first v2 request carried an instance
// ID; a later v2 request carries none (absent or zero)"; 3.7: "Request rules
// (3.1 dropped/...) fire once per offending request". Section 5: frame is
// the packet that completed the request.
func TestInstanceIDDroppedAbsentAndZero(t *testing.T) {
	var f1, f2 int
	rep := bbOneConn(t, pcapgen.Ptr("orders-app"), bbID(bbX), func(s *pcapgen.Session) {
		bbMeta(s)
		s.Header.ClientID = nil
		s.Header.InstanceID = nil
		f1 = bbMeta(s)
		s.Header.InstanceID = bbID(bbZero)
		f2 = bbMeta(s)
	})
	bbExpect(t, rep, map[string]int{"instance-id-dropped": 2})
	fs := bbOf(rep, "instance-id-dropped")
	if len(fs) == 2 {
		for i, f := range fs {
			bbField(t, f, "severity", "error")
			bbField(t, f, "kip", "KIP-1313")
			bbField(t, f, "confidence", "full")
			bbField(t, f, "expected", bbJ(bbX))
			bbField(t, f, "frame", []int{f1, f2}[i])
			bbField(t, f, "api", "Metadata")
			bbField(t, f, "api_key", 3)
		}
	}
}

// SPEC 3.1 instance-id-changed: "a later v2 request carries a non-zero
// instance ID different from the first"; once per offending request. A
// later request that goes back to the first value is compliant.
func TestInstanceIDChangedPerRequest(t *testing.T) {
	var f1, f2 int
	rep := bbOneConn(t, pcapgen.Ptr("orders-app"), bbID(bbX), func(s *pcapgen.Session) {
		bbMeta(s)
		s.Header.ClientID = nil
		s.Header.InstanceID = bbID(bbY)
		f1 = bbMeta(s)
		s.Header.InstanceID = bbID(bbX)
		bbMeta(s)
		s.Header.InstanceID = bbID(bbZ)
		f2 = bbMeta(s)
	})
	bbExpect(t, rep, map[string]int{"instance-id-changed": 2})
	fs := bbOf(rep, "instance-id-changed")
	if len(fs) == 2 {
		bbField(t, fs[0], "expected", bbJ(bbX))
		bbField(t, fs[0], "observed", bbJ(bbY))
		bbField(t, fs[0], "frame", f1)
		bbField(t, fs[1], "expected", bbJ(bbX))
		bbField(t, fs[1], "observed", bbJ(bbZ))
		bbField(t, fs[1], "frame", f2)
		bbField(t, fs[0], "severity", "error")
	}
}

// SPEC 3.1 instance-id-late: "the first v2 request carried none; a later v2
// request carries one", once per offending request (3.7). "A zero UUID and
// an absent tag mean the same thing" (section 1): a zero first ID is none.
func TestInstanceIDLate(t *testing.T) {
	for _, first := range []struct {
		name string
		id   *[16]byte
	}{{"absent", nil}, {"zero", bbID(bbZero)}} {
		t.Run(first.name, func(t *testing.T) {
			var f1 int
			rep := bbOneConn(t, pcapgen.Ptr("orders-app"), first.id, func(s *pcapgen.Session) {
				bbMeta(s)
				s.Header.ClientID = nil
				s.Header.InstanceID = bbID(bbX)
				f1 = bbMeta(s)
				bbMeta(s)
			})
			bbExpect(t, rep, map[string]int{"instance-id-late": 2})
			f := bbFirst(t, rep, "instance-id-late")
			bbField(t, f, "severity", "error")
			bbField(t, f, "frame", f1)
			bbField(t, f, "observed", bbJ(bbX))
		})
	}
}

// SPEC section 1: "A zero UUID and an absent tag mean the same thing"; 3.7:
// "A zero header instance ID is no claim of KIP-1313 support"; 3.2: "For
// legacy clients this is a statistic, not a finding". A legacy client
// mixing zero and absent IDs and repeating its client ID gives nothing.
func TestInstanceIDLegacyZeroAbsentMix(t *testing.T) {
	rep := bbOneConn(t, pcapgen.Ptr("orders-app"), bbID(bbZero), func(s *pcapgen.Session) {
		bbAPIV(s, 0)
		s.Header.InstanceID = nil
		bbMeta(s)
		s.Header.InstanceID = bbID(bbZero)
		bbMeta(s)
		s.Header.InstanceID = nil
		bbMeta(s)
	})
	bbExpect(t, rep, map[string]int{})
}

// SPEC section 2: "The first request ... uses the v2 header": a v1 request
// first, then a v2 request without instance ID, then v2 with one, is late.
func TestInstanceIDV1FirstThenLate(t *testing.T) {
	rep := bbOneConn(t, pcapgen.Ptr("orders-app"), bbID(bbX), func(s *pcapgen.Session) {
		s.RoundTrip(pcapgen.Metadata(8, "orders"), pcapgen.MetadataResponse(8, "10.0.0.1", 9092)) // v1: no tags
		s.Header.ClientID = nil
		s.Header.InstanceID = nil
		bbMeta(s) // first v2: none
		s.Header.InstanceID = bbID(bbX)
		bbMeta(s) // late
	})
	bbExpect(t, rep, map[string]int{"instance-id-late": 1})
}

// SPEC 3.1 instance-id-malformed: "tag 0 present with size != 16"; 3.7: "A
// request whose tag 0 is malformed neither sets nor breaks the connection's
// instance-ID state." A malformed first v2 request, then X, X: only the
// malformed finding (the X request is the first that sets the state).
func TestInstanceIDMalformedFirstDoesNotSet(t *testing.T) {
	var f1 int
	rep := bbOneConn(t, pcapgen.Ptr("orders-app"), nil, func(s *pcapgen.Session) {
		s.Header.RawTags = []byte{1, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8}
		f1 = bbMeta(s)
		s.Header.RawTags = nil
		s.Header.ClientID = nil
		s.Header.InstanceID = bbID(bbX)
		bbMeta(s)
		bbMeta(s)
	})
	bbExpect(t, rep, map[string]int{"instance-id-malformed": 1})
	f := bbFirst(t, rep, "instance-id-malformed")
	bbField(t, f, "severity", "error")
	bbField(t, f, "frame", f1)
}

// SPEC 3.7: a malformed tag 0 "neither sets nor breaks" the state: X,
// malformed, X is only malformed; a later absent ID is still dropped (the
// state is still X).
func TestInstanceIDMalformedMiddleDoesNotBreak(t *testing.T) {
	rep := bbOneConn(t, pcapgen.Ptr("orders-app"), bbID(bbX), func(s *pcapgen.Session) {
		bbMeta(s)
		s.Header.ClientID = nil
		s.Header.RawTags = []byte{1, 0, 4, 1, 2, 3, 4}
		bbMeta(s)
		s.Header.RawTags = nil
		bbMeta(s)
		s.Header.InstanceID = nil
		bbMeta(s)
	})
	bbExpect(t, rep, map[string]int{"instance-id-malformed": 1, "instance-id-dropped": 1})
	bbField(t, bbFirst(t, rep, "instance-id-dropped"), "expected", bbJ(bbX))
}

// SPEC 3.1 instance-id-malformed: "duplicate tags, descending tags, or
// tagged-field bytes that overrun the header". One connection each.
func TestInstanceIDMalformedVariants(t *testing.T) {
	x := bbX[:]
	dup := append(append(append([]byte{2, 0, 16}, x...), 0, 16), x...)
	desc := append([]byte{2, 3, 1, 0xaa, 0, 16}, x...)
	for _, tc := range []struct {
		name string
		tags []byte
		raw  bool
	}{
		{"duplicate-tag0", dup, false},
		{"descending", desc, false},
		{"overrun", []byte{1, 0, 16, 1, 2, 3, 4, 5}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := pcapgen.New(pcapgen.Options{})
			cn := c.Conn(pcapgen.ConnOptions{})
			h := pcapgen.RequestHeader{APIKey: 3, APIVersion: 12, CorrelationID: 1, ClientID: pcapgen.Ptr("orders-app"), RawTags: tc.tags}
			if tc.raw {
				cn.Send(pcapgen.EncodeRequestRaw(h, nil)) // frame ends inside the tag
			} else {
				cn.Send(pcapgen.EncodeRequest(h, pcapgen.Metadata(12, "orders")))
				cn.Reply(pcapgen.EncodeResponse(1, 12, pcapgen.MetadataResponse(12, "10.0.0.1", 9092)))
			}
			cn.Close()
			rep := bbRun(t, c)
			if n := len(bbOf(rep, "instance-id-malformed")); n != 1 {
				t.Errorf("instance-id-malformed: %d findings, spec requires 1\n%s", n, rep.summary())
			}
			for _, r := range []string{"instance-id-dropped", "instance-id-changed", "instance-id-late"} {
				if n := len(bbOf(rep, r)); n != 0 {
					t.Errorf("%s: %d findings, want 0", r, n)
				}
			}
		})
	}
}

// SPEC section 1: "Unknown tags are skipped, never fatal." Tag 0 = X plus
// an unknown ascending tag 5 is well-formed and consistent with X.
func TestInstanceIDUnknownTagSkipped(t *testing.T) {
	rep := bbOneConn(t, pcapgen.Ptr("orders-app"), bbID(bbX), func(s *pcapgen.Session) {
		bbMeta(s)
		s.Header.ClientID = nil
		s.Header.RawTags = append(append([]byte{2, 0, 16}, bbX[:]...), 5, 3, 'a', 'b', 'c')
		bbMeta(s)
		s.Header.RawTags = nil
		bbMeta(s)
	})
	bbExpect(t, rep, map[string]int{})
}

// SPEC 3.1 instance-id-shared (warn): "one instance ID is used from two
// different client hosts"; once per instance ID (3.7), even with a third.
func TestInstanceIDSharedTwoHosts(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	var shows int
	for i := 1; i <= 3; i++ {
		cn := c.Conn(pcapgen.ConnOptions{Client: netip.MustParseAddrPort(fmt.Sprintf("10.1.0.%d:40001", i))})
		s := bbSession(cn, pcapgen.Ptr("orders-app"), bbID(bbX))
		if f := bbMeta(s); i == 2 {
			shows = f // the first request that shows the sharing
		}
		s.Header.ClientID = nil
		bbMeta(s)
		cn.Close()
	}
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"instance-id-shared": 1})
	f := bbFirst(t, rep, "instance-id-shared")
	bbField(t, f, "severity", "warn")
	bbField(t, f, "instance_id", bbJ(bbX))
	bbField(t, f, "frame", shows)
	// Section 5: one row per client instance with its client hosts and
	// connections.
	for _, in := range rep.Instances {
		if in["instance_id"] == bbJ(bbX) {
			if hosts, _ := in["client_hosts"].([]any); len(hosts) != 3 {
				t.Errorf("instance row client_hosts %v, want 3 hosts", in["client_hosts"])
			}
			bbField(t, in, "connections", 3)
		}
	}
}

// SPEC 3.1 instance-id-shared: "or with two different client IDs".
func TestInstanceIDSharedTwoClientIDs(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	for i, cid := range []string{"orders-app", "payments-app"} {
		cn := c.Conn(pcapgen.ConnOptions{Client: netip.MustParseAddrPort(fmt.Sprintf("10.1.0.1:%d", 40001+i))})
		s := bbSession(cn, pcapgen.Ptr(cid), bbID(bbX))
		bbMeta(s)
		s.Header.ClientID = nil
		bbMeta(s)
		cn.Close()
	}
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"instance-id-shared": 1})
}

// SPEC 3.1 instance-id-shared, negative: one process (one host, one client
// ID) on several connections, to several brokers, is not sharing.
func TestInstanceIDNotSharedSameProcess(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	for i := 0; i < 3; i++ {
		cn := c.Conn(pcapgen.ConnOptions{
			Client: netip.MustParseAddrPort(fmt.Sprintf("10.1.0.1:%d", 40001+i)),
			Broker: netip.MustParseAddrPort(fmt.Sprintf("10.0.0.%d:9092", 1+i%2)),
		})
		s := bbSession(cn, pcapgen.Ptr("orders-app"), bbID(bbX))
		bbMeta(s)
		s.Header.ClientID = nil
		bbMeta(s)
		cn.Close()
	}
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{})
}

// SPEC 3.1 reserved + changed: ONE_UUID first, later X: instance-id-changed
// (X differs from the first) and instance-id-reserved once.
func TestInstanceIDReservedThenChanged(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	one := pcapgen.OneUUID()
	s := bbSession(cn, pcapgen.Ptr("orders-app"), &one)
	bbMeta(s)
	s.Header.ClientID = nil
	bbMeta(s)
	s.Header.InstanceID = bbID(bbX)
	bbMeta(s)
	cn.Close()
	rep := bbRun(t, c)
	bbExpect(t, rep, map[string]int{"instance-id-reserved": 1, "instance-id-changed": 1})
}

// --------------------------------------------------------- tagged fields

// SPEC 1: "Tags must be strictly ascending ... Unknown tags are skipped,
// never fatal"; 3.1 instance-id-malformed: "tag 0 present with size != 16,
// duplicate tags, descending tags, or tagged-field bytes that overrun the
// header" (any tags, not only tag 0); 3.7 "A request whose tag 0 is
// malformed neither sets nor breaks the connection's instance-ID state".
// First X, then the request under test, then X again. Ascending unknown
// tags without tag 0 are well formed and carry no instance ID: dropped.
func TestInstanceIDMalformedTagVariants(t *testing.T) {
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
			f := bbMeta(s)
			s.Header.RawTags = nil
			bbMeta(s)
			cn.Close()
			rep := bbRunF(t, c)
			bbExpect(t, rep, tc.want)
			for r := range tc.want {
				bb7Sev(t, rep, r, "error", "full")
				bb7EqInts(t, r+" frame", bb7Frames(rep, r), []int{f})
			}
		})
	}
}
