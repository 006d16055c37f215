//go:build pcap

package main

import (
	"errors"
	"testing"

	"golang.org/x/net/bpf"
)

// TestCompileBPF: with libpcap, --bpf expressions compile to a kernel
// program that accepts what they name and refuses the rest.
func TestCompileBPF(t *testing.T) {
	prog, err := compileBPF("lo", "tcp port 9092", 65535)
	if err != nil {
		t.Fatal(err)
	}
	vm, err := bpf.NewVM(disassemble(t, prog))
	if err != nil {
		t.Fatal(err)
	}
	// Ethernet + IPv4 + TCP, source port 40000, destination port dst.
	packet := func(dst uint16) []byte {
		p := make([]byte, 54)
		p[12], p[13] = 0x08, 0x00 // IPv4
		p[14] = 0x45              // version 4, 20-byte header
		p[16], p[17] = 0, 40      // total length
		p[23] = 6                 // TCP
		p[34], p[35] = 40000>>8, 40000&0xff
		p[36], p[37] = byte(dst>>8), byte(dst)
		p[46] = 5 << 4
		return p
	}
	if n, err := vm.Run(packet(9092)); err != nil || n == 0 {
		t.Errorf("port 9092 refused (%d, %v)", n, err)
	}
	if n, err := vm.Run(packet(80)); err != nil || n != 0 {
		t.Errorf("port 80 accepted (%d, %v)", n, err)
	}
	_, err = compileBPF("lo", "tcp port", 65535)
	var ue usageError
	if !errors.As(err, &ue) {
		t.Errorf("a bad expression gives %v, want a usage error", err)
	}
}

func disassemble(t *testing.T, raw []bpf.RawInstruction) []bpf.Instruction {
	t.Helper()
	ins, ok := bpf.Disassemble(raw)
	if !ok {
		t.Fatalf("libpcap's program does not disassemble: %v", raw)
	}
	return ins
}
