package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/kwatch/kwatch/internal/pcapgen"
)

// place is where a packet of the original capture lands after a split.
type place struct {
	capture string
	frame   uint64
}

// splitCapture writes the packets of the pcap at src into one file per
// key that part returns (part sees the packet and its 1-based frame), in
// dir, and returns the files in order of first appearance and where each
// original frame went.
func splitCapture(t *testing.T, src, dir string, part func(frame int, data []byte) string) ([]string, map[uint64]place) {
	t.Helper()
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r interface {
		ReadPacketData() ([]byte, gopacket.CaptureInfo, error)
		LinkType() layers.LinkType
	}
	if strings.HasSuffix(src, ".pcapng") {
		r, err = pcapgo.NewNgReader(f, pcapgo.DefaultNgReaderOptions)
	} else {
		r, err = pcapgo.NewReader(f)
	}
	if err != nil {
		t.Fatal(err)
	}
	type out struct {
		path string
		file *os.File
		w    *pcapgo.Writer
		n    uint64
	}
	outs := map[string]*out{}
	var order []string
	where := map[uint64]place{}
	for frame := 1; ; frame++ {
		data, ci, err := r.ReadPacketData()
		if err != nil {
			break
		}
		key := part(frame, data)
		o := outs[key]
		if o == nil {
			o = &out{path: filepath.Join(dir, key+".pcap")}
			if o.file, err = os.Create(o.path); err != nil {
				t.Fatal(err)
			}
			o.w = pcapgo.NewWriterNanos(o.file)
			if err := o.w.WriteFileHeader(65535, r.LinkType()); err != nil {
				t.Fatal(err)
			}
			outs[key] = o
			order = append(order, o.path)
		}
		if err := o.w.WritePacket(ci, data); err != nil {
			t.Fatal(err)
		}
		o.n++
		where[uint64(frame)] = place{o.path, o.n}
	}
	for _, o := range outs {
		o.file.Close()
	}
	return order, where
}

// brokerOf names the broker host of an Ethernet/IPv4 packet: the address
// of the side whose port is 9092.
func brokerOf(_ int, data []byte) string {
	p := gopacket.NewPacket(data, layers.LayerTypeEthernet, gopacket.Default)
	ip, _ := p.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
	tcp, _ := p.Layer(layers.LayerTypeTCP).(*layers.TCP)
	if ip == nil || tcp == nil {
		return "other"
	}
	if tcp.SrcPort == 9092 {
		return "broker-" + ip.SrcIP.String()
	}
	return "broker-" + ip.DstIP.String()
}

type multiReport struct {
	Totals   json.RawMessage `json:"totals"`
	Findings []struct {
		Rule          string          `json:"rule"`
		Time          string          `json:"time"`
		Capture       string          `json:"capture"`
		Frame         uint64          `json:"frame"`
		Conn          json.RawMessage `json:"conn"`
		CorrelationID int32           `json:"correlation_id"`
		Expected      string          `json:"expected"`
		Observed      string          `json:"observed"`
	} `json:"findings"`
}

