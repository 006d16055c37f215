package audit

import (
	"io"
	"net/netip"
	"slices"
	"strconv"
)

// jsonWriter appends the report's JSON byte for byte as encoding/json
// writes it with SetEscapeHTML(false) and, when indent is set, with
// SetIndent("", "  "). It is hand-written because on one report
// encoding/json spends most of its time on first-use reflection and on a
// second pass to indent: some 4 ms of a 100 ms `kwatch read`.
// jsonwrite_test.go holds it to encoding/json's output.
type jsonWriter struct {
	buf    []byte
	indent bool
	depth  int
	// first: the innermost open object or array has no member yet, so the
	// next member needs no comma, and closing it writes {} or [] on one
	// line, as json.Indent does.
	first bool
	keys  []string // reused to sort map keys
	// out, when set, takes what buf holds whenever it passes spillAt, so
	// that a report of many findings is never whole in memory; err is its
	// first write error.
	out io.Writer
	err error
}

// spillAt is how much JSON a streaming jsonWriter holds before writing.
const spillAt = 64 << 10

// spill writes buf out once it holds spillAt bytes (with out set).
func (w *jsonWriter) spill() {
	if w.out == nil || len(w.buf) < spillAt {
		return
	}
	if _, err := w.out.Write(w.buf); err != nil && w.err == nil {
		w.err = err
	}
	w.buf = w.buf[:0]
}

func (w *jsonWriter) newline() {
	if !w.indent {
		return
	}
	const spaces = "\n                                "
	if n := 1 + 2*w.depth; n <= len(spaces) {
		w.buf = append(w.buf, spaces[:n]...)
		return
	}
	w.buf = append(w.buf, '\n')
	for range w.depth {
		w.buf = append(w.buf, ' ', ' ')
	}
}

// open starts an object ('{') or an array ('[').
func (w *jsonWriter) open(c byte) {
	w.buf = append(w.buf, c)
	w.depth++
	w.first = true
}

// close ends the innermost object ('}') or array (']').
func (w *jsonWriter) close(c byte) {
	w.depth--
	if !w.first {
		w.newline()
	}
	w.buf = append(w.buf, c)
	w.first = false
}

// next starts an array element.
func (w *jsonWriter) next() {
	if !w.first {
		w.buf = append(w.buf, ',')
	}
	w.first = false
	w.newline()
}

// field starts a struct's member: name is a json tag's, which needs no
// escaping.
func (w *jsonWriter) field(name string) {
	w.next()
	w.buf = append(w.buf, '"')
	w.buf = append(w.buf, name...)
	w.buf = append(w.buf, '"')
	w.colon()
}

// key starts a map's member: k is data, and escaped.
func (w *jsonWriter) key(k string) {
	w.next()
	w.buf = AppendJSONString(w.buf, k)
	w.colon()
}

func (w *jsonWriter) colon() {
	if w.indent {
		w.buf = append(w.buf, ':', ' ')
	} else {
		w.buf = append(w.buf, ':')
	}
}

func (w *jsonWriter) str(s string)  { w.buf = AppendJSONString(w.buf, s) }
func (w *jsonWriter) uint(v uint64) { w.buf = strconv.AppendUint(w.buf, v, 10) }
func (w *jsonWriter) int(v int64)   { w.buf = strconv.AppendInt(w.buf, v, 10) }
func (w *jsonWriter) bool(v bool)   { w.buf = strconv.AppendBool(w.buf, v) }
func (w *jsonWriter) null()         { w.buf = append(w.buf, "null"...) }

// The members of a struct, each a name and its value.
func (w *jsonWriter) strField(name, v string)                     { w.field(name); w.str(v) }
func (w *jsonWriter) uintField(name string, v uint64)             { w.field(name); w.uint(v) }
func (w *jsonWriter) intField(name string, v int64)               { w.field(name); w.int(v) }
func (w *jsonWriter) boolField(name string, v bool)               { w.field(name); w.bool(v) }
func (w *jsonWriter) strsField(name string, v []string)           { w.field(name); w.strs(v) }
func (w *jsonWriter) uintsField(name string, v map[string]uint64) { w.field(name); w.uints(v) }

// optStr writes the string field name unless v is empty (omitempty).
func (w *jsonWriter) optStr(name, v string) {
	if v != "" {
		w.field(name)
		w.str(v)
	}
}

// jsonArray writes s as an array of elements each writes, null when nil.
func jsonArray[T any](w *jsonWriter, s []T, each func(*T)) {
	if s == nil {
		w.null()
		return
	}
	w.open('[')
	for i := range s {
		w.next()
		each(&s[i])
		w.spill()
	}
	w.close(']')
}

func (w *jsonWriter) strs(s []string) {
	if s == nil {
		w.null()
		return
	}
	w.open('[')
	for _, v := range s {
		w.next()
		w.str(v)
	}
	w.close(']')
}

