//go:build e2e

package e2e

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// This file is a reference reader of the recorded capture, independent of
// kwatch's packages: the proxy wrote every segment in order, without loss,
// so plain concatenation per direction is the byte stream, and kmsg parses
// every header and body. It checks the harness itself, and it checks the
// source-study facts of FINDINGS.md on real kgo traffic.

// refPDU is one request or response as the reference reader saw it.
type refPDU struct {
	client     netip.AddrPort // the connection's client end
	request    bool
	frame      int // 1-based packet number that completed the frame
	key, ver   int16
	corr       int32
	hdrVer     int // request: 1 or 2; response: 0 or 1
	clientID   *string
	tags       map[uint32][]byte // request header tagged fields
	req        kmsg.Request
	resp       kmsg.Response
	connNumber int // per client port, counts requests from 1
}

type refConn struct {
	client   netip.AddrPort
	synSeen  bool
	finSeen  [2]bool
	buf      [2][]byte // 0: client->broker, 1: broker->client
	inflight map[int32]kmsg.Request
	nreq     int
}

type refCapture struct {
	packets int
	conns   map[netip.AddrPort]*refConn
	pdus    []refPDU
}

// readCapture decodes the whole pcap. brokers are the proxy addresses: a
// segment towards one of them is client->broker.
func readCapture(path string, brokers map[netip.AddrPort]bool) (*refCapture, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open capture: %w", err)
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("read pcap header: %w", err)
	}
	rc := &refCapture{conns: map[netip.AddrPort]*refConn{}}
	var (
		eth layers.Ethernet
		ip  layers.IPv4
		tcp layers.TCP
		pl  gopacket.Payload
	)
	parser := gopacket.NewDecodingLayerParser(layers.LayerTypeEthernet, &eth, &ip, &tcp, &pl)
	var decoded []gopacket.LayerType
	for {
		data, _, err := r.ReadPacketData()
		if errors.Is(err, io.EOF) {
			return rc, nil
		}
		if err != nil {
			return nil, fmt.Errorf("packet %d: %w", rc.packets+1, err)
		}
		rc.packets++
		pl = nil
		if err := parser.DecodeLayers(data, &decoded); err != nil && len(decoded) < 3 {
			return nil, fmt.Errorf("packet %d: %w", rc.packets, err)
		}
		srcIP, _ := netip.AddrFromSlice(ip.SrcIP)
		dstIP, _ := netip.AddrFromSlice(ip.DstIP)
		src := netip.AddrPortFrom(srcIP, uint16(tcp.SrcPort))
		dst := netip.AddrPortFrom(dstIP, uint16(tcp.DstPort))
		dir, client := 0, src
		if brokers[src] {
			dir, client = 1, dst
		}
		c := rc.conns[client]
		if c == nil {
			c = &refConn{client: client, inflight: map[int32]kmsg.Request{}}
			rc.conns[client] = c
		}
		if tcp.SYN && dir == 0 {
			c.synSeen = true
		}
		if tcp.FIN {
			c.finSeen[dir] = true
		}
		if tcp.RST { // a reset ends both directions
			c.finSeen = [2]bool{true, true}
		}
		if len(pl) == 0 {
			continue
		}
		c.buf[dir] = append(c.buf[dir], pl...)
		if err := rc.frames(c, dir); err != nil {
			return nil, fmt.Errorf("packet %d, client %v: %w", rc.packets, client, err)
		}
	}
}

