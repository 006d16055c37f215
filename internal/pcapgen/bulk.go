package pcapgen

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"net/netip"
	"os"
	"strings"
	"time"
)

// BulkOptions configure WriteBulk.
type BulkOptions struct {
	// Connections is the number of concurrent connections (0 = 16).
	Connections int
	// Requests is the number of Produce or Fetch round trips to write; 0
	// means until Size bytes are written (and 1000 when Size is 0 too).
	Requests int
	// Size stops the capture once about this many bytes are written.
	Size int64
	// PayloadSize is the size of Produce record batches and Fetch response
	// records (0 = 16 KiB).
	PayloadSize int
	// MTU bounds packets: segments carry at most MTU-40 bytes (0 = 1500;
	// 65535 gives loopback-sized segments).
	MTU int
	// SplitFraction is the fraction of writes that get one extra cut at a
	// random offset, so that frame headers straddle segments.
	SplitFraction float64
	Seed          uint64
	// Format of the output (FormatAuto = pcap).
	Format Format
	Link   Link
	Gzip   bool
}

// bulkStep is the time between bulk packets.
const bulkStep = 20 * time.Microsecond

// bulkConn is the state of one bulk connection: sequence numbers and frames
// encoded once, whose correlation IDs are patched in place per use.
type bulkConn struct {
	client, broker netip.AddrPort
	next           [2]uint32
	corr           int32
	started        bool
	produce        []byte
	produceResp    []byte
	fetch          []byte
	fetchResp      []byte
	// instance is the client's header instance ID; clientID is sent on the
	// connection's first request only, as a KIP-1313 client does.
	instance [16]byte
	clientID string
}

// bulkWriter streams packets of many connections to a packetWriter.
type bulkWriter struct {
	pw    packetWriter
	fr    framer
	now   time.Time
	mss   int
	split float64
	rng   *rand.Rand
	hdr   []byte
}

// WriteBulk streams a large capture of mostly Produce and Fetch traffic
// across many connections to w: every connection opens with a handshake,
// ApiVersions and Metadata, then carries Produce requests (v11, flexible,
// with opaque record batches) and Fetch responses (v15, large records). It
// holds one connection's frames at a time, never the capture. It returns the
// number of capture bytes written (before gzip).
func WriteBulk(w io.Writer, o BulkOptions) (int64, error) {
	if o.Connections <= 0 {
		o.Connections = 16
	}
	if o.PayloadSize <= 0 {
		o.PayloadSize = 16 << 10
	}
	if o.MTU <= 0 {
		o.MTU = 1500
	}
	if o.Requests <= 0 && o.Size <= 0 {
		o.Requests = 1000
	}
	out, closeGz := gzipWriter(w, o.Gzip)
	cw := &countWriter{w: out}
	pw, err := newPacketWriter(cw, formatFor(o.Format, ""), o.Link.LinkType(), 0)
	if err != nil {
		return 0, err
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x6b77617463680000))
	bw := &bulkWriter{pw: pw, fr: framer{link: o.Link, vlan: 100}, now: BaseTime(), mss: min(max(o.MTU-40, 1), maxPayload), split: o.SplitFraction, rng: rng}

	payload := make([]byte, o.PayloadSize)
	for i := range payload {
		payload[i] = byte(rng.Uint32())
	}
	conns := make([]bulkConn, o.Connections)
	for i := range conns {
		conns[i] = newBulkConn(i, rng, payload)
	}
	for n := 0; ; n++ {
		if o.Requests > 0 && n >= o.Requests || o.Requests <= 0 && cw.n >= o.Size {
			break
		}
		bc := &conns[n%len(conns)]
		if !bc.started {
			if err := bw.open(bc); err != nil {
				return cw.n, err
			}
		}
		bc.corr++
		var req, resp []byte
		if rng.IntN(2) == 0 {
			req, resp = bc.produce, bc.produceResp
		} else {
			req, resp = bc.fetch, bc.fetchResp
		}
		binary.BigEndian.PutUint32(req[8:], uint32(bc.corr))
		binary.BigEndian.PutUint32(resp[4:], uint32(bc.corr))
		if err := bw.write(bc, ToBroker, req); err != nil {
			return cw.n, err
		}
		if err := bw.write(bc, ToClient, resp); err != nil {
			return cw.n, err
		}
	}
	if err := pw.flush(); err != nil {
		return cw.n, fmt.Errorf("pcapgen: bulk flush: %w", err)
	}
	if err := closeGz(); err != nil {
		return cw.n, fmt.Errorf("pcapgen: bulk gzip: %w", err)
	}
	return cw.n, nil
}