func (w *jsonWriter) uints(m map[string]uint64)       { jsonObject(w, m, w.uint) }
func (w *jsonWriter) memberIDs(m map[string][]string) { jsonObject(w, m, w.strs) }

// jsonObject writes m as an object whose values each writes, keys in
// encoding/json's order, null when nil. Values must not be maps (see
// jsonKeys).
func jsonObject[V any](w *jsonWriter, m map[string]V, each func(V)) {
	if m == nil {
		w.null()
		return
	}
	w.open('{')
	for _, k := range jsonKeys(w, m) {
		w.key(k)
		each(m[k])
	}
	w.close('}')
}

// jsonKeys returns m's keys in encoding/json's order (bytewise), in
// w.keys: the caller must be done with them before the next map.
func jsonKeys[V any](w *jsonWriter, m map[string]V) []string {
	keys := w.keys[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	w.keys = keys
	return keys
}

// addrPort writes p as p.String() spells it, without allocating.
func (w *jsonWriter) addrPort(p netip.AddrPort) {
	if !p.Addr().IsValid() || p.Addr().Zone() != "" {
		// "invalid AddrPort", which AppendTo leaves out, or a zone, which
		// may need escaping.
		w.str(p.String())
		return
	}
	w.buf = append(w.buf, '"') // digits, hex, '.', ':' and brackets
	w.buf = p.AppendTo(w.buf)
	w.buf = append(w.buf, '"')
}

// The methods below follow the struct definitions field by field: their
// order is encoding/json's (and SPEC.md's) key order.

func (w *jsonWriter) report(r *Report) {
	if r == nil {
		w.null()
		return
	}
	w.open('{')
	w.strField("profile", r.Profile)
	w.boolField("complete", r.Complete)
	w.strsField("warnings", r.Warnings)
	w.optStr("start", r.Start)
	w.optStr("end", r.End)
	w.field("totals")
	w.totals(&r.Totals)
	w.field("cases")
	jsonArray(w, r.Cases, w.caseObj)
	w.field("software")
	jsonArray(w, r.Software, w.software)
	w.field("groups")
	jsonArray(w, r.Groups, w.group)
	w.field("brokers")
	jsonArray(w, r.Brokers, w.broker)
	if len(r.Suppressed) > 0 {
		w.field("suppressed")
		jsonArray(w, r.Suppressed, w.caseObj)
	}
	w.field("instances")
	jsonArray(w, r.Instances, w.instance)
	w.field("findings")
	jsonArray(w, r.Findings, w.finding)
	w.close('}')
}

func (w *jsonWriter) totals(t *Totals) {
	w.open('{')
	w.uintField("packets", t.Packets)
	w.uintField("bytes", t.Bytes)
	w.uintField("connections", t.Connections)
	w.uintField("kafka_connections", t.KafkaConnections)
	w.uintField("not_kafka_connections", t.NotKafkaConnections)
	if t.EvictedConnections > 0 {
		w.uintField("evicted_connections", t.EvictedConnections)
	}
	w.uintField("requests", t.Requests)
	w.uintsField("requests_by_header_version", t.RequestsByHeaderVersion)
	w.uintField("responses", t.Responses)
	w.uintsField("coverage", t.Coverage)
	w.uintField("findings", t.Findings)
	w.uintsField("findings_by_severity", t.FindingsBySeverity)
	w.uintsField("findings_by_rule", t.FindingsByRule)
	w.uintField("findings_not_kept", t.FindingsNotKept)
	w.uintField("evicted_instances", t.EvictedInstances)
	w.uintField("client_id_repeats", t.ClientIDRepeats)
	w.uintField("client_id_repeat_bytes", t.ClientIDRepeatBytes)
	w.uintField("unobservable_connections", t.UnobservableConnections)
	w.uintField("state_limited", t.StateLimited)
	w.uintField("open_connections", t.OpenConnections)
	if t.KernelReceived != 0 {
		w.uintField("kernel_received", t.KernelReceived)
	}
	if t.KernelDropped != 0 {
		w.uintField("kernel_dropped", t.KernelDropped)
	}
	if t.Suppressed != 0 {
		w.uintField("suppressed", t.Suppressed)
	}
	if len(t.Unwrapped) > 0 {
		w.uintsField("unwrapped", t.Unwrapped)
	}
	w.close('}')
}

func (w *jsonWriter) instance(in *Instance) {
	w.open('{')
	w.optStr("instance_id", in.InstanceID)
	w.optStr("instance_id_hex", in.InstanceIDHex)
	w.boolField("legacy", in.Legacy)
	w.strsField("client_ids", in.ClientIDs)
	w.optStr("software_name", in.SoftwareName)
	w.optStr("software_version", in.SoftwareVersion)
	w.strsField("client_hosts", in.ClientHosts)
	w.strsField("brokers", in.Brokers)
	w.intField("connections", int64(in.Connections))
	w.field("connection_list")
	jsonArray(w, in.ConnectionList, w.connSummary)
	w.field("member_ids")
	w.memberIDs(in.MemberIDs)
	w.optStr("telemetry_id", in.TelemetryID)
	w.uintsField("findings", in.Findings)
	w.optStr("capture", in.Capture)
	w.uintField("first_frame", in.FirstFrame)
	w.close('}')
}

func (w *jsonWriter) connSummary(c *ConnSummary) {
	w.open('{')
	w.strField("client", c.Client)
	w.strField("broker", c.Broker)
	w.optStr("capture", c.Capture)
	w.uintField("start_frame", c.StartFrame)
	w.close('}')
}

// finding writes f in SPEC.md section 5's shape.
func (w *jsonWriter) finding(f *Finding) {
	w.open('{')
	w.field("time")
	// The time and Java UUID forms are digits, letters and -:.+_, which
	// need no escaping, so they are appended in place.
	w.buf = append(w.buf, '"')
	w.buf = f.Time.UTC().AppendFormat(w.buf, TimeFormat)
	w.buf = append(w.buf, '"')
	w.strField("rule", f.Rule)
	w.field("severity")
	w.str(f.Severity.String()) // its MarshalText
	w.strField("kip", f.KIP)
	w.strField("confidence", f.Confidence.String())
	w.optStr("capture", f.Capture)
	w.uintField("frame", f.Frame)
	w.field("conn")
	w.open('{')
	w.field("client")
	w.addrPort(f.Conn.Client)
	w.field("broker")
	w.addrPort(f.Conn.Broker)
	w.close('}')
	w.strField("api", f.API)
	w.intField("api_key", int64(f.APIKey))
	w.intField("api_version", int64(f.APIVersion))
	w.intField("correlation_id", int64(f.CorrelationID))
	w.field("client_id")
	if f.ClientID == "" {
		w.null() // the connection sent none, as in dump
	} else {
		w.str(f.ClientID)
	}
	if !f.InstanceID.IsZero() {
		w.field("instance_id")
		w.buf = append(w.buf, '"')
		w.buf = appendJava(w.buf, f.InstanceID)
		w.buf = append(w.buf, '"')
	}
	w.strField("expected", f.Expected)
	w.strField("observed", f.Observed)
	w.strField("message", f.Message)
	if f.Group != "" {
		w.strField("group", f.Group)
		w.field("member_id") // with the group, even when empty
		w.str(f.MemberID)
	}
	w.close('}')
}

func (w *jsonWriter) caseObj(c *Case) {
	w.open('{')
	w.strField("rule", c.Rule)
	w.strField("severity", c.Severity.String())
	w.strField("kip", c.KIP)
	w.uintField("count", c.Count)
	w.optStr("broker", c.Broker)
	w.optStr("instance_id", c.InstanceID)
	w.strsField("client_ids", c.ClientIDs)
	w.strsField("client_hosts", c.ClientHosts)
	w.optStr("software_name", c.SoftwareName)
	w.optStr("software_version", c.SoftwareVersion)
	w.field("first")
	w.frameRef(&c.First)
	w.field("last")
	w.frameRef(&c.Last)
	w.strField("example", c.Example)
	w.strField("fix", c.Fix)
	w.close('}')
}

func (w *jsonWriter) frameRef(f *FrameRef) {
	w.open('{')
	w.strField("time", f.Time)
	w.optStr("capture", f.Capture)
	w.uintField("frame", f.Frame)
	w.close('}')
}

func (w *jsonWriter) software(s *SoftwareRollup) {
	w.open('{')
	w.strField("software_name", s.SoftwareName)
	w.strField("software_version", s.SoftwareVersion)
	w.intField("clients", int64(s.Clients))
	w.intField("clients_breaking_rules", int64(s.Breaking))
	w.uintsField("findings", s.Findings)
	w.close('}')
}

func (w *jsonWriter) group(g *GroupView) {
	w.open('{')
	w.strField("group", g.Group)
	w.field("members")
	jsonArray(w, g.Members, w.groupMember)
	w.close('}')
}

func (w *jsonWriter) groupMember(m *GroupMember) {
	w.open('{')
	w.strField("member_id", m.MemberID)
	w.strsField("clients", m.Clients)
	w.boolField("shared", m.Shared)
	w.intField("epoch", int64(m.Epoch))
	w.close('}')
}

func (w *jsonWriter) broker(b *BrokerView) {
	w.open('{')
	w.strField("broker", b.Broker)
	w.intField("clients", int64(b.Clients))
	w.uintsField("findings", b.Findings)
	w.close('}')
}