func readMulti(t *testing.T, args ...string) multiReport {
	t.Helper()
	code, stdout, stderr := runKwatch(append([]string{"read", "--format", "json", "--fail-on", "never"}, args...)...)
	if code != 0 {
		t.Fatalf("kwatch read %v: exit %d: %s", args, code, stderr)
	}
	var r multiReport
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestSeveralCapturesAreOne: SPEC.md 2.1, several capture points. A
// capture split into one file per broker host, read together, gives the
// findings of the whole capture, each naming the file it is in and the
// packet's number in that file; files rotated by time give the same
// report merged by time (the default) and with --concat.
func TestSeveralCapturesAreOne(t *testing.T) {
	whole := shipped("quickstart.pcap")
	want := readMulti(t, whole)
	if len(want.Findings) == 0 {
		t.Fatal("the whole capture has no finding to compare")
	}
	splits := map[string]func(int, []byte) string{
		"per-broker": brokerOf,
		"rotated":    func(frame int, _ []byte) string { return fmt.Sprintf("rotated-%d", frame/40) },
	}
	for name, part := range splits {
		t.Run(name, func(t *testing.T) {
			files, where := splitCapture(t, whole, t.TempDir(), part)
			if len(files) < 2 {
				t.Fatalf("split into %d files", len(files))
			}
			// Merging must not depend on the order the files are named
			// in, nor on the number of workers.
			rev := slices.Clone(files)
			slices.Reverse(rev)
			for _, args := range [][]string{files, rev, append([]string{"--workers", "3"}, files...)} {
				got := readMulti(t, args...)
				if string(got.Totals) != string(want.Totals) {
					t.Errorf("totals differ:\n got %s\nwant %s", got.Totals, want.Totals)
				}
				if len(got.Findings) != len(want.Findings) {
					t.Fatalf("%d findings, want %d", len(got.Findings), len(want.Findings))
				}
				for i, w := range want.Findings {
					g := got.Findings[i]
					at := where[w.Frame]
					if g.Rule != w.Rule || g.Time != w.Time || string(g.Conn) != string(w.Conn) ||
						g.CorrelationID != w.CorrelationID || g.Expected != w.Expected || g.Observed != w.Observed {
						t.Errorf("finding %d: %+v, want %+v", i, g, w)
					}
					if g.Capture != at.capture || g.Frame != at.frame {
						t.Errorf("finding %d (%s): capture %q frame %d, want %q frame %d", i, w.Rule, g.Capture, g.Frame, at.capture, at.frame)
					}
				}
			}
			if name == "rotated" {
				merged := readMulti(t, files...)
				concat := readMulti(t, append([]string{"--concat"}, files...)...)
				m, _ := json.Marshal(merged)
				c, _ := json.Marshal(concat)
				if string(m) != string(c) {
					t.Errorf("rotated files: --concat and merge disagree:\n%s\n%s", c, m)
				}
			}
		})
	}
}

// TestOneCaptureNamesNoCapture: with one file, findings carry no
// "capture" and frames are the file's own.
func TestOneCaptureNamesNoCapture(t *testing.T) {
	_, stdout, _ := runKwatch("read", "--format", "ndjson", "--fail-on", "never", shipped("quickstart.pcap"))
	var f map[string]any
	line, _, _ := strings.Cut(stdout, "\n")
	if err := json.Unmarshal([]byte(line), &f); err != nil {
		t.Fatal(err)
	}
	if _, ok := f["capture"]; ok {
		t.Errorf("one capture, yet the finding names one: %v", f)
	}
}

// TestDumpNamesCaptures: kwatch dump over several files prints every PDU
// of the whole capture once, each naming its file and its frame there.
func TestDumpNamesCaptures(t *testing.T) {
	whole := shipped("quickstart.pcap")
	files, where := splitCapture(t, whole, t.TempDir(), brokerOf)
	_, all, _ := runKwatch("dump", "--format", "ndjson", whole)
	_, split, _ := runKwatch("dump", "--format", "ndjson", files[1], files[0])
	wantLines, gotLines := strings.Split(strings.TrimSpace(all), "\n"), strings.Split(strings.TrimSpace(split), "\n")
	if len(gotLines) != len(wantLines) {
		t.Fatalf("%d lines from the split files, %d from the whole", len(gotLines), len(wantLines))
	}
	for i := range wantLines {
		var w, g struct {
			Kind    string `json:"kind"`
			Capture string `json:"capture"`
			Frame   uint64 `json:"frame"`
		}
		if err := json.Unmarshal([]byte(wantLines[i]), &w); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(gotLines[i]), &g); err != nil {
			t.Fatal(err)
		}
		if at := where[w.Frame]; g.Kind != w.Kind || g.Capture != at.capture || g.Frame != at.frame {
			t.Errorf("line %d: %s %q #%d, want %s %q #%d", i, g.Kind, g.Capture, g.Frame, w.Kind, at.capture, at.frame)
		}
	}
}

// TestReportNamesWhatWasUnwrapped: a capture taken from a VXLAN mirror and
// cut into IP fragments gives the plain capture's findings, and the report
// says what it unwrapped.
func TestReportNamesWhatWasUnwrapped(t *testing.T) {
	plain, err := os.ReadFile(shipped("quickstart.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	wrapped, err := pcapgen.WrapCapture(plain, pcapgen.EncapVXLAN)
	if err != nil {
		t.Fatal(err)
	}
	if wrapped, err = pcapgen.FragmentCapture(wrapped, 64, false); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "mirror.pcap")
	if err := os.WriteFile(path, wrapped, 0o600); err != nil {
		t.Fatal(err)
	}
	var got, want struct {
		Totals struct {
			Unwrapped      map[string]uint64 `json:"unwrapped"`
			FindingsByRule map[string]uint64 `json:"findings_by_rule"`
		} `json:"totals"`
	}
	for path, r := range map[string]any{shipped("quickstart.pcap"): &want, path: &got} {
		_, stdout, stderr := runKwatch("read", "--format", "json", "--fail-on", "never", path)
		if err := json.Unmarshal([]byte(stdout), r); err != nil {
			t.Fatalf("%s: %v: %s", path, err, stderr)
		}
	}
	if len(want.Totals.Unwrapped) != 0 {
		t.Errorf("the plain capture unwrapped %v", want.Totals.Unwrapped)
	}
	if got.Totals.Unwrapped["vxlan"] == 0 || got.Totals.Unwrapped["ip-fragments-reassembled"] == 0 {
		t.Errorf("unwrapped %v: want vxlan and reassembled fragments", got.Totals.Unwrapped)
	}
	if !maps.Equal(got.Totals.FindingsByRule, want.Totals.FindingsByRule) {
		t.Errorf("findings %v, want the plain capture's %v", got.Totals.FindingsByRule, want.Totals.FindingsByRule)
	}
}
