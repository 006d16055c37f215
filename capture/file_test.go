package capture

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"
)

func TestOpenPcap(t *testing.T) {
	recs := []rec{
		{sec: 1764434965, frac: 123456, data: []byte("first packet")},
		{sec: 1764434966, frac: 999999, data: []byte("second"), orig: 1514},
		{sec: 1764434967, frac: 0, data: nil},
	}
	tests := []struct {
		name      string
		big, nano bool
		gzip      bool
	}{
		{name: "little-endian microseconds"},
		{name: "little-endian nanoseconds", nano: true},
		{name: "big-endian microseconds", big: true},
		{name: "big-endian nanoseconds", big: true, nano: true},
		{name: "gzip little-endian", gzip: true},
		{name: "gzip big-endian nanoseconds", big: true, nano: true, gzip: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := pcapFile(tt.big, tt.nano, 1|0x10000000, recs) // FCS bits set
			if tt.gzip {
				b = gz(t, b)
			}
			src, err := Open(writeTemp(t, "a.pcap", b), Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			got, err := readAll(t, src)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(recs) {
				t.Fatalf("got %d packets, want %d", len(got), len(recs))
			}
			mul := int64(1000)
			if tt.nano {
				mul = 1
			}
			for i, p := range got {
				r := recs[i]
				want := time.Unix(int64(r.sec), int64(r.frac)*mul).UTC()
				if p.Frame != uint64(i+1) || !p.Time.Equal(want) || !bytes.Equal(p.Data, r.data) ||
					p.CaptureLength != len(r.data) || p.Length != int(r.origLen()) || p.LinkType != layers.LinkTypeEthernet {
					t.Errorf("packet %d = %+v, want frame %d time %v data %q", i, p, i+1, want, r.data)
				}
			}
			if !got[1].Truncated() || got[0].Truncated() {
				t.Errorf("Truncated: %v %v, want false true", got[0].Truncated(), got[1].Truncated())
			}
			if _, err := src.Next(); err != io.EOF {
				t.Errorf("Next after the end = %v, want io.EOF", err)
			}
		})
	}
}

// twoSections: section 1 (little-endian) has an Ethernet interface with
// default microseconds and a raw-IP interface with nanoseconds and an
// offset; section 2 (big-endian) redefines interface 0 as SLL2 with a
// binary resolution (2^-10 s) and holds a simple packet block.
func twoSections() []byte {
	var f ngFile
	f.shb(false)
	f.idb(1, 65535, -1, 0)
	f.idb(101, 65535, 9, 100)
	f.epb(rec{iface: 0, ts: 1764434965123456, data: []byte("eth frame")})
	f.epb(rec{iface: 1, ts: 1764434965123456789, data: []byte("raw ip"), orig: 3000})
	f.block(4, make([]byte, 40)) // name resolution block: skipped
	f.shb(true)
	f.idb(276, 128, 0x80|10, 0)
	f.epb(rec{iface: 0, ts: 1024*10 + 512, data: []byte("sll2")})
	f.spb([]byte("simple"))
	return f.b
}

func TestOpenPcapng(t *testing.T) {
	want := []Packet{
		{Frame: 1, Time: time.Unix(1764434965, 123456000).UTC(), Data: []byte("eth frame"), LinkType: 1},
		{Frame: 2, Time: time.Unix(1764434965+100, 123456789).UTC(), Data: []byte("raw ip"), LinkType: 101, Length: 3000},
		{Frame: 3, Time: time.Unix(10, 500000000).UTC(), Data: []byte("sll2"), LinkType: 276},
		{Frame: 4, Data: []byte("simple"), LinkType: 276},
	}
	for _, zip := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "gzip"}[zip], func(t *testing.T) {
			b := twoSections()
			if zip {
				b = gz(t, b)
			}
			src, err := Open(writeTemp(t, "a.pcapng", b), Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			got, err := readAll(t, src)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("got %d packets, want %d", len(got), len(want))
			}
			for i, p := range got {
				w := want[i]
				if w.Length == 0 {
					w.Length = len(w.Data)
				}
				if p.Frame != w.Frame || !p.Time.Equal(w.Time) || !bytes.Equal(p.Data, w.Data) || p.LinkType != w.LinkType || p.Length != w.Length || p.CaptureLength != len(w.Data) {
					t.Errorf("packet %d = %+v,\nwant %+v", i, p, w)
				}
			}
		})
	}
}

