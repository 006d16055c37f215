package audit

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/netip"
	"reflect"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/kwatch/kwatch/decode"
	"github.com/kwatch/kwatch/flow"
)

// The reference: the JSON as encoding/json wrote it before jsonWriter,
// kept verbatim so that jsonWriter is held to it byte for byte.

type jsonFinding struct {
	Time          string   `json:"time"`
	Rule          string   `json:"rule"`
	Severity      Severity `json:"severity"`
	KIP           string   `json:"kip"`
	Confidence    string   `json:"confidence"`
	Capture       string   `json:"capture,omitempty"`
	Frame         uint64   `json:"frame"`
	Conn          jsonConn `json:"conn"`
	API           string   `json:"api"`
	APIKey        int16    `json:"api_key"`
	APIVersion    int16    `json:"api_version"`
	CorrelationID int32    `json:"correlation_id"`
	ClientID      *string  `json:"client_id"`
	InstanceID    string   `json:"instance_id,omitempty"`
	Expected      string   `json:"expected"`
	Observed      string   `json:"observed"`
	Message       string   `json:"message"`
	Group         string   `json:"group,omitempty"`
	MemberID      *string  `json:"member_id,omitempty"`
}

type jsonConn struct {
	Client string `json:"client"`
	Broker string `json:"broker"`
}

func toJSONFinding(f *Finding) jsonFinding {
	j := jsonFinding{
		Time: f.Time.UTC().Format(TimeFormat), Rule: f.Rule, Severity: f.Severity, KIP: f.KIP,
		Confidence: f.Confidence.String(), Capture: f.Capture, Frame: f.Frame,
		Conn: jsonConn{Client: f.Conn.Client.String(), Broker: f.Conn.Broker.String()},
		API:  f.API, APIKey: int16(f.APIKey), APIVersion: f.APIVersion, CorrelationID: f.CorrelationID,
		Expected: f.Expected, Observed: f.Observed, Message: f.Message,
		Group: f.Group,
	}
	if f.ClientID != "" {
		cid := f.ClientID
		j.ClientID = &cid
	}
	if !f.InstanceID.IsZero() {
		j.InstanceID = JavaString(f.InstanceID)
	}
	if f.Group != "" {
		m := f.MemberID
		j.MemberID = &m
	}
	return j
}

// refFindingLine is the old WriteFindingJSON.
func refFindingLine(f *Finding) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(toJSONFinding(f)); err != nil {
		panic(err)
	}
	return escapeTerminal(b.Bytes())
}

// escapeTerminal turns encoding/json's output into AppendJSONString's:
// DEL, C1 and bidirectional controls, which encoding/json leaves raw (and
// which can only stand inside strings), become \uXXXX.
func escapeTerminal(b []byte) []byte {
	var out []byte
	for _, r := range string(b) {
		if r == 0x7f || terminalRune(r) {
			out = fmt.Appendf(out, "\\u%04x", r)
			continue
		}
		out = utf8.AppendRune(out, r)
	}
	return out
}

// refFinding has the old Finding.MarshalJSON, for the reference report.
type refFinding Finding

func (f refFinding) MarshalJSON() ([]byte, error) {
	return bytes.TrimRight(refFindingLine((*Finding)(&f)), "\n"), nil
}

// refReportValue returns r as the old WriteJSON saw it: a struct with
// Report's exported fields (made by reflection, so that a field added to
// Report is in the reference too) whose findings marshal the old way.
func refReportValue(r *Report) any {
	if r == nil {
		return r
	}
	rv := reflect.ValueOf(r).Elem()
	var fields []reflect.StructField
	var from []int
	for i := range rv.NumField() {
		sf := rv.Type().Field(i)
		if !sf.IsExported() {
			continue
		}
		if sf.Type == reflect.TypeFor[[]Finding]() {
			sf.Type = reflect.TypeFor[[]refFinding]()
		}
		fields = append(fields, reflect.StructField{Name: sf.Name, Type: sf.Type, Tag: sf.Tag})
		from = append(from, i)
	}
	v := reflect.New(reflect.StructOf(fields)).Elem()
	for j, i := range from {
		f := rv.Field(i)
		if fs, ok := f.Interface().([]Finding); ok {
			var old []refFinding
			if fs != nil {
				old = make([]refFinding, len(fs))
			}
			for k := range fs {
				old[k] = refFinding(fs[k])
			}
			f = reflect.ValueOf(old)
		}
		v.Field(j).Set(f)
	}
	return v.Addr().Interface()
}

