package pipeline_test

import (
	"bytes"
	"context"
	"io"
	"math"
	"testing"

	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/kwatch/kwatch/audit"
	"github.com/kwatch/kwatch/capture"
	"github.com/kwatch/kwatch/internal/corpus"
	"github.com/kwatch/kwatch/pipeline"
)

// withTSOffset rewrites a pcap as pcapng whose interface has the given
// if_tsoffset, timestamps unchanged.
func withTSOffset(t *testing.T, in []byte, offset uint64) []byte {
	t.Helper()
	r, err := pcapgo.NewReader(bytes.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	w, err := pcapgo.NewNgWriterInterface(&out, pcapgo.NgInterface{LinkType: layers.LinkTypeEthernet, TimestampOffset: offset},
		pcapgo.NgWriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for {
		data, ci, err := r.ReadPacketData()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WritePacket(ci, data); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// TestAbsurdTSOffsetKeepsEnd (issue 12.8): a pcapng if_tsoffset of
// INT64_MAX gave the year 292277026596 and a report without "end"; the
// offset is now ignored, so the report has the plain capture's start and
// end. A sane offset still moves both.
func TestAbsurdTSOffsetKeepsEnd(t *testing.T) {
	s := corpus.Scenarios()[0]
	plain, err := s.Capture()
	if err != nil {
		t.Fatal(err)
	}
	report := func(b []byte) *audit.Report {
		src, err := capture.NewReader(bytes.NewReader(b), "ts.pcapng", capture.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		a := audit.New(audit.Options{})
		st, err := pipeline.Run(context.Background(), src, pipeline.Options{}, a)
		if err != nil {
			t.Fatal(err)
		}
		return a.Finish(st.LastTime)
	}
	want := report(plain)
	if want.End == "" {
		t.Fatalf("%s: plain report without end", s.Name)
	}
	got := report(withTSOffset(t, plain, math.MaxInt64))
	if got.Start != want.Start || got.End != want.End {
		t.Errorf("if_tsoffset INT64_MAX: %q .. %q, want %q .. %q", got.Start, got.End, want.Start, want.End)
	}
	day := report(withTSOffset(t, plain, 86400))
	if day.End == "" || day.End == want.End || day.Start == want.Start {
		t.Errorf("if_tsoffset 1 day: %q .. %q, plain %q .. %q", day.Start, day.End, want.Start, want.End)
	}
}
