package main

// Malformed and hostile capture files (README "Commands", SPEC.md sections 5
// and 6): truncated, damaged, odd byte orders, pcapng blocks, link types. Bad
// input gets a one-line error or a coverage event, never a panic, and nothing
// already analysed is lost. Hostile inputs run kwatch in a child process (the
// test binary re-run as TestCaptureFileHelperProcess), so that a panic shows
// as a failed test with its trace instead of ending the test binary.
// Expectations come from SPEC.md and README.md's "Rules: where SPEC.md is
// silent" only, never from kwatch's implementation.

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kwatch/kwatch/internal/pcapgen"
)

// SPEC 6 "offline: pcap or pcapng": every link layer a capture may have
// (Ethernet, 802.1Q, Linux cooked v1/v2 from `tcpdump -i any`, BSD
// loopback, raw IP) and every classic pcap variant give the same findings.
func TestCaptureFileLinkTypesAndFormats(t *testing.T) {
	base := func(o pcapgen.Options) []map[string]any {
		c, _, _ := bb3Changed(o)
		b, err := c.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), "cap")
		os.WriteFile(p, b, 0o600)
		return bb3Findings(t, bb3ReadJSON(t, p))
	}
	want := base(pcapgen.Options{})
	for _, l := range []pcapgen.Link{pcapgen.LinkVLAN, pcapgen.LinkSLL, pcapgen.LinkSLL2, pcapgen.LinkNull, pcapgen.LinkRaw} {
		if got := base(pcapgen.Options{Link: l}); !reflect.DeepEqual(got, want) {
			t.Errorf("link %s: findings differ:\n%v\n%v", l, got, want)
		}
	}
	for _, f := range []pcapgen.Format{pcapgen.FormatPCAPNanos, pcapgen.FormatPCAPBigEndian, pcapgen.FormatPCAPNanosBigEndian, pcapgen.FormatPCAPNG} {
		if got := base(pcapgen.Options{Format: f}); !reflect.DeepEqual(got, want) {
			t.Errorf("format %s: findings differ:\n%v\n%v", f, got, want)
		}
	}
}

// TestCaptureFileHelperProcess is no test: it is the child process of bb8dExec,
// running kwatch's command line with the arguments it is given.
func TestCaptureFileHelperProcess(t *testing.T) {
	enc := os.Getenv("BB8D_HELPER_ARGS")
	if enc == "" {
		t.Skip("child process of the tests that run kwatch through bb8dExec")
	}
	var args []string
	if err := json.Unmarshal([]byte(enc), &args); err != nil {
		fmt.Fprintln(os.Stderr, "bad BB8D_HELPER_ARGS:", err)
		os.Exit(99)
	}
	os.Exit(runWith(args, os.Stdin, os.Stdout, os.Stderr))
}

// bb8dAtMostOneLine asserts that stderr is empty or one line.
func bb8dAtMostOneLine(t *testing.T, what, stderr string) {
	t.Helper()
	if s := strings.TrimRight(stderr, "\n"); strings.Contains(s, "\n") {
		t.Errorf("%s: stderr has %d lines, want at most one:\n%s", what, strings.Count(s, "\n")+1, stderr)
	}
}

// bb8dNg writes pcapng blocks in one byte order (microsecond timestamps:
// no if_tsresol option).
type bb8dNg struct {
	o interface {
		binary.ByteOrder
		binary.AppendByteOrder
	}
	b []byte
}

func (n *bb8dNg) block(typ uint32, body []byte) {
	for len(body)%4 != 0 {
		body = append(body, 0)
	}
	total := uint32(12 + len(body))
	n.b = n.o.AppendUint32(n.b, typ)
	n.b = n.o.AppendUint32(n.b, total)
	n.b = append(n.b, body...)
	n.b = n.o.AppendUint32(n.b, total)
}

func (n *bb8dNg) shb() {
	body := n.o.AppendUint32(nil, 0x1a2b3c4d)
	body = n.o.AppendUint16(body, 1)
	body = n.o.AppendUint16(body, 0)
	body = n.o.AppendUint64(body, ^uint64(0))
	n.block(0x0a0d0d0a, body)
}

func (n *bb8dNg) idb(link uint16) {
	body := n.o.AppendUint16(nil, link)
	body = n.o.AppendUint16(body, 0)
	body = n.o.AppendUint32(body, 262144)
	n.block(1, body)
}

func (n *bb8dNg) epbBody(iface uint32, t time.Time, data []byte) []byte {
	us := uint64(t.UnixMicro())
	body := n.o.AppendUint32(nil, iface)
	body = n.o.AppendUint32(body, uint32(us>>32))
	body = n.o.AppendUint32(body, uint32(us))
	body = n.o.AppendUint32(body, uint32(len(data)))
	body = n.o.AppendUint32(body, uint32(len(data)))
	return append(body, data...)
}

func (n *bb8dNg) epb(r bb8dRec) { n.block(6, n.epbBody(uint32(r.iface), r.t, r.data)) }

// bb8dARP is an Ethernet ARP request: a packet that is no TCP.
func bb8dARP() []byte {
	b := []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0, 0x07, 0x08, 0x06}
	b = append(b, 0, 1, 8, 0, 6, 4, 0, 1, 0x02, 0, 0, 0, 0, 0x07, 10, 8, 0, 7, 0, 0, 0, 0, 0, 0, 10, 8, 0, 1)
	return b
}

func bb8dGzip(data []byte) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(data)
	zw.Close()
	return b.Bytes()
}

// ------------------------------------------------------- truncated files

