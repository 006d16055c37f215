//go:build !pcap

package main

import "golang.org/x/net/bpf"

// compileBPF needs libpcap's compiler, which the default (pure Go) build
// leaves out.
func compileBPF(iface, expr string, snaplen int) ([]bpf.RawInstruction, error) {
	return nil, usageError{"--bpf needs a kwatch built with libpcap (go build -tags pcap); without it, --port N builds the kernel filter itself"}
}
