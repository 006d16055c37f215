package capture

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// pkt describes a TCP packet for the tests.
type pkt struct {
	v6      bool
	src     string
	dst     string
	sport   uint16
	dport   uint16
	seq     uint32
	payload []byte
	ipOpts  bool // IPv4 options
	ext     bool // IPv6 hop-by-hop + destination options headers
}

// ipTCP serializes the IP and TCP layers of p and returns them with the
// network flow gopacket itself computes for that IP layer.
func ipTCP(t testing.TB, p pkt) ([]byte, gopacket.Flow) {
	t.Helper()
	tcp := &layers.TCP{SrcPort: layers.TCPPort(p.sport), DstPort: layers.TCPPort(p.dport), Seq: p.seq, ACK: true, PSH: true, Window: 512}
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	var ls []gopacket.SerializableLayer
	var flow gopacket.Flow
	if !p.v6 {
		ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolTCP, SrcIP: net.ParseIP(p.src).To4(), DstIP: net.ParseIP(p.dst).To4()}
		if p.ipOpts {
			ip.Options = []layers.IPv4Option{{OptionType: 1}, {OptionType: 1}, {OptionType: 1}, {OptionType: 0}}
		}
		tcp.SetNetworkLayerForChecksum(ip)
		flow = ip.NetworkFlow()
		ls = append(ls, ip)
	} else {
		ip := &layers.IPv6{Version: 6, HopLimit: 64, NextHeader: layers.IPProtocolTCP, SrcIP: net.ParseIP(p.src), DstIP: net.ParseIP(p.dst)}
		tcp.SetNetworkLayerForChecksum(ip)
		flow = ip.NetworkFlow()
		if p.ext {
			ip.NextHeader = layers.IPProtocolIPv6HopByHop
		}
		ls = append(ls, ip)
	}
	if p.ext {
		// hop-by-hop (8 bytes) -> destination options (16 bytes) -> TCP,
		// written by hand: gopacket's option serialization is fussy.
		ext := []byte{60, 0, 1, 4, 0, 0, 0, 0, 6, 1, 1, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
		if err := gopacket.SerializeLayers(buf, opts, tcp, gopacket.Payload(p.payload)); err != nil {
			t.Fatal(err)
		}
		tcpBytes := append([]byte(nil), buf.Bytes()...)
		ip := ls[0].(*layers.IPv6)
		if err := gopacket.SerializeLayers(buf, opts, ip, gopacket.Payload(append(ext, tcpBytes...))); err != nil {
			t.Fatal(err)
		}
		return append([]byte(nil), buf.Bytes()...), flow
	}
	ls = append(ls, tcp, gopacket.Payload(p.payload))
	if err := gopacket.SerializeLayers(buf, opts, ls...); err != nil {
		t.Fatal(err)
	}
	return append([]byte(nil), buf.Bytes()...), flow
}

func ethernet(t testing.TB, ethType layers.EthernetType, vlans []layers.EthernetType, payload []byte) []byte {
	t.Helper()
	eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, EthernetType: ethType}
	ls := []gopacket.SerializableLayer{eth}
	if len(vlans) > 0 {
		eth.EthernetType = vlans[0]
		for i := range vlans {
			next := ethType
			if i+1 < len(vlans) {
				next = vlans[i+1]
			}
			ls = append(ls, &layers.Dot1Q{VLANIdentifier: uint16(100 + i), Type: next})
		}
	}
	ls = append(ls, gopacket.Payload(payload))
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, ls...); err != nil {
		t.Fatal(err)
	}
	return append([]byte(nil), buf.Bytes()...)
}

// rec is one record of a test capture.
type rec struct {
	sec, frac uint32 // pcap; pcapng uses ts
	ts        uint64
	iface     uint32
	data      []byte
	orig      int // 0: len(data)
}

func (r rec) origLen() uint32 {
	if r.orig == 0 {
		return uint32(len(r.data))
	}
	return uint32(r.orig)
}

type byteOrder interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