// TestCaptureFileTruncatedPcap: README "A file that breaks after some packets
// (truncated, corrupt) is reported on stderr and what was read before it
// stands"; SPEC 5 exit status "0 when no finding reaches --fail-on ..., 1
// when one does"; standard "Logs go to stderr; stdout carries only the
// report". A pcap of ~300 packets is cut well after an instance-id-changed
// and before a client-id-changed: inside a record header, inside a
// record's data, and (a valid file) exactly at a record boundary. The early
// finding stands in json, ndjson and text, with --fail-on never the exit
// status is 0, the packets counted are the whole records before the cut,
// and the truncation is one line on stderr, never on stdout. Also through
// standard input ('-').
func TestCaptureFileTruncatedPcap(t *testing.T) {
	t.Parallel()
	c, early, late := bb8dBase(pcapgen.Options{})
	whole, offs := bb8dBytes(t, c)
	if offs[len(offs)-1] != len(whole) {
		t.Fatalf("offsets: %d, file %d bytes", offs[len(offs)-1], len(whole))
	}
	code, out, errOut := bb8dReadFile(t, []string{"--fail-on", "never"}, bb8dWrite(t, "whole.pcap", whole))
	rep, _ := bb8dParse(t, "whole", out)
	if code != 0 || errOut != "" || !bb8dHas(rep, "instance-id-changed", early) || !bb8dHas(rep, "client-id-changed", late) || len(rep.Findings) != 2 {
		t.Fatalf("whole file: exit %d, stderr %q, findings %v; want instance-id-changed@%d and client-id-changed@%d", code, errOut, bb8dFrames(rep), early, late)
	}
	k := (early + late) / 2 // record index k is frame k+1; k whole records before it
	data := len(c.Packets()[k].Data)
	for _, tc := range []struct {
		name  string
		cut   int
		clean bool
	}{
		{"in-record-header", offs[k] + 7, false},
		{"in-record-data", offs[k] + 16 + data/2, false},
		{"one-byte-of-data", offs[k] + 17, false},
		{"at-record-boundary", offs[k], true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := bb8dWrite(t, "cut.pcap", whole[:tc.cut])
			code, out, errOut := bb8dReadFile(t, nil, path)
			var rep bbFindingsReport
			var ok bool
			if tc.clean {
				if code != 1 || errOut != "" {
					t.Errorf("a file cut at a record boundary is a whole file: exit %d, stderr %q; want 1 and nothing", code, errOut)
				}
				rep, ok = bb8dParse(t, "json", out)
			} else {
				rep, ok = bb8dCheckKept(t, "json", code, out, errOut, early)
			}
			if ok {
				if bb8dHas(rep, "client-id-changed", 0) {
					t.Errorf("client-id-changed at frame %d, after the cut, reported", late)
				}
				if rep.Totals.Packets != k {
					t.Errorf("totals.packets %d, want the %d whole records before the cut", rep.Totals.Packets, k)
				}
			}
			if code, _, _ := bb8dExec(t, nil, "read", "--format", "json", "--fail-on", "never", path); code != 0 {
				t.Errorf("--fail-on never: exit %d, want 0", code)
			}
			// ndjson: one finding per line on stdout, the summary and the
			// truncation on stderr.
			code, out, errOut2 := bb8dExec(t, nil, "read", "--format", "ndjson", path)
			if code != 1 {
				t.Errorf("ndjson: exit %d, want 1", code)
			}
			lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
			found := false
			for i, l := range lines {
				var f map[string]any
				if err := json.Unmarshal([]byte(l), &f); err != nil || f["rule"] == nil {
					t.Errorf("ndjson stdout line %d is no finding object: %q", i+1, l)
					continue
				}
				found = found || f["rule"] == "instance-id-changed"
			}
			if !found {
				t.Errorf("ndjson: instance-id-changed lost:\n%s", out)
			}
			if msg := strings.TrimSpace(errOut); msg != "" && !strings.Contains(errOut2, msg) {
				t.Errorf("ndjson: the truncation %q is not on stderr:\n%s", msg, errOut2)
			}
			// text: the report on stdout, the truncation on stderr only.
			code, out, errOut3 := bb8dExec(t, nil, "read", path)
			if code != 1 || !strings.Contains(out, "instance-id-changed") {
				t.Errorf("text: exit %d, finding kept %v; want 1, true", code, strings.Contains(out, "instance-id-changed"))
			}
			if msg := strings.TrimSpace(errOut); msg != "" && (strings.Contains(out, msg) || !strings.Contains(errOut3, msg)) {
				t.Errorf("text: the truncation %q belongs on stderr only; stderr %q", msg, errOut3)
			}
			// Standard input.
			code, out, errOut4 := bb8dExec(t, whole[:tc.cut], "read", "--format", "json", "-")
			if !tc.clean {
				bb8dCheckKept(t, "stdin", code, out, errOut4, early)
			} else if code != 1 || errOut4 != "" {
				t.Errorf("stdin, cut at a boundary: exit %d, stderr %q", code, errOut4)
			}
		})
	}
	t.Run("in-file-header", func(t *testing.T) {
		code, out, errOut := bb8dReadFile(t, nil, bb8dWrite(t, "hdr.pcap", whole[:10]))
		if code != 2 || out != "" {
			t.Errorf("10 bytes of a pcap header: exit %d, stdout %q; want 2 and nothing (SPEC 5: \"2 when the input cannot be read\")", code, out)
		}
		bb8dOneLine(t, "10-byte pcap", errOut)
	})
}

// TestCaptureFileTruncatedPcapng: the same as TestCaptureFileTruncatedPcap for pcapng:
// cut inside an Enhanced Packet Block's header, inside its data, and
// between its data and its trailing length. README "A file that breaks
// after some packets (truncated, corrupt) is reported on stderr and what
// was read before it stands".
func TestCaptureFileTruncatedPcapng(t *testing.T) {
	c, early, late := bb8dBase(pcapgen.Options{})
	ng := &bb8dNg{o: binary.LittleEndian}
	ng.shb()
	ng.idb(1)
	recs := bb8dRecs(c)
	k := (early + late) / 2
	var start int
	for i, r := range recs {
		if i == k {
			start = len(ng.b)
		}
		ng.epb(r)
	}
	blockLen := 12 + 20 + (len(recs[k].data)+3)/4*4
	for _, tc := range []struct {
		name string
		cut  int
	}{
		{"in-block-header", start + 6},
		{"in-epb-fields", start + 8 + 10},
		{"in-packet-data", start + 28 + len(recs[k].data)/2},
		{"before-trailing-length", start + blockLen - 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := bb8dWrite(t, "cut.pcapng", ng.b[:tc.cut])
			code, out, errOut := bb8dReadFile(t, nil, path)
			rep, ok := bb8dCheckKept(t, "json", code, out, errOut, early)
			if ok && rep.Totals.Packets != k {
				t.Errorf("totals.packets %d, want the %d whole blocks before the cut", rep.Totals.Packets, k)
			}
		})
	}
}

// ------------------------------------------------- hostile record lengths

// TestCaptureFilePcapRecordLongerThanSnaplen: GRO on Linux hands tcpdump packets
// bigger than an old 65535 snaplen (an IPv4 packet of 65535 bytes is 65549
// with its Ethernet header), so real pcaps hold records whose captured
// length exceeds the header's snaplen; Wireshark and libpcap read on. The
// 64 KB segment here carries most of a Produce. Standard: "nothing already
// analyzed is lost", and a file read on (no error on stderr) must lose
// nothing after it either: the instance-id-changed findings before and
// after the big record are reported, and every packet counted.
func TestCaptureFilePcapRecordLongerThanSnaplen(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	x, y := bb8dX, bb8dY
	cn := c.Conn(pcapgen.ConnOptions{Client: bb8dAP("10.8.4.1:44000"), Broker: bb8dAP("10.0.0.9:9092"), Perturb: &pcapgen.Perturb{MSS: 65495}})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("big-app"), InstanceID: &x, CorrelationID: 1})
	s.RoundTrip(pcapgen.APIVersions(4, "apache-kafka-java", "4.2.0"), pcapgen.APIVersionsResponse(4))
	s.Header.ClientID = nil
	s.Header.InstanceID = &y
	before := bbMeta9(s)
	s.RoundTrip(pcapgen.Produce(9, "orders", bb8dZero, bytes.Repeat([]byte{7}, 65600)), pcapgen.ProduceResponse(9, "orders", bb8dZero))
	after := bbMeta9(s)
	cn.Close()
	big := 0
	for _, p := range c.Packets() {
		big = max(big, len(p.Data))
	}
	if big <= 65535 {
		t.Fatalf("largest packet %d bytes, want > 65535", big)
	}
	b, err := c.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	binary.LittleEndian.PutUint32(b[16:], 65535) // the header's snaplen
	ng := &bb8dNg{o: binary.LittleEndian}
	ng.shb()
	idb := binary.LittleEndian.AppendUint16(nil, 1)
	idb = binary.LittleEndian.AppendUint16(idb, 0)
	idb = binary.LittleEndian.AppendUint32(idb, 65535) // the interface's snaplen
	ng.block(1, idb)
	for _, r := range bb8dRecs(c) {
		ng.epb(r)
	}
	for _, tc := range []struct{ name, path string }{
		{"pcap", bb8dWrite(t, "gro.pcap", b)},
		{"pcapng", bb8dWrite(t, "gro.pcapng", ng.b)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := bb8dReadFile(t, nil, tc.path)
			rep, ok := bb8dParse(t, "gro", out)
			if code != 1 {
				t.Errorf("exit %d, want 1; stderr %q", code, errOut)
			}
			bb8dAtMostOneLine(t, "gro", errOut)
			if !ok {
				return
			}
			if !bb8dHas(rep, "instance-id-changed", before) {
				t.Errorf("instance-id-changed at frame %d, before the big record, lost: %v", before, bb8dFrames(rep))
			}
			if !bb8dHas(rep, "instance-id-changed", after) || rep.Totals.Packets != c.Frames() {
				t.Errorf("a %d-byte record where the snaplen is 65535 (Wireshark and libpcap read on): findings %v, packets %d of %d, stderr %q; want instance-id-changed at frame %d too and every packet",
					big, bb8dFrames(rep), rep.Totals.Packets, c.Frames(), errOut, after)
			}
		})
	}
}

