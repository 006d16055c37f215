package audit

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kwatch/kwatch/decode"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

func TestFindingJSONShape(t *testing.T) {
	f := Finding{
		Time: time.Date(2026, 11, 29, 16, 49, 25, 123456000, time.UTC), Rule: "instance-id-changed",
		Severity: SeverityError, KIP: "KIP-1313", Frame: 1234, Conn: connA, API: "Metadata", APIKey: 3, APIVersion: 12,
		CorrelationID: 7, ClientID: "orders-app", InstanceID: idA, Expected: JavaString(idA), Observed: JavaString(idB),
		Message: "instance ID changed mid-connection; a conforming broker rejects this request with INVALID_REQUEST",
	}
	var b bytes.Buffer
	if err := WriteFindingJSON(&b, &f); err != nil {
		t.Fatal(err)
	}
	want := `{"time":"2026-11-29T16:49:25.123456Z","rule":"instance-id-changed","severity":"error",` +
		`"kip":"KIP-1313","confidence":"full","frame":1234,` +
		`"conn":{"client":"10.0.0.5:53122","broker":"10.0.0.9:9092"},` +
		`"api":"Metadata","api_key":3,"api_version":12,"correlation_id":7,` +
		`"client_id":"orders-app","instance_id":"AAECAwQFBgcICQoLDA0ODw",` +
		`"expected":"AAECAwQFBgcICQoLDA0ODw","observed":"Dw4NDAsKCQgHBgUEAwIBAA",` +
		`"message":"instance ID changed mid-connection; a conforming broker rejects this request with INVALID_REQUEST"}` + "\n"
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
	// A whole-second time still has six fractional digits; no client ID:
	// null (as in dump); no instance ID: omitted (as in dump).
	f.Time, f.ClientID, f.InstanceID = time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600)), "", decode.UUID{}
	out, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	if !strings.Contains(s, `"time":"2026-01-02T02:04:05.000000Z"`) || !strings.Contains(s, `"client_id":null`) || strings.Contains(s, "instance_id") {
		t.Errorf("got %s", s)
	}
}

func TestIDEncodings(t *testing.T) {
	tests := []struct {
		name string
		in   string
		enc  encoding
		want decode.UUID
	}{
		{name: "java", in: JavaString(v4A), enc: encJava, want: v4A},
		{name: "padded url", in: padded(v4A), enc: encURLPadded, want: v4A},
		{name: "std raw", in: stdRaw(v4FF), enc: encStd, want: v4FF},
		{name: "std padded", in: stdRaw(v4FF) + "==", enc: encStdPadded, want: v4FF},
		{name: "hex dashed", in: HexString(v4A), enc: encHexDashed, want: v4A},
		{name: "hex dashed upper", in: strings.ToUpper(HexString(v4A)), enc: encHexDashed, want: v4A},
		{name: "hex", in: strings.ReplaceAll(HexString(v4A), "-", ""), enc: encHex, want: v4A},
		{name: "not uuid", in: "consumer-1", enc: encNone},
		{name: "22 chars bad trailing bits", in: JavaString(v4A)[:21] + "B", enc: encNone},
		{name: "36 chars no dashes", in: strings.Repeat("a", 36), enc: encNone},
		{name: "mixed alphabets", in: "-" + stdRaw(v4FF)[1:], enc: encNone},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			enc, u := decodeMemberID(tc.in)
			if enc != tc.enc || (enc != encNone && u != tc.want) {
				t.Errorf("decodeMemberID(%q) = %v %x, want %v %x", tc.in, enc, u, tc.enc, tc.want)
			}
		})
	}
	if JavaString(idA) != "AAECAwQFBgcICQoLDA0ODw" || HexString(idA) != "00010203-0405-0607-0809-0a0b0c0d0e0f" {
		t.Error("UUID string forms")
	}
	if !isJavaString(JavaString(v4B), v4B) || isJavaString(padded(v4B), v4B) {
		t.Error("isJavaString")
	}
}

func TestRuleTable(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Rules() {
		if r.ID == "" || r.Summary == "" || r.Explanation == "" || r.KIP == "" || r.Severity == 0 || len(r.Profiles) == 0 {
			t.Errorf("incomplete rule %+v", r)
		}
		if seen[r.ID] {
			t.Errorf("duplicate %s", r.ID)
		}
		seen[r.ID] = true
		if got, ok := LookupRule(r.ID); !ok || got.ID != r.ID {
			t.Errorf("LookupRule(%s)", r.ID)
		}
	}
	if len(seen) != 29 {
		t.Errorf("%d rules", len(seen))
	}
	if _, ok := LookupRule("nope"); ok {
		t.Error("LookupRule(nope)")
	}
	for _, s := range []string{"info", "warn", "error"} {
		if v, err := ParseSeverity(s); err != nil || v.String() != s {
			t.Errorf("ParseSeverity(%s)", s)
		}
	}
	if _, err := ParseSeverity("never"); err == nil {
		t.Error("ParseSeverity(never) must fail")
	}
	if p, err := ParseProfile("accepted-2026"); err != nil || p != ProfileAccepted2026 {
		t.Error("ParseProfile")
	}
	if _, err := ParseProfile("x"); err == nil {
		t.Error("ParseProfile(x) must fail")
	}
}

