package audit

import (
	"strings"
	"testing"

	"github.com/kwatch/kwatch/decode"
)

const (
	kProduce  decode.APIKey = 0
	kMetadata               = decode.KeyMetadata
	kSasl                   = decode.KeySASLHandshake
	kAPIVer                 = decode.KeyAPIVersions
	kOffDel                 = decode.KeyOffsetDelete
	kCGHB                   = decode.KeyConsumerGroupHeartbeat
	kGTS                    = decode.KeyGetTelemetrySubscriptions
	kPush                   = decode.KeyPushTelemetry
	kSGHB                   = decode.KeyShareGroupHeartbeat
	kStreamHB               = decode.KeyStreamsGroupHeartbeat
)

type ruleCase struct {
	name        string
	opts        Options
	run         func(s *sc)
	want        map[string]int
	wantSev     map[string]Severity // optional: severity of the first finding of a rule
	wantPartial map[string]bool     // optional: confidence of the first finding of a rule
}

// runCases runs each case with events as the decoder makes them (with a
// Slot per connection) and without.
func runCases(t *testing.T, cases []ruleCase) {
	t.Helper()
	for _, tc := range cases {
		for _, slots := range []bool{false, true} {
			name := tc.name
			if slots {
				name += "/slots"
			}
			t.Run(name, func(t *testing.T) { runCase(t, tc, slots) })
		}
	}
}

func runCase(t *testing.T, tc ruleCase, slots bool) {
	s := newSC(tc.opts)
	if slots {
		s.withSlots()
	}
	tc.run(s)
	rep := s.finish()
	sameJSON(t, rep)
	mustEqualCounts(t, counts(s.got), tc.want)
	mustEqualCounts(t, counts(rep.Findings), tc.want)
	for rule, sev := range tc.wantSev {
		if f := findRule(s.got, rule); f == nil || f.Severity != sev {
			t.Errorf("%s: severity %v, want %v", rule, f, sev)
		}
	}
	for rule, p := range tc.wantPartial {
		if f := findRule(s.got, rule); f == nil || (f.Confidence == ConfidencePartial) != p {
			t.Errorf("%s: confidence of %+v, want partial=%v", rule, f, p)
		}
	}
}

func TestInstanceIDRules(t *testing.T) {
	runCases(t, []ruleCase{
		{name: "dropped", run: func(s *sc) {
			s.req(connA, kAPIVer, 4, inst(idA))
			s.req(connA, kMetadata, 12)
			s.req(connA, kMetadata, 12)
		}, want: map[string]int{"instance-id-dropped": 2}},
		{name: "dropped twin: same ID kept", run: func(s *sc) {
			s.req(connA, kAPIVer, 4, inst(idA))
			s.req(connA, kMetadata, 12, inst(idA))
		}, want: map[string]int{}},
		{name: "zero ID is absent: dropped", run: func(s *sc) {
			s.req(connA, kAPIVer, 4, inst(idA))
			s.req(connA, kMetadata, 12, inst(decode.UUID{}))
		}, want: map[string]int{"instance-id-dropped": 1}},
		{name: "v1 header is exempt", run: func(s *sc) {
			s.req(connA, kAPIVer, 4, inst(idA))
			s.req(connA, kSasl, 1, hv(1))
			s.req(connA, kMetadata, 12, inst(idA))
		}, want: map[string]int{}},
		{name: "changed", run: func(s *sc) {
			s.req(connA, kAPIVer, 4, inst(idA))
			s.req(connA, kMetadata, 12, inst(idB))
		}, want: map[string]int{"instance-id-changed": 1}},
		{name: "late", run: func(s *sc) {
			s.req(connA, kAPIVer, 4)
			s.req(connA, kMetadata, 12, inst(idA))
		}, want: map[string]int{"instance-id-late": 1}},
		{name: "late twin: none throughout", run: func(s *sc) {
			s.req(connA, kAPIVer, 4)
			s.req(connA, kMetadata, 12, inst(decode.UUID{}))
		}, want: map[string]int{}},
		{name: "first v1 then v2 with ID is not late", run: func(s *sc) {
			s.req(connA, kSasl, 1, hv(1))
			s.req(connA, kMetadata, 12, inst(idA))
		}, want: map[string]int{}},
		{name: "malformed", run: func(s *sc) {
			s.req(connA, kAPIVer, 4, tagProblem(decode.TagBadSize))
		}, want: map[string]int{"instance-id-malformed": 1}},
		{name: "malformed twin: well formed", run: func(s *sc) {
			s.req(connA, kAPIVer, 4, inst(idA))
		}, want: map[string]int{}},
		{name: "malformed first neither sets nor breaks", run: func(s *sc) {
			s.req(connA, kAPIVer, 4, tagProblem(decode.TagDuplicate))
			s.req(connA, kMetadata, 12, inst(idA))
			s.req(connA, kMetadata, 12, inst(idA))
		}, want: map[string]int{"instance-id-malformed": 1}},
		{name: "malformed between same IDs breaks nothing", run: func(s *sc) {
			s.req(connA, kAPIVer, 4, inst(idA))
			s.req(connA, kMetadata, 12, tagProblem(decode.TagOverrun))
			s.req(connA, kMetadata, 12, inst(idA))
		}, want: map[string]int{"instance-id-malformed": 1}},
		{name: "reserved once per ID", run: func(s *sc) {
			s.req(connA, kAPIVer, 4, inst(oneUUID))
			s.req(connA, kMetadata, 12, inst(oneUUID))
			s.req(connA2, kMetadata, 12, inst(oneUUID))
		}, want: map[string]int{"instance-id-reserved": 1}},
		{name: "shared: two hosts", run: func(s *sc) {
			s.req(connA, kAPIVer, 4, inst(idA))
			s.req(connB, kAPIVer, 4, inst(idA))
			s.req(connC, kAPIVer, 4, inst(idA))
		}, want: map[string]int{"instance-id-shared": 1}},
		{name: "shared twin: same host, two ports", run: func(s *sc) {
			s.req(connA, kAPIVer, 4, inst(idA))
			s.req(connA2, kAPIVer, 4, inst(idA))
		}, want: map[string]int{}},
		{name: "shared: two client IDs", run: func(s *sc) {
			s.req(connA, kAPIVer, 4, inst(idA), cid("orders"))
			s.req(connA2, kAPIVer, 4, inst(idA), cid("billing"))
		}, want: map[string]int{"instance-id-shared": 1}},
	})
}