// TestCaptureFilePcapAbsurdRecordLength: a record header claiming 2 GB (or
// 4 GB - 1, negative as an int32) of captured data after ~180 good
// packets. Standard: "hostile frame sizes ... get a clear one-line error
// or a coverage event, never a panic, and nothing already analyzed is
// lost": the early finding stands (exit 1), one line on stderr, and kwatch
// does not allocate the 2 GB the header claims.
func TestCaptureFilePcapAbsurdRecordLength(t *testing.T) {
	t.Parallel()
	c, early, late := bb8dBase(pcapgen.Options{})
	whole, offs := bb8dBytes(t, c)
	k := (early + late) / 2
	for _, tc := range []struct {
		name       string
		incl, orig uint32
	}{
		{"2GB", 0x80000000, 0x80000000},
		{"4GB-1", 0xffffffff, 0xffffffff},
		{"1GB-incl-small-orig", 1 << 30, 60},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := slices.Clone(whole[:offs[k]])
			b = bb8dPcapRec(b, c.Packets()[k].Time, tc.incl, tc.orig)
			b = append(b, whole[offs[k]+16:]...) // the rest of the file follows
			path := bb8dWrite(t, "absurd.pcap", b)
			code, out, errOut := bb8dReadFile(t, nil, path)
			rep, ok := bb8dCheckKept(t, "json", code, out, errOut, early)
			if ok && rep.Totals.Packets < k {
				t.Errorf("totals.packets %d, want at least the %d records before the bad one", rep.Totals.Packets, k)
			}
			if t.Failed() && bb8dPanicRE.MatchString(errOut) {
				return // not in-process: a panic would end the test binary
			}
			var m0, m1 runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&m0)
			runKwatch("read", "--format", "json", path)
			runtime.ReadMemStats(&m1)
			if d := m1.TotalAlloc - m0.TotalAlloc; d > 256<<20 {
				t.Errorf("reading a file of %d bytes allocated %d MiB: the record header's length was trusted", len(b), d>>20)
			}
		})
	}
}

// TestCaptureFilePcapngBadBlockLength: a pcapng whose block after ~180 good
// packets has a broken total length: not a multiple of 4, under the 12-byte
// minimum, a trailing length that differs from the leading one, or a
// length of nearly 2 GB. Standard: "Bad input ... gets a clear one-line
// error or a coverage event, never a panic, and nothing already analyzed is
// lost": the early finding stands (exit 1) and the damage is one line on
// stderr.
func TestCaptureFilePcapngBadBlockLength(t *testing.T) {
	c, early, late := bb8dBase(pcapgen.Options{})
	recs := bb8dRecs(c)
	k := (early + late) / 2
	le := binary.LittleEndian
	for _, tc := range []struct {
		name string
		bad  func(ng *bb8dNg, r bb8dRec)
	}{
		{"not-multiple-of-4", func(ng *bb8dNg, r bb8dRec) {
			ng.epb(r)
			at := len(ng.b)
			ng.epb(r)
			le.PutUint32(ng.b[at+4:], le.Uint32(ng.b[at+4:])+1)
		}},
		{"under-12", func(ng *bb8dNg, r bb8dRec) {
			at := len(ng.b)
			ng.epb(r)
			le.PutUint32(ng.b[at+4:], 8)
		}},
		{"zero", func(ng *bb8dNg, r bb8dRec) {
			at := len(ng.b)
			ng.epb(r)
			le.PutUint32(ng.b[at+4:], 0)
		}},
		{"trailer-mismatch", func(ng *bb8dNg, r bb8dRec) {
			ng.epb(r)
			le.PutUint32(ng.b[len(ng.b)-4:], 12)
		}},
		{"nearly-2GB", func(ng *bb8dNg, r bb8dRec) {
			at := len(ng.b)
			ng.epb(r)
			le.PutUint32(ng.b[at+4:], 0x7ffffffc)
		}},
		{"caplen-beyond-block", func(ng *bb8dNg, r bb8dRec) {
			at := len(ng.b)
			ng.epb(r)
			le.PutUint32(ng.b[at+8+12:], 0x7fff0000) // captured length
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ng := &bb8dNg{o: le}
			ng.shb()
			ng.idb(1)
			for i, r := range recs {
				if i == k {
					tc.bad(ng, r)
					continue
				}
				ng.epb(r)
			}
			code, out, errOut := bb8dReadFile(t, nil, bb8dWrite(t, "bad.pcapng", ng.b))
			rep, ok := bb8dCheckKept(t, "json", code, out, errOut, early)
			if ok && rep.Totals.Packets < k {
				t.Errorf("totals.packets %d, want at least the %d packets before the bad block", rep.Totals.Packets, k)
			}
		})
	}
}

// ------------------------------------------------------ pcapng structure

// TestCaptureFilePcapngNonPacketBlocks: SPEC 5 "frame is the 1-based packet
// number in the capture file (as Wireshark numbers it)". Wireshark skips
// blocks that hold no packet (an unknown block type, a Decryption Secrets
// Block, statistics, name resolution) and numbers every packet block: the
// Simple Packet Block (type 3) and the obsolete Packet Block (type 2) are
// frames. Each case inserts its blocks after frame 2, before the early
// finding; the findings are those of the plain capture at frames shifted by
// the packet blocks inserted; and, read as the first of two files, the
// second file's findings keep its own frame numbers (SPEC 2.1: "frame is
// the packet's number in that capture").
func TestCaptureFilePcapngNonPacketBlocks(t *testing.T) {
	c, early, late := bb8dBase(pcapgen.Options{})
	recs := bb8dRecs(c)
	le := binary.LittleEndian
	cases := []struct {
		name  string
		shift int
		add   func(ng *bb8dNg)
	}{
		{"skipped-blocks", 0, func(ng *bb8dNg) {
			ng.block(0x0000000a, append(le.AppendUint32(le.AppendUint32(nil, 0x544c534b), 8), "secrets!"...)) // DSB, TLS key log
			ng.block(0x00000fee, []byte("an unknown block type"))
			ng.block(0x8000beef, []byte("local use"))
			isb := le.AppendUint32(nil, 0)
			isb = le.AppendUint32(isb, 0)
			isb = le.AppendUint32(isb, 0)
			ng.block(5, isb)
			nrb := le.AppendUint16(nil, 1)
			nrb = le.AppendUint16(nrb, 14)
			nrb = append(nrb, 10, 0, 0, 9, 'b', 'r', 'o', 'k', 'e', 'r', '-', '1', 0, 0)
			nrb = append(nrb, 0, 0, 0, 0) // end of records
			ng.block(4, nrb)
		}},
		{"simple-packet-block", 1, func(ng *bb8dNg) {
			arp := bb8dARP()
			ng.block(3, append(le.AppendUint32(nil, uint32(len(arp))), arp...))
		}},
		{"obsolete-packet-block", 1, func(ng *bb8dNg) {
			arp := bb8dARP()
			us := uint64(recs[1].t.UnixMicro())
			pb := le.AppendUint16(nil, 0)
			pb = le.AppendUint16(pb, 0)
			pb = le.AppendUint32(pb, uint32(us>>32))
			pb = le.AppendUint32(pb, uint32(us))
			pb = le.AppendUint32(pb, uint32(len(arp)))
			pb = le.AppendUint32(pb, uint32(len(arp)))
			ng.block(2, append(pb, arp...))
		}},
	}
	second, e2, l2 := bb8dBase(pcapgen.Options{Start: pcapgen.BaseTime().Add(time.Hour)})
	secondPath := bbCaptureFile(t, second, "second.pcap.gz")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ng := &bb8dNg{o: le}
			ng.shb()
			ng.idb(1)
			for i, r := range recs {
				if i == 2 {
					tc.add(ng)
				}
				ng.epb(r)
			}
			path := bb8dWrite(t, "blocks.pcapng", ng.b)
			code, out, errOut := bb8dReadFile(t, []string{"--fail-on", "never"}, path)
			rep, ok := bb8dParse(t, tc.name, out)
			if code != 0 || errOut != "" {
				t.Errorf("exit %d, stderr %q; want 0 and nothing (a valid pcapng)", code, errOut)
			}
			want := []string{fmt.Sprintf("instance-id-changed@%d", early+tc.shift), fmt.Sprintf("client-id-changed@%d", late+tc.shift)}
			if ok {
				if got := bb8dFrames(rep); !slices.Equal(got, want) {
					t.Errorf("findings %v, want %v (Wireshark's frame numbers)", got, want)
				}
				if rep.Totals.Packets != c.Frames()+tc.shift {
					t.Errorf("totals.packets %d, want %d", rep.Totals.Packets, c.Frames()+tc.shift)
				}
			}
			code, out, errOut = bb8dReadFile(t, []string{"--fail-on", "never"}, path, secondPath)
			rep, ok = bb8dParse(t, tc.name+" + second file", out)
			if code != 0 || errOut != "" {
				t.Errorf("two files: exit %d, stderr %q", code, errOut)
			}
			want = append(want, fmt.Sprintf("instance-id-changed@%d", e2), fmt.Sprintf("client-id-changed@%d", l2))
			if ok {
				if got := bb8dFrames(rep); !slices.Equal(got, want) {
					t.Errorf("two files: findings %v, want %v", got, want)
				}
			}
		})
	}
}

