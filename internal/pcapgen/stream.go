package pcapgen

import (
	"fmt"
	"io"
	"net/netip"
	"time"
)

// Stream writes TCP packets one at a time, with no conversation state and
// nothing held: for captures of millions of packets (internal/hostilegen's
// scenarios), which Capture would hold whole in memory. The caller keeps
// sequence numbers. Packet times start at BaseTime and advance by step.
type Stream struct {
	pw   packetWriter
	cw   *countWriter
	fr   framer
	now  time.Time
	step time.Duration
	hdr  []byte
}

// TCP flags of Stream.Packet.
const (
	FlagFIN = flagFIN
	FlagSYN = flagSYN
	FlagRST = flagRST
	FlagPSH = flagPSH
	FlagACK = flagACK
)

// NewStream starts a pcap of link type link on w.
func NewStream(w io.Writer, link Link, step time.Duration) (*Stream, error) {
	cw := &countWriter{w: w}
	pw, err := newPacketWriter(cw, FormatPCAP, link.LinkType(), 0)
	if err != nil {
		return nil, err
	}
	return &Stream{pw: pw, cw: cw, fr: framer{link: link, vlan: 100}, now: BaseTime(), step: step}, nil
}

// Packet writes one TCP segment from src to dst; toBroker says which way it
// travels (for links that record it). A SYN carries the MSS option.
func (s *Stream) Packet(src, dst netip.AddrPort, toBroker bool, seq, ack uint32, flags uint8, payload []byte) error {
	seg := segment{src: src, dst: dst, seq: seq, ack: ack, flags: flags, inbound: toBroker, payload: payload}
	if flags&flagSYN != 0 {
		seg.mss = 1460
	}
	s.hdr = s.fr.appendHeaders(s.hdr[:0], &seg)
	err := s.pw.writePacket(s.now, s.hdr, payload)
	s.now = s.now.Add(s.step)
	if err != nil {
		return fmt.Errorf("pcapgen: stream: %w", err)
	}
	return nil
}

// Close flushes what is buffered and returns the bytes written.
func (s *Stream) Close() (int64, error) {
	if err := s.pw.flush(); err != nil {
		return s.cw.n, fmt.Errorf("pcapgen: stream: %w", err)
	}
	return s.cw.n, nil
}