// refWriteJSON is the old WriteJSON.
func refWriteJSON(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(escapeTerminal(b.Bytes()))
	return err
}

// sameJSON fails t unless r's report JSON, and its findings' NDJSON lines
// and MarshalJSON, are the reference's.
func sameJSON(t testing.TB, r *Report) {
	t.Helper()
	var got, want bytes.Buffer
	if err := r.WriteJSON(&got); err != nil {
		t.Fatal(err)
	}
	if err := refWriteJSON(&want, refReportValue(r)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		i := firstDiff(got.Bytes(), want.Bytes())
		t.Fatalf("WriteJSON differs from encoding/json at byte %d:\n got …%s…\nwant …%s…",
			i, around(got.Bytes(), i), around(want.Bytes(), i))
	}
	if r == nil {
		return
	}
	for i := range r.Findings {
		f := &r.Findings[i]
		want := refFindingLine(f)
		var line bytes.Buffer
		if err := WriteFindingJSON(&line, f); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(line.Bytes(), want) {
			t.Fatalf("WriteFindingJSON:\n got %s\nwant %s", line.Bytes(), want)
		}
		m, err := f.MarshalJSON()
		if err != nil || !bytes.Equal(m, bytes.TrimSuffix(want, []byte("\n"))) {
			t.Fatalf("MarshalJSON: %v\n got %s\nwant %s", err, m, want)
		}
	}
}

// around is b near i, enough to see where two outputs part.
func around(b []byte, i int) []byte { return b[max(0, i-200):min(len(b), i+100)] }

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// awkward holds every kind of string encoding/json treats specially.
const awkward = "q\"b\\s/ <>&\x00\x01\b\f\n\r\t\x1f\x7f \u0085\u009b\u202e\u2066 é 日本 \U0001F600 \u2028\u2029 bad:\xff\xc3(\xe2\x80\xed\xa0\x80 end\xe2\x80"

