package pcapgen

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// Rewriting whole captures: every packet of a pcap or pcapng file wrapped
// in a tunnel (WrapCapture) or its outer IP packet cut into fragments
// (FragmentCapture), so that any capture kwatch audits can be replayed as
// a mirror or a tunnel would deliver it. Payload bytes never change.

// record is one packet of a rewritten capture.
type record struct {
	data   []byte
	length int // on the wire
}

// WrapCapture returns in (a pcap or pcapng file) with every packet inside
// enc: a classic pcap of Ethernet frames with nanosecond timestamps, one
// packet per packet, in the same order and at the same times.
func WrapCapture(in []byte, enc Encap) ([]byte, error) {
	var id uint16
	return rewrite(in, func(lt layers.LinkType, data []byte, length int) ([]record, error) {
		id++
		b, n, err := Wrap(enc, lt, data, length, id)
		return []record{{b, n}}, err
	})
}

// FragmentCapture returns in (Ethernet frames, as WrapCapture writes them)
// with the outer IPv4 or IPv6 packet of every frame whose IP payload is
// longer than size bytes cut into fragments of size bytes (a multiple of
// 8), all at the packet's time, in reverse order when reverse. Frames the
// snap length cut are left whole: their missing bytes cannot be
// fragmented.
func FragmentCapture(in []byte, size int, reverse bool) ([]byte, error) {
	if size <= 0 || size%8 != 0 {
		return nil, fmt.Errorf("pcapgen: fragment size %d is not a positive multiple of 8", size)
	}
	var id uint32
	return rewrite(in, func(lt layers.LinkType, data []byte, length int) ([]record, error) {
		if lt != layers.LinkTypeEthernet || len(data) != length || len(data) < 15 {
			return []record{{data, length}}, nil
		}
		id++
		var frags []record
		for _, f := range FragmentFrame(data, size, id) {
			frags = append(frags, record{f, len(f)})
		}
		if reverse {
			for i, j := 0, len(frags)-1; i < j; i, j = i+1, j-1 {
				frags[i], frags[j] = frags[j], frags[i]
			}
		}
		return frags, nil
	})
}

// FragmentFrame cuts the IPv4 or IPv6 packet of an Ethernet frame (no VLAN
// tag) into fragments carrying size payload bytes (a multiple of 8), each a
// frame of its own; a packet no longer than size comes back whole. id is
// the IPv6 Fragment header's identification (IPv4 keeps its own).
func FragmentFrame(frame []byte, size int, id uint32) [][]byte {
	eth, ip := frame[:14], frame[14:]
	whole := [][]byte{bytes.Clone(frame)}
	var hdr int
	switch {
	case ip[0]>>4 == 4 && len(ip) >= 20:
		hdr = int(ip[0]&0x0f) * 4
	case ip[0]>>4 == 6 && len(ip) >= 40:
		hdr = 40
	default:
		return whole
	}
	payload := ip[hdr:]
	if len(payload) <= size {
		return whole
	}
	var out [][]byte
	for off := 0; off < len(payload); off += size {
		end := min(off+size, len(payload))
		b := append(bytes.Clone(eth), ip[:hdr]...)
		if hdr == 40 {
			b = fragmentIPv6(b, payload[off:end], off, end < len(payload), id)
		} else {
			b = fragmentIPv4(b, payload[off:end], off, end < len(payload))
		}
		out = append(out, b)
	}
	return out
}

// fragmentIPv4 completes b (Ethernet and an IPv4 header) as a fragment.
func fragmentIPv4(b, part []byte, off int, more bool) []byte {
	ip := b[14:]
	binary.BigEndian.PutUint16(ip[2:], uint16(len(ip)+len(part)))
	fl := uint16(off / 8)
	if more {
		fl |= 0x2000
	}
	binary.BigEndian.PutUint16(ip[6:], fl)
	ip[10], ip[11] = 0, 0
	binary.BigEndian.PutUint16(ip[10:], fold(sum(0, ip)))
	return append(b, part...)
}

// fragmentIPv6 completes b (Ethernet and an IPv6 header) as a fragment: a
// Fragment extension header after the fixed header.
func fragmentIPv6(b, part []byte, off int, more bool, id uint32) []byte {
	ip := b[14:]
	next := ip[6]
	ip[6] = 44
	binary.BigEndian.PutUint16(ip[4:], uint16(8+len(part)))
	fl := uint16(off)
	if more {
		fl |= 1
	}
	b = append(b, next, 0)
	b = binary.BigEndian.AppendUint16(b, fl)
	b = binary.BigEndian.AppendUint32(b, id)
	return append(b, part...)
}

// rewrite reads the pcap or pcapng capture in and writes a classic pcap of
// Ethernet frames (nanoseconds) holding what fn makes of each packet.
func rewrite(in []byte, fn func(lt layers.LinkType, data []byte, length int) ([]record, error)) ([]byte, error) {
	next, err := packetReader(in)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	o := binary.LittleEndian
	h := o.AppendUint32(nil, 0xa1b23c4d)
	h = o.AppendUint16(h, 2)
	h = o.AppendUint16(h, 4)
	h = o.AppendUint64(h, 0)
	h = o.AppendUint32(h, DefaultSnaplen)
	out.Write(o.AppendUint32(h, uint32(layers.LinkTypeEthernet)))
	for n := 1; ; n++ {
		data, ci, lt, err := next()
		if errors.Is(err, io.EOF) {
			return out.Bytes(), nil
		}
		if err != nil {
			return nil, fmt.Errorf("pcapgen: read packet %d: %w", n, err)
		}
		recs, err := fn(lt, data, ci.Length)
		if err != nil {
			return nil, fmt.Errorf("pcapgen: packet %d: %w", n, err)
		}
		for _, r := range recs {
			writeRecord(&out, ci.Timestamp, r)
		}
	}
}

func writeRecord(out *bytes.Buffer, t time.Time, r record) {
	o := binary.LittleEndian
	h := o.AppendUint32(nil, uint32(t.Unix()))
	h = o.AppendUint32(h, uint32(t.Nanosecond()))
	h = o.AppendUint32(h, uint32(len(r.data)))
	h = o.AppendUint32(h, uint32(r.length))
	out.Write(h)
	out.Write(r.data)
}

type readFunc func() ([]byte, gopacket.CaptureInfo, layers.LinkType, error)

// packetReader reads a pcap or pcapng file by its magic number.
func packetReader(in []byte) (readFunc, error) {
	if len(in) >= 4 && binary.LittleEndian.Uint32(in) == 0x0a0d0d0a {
		r, err := pcapgo.NewNgReader(bytes.NewReader(in), pcapgo.NgReaderOptions{})
		if err != nil {
			return nil, fmt.Errorf("pcapgen: pcapng: %w", err)
		}
		return func() ([]byte, gopacket.CaptureInfo, layers.LinkType, error) {
			data, ci, err := r.ReadPacketData()
			if err != nil {
				return nil, ci, 0, err
			}
			ifc, err := r.Interface(ci.InterfaceIndex)
			return data, ci, ifc.LinkType, err
		}, nil
	}
	r, err := pcapgo.NewReader(bytes.NewReader(in))
	if err != nil {
		return nil, fmt.Errorf("pcapgen: pcap: %w", err)
	}
	return func() ([]byte, gopacket.CaptureInfo, layers.LinkType, error) {
		data, ci, err := r.ReadPacketData()
		return data, ci, r.LinkType(), err
	}, nil
}