func TestClientIDRules(t *testing.T) {
	runCases(t, []ruleCase{
		{name: "changed once per offending request", run: func(s *sc) {
			s.req(connA, kAPIVer, 4, cid("a"))
			s.req(connA, kMetadata, 12, cid("b"))
			s.req(connA, kMetadata, 12, cid("b"))
			s.req(connA, kMetadata, 12, nullCID())
		}, want: map[string]int{"client-id-changed": 2}},
		{name: "changed twin: same client ID", run: func(s *sc) {
			s.req(connA, kAPIVer, 4, cid("a"))
			s.req(connA, kMetadata, 12, cid("a"))
		}, want: map[string]int{}},
		{name: "later empty is not null: changed", run: func(s *sc) {
			s.req(connA, kAPIVer, 4, cid("a"))
			s.req(connA, kMetadata, 12, cid(""))
			s.req(connA, kMetadata, 12, nullCID())
		}, want: map[string]int{"client-id-changed": 1}},
		{name: "null first then set: missing-first only", run: func(s *sc) {
			s.req(connA, kAPIVer, 4, nullCID())
			s.req(connA, kMetadata, 12, cid("a"))
			s.req(connA, kMetadata, 12, cid("a"))
			s.req(connA, kMetadata, 12, cid("b"))
		}, want: map[string]int{"client-id-missing-first": 3}},
		{name: "empty first then set", run: func(s *sc) {
			s.req(connA, kAPIVer, 4, cid(""))
			s.req(connA, kMetadata, 12, cid("a"))
		}, want: map[string]int{"client-id-missing-first": 1}},
		{name: "missing-first twin: null throughout", run: func(s *sc) {
			s.req(connA, kAPIVer, 4, nullCID())
			s.req(connA, kMetadata, 12, nullCID())
		}, want: map[string]int{}},
		{name: "v0 header has no client ID", run: func(s *sc) {
			s.req(connA, 7, 0, hv(0), nullCID())
			s.req(connA, kMetadata, 12, cid("a"))
		}, want: map[string]int{}},
		{name: "repeated at connection end", run: func(s *sc) {
			s.req(connA, kAPIVer, 4, inst(idA), cid("app"))
			s.req(connA, kMetadata, 12, inst(idA), cid("app"))
			s.req(connA, kMetadata, 12, inst(idA), cid("app"))
			s.end(connA)
		}, want: map[string]int{"client-id-repeated": 1}},
		{name: "repeated twin: null after first", run: func(s *sc) {
			s.req(connA, kAPIVer, 4, inst(idA), cid("app"))
			s.req(connA, kMetadata, 12, inst(idA), nullCID())
			s.end(connA)
		}, want: map[string]int{}},
		{name: "repeated: legacy client is a statistic", run: func(s *sc) {
			s.req(connA, kAPIVer, 4, cid("app"))
			s.req(connA, kMetadata, 12, cid("app"))
		}, want: map[string]int{}},
		{name: "repeated at Finish for open connection", run: func(s *sc) {
			s.req(connA, kAPIVer, 4, inst(idA), cid("app"))
			s.req(connA, kMetadata, 12, inst(idA), cid("app"))
		}, want: map[string]int{"client-id-repeated": 1}},
	})
}

