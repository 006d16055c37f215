package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kwatch/kwatch/audit"
	"github.com/kwatch/kwatch/capture"
	"github.com/kwatch/kwatch/internal/pcapgen"
	"github.com/kwatch/kwatch/pipeline"
)

// agentRecords replays capture data as agent name over parts partitions,
// without Kafka, and returns what it published, by partition. Its
// watermarks come every 5 ms of capture time, so that the counts they
// carry reach the aggregator before the end.
func agentRecords(t *testing.T, src capture.Source, o PublisherOptions, parts int32) [][]*kgo.Record {
	t.Helper()
	out := make([][]*kgo.Record, parts)
	ao := o.Audit
	p := &Publisher{o: o, parts: parts}
	p.start(func(r *kgo.Record) {
		r.Offset = int64(len(out[r.Partition]))
		out[r.Partition] = append(out[r.Partition], r)
	})
	p.markEvery = int64(5 * time.Millisecond)
	st, err := pipeline.Run(context.Background(), p.Tap(src), pipeline.Options{HeaderV3: audit.HeaderV3(ao.Profile)}, p)
	if err != nil {
		t.Fatal(err)
	}
	p.end(TotalsOf(st))
	return out
}

// aggregated runs the per-instance part over records as an aggregator
// that gets the partitions one after the other, last first, and merges
// after each (an agent's records of several partitions arrive apart).
func aggregated(t *testing.T, parts [][]*kgo.Record, ao audit.Options) *audit.Report {
	t.Helper()
	var a *Aggregator
	ao.SingleGoroutine = true
	ao.NameFrame = func(f uint64) (string, uint64) { return a.NameFrame(f) }
	aud := audit.NewInstanceAuditor(ao)
	a = newAggregator(AggregatorOptions{}, aud, "t")
	for i := len(parts) - 1; i >= 0; i-- {
		for _, r := range parts[i] {
			a.add(r)
		}
		a.merge(context.Background(), false)
	}
	a.merge(context.Background(), true)
	if _, bad, waiting := a.Stats(); bad != 0 || waiting != 0 {
		t.Fatalf("%d records unreadable, %d not merged", bad, waiting)
	}
	a.totals.AddTo(aud)
	return aud.Finish(a.totals.LastTime())
}

// read is kwatch read over one capture, its frames named as an agent of
// that name names them.
func read(t *testing.T, src capture.Source, name string, ao audit.Options) *audit.Report {
	t.Helper()
	ao.SingleGoroutine = true
	ao.NameFrame = func(f uint64) (string, uint64) { _, n := capture.SplitFrame(f); return name, n }
	aud := audit.New(ao)
	st, err := pipeline.Run(context.Background(), src, pipeline.Options{HeaderV3: audit.HeaderV3(ao.Profile)}, aud)
	if err != nil {
		t.Fatal(err)
	}
	tot := TotalsOf(st)
	tot.AddTo(aud)
	return aud.Finish(st.LastTime)
}

// openCapture opens a capture file, closed when the test ends.
func openCapture(t *testing.T, path string) capture.Source {
	t.Helper()
	src, err := capture.Open(path, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return src
}

// generated writes c to a file and opens it.
func generated(t *testing.T, c *pcapgen.Capture) capture.Source {
	t.Helper()
	data, err := c.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "generated.pcap")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return openCapture(t, path)
}

// firstDiff names the first line where got differs from want.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range min(len(w), len(g)) {
		if w[i] != g[i] {
			return fmt.Sprintf("line %d:\n got %s\nwant %s", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf("the end: %d lines, want %d", len(g), len(w))
}

func reportJSON(t *testing.T, r *audit.Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestSplitEqualsOneAuditor: on every shipped capture, under both
// profiles, an agent's per-connection audit published over three
// partitions and an aggregator's per-instance audit over the records make
// the report one auditor makes over the capture, byte for byte.
func TestSplitEqualsOneAuditor(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("..", "testdata", "pcaps", "*.pcap*"))
	if len(paths) < 50 {
		t.Fatalf("%d shipped captures", len(paths))
	}
	findings := 0
	for _, prof := range []audit.Profile{audit.ProfileSeed, audit.ProfileAccepted2026} {
		for _, p := range paths {
			ao := audit.Options{Profile: prof}
			name := filepath.Base(p)
			want := read(t, openCapture(t, p), name, ao)
			got := aggregated(t, agentRecords(t, openCapture(t, p), PublisherOptions{Agent: name, Audit: ao}, 3), ao)
			findings += len(want.Findings)
			if w, g := reportJSON(t, want), reportJSON(t, got); w != g {
				t.Errorf("%s, %s: the split differs from one auditor at %s", name, prof, firstDiff(w, g))
			}
		}
	}
	if findings < 100 {
		t.Errorf("only %d findings over the shipped captures", findings)
	}
}

// TestRecordsCarryNoSecretsOrPayload: SPEC.md 7, an agent publishes
// identity observations, never packet bytes or SASL bytes: neither a SASL
// PLAIN password (raw tokens after SaslHandshake v0) nor a Produce
// payload appears in any record, while the connection's findings do.
func TestRecordsCarryNoSecretsOrPayload(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("sasl-app"), CorrelationID: 1})
	s.RoundTrip(pcapgen.SaslHandshake(0, "PLAIN"), pcapgen.SaslHandshakeResponse(0, "PLAIN"))
	cn.Send(pcapgen.SASLToken([]byte("\x00alice\x00hunter2-secret")))
	cn.Reply(pcapgen.SASLToken(nil))
	s.RoundTrip(pcapgen.Produce(9, "t", [16]byte{}, []byte("payload-marker-0123456789")), pcapgen.ProduceResponse(9, "t", [16]byte{}))
	s.Header.ClientID = pcapgen.Ptr("renamed")
	s.RoundTrip(pcapgen.Metadata(9, "t"), pcapgen.MetadataResponse(9, "h", 9092))
	cn.Close()
	src := generated(t, c)
	var all []byte
	var text []string
	for _, part := range agentRecords(t, src, PublisherOptions{Agent: "a"}, 2) {
		for _, r := range part {
			all = append(append(all, r.Key...), r.Value...)
			text = append(text, stepStrings(t, r.Value)...)
		}
	}
	if !slices.Contains(text, "client-id-changed") {
		t.Fatalf("the records hold no verdict: %q", text)
	}
	for _, secret := range []string{"hunter2", "alice", "payload-marker"} {
		if bytes.Contains(all, []byte(secret)) || strings.Contains(strings.Join(text, "\n"), secret) {
			t.Errorf("a record carries %q", secret)
		}
	}
}