func TestWriteJSONSameAsEncodingJSON(t *testing.T) {
	v6 := netip.MustParseAddrPort("[fe80::1%eth\"0\\\x01]:9092")
	tricky := Finding{
		Time: time.Date(2026, 3, 4, 5, 6, 7, 8, time.FixedZone("x", -7*3600)), Rule: awkward, Severity: SeverityWarn,
		KIP: "KIP-1313", Confidence: ConfidencePartial, Frame: math.MaxUint64,
		Conn: flow.ConnID{Client: v6, Broker: netip.MustParseAddrPort("[::ffff:10.0.0.1]:1")}, API: awkward,
		APIKey: math.MinInt16, APIVersion: math.MaxInt16, CorrelationID: math.MinInt32, ClientID: awkward,
		InstanceID: v4FF, Expected: awkward, Observed: "", Message: awkward, Group: awkward, MemberID: awkward,
	}
	full := &Report{
		Profile: awkward, Start: "s", End: awkward,
		Totals: Totals{
			Packets: 1, Bytes: math.MaxUint64, Connections: 3, KafkaConnections: 4, Requests: 5,
			RequestsByHeaderVersion: map[string]uint64{"v2": 2, "v0": 0, "v1": 1},
			Responses:               6,
			Coverage:                map[string]uint64{awkward: 1, "": 2, "\xff": 3, "\xfe": 4, "B": 5, "a": 6, "é": 7, "a\x00": 8},
			Findings:                7, FindingsBySeverity: map[string]uint64{"info": 1}, FindingsByRule: map[string]uint64{},
			FindingsNotKept: 8, EvictedInstances: 9, ClientIDRepeats: 10, ClientIDRepeatBytes: 11,
			UnobservableConnections: 12, StateLimited: 13, OpenConnections: 14, KernelReceived: 15, KernelDropped: 16,
		},
		Instances: []Instance{
			{
				InstanceID: awkward, InstanceIDHex: "h", Legacy: true, ClientIDs: []string{awkward, ""},
				SoftwareName: awkward, SoftwareVersion: "1", ClientHosts: []string{}, Brokers: nil,
				Connections: -1, ConnectionList: []ConnSummary{{Client: awkward, Broker: "b", StartFrame: 1}, {}},
				MemberIDs: map[string][]string{"nil": nil, "empty": {}, awkward: {awkward, "m"}}, TelemetryID: awkward,
				Findings: map[string]uint64{"r": 1}, FirstFrame: 2,
			},
			{}, // every slice and map nil, every omitempty field empty
			{ClientIDs: []string{}, ClientHosts: []string{}, Brokers: []string{}, ConnectionList: []ConnSummary{},
				MemberIDs: map[string][]string{}, Findings: map[string]uint64{}},
		},
		Findings: []Finding{
			tricky,
			{},           // zero time, invalid AddrPorts, severity "unknown", client_id null
			{Group: "g"}, // member_id "" written
			{Severity: 200, Confidence: 9, Time: time.Unix(1<<40, 999999999)},
		},
	}
	tests := []struct {
		name string
		r    *Report
	}{
		{name: "golden scenario", r: goldenScenario().finish()},
		{name: "golden scenario snapshot", r: goldenScenario().a.Snapshot()},
		{name: "accepted profile", r: goldenEvents(newSC(Options{Profile: ProfileAccepted2026})).finish()},
		{name: "findings not kept", r: goldenEvents(newSC(Options{MaxFindings: 1})).finish()},
		{name: "kernel stats", r: func() *Report {
			s := goldenScenario()
			s.a.SetKernelStats(1000, 7)
			return s.finish()
		}()},
		{name: "empty auditor", r: New(Options{}).Finish(t0)},
		{name: "bench report", r: benchReport()},
		{name: "nil report", r: nil},
		{name: "zero report", r: &Report{}},
		{name: "empty slices and maps", r: &Report{
			Totals: Totals{RequestsByHeaderVersion: map[string]uint64{}, Coverage: map[string]uint64{},
				FindingsBySeverity: map[string]uint64{}, FindingsByRule: map[string]uint64{}},
			Instances: []Instance{}, Findings: []Finding{},
		}},
		{name: "every field", r: full},
		{name: "one finding", r: &Report{Findings: []Finding{tricky}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { sameJSON(t, tc.r) })
	}
}

// fill sets every exported field reachable from v to a value that is not
// zero, so that no omitempty or null hides a field from the comparison;
// *n numbers the values.
func fill(t *testing.T, v reflect.Value, path string, n *int) {
	*n++
	switch v.Type() {
	case reflect.TypeFor[time.Time]():
		v.Set(reflect.ValueOf(t0.Add(time.Duration(*n) * time.Second)))
		return
	case reflect.TypeFor[netip.AddrPort]():
		v.Set(reflect.ValueOf(netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, byte(*n >> 8), byte(*n)}), uint16(*n))))
		return
	case reflect.TypeFor[Severity]():
		v.Set(reflect.ValueOf(SeverityWarn))
		return
	case reflect.TypeFor[Confidence]():
		v.Set(reflect.ValueOf(ConfidencePartial))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("%s-%d %s", path, *n, awkward))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(-*n))
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(*n%199 + 1)) // never zero: a zero field is one fill left out
	case reflect.Array:
		for i := range v.Len() {
			fill(t, v.Index(i), path, n)
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range v.Len() {
			fill(t, v.Index(i), fmt.Sprintf("%s[%d]", path, i), n)
		}
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		for range 2 {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			fill(t, k, path+".key", n)
			fill(t, e, path+".value", n)
			v.SetMapIndex(k, e)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			sf := v.Type().Field(i)
			if !sf.IsExported() {
				continue
			}
			fill(t, v.Field(i), path+"."+sf.Name, n)
			if v.Field(i).IsZero() {
				t.Errorf("fill left %s.%s zero", path, sf.Name)
			}
		}
	default:
		t.Fatalf("fill: %s is a %s, which fill (and maybe jsonWriter) does not know", path, v.Type())
	}
}

// TestJSONWriterCoversEveryField fails when a field added to the report's
// types is not written, or not written as encoding/json would.
func TestJSONWriterCoversEveryField(t *testing.T) {
	var r Report
	n := 0
	fill(t, reflect.ValueOf(&r).Elem(), "Report", &n)
	sameJSON(t, &r)

	// Finding's JSON is not encoding/json's of Finding, so the test is
	// that each exported field shows: the output changes when it is zeroed.
	// A field the JSON is meant to leave out goes in notInJSON.
	notInJSON := map[string]bool{}
	var base Finding
	fill(t, reflect.ValueOf(&base).Elem(), "Finding", &n)
	want, _ := base.MarshalJSON()
	ft := reflect.TypeFor[Finding]()
	for i := range ft.NumField() {
		sf := ft.Field(i)
		if !sf.IsExported() || notInJSON[sf.Name] {
			continue
		}
		f := base
		v := reflect.ValueOf(&f).Elem().Field(i)
		v.Set(reflect.Zero(sf.Type))
		if got, _ := f.MarshalJSON(); bytes.Equal(got, want) {
			t.Errorf("Finding.%s does not show in its JSON", sf.Name)
		}
	}
}

