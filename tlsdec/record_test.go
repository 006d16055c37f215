package tlsdec

import (
	"bytes"
	"testing"
)

// stream3 is three records: a handshake record, an empty alert and a
// larger application data record.
func stream3() []byte {
	var b []byte
	b = append(b, typeHandshake, 3, 1, 0, 4, 1, 0, 0, 0)
	b = append(b, typeAlert, 3, 3, 0, 0)
	body := bytes.Repeat([]byte{7}, 300)
	b = append(b, typeAppData, 3, 3, 1, 44)
	return append(b, body...)
}

// TestRecordsSplitAtEveryBoundary: the records come out the same wherever
// the stream is cut in two.
func TestRecordsSplitAtEveryBoundary(t *testing.T) {
	s := stream3()
	want := [][]byte{s[:9], s[9:14], s[14:]}
	for cut := 0; cut <= len(s); cut++ {
		var r records
		var got [][]byte
		for _, p := range [][]byte{s[:cut], s[cut:]} {
			for len(p) > 0 {
				hdr, body, rest, err := r.next(p)
				if err != nil {
					t.Fatalf("cut %d: %v", cut, err)
				}
				if hdr == nil {
					break
				}
				got = append(got, append(bytes.Clone(hdr), body...))
				p = rest
			}
		}
		if len(got) != len(want) {
			t.Fatalf("cut %d: %d records, want %d", cut, len(got), len(want))
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("cut %d: record %d differs", cut, i)
			}
		}
	}
}

func TestRecordsRejectNonTLS(t *testing.T) {
	tests := []struct {
		name string
		hdr  []byte
	}{
		{"type-below", []byte{19, 3, 3, 0, 1}},
		{"type-above", []byte{25, 3, 3, 0, 1}},
		{"major-version", []byte{22, 2, 0, 0, 1}},
		{"minor-version", []byte{22, 3, 5, 0, 1}},
		{"too-long", []byte{23, 3, 3, 0x48, 0x01}}, // 2^14+2048+1
		{"kafka-frame", []byte{0, 0, 0, 20, 0}},
		{"http", []byte("GET /")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r records
			if _, _, _, err := r.next(tt.hdr); err == nil {
				t.Fatal("accepted")
			}
			var r2 records // byte by byte
			var err error
			for i := range tt.hdr {
				if _, _, _, err = r2.next(tt.hdr[i : i+1]); err != nil {
					break
				}
			}
			if err == nil {
				t.Fatal("accepted byte by byte")
			}
		})
	}
	var r records
	max := append([]byte{23, 3, 3, 0x48, 0x00}, make([]byte, MaxRecord)...)
	if hdr, body, _, err := r.next(max); err != nil || hdr == nil || len(body) != MaxRecord {
		t.Fatalf("the largest record: %v", err)
	}
}

func TestMessagesAcrossRecords(t *testing.T) {
	// A ServerHello split over three pieces, then a skipped Certificate.
	hello := append([]byte{hsServerHello, 0, 0, 38, 3, 3}, bytes.Repeat([]byte{9}, 32)...)
	hello = append(hello, 0, 0x13, 0x01, 0) // no session ID, suite, compression
	msg := append(hello, 11, 0, 0, 3, 1, 2, 3)
	for cut := 0; cut <= len(msg); cut++ {
		var m messages
		var types []byte
		var body []byte
		for _, p := range [][]byte{msg[:cut], msg[cut:]} {
			for len(p) > 0 {
				typ, b, rest, ok := m.next(p)
				if !ok {
					break
				}
				types = append(types, typ)
				if typ == hsServerHello {
					body = bytes.Clone(b)
				}
				p = rest
			}
		}
		if !bytes.Equal(types, []byte{hsServerHello, 11}) {
			t.Fatalf("cut %d: types %v", cut, types)
		}
		h, ok := parseServerHello(body)
		if !ok || h.suite != 0x1301 || h.version != 0x0303 || h.random[0] != 9 {
			t.Fatalf("cut %d: %+v %v", cut, h, ok)
		}
	}
}
