package capture

import (
	"errors"
	"fmt"

	"golang.org/x/net/bpf"
)

// MaxFilterPorts bounds PortFilter's list: each port costs four
// instructions, and classic BPF jumps reach at most 255 instructions.
const MaxFilterPorts = 32

// PortFilter assembles a classic BPF program for Ethernet frames that keeps
// TCP over IPv4 or IPv6 whose source or destination port is in ports, and
// drops everything else in the kernel. IPv4 fragments after the first and
// IPv6 packets with extension headers before TCP are dropped too (kwatch
// cannot decode them anyway). snaplen is what an accepted packet keeps.
func PortFilter(ports []uint16, snaplen uint32) ([]bpf.RawInstruction, error) {
	if len(ports) == 0 {
		return nil, errors.New("capture: port filter: no ports")
	}
	if len(ports) > MaxFilterPorts {
		return nil, fmt.Errorf("capture: port filter: %d ports, at most %d", len(ports), MaxFilterPorts)
	}
	var p prog
	// IPv6: next header TCP, ports at 14+40.
	p.add(bpf.LoadAbsolute{Off: 12, Size: 2}, "", "")
	p.add(bpf.JumpIf{Cond: bpf.JumpEqual, Val: 0x86dd}, "", "v4")
	p.add(bpf.LoadAbsolute{Off: 14 + 6, Size: 1}, "", "")
	p.add(bpf.JumpIf{Cond: bpf.JumpEqual, Val: 6}, "", "drop")
	p.matchPorts(ports, func(off uint32) bpf.Instruction { return bpf.LoadAbsolute{Off: off, Size: 2} }, 54, 56)
	// IPv4: protocol TCP, fragment offset 0, ports after the IP header.
	p.label("v4")
	p.add(bpf.JumpIf{Cond: bpf.JumpEqual, Val: 0x0800}, "", "drop")
	p.add(bpf.LoadAbsolute{Off: 14 + 9, Size: 1}, "", "")
	p.add(bpf.JumpIf{Cond: bpf.JumpEqual, Val: 6}, "", "drop")
	p.add(bpf.LoadAbsolute{Off: 14 + 6, Size: 2}, "", "")
	p.add(bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: 0x1fff}, "drop", "")
	p.add(bpf.LoadMemShift{Off: 14}, "", "")
	p.matchPorts(ports, func(off uint32) bpf.Instruction { return bpf.LoadIndirect{Off: off, Size: 2} }, 14, 16)
	p.label("keep")
	p.add(bpf.RetConstant{Val: snaplen}, "", "")
	p.label("drop")
	p.add(bpf.RetConstant{Val: 0}, "", "")
	return p.assemble()
}

// matchPorts jumps to keep when the 16-bit port that load reads at any of
// offs (source, destination) is one of ports, and to drop otherwise.
func (p *prog) matchPorts(ports []uint16, load func(off uint32) bpf.Instruction, offs ...uint32) {
	for _, off := range offs {
		p.add(load(off), "", "")
		for _, port := range ports {
			p.add(bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(port)}, "keep", "")
		}
	}
	p.add(bpf.Jump{}, "drop", "")
}

// prog is a BPF program under construction with symbolic jump targets
// ("" = the next instruction), resolved by assemble.
type prog struct {
	ins    []bpf.Instruction
	jt, jf []string
	labels map[string]int
}

func (p *prog) add(in bpf.Instruction, jt, jf string) {
	p.ins = append(p.ins, in)
	p.jt = append(p.jt, jt)
	p.jf = append(p.jf, jf)
}

func (p *prog) label(name string) {
	if p.labels == nil {
		p.labels = map[string]int{}
	}
	p.labels[name] = len(p.ins)
}

func (p *prog) assemble() ([]bpf.RawInstruction, error) {
	skip := func(i int, label string) (uint8, error) {
		if label == "" {
			return 0, nil
		}
		n := p.labels[label] - i - 1
		if n < 0 || n > 255 {
			return 0, fmt.Errorf("capture: port filter: jump of %d instructions", n)
		}
		return uint8(n), nil
	}
	for i, in := range p.ins {
		t, err := skip(i, p.jt[i])
		if err != nil {
			return nil, err
		}
		f, err := skip(i, p.jf[i])
		if err != nil {
			return nil, err
		}
		switch in := in.(type) {
		case bpf.JumpIf:
			in.SkipTrue, in.SkipFalse = t, f
			p.ins[i] = in
		case bpf.Jump:
			in.Skip = uint32(t)
			p.ins[i] = in
		}
	}
	return bpf.Assemble(p.ins)
}