// TestCaptureFilePcapngPacketWithoutInterface: an Enhanced Packet Block names an
// interface that its section has not described: before any Interface
// Description Block, in a second section (each section numbers its own
// interfaces from 0: the first section's do not carry over), or an
// interface index past the last. Such a block cannot be decoded (no link
// type). Standard: "a clear one-line error or a coverage event, never a
// panic, and nothing already analyzed is lost": never silently; the
// findings read before it stand.
func TestCaptureFilePcapngPacketWithoutInterface(t *testing.T) {
	c, early, late := bb8dBase(pcapgen.Options{})
	recs := bb8dRecs(c)
	k := (early + late) / 2
	le := binary.LittleEndian
	t.Run("before-any-idb", func(t *testing.T) {
		ng := &bb8dNg{o: le}
		ng.shb()
		ng.epb(recs[0])
		ng.idb(1)
		for _, r := range recs[1:] {
			ng.epb(r)
		}
		code, out, errOut := bb8dReadFile(t, nil, bb8dWrite(t, "noidb.pcapng", ng.b))
		switch code {
		case 2:
			if out != "" {
				t.Errorf("exit 2 with a report on stdout: %.200q", out)
			}
			bb8dOneLine(t, "EPB before IDB", errOut)
		default:
			// Read on past the bad block: it must have been said.
			bb8dOneLine(t, fmt.Sprintf("EPB before IDB (exit %d)", code), errOut)
		}
	})
	for _, tc := range []struct {
		name string
		bad  func(ng *bb8dNg)
	}{
		{"second-section-before-its-idb", func(ng *bb8dNg) {
			ng.shb()
			ng.epb(recs[k])
			ng.idb(1)
		}},
		{"interface-index-past-the-last", func(ng *bb8dNg) {
			r := recs[k]
			r.iface = 3
			ng.epb(r)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ng := &bb8dNg{o: le}
			ng.shb()
			ng.idb(1)
			for i, r := range recs {
				if i == k {
					tc.bad(ng)
					continue
				}
				ng.epb(r)
			}
			code, out, errOut := bb8dReadFile(t, nil, bb8dWrite(t, "noidb.pcapng", ng.b))
			bb8dCheckKept(t, tc.name, code, out, errOut, early)
		})
	}
}

// TestCaptureFileOtherByteOrder: SPEC 6 "offline: pcap or pcapng": a big-endian
// pcapng (written on a big-endian host; the section header's byte-order
// magic says so), a pcapng of two sections of different byte orders (two
// captures joined with cat), and a big-endian pcap with nanosecond
// timestamps: the same findings at the same frames and times as the
// little-endian microsecond pcap (SPEC 5: time "2026-11-29T16:49:25.123456Z",
// the packet's own time).
func TestCaptureFileOtherByteOrder(t *testing.T) {
	start := time.Date(2026, 11, 29, 16, 49, 25, 123456000, time.UTC)
	c, early, late := bb8dBase(pcapgen.Options{Start: start})
	wantRep, _ := bbReadAs[bbFindingsReport](t, bbCaptureFile(t, c, "ref.pcap"))
	if got := bb8dFrames(wantRep); !slices.Equal(got, []string{fmt.Sprintf("instance-id-changed@%d", early), fmt.Sprintf("client-id-changed@%d", late)}) {
		t.Fatalf("reference findings %v", got)
	}
	if want := c.Packets()[early-1].Time.Format("2006-01-02T15:04:05.000000Z"); wantRep.Findings[0].Time != want {
		t.Errorf("reference time %s, want %s", wantRep.Findings[0].Time, want)
	}
	recs := bb8dRecs(c)
	k := (early + late) / 2
	be := &bb8dNg{o: binary.BigEndian}
	be.shb()
	be.idb(1)
	for _, r := range recs {
		be.epb(r)
	}
	mixed := &bb8dNg{o: binary.LittleEndian}
	mixed.shb()
	mixed.idb(1)
	for _, r := range recs[:k] {
		mixed.epb(r)
	}
	second := &bb8dNg{o: binary.BigEndian}
	second.shb()
	second.idb(1)
	for _, r := range recs[k:] {
		second.epb(r)
	}
	mixed.b = append(mixed.b, second.b...)
	cNS, _, _ := bb8dBase(pcapgen.Options{Start: start, Format: pcapgen.FormatPCAPNanosBigEndian})
	nsPath := bbCaptureFile(t, cNS, "ns-be.pcap")
	for _, tc := range []struct{ name, path string }{
		{"big-endian-pcapng", bb8dWrite(t, "be.pcapng", be.b)},
		{"le-then-be-sections", bb8dWrite(t, "mixed.pcapng", mixed.b)},
		{"big-endian-nanosecond-pcap", nsPath},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := bb8dReadFile(t, []string{"--fail-on", "never"}, tc.path)
			rep, ok := bb8dParse(t, tc.name, out)
			if code != 0 || errOut != "" {
				t.Errorf("exit %d, stderr %q; want 0 and nothing", code, errOut)
			}
			if !ok {
				return
			}
			if !slices.EqualFunc(rep.Findings, wantRep.Findings, func(a, b bbFinding) bool {
				return a.Rule == b.Rule && a.Frame == b.Frame && a.Time == b.Time && a.Conn == b.Conn
			}) {
				var got, want []string
				for _, f := range rep.Findings {
					got = append(got, fmt.Sprintf("%s@%d %s", f.Rule, f.Frame, f.Time))
				}
				for _, f := range wantRep.Findings {
					want = append(want, fmt.Sprintf("%s@%d %s", f.Rule, f.Frame, f.Time))
				}
				t.Errorf("findings %v, want %v", got, want)
			}
			if rep.Totals.Packets != c.Frames() {
				t.Errorf("totals.packets %d, want %d", rep.Totals.Packets, c.Frames())
			}
		})
	}
}

