package tcpasm

import (
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// Assemble calls AssembleWithContext with the current timestamp, as
// gopacket's Assemble does for packets read off the wire. The fork reads
// time from packets only, so it lives here for gopacket's tests.
func (a *Assembler) Assemble(netFlow gopacket.Flow, t *layers.TCP) {
	ctx := assemblerSimpleContext(gopacket.CaptureInfo{Timestamp: time.Now()})
	a.AssembleWithContext(netFlow, t, &ctx)
}
