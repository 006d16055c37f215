package pcapgen

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// Rewriters of whole capture files, to turn a clean capture into one as
// operators take them (SPEC.md 2.1): cut at a snap length, or reordered.
// They read classic pcap or pcapng and write classic pcap (nanoseconds).

// filePacket is one packet read back from a capture file.
type filePacket struct {
	ci   gopacket.CaptureInfo
	data []byte
}

// readCapture reads every packet of a pcap or pcapng file held in b.
func readCapture(b []byte) (layers.LinkType, []filePacket, error) {
	next, err := packetReader(b)
	if err != nil {
		return 0, nil, err
	}
	var (
		out  []filePacket
		link layers.LinkType
	)
	for {
		data, ci, lt, err := next()
		if errors.Is(err, io.EOF) {
			return link, out, nil
		}
		if err != nil {
			return 0, nil, fmt.Errorf("pcapgen: packet %d: %w", len(out)+1, err)
		}
		link = lt
		out = append(out, filePacket{ci: ci, data: slices.Clone(data)})
	}
}

// writeCapture writes ps as classic pcap with nanosecond times.
func writeCapture(link layers.LinkType, snaplen int, ps []filePacket) ([]byte, error) {
	var buf bytes.Buffer
	w := pcapgo.NewWriterNanos(&buf)
	if err := w.WriteFileHeader(uint32(snaplen), link); err != nil {
		return nil, fmt.Errorf("pcapgen: %w", err)
	}
	for _, p := range ps {
		if err := w.WritePacket(p.ci, p.data); err != nil {
			return nil, fmt.Errorf("pcapgen: %w", err)
		}
	}
	return buf.Bytes(), nil
}

// Recut returns the capture b cut at snap length snaplen, as `tcpdump -s
// snaplen` would have written it: each packet keeps its first snaplen bytes
// and its original length.
func Recut(b []byte, snaplen int) ([]byte, error) {
	if snaplen <= 0 {
		return nil, fmt.Errorf("pcapgen: snap length %d", snaplen)
	}
	link, ps, err := readCapture(b)
	if err != nil {
		return nil, err
	}
	for i := range ps {
		p := &ps[i]
		if len(p.data) > snaplen {
			p.data = p.data[:snaplen]
		}
		p.ci.CaptureLength = len(p.data)
	}
	return writeCapture(link, snaplen, ps)
}

// Shuffle returns the capture b with its packets reordered within windows
// of consecutive packets, each of a size drawn between minWin and maxWin,
// as a multi-queue NIC or a merge of two interfaces does. The times stay
// in file order (the i-th packet keeps the i-th time), so only the order of
// the packets changes. The same seed gives the same capture.
func Shuffle(b []byte, minWin, maxWin int, seed uint64) ([]byte, error) {
	return shuffleCapture(b, minWin, maxWin, seed, false)
}

// shuffleCapture reorders b's packets in windows of minWin to maxWin drawn
// from seed; keepTimes says whether each packet keeps its own time (or the
// i-th packet takes the i-th time of the file). Both forms draw the same
// windows and the same order, so a seed names one reordering.
func shuffleCapture(b []byte, minWin, maxWin int, seed uint64, keepTimes bool) ([]byte, error) {
	if minWin < 1 || maxWin < minWin {
		return nil, fmt.Errorf("pcapgen: shuffle windows %d to %d", minWin, maxWin)
	}
	link, ps, err := readCapture(b)
	if err != nil {
		return nil, err
	}
	times := make([]time.Time, len(ps))
	for i, p := range ps {
		times[i] = p.ci.Timestamp
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	for i := 0; i < len(ps); {
		n := min(minWin+rng.IntN(maxWin-minWin+1), len(ps)-i)
		w := ps[i : i+n]
		rng.Shuffle(len(w), func(a, b int) { w[a], w[b] = w[b], w[a] })
		i += n
	}
	if !keepTimes {
		for i := range ps {
			ps[i].ci.Timestamp = times[i]
		}
	}
	return writeCapture(link, DefaultSnaplen, ps)
}