func TestClientIDRepeatedDetail(t *testing.T) {
	s := newSC(Options{})
	s.req(connA, kAPIVer, 4, inst(idA), cid("orders"))
	s.req(connA, kMetadata, 12, inst(idA), cid("orders"))
	s.req(connA, kMetadata, 12, inst(idA), cid("orders"))
	s.end(connA)
	rep := s.finish()
	f := findRule(rep.Findings, "client-id-repeated")
	if f == nil || f.Observed != "2 requests, 12 bytes" || f.Frame != 4 || f.APIKey != -1 {
		t.Fatalf("got %+v", f)
	}
	if rep.Totals.ClientIDRepeatBytes != 12 || rep.Totals.ClientIDRepeats != 2 {
		t.Errorf("totals %+v", rep.Totals)
	}
}

func TestTelemetryRules(t *testing.T) {
	runCases(t, []ruleCase{
		{name: "legacy flow adopted", run: func(s *sc) {
			c := s.req(connA, kGTS, 0, tel(decode.UUID{}))
			s.resp(connA, kGTS, 0, c, errCode(0), tel(idB))
			s.req(connA, kGTS, 0, tel(idB))
			s.req(connA, kPush, 0, tel(idB))
		}, want: map[string]int{}},
		{name: "not adopted", run: func(s *sc) {
			c := s.req(connA, kGTS, 0, tel(decode.UUID{}))
			s.resp(connA, kGTS, 0, c, errCode(0), tel(idB))
			s.req(connA, kGTS, 0, tel(idA))
			s.req(connA, kPush, 0, tel(idA))
		}, want: map[string]int{"telemetry-id-not-adopted": 2}},
		{name: "asked again after B on the same connection: not adopted", run: func(s *sc) {
			c := s.req(connA, kGTS, 0, tel(decode.UUID{}))
			s.resp(connA, kGTS, 0, c, errCode(0), tel(idB))
			s.req(connA, kGTS, 0, tel(decode.UUID{}))
		}, want: map[string]int{"telemetry-id-not-adopted": 1}},
		{name: "asked again on a new connection (maybe a restarted process): nothing", run: func(s *sc) {
			c := s.req(connA, kGTS, 0, cid("app"), tel(decode.UUID{}))
			s.resp(connA, kGTS, 0, c, errCode(0), tel(idB))
			s.end(connA)
			s.req(connA2, kGTS, 0, cid("app"), tel(decode.UUID{}))
		}, want: map[string]int{}},
		{name: "requested with header", run: func(s *sc) {
			c := s.req(connA, kGTS, 0, inst(idA), tel(decode.UUID{}))
			s.resp(connA, kGTS, 0, c, errCode(42))
		}, want: map[string]int{"telemetry-id-requested-with-header": 1}},
		{name: "requested with header, broker accepts", run: func(s *sc) {
			c := s.req(connA, kGTS, 0, inst(idA), tel(decode.UUID{}))
			s.resp(connA, kGTS, 0, c, errCode(0), tel(idB))
		}, want: map[string]int{"telemetry-id-requested-with-header": 1, "broker-accepted-invalid": 1}},
		{name: "aligned", run: func(s *sc) {
			c := s.req(connA, kGTS, 0, inst(idA), tel(idA))
			s.resp(connA, kGTS, 0, c, errCode(0), tel(decode.UUID{}))
			s.req(connA, kPush, 0, inst(idA), tel(idA))
		}, want: map[string]int{}},
		{name: "mismatch get: row 5 only", run: func(s *sc) {
			s.req(connA, kGTS, 0, inst(idA), tel(idB))
		}, want: map[string]int{"telemetry-id-mismatch": 1}},
		{name: "mismatch push", run: func(s *sc) {
			s.req(connA, kPush, 0, inst(idA), tel(idB))
		}, want: map[string]int{"telemetry-id-mismatch": 1}},
		{name: "zero push only", run: func(s *sc) {
			s.req(connA, kPush, 0, inst(idA), tel(decode.UUID{}))
		}, want: map[string]int{"telemetry-id-zero-push": 1}},
		{name: "zero push twin", run: func(s *sc) {
			s.req(connA, kPush, 0, tel(idB))
		}, want: map[string]int{}},
		{name: "broker telemetry ID missing", run: func(s *sc) {
			c := s.req(connA, kGTS, 0, tel(decode.UUID{}))
			s.resp(connA, kGTS, 0, c, errCode(0), tel(decode.UUID{}))
		}, want: map[string]int{"broker-telemetry-id-missing": 1}},
		{name: "broker telemetry echo", run: func(s *sc) {
			c := s.req(connA, kGTS, 0, tel(idA))
			s.resp(connA, kGTS, 0, c, errCode(0), tel(idA))
		}, want: map[string]int{"broker-telemetry-id-echo": 1}},
		{name: "broker telemetry echo twin", run: func(s *sc) {
			c := s.req(connA, kGTS, 0, tel(idA))
			s.resp(connA, kGTS, 0, c, errCode(0), tel(decode.UUID{}))
		}, want: map[string]int{}},
	})
}

