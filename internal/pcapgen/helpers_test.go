package pcapgen

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/gopacket/gopacket/reassembly"
)

// readBack is one packet read back from a written file.
type readBack struct {
	ci   gopacket.CaptureInfo
	data []byte
}

// readFile reads a capture written by pcapgen with pcapgo's readers (pcap or
// pcapng, gzipped or not).
func readFile(t *testing.T, b []byte) (layers.LinkType, []readBack) {
	t.Helper()
	var r io.Reader = bytes.NewReader(b)
	if len(b) > 2 && b[0] == 0x1f && b[1] == 0x8b {
		zr, err := gzip.NewReader(r)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	}
	raw, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	type src interface {
		ReadPacketData() ([]byte, gopacket.CaptureInfo, error)
		LinkType() layers.LinkType
	}
	var s src
	if len(raw) >= 4 && bytes.Equal(raw[:4], []byte{0x0a, 0x0d, 0x0d, 0x0a}) {
		ng, err := pcapgo.NewNgReader(bytes.NewReader(raw), pcapgo.DefaultNgReaderOptions)
		if err != nil {
			t.Fatal(err)
		}
		s = ng
	} else {
		pr, err := pcapgo.NewReader(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		s = pr
	}
	var out []readBack
	for {
		data, ci, err := s.ReadPacketData()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("read packet %d: %v", len(out)+1, err)
		}
		out = append(out, readBack{ci: ci, data: append([]byte(nil), data...)})
	}
	return s.LinkType(), out
}

// streamKey names one direction of one connection by its source and
// destination ports.
type streamKey struct{ src, dst layers.TCPPort }

// reassembled is what gopacket's reassembly delivered per direction.
type reassembled struct {
	data map[streamKey][]byte
	skip map[streamKey]int
}

type testStream struct {
	r    *reassembled
	keys [2]streamKey
	seen [2]bool
}

func (s *testStream) Accept(tcp *layers.TCP, _ gopacket.CaptureInfo, dir reassembly.TCPFlowDirection, nextSeq reassembly.Sequence, start *bool, _ reassembly.AssemblerContext) bool {
	if d := dirIndex(dir); !s.seen[d] {
		s.seen[d] = true
		s.keys[d] = streamKey{tcp.SrcPort, tcp.DstPort}
	}
	if nextSeq == -1 && !tcp.SYN {
		*start = true // mid-stream: begin at the first segment seen
	}
	return true
}

func (s *testStream) ReassembledSG(sg reassembly.ScatterGather, _ reassembly.AssemblerContext) {
	dir, _, _, skip := sg.Info()
	n, _ := sg.Lengths()
	k := s.keys[dirIndex(dir)]
	if skip > 0 {
		s.r.skip[k] += skip
	}
	s.r.data[k] = append(s.r.data[k], sg.Fetch(n)...)
}

func (s *testStream) ReassemblyComplete(reassembly.AssemblerContext) bool { return false }

func dirIndex(d reassembly.TCPFlowDirection) int {
	if d == reassembly.TCPDirClientToServer {
		return 0
	}
	return 1
}

type testFactory struct{ r *reassembled }

func (f testFactory) New(_, _ gopacket.Flow, _ *layers.TCP, _ reassembly.AssemblerContext) reassembly.Stream {
	return &testStream{r: f.r}
}

type testContext gopacket.CaptureInfo

func (c *testContext) GetCaptureInfo() gopacket.CaptureInfo { return gopacket.CaptureInfo(*c) }

// reassemble decodes every packet of a written capture and reassembles its
// TCP streams with gopacket's reassembly package.
func reassemble(t *testing.T, file []byte) reassembled {
	t.Helper()
	lt, pkts := readFile(t, file)
	r := reassembled{data: map[streamKey][]byte{}, skip: map[streamKey]int{}}
	asm := reassembly.NewAssembler(reassembly.NewStreamPool(testFactory{&r}))
	for i, p := range pkts {
		pkt := gopacket.NewPacket(p.data, lt, gopacket.Default)
		if el := pkt.ErrorLayer(); el != nil {
			t.Fatalf("frame %d: decode: %v", i+1, el.Error())
		}
		tcp, _ := pkt.Layer(layers.LayerTypeTCP).(*layers.TCP)
		if tcp == nil || pkt.NetworkLayer() == nil {
			t.Fatalf("frame %d: no TCP/IP layer", i+1)
		}
		ctx := testContext(p.ci)
		asm.AssembleWithContext(pkt.NetworkLayer().NetworkFlow(), tcp, &ctx)
	}
	asm.FlushAll()
	return r
}
