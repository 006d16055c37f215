package audit

import (
	"io"
	"net/netip"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unsafe"
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
func (w *jsonWriter) strField(name, v string)         { w.field(name); w.str(v) }
func (w *jsonWriter) uintField(name string, v uint64) { w.field(name); w.uint(v) }
func (w *jsonWriter) intField(name string, v int64)   { w.field(name); w.int(v) }

// optStr writes the string field name unless v is empty (omitempty).
func (w *jsonWriter) optStr(name, v string) {
	if v != "" {
		w.field(name)
		w.str(v)
	}
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

// The report's structs are written from their json tags, as
// encoding/json reads them: one plan per struct type, made once, lists its
// fields in declaration order (encoding/json's and SPEC.md's key order).
// The tags are then the one owner of every key name and of omitempty.
//
// A plan reads fields at their offsets through unsafe.Pointer rather than
// through reflect.Value: Field, Addr and Interface on every member made
// WriteJSON a third slower. The offsets, sizes and types all come from
// reflect, once, so they cannot drift from the structs.

// jsonPlan is how one struct type is written.
type jsonPlan struct{ fields []jsonField }

// jsonField is one member of a planned struct.
type jsonField struct {
	key       string  // `"name":`, name from the tag: letters, digits and '_' (checked when planned)
	off       uintptr // in the struct
	size      uintptr // of an int
	elemSize  uintptr // of a slice's element
	omitEmpty bool
	kind      jsonKind
	plan      *jsonPlan // jsonStruct, and a jsonSlice's elements
}

// jsonKind is how a field's value is written.
type jsonKind uint8

const (
	jsonString jsonKind = iota
	jsonBool
	jsonInt
	jsonUint
	jsonStruct
	jsonSlice // of structs
	// The kinds of jsonByHand.
	jsonStrings
	jsonCounts
	jsonMemberIDs
	jsonSeverity
	jsonFindings
)

// jsonByHand are the types whose JSON is not their fields' (a name for a
// number, SPEC.md's finding) or is faster written without a plan. (A
// switch, not functions in a table: a function value taking the writer
// would move it to the heap.)
var jsonByHand = map[reflect.Type]jsonKind{
	reflect.TypeFor[[]string]():            jsonStrings,
	reflect.TypeFor[map[string]uint64]():   jsonCounts,
	reflect.TypeFor[map[string][]string](): jsonMemberIDs,
	reflect.TypeFor[Severity]():            jsonSeverity,
	reflect.TypeFor[[]Finding]():           jsonFindings,
}

// reportPlan is Report's plan and, through it, every struct it holds.
var reportPlan = planJSON(reflect.TypeFor[Report]())

// planJSON plans struct type t. It panics on a field it cannot write as
// encoding/json would: a new field's type then fails every test at once.
func planJSON(t reflect.Type) *jsonPlan {
	p := &jsonPlan{}
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if !sf.IsExported() || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = sf.Name
		}
		if strings.TrimLeft(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != "" {
			panic("audit: json name needs escaping: " + name)
		}
		f := planValue(sf.Type)
		f.key, f.off = `"`+name+`":`, sf.Offset
		f.omitEmpty = slices.Contains(strings.Split(opts, ","), "omitempty")
		p.fields = append(p.fields, f)
	}
	return p
}

// planValue says how a value of type t is written.
func planValue(t reflect.Type) jsonField {
	f := jsonField{size: t.Size()}
	if t.Kind() == reflect.Slice {
		f.elemSize = t.Elem().Size()
	}
	if k, ok := jsonByHand[t]; ok {
		f.kind = k
		return f
	}
	switch t.Kind() {
	case reflect.String:
		f.kind = jsonString
	case reflect.Bool:
		f.kind = jsonBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		f.kind = jsonInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		f.kind = jsonUint
	case reflect.Struct:
		f.kind, f.plan = jsonStruct, planJSON(t)
	case reflect.Slice:
		if t.Elem().Kind() != reflect.Struct {
			panic("audit: no JSON plan for " + t.String())
		}
		f.kind, f.plan = jsonSlice, planJSON(t.Elem())
	default:
		panic("audit: no JSON plan for " + t.String())
	}
	return f
}

// report writes r, null when nil.
func (w *jsonWriter) report(r *Report) {
	if r == nil {
		w.null()
		return
	}
	w.object(reportPlan, unsafe.Pointer(r))
}

// object writes the struct at p by plan pl. (One switch, without a call
// per field: a value method called for each cost WriteJSON 6% more
// instructions.)
func (w *jsonWriter) object(pl *jsonPlan, p unsafe.Pointer) {
	w.open('{')
	for i := range pl.fields {
		f := &pl.fields[i]
		fp := unsafe.Add(p, f.off)
		if f.omitEmpty && f.empty(fp) {
			continue
		}
		w.next()
		w.buf = append(w.buf, f.key...) // quoted when planned: one append, not field's three
		if w.indent {
			w.buf = append(w.buf, ' ')
		}
		switch f.kind {
		case jsonString:
			w.str(*(*string)(fp))
		case jsonBool:
			w.bool(*(*bool)(fp))
		case jsonInt:
			w.int(int64(f.bitsAt(fp)))
		case jsonUint:
			w.uint(f.bitsAt(fp))
		case jsonStruct:
			w.object(f.plan, fp)
		case jsonSlice, jsonFindings:
			w.array(f, fp)
		case jsonStrings:
			w.strs(*(*[]string)(fp))
		case jsonCounts:
			w.uints(*(*map[string]uint64)(fp))
		case jsonMemberIDs:
			w.memberIDs(*(*map[string][]string)(fp))
		case jsonSeverity:
			w.str((*Severity)(fp).String()) // its MarshalText
		}
	}
	w.close('}')
}

// array writes the slice at p, of structs by f.plan or (jsonFindings) of
// findings, null when nil.
func (w *jsonWriter) array(f *jsonField, p unsafe.Pointer) {
	// Every slice header is laid out as a []byte's, whatever its element
	// type.
	s := *(*[]byte)(p)
	if s == nil {
		w.null()
		return
	}
	w.open('[')
	for i := range uintptr(len(s)) {
		w.next()
		e := unsafe.Add(unsafe.Pointer(unsafe.SliceData(s)), i*f.elemSize)
		if f.kind == jsonFindings {
			w.finding((*Finding)(e)) // Finding's MarshalJSON
		} else {
			w.object(f.plan, e)
		}
		w.spill()
	}
	w.close(']')
}

// empty is encoding/json's test for omitempty, on the value at p.
func (f *jsonField) empty(p unsafe.Pointer) bool {
	switch f.kind {
	case jsonString:
		return len(*(*string)(p)) == 0
	case jsonBool:
		return !*(*bool)(p)
	case jsonInt, jsonUint:
		return f.bitsAt(p) == 0
	case jsonSlice, jsonStrings, jsonFindings:
		return len(*(*[]byte)(p)) == 0
	case jsonCounts:
		return len(*(*map[string]uint64)(p)) == 0
	case jsonMemberIDs:
		return len(*(*map[string][]string)(p)) == 0
	case jsonSeverity:
		return *(*Severity)(p) == 0
	}
	return false
}

// bitsAt reads the integer of f's size at p, sign-extended when it is
// signed: an int64's bits.
func (f *jsonField) bitsAt(p unsafe.Pointer) uint64 {
	var u uint64
	switch f.size {
	case 1:
		u = uint64(*(*uint8)(p))
	case 2:
		u = uint64(*(*uint16)(p))
	case 4:
		u = uint64(*(*uint32)(p))
	default:
		return *(*uint64)(p)
	}
	if f.kind == jsonInt {
		shift := 64 - 8*f.size
		return uint64(int64(u<<shift) >> shift)
	}
	return u
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
