//go:build !linux

package capture

import (
	"errors"
	"fmt"
	"runtime"
)

// LiveSource is a live capture; it is only implemented on Linux.
type LiveSource struct{}

// OpenLive is only implemented on Linux (AF_PACKET); elsewhere it fails.
func OpenLive(iface string, opts LiveOptions) (*LiveSource, error) {
	return nil, fmt.Errorf("capture: %s: live capture is only supported on Linux, not %s; capture with tcpdump -w and use kwatch read", iface, runtime.GOOS)
}

func (s *LiveSource) Next() (Packet, error) {
	return Packet{}, errors.New("capture: live capture not supported")
}
func (s *LiveSource) NextInto(p *Packet) error {
	return errors.New("capture: live capture not supported")
}
func (s *LiveSource) Stop()        {}
func (s *LiveSource) Close() error { return nil }
func (s *LiveSource) Stats() (LiveStats, error) {
	return LiveStats{}, errors.New("capture: live capture not supported")
}

// FanoutSource is a live capture over several rings; it is only
// implemented on Linux.
type FanoutSource struct{ LiveSource }

// OpenFanout is only implemented on Linux (AF_PACKET); elsewhere it fails.
func OpenFanout(iface string, n int, opts LiveOptions) (*FanoutSource, error) {
	_, err := OpenLive(iface, opts)
	return nil, err
}

func (f *FanoutSource) RingStats() []LiveStats { return nil }
func (f *FanoutSource) Late() uint64           { return 0 }