func TestOpenFiles(t *testing.T) {
	a := writeTemp(t, "a.pcap", pcapFile(false, false, 1, []rec{{data: []byte("a1")}, {data: []byte("a2")}}))
	var f ngFile
	f.shb(false)
	f.idb(101, 0, -1, 0)
	f.epb(rec{data: []byte("b1")})
	b := writeTemp(t, "b.pcapng", gz(t, f.b))
	c := writeTemp(t, "c.pcap", pcapFile(true, true, 1, []rec{{data: []byte("c1")}, {data: []byte("c2-truncated")}})[:24+16+2+10])
	src, err := OpenFiles([]string{a, b, c}, Options{Concat: true})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	got, err := readAll(t, src)
	var names []string
	wantFrames := []uint64{PackFrame(0, 1), PackFrame(0, 2), PackFrame(1, 1), PackFrame(2, 1)}
	for i, p := range got {
		names = append(names, string(p.Data))
		if i < len(wantFrames) && p.Frame != wantFrames[i] {
			t.Errorf("packet %q has frame %d, want %d", p.Data, p.Frame, wantFrames[i])
		}
	}
	if strings.Join(names, " ") != "a1 a2 b1 c1" {
		t.Errorf("packets %v, want a1 a2 b1 c1", names)
	}
	wantErr := "capture: " + c + ": frame 2: truncated record header (need 16 bytes, have 10)"
	if err == nil || err.Error() != wantErr {
		t.Errorf("error %v, want %s", err, wantErr)
	}
	if _, err := OpenFiles([]string{a, writeTemp(t, "x.bin", []byte("GET / HTTP/1.1"))}, Options{}); err == nil || !errors.Is(err, ErrNotCapture) {
		t.Errorf("OpenFiles with a non-capture second file: %v, want ErrNotCapture", err)
	}
	if _, err := OpenFiles([]string{a, filepath.Join(t.TempDir(), "missing")}, Options{}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("OpenFiles with a missing file: %v, want not-exist", err)
	}
}

// A file among several that breaks part way is reported, and the files
// after it are still read: rotated captures are independent files.
func TestOpenFilesReadsOnAfterBrokenFile(t *testing.T) {
	full := pcapFile(false, false, 1, []rec{{data: []byte("a1")}, {data: []byte("a2-cut")}})
	a := writeTemp(t, "a.pcap", full[:len(full)-3])
	b := writeTemp(t, "b.pcap", pcapFile(false, false, 1, []rec{{data: []byte("b1")}}))
	c := writeTemp(t, "c.pcap", full[:len(full)-3])
	for _, concat := range []bool{true, false} {
		src, err := OpenFiles([]string{a, b, c}, Options{Concat: concat})
		if err != nil {
			t.Fatal(err)
		}
		got, err := readAll(t, src)
		var names []string
		for _, p := range got {
			file, n := SplitFrame(p.Frame)
			names = append(names, fmt.Sprintf("%s@%d:%d", p.Data, file, n))
		}
		if want := "a1@0:1 b1@1:1 a1@2:1"; strings.Join(names, " ") != want {
			t.Errorf("concat %v: packets %v, want %s", concat, names, want)
		}
		if !errors.Is(err, ErrTruncated) || !strings.Contains(err.Error(), a) || !strings.Contains(err.Error(), c) {
			t.Errorf("concat %v: error %v: want both truncated files named", concat, err)
		}
		if _, err2 := src.Next(); err2 == nil || err2.Error() != err.Error() {
			t.Errorf("concat %v: next read after the end: %v, want the same error", concat, err2)
		}
		src.Close()
	}
}

