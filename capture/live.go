package capture

import (
	"github.com/rs/zerolog"
	"golang.org/x/net/bpf"
)

// DefaultSnaplen is the live capture length when LiveOptions.Snaplen is 0.
const DefaultSnaplen = 262144

const (
	// DefaultRingSize is the capture ring's size when LiveOptions.RingSize
	// is 0: half a second of 1 Gbit/s, or about 300,000 small packets,
	// queued while kwatch is busy (a writeback stall of -w, the scheduler).
	DefaultRingSize = 64 << 20
	// MinRingSize is the smallest ring OpenLive accepts: four 1 MiB blocks,
	// so that the kernel fills some while kwatch reads one (with a single
	// block every packet arriving while kwatch reads it would be dropped).
	MinRingSize = 4 << 20
)

// LiveOptions configure OpenLive. The zero value captures all traffic.
type LiveOptions struct {
	// Ports, when set, installs PortFilter(Ports) in the kernel so that
	// unrelated traffic never reaches kwatch.
	Ports []uint16
	// Filter, when set, is installed instead of the port filter (a
	// program compiled elsewhere, for --bpf).
	Filter []bpf.RawInstruction
	// Snaplen bounds the bytes kept per packet; 0 means DefaultSnaplen.
	Snaplen int
	// RingSize is the receive ring's size in bytes, rounded up to whole
	// 1 MiB blocks; 0 means DefaultRingSize. The kernel allocates and pins
	// all of it when the capture opens.
	RingSize int
	// Promiscuous puts the interface in promiscuous mode.
	Promiscuous bool
	// Logger: zero value is silent.
	Logger zerolog.Logger
}

func (o LiveOptions) snaplen() int {
	if o.Snaplen <= 0 || o.Snaplen > DefaultSnaplen {
		return DefaultSnaplen
	}
	return o.Snaplen
}

// LiveStats are a live source's counters since it was opened.
type LiveStats struct {
	// Received counts packets the kernel passed the filter and queued,
	// Dropped those it dropped because kwatch did not read fast enough
	// (PACKET_STATISTICS).
	Received, Dropped uint64
	// Freezes counts the times the ring was full: every block was still
	// being read by kwatch and arriving packets were dropped.
	Freezes uint64
}