// ------------------------------------------------------------------- gzip

// TestCaptureFileGzipDamage: SPEC 6 "offline: pcap or pcapng (also .gz)"; README
// "A file that breaks after some packets (truncated, corrupt) is reported
// on stderr and what was read before it stands"; SPEC 5 exit 2 "when the
// input cannot be read" with a one-line reason.
//   - a gzip whose CRC-32 trailer is wrong (every byte inflates, but the
//     file is corrupt): every finding stands, the corruption is one line on
//     stderr;
//   - a deflate stream damaged at 60%: the early finding stands, one line;
//   - a pcapng.gz cut at 3/4: the early finding stands, one line;
//   - a gzip of two members (pigz, bgzip, cat a.gz b.gz): it is one
//     stream, the same report as the plain file and nothing on stderr;
//   - a gzip of random bytes, of nothing, and a gzip header alone: exit 2,
//     one line, no report.
func TestCaptureFileGzipDamage(t *testing.T) {
	t.Parallel()
	c, early, late := bb8dBase(pcapgen.Options{})
	plain, err := c.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	gz := bb8dGzip(plain)
	t.Run("crc-mismatch", func(t *testing.T) {
		b := slices.Clone(gz)
		crc := binary.LittleEndian.Uint32(b[len(b)-8:])
		if crc != crc32.ChecksumIEEE(plain) {
			t.Fatal("gzip trailer layout")
		}
		binary.LittleEndian.PutUint32(b[len(b)-8:], crc^0xdeadbeef)
		code, out, errOut := bb8dReadFile(t, nil, bb8dWrite(t, "crc.pcap.gz", b))
		rep, ok := bb8dCheckKept(t, "bad CRC", code, out, errOut, early)
		if ok && !bb8dHas(rep, "client-id-changed", late) {
			t.Errorf("bad CRC: findings %v, want client-id-changed at %d too (every byte inflated)", bb8dFrames(rep), late)
		}
	})
	t.Run("deflate-damaged", func(t *testing.T) {
		// Compress without much redundancy in reach so the damage lands
		// late in the stream: a copy of gz with 64 bytes at 60% replaced.
		b := slices.Clone(gz)
		at := len(b) * 6 / 10
		rng := rand.New(rand.NewPCG(8, 4))
		for i := at; i < at+64; i++ {
			b[i] = byte(rng.Uint32())
		}
		code, out, errOut := bb8dReadFile(t, nil, bb8dWrite(t, "deflate.pcap.gz", b))
		bb8dCheckKept(t, "damaged deflate", code, out, errOut, early)
	})
	t.Run("pcapng-gz-truncated", func(t *testing.T) {
		p := bbCaptureFile(t, c, "x.pcapng.gz")
		b, _ := os.ReadFile(p)
		code, out, errOut := bb8dReadFile(t, nil, bb8dWrite(t, "cut.pcapng.gz", b[:len(b)*3/4]))
		bb8dCheckKept(t, "cut pcapng.gz", code, out, errOut, early)
	})
	t.Run("two-members", func(t *testing.T) {
		cut := len(plain)/2 + 3
		b := append(bb8dGzip(plain[:cut]), bb8dGzip(plain[cut:])...)
		code, out, errOut := bb8dReadFile(t, []string{"--fail-on", "never"}, bb8dWrite(t, "multi.pcap.gz", b))
		_, want, _ := bb8dReadFile(t, []string{"--fail-on", "never"}, bb8dWrite(t, "plain.pcap", plain))
		if code != 0 || errOut != "" || out != want {
			rep, _ := bb8dParse(t, "two members", out)
			t.Errorf("two gzip members: exit %d, stderr %q, findings %v; want the plain file's report, exit 0, nothing on stderr", code, errOut, bb8dFrames(rep))
		}
	})
	rng := rand.New(rand.NewPCG(8, 5))
	random := make([]byte, 4096)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"gzip-of-random", bb8dGzip(random)},
		{"gzip-of-nothing", bb8dGzip(nil)},
		{"gzip-header-only", gz[:10]},
		{"gzip-magic-only", gz[:2]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, cmd := range []string{"read", "dump"} {
				code, out, errOut := bb8dExec(t, nil, cmd, bb8dWrite(t, "x.pcap.gz", tc.b))
				if code != 2 || out != "" {
					t.Errorf("%s: exit %d, stdout %.200q; want 2 and no report", cmd, code, out)
				}
				bb8dOneLine(t, cmd, errOut)
			}
		})
	}
}

// ---------------------------------------------------- empty and garbage

// TestCaptureFileEmptyAndHeaderOnly: SPEC 5 exit 2 "when the input cannot be read
// ... (with a one-line reason on stderr)": an empty file and empty standard
// input, for read in every format. A capture with a file header and no
// packet (pcap; pcapng with a section header, with or without an interface)
// is a valid empty capture (tcpdump -c 0, a rotation with no traffic): a
// report with zero packets and (README 14) "findings": [], exit 3 (SPEC 5:
// the audit is incomplete, "an empty capture") with nothing on stderr; dump
// exits 0.
func TestCaptureFileEmptyAndHeaderOnly(t *testing.T) {
	t.Parallel()
	empty := bb8dWrite(t, "empty.pcap", nil)
	for _, format := range []string{"json", "ndjson", "text"} {
		code, out, errOut := bb8dExec(t, nil, "read", "--format", format, empty)
		if code != 2 || out != "" {
			t.Errorf("empty file, --format %s: exit %d, stdout %q; want 2 and nothing", format, code, out)
		}
		bb8dOneLine(t, "empty file --format "+format, errOut)
	}
	code, out, errOut := bb8dExec(t, []byte{}, "read", "--format", "json", "-")
	if code != 2 || out != "" {
		t.Errorf("empty stdin: exit %d, stdout %q; want 2 and nothing", code, out)
	}
	bb8dOneLine(t, "empty stdin", errOut)

	le := binary.LittleEndian
	pcapHdr := bb8dPcap(1, 262144, nil)
	shb := &bb8dNg{o: le}
	shb.shb()
	shbIdb := &bb8dNg{o: le}
	shbIdb.shb()
	shbIdb.idb(1)
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"pcap-header.pcap", pcapHdr},
		{"section-only.pcapng", shb.b},
		{"section-and-interface.pcapng", shbIdb.b},
		{"pcap-header.pcap.gz", bb8dGzip(pcapHdr)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := bb8dWrite(t, tc.name, tc.b)
			code, out, errOut := bb8dReadFile(t, nil, path)
			if code != 3 || errOut != "" {
				t.Errorf("exit %d, stderr %q; want 3 (an incomplete audit) and nothing (a valid capture without packets)", code, errOut)
			}
			if !strings.Contains(out, `"findings": []`) && !strings.Contains(out, `"findings":[]`) {
				t.Errorf(`report lacks "findings": []:\n%.400s`, out)
			}
			if rep, ok := bb8dParse(t, tc.name, out); ok && rep.Totals.Packets != 0 {
				t.Errorf("packets %d, want 0", rep.Totals.Packets)
			}
			if code, _, errOut := bb8dExec(t, nil, "dump", path); code != 0 || errOut != "" {
				t.Errorf("dump: exit %d, stderr %q; want 0 and nothing", code, errOut)
			}
		})
	}
}

