package pcapgen

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/klauspost/compress/s2"
	"github.com/twmb/franz-go/pkg/kmsg"
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
	// PayloadSize is the size of the record batch in every Produce request
	// and Fetch response (0 = 16 KiB): a v2 batch of records with 100-byte
	// values (JSON-like events), the last value shortened to fit; a batch
	// holds at least one record, so tiny sizes get a batch of about 100
	// bytes.
	PayloadSize int
	// Compression is the batches' codec. With CompressionSnappy, kgo's
	// default, a batch holds as many records as make about PayloadSize
	// once compressed, and is sent uncompressed when compressing does not
	// make it smaller, as kgo does.
	Compression Compression
	// ProducePerFetch is the number of Produce round trips per Fetch round
	// trip (0 = 1, balanced); a producer-heavy workload has 7 or so.
	ProducePerFetch float64
	// ProduceVersion and FetchVersion are the versions of the Produce and
	// Fetch round trips (0 = 11 and 15, flexible, with header instance IDs).
	// Non-flexible versions (Produce < 9, Fetch < 12) use header v1.
	ProduceVersion, FetchVersion int16
	// InstanceFirstOnly sends the header instance ID on a connection's
	// first request only, as a client of the accepted-2026 revision does:
	// audited under the seed profile, every later flexible request is an
	// instance-id-dropped (a fleet whose clients repeat one fault).
	InstanceFirstOnly bool
	// MTU bounds packets: segments carry at most MTU-40 bytes (0 = 1500;
	// 65535 gives loopback-sized segments).
	MTU int
	// SplitFraction is the fraction of writes that get one extra cut at a
	// random offset, so that frame headers straddle segments.
	SplitFraction float64
	// RetransmitFraction is the fraction of data segments that are sent
	// twice, the copy right after the original with the same sequence
	// number and bytes, as a capture shows a retransmission.
	RetransmitFraction float64
	// AckFraction is the fraction of writes the peer acknowledges with a
	// pure ACK before it sends anything, as a delayed ACK does while a
	// broker waits (Fetch long polls, Produce replication).
	AckFraction float64
	Seed        uint64
	// Format of the output (FormatAuto = pcap).
	Format Format
	Link   Link
	Gzip   bool
}

// Compression is a record batch codec, as numbered in the batch's
// attributes.
type Compression int8

const (
	CompressionNone   Compression = 0
	CompressionSnappy Compression = 2 // a raw snappy block, as kgo writes it
)

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
	// retransmit and ack are BulkOptions.RetransmitFraction and
	// AckFraction.
	retransmit, ack float64
	rng             *rand.Rand
	hdr             []byte
}

