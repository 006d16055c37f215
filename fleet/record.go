// Package fleet carries kwatch's audit over Kafka (SPEC.md section 7):
// agents, where the packets are, run the per-connection part of the
// auditor and publish its steps (audit.Observation, and a verdict for each
// finding it judged) as versioned records keyed by client identity; an
// aggregator consumes them from every agent, merges them by capture time
// and runs the per-instance part, so that its findings are those of kwatch
// read over the same captures merged by time.
//
// What crosses the wire is what the per-connection part tells the
// per-instance part: identities, member and telemetry IDs, verdicts. Never
// packet bytes, SASL tokens or TLS secrets (the decoder never puts them in
// an event, and an observation holds less than an event).
//
// Concurrency: a Publisher is used by the pipeline's goroutine; an
// Aggregator by one goroutine. Buffers: records are encoded into buffers
// the package owns.
package fleet

import (
	"encoding/json"
	"fmt"
	"maps"

	"github.com/kwatch/kwatch/audit"
	"github.com/kwatch/kwatch/capture"
	"github.com/kwatch/kwatch/pipeline"
)

// RecordVersion is the version of Record this package writes and reads.
// Version 1 carried decoded events; version 2 carries observations.
const RecordVersion = 2

// maxPartitions bounds the partitions an aggregator waits on per agent.
const maxPartitions = 4096

// Record kinds.
const (
	// KindObs carries the steps the agent's per-connection audit made of
	// one event (or of ending one connection).
	KindObs = "obs"
	// KindMark is a watermark: the agent has published, to every
	// partition, every record made before At. Its Totals.Audit holds the
	// agent's per-connection counts so far.
	KindMark = "mark"
	// KindEnd says an agent's capture ended and carries its totals.
	KindEnd = "end"
)

// Record is one message on the fleet topic (README, "Fleet records").
type Record struct {
	V     int    `json:"v"`
	Kind  string `json:"kind"`
	Agent string `json:"agent"`
	// Seq numbers an agent's records from 1, in the order they were made
	// (over every partition: the merge orders an agent's records by it).
	Seq uint64 `json:"seq"`
	// At is the capture time (Unix nanoseconds) of the packet the agent
	// was analyzing when it made the record: the order in which kwatch read
	// over merged captures would have made it. The aggregator merges by it.
	At int64 `json:"at"`
	// Parts is how many partitions the agent writes to: an aggregator
	// waits for its records (or watermarks) on each it consumes.
	Parts int32 `json:"parts"`
	// Capture names the capture file (or the agent) the steps' frames are
	// numbered in.
	Capture string `json:"capture,omitempty"`
	Steps   []Step `json:"steps,omitempty"`
	// Final: steps made as the agent's capture ended, for the connections
	// still open. Their time is the end of every agent's capture (as kwatch
	// read ends them at the end of all its input): the aggregator sets it.
	Final  bool    `json:"fin,omitempty"`
	Totals *Totals `json:"totals,omitempty"`

	// Where the aggregator consumed the record.
	partition int32
	offset    int64
}

// Step is one step of the per-connection audit: an audit.Observation in
// its binary encoding and, for audit.StepVerdict, the audit.Verdict's.
// Frames in them are numbers in the record's capture.
type Step struct {
	Obs     []byte `json:"o"`
	Verdict []byte `json:"d,omitempty"`
}

// Totals is what an agent read, sent with its end record (with a
// watermark, Audit only).
type Totals struct {
	Packets     uint64 `json:"packets"`
	Bytes       uint64 `json:"bytes"`
	Connections uint64 `json:"connections"`
	// Last is the capture time of the agent's last packet (Unix ns).
	Last int64 `json:"last"`
	// NotKafka, Evicted and Unwrapped: the pipeline's counts of
	// connections judged not Kafka, evicted by the connection table, and
	// what the capture layers unwrapped (audit.Auditor.AddNotKafka...).
	NotKafka  uint64            `json:"not_kafka,omitempty"`
	Evicted   uint64            `json:"evicted,omitempty"`
	Unwrapped map[string]uint64 `json:"unwrapped,omitempty"`
	// Audit: what the agent's per-connection audit counted.
	Audit audit.ConnTotals `json:"audit"`
}