// fuzzReader hands out the fuzzer's bytes as the report's values; when
// they run out it hands out zeros.
type fuzzReader []byte

func (r *fuzzReader) byte() byte {
	if len(*r) == 0 {
		return 0
	}
	c := (*r)[0]
	*r = (*r)[1:]
	return c
}

func (r *fuzzReader) bytes(n int) []byte {
	n = min(n, len(*r))
	b := (*r)[:n]
	*r = (*r)[n:]
	return b
}

func (r *fuzzReader) u64() uint64 {
	var b [8]byte
	copy(b[:], r.bytes(8))
	return binary.LittleEndian.Uint64(b[:])
}

func (r *fuzzReader) str() string { return string(r.bytes(int(r.byte() % 32))) }

func (r *fuzzReader) strs() []string {
	switch c := r.byte(); c % 4 {
	case 0:
		return nil
	default:
		s := make([]string, c%4-1)
		for i := range s {
			s[i] = r.str()
		}
		return s
	}
}

func (r *fuzzReader) uints() map[string]uint64 {
	switch c := r.byte(); c % 4 {
	case 0:
		return nil
	default:
		m := map[string]uint64{}
		for range c%4 - 1 {
			m[r.str()] = r.u64()
		}
		return m
	}
}

func (r *fuzzReader) addrPort() netip.AddrPort {
	switch r.byte() % 4 {
	case 0:
		return netip.AddrPort{}
	case 1:
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte(r.bytesN(4))), uint16(r.u64()))
	case 2:
		return netip.AddrPortFrom(netip.AddrFrom16([16]byte(r.bytesN(16))), uint16(r.u64()))
	default:
		return netip.AddrPortFrom(netip.AddrFrom16([16]byte(r.bytesN(16))).WithZone(r.str()), uint16(r.u64()))
	}
}

// bytesN is bytes(n) padded with zeros to n.
func (r *fuzzReader) bytesN(n int) []byte {
	b := make([]byte, n)
	copy(b, r.bytes(n))
	return b
}

func (r *fuzzReader) report() *Report {
	rep := &Report{Profile: r.str(), Start: r.str(), End: r.str()}
	t := &rep.Totals
	for _, p := range []*uint64{&t.Packets, &t.Bytes, &t.Connections, &t.KafkaConnections, &t.Requests, &t.Responses,
		&t.Findings, &t.FindingsNotKept, &t.EvictedInstances, &t.ClientIDRepeats, &t.ClientIDRepeatBytes,
		&t.UnobservableConnections, &t.StateLimited, &t.OpenConnections, &t.KernelReceived, &t.KernelDropped} {
		if r.byte()%2 == 1 {
			*p = r.u64()
		}
	}
	t.RequestsByHeaderVersion, t.Coverage, t.FindingsBySeverity, t.FindingsByRule = r.uints(), r.uints(), r.uints(), r.uints()
	if c := r.byte(); c%4 != 0 {
		rep.Instances = make([]Instance, c%4-1)
	}
	for i := range rep.Instances {
		in := &rep.Instances[i]
		in.InstanceID, in.InstanceIDHex, in.Legacy = r.str(), r.str(), r.byte()%2 == 1
		in.ClientIDs, in.SoftwareName, in.SoftwareVersion = r.strs(), r.str(), r.str()
		in.ClientHosts, in.Brokers, in.Connections = r.strs(), r.strs(), int(r.u64())
		if c := r.byte(); c%4 != 0 {
			in.ConnectionList = make([]ConnSummary, c%4-1)
		}
		for j := range in.ConnectionList {
			in.ConnectionList[j] = ConnSummary{Client: r.str(), Broker: r.str(), StartFrame: r.u64()}
		}
		if c := r.byte(); c%4 != 0 {
			in.MemberIDs = map[string][]string{}
			for range c%4 - 1 {
				in.MemberIDs[r.str()] = r.strs()
			}
		}
		in.TelemetryID, in.Findings, in.FirstFrame = r.str(), r.uints(), r.u64()
	}
	if c := r.byte(); c%4 != 0 {
		rep.Findings = make([]Finding, c%4-1)
	}
	for i := range rep.Findings {
		f := &rep.Findings[i]
		f.Time = time.Unix(int64(r.u64()), int64(r.u64()))
		f.Rule, f.Severity, f.KIP, f.Confidence, f.Frame = r.str(), Severity(r.byte()), r.str(), Confidence(r.byte()), r.u64()
		f.Conn = flow.ConnID{Client: r.addrPort(), Broker: r.addrPort(), StartFrame: r.u64()}
		f.API, f.APIKey, f.APIVersion, f.CorrelationID = r.str(), decode.APIKey(r.u64()), int16(r.u64()), int32(r.u64())
		f.ClientID = r.str()
		if r.byte()%2 == 1 {
			f.InstanceID = decode.UUID(r.bytesN(16))
		}
		f.Expected, f.Observed, f.Message, f.Group, f.MemberID = r.str(), r.str(), r.str(), r.str(), r.str()
	}
	return rep
}