// WriteBulk streams a large capture of mostly Produce and Fetch traffic
// across many connections to w: every connection opens with a handshake,
// ApiVersions and Metadata, then carries Produce requests and Fetch
// responses whose record batches are real, CRC-checked v2 batches, as a
// client and broker send them. It holds one connection's frames at a time,
// never the capture. It returns the number of capture bytes written (before
// gzip).
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
	if o.ProducePerFetch <= 0 {
		o.ProducePerFetch = 1
	}
	if o.ProduceVersion <= 0 {
		o.ProduceVersion = 11
	}
	if o.FetchVersion <= 0 {
		o.FetchVersion = 15
	}
	out, closeGz := gzipWriter(w, o.Gzip)
	cw := &countWriter{w: out}
	pw, err := newPacketWriter(cw, formatFor(o.Format, ""), o.Link.LinkType(), 0)
	if err != nil {
		return 0, err
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x6b77617463680000))
	bw := &bulkWriter{pw: pw, fr: framer{link: o.Link, vlan: 100}, now: BaseTime(), mss: min(max(o.MTU-40, 1), maxPayload), split: o.SplitFraction, retransmit: o.RetransmitFraction, ack: o.AckFraction, rng: rng}

	text := eventText(rng, 16<<10)
	conns := make([]bulkConn, o.Connections)
	for i := range conns {
		conns[i] = newBulkConn(i, rng, &o, text)
	}
	produceShare := o.ProducePerFetch / (o.ProducePerFetch + 1)
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
		if rng.Float64() < produceShare {
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

// newBulkConn encodes connection i's frames once. Its producer (ID 1000+i,
// idempotent, as kgo's default) writes the same batch in every Produce; its
// Fetch responses return a batch of that producer's records from offset 0.
func newBulkConn(i int, rng *rand.Rand, o *BulkOptions, text []byte) bulkConn {
	var topicID [16]byte
	topicID[0], topicID[15] = 0x42, byte(i)
	id := [16]byte{}
	for j := range id {
		id[j] = byte(rng.Uint32())
	}
	id[6] = id[6]&0x0f | 0x40 // version 4
	id[8] = id[8]&0x3f | 0x80 // RFC 4122 variant
	h := RequestHeader{InstanceID: &id, APIVersion: o.ProduceVersion}
	if o.InstanceFirstOnly {
		h.InstanceID = nil
	}
	bc := bulkConn{
		instance: id,
		clientID: fmt.Sprintf("bulk-client-%d", i),
		client:   netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 2, byte((i + 1) >> 8), byte(i + 1)}), uint16(30000+i%30000)),
		broker:   netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 0, byte(1 + i%3)}), 9092),
		next:     [2]uint32{rng.Uint32(), rng.Uint32()},
	}
	b := batchSpec{
		size:        o.PayloadSize,
		producerID:  1000 + int64(i),
		leaderEpoch: -1,                             // a producer does not know it
		timestamp:   BaseTime().UnixMilli() - 60000, // produced before the capture
		key:         i,
		codec:       o.Compression,
	}
	batch, _ := appendRecordBatch(nil, rng, text, b)
	bc.produce = EncodeRequest(h, Produce(o.ProduceVersion, "bulk", topicID, batch))
	bc.produceResp = EncodeResponse(0, o.ProduceVersion, ProduceResponse(o.ProduceVersion, "bulk", topicID))
	h.APIVersion = o.FetchVersion
	bc.fetch = EncodeRequest(h, Fetch(o.FetchVersion, "bulk", topicID))
	b.leaderEpoch = 0
	batch, n := appendRecordBatch(batch[:0], rng, text, b)
	fr := FetchResponse(o.FetchVersion, "bulk", topicID, batch)
	fr.Topics[0].Partitions[0].HighWatermark = int64(n)
	fr.Topics[0].Partitions[0].LastStableOffset = int64(n)
	bc.fetchResp = EncodeResponse(0, o.FetchVersion, fr)
	return bc
}

// batchSpec describes one record batch for appendRecordBatch.
type batchSpec struct {
	size        int
	producerID  int64
	leaderEpoch int32
	timestamp   int64 // of the first record, in Unix milliseconds
	key         int   // records' keys are "key-<key>-<offset delta>"
	codec       Compression
}

// eventText returns about n bytes of JSON events, one per line, which
// record values are cut from: what producers typically send, and as
// compressible as that (snappy makes it about 2.5 times smaller).
func eventText(rng *rand.Rand, n int) []byte {
	kinds := []string{"page_view", "click", "add_to_cart", "checkout", "search", "login"}
	var b []byte
	for len(b) < n {
		b = fmt.Appendf(b, `{"event":%q,"user_id":"u-%05d","session":"%08x","ts":%d,"path":"/catalog/%d/item/%d","ok":%t}`+"\n",
			kinds[rng.IntN(len(kinds))], rng.IntN(50000), rng.Uint32(), 1764400000000+rng.Int64N(1e9), rng.IntN(40), rng.IntN(5000), rng.IntN(10) > 0)
	}
	return b[:n]
}

// recordBatchHeader is the size of a v2 record batch before its records;
// the batch length field counts from byte 12 (after baseOffset and itself)
// and the CRC covers from byte 21 (attributes) to the end.
const (
	recordBatchHeader = 61
	batchLengthStart  = 12
	batchCRCAt        = 17
	batchCRCStart     = 21
)

