package reassembly

import (
	"encoding/binary"
	"testing"
	"time"
)

// FuzzAdd reads the input as a script of segments on two connections.
// Invariant: Add and Close never panic, no Stream call follows End, and
// after Close every opened connection has ended exactly once.
func FuzzAdd(f *testing.F) {
	f.Add([]byte{0, 0x02, 0, 0, 0, 0, 0, 0, 1, 0x12, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{0, 0x10, 0xff, 0xff, 10, 1, 0, 0, 0, 0x10, 0, 0, 200, 0, 0, 0})
	f.Add([]byte{2, 0x14, 0x80, 0x00, 255, 1, 30, 0, 1, 0x04, 0, 5, 0, 0, 0, 0})
	f.Add([]byte{0, 0x10, 0, 0, 1, 20, 0x0b, 0, 0, 0x10, 0, 0, 1, 20, 0x13, 0, 1, 0x10, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, script []byte) {
		rec := &recorder{}
		r := New(Options{IdleTimeout: time.Minute, MaxBufferedPagesPerConn: 4, MaxBufferedPagesTotal: 16}, rec)
		payload := make([]byte, 256)
		var ps []pkt
		for len(script) >= 8 {
			b := script[:8]
			script = script[8:]
			p := pkt{from: "c", seq: binary.BigEndian.Uint32(b[2:6]) >> 8, ack: uint32(b[5]) << 4}
			if b[0]&1 != 0 {
				p.from = "b"
			}
			if b[0]&2 != 0 {
				p.cli = cli2
			}
			for i, fl := range "FSRA" {
				if b[1]&(1<<i) != 0 {
					p.flags += string(fl)
				}
			}
			p.data = string(payload[:b[4]])
			p.trunc = b[6]&1 != 0
			if p.trunc && b[6]&2 != 0 {
				p.cut = int(b[6] >> 2) // known from the IP length
			}
			p.at = time.Duration(b[7]) * time.Second
			ps = append(ps, p)
		}
		for _, s := range segs(ps) {
			r.Add(s)
		}
		r.Close(Meta{Frame: closeFrame})
		ended := make([]int, len(rec.flows))
		for _, e := range rec.events {
			if ended[e.conn] > 0 {
				t.Fatalf("call %s on connection %d after End", e.kind, e.conn)
			}
			if e.kind == "end" {
				ended[e.conn]++
			}
			if (e.kind == "gap" || e.kind == "cut") && e.lost <= 0 {
				t.Fatalf("gap of %d", e.lost)
			}
		}
		for i, n := range ended {
			if n != 1 {
				t.Fatalf("connection %d ended %d times", i, n)
			}
		}
	})
}