func TestMemberRules(t *testing.T) {
	jA, jB := JavaString(v4A), JavaString(v4B)
	runCases(t, []ruleCase{
		{name: "empty join at required version", run: func(s *sc) {
			s.req(connA, kCGHB, 1, hb("g", "", 0))
		}, want: map[string]int{"member-id-empty": 1}, wantSev: map[string]Severity{"member-id-empty": SeverityError}},
		{name: "empty join below required version is info", run: func(s *sc) {
			s.req(connA, kCGHB, 0, hb("g", "", 0))
		}, want: map[string]int{"member-id-empty": 1}, wantSev: map[string]Severity{"member-id-empty": SeverityInfo}},
		{name: "required from v2 by profile setting", opts: Options{MemberIDRequiredFrom: 2}, run: func(s *sc) {
			s.req(connA, kCGHB, 1, hb("g", "", 0))
		}, want: map[string]int{"member-id-empty": 1}, wantSev: map[string]Severity{"member-id-empty": SeverityInfo}},
		{name: "share group requires it from v0", run: func(s *sc) {
			s.req(connA, kSGHB, 0, hb("g", "", 0))
		}, want: map[string]int{"member-id-empty": 1}, wantSev: map[string]Severity{"member-id-empty": SeverityError}},
		{name: "empty member ID with instance ID: only member-id-empty", run: func(s *sc) {
			s.req(connA, kCGHB, 1, inst(v4A), hb("g", "", 0))
		}, want: map[string]int{"member-id-empty": 1}},
		{name: "empty twin: member ID set", run: func(s *sc) {
			s.req(connA, kCGHB, 1, hb("g", jA, 0))
		}, want: map[string]int{}},
		{name: "leave without member ID", run: func(s *sc) {
			s.req(connA, kCGHB, 1, hb("g", "", -1))
			s.req(connA, kStreamHB, 0, hb("g", "", -2))
		}, want: map[string]int{"leave-without-member-id": 2}},
		{name: "changed after rejoin", run: func(s *sc) {
			c := s.req(connA, kCGHB, 1, hb("g", jA, 0))
			s.resp(connA, kCGHB, 1, c, errCode(0), respMember(jA))
			s.req(connA, kCGHB, 1, hb("g", jA, -1))
			s.req(connA, kCGHB, 1, hb("g", jB, 0))
		}, want: map[string]int{"member-id-changed": 1}},
		{name: "changed twin: same ID on rejoin", run: func(s *sc) {
			c := s.req(connA, kCGHB, 1, hb("g", jA, 0))
			s.resp(connA, kCGHB, 1, c, errCode(0), respMember(jA))
			s.req(connA, kCGHB, 1, hb("g", jA, -1))
			s.req(connA, kCGHB, 1, hb("g", jA, 0))
		}, want: map[string]int{}},
		{name: "ghost, not also changed", run: func(s *sc) {
			s.req(connA, kCGHB, 1, hb("g", jA, 0))
			s.req(connA, kCGHB, 1, hb("g", jB, 0))
		}, want: map[string]int{"ghost-member": 1}},
		{name: "ghost after an error response", run: func(s *sc) {
			c := s.req(connA, kCGHB, 1, hb("g", jA, 0))
			s.resp(connA, kCGHB, 1, c, errCode(15))
			s.req(connA, kCGHB, 1, hb("g", jB, 0))
		}, want: map[string]int{"ghost-member": 1}},
		{name: "ghost twin: retry with the same ID", run: func(s *sc) {
			s.req(connA, kCGHB, 1, hb("g", jA, 0))
			s.req(connA, kCGHB, 1, hb("g", jA, 0))
		}, want: map[string]int{}},
		{name: "ghost across connections of one instance", run: func(s *sc) {
			s.req(connA, kCGHB, 1, inst(v4A), hb("g", jA, 0))
			s.end(connA)
			s.req(connA2, kCGHB, 1, inst(v4A), hb("g", jB, 0))
		}, want: map[string]int{"ghost-member": 1, "member-id-misaligned": 1}},
		{name: "changed across connections of one instance", run: func(s *sc) {
			c := s.req(connA, kCGHB, 1, inst(v4A), hb("g", jA, 0))
			s.resp(connA, kCGHB, 1, c, errCode(0), respMember(jA))
			s.end(connA)
			s.req(connA2, kCGHB, 1, inst(v4A), hb("g", jA, 0))
		}, want: map[string]int{}},
		{name: "broker-assigned ID is not judged", run: func(s *sc) {
			c := s.req(connA, kCGHB, 0, hb("g", "", 0))
			s.resp(connA, kCGHB, 0, c, errCode(0), respMember("broker-made-id"))
			s.req(connA, kCGHB, 0, hb("g", "broker-made-id", 1))
		}, want: map[string]int{"member-id-empty": 1}},
		{name: "broker generated at required version", run: func(s *sc) {
			c := s.req(connA, kCGHB, 1, hb("g", "", 0))
			s.resp(connA, kCGHB, 1, c, errCode(0), respMember(jB))
		}, want: map[string]int{"member-id-empty": 1, "broker-generated-member-id": 1, "broker-accepted-invalid": 1}},
		{name: "broker generated twin: rejected", run: func(s *sc) {
			c := s.req(connA, kCGHB, 1, hb("g", "", 0))
			s.resp(connA, kCGHB, 1, c, errCode(42))
		}, want: map[string]int{"member-id-empty": 1}},
		{name: "collision", run: func(s *sc) {
			s.req(connA, kCGHB, 1, hb("g", jA, 0))
			s.req(connB, kCGHB, 1, hb("g", jA, 0))
			s.req(connB, kCGHB, 1, hb("g", jA, 1))
			s.req(connC, kCGHB, 1, hb("g", jA, 0))
		}, want: map[string]int{"member-id-collision": 2}},
		{name: "collision twin: first connection closed", run: func(s *sc) {
			s.req(connA, kCGHB, 1, hb("g", jA, 0))
			s.end(connA)
			s.req(connB, kCGHB, 1, hb("g", jA, 0))
		}, want: map[string]int{}},
		{name: "collision twin: other group", run: func(s *sc) {
			s.req(connA, kCGHB, 1, hb("g", jA, 0))
			s.req(connB, kCGHB, 1, hb("h", jA, 0))
		}, want: map[string]int{}},
		{name: "collision by instance IDs", run: func(s *sc) {
			s.req(connA, kCGHB, 1, inst(idA), hb("g", jA, 0))
			s.req(connA2, kCGHB, 1, inst(idB), hb("g", jA, 0))
		}, want: map[string]int{"member-id-collision": 1, "member-id-misaligned": 2}},
		{name: "not a UUID, once per member ID", run: func(s *sc) {
			s.req(connA, kCGHB, 1, hb("g", "consumer-1-abc", 0))
			s.req(connA, kCGHB, 1, hb("g", "consumer-1-abc", 1))
		}, want: map[string]int{"member-id-not-uuid": 1}},
		{name: "padded base64 encoding is info", run: func(s *sc) {
			s.req(connA, kCGHB, 1, hb("g", padded(v4A), 0))
		}, want: map[string]int{"member-id-encoding": 1}, wantSev: map[string]Severity{"member-id-encoding": SeverityInfo}},
		{name: "standard base64 with / is warn", run: func(s *sc) {
			s.req(connA, kCGHB, 1, hb("g", stdRaw(v4FF), 0))
		}, want: map[string]int{"member-id-encoding": 1}, wantSev: map[string]Severity{"member-id-encoding": SeverityWarn}},
		{name: "hex encoding", run: func(s *sc) {
			s.req(connA, kCGHB, 1, hb("g", HexString(v4A), 0))
		}, want: map[string]int{"member-id-encoding": 1}},
		{name: "not v4", run: func(s *sc) {
			s.req(connA, kCGHB, 1, hb("g", JavaString(v1U), 0))
		}, want: map[string]int{"member-id-not-v4": 1}},
		{name: "misaligned", run: func(s *sc) {
			s.req(connA, kCGHB, 1, inst(v4A), hb("g", jB, 0))
		}, want: map[string]int{"member-id-misaligned": 1}},
		{name: "misaligned twin: aligned", run: func(s *sc) {
			s.req(connA, kCGHB, 1, inst(v4A), hb("g", jA, 0))
		}, want: map[string]int{}},
		{name: "misaligned needs a header instance ID", run: func(s *sc) {
			s.req(connA, kCGHB, 1, hb("g", jB, 0))
		}, want: map[string]int{}},
		{name: "alignment encoding, never misaligned", run: func(s *sc) {
			s.req(connA, kCGHB, 1, inst(v4A), hb("g", padded(v4A), 0))
		}, want: map[string]int{"member-id-alignment-encoding": 1, "member-id-encoding": 1}},
	})
}