// TestMergeByTime: several files are merged by packet time, as mergecap
// does by default; a tie goes to the file named first, and each file is
// read in its own order even where its times go back.
func TestMergeByTime(t *testing.T) {
	a := writeTemp(t, "a.pcap", pcapFile(false, false, 1, []rec{{sec: 1, data: []byte("a1")}, {sec: 3, data: []byte("a2")}, {sec: 2, data: []byte("a3")}, {sec: 9, data: []byte("a4")}}))
	b := writeTemp(t, "b.pcap", pcapFile(false, false, 1, []rec{{sec: 2, data: []byte("b1")}, {sec: 4, data: []byte("b2")}}))
	c := writeTemp(t, "c.pcap", pcapFile(false, false, 1, []rec{{sec: 1, data: []byte("c1")}}))
	src, err := OpenFiles([]string{a, b, c}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	got, err := readAll(t, src)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range got {
		file, n := SplitFrame(p.Frame)
		names = append(names, fmt.Sprintf("%s@%d:%d", p.Data, file, n))
	}
	if want := "a1@0:1 c1@2:1 b1@1:1 a2@0:2 a3@0:3 b2@1:2 a4@0:4"; strings.Join(names, " ") != want {
		t.Errorf("packets %v,\nwant %s", names, want)
	}
}

func TestOpenErrors(t *testing.T) {
	eth := bytes.Repeat([]byte{0xab}, 1514)
	good := pcapFile(false, false, 1, []rec{{data: eth}, {data: eth}})
	noisy := make([]byte, 1514) // incompressible, so a cut gzip stream ends mid-record
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range noisy {
		noisy[i] = byte(rng.Uint32())
	}
	noisyGz := gz(t, pcapFile(false, false, 1, []rec{{data: noisy}}))
	ng := func(build func(f *ngFile)) []byte {
		var f ngFile
		f.shb(false)
		f.idb(1, 0, -1, 0)
		f.epb(rec{data: []byte("ok")})
		build(&f)
		return f.b
	}
	hostilePcap := pcapFile(false, false, 1, []rec{{data: []byte("ok")}})
	hostilePcap = append(hostilePcap, 0, 0, 0, 0, 0, 0, 0, 0, 0xf0, 0xff, 0xff, 0xff, 0xf0, 0xff, 0xff, 0xff)
	hostilePcap = append(hostilePcap, make([]byte, 100)...)
	tests := []struct {
		name    string
		data    []byte
		packets int    // returned before the error
		want    string // error text after "capture: PATH: "
		is      error
	}{
		{name: "empty file", data: nil, want: "empty file: not a pcap or pcapng file", is: ErrNotCapture},
		{name: "garbage", data: []byte("GET / HTTP/1.1\r\n"), want: "not a pcap or pcapng file (first bytes 47 45 54 20)", is: ErrNotCapture},
		{name: "two bytes", data: []byte("ab"), want: "not a pcap or pcapng file (first bytes 61 62)", is: ErrNotCapture},
		{name: "gzip of garbage", data: gz(t, []byte("hello")), want: "not a pcap or pcapng file (first bytes after gunzip 68 65 6c 6c)", is: ErrNotCapture},
		{name: "pcap header cut", data: good[:20], want: "truncated pcap file header (need 24 bytes, have 20)", is: ErrTruncated},
		{name: "record cut", data: good[:len(good)-1314], packets: 1, want: "frame 2: truncated record (need 1514 bytes, have 200)", is: ErrTruncated},
		{name: "record header cut", data: good[:24+16+1514+5], packets: 1, want: "frame 2: truncated record header (need 16 bytes, have 5)", is: ErrTruncated},
		{name: "gzip record cut", data: gz(t, good[:len(good)-1314]), packets: 1, want: "frame 2: truncated record (need 1514 bytes, have 200)", is: ErrTruncated},
		{name: "gzip stream cut", data: noisyGz[:len(noisyGz)-100], packets: 0, want: "frame 1: truncated record (need 1514 bytes, have 1427)", is: ErrTruncated},
		{name: "pcap hostile length", data: hostilePcap, packets: 1, want: "frame 2: corrupt record: captured length 4294967280 exceeds the 262144-byte bound", is: ErrCorrupt},
		{name: "pcapng hostile block length", data: append(ng(func(*ngFile) {}), 6, 0, 0, 0, 0xf0, 0xff, 0xff, 0xff), packets: 1,
			want: "frame 2: corrupt packet block: length 4294967280 exceeds the 327680-byte bound", is: ErrCorrupt},
		{name: "pcapng hostile skipped block", data: append(ng(func(*ngFile) {}), 5, 0, 0, 0, 0xf0, 0xff, 0xff, 0xfe), packets: 1,
			want: "frame 2: truncated block of type 0x5 (need 4278190064 bytes, have 8)", is: ErrTruncated},
		{name: "pcapng captured length beyond block", data: ng(func(f *ngFile) {
			f.epb(rec{data: []byte("abcd")})
			f.b[len(f.b)-52+20] = 200 // captured length of the last EPB (52 bytes)
		}), packets: 1, want: "frame 2: corrupt packet block: captured length 200 exceeds the block's 20 bytes", is: ErrCorrupt},
		{name: "pcapng unknown interface", data: ng(func(f *ngFile) { f.epb(rec{iface: 3, data: []byte("x")}) }), packets: 1,
			want: "frame 2: corrupt packet block: interface 3, but the section defines 1", is: ErrCorrupt},
		{name: "pcapng interface of the previous section", data: ng(func(f *ngFile) { f.shb(true); f.epb(rec{data: []byte("x")}) }), packets: 1,
			want: "frame 2: corrupt packet block: interface 0, but the section defines 0", is: ErrCorrupt},
		{name: "pcapng short block length", data: append(ng(func(*ngFile) {}), 6, 0, 0, 0, 8, 0, 0, 0), packets: 1,
			want: "frame 2: corrupt block: type 0x6 has length 8", is: ErrCorrupt},
		{name: "pcapng bad byte-order magic", data: []byte{0x0a, 0x0d, 0x0d, 0x0a, 28, 0, 0, 0, 1, 2, 3, 4}, want: "frame 1: corrupt section header: byte-order magic 01 02 03 04", is: ErrCorrupt},
		{name: "pcapng block cut", data: ng(func(f *ngFile) { f.epb(rec{data: []byte("abcd")}); f.b = f.b[:len(f.b)-3] }), packets: 1,
			want: "frame 2: truncated packet block (need 52 bytes, have 49)", is: ErrTruncated},
		{name: "pcapng trailing length mismatch", data: ng(func(f *ngFile) { f.b[len(f.b)-1] = 9 }), packets: 0,
			want: "frame 1: corrupt packet block: trailing length 150994996 differs from 52", is: ErrCorrupt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeTemp(t, "in.cap", tt.data)
			src, err := Open(path, Options{})
			var got []Packet
			if err == nil {
				got, err = readAll(t, src)
				// The error is sticky.
				if _, again := src.Next(); err != nil && (again == nil || again.Error() != err.Error()) {
					t.Errorf("Next after the error = %v, want %v again", again, err)
				}
				src.Close()
			}
			want := "capture: " + path + ": " + tt.want
			if err == nil || err.Error() != want {
				t.Fatalf("error = %v\nwant    %s", err, want)
			}
			if !errors.Is(err, tt.is) {
				t.Errorf("errors.Is(%v, %v) = false", err, tt.is)
			}
			if len(got) != tt.packets {
				t.Errorf("got %d packets before the error, want %d", len(got), tt.packets)
			}
		})
	}
}

