//go:build pcap

package main

import (
	"fmt"

	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcap"
	"golang.org/x/net/bpf"
)

// compileBPF compiles a tcpdump filter expression with libpcap for the
// Ethernet framing of the AF_PACKET socket.
func compileBPF(iface, expr string, snaplen int) ([]bpf.RawInstruction, error) {
	prog, err := pcap.CompileBPFFilter(layers.LinkTypeEthernet, snaplen, expr)
	if err != nil {
		return nil, usageError{fmt.Sprintf("--bpf %q: %v", expr, err)}
	}
	raw := make([]bpf.RawInstruction, len(prog))
	for i, ins := range prog {
		raw[i] = bpf.RawInstruction{Op: ins.Code, Jt: ins.Jt, Jf: ins.Jf, K: ins.K}
	}
	return raw, nil
}
