package pipeline_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kwatch/kwatch/audit"
	"github.com/kwatch/kwatch/capture"
	"github.com/kwatch/kwatch/decode"
	"github.com/kwatch/kwatch/internal/pcapgen"
	"github.com/kwatch/kwatch/pipeline"
)

// report runs the pipeline and the auditor over data and returns the full
// JSON report and the event lines the auditor was fed. plain hides that the
// source can retain packets, so the sharded run copies them.
func report(t *testing.T, data []byte, name string, opts pipeline.Options, prof audit.Profile, plain bool) ([]byte, []string) {
	t.Helper()
	src, err := capture.NewReader(bytes.NewReader(data), name, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var in capture.Source = src
	if plain {
		in = plainSource{src}
	}
	var rec strict
	a := audit.New(audit.Options{Profile: prof})
	opts.HeaderV3 = audit.HeaderV3(prof)
	st, err := pipeline.Run(context.Background(), in, opts, tee{a, &rec})
	if err != nil {
		t.Fatalf("pipeline: %v", err)
	}
	a.AddCapture(st.Packets, st.Bytes, st.Connections)
	rep := a.Finish(st.LastTime)
	var out bytes.Buffer
	if err := rep.WriteJSON(&out); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&out, "\nstats: %+v\nreassembly: %+v\n", st, st.Reassembly)
	return out.Bytes(), rec.lines
}

// TestWorkersDeterministic: the report (and the event sequence behind it)
// is byte for byte the same for 1, 2 and 4 workers, on every corpus capture
// and on generated multi-connection captures, with batches cut small so
// that steps cross batch boundaries, and with an idle timeout so short that
// every idle flush ends connections on several shards at once.
func TestWorkersDeterministic(t *testing.T) {
	type input struct {
		name string
		data []byte
	}
	var inputs []input
	files, _ := filepath.Glob("../testdata/pcaps/*.pcap*")
	if len(files) == 0 {
		t.Fatal("no corpus captures in ../testdata/pcaps")
	}
	for _, f := range files {
		data, err := readFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, input{filepath.Base(f), data})
	}
	for _, bo := range []pcapgen.BulkOptions{
		{Connections: 40, Requests: 3000, PayloadSize: 3000, SplitFraction: 0.3, Seed: 7},
		// Over 1 s of packet time, so that idle flushes happen.
		{Connections: 30, Requests: 16000, PayloadSize: 200, SplitFraction: 0.1, Seed: 9},
		{Connections: 9, Requests: 400, PayloadSize: 100000, MTU: 65535, Seed: 8, Link: pcapgen.LinkNull},
	} {
		var buf bytes.Buffer
		if _, err := pcapgen.WriteBulk(&buf, bo); err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, input{fmt.Sprintf("bulk-%d-conns", bo.Connections), buf.Bytes()})
	}
	tests := []struct {
		name string
		opts pipeline.Options
		prof audit.Profile
	}{
		{name: "seed", prof: audit.ProfileSeed},
		{name: "accepted-2026 short batches", opts: pipeline.WithBatchSteps(pipeline.Options{}, 7), prof: audit.ProfileAccepted2026},
		{name: "idle flushes", opts: pipeline.WithBatchSteps(pipeline.Options{IdleTimeout: time.Microsecond}, 64), prof: audit.ProfileSeed},
		{name: "ports", opts: pipeline.Options{Ports: []uint16{9092}}, prof: audit.ProfileSeed},
	}
	for _, tt := range tests {
		for _, in := range inputs {
			t.Run(tt.name+"/"+in.name, func(t *testing.T) {
				want, wantEv := report(t, in.data, in.name, tt.opts, tt.prof, false)
				if len(wantEv) == 0 && strings.HasPrefix(in.name, "bulk") {
					t.Fatal("no events: the comparison would prove nothing")
				}
				for _, run := range []struct {
					workers int
					plain   bool
				}{{2, false}, {4, false}, {2, true}} {
					o := tt.opts
					o.Workers = run.workers
					got, gotEv := report(t, in.data, in.name, o, tt.prof, run.plain)
					if d := diff(wantEv, gotEv); d != "" {
						t.Fatalf("%+v: events differ from 1 worker:\n%s", run, d)
					}
					if !bytes.Equal(want, got) {
						t.Fatalf("%+v: report differs from 1 worker:\n--- 1\n%s\n--- %+v\n%s", run, want, run, got)
					}
				}
			})
		}
	}
}

// plainSource is a Source that cannot retain packets.
type plainSource struct{ capture.Source }

// tee feeds two sinks.
type tee struct{ a, b decode.Sink }

func (t tee) Event(e *decode.Event) { t.a.Event(e); t.b.Event(e) }

// strict records every event with its kind, connection and frame.
type strict struct{ lines []string }

func (s *strict) Event(e *decode.Event) {
	s.lines = append(s.lines, fmt.Sprintf("%d %v %v-%v@%d %s", e.Frame, e.Kind, e.Conn.Client, e.Conn.Broker, e.Conn.StartFrame, line(e)))
}

func readFile(path string) ([]byte, error) { return os.ReadFile(path) }

// TestHeldCapSameForAnyWorkers: the cap on bytes held aside for a late SYN
// bites, and bites the same way for 1, 2 and 4 workers (it is shared out
// to the parts of the connection table, not to the workers): the report,
// the events and the counters are byte for byte the same. The capture is
// bulk traffic without its SYNs, so every connection is held.
func TestHeldCapSameForAnyWorkers(t *testing.T) {
	var buf bytes.Buffer
	if _, err := pcapgen.WriteBulk(&buf, pcapgen.BulkOptions{Connections: 120, Requests: 480, PayloadSize: 6000, Seed: 11}); err != nil {
		t.Fatal(err)
	}
	files, _, _, err := pcapgen.SplitCapture(buf.Bytes(), func(s pcapgen.Segment) string {
		if s.SYN {
			return "syn"
		}
		return "rest"
	})
	if err != nil {
		t.Fatal(err)
	}
	data := files["rest"]
	opts := pipeline.WithHeldBytes(pipeline.Options{}, 32*16<<10) // 16 KiB a part
	want, wantEv := report(t, data, "no-syns", opts, audit.ProfileSeed, false)
	if !bytes.Contains(want, []byte("HeldCapped:")) || bytes.Contains(want, []byte("HeldCapped:0 ")) {
		t.Fatalf("the cap never bit: the comparison would prove nothing\n%s", want[bytes.Index(want, []byte("reassembly:")):])
	}
	// With the default cap the same capture holds every connection in full.
	if def, _ := report(t, data, "no-syns", pipeline.Options{}, audit.ProfileSeed, false); !bytes.Contains(def, []byte("HeldCapped:0}")) {
		t.Errorf("default cap bit on %d bytes of capture:\n%s", len(data), def[bytes.Index(def, []byte("reassembly:")):])
	}
	for _, workers := range []int{2, 4} {
		o := opts
		o.Workers = workers
		got, gotEv := report(t, data, "no-syns", o, audit.ProfileSeed, false)
		if d := diff(wantEv, gotEv); d != "" {
			t.Fatalf("%d workers: events differ from 1 worker:\n%s", workers, d)
		}
		if !bytes.Equal(want, got) {
			t.Fatalf("%d workers: report differs from 1 worker:\n--- 1\n%s\n--- %d\n%s", workers, want, workers, got)
		}
	}
}
