package capture

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

const benchPackets = 400_000

// benchFile writes a pcap of benchPackets small Ethernet/IPv4/TCP packets
// (a 100-byte payload, 16 connections) with pcapgo's writer and returns its
// path and size.
func benchFile(b *testing.B, compress bool) (string, int64) {
	b.Helper()
	path := filepath.Join(b.TempDir(), "bench.pcap")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	var out io.Writer = f
	var zw *gzip.Writer
	if compress {
		zw = gzip.NewWriter(f)
		out = zw
	}
	var buf bytes.Buffer
	w := pcapgo.NewWriter(&buf)
	if err := w.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
		b.Fatal(err)
	}
	templates := make([][]byte, 16)
	for i := range templates {
		p := v4
		p.sport = uint16(50000 + i)
		p.payload = bytes.Repeat([]byte{byte(i)}, 100)
		ip, _ := ipTCP(b, p)
		templates[i] = ethernet(b, layers.EthernetTypeIPv4, nil, ip)
	}
	for i := range benchPackets {
		pkt := templates[i%len(templates)]
		binary.BigEndian.PutUint32(pkt[14+20+4:], uint32(i)*100) // TCP seq
		if err := w.WritePacket(captureInfo(i, len(pkt)), pkt); err != nil {
			b.Fatal(err)
		}
		if buf.Len() > 1<<20 {
			out.Write(buf.Bytes())
			buf.Reset()
		}
	}
	out.Write(buf.Bytes())
	if zw != nil {
		if err := zw.Close(); err != nil {
			b.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	return path, st.Size()
}

func benchRun(b *testing.B, compress bool, run func(Source) (int, error)) {
	path, size := benchFile(b, compress)
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	var n int
	for b.Loop() {
		src, err := Open(path, Options{})
		if err != nil {
			b.Fatal(err)
		}
		n, err = run(src)
		if err != nil {
			b.Fatal(err)
		}
		src.Close()
	}
	if n != benchPackets {
		b.Fatalf("read %d packets, want %d", n, benchPackets)
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "pkts/s")
}

func readOnly(src Source) (int, error) {
	n := 0
	for {
		_, err := src.Next()
		if err != nil {
			if err == io.EOF {
				return n, nil
			}
			return n, err
		}
		n++
	}
}

func floor(src Source) (int, error) {
	n, _, err := Floor(src)
	return n, err
}

// BenchmarkReadFile reads the file, nothing else.
func BenchmarkReadFile(b *testing.B) { benchRun(b, false, readOnly) }

// BenchmarkFloor is the project's floor: read with the zero-copy reader and
// decode Ethernet/IP/TCP with one reused decoder, no reassembly.
func BenchmarkFloor(b *testing.B) { benchRun(b, false, floor) }

// BenchmarkFloorGzip is the floor over a gzip-compressed file.
func BenchmarkFloorGzip(b *testing.B) { benchRun(b, true, floor) }

var benchEpoch = time.Unix(1764434965, 0)

func captureInfo(i, n int) gopacket.CaptureInfo {
	return gopacket.CaptureInfo{Timestamp: benchEpoch.Add(time.Duration(i) * time.Microsecond), CaptureLength: n, Length: n}
}
