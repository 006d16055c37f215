package pipeline

import (
	"net/netip"
	"testing"

	"github.com/kwatch/kwatch/decode"
	"github.com/kwatch/kwatch/flow"
	"github.com/kwatch/kwatch/reassembly"
)

// TestNoDecoderBeforeData: a connection's decoder is made when it first
// carries data or a loss, not at its SYN (a SYN scan of a broker host must
// not cost a decoder per port).
func TestNoDecoderBeforeData(t *testing.T) {
	tests := []struct {
		name  string
		event func(s reassembly.Stream)
		made  bool
	}{
		{"syn only", func(reassembly.Stream) {}, false},
		{"data", func(s reassembly.Stream) { s.Data(flow.Client, []byte{0, 0, 0, 8}, flow.Meta{Frame: 2}) }, true},
		{"gap", func(s reassembly.Stream) { s.Gap(flow.Client, 10, flow.Meta{Frame: 2}) }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := New(Options{}, decode.SinkFunc(func(*decode.Event) {}))
			s := e.open(reassembly.Flow{ConnID: flow.ConnID{Client: netip.MustParseAddrPort("10.0.0.2:40000"), Broker: netip.MustParseAddrPort("10.0.0.1:9092"), StartFrame: 1}, FromStart: true})
			tt.event(s)
			if made := s.(*stream).conn != nil; made != tt.made {
				t.Fatalf("decoder made = %v, want %v", made, tt.made)
			}
			s.End(flow.Meta{Frame: 3})
		})
	}
}