// TestCaptureFileRandomBytes: standard "Bad input (... garbage bytes ...) gets a
// clear one-line error or a coverage event, never a panic". Random bytes
// with no capture magic: exit 2, one line, no report (SPEC 5). Random bytes
// after a valid pcap or pcapng header (hostile record and block lengths):
// either exit 2 with one line and no report, or a report on stdout (exit 0
// or 1) with at most one line on stderr; dump likewise.
func TestCaptureFileRandomBytes(t *testing.T) {
	t.Parallel()
	le := binary.LittleEndian
	ngHdr := &bb8dNg{o: le}
	ngHdr.shb()
	ngHdr.idb(1)
	prefixes := []struct {
		name   string
		prefix []byte
	}{
		{"no-magic", nil},
		{"pcap-header", bb8dPcap(1, 262144, nil)},
		{"pcap-ns-be-header", func() []byte {
			b := bb8dPcap(1, 262144, nil)
			binary.BigEndian.PutUint32(b, 0xa1b23c4d)
			binary.BigEndian.PutUint16(b[4:], 2)
			binary.BigEndian.PutUint16(b[6:], 4)
			binary.BigEndian.PutUint32(b[16:], 65535)
			binary.BigEndian.PutUint32(b[20:], 1)
			return b
		}()},
		{"pcapng-header", ngHdr.b},
	}
	for _, p := range prefixes {
		t.Run(p.name, func(t *testing.T) {
			said := map[string]bool{}
			for seed := uint64(1); seed <= 6; seed++ {
				rng := rand.New(rand.NewPCG(seed, 88))
				b := slices.Clone(p.prefix)
				n := 64 + rng.IntN(8192)
				for i := 0; i < n; i++ {
					b = append(b, byte(rng.Uint32()))
				}
				if p.prefix == nil {
					b[0] = 'X' // no capture magic, no gzip magic
				}
				path := bb8dWrite(t, fmt.Sprintf("rand%d.pcap", seed), b)
				for _, cmd := range []string{"read", "dump"} {
					what := fmt.Sprintf("%s seed %d", cmd, seed)
					code, out, errOut := bb8dExec(t, nil, cmd, "--format", "json", path)
					switch {
					case code == 2:
						if out != "" && !said[cmd] {
							said[cmd] = true
							t.Errorf("%s: exit 2 (input cannot be read) with stdout %.200q; want no output (and the same for every seed)", what, out)
						}
						bb8dOneLine(t, what, errOut)
					case p.prefix == nil:
						t.Errorf("%s: random bytes: exit %d, want 2", what, code)
					case code == 0 || code == 1:
						if !json.Valid([]byte(out)) {
							t.Errorf("%s: exit %d, stdout is no JSON: %.200q", what, code, out)
						}
						bb8dAtMostOneLine(t, what, errOut)
					default:
						t.Errorf("%s: exit %d (stderr %.300q)", what, code, errOut)
					}
				}
			}
		})
	}
}

// ------------------------------------------------------------ link types

// bb8dRadiotap wraps an Ethernet packet's IP packet as radiotap + 802.11
// data (to the AP) + LLC/SNAP, as a Wi-Fi monitor-mode capture holds it.
func bb8dRadiotap(eth []byte) []byte {
	b := []byte{0, 0, 8, 0, 0, 0, 0, 0}
	b = append(b, 0x08, 0x01, 0, 0)
	b = append(b, eth[0:6]...)  // BSSID (the receiver)
	b = append(b, eth[6:12]...) // source
	b = append(b, eth[0:6]...)  // destination
	b = append(b, 0, 0)
	b = append(b, 0xaa, 0xaa, 0x03, 0, 0, 0, eth[12], eth[13])
	return append(b, eth[14:]...)
}

// bb8dUSB is a Linux USB URB record (link type 189) of 64 data bytes.
func bb8dUSB(i int) []byte {
	b := make([]byte, 48+64)
	binary.LittleEndian.PutUint64(b, uint64(0xffff8800_0000_0000)+uint64(i))
	b[8] = 'C'
	b[9] = 3 // bulk
	b[10] = 0x81
	b[11] = 2
	binary.LittleEndian.PutUint32(b[36:], 64)
	binary.LittleEndian.PutUint32(b[40:], 64)
	for j := 48; j < len(b); j++ {
		b[j] = byte(i*7 + j)
	}
	return b
}

// TestCaptureFileUnsupportedLinkTypes: standard "Bad input (... wrong link types)
// gets a clear one-line error or a coverage event, never a panic". A pcap of
// Linux USB URBs (link type 189), and a Wi-Fi monitor-mode pcap (radiotap,
// 127) carrying the Kafka packets: kwatch either decodes the Kafka inside
// (the findings are there) or says in one line that it cannot; it never
// gives a silent empty report. Beside an Ethernet interface in one pcapng,
// USB packets change nothing but the frame numbers (SPEC 5 "as Wireshark
// numbers it").
func TestCaptureFileUnsupportedLinkTypes(t *testing.T) {
	c, early, late := bb8dBase(pcapgen.Options{})
	var usb, wifi []bb8dRec
	for i, p := range c.Packets() {
		wifi = append(wifi, bb8dRec{t: p.Time, data: bb8dRadiotap(p.Data)})
		if i < 40 {
			usb = append(usb, bb8dRec{t: p.Time, data: bb8dUSB(i)})
		}
	}
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"usb-alone", bb8dPcap(189, 262144, usb)},
		{"radiotap-alone", bb8dPcap(127, 262144, wifi)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := bb8dReadFile(t, nil, bb8dWrite(t, tc.name+".pcap", tc.b))
			if code == 2 {
				if out != "" {
					t.Errorf("exit 2 with a report on stdout")
				}
				bb8dOneLine(t, tc.name, errOut)
				return
			}
			rep, ok := bb8dParse(t, tc.name, out)
			if ok && len(rep.Findings) > 0 {
				bb8dAtMostOneLine(t, tc.name, errOut)
				return
			}
			if strings.TrimSpace(errOut) == "" {
				t.Errorf("exit %d, an empty report and nothing on stderr: the unsupported link type is not said (packets %d, connections %d)", code, rep.Totals.Packets, rep.Totals.Connections)
			} else {
				bb8dOneLine(t, tc.name, errOut)
			}
		})
	}
	t.Run("usb-beside-ethernet", func(t *testing.T) {
		ng := &bb8dNg{o: binary.LittleEndian}
		ng.shb()
		ng.idb(1)
		ng.idb(189)
		frames := map[int]int{} // original frame -> frame in this file
		n := 0
		for i, p := range c.Packets() {
			if i%5 == 0 {
				ng.epb(bb8dRec{t: p.Time, iface: 1, data: bb8dUSB(i)})
				n++
			}
			ng.epb(bb8dRec{t: p.Time, data: p.Data})
			n++
			frames[i+1] = n
		}
		code, out, errOut := bb8dReadFile(t, nil, bb8dWrite(t, "mixed.pcapng", ng.b))
		if code != 1 {
			t.Errorf("exit %d, want 1 (stderr %q)", code, errOut)
		}
		bb8dAtMostOneLine(t, "mixed", errOut)
		if rep, ok := bb8dParse(t, "mixed", out); ok {
			want := []string{fmt.Sprintf("instance-id-changed@%d", frames[early]), fmt.Sprintf("client-id-changed@%d", frames[late])}
			if got := bb8dFrames(rep); !slices.Equal(got, want) {
				t.Errorf("findings %v, want %v", got, want)
			}
			if rep.Totals.Packets != n {
				t.Errorf("totals.packets %d, want %d (USB packets are packets of the file)", rep.Totals.Packets, n)
			}
		}
	})
}