func FuzzWriteJSONSameAsEncodingJSON(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte(awkward))
	f.Add(bytes.Repeat([]byte{3, 7, 1, 0xff, '<', 0xe2, 0x80, 0xa8, '"', '\\', 3}, 40))
	var seed bytes.Buffer
	for i := range 400 {
		seed.WriteByte(byte(i*37 + 11))
		seed.WriteString(awkward[i%len(awkward):])
	}
	f.Add(seed.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		r := fuzzReader(data)
		sameJSON(t, r.report())
	})
}

// benchReport is a report of benchConns clients with a client instance ID,
// a client ID, software and a group membership each, and a few findings:
// some 150 KB, about the size of a busy capture's report.
func benchReport() *Report {
	s := newSC(Options{})
	s.a.inst.o.OnFinding = nil
	for i := range benchConns {
		c, id := benchConnID(i), benchInstance(i)
		app := fmt.Sprintf("app-%d", i%7)
		s.start(c, true)
		s.req(c, kAPIVer, 4, inst(id), cid(app), software("apache-kafka-java", "4.2.0"))
		s.req(c, kMetadata, 12, inst(id), nullCID())
		hbc := s.req(c, kCGHB, 1, inst(id), nullCID(), hb("orders", JavaString(id), 0))
		s.resp(c, kCGHB, 1, hbc, errCode(0), respMember(JavaString(id)))
		if i%10 == 0 {
			s.req(c, kMetadata, 12, inst(idB), nullCID())
		}
	}
	return s.finish()
}

// BenchmarkWriteJSON compares the old encoding/json path (its first-use
// reflection setup, paid once per process, is not in these numbers) with
// jsonWriter.
func BenchmarkWriteJSON(b *testing.B) {
	r := benchReport()
	var out bytes.Buffer
	if err := r.WriteJSON(&out); err != nil {
		b.Fatal(err)
	}
	old := refReportValue(r)
	for _, bc := range []struct {
		name  string
		write func(io.Writer) error
	}{
		{name: "encoding-json", write: func(w io.Writer) error { return refWriteJSON(w, old) }},
		{name: "jsonWriter", write: r.WriteJSON},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(out.Len()))
			b.ReportAllocs()
			for b.Loop() {
				if err := bc.write(io.Discard); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestJSONFieldBitsAt holds the plan's integer reads to their Go values,
// negative ones included (an epoch of -1 is common on the wire).
func TestJSONFieldBitsAt(t *testing.T) {
	i8, i16, i32, i64 := int8(-1), int16(-300), int32(-70000), int64(-1<<40)
	u8, u16, u32, u64 := uint8(255), uint16(65535), uint32(1<<31), uint64(1<<63)
	tests := []struct {
		name string
		v    any // a pointer to the integer
		want string
	}{
		{"int8", &i8, "-1"}, {"int16", &i16, "-300"}, {"int32", &i32, "-70000"}, {"int64", &i64, "-1099511627776"},
		{"uint8", &u8, "255"}, {"uint16", &u16, "65535"}, {"uint32", &u32, "2147483648"}, {"uint64", &u64, "9223372036854775808"},
	}
	for _, tt := range tests {
		rv := reflect.ValueOf(tt.v)
		f := planValue(rv.Type().Elem())
		var w jsonWriter
		if f.kind == jsonInt {
			w.int(int64(f.bitsAt(rv.UnsafePointer())))
		} else {
			w.uint(f.bitsAt(rv.UnsafePointer()))
		}
		if string(w.buf) != tt.want {
			t.Errorf("%s: wrote %s, want %s", tt.name, w.buf, tt.want)
		}
	}
}

// TestPlain8MatchesTable: the eight-byte test says what jsonPlain says of
// each of its bytes, for every byte value in every lane.
func TestPlain8MatchesTable(t *testing.T) {
	for lane := range 8 {
		for b := range 256 {
			s := []byte("abcdefgh")
			s[lane] = byte(b)
			if got, want := plain8(string(s)), jsonPlain[b]; got != want {
				t.Errorf("plain8(%q) = %v, want %v", s, got, want)
			}
		}
	}
}