func TestBrokerAcceptedInvalid(t *testing.T) {
	runCases(t, []ruleCase{
		{name: "dropped on ApiVersions answered NONE", run: func(s *sc) {
			s.req(connA, kMetadata, 12, inst(idA))
			c := s.req(connA, kAPIVer, 4)
			s.resp(connA, kAPIVer, 4, c, errCode(0))
		}, want: map[string]int{"instance-id-dropped": 1, "broker-accepted-invalid": 1}},
		{name: "twin: answered INVALID_REQUEST", run: func(s *sc) {
			s.req(connA, kMetadata, 12, inst(idA))
			c := s.req(connA, kAPIVer, 4)
			s.resp(connA, kAPIVer, 4, c, errCode(42))
		}, want: map[string]int{"instance-id-dropped": 1}},
		{name: "undecoded response is not judged", run: func(s *sc) {
			s.req(connA, kMetadata, 12, inst(idA))
			c := s.req(connA, kProduce, 9)
			s.resp(connA, kProduce, 9, c)
		}, want: map[string]int{"instance-id-dropped": 1}},
	})
}

func TestBrokerAcceptedInvalidKIP(t *testing.T) {
	s := newSC(Options{})
	c := s.req(connA, kCGHB, 1, hb("g", "", 0))
	s.resp(connA, kCGHB, 1, c, errCode(0))
	f := findRule(s.got, "broker-accepted-invalid")
	// The finding names the request's packet (frame 1), not the answer's.
	if f == nil || f.KIP != "KIP-1082" || f.Frame != 1 || !strings.Contains(f.Message, "answered at frame 2") {
		t.Fatalf("got %+v", f)
	}
	if req := findRule(s.got, "member-id-empty"); req == nil || !f.Time.Equal(req.Time) {
		t.Errorf("broker-accepted-invalid time %v, want the request's %+v", f.Time, req)
	}
}