// TotalsOf is what an agent's pipeline counted, for its end record: what
// kwatch read gives its auditor after the run.
func TotalsOf(st pipeline.Stats) Totals {
	unwrapped := st.Tunnels.Named()
	maps.Copy(unwrapped, st.Fragments.Named())
	return Totals{Packets: st.Packets, Bytes: st.Bytes, Connections: st.Connections, Last: st.LastTime.UnixNano(),
		NotKafka: st.Decoders.NotKafka, Evicted: st.Reassembly.Evicted, Unwrapped: unwrapped}
}

// add sums o's pipeline counts into t (the audit's go to the auditor).
func (t *Totals) add(o *Totals) {
	t.Packets += o.Packets
	t.Bytes += o.Bytes
	t.Connections += o.Connections
	t.Last = max(t.Last, o.Last)
	t.NotKafka += o.NotKafka
	t.Evicted += o.Evicted
	for k, n := range o.Unwrapped {
		if t.Unwrapped == nil {
			t.Unwrapped = map[string]uint64{}
		}
		t.Unwrapped[k] += n
	}
}

// captureCounts takes a pipeline's counts (audit.Auditor and
// audit.InstanceAuditor).
type captureCounts interface {
	AddCapture(packets, bytes, connections uint64)
	AddNotKafka(n uint64)
	AddEvicted(n uint64)
	AddUnwrapped(counts map[string]uint64)
}

// AddTo gives an auditor the pipeline counts of t (the agents' totals
// summed): what kwatch read gives its auditor after the pipeline's run.
func (t *Totals) AddTo(a captureCounts) {
	a.AddCapture(t.Packets, t.Bytes, t.Connections)
	a.AddNotKafka(t.NotKafka)
	a.AddEvicted(t.Evicted)
	a.AddUnwrapped(maps.Clone(t.Unwrapped))
}

// frames renumbers the frames of a step: in an agent, from the pipeline's
// to numbers in the record's capture; in the aggregator, back into its
// own. Frame 0 (none) stays 0.
func frames(o *audit.Observation, v *audit.Verdict, f func(uint64) uint64) {
	for _, p := range []*uint64{&o.Conn.StartFrame, &o.Frame, &v.RequestFrame} {
		if *p != 0 {
			*p = f(*p)
		}
	}
}

// decodeSteps reads r's steps into the auditor's form, their frames packed
// with capture index idx; false when one is malformed.
func (r *Record) decodeSteps(into []audit.Observed, idx int) ([]audit.Observed, bool) {
	into = into[:0]
	for _, s := range r.Steps {
		var st audit.Observed
		if st.UnmarshalBinary(s.Obs) != nil {
			return into, false
		}
		if st.Step == audit.StepVerdict && st.Verdict.UnmarshalBinary(s.Verdict) != nil {
			return into, false
		}
		frames(&st.Observation, &st.Verdict, func(n uint64) uint64 { return capture.PackFrame(idx, n) })
		into = append(into, st)
	}
	return into, true
}

// ParseRecord decodes one record and checks its version and kind.
func ParseRecord(b []byte) (*Record, error) {
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("fleet: record: %w", err)
	}
	switch {
	case r.V != RecordVersion:
		return nil, fmt.Errorf("fleet: record version %d, this kwatch reads %d", r.V, RecordVersion)
	case r.Agent == "":
		return nil, fmt.Errorf("fleet: record without an agent")
	case r.Kind == KindObs && len(r.Steps) == 0, r.Kind == KindEnd && r.Totals == nil:
		return nil, fmt.Errorf("fleet: %s record without its payload", r.Kind)
	case r.Kind != KindObs && r.Kind != KindEnd && r.Kind != KindMark:
		return nil, fmt.Errorf("fleet: unknown record kind %q", r.Kind)
	}
	return &r, nil
}