func (rc *refCapture) frames(c *refConn, dir int) error {
	for len(c.buf[dir]) >= 4 {
		b := c.buf[dir]
		size := int(int32(uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])))
		if size < 4 || size > 100<<20 {
			return fmt.Errorf("bad frame size %d", size)
		}
		if len(b) < 4+size {
			return nil
		}
		frame := b[4 : 4+size]
		c.buf[dir] = b[4+size:]
		var err error
		if dir == 0 {
			err = rc.request(c, frame)
		} else {
			err = rc.response(c, frame)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (rc *refCapture) request(c *refConn, frame []byte) error {
	rd := kbin.Reader{Src: frame}
	p := refPDU{client: c.client, request: true, frame: rc.packets, key: rd.Int16(), ver: rd.Int16(), corr: rd.Int32(), hdrVer: 1}
	req := kmsg.RequestForKey(p.key)
	if req == nil {
		return fmt.Errorf("request key %d unknown to kmsg", p.key)
	}
	req.SetVersion(p.ver)
	p.clientID = rd.NullableString()
	if req.IsFlexible() {
		p.hdrVer = 2
		p.tags = map[uint32][]byte{}
		for n := rd.Uvarint(); n > 0 && rd.Ok(); n-- {
			tag, size := rd.Uvarint(), rd.Uvarint()
			p.tags[tag] = rd.Span(int(size))
		}
	}
	if err := rd.Complete(); err != nil && len(rd.Src) != 0 {
		return fmt.Errorf("request header %d v%d: %w", p.key, p.ver, err)
	}
	if !rd.Ok() {
		return fmt.Errorf("request header %d v%d truncated", p.key, p.ver)
	}
	if err := req.ReadFrom(rd.Src); err != nil {
		return fmt.Errorf("request body %s v%d: %w", kmsg.NameForKey(p.key), p.ver, err)
	}
	p.req = req
	c.nreq++
	p.connNumber = c.nreq
	c.inflight[p.corr] = req
	rc.pdus = append(rc.pdus, p)
	return nil
}

func (rc *refCapture) response(c *refConn, frame []byte) error {
	rd := kbin.Reader{Src: frame}
	corr := rd.Int32()
	req, ok := c.inflight[corr]
	if !ok {
		return fmt.Errorf("response with unknown correlation ID %d", corr)
	}
	delete(c.inflight, corr)
	p := refPDU{client: c.client, frame: rc.packets, key: req.Key(), ver: req.GetVersion(), corr: corr}
	resp := req.ResponseKind()
	resp.SetVersion(p.ver)
	// ApiVersions responses always use header v0 (SPEC.md section 1).
	if resp.IsFlexible() && p.key != int16(kmsg.ApiVersions) {
		p.hdrVer = 1
		for n := rd.Uvarint(); n > 0 && rd.Ok(); n-- {
			rd.Uvarint()
			rd.Span(int(rd.Uvarint()))
		}
	}
	if !rd.Ok() {
		return fmt.Errorf("response header %d v%d truncated", p.key, p.ver)
	}
	if err := resp.ReadFrom(rd.Src); err != nil {
		// kfake answers an ApiVersions version it does not serve with a
		// v0 body (KIP-511); kgo never asks above kfake's max, so this
		// is a real failure.
		return fmt.Errorf("response body %s v%d: %w", kmsg.NameForKey(p.key), p.ver, err)
	}
	p.resp = resp
	rc.pdus = append(rc.pdus, p)
	return nil
}

// synTargets returns the destinations of SYN (not SYN-ACK) segments: the
// broker (proxy) ends of every connection.
func synTargets(path string) (map[netip.AddrPort]bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open capture: %w", err)
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("read pcap header: %w", err)
	}
	out := map[netip.AddrPort]bool{}
	for {
		data, _, err := r.ReadPacketData()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("scan SYNs: %w", err)
		}
		pkt := gopacket.NewPacket(data, layers.LayerTypeEthernet, gopacket.NoCopy)
		ip, _ := pkt.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
		tcp, _ := pkt.Layer(layers.LayerTypeTCP).(*layers.TCP)
		if ip == nil || tcp == nil || !tcp.SYN || tcp.ACK {
			continue
		}
		a, _ := netip.AddrFromSlice(ip.DstIP)
		out[netip.AddrPortFrom(a, uint16(tcp.DstPort))] = true
	}
}