// appendRecordBatch appends a magic-2 record batch of about s.size bytes
// to dst, as Kafka writes it (base offset 0, CRC-32C), and returns it with
// its record count. Records carry 100-byte values cut from text; every
// other one has a header, as traced producers add. With a codec, the
// records are compressed, and there are as many as fill s.size compressed.
func appendRecordBatch(dst []byte, rng *rand.Rand, text []byte, s batchSpec) ([]byte, int) {
	records, n := appendRecords(nil, rng, text, s, s.size)
	var attrs int16
	if s.codec == CompressionSnappy {
		// The records are redrawn to fill s.size at the compression ratio
		// of the last draw, which improves as batches grow (the matches
		// reach further): three draws come within a percent or two.
		comp := s2.EncodeSnappy(nil, records)
		budget := s.size
		for range 3 {
			if len(comp) >= len(records) {
				break
			}
			budget = int(float64(budget) * float64(s.size-recordBatchHeader) / float64(len(comp)))
			records, n = appendRecords(records[:0], rng, text, s, budget)
			comp = s2.EncodeSnappy(comp[:0], records)
		}
		if len(comp) < len(records) { // else sent uncompressed, as kgo does
			records, attrs = comp, int16(CompressionSnappy)
		}
	}
	rb := kmsg.RecordBatch{
		Length:               int32(recordBatchHeader - batchLengthStart + len(records)),
		PartitionLeaderEpoch: s.leaderEpoch,
		Magic:                2,
		Attributes:           attrs,
		LastOffsetDelta:      int32(n - 1),
		FirstTimestamp:       s.timestamp,
		MaxTimestamp:         s.timestamp + int64(n-1),
		ProducerID:           s.producerID,
		NumRecords:           int32(n),
		Records:              records,
	}
	start := len(dst)
	dst = rb.AppendTo(dst)
	binary.BigEndian.PutUint32(dst[start+batchCRCAt:], crc32.Checksum(dst[start+batchCRCStart:], crc32.MakeTable(crc32.Castagnoli)))
	return dst, n
}

// appendRecords appends the encoded records of a batch of about size bytes
// (uncompressed) to dst, and returns them with their count.
func appendRecords(dst []byte, rng *rand.Rand, text []byte, s batchSpec, size int) ([]byte, int) {
	const valueSize = 100
	records := dst
	n := 0
	for {
		r := kmsg.Record{
			TimestampDelta64: int64(n),
			OffsetDelta:      int32(n),
			Key:              fmt.Appendf(nil, "key-%d-%d", s.key, n),
		}
		if n%2 == 0 {
			r.Headers = []kmsg.Header{{Key: "trace-id", Value: fmt.Appendf(nil, "%016x", rng.Uint64())}}
		}
		off := rng.IntN(len(text) - valueSize)
		r.Value = text[off : off+valueSize]
		rec := appendRecord(nil, &r)
		room := size - recordBatchHeader - (len(records) - len(dst))
		if len(rec) <= room {
			records = append(records, rec...)
			n++
			continue
		}
		// The record that does not fit gets the value that fills the batch
		// if its framing fits, so a batch ends short by less than one
		// record's framing; the first record goes in even when nothing
		// fits.
		if fit := room - (len(rec) - valueSize); fit >= 0 || n == 0 {
			r.Value = r.Value[:max(fit, 0)]
			records = appendRecord(records, &r)
			n++
		}
		return records, n
	}
}

// appendRecord appends r with its length prefix: kmsg writes Length as
// given, so r is encoded once with a zero (one-byte) length to measure it.
func appendRecord(dst []byte, r *kmsg.Record) []byte {
	start := len(dst)
	r.Length = 0
	dst = r.AppendTo(dst)
	r.Length = int32(len(dst) - start - 1)
	return r.AppendTo(dst[:start])
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
// of writes, once more at a random offset; a RetransmitFraction of the
// segments is sent twice, and an AckFraction of writes is acknowledged.
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
		if bw.retransmit > 0 && bw.rng.Float64() < bw.retransmit {
			if err := bw.packet(bc, d, base+uint32(off), bc.next[1-d], flags, 0, data[off:end]); err != nil {
				return err
			}
		}
		off = end
	}
	bc.next[d] = base + uint32(len(data))
	if bw.ack > 0 && bw.rng.Float64() < bw.ack {
		return bw.packet(bc, 1-d, bc.next[1-d], bc.next[d], flagACK, 0, nil)
	}
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
