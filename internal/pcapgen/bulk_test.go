package pcapgen

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"hash/crc32"
	"io"
	"math"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/klauspost/compress/s2"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestWriteBulk(t *testing.T) {
	tests := []struct {
		name string
		o    BulkOptions
	}{
		{name: "ethernet pcap split", o: BulkOptions{Connections: 5, Requests: 200, PayloadSize: 5000, SplitFraction: 0.5, Seed: 1}},
		{name: "loopback mtu pcapng", o: BulkOptions{Connections: 3, Requests: 60, PayloadSize: 100000, MTU: 65535, Seed: 2, Format: FormatPCAPNG, Link: LinkNull}},
		{name: "gzip sll2", o: BulkOptions{Connections: 2, Requests: 20, PayloadSize: 3000, Seed: 3, Gzip: true, Link: LinkSLL2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			n, err := WriteBulk(&buf, tt.o)
			if err != nil {
				t.Fatal(err)
			}
			if !tt.o.Gzip && n != int64(buf.Len()) {
				t.Errorf("WriteBulk reported %d bytes, wrote %d", n, buf.Len())
			}
			r := reassemble(t, buf.Bytes())
			if len(r.data) != 2*tt.o.Connections {
				t.Fatalf("%d directions, want %d", len(r.data), 2*tt.o.Connections)
			}
			requests, responses := 0, 0
			for k, stream := range r.data {
				if r.skip[k] != 0 {
					t.Errorf("%v: skipped %d", k, r.skip[k])
				}
				frames := 0
				for len(stream) > 0 {
					if len(stream) < 4 {
						t.Fatalf("%v: %d trailing bytes", k, len(stream))
					}
					size := int(binary.BigEndian.Uint32(stream))
					if size < 8 || 4+size > len(stream) {
						t.Fatalf("%v: frame %d has size %d with %d bytes left", k, frames, size, len(stream))
					}
					stream = stream[4+size:]
					frames++
				}
				if k.dst == 9092 {
					requests += frames
				} else {
					responses += frames
				}
			}
			want := tt.o.Requests + 2*tt.o.Connections
			if requests != want || responses != want {
				t.Errorf("requests %d, responses %d, want %d each", requests, responses, want)
			}
		})
	}
}

func TestWriteBulkSize(t *testing.T) {
	var buf bytes.Buffer
	n, err := WriteBulk(&buf, BulkOptions{Size: 3 << 20, PayloadSize: 20000})
	if err != nil {
		t.Fatal(err)
	}
	if n < 3<<20 || n > 3<<20+200000 {
		t.Errorf("wrote %d bytes for Size %d", n, 3<<20)
	}
}