// decodedRecord is the steps of a record.
func decodedRecord(t *testing.T, value []byte) []audit.Observed {
	t.Helper()
	r, err := ParseRecord(value)
	if err != nil {
		t.Fatal(err)
	}
	steps, ok := r.decodeSteps(nil, 0)
	if !ok {
		t.Fatalf("malformed steps: %s", value)
	}
	return steps
}

// stepStrings is every string a record's steps hold.
func stepStrings(t *testing.T, value []byte) []string {
	t.Helper()
	var out []string
	for _, s := range decodedRecord(t, value) {
		v := &s.Verdict
		out = append(out, s.ClientID, s.Group, s.MemberID, s.Software, s.SwVersion, v.Rule, v.Expected, v.Observed, v.Message, v.Group, v.MemberID)
	}
	return out
}

// TestRecordsKeyedByClient: SPEC.md 7, every observation of one client
// meets in one partition. Eight clients (four with instance IDs, four
// without), each with three connections from other ports to other
// brokers, published over three partitions: each client's steps are in one
// partition, and the clients spread over more than one.
func TestRecordsKeyedByClient(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	for i := range 8 {
		host := netip.AddrFrom4([4]byte{10, 1, 9, byte(i + 1)})
		h := pcapgen.RequestHeader{ClientID: pcapgen.Ptr(fmt.Sprint("app-", i)), CorrelationID: 1}
		if i%2 == 0 {
			h.InstanceID = &[16]byte{0: byte(i + 1), 6: 0x40, 8: 0x80}
		}
		for j := range 3 {
			cn := c.Conn(pcapgen.ConnOptions{Client: netip.AddrPortFrom(host, uint16(40000+j)),
				Broker: netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 0, byte(j + 1)}), 9092)})
			s := cn.Session(h)
			s.RoundTrip(pcapgen.Metadata(12, "t"), pcapgen.MetadataResponse(12, "h", 9092))
			cn.Close()
		}
	}
	src := generated(t, c)
	partOf := map[netip.Addr]map[int]bool{} // client host: partitions of its steps
	for p, recs := range agentRecords(t, src, PublisherOptions{Agent: "a"}, 3) {
		for _, r := range recs {
			for _, s := range decodedRecord(t, r.Value) {
				host := s.Conn.Client.Addr()
				if partOf[host] == nil {
					partOf[host] = map[int]bool{}
				}
				partOf[host][p] = true
			}
		}
	}
	used := map[int]bool{}
	for host, parts := range partOf {
		if len(parts) != 1 {
			t.Errorf("client %s: steps in partitions %v", host, parts)
		}
		maps.Copy(used, parts)
	}
	if len(partOf) != 8 || len(used) < 2 {
		t.Errorf("%d clients in %d partitions: nothing shown", len(partOf), len(used))
	}
}

// TestLiveAgentStopEndsItsConnections: a live agent that stops ends the
// connections still open at its last packet, and an aggregator streaming
// beside another agent that goes on applies that at once; a replay's end
// (the end of its input) waits behind the other agent, which could still
// send an earlier record.
func TestLiveAgentStopEndsItsConnections(t *testing.T) {
	for _, live := range []bool{true, false} {
		c := pcapgen.New(pcapgen.Options{})
		cn := c.Conn(pcapgen.ConnOptions{})
		s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("still-open"), InstanceID: &[16]byte{1, 6: 0x40, 8: 0x80}, CorrelationID: 1})
		s.RoundTrip(pcapgen.Metadata(12, "t"), pcapgen.MetadataResponse(12, "h", 9092))
		recs := agentRecords(t, generated(t, c), PublisherOptions{Agent: "a", Live: live}, 1)[0]
		aud := audit.NewInstanceAuditor(audit.Options{SingleGoroutine: true})
		a := newAggregator(AggregatorOptions{}, aud, "t")
		for _, r := range recs {
			a.add(r)
		}
		// Another agent, still capturing, a minute later.
		later, _ := json.Marshal(&Record{V: RecordVersion, Kind: KindMark, Agent: "b", Seq: 1, Parts: 1,
			At: pcapgen.BaseTime().Add(time.Minute).UnixNano()})
		a.add(&kgo.Record{Value: later, Offset: int64(len(recs))})
		a.merge(context.Background(), false)
		open := aud.Snapshot().Totals.OpenConnections
		_, _, waiting := a.Stats()
		if live && (open != 0 || waiting != 0 || a.totals.Packets == 0) {
			t.Errorf("live agent stopped: %d connections open, %d records waiting, %d packets counted", open, waiting, a.totals.Packets)
		}
		if !live && (open != 1 || waiting == 0) {
			t.Errorf("replay: %d connections open, %d records waiting; want its end to wait", open, waiting)
		}
	}
}