// TestCaptureFileHostileFrameSizes: SPEC 1 "A frame size < 8 or > 100 MiB
// (configurable) is a framing error, never a panic"; SPEC 6 --max-frame.
// Inside the TCP streams: a size of -1 (0xffffffff), a size of 2 GiB - 1
// with a few KB behind it, and a size of 0, each after a first request that
// makes the connection Kafka; then a clean connection with an
// instance-id-changed. With the default --max-frame and with the largest
// int32 (if accepted): the framing errors are coverage events, the later
// connection's finding stands (exit 1), and a 2 GiB size costs no more than
// the bytes captured (SPEC 1: "must cost no more than the bytes they occupy
// in the capture").
func TestCaptureFileHostileFrameSizes(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	for i, size := range []uint32{0xffffffff, 0x7fffffff, 0} {
		cn := c.Conn(pcapgen.ConnOptions{Client: bb8dAP(fmt.Sprintf("10.8.5.%d:45000", i+1)), Broker: bb8dAP("10.0.0.9:9092")})
		s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("hostile"), CorrelationID: 1})
		bbMeta9(s)
		b := binary.BigEndian.AppendUint32(nil, size)
		b = append(b, 0, 0, 0, 12, 0, 0, 0, 2, 0xff, 0xff, 0)
		b = append(b, bytes.Repeat([]byte{0x41}, 4000)...)
		cn.Raw(pcapgen.ToBroker, b)
		cn.Close()
	}
	x, y := bb8dX, bb8dY
	cn := c.Conn(pcapgen.ConnOptions{Client: bb8dAP("10.8.5.9:45000"), Broker: bb8dAP("10.0.0.9:9092")})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("good"), InstanceID: &x, CorrelationID: 1})
	bbMeta9(s)
	s.Header.ClientID = nil
	s.Header.InstanceID = &y
	changed := bbMeta9(s)
	cn.Close()
	path := bbCaptureFile(t, c, "hostile.pcap")
	for _, extra := range [][]string{nil, {"--max-frame", "2147483647"}} {
		what := "default"
		if extra != nil {
			what = strings.Join(extra, " ")
		}
		code, out, errOut := bb8dReadFile(t, extra, path)
		if code == 2 && extra != nil {
			bb8dOneLine(t, what, errOut)
			continue
		}
		if code != 1 {
			t.Errorf("%s: exit %d, want 1 (stderr %q)", what, code, errOut)
		}
		if errOut != "" {
			t.Errorf("%s: stderr %q; framing errors are coverage events of the report", what, errOut)
		}
		rep, ok := bb8dParse(t, what, out)
		if !ok {
			continue
		}
		if !bb8dHas(rep, "instance-id-changed", changed) {
			t.Errorf("%s: instance-id-changed at frame %d lost: %v", what, changed, bb8dFrames(rep))
		}
		if rep.Totals.Coverage["framing-error"] < 2 {
			t.Errorf("%s: framing-error %d, want at least 2 (sizes -1 and 0 are < 8)", what, rep.Totals.Coverage["framing-error"])
		}
		if t.Failed() && bb8dPanicRE.MatchString(errOut) {
			return
		}
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		runKwatch(append(append([]string{"read", "--format", "json"}, extra...), path)...)
		runtime.ReadMemStats(&m1)
		if d := m1.TotalAlloc - m0.TotalAlloc; d > 256<<20 {
			t.Errorf("%s: a capture of %d packets cost %d MiB of allocations: a frame size was trusted", what, c.Frames(), d>>20)
		}
	}
}

// TestCaptureFilePcapngTimestampUnits: SPEC 5 time is the packet's time,
// "2026-11-29T16:49:25.123456Z". pcapng interfaces give their own
// timestamp units and offset (if_tsresol: a power of 10, or of 2 when its
// high bit is set; if_tsoffset: seconds added to every timestamp).
// Packets every 1/64 s (exact in every unit here) through an interface of
// 2^-20 s units, one of milliseconds, one of nanoseconds with an offset of
// one day: the findings' times are the packets' times (plus the offset),
// and the frames those of the plain capture.
func TestCaptureFilePcapngTimestampUnits(t *testing.T) {
	t.Parallel()
	step := time.Second / 64
	start := time.Date(2026, 11, 29, 16, 49, 25, 0, time.UTC)
	c, early, late := bb8dBase(pcapgen.Options{Start: start, Step: step})
	le := binary.LittleEndian
	for _, tc := range []struct {
		name   string
		resol  byte
		offset int64
		units  func(time.Duration) uint64 // time since the epoch -> units
	}{
		{"binary-2^-20", 0x94, 0, func(d time.Duration) uint64 { return uint64(d/step) * (1 << 20) / 64 }},
		{"milliseconds", 3, 0, func(d time.Duration) uint64 { return uint64(d / time.Millisecond) }},
		{"nanoseconds-offset-1d", 9, 86400, func(d time.Duration) uint64 { return uint64(d - 86400*time.Second) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ng := &bb8dNg{o: le}
			ng.shb()
			idb := le.AppendUint16(nil, 1)
			idb = le.AppendUint16(idb, 0)
			idb = le.AppendUint32(idb, 262144)
			idb = le.AppendUint16(idb, 9) // if_tsresol
			idb = le.AppendUint16(idb, 1)
			idb = append(idb, tc.resol, 0, 0, 0)
			if tc.offset != 0 {
				idb = le.AppendUint16(idb, 14) // if_tsoffset
				idb = le.AppendUint16(idb, 8)
				idb = le.AppendUint64(idb, uint64(tc.offset))
			}
			idb = append(idb, 0, 0, 0, 0) // opt_endofopt
			ng.block(1, idb)
			for _, p := range c.Packets() {
				u := tc.units(time.Duration(p.Time.UnixNano()))
				body := le.AppendUint32(nil, 0)
				body = le.AppendUint32(body, uint32(u>>32))
				body = le.AppendUint32(body, uint32(u))
				body = le.AppendUint32(body, uint32(len(p.Data)))
				body = le.AppendUint32(body, uint32(len(p.Data)))
				ng.block(6, append(body, p.Data...))
			}
			code, out, errOut := bb8dReadFile(t, []string{"--fail-on", "never"}, bb8dWrite(t, "units.pcapng", ng.b))
			rep, ok := bb8dParse(t, tc.name, out)
			if code != 0 || errOut != "" || !ok {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			var got, want []string
			for _, f := range rep.Findings {
				got = append(got, fmt.Sprintf("%s@%d %s", f.Rule, f.Frame, f.Time))
			}
			for _, fr := range []struct {
				rule  string
				frame int
			}{{"instance-id-changed", early}, {"client-id-changed", late}} {
				tm := c.Packets()[fr.frame-1].Time.UTC()
				if tc.resol == 3 {
					tm = tm.Truncate(time.Millisecond)
				}
				want = append(want, fmt.Sprintf("%s@%d %s", fr.rule, fr.frame, tm.Format("2006-01-02T15:04:05.000000Z")))
			}
			if !slices.Equal(got, want) {
				t.Errorf("findings %v, want %v", got, want)
			}
		})
	}
}

// TestCaptureFilePcapHeaderOddFields: classic pcap headers seen in the wild that
// Wireshark reads: snaplen 0 (old writers) or 0xffffffff, a record whose
// original length is below its captured length, and the "modified" pcap
// magic 0xa1b2cd34 (24-byte records: index, protocol, type, padding).
// Standard: "a clear one-line error ... and nothing already analyzed is
// lost": kwatch either reads them (the findings of the plain capture) or
// says in one line that it cannot; never a silent partial report.
func TestCaptureFilePcapHeaderOddFields(t *testing.T) {
	c, early, late := bb8dBase(pcapgen.Options{})
	plain, err := c.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	offs := bb8dPcapOffsets(c)
	le := binary.LittleEndian
	modified := slices.Clone(plain[:24])
	le.PutUint32(modified, 0xa1b2cd34)
	for i, p := range c.Packets() {
		r := plain[offs[i] : offs[i]+16]
		modified = append(modified, r...)
		modified = le.AppendUint32(modified, 2)      // ifindex
		modified = le.AppendUint16(modified, 0x0800) // protocol
		modified = append(modified, 0, 0, 0, 0)      // pkt_type, padding
		modified = append(modified, p.Data...)
	}
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"snaplen-0", func() []byte { b := slices.Clone(plain); le.PutUint32(b[16:], 0); return b }()},
		{"snaplen-max", func() []byte { b := slices.Clone(plain); le.PutUint32(b[16:], 0xffffffff); return b }()},
		{"orig-below-incl", func() []byte {
			b := slices.Clone(plain)
			for i := range c.Packets() {
				le.PutUint32(b[offs[i]+12:], 20)
			}
			return b
		}()},
		{"modified-magic", modified},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := bb8dReadFile(t, []string{"--fail-on", "never"}, bb8dWrite(t, tc.name+".pcap", tc.b))
			if code == 2 {
				if out != "" {
					t.Errorf("exit 2 with a report")
				}
				bb8dOneLine(t, tc.name, errOut)
				return
			}
			rep, ok := bb8dParse(t, tc.name, out)
			want := []string{fmt.Sprintf("instance-id-changed@%d", early), fmt.Sprintf("client-id-changed@%d", late)}
			if ok && !slices.Equal(bb8dFrames(rep), want) {
				t.Errorf("exit %d, stderr %q, findings %v; want %v or a one-line error", code, errOut, bb8dFrames(rep), want)
			}
		})
	}
}

