package output

import (
	"bufio"
	"encoding/base64"
	"time"

	"github.com/kwatch/kwatch/audit"
	"github.com/kwatch/kwatch/decode"
)

// EventFormat is one way to write decoded events (kwatch dump).
type EventFormat struct {
	Name string
	// Array: the events are one JSON array, an element a line; otherwise
	// each event is a line of its own.
	Array bool
	// Append renders one request, response or coverage event, without the
	// line's end.
	Append func(b []byte, ev *decode.Event, names Namer) []byte
}

// Namer splits a pipeline frame number into its capture's name and its
// number in that capture (SPEC.md 2.1); nil when there is one capture,
// whose frames are printed as they are, with no name.
type Namer func(frame uint64) (capture string, n uint64)

// Events are the event formats; text first, the default.
var Events = Registry[EventFormat]{
	formats: []*EventFormat{
		{Name: "text", Append: appendText},
		{Name: "json", Array: true, Append: appendJSON},
		{Name: "ndjson", Append: appendJSON},
	},
	name: func(f *EventFormat) string { return f.Name },
}

// EventWriter writes events in one format. Open writes what comes before
// the first event, Close what comes after the last; the caller flushes.
type EventWriter struct {
	f     *EventFormat
	w     *bufio.Writer
	names Namer
	n     int
	buf   []byte
}

// Open starts writing events in format f to w.
func (f *EventFormat) Open(w *bufio.Writer, names Namer) *EventWriter {
	if f.Array {
		w.WriteByte('[')
	}
	return &EventWriter{f: f, w: w, names: names}
}

// Write writes ev if it is a request, a response or a coverage event; a
// connection's start and end are not written.
func (e *EventWriter) Write(ev *decode.Event) {
	switch ev.Kind {
	case decode.KindRequest, decode.KindResponse, decode.KindCoverage:
	default:
		return
	}
	b := e.buf[:0]
	if e.f.Array {
		if e.n > 0 {
			b = append(b, ',')
		}
		b = append(b, '\n')
	}
	b = e.f.Append(b, ev, e.names)
	if !e.f.Array {
		b = append(b, '\n')
	}
	e.buf = b
	e.n++
	e.w.Write(b)
}

// Close ends the output (JSON's array).
func (e *EventWriter) Close() {
	if !e.f.Array {
		return
	}
	if e.n > 0 {
		e.w.WriteByte('\n')
	}
	e.w.WriteString("]\n")
}

// frameOf is ev's capture and frame in it.
func frameOf(frame uint64, names Namer) (string, uint64) {
	if names == nil {
		return "", frame
	}
	return names(frame)
}

func appendTime(b []byte, t time.Time) []byte { return t.UTC().AppendFormat(b, audit.TimeFormat) }

func appendUUID(b []byte, u decode.UUID) []byte {
	return base64.RawURLEncoding.AppendEncode(b, u[:])
}