// WriteBulkFile is WriteBulk to a new file; FormatAuto picks pcapng for a
// ".pcapng" name and a ".gz" suffix gzips.
func WriteBulkFile(path string, o BulkOptions) (int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, fmt.Errorf("pcapgen: %w", err)
	}
	o.Format = formatFor(o.Format, path)
	o.Gzip = o.Gzip || strings.HasSuffix(path, ".gz")
	n, err := WriteBulk(f, o)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("pcapgen: %w", cerr)
	}
	return n, err
}

func newBulkConn(i int, rng *rand.Rand, payload []byte) bulkConn {
	var topicID [16]byte
	topicID[0], topicID[15] = 0x42, byte(i)
	id := [16]byte{}
	for j := range id {
		id[j] = byte(rng.Uint32())
	}
	id[6] = id[6]&0x0f | 0x40 // version 4
	id[8] = id[8]&0x3f | 0x80 // RFC 4122 variant
	h := RequestHeader{InstanceID: &id, APIVersion: 11}
	bc := bulkConn{
		instance: id,
		clientID: fmt.Sprintf("bulk-client-%d", i),
		client:   netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 2, byte((i + 1) >> 8), byte(i + 1)}), uint16(30000+i%30000)),
		broker:   netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 0, byte(1 + i%3)}), 9092),
		next:     [2]uint32{rng.Uint32(), rng.Uint32()},
	}
	bc.produce = EncodeRequest(h, Produce(11, "bulk", topicID, payload))
	bc.produceResp = EncodeResponse(0, 11, ProduceResponse(11, "bulk", topicID))
	h.APIVersion = 15
	bc.fetch = EncodeRequest(h, Fetch(15, "bulk", topicID))
	bc.fetchResp = EncodeResponse(0, 15, FetchResponse(15, "bulk", topicID, payload))
	return bc
}

// open writes a connection's handshake, ApiVersions and Metadata.
func (bw *bulkWriter) open(bc *bulkConn) error {
	bc.started = true
	isn := bc.next
	mss := uint16(bw.mss)
	if err := bw.packet(bc, ToBroker, isn[0], 0, flagSYN, mss, nil); err != nil {
		return err
	}
	if err := bw.packet(bc, ToClient, isn[1], isn[0]+1, flagSYN|flagACK, mss, nil); err != nil {
		return err
	}
	bc.next = [2]uint32{isn[0] + 1, isn[1] + 1}
	if err := bw.packet(bc, ToBroker, bc.next[0], bc.next[1], flagACK, 0, nil); err != nil {
		return err
	}
	h := RequestHeader{ClientID: &bc.clientID, InstanceID: &bc.instance, CorrelationID: bc.corr, APIVersion: 4}
	if err := bw.write(bc, ToBroker, EncodeRequest(h, APIVersions(4, "kwatch-bulk", "1.0"))); err != nil {
		return err
	}
	if err := bw.write(bc, ToClient, EncodeResponse(bc.corr, 4, APIVersionsResponse(4))); err != nil {
		return err
	}
	bc.corr++
	h.CorrelationID, h.APIVersion, h.ClientID = bc.corr, 12, nil
	if err := bw.write(bc, ToBroker, EncodeRequest(h, Metadata(12, "bulk"))); err != nil {
		return err
	}
	return bw.write(bc, ToClient, EncodeResponse(bc.corr, 12, MetadataResponse(12, bc.broker.Addr().String(), 9092)))
}

// write sends data in direction d, cut at the MSS and, for a SplitFraction
// of writes, once more at a random offset.
func (bw *bulkWriter) write(bc *bulkConn, d Dir, data []byte) error {
	extra := -1
	if bw.split > 0 && len(data) > 1 && bw.rng.Float64() < bw.split {
		extra = 1 + bw.rng.IntN(len(data)-1)
	}
	base := bc.next[d]
	for off := 0; off < len(data); {
		end := min(off+bw.mss, len(data))
		if extra > off && extra < end {
			end = extra
		}
		flags := uint8(flagACK)
		if end == len(data) {
			flags |= flagPSH
		}
		if err := bw.packet(bc, d, base+uint32(off), bc.next[1-d], flags, 0, data[off:end]); err != nil {
			return err
		}
		off = end
	}
	bc.next[d] = base + uint32(len(data))
	return nil
}

func (bw *bulkWriter) packet(bc *bulkConn, d Dir, seq, ack uint32, flags uint8, mss uint16, payload []byte) error {
	s := segment{src: bc.client, dst: bc.broker, seq: seq, ack: ack, flags: flags, mss: mss, inbound: d == ToBroker, payload: payload}
	if d == ToClient {
		s.src, s.dst = bc.broker, bc.client
	}
	bw.hdr = bw.fr.appendHeaders(bw.hdr[:0], &s)
	err := bw.pw.writePacket(bw.now, bw.hdr, payload)
	bw.now = bw.now.Add(bulkStep)
	if err != nil {
		return fmt.Errorf("pcapgen: bulk write: %w", err)
	}
	return nil
}
