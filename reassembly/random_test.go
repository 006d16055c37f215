package reassembly

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/kwatch/kwatch/flow"
)

// TestRandomized feeds one client stream cut into segments that are
// reordered, duplicated, lost and snaplen-cut, with broker ACKs, and checks
// what every Stream must get: each delivered byte at its true position
// (Gaps counting the bytes between), the whole stream when nothing was
// lost, one End and nothing after it.
func TestRandomized(t *testing.T) {
	tests := []struct {
		name                string
		lose, cut, dup, ack float64
		isn                 uint32
	}{
		{name: "reorder and duplicates", dup: 0.2, isn: 1000},
		{name: "sequence wrap-around", dup: 0.2, ack: 0.3, isn: 0xFFFFFFFF - 3000},
		{name: "loss", lose: 0.1, dup: 0.1, isn: 77},
		{name: "snaplen cuts and ACKs", cut: 0.3, ack: 0.5, isn: 0xFFFFF000},
		{name: "everything", lose: 0.05, cut: 0.2, dup: 0.2, ack: 0.3, isn: 0xFFFFFFF0},
	}
	for _, tt := range tests {
		for seed := range uint64(40) {
			rng := rand.New(rand.NewPCG(seed, 7))
			stream := make([]byte, 20000)
			for i := range stream {
				stream[i] = byte(rng.IntN(256))
			}
			type piece struct{ off, n int }
			var pieces []piece
			for off := 0; off < len(stream); {
				n := min(1+rng.IntN(700), len(stream)-off)
				pieces = append(pieces, piece{off, n})
				off += n
			}
			// Local reordering: swap neighbours.
			order := make([]int, len(pieces))
			for i := range order {
				order[i] = i
			}
			for i := 0; i+1 < len(order); i++ {
				if rng.Float64() < 0.3 {
					order[i], order[i+1] = order[i+1], order[i]
				}
			}
			ps := with(handshake[:0:0], []pkt{
				{from: "c", seq: tt.isn, flags: "S"},
				{from: "b", seq: 5000, ack: tt.isn + 1, flags: "SA"},
			})
			done := make([]bool, len(pieces))
			lossy := false
			for _, k := range order {
				p := pieces[k]
				sq := tt.isn + 1 + uint32(p.off)
				data := string(stream[p.off : p.off+p.n])
				done[k] = true
				switch {
				case rng.Float64() < tt.lose:
					lossy = true
				case rng.Float64() < tt.cut:
					lossy = true
					ps = append(ps, pkt{from: "c", seq: sq, ack: 5001, flags: "A", data: data[:rng.IntN(p.n)], trunc: true})
				default:
					ps = append(ps, pkt{from: "c", seq: sq, ack: 5001, flags: "A", data: data})
					if rng.Float64() < tt.dup {
						ps = append(ps, pkt{from: "c", seq: sq, ack: 5001, flags: "A", data: data})
					}
				}
				if rng.Float64() < tt.ack {
					// The broker acknowledges what was sent in full.
					end := 0
					for j := 0; j < len(pieces) && done[j]; j++ {
						end = pieces[j].off + pieces[j].n
					}
					ps = append(ps, pkt{from: "b", seq: 5001, ack: tt.isn + 1 + uint32(end), flags: "A"})
				}
			}
			rec := &recorder{}
			r := New(Options{IdleTimeout: time.Hour}, rec)
			for _, s := range segs(ps) {
				r.Add(s)
			}
			before := len(rec.events)
			r.Close(flow.Meta{Frame: closeFrame})
			// Without real loss nothing waits for Close: snaplen holes
			// were forced out as soon as later data or an ACK came.
			if tt.lose == 0 && len(rec.events) != before+1 {
				t.Fatalf("%s seed %d: Close delivered %d calls, want only End: %q", tt.name, seed, len(rec.events)-before, rec.lines(true)[before:])
			}

			var got []byte
			known := []bool{}
			ends := 0
			for i, e := range rec.events {
				if ends > 0 {
					t.Fatalf("%s seed %d: event %d after End", tt.name, seed, i)
				}
				switch e.kind {
				case "data":
					if e.side != flow.Client {
						t.Fatalf("%s seed %d: broker data", tt.name, seed)
					}
					got = append(got, e.data...)
					for range len(e.data) {
						known = append(known, true)
					}
				case "gap":
					if e.lost <= 0 {
						t.Fatalf("%s seed %d: gap of %d", tt.name, seed, e.lost)
					}
					got = append(got, make([]byte, e.lost)...)
					for range e.lost {
						known = append(known, false)
					}
				case "end":
					ends++
				}
			}
			if ends != 1 {
				t.Fatalf("%s seed %d: %d Ends", tt.name, seed, ends)
			}
			if len(got) > len(stream) {
				t.Fatalf("%s seed %d: %d bytes delivered, stream has %d", tt.name, seed, len(got), len(stream))
			}
			for i := range got {
				if known[i] && got[i] != stream[i] {
					t.Fatalf("%s seed %d: byte %d is %#x, want %#x", tt.name, seed, i, got[i], stream[i])
				}
			}
			if !lossy && !bytes.Equal(got, stream) {
				t.Fatalf("%s seed %d: stream differs (%d of %d bytes)", tt.name, seed, len(got), len(stream))
			}
		}
	}
}