func BenchmarkWriteBulk(b *testing.B) {
	for _, bc := range []struct {
		name string
		o    BulkOptions
	}{
		{"ethernet-1500", BulkOptions{Connections: 64, Requests: 2000, PayloadSize: 64 << 10, SplitFraction: 0.1}},
		{"loopback-65535", BulkOptions{Connections: 64, Requests: 2000, PayloadSize: 64 << 10, MTU: 65535, Link: LinkNull}},
		{"pcapng-1500", BulkOptions{Connections: 64, Requests: 2000, PayloadSize: 64 << 10, Format: FormatPCAPNG}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			n, _ := WriteBulk(io.Discard, bc.o)
			b.SetBytes(n)
			b.ResetTimer()
			for b.Loop() {
				if _, err := WriteBulk(io.Discard, bc.o); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// splitFrames cuts a reassembled direction into Kafka frames (without their
// size prefixes).
func splitFrames(t *testing.T, stream []byte) [][]byte {
	t.Helper()
	var out [][]byte
	for len(stream) > 0 {
		if len(stream) < 4 {
			t.Fatalf("%d trailing bytes", len(stream))
		}
		size := int(binary.BigEndian.Uint32(stream))
		if 4+size > len(stream) {
			t.Fatalf("frame of %d bytes with %d left", size, len(stream)-4)
		}
		out = append(out, stream[4:4+size])
		stream = stream[4+size:]
	}
	return out
}

// requestBody skips a request frame's header.
func requestBody(t *testing.T, frame []byte) (key, version int16, body []byte) {
	t.Helper()
	key, version = int16(binary.BigEndian.Uint16(frame)), int16(binary.BigEndian.Uint16(frame[2:]))
	off := 10
	if n := int16(binary.BigEndian.Uint16(frame[8:])); n > 0 {
		off += int(n)
	}
	if RequestHeaderVersion(key, version) >= 2 {
		count, n := binary.Uvarint(frame[off:])
		off += n
		for range count {
			_, n := binary.Uvarint(frame[off:])
			off += n
			size, n := binary.Uvarint(frame[off:])
			off += n + int(size)
		}
	}
	return key, version, frame[off:]
}

// checkRecordBatch decodes raw as Kafka would and checks what a broker or
// consumer checks: magic, codec, length, CRC-32C, offsets, timestamps and
// records.
func checkRecordBatch(t *testing.T, raw []byte, payloadSize int, codec Compression) int {
	t.Helper()
	var b kmsg.RecordBatch
	if err := b.ReadFrom(raw); err != nil {
		t.Fatalf("record batch: %v", err)
	}
	if b.Magic != 2 || b.Attributes != int16(codec) {
		t.Errorf("magic %d, attributes %#x, want 2 and %#x", b.Magic, b.Attributes, codec)
	}
	if int(b.Length) != len(raw)-12 {
		t.Errorf("batch length %d, want %d", b.Length, len(raw)-12)
	}
	if crc := crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)); uint32(b.CRC) != crc {
		t.Errorf("CRC %#x, want %#x", uint32(b.CRC), crc)
	}
	if b.NumRecords < 1 || b.LastOffsetDelta != b.NumRecords-1 || b.MaxTimestamp != b.FirstTimestamp+int64(b.LastOffsetDelta) {
		t.Errorf("%d records, last offset delta %d, timestamps %d..%d", b.NumRecords, b.LastOffsetDelta, b.FirstTimestamp, b.MaxTimestamp)
	}
	recs := b.Records
	if codec == CompressionSnappy {
		// Sized at a ratio measured on other records: within a few percent.
		if d := len(raw) - payloadSize; d > payloadSize/20 || d < -payloadSize/20 {
			t.Errorf("compressed batch of %d bytes for PayloadSize %d", len(raw), payloadSize)
		}
		var err error
		if recs, err = s2.Decode(nil, recs); err != nil {
			t.Fatalf("snappy: %v", err)
		}
		if len(recs) < 2*len(b.Records) {
			t.Errorf("%d records bytes compressed to %d: event text should compress better", len(recs), len(b.Records))
		}
	} else if len(raw) > max(payloadSize, 110) || len(raw) < payloadSize-50 {
		// A batch ends short of PayloadSize by less than one record's
		// framing (under 50 bytes), and a one-record batch is never under
		// 100 bytes.
		t.Errorf("batch of %d bytes for PayloadSize %d", len(raw), payloadSize)
	}
	n := 0
	for len(recs) > 0 {
		size, w := binary.Varint(recs)
		if w <= 0 || w+int(size) > len(recs) {
			t.Fatalf("record %d: length %d with %d bytes left", n, size, len(recs))
		}
		var r kmsg.Record
		if err := r.ReadFrom(recs[:w+int(size)]); err != nil {
			t.Fatalf("record %d: %v", n, err)
		}
		if r.OffsetDelta != int32(n) || r.TimestampDelta64 != int64(n) || len(r.Key) == 0 || len(r.Value) > 100 {
			t.Errorf("record %d: offset delta %d, timestamp delta %d, key %q, %d-byte value", n, r.OffsetDelta, r.TimestampDelta64, r.Key, len(r.Value))
		}
		if want := 1 - n%2; len(r.Headers) != want {
			t.Errorf("record %d: %d headers, want %d", n, len(r.Headers), want)
		}
		recs = recs[w+int(size):]
		n++
	}
	if n != int(b.NumRecords) {
		t.Errorf("parsed %d records, batch says %d", n, b.NumRecords)
	}
	return n
}

func TestWriteBulkRecordBatches(t *testing.T) {
	tests := []struct {
		name    string
		o       BulkOptions
		records int // per batch; with a codec, at least this many
		codec   Compression
	}{
		{name: "small", o: BulkOptions{Connections: 3, Requests: 40, PayloadSize: 60, Seed: 1}, records: 1},
		{name: "one shortened record", o: BulkOptions{Connections: 2, Requests: 20, PayloadSize: 200, Seed: 2}, records: 1},
		{name: "kgo sized", o: BulkOptions{Connections: 3, Requests: 60, PayloadSize: 10 << 10, MTU: 65535, SplitFraction: 0.2, Seed: 3, Link: LinkNull}, records: 78},
		{name: "non-flexible", o: BulkOptions{Connections: 2, Requests: 30, PayloadSize: 3000, ProduceVersion: 8, FetchVersion: 11, Seed: 4}, records: 23},
		// kgo's default: over twice the records of "kgo sized" in the same
		// bytes.
		{name: "snappy", o: BulkOptions{Connections: 3, Requests: 60, PayloadSize: 10 << 10, MTU: 65535, Seed: 3, Link: LinkNull, Compression: CompressionSnappy}, records: 2 * 78, codec: CompressionSnappy},
		// Too small to gain from compression: sent uncompressed, as kgo does.
		{name: "snappy too small", o: BulkOptions{Connections: 2, Requests: 20, PayloadSize: 145, Seed: 2, Compression: CompressionSnappy}, records: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if _, err := WriteBulk(&buf, tt.o); err != nil {
				t.Fatal(err)
			}
			r := reassemble(t, buf.Bytes())
			produces, fetches := 0, 0
			for k, stream := range r.data {
				if k.dst != 9092 {
					continue
				}
				reqs := splitFrames(t, stream)
				resps := splitFrames(t, r.data[streamKey{k.dst, k.src}])
				if len(reqs) != len(resps) {
					t.Fatalf("%v: %d requests, %d responses", k, len(reqs), len(resps))
				}
				for i, f := range reqs {
					key, version, body := requestBody(t, f)
					switch key {
					case 0:
						p := kmsg.ProduceRequest{Version: version}
						if err := p.ReadFrom(body); err != nil {
							t.Fatalf("produce v%d: %v", version, err)
						}
						if want := cmp.Or(tt.o.ProduceVersion, 11); version != want {
							t.Errorf("produce v%d, want v%d", version, want)
						}
						if n := checkRecordBatch(t, p.Topics[0].Partitions[0].Records, tt.o.PayloadSize, tt.codec); !recordsOK(n, tt.records, tt.codec) {
							t.Errorf("produce batch of %d records, want %d", n, tt.records)
						}
						produces++
					case 1:
						resp := resps[i][4:]
						if ResponseHeaderVersion(key, version) >= 1 {
							resp = resp[1:] // no tagged fields
						}
						if want := cmp.Or(tt.o.FetchVersion, 15); version != want {
							t.Errorf("fetch v%d, want v%d", version, want)
						}
						fr := kmsg.FetchResponse{Version: version}
						if err := fr.ReadFrom(resp); err != nil {
							t.Fatalf("fetch response v%d: %v", version, err)
						}
						p := fr.Topics[0].Partitions[0]
						if n := checkRecordBatch(t, p.RecordBatches, tt.o.PayloadSize, tt.codec); !recordsOK(n, tt.records, tt.codec) || p.HighWatermark != int64(n) {
							t.Errorf("fetch batch of %d records, high watermark %d, want %d", n, p.HighWatermark, tt.records)
						}
						fetches++
					}
				}
			}
			if produces+fetches != tt.o.Requests || produces == 0 || fetches == 0 {
				t.Errorf("%d produces and %d fetches, want %d in all", produces, fetches, tt.o.Requests)
			}
		})
	}
}

// recordsOK reports whether a batch of n records is what a test wants: want
// exactly, or at least want for a compressed batch, whose count depends on
// how well its records compress.
func recordsOK(n, want int, codec Compression) bool {
	if codec != CompressionNone {
		return n >= want
	}
	return n == want
}

func TestWriteBulkMix(t *testing.T) {
	o := BulkOptions{Connections: 4, Requests: 4000, PayloadSize: 300, ProducePerFetch: 7, RetransmitFraction: 0.01, AckFraction: 0.2, SplitFraction: 0.1, Seed: 5}
	var buf bytes.Buffer
	if _, err := WriteBulk(&buf, o); err != nil {
		t.Fatal(err)
	}
	_, pkts := readFile(t, buf.Bytes())
	type seg struct {
		flow gopacket.Flow
		seq  uint32
	}
	seen := map[seg][]byte{}
	data, retransmitted, acks := 0, 0, 0
	for _, p := range pkts {
		pkt := gopacket.NewPacket(p.data, layers.LinkTypeEthernet, gopacket.Default)
		tcp := pkt.Layer(layers.LayerTypeTCP).(*layers.TCP)
		if len(tcp.Payload) == 0 {
			if !tcp.SYN {
				acks++
			}
			continue
		}
		k := seg{tcp.TransportFlow(), tcp.Seq}
		if prev, ok := seen[k]; ok {
			if !bytes.Equal(prev, tcp.Payload) {
				t.Fatalf("segment %v resent with other bytes", k)
			}
			retransmitted++
			continue
		}
		seen[k] = tcp.Payload
		data++
	}
	if want := float64(data) * o.RetransmitFraction; math.Abs(float64(retransmitted)-want) > 4*math.Sqrt(want) {
		t.Errorf("%d of %d segments retransmitted, want about %.0f", retransmitted, data, want)
	}
	// Every write may be acknowledged: two per round trip, four per
	// connection's start, plus the handshakes' own ACKs.
	if want := float64(2*(o.Requests+2*o.Connections)) * o.AckFraction; math.Abs(float64(acks-o.Connections)-want) > 4*math.Sqrt(want) {
		t.Errorf("%d pure ACKs, want about %.0f", acks-o.Connections, want)
	}
	r := reassemble(t, buf.Bytes())
	produces := 0
	for k, stream := range r.data {
		if r.skip[k] != 0 {
			t.Errorf("%v: skipped %d", k, r.skip[k])
		}
		if k.dst == 9092 {
			for _, f := range splitFrames(t, stream) {
				if key, _, _ := requestBody(t, f); key == 0 {
					produces++
				}
			}
		}
	}
	if want := float64(o.Requests) * 7 / 8; math.Abs(float64(produces)-want) > 4*math.Sqrt(want) {
		t.Errorf("%d produces of %d requests, want about %.0f", produces, o.Requests, want)
	}
}