// TestCaptureFileTruncatedEndsOpenConnections: README 12 "client-id-repeated ...
// its frame and time are those of the packet that ended the connection:
// ... else its own last packet (when ... the capture ended)"; README "A
// file that breaks after some packets ... what was read before it
// stands"; standard "nothing already analyzed is lost". A KIP-1313 client
// that repeats its client ID is still connected where the file is cut
// (inside a record of another connection): the capture ends there, so its
// client-id-repeated is reported at its own last packet, as in the file cut
// cleanly at that record; the same with --workers 3; and the report is the
// one of the cleanly cut file (plus one line on stderr), but for saying it
// is incomplete (SPEC 5: "complete": false and its warnings).
func TestCaptureFileTruncatedEndsOpenConnections(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	x := bb8dX
	rc := c.Conn(pcapgen.ConnOptions{Client: bb8dAP("10.8.7.1:47000"), Broker: bb8dAP("10.0.0.9:9092")})
	rs := rc.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("repeater"), InstanceID: &x, CorrelationID: 1})
	bbMeta9(rs)
	bbMeta9(rs)
	bbMeta9(rs)
	lastOwn := c.Frames()
	for i := 0; i < 5; i++ {
		cn := c.Conn(pcapgen.ConnOptions{Client: bb8dAP(fmt.Sprintf("10.8.7.%d:47001", i+2)), Broker: bb8dAP("10.0.0.9:9092")})
		s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("other"), CorrelationID: 1})
		bbMeta9(s)
		bbMeta9(s)
		cn.Close()
	}
	bbMeta9(rs) // after the cut
	rc.Close()
	whole, offs := bb8dBytes(t, c)
	k := lastOwn + 12 // a record of another connection
	clean := bb8dWrite(t, "clean.pcap", whole[:offs[k]])
	cut := bb8dWrite(t, "cut.pcap", whole[:offs[k]+20])
	for _, w := range []string{"1", "3"} {
		_, want, _ := bb8dReadFile(t, []string{"--fail-on", "never", "--workers", w}, clean)
		wrep, _ := bb8dParse(t, "clean", want)
		var f *bbFinding
		for i := range wrep.Findings {
			if wrep.Findings[i].Rule == "client-id-repeated" {
				f = &wrep.Findings[i]
			}
		}
		if f == nil || f.Frame != lastOwn {
			t.Errorf("--workers %s, file cut at a record boundary: client-id-repeated %+v, want one at frame %d (its own last packet)", w, f, lastOwn)
		}
		code, got, errOut := bb8dReadFile(t, []string{"--fail-on", "never", "--workers", w}, cut)
		if code != 0 {
			t.Errorf("--workers %s: exit %d, want 0", w, code)
		}
		bb8dOneLine(t, "cut", errOut)
		// SPEC 5: the cut file's report says it is incomplete, and why;
		// the rest is the cleanly cut file's report.
		var gm, wm map[string]any
		json.Unmarshal([]byte(got), &gm)
		json.Unmarshal([]byte(want), &wm)
		if gm["complete"] != false || wm["complete"] != true {
			t.Errorf("--workers %s: complete %v for the cut file, %v for the clean one; want false and true", w, gm["complete"], wm["complete"])
		}
		if ws, _ := gm["warnings"].([]any); len(ws) == 0 {
			t.Errorf("--workers %s: the cut file's report gives no warning", w)
		}
		for _, m := range []map[string]any{gm, wm} {
			delete(m, "complete")
			delete(m, "warnings")
		}
		if !reflect.DeepEqual(gm, wm) {
			gj, _ := json.MarshalIndent(gm, "", "  ")
			wj, _ := json.MarshalIndent(wm, "", "  ")
			grep, _ := bb8dParse(t, "cut", got)
			t.Errorf("--workers %s: the file cut inside a record gives another report than the file cut before that record:\n%s\nfindings %v, want %v", w, bb8dDiff(string(wj), string(gj)), bb8dFrames(grep), bb8dFrames(wrep))
		}
	}
}

// TestCaptureFileEmptyAndRuntRecords: Wireshark numbers every record of a pcap as
// a frame, also one of zero captured bytes and a runt shorter than an
// Ethernet header (SPEC 5: frame "as Wireshark numbers it"). Standard:
// "never a panic". Such records are inserted after frame 2 and after frame
// 40 (in pcap and pcapng): the findings are those of the plain capture at
// frames shifted by the records before them, and every record is counted.
func TestCaptureFileEmptyAndRuntRecords(t *testing.T) {
	c, early, late := bb8dBase(pcapgen.Options{})
	var recs []bb8dRec
	shift := func(f int) int {
		switch {
		case f > 40:
			return f + 2
		case f > 2:
			return f + 1
		}
		return f
	}
	for i, r := range bb8dRecs(c) {
		if i == 2 {
			recs = append(recs, bb8dRec{t: r.t})
		}
		if i == 40 {
			recs = append(recs, bb8dRec{t: r.t, data: []byte{0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0}})
		}
		recs = append(recs, r)
	}
	ng := &bb8dNg{o: binary.LittleEndian}
	ng.shb()
	ng.idb(1)
	for _, r := range recs {
		ng.epb(r)
	}
	for _, tc := range []struct{ name, file string }{
		{"pcap", bb8dWrite(t, "runt.pcap", bb8dPcap(1, 262144, recs))},
		{"pcapng", bb8dWrite(t, "runt.pcapng", ng.b)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := bb8dReadFile(t, []string{"--fail-on", "never"}, tc.file)
			rep, ok := bb8dParse(t, tc.name, out)
			if code != 0 {
				t.Errorf("exit %d, want 0 (stderr %q)", code, errOut)
			}
			bb8dAtMostOneLine(t, tc.name, errOut)
			want := []string{fmt.Sprintf("instance-id-changed@%d", shift(early)), fmt.Sprintf("client-id-changed@%d", shift(late))}
			if ok && (!slices.Equal(bb8dFrames(rep), want) || rep.Totals.Packets != len(recs)) {
				t.Errorf("findings %v, packets %d; want %v and %d", bb8dFrames(rep), rep.Totals.Packets, want, len(recs))
			}
		})
	}
}
