package pipeline_test

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"regexp"
	"testing"

	"github.com/kwatch/kwatch/audit"
	"github.com/kwatch/kwatch/capture"
	"github.com/kwatch/kwatch/internal/corpus"
	"github.com/kwatch/kwatch/internal/pcapgen"
	"github.com/kwatch/kwatch/pipeline"
)

// variant is a way a mirror or a tunnel delivers a capture (SPEC 2.1).
type variant struct {
	name string
	make func([]byte) ([]byte, error)
	// frames: the variant keeps packet numbers (no fragments added).
	frames bool
	tunnel capture.Tunnel
}

func variants() []variant {
	tunnels := map[pcapgen.Encap]capture.Tunnel{
		pcapgen.EncapVXLAN: capture.TunnelVXLAN, pcapgen.EncapGENEVE: capture.TunnelGENEVE,
		pcapgen.EncapGENEVEIP: capture.TunnelGENEVE, pcapgen.EncapGRE: capture.TunnelGRE,
		pcapgen.EncapGREIP: capture.TunnelGRE, pcapgen.EncapERSPAN2: capture.TunnelERSPAN2,
		pcapgen.EncapERSPAN3: capture.TunnelERSPAN3, pcapgen.EncapIPIP: capture.TunnelIPIP,
		pcapgen.EncapIPv6Outer: capture.TunnelVXLAN, pcapgen.EncapVLANInVXLAN: capture.TunnelVXLAN,
	}
	var vs []variant
	for _, enc := range pcapgen.Encaps() {
		vs = append(vs, variant{enc.String(), func(b []byte) ([]byte, error) { return pcapgen.WrapCapture(b, enc) }, true, tunnels[enc]})
	}
	wrapFrag := func(enc pcapgen.Encap, size int, reverse bool) func([]byte) ([]byte, error) {
		return func(b []byte) ([]byte, error) {
			w, err := pcapgen.WrapCapture(b, enc)
			if err != nil {
				return nil, err
			}
			return pcapgen.FragmentCapture(w, size, reverse)
		}
	}
	fragWrap := func(b []byte) ([]byte, error) {
		f, err := pcapgen.FragmentCapture(b, 32, true)
		if err != nil {
			return nil, err
		}
		return pcapgen.WrapCapture(f, pcapgen.EncapGRE)
	}
	return append(vs,
		variant{"vxlan, outer ipv4 fragments reversed", wrapFrag(pcapgen.EncapVXLAN, 64, true), false, capture.TunnelVXLAN},
		variant{"vxlan, outer ipv6 fragments", wrapFrag(pcapgen.EncapIPv6Outer, 128, false), false, capture.TunnelVXLAN},
		variant{"inner fragments in gre", fragWrap, false, capture.TunnelGRE},
	)
}

// outcome is what must not change when a capture arrives wrapped.
type outcome struct {
	Findings []map[string]any // exported fields: unexported ones order, not report
	Coverage map[string]uint64
	Start    string
	End      string
	Counts   [4]uint64 // connections, Kafka connections, requests, responses
}

// frameRef is a packet number in a finding's message.
var frameRef = regexp.MustCompile(`frame [0-9]+`)

func auditBytes(t *testing.T, b []byte, profile string, workers int, frames bool) (outcome, pipeline.Stats) {
	t.Helper()
	src, err := capture.NewReader(bytes.NewReader(b), "wrapped.pcap", capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	p, err := audit.ParseProfile(profile)
	if err != nil {
		t.Fatal(err)
	}
	a := audit.New(audit.Options{Profile: p})
	st, err := pipeline.Run(context.Background(), src, pipeline.Options{HeaderV3: audit.HeaderV3(p), Workers: workers}, a)
	if err != nil {
		t.Fatal(err)
	}
	a.AddCapture(st.Packets, st.Bytes, st.Connections)
	rep := a.Finish(st.LastTime)
	o := outcome{Coverage: rep.Totals.Coverage, Start: rep.Start, End: rep.End,
		Counts: [4]uint64{rep.Totals.Connections, rep.Totals.KafkaConnections, rep.Totals.Requests, rep.Totals.Responses}}
	for _, f := range rep.Findings {
		if !frames { // fragments renumber packets
			f.Frame, f.Conn.StartFrame = 0, 0
			f.Message = frameRef.ReplaceAllString(f.Message, "frame N")
		}
		o.Findings = append(o.Findings, exported(f))
	}
	return o, st
}

// exported is v's exported fields by name.
func exported(v any) map[string]any {
	rv := reflect.ValueOf(v)
	m := map[string]any{}
	for i := range rv.NumField() {
		if f := rv.Type().Field(i); f.IsExported() {
			m[f.Name] = rv.Field(i).Interface()
		}
	}
	return m
}

// TestCorpusThroughTunnels: every corpus capture, delivered in every
// encapsulation, with outer or inner fragments, audits to the same
// findings and coverage as the plain capture, on one goroutine and
// sharded, and the decoder says what it unwrapped.
func TestCorpusThroughTunnels(t *testing.T) {
	if testing.Short() {
		t.Skip("every corpus capture in every encapsulation")
	}
	vs := variants()
	for _, s := range corpus.Scenarios() {
		plainBytes, err := s.Capture()
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range vs {
			wrapped, err := v.make(plainBytes)
			if err != nil {
				t.Fatalf("%s %s: %v", s.Name, v.name, err)
			}
			for _, workers := range []int{1, 2} {
				name := fmt.Sprintf("%s/%s/workers=%d", s.Name, v.name, workers)
				want, _ := auditBytes(t, plainBytes, s.ProfileName(), workers, v.frames)
				got, st := auditBytes(t, wrapped, s.ProfileName(), workers, v.frames)
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s: audit differs from the plain capture's:\n got %+v\nwant %+v", name, got, want)
				}
				if !v.frames && (st.Fragments.Reassembled == 0 || st.Fragments.Dropped != [len(st.Fragments.Dropped)]uint64{}) {
					t.Errorf("%s: fragments %+v", name, st.Fragments)
				}
				if st.Tunnels[v.tunnel] == 0 || st.NotTCP != st.Layers[capture.ReasonFragment] {
					t.Errorf("%s: tunnels %v, not TCP %d, layers %v", name, st.Tunnels, st.NotTCP, st.Layers)
				}
			}
		}
	}
}

// BenchmarkReadTunnels runs the pipeline over one conversation (identity
// traffic, Produce and Fetch up to 70 KB) plain and in each encapsulation.
// SetBytes is the plain capture's size for all, so MB/s compare directly
// (target: every tunnel at 0.9x plain or better).
func BenchmarkReadTunnels(b *testing.B) {
	c := pcapgen.New(pcapgen.Options{})
	for range 16 {
		conversation(c, pcapgen.ConnOptions{}, pcapgen.ConnOptions{})
	}
	plain, err := c.Bytes()
	if err != nil {
		b.Fatal(err)
	}
	run := func(b *testing.B, data []byte) {
		b.SetBytes(int64(len(plain)))
		b.ReportAllocs()
		for b.Loop() {
			src, err := capture.NewReader(bytes.NewReader(data), "bench.pcap", capture.Options{})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := pipeline.Run(context.Background(), src, pipeline.Options{}, audit.New(audit.Options{})); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("plain", func(b *testing.B) { run(b, plain) })
	for _, v := range variants() {
		data, err := v.make(plain)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(v.name, func(b *testing.B) { run(b, data) })
	}
}