func TestConfidence(t *testing.T) {
	runCases(t, []ruleCase{
		{name: "mid-stream: first-dependent rule is partial", run: func(s *sc) {
			s.start(connA, false)
			s.req(connA, kAPIVer, 4, inst(idA), notFromStart())
			s.req(connA, kMetadata, 12, inst(idB), notFromStart())
			s.req(connA, kMetadata, 12, tagProblem(decode.TagBadSize), notFromStart())
		}, want: map[string]int{"instance-id-changed": 1, "instance-id-malformed": 1},
			wantPartial: map[string]bool{"instance-id-changed": true, "instance-id-malformed": false}},
		{name: "from start: full", run: func(s *sc) {
			s.start(connA, true)
			s.req(connA, kAPIVer, 4, inst(idA))
			s.req(connA, kMetadata, 12, inst(idB))
		}, want: map[string]int{"instance-id-changed": 1}, wantPartial: map[string]bool{"instance-id-changed": false}},
		{name: "after a gap: partial", run: func(s *sc) {
			s.start(connA, true)
			s.req(connA, kAPIVer, 4, inst(idA))
			s.cover(connA, decode.StreamGap)
			s.req(connA, kMetadata, 12, tagProblem(decode.TagBadSize))
		}, want: map[string]int{"instance-id-malformed": 1}, wantPartial: map[string]bool{"instance-id-malformed": true}},
		{name: "partial event", run: func(s *sc) {
			s.req(connA, kMetadata, 12, tagProblem(decode.TagBadSize), partialEv())
		}, want: map[string]int{"instance-id-malformed": 1}, wantPartial: map[string]bool{"instance-id-malformed": true}},
	})
}