func order(big bool) byteOrder {
	if big {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

// pcapFile builds a pcap file by hand, so both byte orders can be tested.
func pcapFile(big, nano bool, link uint32, recs []rec) []byte {
	o := order(big)
	magic := uint32(magicPcapMicro)
	if nano {
		magic = magicPcapNano
	}
	b := o.AppendUint32(nil, magic)
	b = o.AppendUint16(b, 2)
	b = o.AppendUint16(b, 4)
	b = o.AppendUint32(b, 0)
	b = o.AppendUint32(b, 0)
	b = o.AppendUint32(b, 262144)
	b = o.AppendUint32(b, link)
	for _, r := range recs {
		b = o.AppendUint32(b, r.sec)
		b = o.AppendUint32(b, r.frac)
		b = o.AppendUint32(b, uint32(len(r.data)))
		b = o.AppendUint32(b, r.origLen())
		b = append(b, r.data...)
	}
	return b
}

// ngFile builds pcapng files block by block.
type ngFile struct {
	big bool
	b   []byte
}

func (f *ngFile) block(typ uint32, body []byte) {
	o := order(f.big)
	for len(body)%4 != 0 {
		body = append(body, 0)
	}
	total := uint32(12 + len(body))
	f.b = o.AppendUint32(f.b, typ)
	f.b = o.AppendUint32(f.b, total)
	f.b = append(f.b, body...)
	f.b = o.AppendUint32(f.b, total)
}

// shb starts a section; it may switch byte order.
func (f *ngFile) shb(big bool) {
	f.big = big
	o := order(big)
	body := o.AppendUint32(nil, byteOrderMagic)
	body = o.AppendUint16(body, 1)
	body = o.AppendUint16(body, 0)
	body = o.AppendUint64(body, ^uint64(0))
	f.block(blockSHB, body)
}

func (f *ngFile) option(body []byte, code uint16, v []byte) []byte {
	o := order(f.big)
	body = o.AppendUint16(body, code)
	body = o.AppendUint16(body, uint16(len(v)))
	body = append(body, v...)
	for len(body)%4 != 0 {
		body = append(body, 0)
	}
	return body
}

func (f *ngFile) idb(link uint16, snaplen uint32, tsresol int, tsoffset int64) {
	o := order(f.big)
	body := o.AppendUint16(nil, link)
	body = o.AppendUint16(body, 0)
	body = o.AppendUint32(body, snaplen)
	body = f.option(body, 2, []byte("eth0")) // if_name: ignored
	if tsresol >= 0 {
		body = f.option(body, optTSResol, []byte{byte(tsresol)})
	}
	if tsoffset != 0 {
		body = f.option(body, optTSOffset, o.AppendUint64(nil, uint64(tsoffset)))
	}
	body = o.AppendUint32(body, 0) // opt_endofopt
	f.block(blockIDB, body)
}

func (f *ngFile) epb(r rec) {
	o := order(f.big)
	body := o.AppendUint32(nil, r.iface)
	body = o.AppendUint32(body, uint32(r.ts>>32))
	body = o.AppendUint32(body, uint32(r.ts))
	body = o.AppendUint32(body, uint32(len(r.data)))
	body = o.AppendUint32(body, r.origLen())
	body = append(body, r.data...)
	for len(body)%4 != 0 {
		body = append(body, 0)
	}
	body = f.option(body, 1, []byte("a comment"))
	f.block(blockEPB, body)
}

func (f *ngFile) spb(data []byte) {
	body := order(f.big).AppendUint32(nil, uint32(len(data)))
	f.block(blockSPB, append(body, data...))
}

func gz(t testing.TB, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	w := gzip.NewWriter(&out)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func writeTemp(t testing.TB, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// readAll drains src, copying packets, and returns them with the error
// that ended it (nil at io.EOF).
func readAll(t testing.TB, src Source) ([]Packet, error) {
	t.Helper()
	var out []Packet
	for range 1 << 20 {
		p, err := src.Next()
		if err != nil {
			if err == io.EOF {
				return out, nil
			}
			return out, err
		}
		p.Data = append([]byte(nil), p.Data...)
		out = append(out, p)
	}
	t.Fatal("source never ended")
	return nil, nil
}