// goldenScenario exercises rows, legacy clients, coverage and findings.
func goldenScenario() *sc { return goldenEvents(newSC(Options{})) }

// goldenEvents plays goldenScenario's events into s.
func goldenEvents(s *sc) *sc {
	s.a.AddCapture(120, 64000, 0)
	jA := JavaString(v4A)
	s.start(connA, true)
	s.req(connA, kAPIVer, 4, inst(v4A), cid("orders-app"), software("apache-kafka-java", "4.2.0"))
	s.req(connA, kMetadata, 12, inst(v4A), cid("orders-app"))
	c := s.req(connA, kCGHB, 1, inst(v4A), nullCID(), hb("orders", jA, 0))
	s.resp(connA, kCGHB, 1, c, errCode(0), respMember(jA))
	s.req(connA, kMetadata, 12, inst(idB), nullCID())
	s.req(connA, kPush, 0, inst(v4A), nullCID(), tel(v4A))
	s.end(connA)
	s.start(connB, false)
	s.cover(connB, decode.MidstreamJoin)
	s.req(connB, kAPIVer, 3, cid("legacy"), notFromStart())
	s.req(connB, kMetadata, 12, cid("other"), notFromStart())
	c = s.req(connB, kCGHB, 1, cid("legacy"), hb("orders", "", 0), notFromStart())
	s.resp(connB, kCGHB, 1, c, errCode(0), respMember("broker-id"))
	s.cover(connB, decode.StreamGap)
	s.req(connB, kCGHB, 1, cid("legacy"), hb("orders", "broker-id", 1))
	return s
}

func TestGolden(t *testing.T) {
	rep := goldenScenario().finish()
	var text, js bytes.Buffer
	if err := rep.WriteText(&text, false); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	for _, g := range []struct {
		file string
		got  []byte
	}{{"report.txt", text.Bytes()}, {"report.json", js.Bytes()}} {
		path := filepath.Join("testdata", g.file)
		if *update {
			if err := os.WriteFile(path, g.got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -update)", err)
		}
		if !bytes.Equal(want, g.got) {
			t.Errorf("%s differs from golden file:\n%s", g.file, g.got)
		}
	}
	if strings.Contains(text.String(), "\x1b[") {
		t.Error("colour codes with color off")
	}
	var colored bytes.Buffer
	_ = rep.WriteText(&colored, true)
	if !strings.Contains(colored.String(), ansiRed) {
		t.Error("no colour with color on")
	}
	if s, ok := rep.MaxSeverity(); !ok || s != SeverityError {
		t.Errorf("MaxSeverity = %v %v", s, ok)
	}
	var back map[string]any
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatalf("report JSON does not parse: %v", err)
	}
}

func TestReportTotals(t *testing.T) {
	rep := goldenScenario().finish()
	tt := rep.Totals
	if tt.Packets != 120 || tt.Connections != 2 || tt.KafkaConnections != 2 || tt.Responses != 2 ||
		tt.Requests != 9 || tt.RequestsByHeaderVersion["v2"] != 9 {
		t.Errorf("totals %+v", tt)
	}
	if tt.Coverage["midstream-join"] != 1 || tt.Coverage["stream-gap"] != 1 || len(tt.Coverage) != len(decode.Coverages()) {
		t.Errorf("coverage %v", tt.Coverage)
	}
	var inst, legacy int
	for _, in := range rep.Instances {
		if in.Legacy {
			legacy++
		} else {
			inst++
		}
	}
	// The ID the first connection changes to is in its finding, not a
	// client row of its own.
	if inst != 1 || legacy != 1 {
		t.Errorf("rows: %d instances, %d legacy", inst, legacy)
	}
	in := rep.Instances[0]
	if in.InstanceID != JavaString(v4A) || in.SoftwareName != "apache-kafka-java" || in.TelemetryID != JavaString(v4A) ||
		len(in.MemberIDs["orders"]) != 1 || in.Findings["instance-id-changed"] != 1 {
		t.Errorf("row %+v", in)
	}
	empty := New(Options{}).Finish(t0)
	if _, ok := empty.MaxSeverity(); ok {
		t.Error("MaxSeverity on empty report")
	}
}

func TestFindingOrder(t *testing.T) {
	rep := goldenScenario().finish()
	for i := 1; i < len(rep.Findings); i++ {
		p, f := rep.Findings[i-1], rep.Findings[i]
		if p.Frame > f.Frame || (p.Frame == f.Frame && p.rule > f.rule) {
			t.Errorf("findings out of order at %d: %s@%d then %s@%d", i, p.Rule, p.Frame, f.Rule, f.Frame)
		}
	}
}

func TestSnapshotConcurrent(t *testing.T) {
	s := newSC(Options{})
	s.a.inst.o.OnFinding = nil
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				_ = s.a.Snapshot()
			}
		}
	}()
	for i := 0; i < 2000; i++ {
		s.req(connA, kMetadata, 12, inst(idA))
		s.req(connA, kMetadata, 12, inst(idB))
	}
	close(stop)
	wg.Wait()
	if n := s.a.Snapshot().Totals.FindingsByRule["instance-id-changed"]; n != 2000 {
		t.Errorf("changed = %d", n)
	}
}