func TestAcceptedProfile(t *testing.T) {
	acc := Options{Profile: ProfileAccepted2026}
	runCases(t, []ruleCase{
		{name: "missing first", opts: acc, run: func(s *sc) {
			s.start(connA, true)
			s.req(connA, kOffDel, 1)
			s.req(connA, kOffDel, 1)
		}, want: map[string]int{"instance-id-missing-first": 1}},
		{name: "missing first twin: sent", opts: acc, run: func(s *sc) {
			s.start(connA, true)
			s.req(connA, kOffDel, 1, inst(idA))
			s.req(connA, kOffDel, 1)
		}, want: map[string]int{}},
		{name: "repeated once per connection", opts: acc, run: func(s *sc) {
			s.start(connA, true)
			s.req(connA, kOffDel, 1, inst(idA), nullCID())
			s.req(connA, kOffDel, 1, inst(idA), nullCID())
			s.req(connA, kOffDel, 1, inst(idA), nullCID())
		}, want: map[string]int{"instance-id-repeated": 1}},
		{name: "changed still applies", opts: acc, run: func(s *sc) {
			s.start(connA, true)
			s.req(connA, kOffDel, 1, inst(idA), nullCID())
			s.req(connA, kOffDel, 1, inst(idB), nullCID())
		}, want: map[string]int{"instance-id-changed": 1}},
		{name: "dropped and late are off", opts: acc, run: func(s *sc) {
			s.start(connA, true)
			s.req(connA, kMetadata, 12, inst(idA), nullCID())
			s.req(connA, kMetadata, 12, nullCID())
			s.req(connA2, kMetadata, 12, nullCID())
			s.req(connA2, kMetadata, 12, inst(idA), nullCID())
		}, want: map[string]int{}},
		{name: "identity unobservable mid-stream", opts: acc, run: func(s *sc) {
			s.start(connA, false)
			s.req(connA, kOffDel, 1, notFromStart())
		}, want: map[string]int{}},
		{name: "seed profile: OffsetDelete v1 is plain v2", run: func(s *sc) {
			s.req(connA, kOffDel, 1)
			s.req(connA, kOffDel, 1, inst(idA))
		}, want: map[string]int{"instance-id-late": 1}},
	})
}

func TestUnobservableCounted(t *testing.T) {
	s := newSC(Options{Profile: ProfileAccepted2026})
	s.start(connA, false)
	s.req(connA, kOffDel, 1, notFromStart())
	s.req(connA, kOffDel, 1, inst(idA), notFromStart())
	s.req(connA, kOffDel, 1, inst(idA), notFromStart())
	rep := s.finish()
	if rep.Totals.UnobservableConnections != 1 || rep.Totals.RequestsByHeaderVersion["v3"] != 3 {
		t.Errorf("totals %+v", rep.Totals)
	}
	f := findRule(rep.Findings, "instance-id-repeated")
	if f == nil || f.Confidence != ConfidencePartial || counts(rep.Findings)["instance-id-missing-first"] != 0 {
		t.Errorf("findings %+v", rep.Findings)
	}
}

func TestOnFindingEventOrder(t *testing.T) {
	s := newSC(Options{})
	s.req(connA, kAPIVer, 4, inst(idA), cid("a"))
	s.req(connA, kMetadata, 12, inst(idB), cid("b")) // changed (3.1) and client-id-changed (3.2): table order
	s.req(connA, kMetadata, 12, tagProblem(decode.TagDescending))
	got := []string{}
	for _, f := range s.got {
		got = append(got, f.Rule)
	}
	want := []string{"instance-id-changed", "client-id-changed", "instance-id-malformed"}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}
