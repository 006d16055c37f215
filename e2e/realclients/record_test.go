//go:build e2e

package realclients

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/kwatch/kwatch/capture"
)

// liveRecording captures loopback traffic to and from the broker ports into
// a pcapng file, on one goroutine, until stop.
type liveRecording struct {
	path string
	src  *capture.LiveSource
	done chan error
	n    int
}

// startRecording opens the live capture on lo, filtered in the kernel to
// ports, and starts writing every packet to dir/name.pcapng.
func startRecording(dir, name string, ports []uint16) (*liveRecording, error) {
	src, err := capture.OpenLive("lo", capture.LiveOptions{Ports: ports})
	if err != nil {
		return nil, fmt.Errorf("live capture on lo: %w", err)
	}
	path := filepath.Join(dir, name+".pcapng")
	w, err := capture.NewPcapngWriter(path, layers.LinkTypeEthernet, capture.DefaultSnaplen, true)
	if err != nil {
		src.Close()
		return nil, err
	}
	r := &liveRecording{path: path, src: src, done: make(chan error, 1)}
	go func() {
		var werr error
		for {
			p, err := src.Next()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					werr = err
				}
				break
			}
			if werr == nil {
				werr = w.WritePacket(&p)
				r.n++
			}
		}
		if err := w.Close(); werr == nil {
			werr = err
		}
		r.done <- werr
	}()
	return r, nil
}

// stop waits for the last packets (FIN and ACK of closed connections) to
// pass through the kernel, ends the capture and returns the packets written
// and what the kernel reports it dropped.
func (r *liveRecording) stop(settle time.Duration) (packets int, dropped uint64, err error) {
	time.Sleep(settle)
	st, serr := r.src.Stats()
	if serr == nil {
		dropped = st.Dropped
	}
	r.src.Close()
	select {
	case err = <-r.done:
	case <-time.After(5 * time.Second):
		return 0, dropped, errors.New("live capture did not stop within 5s of Close")
	}
	return r.n, dropped, err
}
