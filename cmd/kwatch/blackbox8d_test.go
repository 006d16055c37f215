package main

// Black-box scenarios (batch 8d): malformed and hostile capture files,
// several files where one is bad, the command line's mistakes, hostile
// strings in the finding JSON and text, and byte-identical reports across
// --workers. Expectations come from SPEC.md (sections 5 and 6), README.md
// ("Commands", "Rules: where SPEC.md is silent") and the developers'
// standards:
//
//	"Bad input (truncated files, garbage bytes, hostile frame sizes, wrong
//	link types) gets a clear one-line error or a coverage event, never a
//	panic, and nothing already analyzed is lost."
//	"Logs go to stderr; stdout carries only the report."
//	"The same capture gives the same report, byte for byte, whether it runs
//	on one goroutine or is sharded by connection across workers
//	(--workers N)."
//
// Hostile inputs run kwatch in a child process (the test binary re-run as
// TestBB8DHelperProcess), so that a panic shows as a failed test, with its
// trace, instead of ending the whole test binary.

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/kwatch/kwatch/internal/pcapgen"
)

// ------------------------------------------------------------------ helpers

var (
	bb8dX    = pcapgen.SeqUUID(0x31)
	bb8dY    = pcapgen.SeqUUID(0x41)
	bb8dB    = pcapgen.SeqUUID(0x51) // broker-assigned telemetry ID
	bb8dC    = pcapgen.SeqUUID(0x61)
	bb8dZ    = pcapgen.SeqUUID(0x71)
	bb8dZero [16]byte

	bb8dTimeRE  = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$`)
	bb8dPanicRE = regexp.MustCompile(`(?m)^(panic: |fatal error: |goroutine \d+ \[)`)
)

func bb8dAP(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }

// TestBB8DHelperProcess is no test: it is the child process of bb8dExec,
// running kwatch's command line with the arguments it is given.
func TestBB8DHelperProcess(t *testing.T) {
	enc := os.Getenv("BB8D_HELPER_ARGS")
	if enc == "" {
		t.Skip("child process of the other TestBB8D tests")
	}
	var args []string
	if err := json.Unmarshal([]byte(enc), &args); err != nil {
		fmt.Fprintln(os.Stderr, "bad BB8D_HELPER_ARGS:", err)
		os.Exit(99)
	}
	os.Exit(runWith(args, os.Stdin, os.Stdout, os.Stderr))
}

// bb8dExec runs kwatch with args in a child process (stdin from stdin when
// not nil) and returns its exit status, stdout and stderr. A panic or a
// fatal runtime error fails the test.
func bb8dExec(t *testing.T, stdin []byte, args ...string) (int, string, string) {
	t.Helper()
	enc, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^TestBB8DHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "BB8D_HELPER_ARGS="+string(enc))
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("run %v: %v", args, err)
		}
		code = ee.ExitCode()
	}
	if bb8dPanicRE.MatchString(errb.String()) {
		lines := strings.SplitN(errb.String(), "\n", 25)
		t.Errorf("kwatch %v crashed (exit %d), standard: \"never a panic\":\n%s", bb8dArgs(args), code, strings.Join(lines[:min(len(lines), 24)], "\n"))
	}
	return code, out.String(), errb.String()
}

// bb8dArgs shortens temporary paths in args for messages.
func bb8dArgs(args []string) string {
	var out []string
	for _, a := range args {
		if filepath.IsAbs(a) {
			a = filepath.Base(a)
		}
		out = append(out, a)
	}
	return strings.Join(out, " ")
}

// bb8dOneLine asserts a non-empty, one-line stderr.
func bb8dOneLine(t *testing.T, what, stderr string) {
	t.Helper()
	s := strings.TrimRight(stderr, "\n")
	if s == "" || strings.Contains(s, "\n") {
		t.Errorf("%s: stderr %q, want a clear one-line reason", what, stderr)
	}
}

// bb8dAtMostOneLine asserts that stderr is empty or one line.
func bb8dAtMostOneLine(t *testing.T, what, stderr string) {
	t.Helper()
	if s := strings.TrimRight(stderr, "\n"); strings.Contains(s, "\n") {
		t.Errorf("%s: stderr has %d lines, want at most one:\n%s", what, strings.Count(s, "\n")+1, stderr)
	}
}

type bb8dReport struct {
	Totals struct {
		Packets          int            `json:"packets"`
		Connections      int            `json:"connections"`
		KafkaConnections int            `json:"kafka_connections"`
		Requests         int            `json:"requests"`
		Responses        int            `json:"responses"`
		Coverage         map[string]int `json:"coverage"`
	} `json:"totals"`
	Findings []bbFinding `json:"findings"`
}

// bb8dParse decodes a JSON report; an unreadable one fails the test.
func bb8dParse(t *testing.T, what, stdout string) (bb8dReport, bool) {
	t.Helper()
	var rep bb8dReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Errorf("%s: stdout is no JSON report (%v):\n%.600s", what, err, stdout)
		return rep, false
	}
	return rep, true
}

// bb8dFrames lists "rule@frame" of every finding, in report order.
func bb8dFrames(rep bb8dReport) []string {
	var out []string
	for _, f := range rep.Findings {
		out = append(out, fmt.Sprintf("%s@%d", f.Rule, f.Frame))
	}
	return out
}

func bb8dHas(rep bb8dReport, rule string, frame int) bool {
	for _, f := range rep.Findings {
		if f.Rule == rule && (frame == 0 || f.Frame == frame) {
			return true
		}
	}
	return false
}

func bb8dMeta(s *pcapgen.Session) int {
	f, _ := s.RoundTrip(pcapgen.Metadata(12, "orders"), pcapgen.MetadataResponse(12, "10.0.0.9", 9092))
	return f
}

// bb8dBase is a capture of 22 connections: an instance-id-changed (error)
// early, at frame early, 20 clean legacy connections, and a
// client-id-changed (warn) near the end, at frame late.
func bb8dBase(o pcapgen.Options) (c *pcapgen.Capture, early, late int) {
	c = pcapgen.New(o)
	x, y := bb8dX, bb8dY
	cn := c.Conn(pcapgen.ConnOptions{Client: bb8dAP("10.8.1.1:41000"), Broker: bb8dAP("10.0.0.9:9092")})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("orders-app"), InstanceID: &x, CorrelationID: 1})
	s.RoundTrip(pcapgen.APIVersions(4, "apache-kafka-java", "4.2.0"), pcapgen.APIVersionsResponse(4))
	s.Header.ClientID = nil
	bb8dMeta(s)
	s.Header.InstanceID = &y
	early = bb8dMeta(s)
	cn.Close()
	for i := 0; i < 20; i++ {
		cn := c.Conn(pcapgen.ConnOptions{Client: bb8dAP(fmt.Sprintf("10.8.2.%d:42000", i+1)), Broker: bb8dAP("10.0.0.9:9092")})
		s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr(fmt.Sprintf("pad-%d", i)), CorrelationID: 1})
		s.RoundTrip(pcapgen.APIVersions(3, "librdkafka", "2.6.0"), pcapgen.APIVersionsResponse(3))
		for j := 0; j < 3; j++ {
			bb8dMeta(s)
		}
		cn.Close()
	}
	cn = c.Conn(pcapgen.ConnOptions{Client: bb8dAP("10.8.3.1:43000"), Broker: bb8dAP("10.0.0.9:9092")})
	s = cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("a"), CorrelationID: 1})
	bb8dMeta(s)
	s.Header.ClientID = pcapgen.Ptr("b")
	late = bb8dMeta(s)
	cn.Close()
	return c, early, late
}

// bb8dPcapOffsets returns the byte offset of every record of c written as
// little-endian microsecond pcap (offs[i] = frame i+1's record header;
// offs[n] = the file's length).
func bb8dPcapOffsets(c *pcapgen.Capture) []int {
	offs := []int{24}
	for _, p := range c.Packets() {
		offs = append(offs, offs[len(offs)-1]+16+len(p.Data))
	}
	return offs
}

// bb8dRec is one packet record of a hand-written capture.
type bb8dRec struct {
	t     time.Time
	iface int
	data  []byte
}

func bb8dRecs(c *pcapgen.Capture) []bb8dRec {
	var out []bb8dRec
	for _, p := range c.Packets() {
		out = append(out, bb8dRec{t: p.Time, data: p.Data})
	}
	return out
}

// bb8dPcap writes a little-endian microsecond pcap of link type link.
func bb8dPcap(link, snaplen uint32, recs []bb8dRec) []byte {
	le := binary.LittleEndian
	b := le.AppendUint32(nil, 0xa1b2c3d4)
	b = le.AppendUint16(b, 2)
	b = le.AppendUint16(b, 4)
	b = le.AppendUint32(b, 0)
	b = le.AppendUint32(b, 0)
	b = le.AppendUint32(b, snaplen)
	b = le.AppendUint32(b, link)
	for _, r := range recs {
		b = bb8dPcapRec(b, r.t, uint32(len(r.data)), uint32(len(r.data)))
		b = append(b, r.data...)
	}
	return b
}

func bb8dPcapRec(b []byte, t time.Time, incl, orig uint32) []byte {
	le := binary.LittleEndian
	b = le.AppendUint32(b, uint32(t.Unix()))
	b = le.AppendUint32(b, uint32(t.Nanosecond()/1000))
	b = le.AppendUint32(b, incl)
	return le.AppendUint32(b, orig)
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

// bb8dReadFile runs `kwatch read --format json` (plus extra) on the files
// in a child process.
func bb8dReadFile(t *testing.T, extra []string, files ...string) (int, string, string) {
	t.Helper()
	args := append([]string{"read", "--format", "json"}, extra...)
	return bb8dExec(t, nil, append(args, files...)...)
}

func bb8dWrite(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func bb8dGzip(data []byte) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(data)
	zw.Close()
	return b.Bytes()
}

// bb8dCheckKept asserts what the standards require of a file that breaks
// after some packets: README "reported on stderr and what was read before
// it stands", so the early error finding is in the report and the exit
// status is 1 (SPEC 5: "1 when one does"), with one line on stderr.
func bb8dCheckKept(t *testing.T, what string, code int, stdout, stderr string, early int) (bb8dReport, bool) {
	t.Helper()
	if code != 1 {
		t.Errorf("%s: exit %d, want 1 (the error finding before the damage stands); stderr %q", what, code, stderr)
	}
	bb8dOneLine(t, what, stderr)
	rep, ok := bb8dParse(t, what, stdout)
	if ok && !bb8dHas(rep, "instance-id-changed", early) {
		t.Errorf("%s: instance-id-changed at frame %d (read before the damage) is lost; findings %v", what, early, bb8dFrames(rep))
	}
	return rep, ok
}

// ------------------------------------------------------- truncated files

// TestBB8DTruncatedPcap: README "A file that breaks after some packets
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
func TestBB8DTruncatedPcap(t *testing.T) {
	c, early, late := bb8dBase(pcapgen.Options{})
	whole, err := c.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	offs := bb8dPcapOffsets(c)
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
			var rep bb8dReport
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

// TestBB8DTruncatedPcapng: the same as TestBB8DTruncatedPcap for pcapng:
// cut inside an Enhanced Packet Block's header, inside its data, and
// between its data and its trailing length. README "A file that breaks
// after some packets (truncated, corrupt) is reported on stderr and what
// was read before it stands".
func TestBB8DTruncatedPcapng(t *testing.T) {
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

// TestBB8DPcapRecordLongerThanSnaplen: GRO on Linux hands tcpdump packets
// bigger than an old 65535 snaplen (an IPv4 packet of 65535 bytes is 65549
// with its Ethernet header), so real pcaps hold records whose captured
// length exceeds the header's snaplen; Wireshark and libpcap read on. The
// 64 KB segment here carries most of a Produce. Standard: "nothing already
// analyzed is lost", and a file read on (no error on stderr) must lose
// nothing after it either: the instance-id-changed findings before and
// after the big record are reported, and every packet counted.
func TestBB8DPcapRecordLongerThanSnaplen(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	x, y := bb8dX, bb8dY
	cn := c.Conn(pcapgen.ConnOptions{Client: bb8dAP("10.8.4.1:44000"), Broker: bb8dAP("10.0.0.9:9092"), Perturb: &pcapgen.Perturb{MSS: 65495}})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("big-app"), InstanceID: &x, CorrelationID: 1})
	s.RoundTrip(pcapgen.APIVersions(4, "apache-kafka-java", "4.2.0"), pcapgen.APIVersionsResponse(4))
	s.Header.ClientID = nil
	s.Header.InstanceID = &y
	before := bb8dMeta(s)
	s.RoundTrip(pcapgen.Produce(9, "orders", bb8dZero, bytes.Repeat([]byte{7}, 65600)), pcapgen.ProduceResponse(9, "orders", bb8dZero))
	after := bb8dMeta(s)
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

// TestBB8DPcapAbsurdRecordLength: a record header claiming 2 GB (or
// 4 GB - 1, negative as an int32) of captured data after ~180 good
// packets. Standard: "hostile frame sizes ... get a clear one-line error
// or a coverage event, never a panic, and nothing already analyzed is
// lost": the early finding stands (exit 1), one line on stderr, and kwatch
// does not allocate the 2 GB the header claims.
func TestBB8DPcapAbsurdRecordLength(t *testing.T) {
	c, early, late := bb8dBase(pcapgen.Options{})
	whole, err := c.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	offs := bb8dPcapOffsets(c)
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

// TestBB8DPcapngBadBlockLength: a pcapng whose block after ~180 good
// packets has a broken total length: not a multiple of 4, under the 12-byte
// minimum, a trailing length that differs from the leading one, or a
// length of nearly 2 GB. Standard: "Bad input ... gets a clear one-line
// error or a coverage event, never a panic, and nothing already analyzed is
// lost": the early finding stands (exit 1) and the damage is one line on
// stderr.
func TestBB8DPcapngBadBlockLength(t *testing.T) {
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

// TestBB8DPcapngNonPacketBlocks: SPEC 5 "frame is the 1-based packet
// number in the capture file (as Wireshark numbers it)". Wireshark skips
// blocks that hold no packet (an unknown block type, a Decryption Secrets
// Block, statistics, name resolution) and numbers every packet block: the
// Simple Packet Block (type 3) and the obsolete Packet Block (type 2) are
// frames. Each case inserts its blocks after frame 2, before the early
// finding; the findings are those of the plain capture at frames shifted by
// the packet blocks inserted; and, read as the first of two files, the
// second file's frames continue after them (README: "frame numbers continue
// from one file to the next, as mergecap -a numbers them").
func TestBB8DPcapngNonPacketBlocks(t *testing.T) {
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
			n := c.Frames() + tc.shift
			code, out, errOut = bb8dReadFile(t, []string{"--fail-on", "never"}, path, secondPath)
			rep, ok = bb8dParse(t, tc.name+" + second file", out)
			if code != 0 || errOut != "" {
				t.Errorf("two files: exit %d, stderr %q", code, errOut)
			}
			want = append(want, fmt.Sprintf("instance-id-changed@%d", n+e2), fmt.Sprintf("client-id-changed@%d", n+l2))
			if ok {
				if got := bb8dFrames(rep); !slices.Equal(got, want) {
					t.Errorf("two files: findings %v, want %v", got, want)
				}
			}
		})
	}
}

// TestBB8DPcapngPacketWithoutInterface: an Enhanced Packet Block names an
// interface that its section has not described: before any Interface
// Description Block, in a second section (each section numbers its own
// interfaces from 0: the first section's do not carry over), or an
// interface index past the last. Such a block cannot be decoded (no link
// type). Standard: "a clear one-line error or a coverage event, never a
// panic, and nothing already analyzed is lost": never silently; the
// findings read before it stand.
func TestBB8DPcapngPacketWithoutInterface(t *testing.T) {
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

// TestBB8DOtherByteOrder: SPEC 6 "offline: pcap or pcapng": a big-endian
// pcapng (written on a big-endian host; the section header's byte-order
// magic says so), a pcapng of two sections of different byte orders (two
// captures joined with cat), and a big-endian pcap with nanosecond
// timestamps: the same findings at the same frames and times as the
// little-endian microsecond pcap (SPEC 5: time "2026-11-29T16:49:25.123456Z",
// the packet's own time).
func TestBB8DOtherByteOrder(t *testing.T) {
	start := time.Date(2026, 11, 29, 16, 49, 25, 123456000, time.UTC)
	c, early, late := bb8dBase(pcapgen.Options{Start: start})
	wantRep, _ := bbReadAs[bb8dReport](t, bbCaptureFile(t, c, "ref.pcap"))
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

// TestBB8DGzipDamage: SPEC 6 "offline: pcap or pcapng (also .gz)"; README
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
func TestBB8DGzipDamage(t *testing.T) {
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

// TestBB8DEmptyAndHeaderOnly: SPEC 5 exit 2 "when the input cannot be read
// ... (with a one-line reason on stderr)": an empty file and empty standard
// input, for read in every format. A capture with a file header and no
// packet (pcap; pcapng with a section header, with or without an interface)
// is a valid empty capture (tcpdump -c 0, a rotation with no traffic):
// exit 0, a report with zero packets and (README 14) "findings": [].
func TestBB8DEmptyAndHeaderOnly(t *testing.T) {
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
			if code != 0 || errOut != "" {
				t.Errorf("exit %d, stderr %q; want 0 and nothing (a valid capture without packets)", code, errOut)
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

// TestBB8DRandomBytes: standard "Bad input (... garbage bytes ...) gets a
// clear one-line error or a coverage event, never a panic". Random bytes
// with no capture magic: exit 2, one line, no report (SPEC 5). Random bytes
// after a valid pcap or pcapng header (hostile record and block lengths):
// either exit 2 with one line and no report, or a report on stdout (exit 0
// or 1) with at most one line on stderr; dump likewise.
func TestBB8DRandomBytes(t *testing.T) {
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

// TestBB8DUnsupportedLinkTypes: standard "Bad input (... wrong link types)
// gets a clear one-line error or a coverage event, never a panic". A pcap of
// Linux USB URBs (link type 189), and a Wi-Fi monitor-mode pcap (radiotap,
// 127) carrying the Kafka packets: kwatch either decodes the Kafka inside
// (the findings are there) or says in one line that it cannot; it never
// gives a silent empty report. Beside an Ethernet interface in one pcapng,
// USB packets change nothing but the frame numbers (SPEC 5 "as Wireshark
// numbers it").
func TestBB8DUnsupportedLinkTypes(t *testing.T) {
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

// --------------------------------------------------------- several files

// bb8dSplit writes c's packets [from, to) as a little-endian pcap.
func bb8dSplit(t *testing.T, c *pcapgen.Capture, name string, from, to int) string {
	t.Helper()
	return bb8dWrite(t, name, bb8dPcap(1, 262144, bb8dRecs(c)[from:to]))
}

// TestBB8DSeveralFilesOneBad: README "Several files are read in order as
// one capture (rotated tcpdump -C files): frame numbers continue from one
// file to the next" and "A file that breaks after some packets (truncated,
// corrupt) is reported on stderr and what was read before it stands";
// SPEC 5 exit 2 "when the input cannot be read". With several files the
// one-line reason names the bad file.
//   - the second of two files is cut inside its last record: both files'
//     findings stand at their frames, exit 1;
//   - an empty (header-only) file between two: frames continue, nothing on
//     stderr;
//   - the second file is garbage, or empty: exit 2 with one line naming it;
//     if a report is written anyway it holds the first file's finding;
//   - the first file is garbage: exit 2, one line naming it.
func TestBB8DSeveralFilesOneBad(t *testing.T) {
	c, early, late := bb8dBase(pcapgen.Options{})
	n := c.Frames()
	k := (early + late) / 2
	f1 := bb8dSplit(t, c, "rot0.pcap", 0, k)
	rest := bb8dPcap(1, 262144, bb8dRecs(c)[k:])
	f2cut := bb8dWrite(t, "rot1.pcap", rest[:len(rest)-10])
	t.Run("second-truncated", func(t *testing.T) {
		code, out, errOut := bb8dReadFile(t, nil, f1, f2cut)
		rep, ok := bb8dCheckKept(t, "second truncated", code, out, errOut, early)
		if ok && !bb8dHas(rep, "client-id-changed", late) {
			t.Errorf("client-id-changed at frame %d (second file, before its cut) lost: %v", late, bb8dFrames(rep))
		}
		if !strings.Contains(errOut, "rot1.pcap") {
			t.Errorf("stderr %q does not name the truncated file rot1.pcap", errOut)
		}
		if ok && rep.Totals.Packets != n-1 {
			t.Errorf("packets %d, want %d", rep.Totals.Packets, n-1)
		}
	})
	t.Run("empty-capture-between", func(t *testing.T) {
		mid := bb8dWrite(t, "rot-empty.pcap", bb8dPcap(1, 262144, nil))
		f2 := bb8dSplit(t, c, "rot2.pcap", k, n)
		code, out, errOut := bb8dReadFile(t, nil, f1, mid, f2)
		rep, ok := bb8dParse(t, "empty between", out)
		if code != 1 || errOut != "" {
			t.Errorf("exit %d, stderr %q; want 1 and nothing", code, errOut)
		}
		if want := []string{fmt.Sprintf("instance-id-changed@%d", early), fmt.Sprintf("client-id-changed@%d", late)}; ok && !slices.Equal(bb8dFrames(rep), want) {
			t.Errorf("findings %v, want %v", bb8dFrames(rep), want)
		}
	})
	garbage := bb8dWrite(t, "rot-garbage.pcap", bytes.Repeat([]byte("this is no capture\n"), 40))
	zero := bb8dWrite(t, "rot-zero.pcap", nil)
	for _, tc := range []struct {
		name  string
		files []string
		bad   string
	}{
		{"second-garbage", []string{f1, garbage}, "rot-garbage.pcap"},
		{"second-zero-bytes", []string{f1, zero}, "rot-zero.pcap"},
		{"first-garbage", []string{garbage, f1}, "rot-garbage.pcap"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, cmd := range []string{"read", "dump"} {
				code, out, errOut := bb8dExec(t, nil, append([]string{cmd, "--format", "json"}, tc.files...)...)
				what := cmd + " " + tc.name
				if code != 2 {
					t.Errorf("%s: exit %d, want 2 (SPEC 5: the input cannot be read)", what, code)
				}
				bb8dOneLine(t, what, errOut)
				if !strings.Contains(errOut, tc.bad) {
					t.Errorf("%s: stderr %q does not name %s", what, errOut, tc.bad)
				}
				if cmd == "read" && out != "" && tc.name != "first-garbage" {
					if rep, ok := bb8dParse(t, what, out); ok && !bb8dHas(rep, "instance-id-changed", early) {
						t.Errorf("%s: a report without the first file's finding: %v", what, bb8dFrames(rep))
					}
				}
			}
		})
	}
}

// -------------------------------------------------------- command line

// TestBB8DCommandLineMistakes: SPEC 5 "2 when ... the command line is
// wrong (with a one-line reason on stderr)"; SPEC 6 gives the flags and
// their values (--format text|json|ndjson, --port N, --max-frame BYTES,
// "kwatch rules [RULE]"); README --workers N. Every mistake below exits 2
// with one line on stderr and nothing on stdout (standard: "stdout carries
// only the report"). Mistakes not pinned by earlier batches: yaml, port
// -1/65536/empty, --max-frame 0 (SPEC 1: a frame under 8 bytes is already
// an error, so no frame could pass) and past int64, --workers -1, a
// flag without its value, a directory as FILE, `rules` with an extra
// argument, and dump's flags.
func TestBB8DCommandLineMistakes(t *testing.T) {
	c, _, _ := bb8dBase(pcapgen.Options{})
	path := bbCaptureFile(t, c, "ok.pcap")
	dir := t.TempDir()
	for _, args := range [][]string{
		{"read", "--format", "yaml", path},
		{"dump", "--format", "yaml", path},
		{"read", "--port", "-1", path},
		{"read", "--port", "65536", path},
		{"read", "--port", "", path},
		{"dump", "--port", "0", path},
		{"dump", "--port", "70000", path},
		{"read", "--max-frame", "0", path},
		{"read", "--max-frame", "99999999999999999999", path},
		{"dump", "--max-frame", "-1", path},
		{"read", "--workers", "-1", path},
		{"read", "--fail-on", "", path},
		{"dump", "--profile", "bogus", path},
		{"read", path, "--format"},
		{"read", dir},
		{"dump", dir},
		{"read", path, dir},
		{"rules", "ghost-member", "no-such-rule"},
		{"rules", "--bogus"},
		{"dump", "--fail-on", "warn", path},
	} {
		code, out, errOut := runKwatch(args...)
		what := bb8dArgs(args)
		if code != 2 {
			t.Errorf("%s: exit %d, want 2", what, code)
		}
		bb8dOneLine(t, what, errOut)
		if out != "" {
			t.Errorf("%s: stdout %.200q on a command-line mistake", what, out)
		}
	}
	// Right spellings of the same flags work.
	for _, args := range [][]string{
		{"read", "--format=json", "--fail-on=never", path},
		{"read", "--format", "json", "--fail-on", "never", "--port", "65535", "--port", "9092", path},
		{"read", "--format", "json", "--fail-on", "never", "--max-frame", "8", path},
	} {
		code, out, errOut := runKwatch(args...)
		if code != 0 || errOut != "" || !json.Valid([]byte(out)) {
			t.Errorf("%s: exit %d, stderr %q, JSON %v; want 0, nothing, a report", bb8dArgs(args), code, errOut, json.Valid([]byte(out)))
		}
	}
	// --workers 0: a mistake (exit 2, one line) or the default.
	code, out, errOut := runKwatch("read", "--format", "json", "--fail-on", "never", "--workers", "0", path)
	_, def, _ := runKwatch("read", "--format", "json", "--fail-on", "never", path)
	if code == 2 {
		bb8dOneLine(t, "--workers 0", errOut)
	} else if code != 0 || out != def {
		t.Errorf("--workers 0: exit %d, report same as default %v", code, out == def)
	}
}

// TestBB8DHostileFrameSizes: SPEC 1 "A frame size < 8 or > 100 MiB
// (configurable) is a framing error, never a panic"; SPEC 6 --max-frame.
// Inside the TCP streams: a size of -1 (0xffffffff), a size of 2 GiB - 1
// with a few KB behind it, and a size of 0, each after a first request that
// makes the connection Kafka; then a clean connection with an
// instance-id-changed. With the default --max-frame and with the largest
// int32 (if accepted): the framing errors are coverage events, the later
// connection's finding stands (exit 1), and a 2 GiB size costs no more than
// the bytes captured (SPEC 1: "must cost no more than the bytes they occupy
// in the capture").
func TestBB8DHostileFrameSizes(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	for i, size := range []uint32{0xffffffff, 0x7fffffff, 0} {
		cn := c.Conn(pcapgen.ConnOptions{Client: bb8dAP(fmt.Sprintf("10.8.5.%d:45000", i+1)), Broker: bb8dAP("10.0.0.9:9092")})
		s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("hostile"), CorrelationID: 1})
		bb8dMeta(s)
		b := binary.BigEndian.AppendUint32(nil, size)
		b = append(b, 0, 0, 0, 12, 0, 0, 0, 2, 0xff, 0xff, 0)
		b = append(b, bytes.Repeat([]byte{0x41}, 4000)...)
		cn.Raw(pcapgen.ToBroker, b)
		cn.Close()
	}
	x, y := bb8dX, bb8dY
	cn := c.Conn(pcapgen.ConnOptions{Client: bb8dAP("10.8.5.9:45000"), Broker: bb8dAP("10.0.0.9:9092")})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("good"), InstanceID: &x, CorrelationID: 1})
	bb8dMeta(s)
	s.Header.ClientID = nil
	s.Header.InstanceID = &y
	changed := bb8dMeta(s)
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

// ---------------------------------------------------- finding JSON text

// TestBB8DTimeWholeSeconds: SPEC 5's time "2026-11-29T16:49:25.123456Z"
// has six fractional digits. Packets on whole seconds keep them
// (".000000Z", not RFC 3339's shortest "16:49:25Z"), in the json report,
// ndjson and dump.
func TestBB8DTimeWholeSeconds(t *testing.T) {
	c, early, _ := bb8dBase(pcapgen.Options{Start: time.Date(2026, 11, 29, 16, 49, 25, 0, time.UTC), Step: time.Second})
	path := bbCaptureFile(t, c, "secs.pcap")
	rep, _ := bbReadAs[bb8dReport](t, path)
	want := c.Packets()[early-1].Time.UTC().Format("2006-01-02T15:04:05.000000Z")
	if len(rep.Findings) == 0 || rep.Findings[0].Time != want {
		t.Errorf("json: first finding %+v, want time %s", rep.Findings, want)
	}
	for _, f := range rep.Findings {
		if !bb8dTimeRE.MatchString(f.Time) {
			t.Errorf("json: %s time %q", f.Rule, f.Time)
		}
	}
	_, out, _ := runKwatch("read", "--format", "ndjson", "--fail-on", "never", path)
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var f bbFinding
		json.Unmarshal([]byte(l), &f)
		if !bb8dTimeRE.MatchString(f.Time) {
			t.Errorf("ndjson: time %q in %s", f.Time, l)
		}
	}
	_, out, _ = runKwatch("dump", "--format", "ndjson", path)
	bad := 0
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var o struct {
			Kind string `json:"kind"`
			Time string `json:"time"`
		}
		json.Unmarshal([]byte(l), &o)
		if o.Kind != "event" && !bb8dTimeRE.MatchString(o.Time) {
			if bad++; bad <= 3 {
				t.Errorf("dump: time %q in %s", o.Time, l)
			}
		}
	}
}

// TestBB8DHostileClientIDs: the client ID is any bytes a client sends
// (int16-length string). Standard: bad input never breaks the output, and
// "stdout carries only the report": the JSON report, ndjson and dump stay
// valid JSON in valid UTF-8 (README: the encoder is "held byte for byte to
// encoding/json", which writes an invalid byte as U+FFFD), dump's
// client_id is the client ID as encoding/json would give it, and the text
// report and dump text are readable: no terminal escape or other control
// byte from the capture, no line forged by a newline inside a client ID.
func TestBB8DHostileClientIDs(t *testing.T) {
	hostile := "evil\"\\\x01\x1b[2J\x1b]0;owned\x07\r\nFAKE finding line\u2028<&>\xff\x7f"
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{Client: bb8dAP("10.8.6.1:46000"), Broker: bb8dAP("10.0.0.9:9092")})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("orders"), CorrelationID: 1})
	bb8dMeta(s)
	s.Header.ClientID = pcapgen.Ptr(hostile)
	bb8dMeta(s)
	cn.Close()
	cn = c.Conn(pcapgen.ConnOptions{Client: bb8dAP("10.8.6.2:46000"), Broker: bb8dAP("10.0.0.9:9092")})
	s = cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr(hostile), CorrelationID: 1})
	bb8dMeta(s)
	s.Header.ClientID = pcapgen.Ptr("orders")
	bb8dMeta(s)
	cn.Close()
	path := bbCaptureFile(t, c, "hostile-cid.pcap")
	decoded := strings.ToValidUTF8(hostile, "\uFFFD")

	for _, format := range []string{"json", "ndjson"} {
		code, out, errOut := runKwatch("read", "--format", format, "--fail-on", "never", path)
		if code != 0 {
			t.Errorf("read %s: exit %d (%s)", format, code, errOut)
		}
		if !utf8.ValidString(out) {
			t.Errorf("read %s: stdout is not valid UTF-8", format)
		}
		docs := []string{out}
		if format == "ndjson" {
			docs = strings.Split(strings.TrimRight(out, "\n"), "\n")
		}
		for _, d := range docs {
			if !json.Valid([]byte(d)) {
				t.Errorf("read %s: not valid JSON: %.300q", format, d)
			}
		}
		if n := strings.Count(out, `"rule":"client-id-changed"`) + strings.Count(out, `"rule": "client-id-changed"`); n != 2 {
			t.Errorf("read %s: %d client-id-changed findings, want 2 (one per connection)", format, n)
		}
		var anyHostile bool
		for _, d := range docs {
			var v any
			json.Unmarshal([]byte(d), &v)
			anyHostile = anyHostile || strings.Contains(fmt.Sprint(v), "FAKE finding line")
		}
		if !anyHostile {
			t.Errorf("read %s: the hostile client ID is in no field", format)
		}
	}
	code, out, errOut := runKwatch("dump", "--format", "ndjson", path)
	if code != 0 || !utf8.ValidString(out) {
		t.Errorf("dump ndjson: exit %d (%s), valid UTF-8 %v", code, errOut, utf8.ValidString(out))
	}
	seen := 0
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		var o map[string]any
		if err := json.Unmarshal([]byte(l), &o); err != nil {
			t.Errorf("dump ndjson line is no JSON: %.300q", l)
			continue
		}
		if cid, ok := o["client_id"].(string); ok && strings.HasPrefix(cid, "evil") {
			seen++
			if cid != decoded {
				t.Errorf("dump client_id %q, want %q", cid, decoded)
			}
		}
	}
	if seen != 2 {
		t.Errorf("dump: %d requests carry the hostile client ID, want 2", seen)
	}
	for _, args := range [][]string{{"read", "--fail-on", "never", path}, {"dump", path}} {
		_, out, _ := runKwatch(args...)
		for i, r := range out {
			if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r < 0xa0) {
				t.Errorf("%s: control character %U at byte %d of the text output: %.120q", args[0], r, i, out[max(0, i-40):min(len(out), i+40)])
				break
			}
		}
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "FAKE finding line") {
				t.Errorf("%s: a newline inside a client ID forged an output line: %q", args[0], l)
			}
		}
	}
}

// ------------------------------------------------------------ workers

// bb8dFleet is a multi-connection capture with findings across
// connections: member-id-collision (two instances, and two legacy hosts),
// instance-id-shared (one instance ID from two hosts),
// telemetry-id-not-adopted, plus client-id-changed and client-id-repeated
// on many connections, a stream gap, requests cut into small segments and
// interleaved across connections, and connections left open at the end.
func bb8dFleet() *pcapgen.Capture {
	c := pcapgen.New(pcapgen.Options{Perturb: pcapgen.Perturb{MSS: 48}})
	type cl struct {
		cn *pcapgen.Conn
		s  *pcapgen.Session
	}
	var all []cl
	dial := func(client, broker, cid string, inst *[16]byte) cl {
		cn := c.Conn(pcapgen.ConnOptions{Client: bb8dAP(client), Broker: bb8dAP(broker)})
		s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr(cid), InstanceID: inst, CorrelationID: 1})
		s.RoundTrip(pcapgen.APIVersions(4, "apache-kafka-java", "4.2.0"), pcapgen.APIVersionsResponse(4))
		if inst != nil {
			s.Header.ClientID = nil
		}
		x := cl{cn, s}
		all = append(all, x)
		return x
	}
	x1, x2, x3 := bb8dX, bb8dY, bb8dC
	m := pcapgen.JavaString(bb8dZ)
	m2 := pcapgen.JavaString(pcapgen.SeqUUID(0x91))
	join := func(x cl, group, member string, epoch int32) {
		x.s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(1, group, member, epoch), pcapgen.ConsumerGroupHeartbeatResponse(1, 0, pcapgen.Ptr(member), epoch+1))
	}
	a := dial("10.9.1.1:45001", "10.0.0.1:9092", "app-a", &x1)
	b := dial("10.9.1.2:45001", "10.0.0.2:9092", "app-b", &x2)
	l1 := dial("10.9.2.1:46001", "10.0.0.1:9092", "legacy-1", nil)
	l2 := dial("10.9.2.2:46001", "10.0.0.3:9092", "legacy-2", nil)
	s1 := dial("10.9.3.1:47001", "10.0.0.1:9092", "shared", &x3)
	tl := dial("10.9.4.1:48001", "10.0.0.2:9092", "telemetry", nil)
	var pads []cl
	for i := 0; i < 24; i++ {
		var inst *[16]byte
		if i%3 == 0 {
			id := pcapgen.SeqUUID(byte(0xc0 + i))
			inst = &id
		}
		pads = append(pads, dial(fmt.Sprintf("10.9.5.%d:%d", i+1, 49000+i), fmt.Sprintf("10.0.0.%d:9092", i%3+1), fmt.Sprintf("pad-%d", i), inst))
	}
	join(a, "g1", m, 0)
	join(l1, "g2", m2, 0)
	s2 := dial("10.9.3.2:47002", "10.0.0.3:9092", "shared", &x3)
	for i, p := range pads {
		if i%3 == 0 {
			p.s.Header.ClientID = pcapgen.Ptr(fmt.Sprintf("pad-%d", i)) // repeats: client-id-repeated
		}
		bb8dMeta(p.s)
	}
	join(b, "g1", m, 0)
	join(l2, "g2", m2, 0)
	corr, _ := tl.s.Request(pcapgen.GetTelemetrySubscriptions(bb8dZero))
	tl.s.Respond(corr, pcapgen.GetTelemetrySubscriptionsResponse(0, bb8dB, 7))
	bb8dMeta(s1.s)
	bb8dMeta(s2.s)
	pads[4].cn.DropNext(1)
	for i, p := range pads {
		if i%4 == 1 {
			p.s.Header.ClientID = pcapgen.Ptr(fmt.Sprintf("renamed-%d", i))
		}
		bb8dMeta(p.s)
	}
	tl.s.RoundTrip(pcapgen.PushTelemetry(bb8dC, 7), pcapgen.PushTelemetryResponse(0))
	join(a, "g1", m, 1)
	join(b, "g1", m, 1)
	join(l1, "g2", m2, 1)
	join(l2, "g2", m2, 1)
	for i, x := range all {
		switch i % 3 {
		case 0:
			x.cn.Close()
		case 1:
			x.cn.Reset()
		}
	}
	return c
}

// TestBB8DWorkersByteIdentical: README "--workers N (connections sharded
// by flow over N goroutines ...; the report is byte for byte the same for
// any N)"; standard "The same capture gives the same report, byte for byte,
// whether it runs on one goroutine or is sharded by connection across
// workers (--workers N)". A capture whose findings need state across
// connections (member-id-collision, instance-id-shared,
// telemetry-id-not-adopted) and end-of-connection findings
// (client-id-repeated), read with --workers 1, 2, 3 and 8: stdout (json,
// ndjson, text) and the ndjson summary on stderr are identical; dump too.
func TestBB8DWorkersByteIdentical(t *testing.T) {
	c := bb8dFleet()
	path := bbCaptureFile(t, c, "fleet.pcap")
	rep, _ := bbReadAs[bb8dReport](t, path, "--workers", "1")
	got := map[string]int{}
	for _, f := range rep.Findings {
		got[f.Rule]++
	}
	for rule, n := range map[string]int{"member-id-collision": 2, "instance-id-shared": 1, "telemetry-id-not-adopted": 1, "client-id-repeated": 1, "client-id-changed": 1} {
		if got[rule] < n {
			t.Errorf("scenario: %d %s findings, want at least %d (all: %v)", got[rule], rule, n, got)
		}
	}
	for _, cmd := range [][]string{
		{"read", "--format", "json"}, {"read", "--format", "ndjson"}, {"read", "--format", "text"},
		{"dump", "--format", "ndjson"}, {"dump", "--format", "text"},
	} {
		var first, firstErr string
		for _, w := range []string{"1", "2", "3", "8", "1"} {
			args := append(slices.Clone(cmd), "--workers", w)
			if cmd[0] == "read" {
				args = append(args, "--fail-on", "never")
			}
			code, out, errOut := runKwatch(append(args, path)...)
			if code != 0 {
				t.Errorf("%s: exit %d (%s)", bb8dArgs(args), code, errOut)
				continue
			}
			if w == "1" && first == "" {
				first, firstErr = out, errOut
				continue
			}
			if out != first {
				t.Errorf("%s: stdout differs from --workers 1:\n%s", bb8dArgs(args), bb8dDiff(first, out))
			}
			if errOut != firstErr {
				t.Errorf("%s: stderr differs from --workers 1:\n%s", bb8dArgs(args), bb8dDiff(firstErr, errOut))
			}
		}
	}
}

// bb8dDiff shows the first differing line of a and b.
func bb8dDiff(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < max(len(la), len(lb)); i++ {
		var x, y string
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if x != y {
			return "line " + strconv.Itoa(i+1) + ":\n  want " + fmt.Sprintf("%.300q", x) + "\n  got  " + fmt.Sprintf("%.300q", y)
		}
	}
	return "(same lines)"
}

// TestBB8DWorkersOrderSensitive: README 7 "an instance is alive while any
// connection that carried its instance ID is open ...; a client without one
// while the connection it last used the member ID on is open", so whether
// two claimants collide depends on the order of one connection's close and
// another connection's join, packets apart, on connections that --workers
// shards apart. Ten pairs of legacy clients on different hosts: for even
// pairs the first closes (FIN, FIN) before the second joins with the same
// member ID (no collision: not alive at the same time), for odd pairs the
// second joins one packet before the first's close (a collision). An
// instance with two connections closes one and keeps the other while a
// second instance takes its member ID (a collision); a third instance
// closes both before a fourth takes its ID (none). A KIP-1313 client that
// repeats its client ID goes idle for 11 minutes (README 16) while others
// go on. Standard: byte-identical reports for --workers 1, 2, 3, 8, with
// exactly 5+1 member-id-collision findings in each.
func TestBB8DWorkersOrderSensitive(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	hb := func(s *pcapgen.Session, member string, epoch int32) {
		s.RoundTrip(pcapgen.ConsumerGroupHeartbeat(1, "g", member, epoch), pcapgen.ConsumerGroupHeartbeatResponse(1, 0, pcapgen.Ptr(member), epoch+1))
	}
	legacy := func(addr string) (*pcapgen.Conn, *pcapgen.Session) {
		cn := c.Conn(pcapgen.ConnOptions{Client: bb8dAP(addr), Broker: bb8dAP("10.0.0.1:9092")})
		s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("legacy-" + addr), CorrelationID: 1})
		s.RoundTrip(pcapgen.APIVersions(3, "librdkafka", "2.6.0"), pcapgen.APIVersionsResponse(3))
		return cn, s
	}
	modern := func(addr string, inst [16]byte) (*pcapgen.Conn, *pcapgen.Session) {
		cn := c.Conn(pcapgen.ConnOptions{Client: bb8dAP(addr), Broker: bb8dAP("10.0.0.2:9092")})
		s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("modern"), InstanceID: &inst, CorrelationID: 1})
		s.RoundTrip(pcapgen.APIVersions(4, "apache-kafka-java", "4.2.0"), pcapgen.APIVersionsResponse(4))
		s.Header.ClientID = nil
		return cn, s
	}
	_, idleS := modern("10.11.9.9:40999", pcapgen.SeqUUID(0xe1))
	idleS.Header.ClientID = pcapgen.Ptr("modern")
	bb8dMeta(idleS)
	bb8dMeta(idleS)
	c.Sleep(11 * time.Minute) // the idle connection ends when the next packet comes
	type pair struct {
		p, q   *pcapgen.Conn
		ps, qs *pcapgen.Session
		m      string
	}
	var pairs []pair
	for i := 0; i < 10; i++ {
		p, ps := legacy(fmt.Sprintf("10.11.%d.1:41000", i))
		q, qs := legacy(fmt.Sprintf("10.11.%d.2:41000", i))
		m := pcapgen.JavaString(pcapgen.SeqUUID(byte(0x10 * i)))
		hb(ps, m, 0)
		pairs = append(pairs, pair{p, q, ps, qs, m})
	}
	for _, pr := range pairs {
		hb(pr.ps, pr.m, 1)
	}
	for i, pr := range pairs {
		if i%2 == 0 {
			pr.p.Close()
			hb(pr.qs, pr.m, 0)
		} else {
			hb(pr.qs, pr.m, 0)
			pr.p.Close()
		}
	}
	i1, i2, i3, i4 := pcapgen.SeqUUID(0xa3), pcapgen.SeqUUID(0xa5), pcapgen.SeqUUID(0xa7), pcapgen.SeqUUID(0xa9)
	a1, as1 := modern("10.12.0.1:42001", i1)
	a2, as2 := modern("10.12.0.1:42002", i1)
	ma := pcapgen.JavaString(i1)
	hb(as1, ma, 0)
	bb8dMeta(as2)
	a1.Close()
	b1, bs1 := modern("10.12.0.2:42001", i2)
	hb(bs1, ma, 0) // i1 still alive on a2: collision
	c1, cs1 := modern("10.12.0.3:42001", i3)
	c2, cs2 := modern("10.12.0.3:42002", i3)
	mc := pcapgen.JavaString(i3)
	hb(cs1, mc, 0)
	bb8dMeta(cs2)
	c1.Close()
	c2.Reset()
	d1, ds1 := modern("10.12.0.4:42001", i4)
	hb(ds1, mc, 0) // i3 gone: no collision
	for _, pr := range pairs {
		pr.q.Close()
	}
	a2.Close()
	b1.Close()
	d1.Close()
	path := bbCaptureFile(t, c, "order.pcap")
	var first string
	for _, w := range []string{"1", "2", "3", "8"} {
		code, out, errOut := runKwatch("read", "--format", "json", "--fail-on", "never", "--workers", w, path)
		if code != 0 {
			t.Fatalf("--workers %s: exit %d (%s)", w, code, errOut)
		}
		rep, ok := bb8dParse(t, "--workers "+w, out)
		if ok {
			var coll []string
			for _, f := range rep.Findings {
				if f.Rule == "member-id-collision" {
					coll = append(coll, f.Conn.Client)
				}
			}
			slices.Sort(coll)
			want := []string{"10.11.1.2:41000", "10.11.3.2:41000", "10.11.5.2:41000", "10.11.7.2:41000", "10.11.9.2:41000", "10.12.0.2:42001"}
			if !slices.Equal(coll, want) {
				t.Errorf("--workers %s: member-id-collision on %v, want %v", w, coll, want)
			}
		}
		if first == "" {
			first = out
		} else if out != first {
			t.Errorf("--workers %s: report differs from --workers 1:\n%s", w, bb8dDiff(first, out))
		}
	}
}

// TestBB8DPcapngTimestampUnits: SPEC 5 time is the packet's time,
// "2026-11-29T16:49:25.123456Z". pcapng interfaces give their own
// timestamp units and offset (if_tsresol: a power of 10, or of 2 when its
// high bit is set; if_tsoffset: seconds added to every timestamp).
// Packets every 1/64 s (exact in every unit here) through an interface of
// 2^-20 s units, one of milliseconds, one of nanoseconds with an offset of
// one day: the findings' times are the packets' times (plus the offset),
// and the frames those of the plain capture.
func TestBB8DPcapngTimestampUnits(t *testing.T) {
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

// TestBB8DPcapHeaderOddFields: classic pcap headers seen in the wild that
// Wireshark reads: snaplen 0 (old writers) or 0xffffffff, a record whose
// original length is below its captured length, and the "modified" pcap
// magic 0xa1b2cd34 (24-byte records: index, protocol, type, padding).
// Standard: "a clear one-line error ... and nothing already analyzed is
// lost": kwatch either reads them (the findings of the plain capture) or
// says in one line that it cannot; never a silent partial report.
func TestBB8DPcapHeaderOddFields(t *testing.T) {
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

// TestBB8DTruncatedEndsOpenConnections: README 12 "client-id-repeated ...
// its frame and time are those of the packet that ended the connection:
// ... else its own last packet (when ... the capture ended)"; README "A
// file that breaks after some packets ... what was read before it
// stands"; standard "nothing already analyzed is lost". A KIP-1313 client
// that repeats its client ID is still connected where the file is cut
// (inside a record of another connection): the capture ends there, so its
// client-id-repeated is reported at its own last packet, as in the file cut
// cleanly at that record; the same with --workers 3; and the report is the
// one of the cleanly cut file (plus one line on stderr).
func TestBB8DTruncatedEndsOpenConnections(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{})
	x := bb8dX
	rc := c.Conn(pcapgen.ConnOptions{Client: bb8dAP("10.8.7.1:47000"), Broker: bb8dAP("10.0.0.9:9092")})
	rs := rc.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("repeater"), InstanceID: &x, CorrelationID: 1})
	bb8dMeta(rs)
	bb8dMeta(rs)
	bb8dMeta(rs)
	lastOwn := c.Frames()
	for i := 0; i < 5; i++ {
		cn := c.Conn(pcapgen.ConnOptions{Client: bb8dAP(fmt.Sprintf("10.8.7.%d:47001", i+2)), Broker: bb8dAP("10.0.0.9:9092")})
		s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("other"), CorrelationID: 1})
		bb8dMeta(s)
		bb8dMeta(s)
		cn.Close()
	}
	bb8dMeta(rs) // after the cut
	rc.Close()
	whole, err := c.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	offs := bb8dPcapOffsets(c)
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
		if got != want {
			grep, _ := bb8dParse(t, "cut", got)
			t.Errorf("--workers %s: the file cut inside a record gives another report than the file cut before that record:\n%s\nfindings %v, want %v", w, bb8dDiff(want, got), bb8dFrames(grep), bb8dFrames(wrep))
		}
	}
}

// TestBB8DFirstOfTwoFilesTruncated: README "Several files are read in
// order as one capture (rotated tcpdump -C files)" and "A file that breaks
// after some packets (truncated, corrupt) is reported on stderr and what
// was read before it stands". The first of two rotated files is cut inside
// a record (a tcpdump killed mid-write, then restarted): its findings stand
// and the breakage is one line on stderr naming it. If the second file is
// read on, its findings are reported at frames continuing after the first
// file's whole records.
func TestBB8DFirstOfTwoFilesTruncated(t *testing.T) {
	c1, e1, l1 := bb8dBase(pcapgen.Options{})
	c2, e2, l2 := bb8dBase(pcapgen.Options{Start: pcapgen.BaseTime().Add(time.Hour)})
	b1, err := c1.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	offs := bb8dPcapOffsets(c1)
	k := (e1 + l1) / 2
	p1 := bb8dWrite(t, "rot0.pcap", b1[:offs[k]+30])
	p2 := bbCaptureFile(t, c2, "rot1.pcap")
	code, out, errOut := bb8dReadFile(t, nil, p1, p2)
	rep, ok := bb8dCheckKept(t, "first truncated", code, out, errOut, e1)
	if !strings.Contains(errOut, "rot0.pcap") {
		t.Errorf("stderr %q does not name the truncated file rot0.pcap", errOut)
	}
	if ok && len(rep.Findings) > 1 {
		want := []string{fmt.Sprintf("instance-id-changed@%d", e1), fmt.Sprintf("instance-id-changed@%d", k+e2), fmt.Sprintf("client-id-changed@%d", k+l2)}
		if got := bb8dFrames(rep); !slices.Equal(got, want) {
			t.Errorf("findings %v, want %v (or only the first file's)", got, want)
		}
	}
	t.Logf("first file truncated: exit %d, findings %v, stderr %q", code, bb8dFrames(rep), errOut)
}

// TestBB8DEmptyAndRuntRecords: Wireshark numbers every record of a pcap as
// a frame, also one of zero captured bytes and a runt shorter than an
// Ethernet header (SPEC 5: frame "as Wireshark numbers it"). Standard:
// "never a panic". Such records are inserted after frame 2 and after frame
// 40 (in pcap and pcapng): the findings are those of the plain capture at
// frames shifted by the records before them, and every record is counted.
func TestBB8DEmptyAndRuntRecords(t *testing.T) {
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
