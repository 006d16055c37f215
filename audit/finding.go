package audit

import (
	"io"
	"sync"
	"time"
	"unsafe"

	"github.com/kwatch/kwatch/decode"
	"github.com/kwatch/kwatch/flow"
	"github.com/kwatch/kwatch/internal/enum"
)

// Confidence says whether a finding rests on the whole connection.
type Confidence uint8

const (
	// ConfidenceFull: everything the rule depends on was seen.
	ConfidenceFull Confidence = iota
	// ConfidencePartial: the connection was joined mid-stream (and the rule
	// depends on its first request) or bytes were lost before the finding.
	ConfidencePartial
)

var confidenceNames = []string{ConfidenceFull: "full", ConfidencePartial: "partial"}

func (c Confidence) String() string { return enum.Name(confidenceNames, c, "full") }

// MarshalText writes "full" or "partial".
func (c Confidence) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// Finding is one rule violation (SPEC.md section 5). Strings are owned by
// the finding.
type Finding struct {
	Time       time.Time
	Rule       string
	Severity   Severity
	KIP        string
	Confidence Confidence
	// Capture names the capture file (or fleet agent) of Frame when
	// several are read as one; "" with one capture.
	Capture       string
	Frame         uint64
	Conn          flow.ConnID
	API           string
	APIKey        decode.APIKey
	APIVersion    int16
	CorrelationID int32
	// ClientID is the connection's first client ID; "" when none.
	ClientID string
	// InstanceID is the client instance the finding belongs to (the
	// connection's first header instance ID, else the request's); zero when none.
	InstanceID decode.UUID
	Expected   string
	Observed   string
	Message    string
	// Group and MemberID are set for member rules (extra fields).
	Group    string
	MemberID string

	rule ruleID
	// seq orders findings across captures: the frame as the pipeline
	// numbers it (one number for the whole input).
	seq uint64
}

// findingSize estimates what keeping f costs: the struct (with the slack
// of a growing slice) and the strings it owns. Rule, KIP and API are
// shared constants and not counted.
func findingSize(f *Finding) int {
	return sizeOfFinding(f.ClientID, f.Expected, f.Observed, f.Message, f.Group, f.MemberID)
}

// findingBase is findingSize of a finding that owns no string.
const findingBase = int(unsafe.Sizeof(Finding{})) * 5 / 4

// sizeOfFinding is findingSize of a finding owning these strings, before
// it is made.
func sizeOfFinding(clientID, expected, observed, msg, group, member string) int {
	return findingBase + len(clientID) + len(expected) + len(observed) + len(msg) + len(group) + len(member)
}

// TimeFormat is RFC 3339 in UTC with exactly six fractional digits.
const TimeFormat = "2006-01-02T15:04:05.000000Z07:00"

// MarshalJSON writes the finding in SPEC.md section 5's shape.
func (f Finding) MarshalJSON() ([]byte, error) {
	w := jsonWriter{buf: make([]byte, 0, 512)}
	w.finding(&f)
	return w.buf, nil
}

// WriteFindingJSON writes f as one NDJSON line. It allocates nothing in
// the steady state: a run streaming 200k findings makes no garbage here.
func WriteFindingJSON(w io.Writer, f *Finding) error {
	jw := findingBufs.Get().(*jsonWriter)
	jw.buf = jw.buf[:0]
	jw.finding(f)
	jw.buf = append(jw.buf, '\n')
	_, err := w.Write(jw.buf)
	findingBufs.Put(jw)
	return err
}

var findingBufs = sync.Pool{New: func() any { return &jsonWriter{buf: make([]byte, 0, 1024)} }}
