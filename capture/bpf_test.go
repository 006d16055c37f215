package capture

import (
	"testing"

	"github.com/gopacket/gopacket/layers"
	"golang.org/x/net/bpf"
)

func TestPortFilter(t *testing.T) {
	raw, err := PortFilter([]uint16{9092, 9093}, 65535)
	if err != nil {
		t.Fatal(err)
	}
	ins, ok := bpf.Disassemble(raw)
	if !ok {
		t.Fatal("program does not disassemble")
	}
	vm, err := bpf.NewVM(ins)
	if err != nil {
		t.Fatal(err)
	}
	frame := func(p pkt) []byte {
		ip, _ := ipTCP(t, p)
		et := layers.EthernetTypeIPv4
		if p.v6 {
			et = layers.EthernetTypeIPv6
		}
		return ethernet(t, et, nil, ip)
	}
	to := func(p pkt, sport, dport uint16) pkt { p.sport, p.dport = sport, dport; return p }
	v4opts := to(v4, 40000, 9093)
	v4opts.ipOpts = true
	udp := frame(v4)
	udp[14+9] = 17
	frag := frame(v4)
	frag[14+7] = 1
	ext := v6
	ext.ext = true
	tests := []struct {
		name string
		data []byte
		keep bool
	}{
		{name: "ipv4 to port", data: frame(to(v4, 40000, 9092)), keep: true},
		{name: "ipv4 from port", data: frame(to(v4, 9093, 40000)), keep: true},
		{name: "ipv4 with options to port", data: frame(v4opts), keep: true},
		{name: "ipv4 other port", data: frame(to(v4, 40000, 443)), keep: false},
		{name: "ipv6 to port", data: frame(to(v6, 40000, 9093)), keep: true},
		{name: "ipv6 from port", data: frame(to(v6, 9092, 40000)), keep: true},
		{name: "ipv6 other port", data: frame(to(v6, 40000, 22)), keep: false},
		{name: "ipv6 extension headers", data: frame(ext), keep: false},
		{name: "udp", data: udp, keep: false},
		{name: "ipv4 later fragment", data: frag, keep: false},
		{name: "arp", data: ethernet(t, layers.EthernetTypeARP, nil, make([]byte, 28)), keep: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := vm.Run(tt.data)
			if err != nil {
				t.Fatal(err)
			}
			if (n > 0) != tt.keep {
				t.Errorf("filter returned %d, want keep=%v", n, tt.keep)
			}
			if tt.keep && n != 65535 {
				t.Errorf("kept %d bytes, want the snap length 65535", n)
			}
		})
	}
	if _, err := PortFilter(nil, 100); err == nil {
		t.Error("PortFilter(nil) should fail")
	}
	many := make([]uint16, MaxFilterPorts)
	for i := range many {
		many[i] = uint16(1000 + i)
	}
	long, err := PortFilter(many, 100)
	if err != nil {
		t.Fatalf("PortFilter with %d ports: %v", len(many), err)
	}
	if _, err := PortFilter(append(many, 1), 100); err == nil {
		t.Error("PortFilter with too many ports should fail")
	}
	vm, err = bpf.NewVM(mustDisassemble(t, long))
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := vm.Run(frame(to(v6, 40000, uint16(1000+MaxFilterPorts-1)))); n == 0 {
		t.Error("the last port of a long list is dropped")
	}
}

func mustDisassemble(t *testing.T, raw []bpf.RawInstruction) []bpf.Instruction {
	t.Helper()
	ins, ok := bpf.Disassemble(raw)
	if !ok {
		t.Fatal("program does not disassemble")
	}
	return ins
}
