// Package floor is kwatch's performance floor: the cheapest loop that still
// reads a capture and decodes its Ethernet/IP/TCP headers, written the way
// the issue defines it (gopacket's pcapgo zero-copy reader and one reused
// DecodingLayerParser, no reassembly, no Kafka). kwatch's throughput is
// reported as a ratio to it.
//
// Concurrency: Run uses only its own state; call it from any goroutine.
// Buffers: pcapgo owns packet bytes, valid until its next read.
package floor

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// Result counts what the floor loop read.
type Result struct {
	Packets int
	Bytes   int64 // captured bytes
	TCP     int   // packets whose TCP header decoded
}

// RunFile runs the floor loop over the pcap file at path.
func RunFile(path string) (Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return Result{}, fmt.Errorf("floor: %w", err)
	}
	defer f.Close()
	return Run(bufio.NewReaderSize(f, 1<<20))
}

// Run runs the floor loop over a pcap stream: pcapgo's
// ZeroCopyReadPacketData and one DecodingLayerParser for Ethernet (or
// Linux loopback's Null/Loop link), IPv4, IPv6 and TCP.
func Run(r io.Reader) (Result, error) {
	var res Result
	pr, err := pcapgo.NewReader(r)
	if err != nil {
		return res, fmt.Errorf("floor: %w", err)
	}
	var (
		eth  layers.Ethernet
		lo   layers.Loopback
		ip4  layers.IPv4
		ip6  layers.IPv6
		tcp  layers.TCP
		pay  gopacket.Payload
		dec  []gopacket.LayerType
		kind gopacket.LayerType
	)
	switch pr.LinkType() {
	case layers.LinkTypeNull, layers.LinkTypeLoop:
		kind = layers.LayerTypeLoopback
	case layers.LinkTypeRaw, layers.LinkTypeIPv4:
		kind = layers.LayerTypeIPv4
	default:
		kind = layers.LayerTypeEthernet
	}
	p := gopacket.NewDecodingLayerParser(kind, &eth, &lo, &ip4, &ip6, &tcp, &pay)
	p.IgnoreUnsupported = true
	for {
		data, _, err := pr.ZeroCopyReadPacketData()
		if errors.Is(err, io.EOF) {
			return res, nil
		}
		if err != nil {
			return res, fmt.Errorf("floor: packet %d: %w", res.Packets+1, err)
		}
		res.Packets++
		res.Bytes += int64(len(data))
		_ = p.DecodeLayers(data, &dec)
		for _, t := range dec {
			if t == layers.LayerTypeTCP {
				res.TCP++
			}
		}
	}
}
