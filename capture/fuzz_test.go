package capture

import (
	"bytes"
	"io"
	"testing"

	"github.com/gopacket/gopacket/layers"
)

// FuzzOpen feeds arbitrary bytes as a capture file. Invariants: never
// panics; Next ends (io.EOF or an error) after a bounded number of packets,
// each of which lies inside the bounds the reader promises.
func FuzzOpen(f *testing.F) {
	ip4, _ := ipTCP(f, v4)
	rec1 := []rec{{sec: 1, data: ethernet(f, layers.EthernetTypeIPv4, nil, ip4)}, {sec: 2, data: []byte("x"), orig: 99}}
	good := pcapFile(false, false, 1, rec1)
	f.Add(good)
	f.Add(pcapFile(true, true, 1, rec1))
	f.Add(good[:len(good)-3])
	f.Add(twoSections())
	f.Add(gz(f, twoSections()))
	f.Add(gz(f, good)[:30])
	f.Add([]byte{})
	f.Add([]byte("GET / HTTP/1.1"))
	hostile := append(bytes.Clone(good[:24]), 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 0xff)
	f.Add(hostile)
	ng := twoSections()
	f.Add(append(bytes.Clone(ng), 6, 0, 0, 0, 0xfc, 0xff, 0xff, 0xff))
	f.Add(append(bytes.Clone(ng[:28]), 1, 0, 0, 0, 0xfc, 0xff, 0xff, 0x7f))
	f.Fuzz(func(t *testing.T, data []byte) {
		src, err := NewReader(bytes.NewReader(data), "fuzz", Options{MaxRecord: 4096})
		if err != nil {
			return
		}
		defer src.Close()
		d := NewLayerDecoder()
		var s Segment
		// Every packet consumes at least 8 input bytes, except through
		// gzip, which can expand; bound generously.
		for i := 0; ; i++ {
			if i > 1<<20 {
				t.Fatal("Next does not terminate")
			}
			p, err := src.Next()
			if err == io.EOF {
				return
			}
			if err != nil {
				if err.Error() == "" {
					t.Fatal("empty error")
				}
				return
			}
			if len(p.Data) != p.CaptureLength || p.CaptureLength > 4096 || p.Length < p.CaptureLength || p.Frame != uint64(i+1) {
				t.Fatalf("packet %d out of bounds: frame %d len(Data) %d caplen %d len %d", i, p.Frame, len(p.Data), p.CaptureLength, p.Length)
			}
			d.Decode(&p, &s)
		}
	})
}

// FuzzLayerDecoder decodes arbitrary bytes as a packet of each supported
// link type. Invariants: never panics; a decoded segment's payload lies
// inside the packet's bytes.
func FuzzLayerDecoder(f *testing.F) {
	for _, c := range decodeCases(f) {
		f.Add(uint16(c.link), c.data)
	}
	for _, s := range tunnelSeeds(f) {
		f.Add(uint16(linkEthernet), s)
	}
	f.Fuzz(func(t *testing.T, link uint16, data []byte) {
		d := NewLayerDecoder()
		var s Segment
		p := Packet{Data: data, CaptureLength: len(data), Length: len(data) + int(link%3), LinkType: layers.LinkType(link)}
		if !d.Decode(&p, &s) {
			if d.Reason() == ReasonNone {
				t.Fatal("Decode failed without a reason")
			}
			return
		}
		if len(s.TCP.Payload) > 0 {
			start := cap(data) - cap(s.TCP.Payload)
			if start < 0 || start+len(s.TCP.Payload) > len(data) || !bytes.Equal(data[start:start+len(s.TCP.Payload)], s.TCP.Payload) {
				t.Fatalf("payload is not inside the packet")
			}
		}
		if !s.Src.IsValid() || !s.Dst.IsValid() {
			t.Fatal("decoded segment without endpoints")
		}
	})
}
