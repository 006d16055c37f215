package audit

import (
	"bytes"
	"encoding/json"
	"io"
	"time"
	"unsafe"

	"github.com/kwatch/kwatch/decode"
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

func (c Confidence) String() string {
	if c == ConfidencePartial {
		return "partial"
	}
	return "full"
}

// MarshalText writes "full" or "partial".
func (c Confidence) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// Finding is one rule violation (SPEC.md section 5). Strings are owned by
// the finding.
type Finding struct {
	Time          time.Time
	Rule          string
	Severity      Severity
	KIP           string
	Confidence    Confidence
	Frame         uint64
	Conn          decode.ConnID
	API           string
	APIKey        int16
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
}

// findingSize estimates what keeping f costs: the struct (with the slack
// of a growing slice) and the strings it owns. Rule, KIP and API are
// shared constants and not counted.
func findingSize(f *Finding) int {
	return int(unsafe.Sizeof(*f))*5/4 + len(f.ClientID) + len(f.Expected) + len(f.Observed) +
		len(f.Message) + len(f.Group) + len(f.MemberID)
}

// jsonFinding fixes the field order and names of SPEC.md section 5.
type jsonFinding struct {
	Time          string   `json:"time"`
	Rule          string   `json:"rule"`
	Severity      Severity `json:"severity"`
	KIP           string   `json:"kip"`
	Confidence    string   `json:"confidence"`
	Frame         uint64   `json:"frame"`
	Conn          jsonConn `json:"conn"`
	API           string   `json:"api"`
	APIKey        int16    `json:"api_key"`
	APIVersion    int16    `json:"api_version"`
	CorrelationID int32    `json:"correlation_id"`
	ClientID      *string  `json:"client_id"` // null when the connection sent none, as in dump
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

// TimeFormat is RFC 3339 in UTC with exactly six fractional digits.
const TimeFormat = "2006-01-02T15:04:05.000000Z07:00"

func (f *Finding) toJSON() jsonFinding {
	j := jsonFinding{
		Time: f.Time.UTC().Format(TimeFormat), Rule: f.Rule, Severity: f.Severity, KIP: f.KIP,
		Confidence: f.Confidence.String(), Frame: f.Frame,
		Conn: jsonConn{Client: f.Conn.Client.String(), Broker: f.Conn.Broker.String()},
		API:  f.API, APIKey: f.APIKey, APIVersion: f.APIVersion, CorrelationID: f.CorrelationID,
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

// MarshalJSON writes the finding in SPEC.md section 5's shape.
func (f Finding) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(f.toJSON()); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// WriteFindingJSON writes f as one NDJSON line.
func WriteFindingJSON(w io.Writer, f *Finding) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(f.toJSON())
}