func TestNextAllocs(t *testing.T) {
	data := bytes.Repeat([]byte{1}, 100)
	recs := make([]rec, 3000)
	for i := range recs {
		recs[i] = rec{sec: uint32(i), data: data}
	}
	var f ngFile
	f.shb(true)
	f.idb(1, 0, 9, 5)
	for _, r := range recs {
		r.ts = uint64(r.sec) * 1e9
		f.epb(r)
	}
	for _, tt := range []struct {
		name string
		data []byte
	}{
		{name: "pcap", data: pcapFile(false, false, 1, recs)},
		{name: "pcap gzip", data: gz(t, pcapFile(true, true, 1, recs))},
		{name: "pcapng", data: f.b},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src, err := NewReader(bytes.NewReader(tt.data), tt.name, Options{})
			if err != nil {
				t.Fatal(err)
			}
			allocs := testing.AllocsPerRun(2000, func() {
				if _, err := src.Next(); err != nil {
					t.Fatal(err)
				}
			})
			if allocs != 0 {
				t.Errorf("Next allocates %v times per packet, want 0", allocs)
			}
			is, ok := src.(IntoSource)
			if !ok {
				t.Fatal("not an IntoSource")
			}
			var p Packet
			allocs = testing.AllocsPerRun(500, func() {
				if err := is.NextInto(&p); err != nil {
					t.Fatal(err)
				}
			})
			if allocs != 0 {
				t.Errorf("NextInto allocates %v times per packet, want 0", allocs)
			}
		})
	}
}
