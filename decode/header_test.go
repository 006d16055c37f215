package decode

import (
	"bytes"
	"errors"
	"testing"
)

var iid = UUID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}

func TestParseRequestHeader(t *testing.T) {
	tests := []struct {
		name      string
		frame     []byte
		err       error
		hv        int8
		key, ver  int16
		corr      int32
		clientID  string
		null      bool
		hasIID    bool
		iid       UUID
		problem   TagProblem
		bodyStart int // -1: Len == len(frame)
	}{
		{name: "v0 controlled shutdown", frame: reqHeader(t, 7, 0, 9, nil, nil), hv: 0, key: 7, ver: 0, corr: 9, null: true, bodyStart: 8},
		{name: "v1 produce v8", frame: cat(reqHeader(t, 0, 8, 3, strp("app"), nil), []byte{1, 2}), hv: 1, key: 0, ver: 8, corr: 3, clientID: "app", bodyStart: 13},
		{name: "v1 null client id", frame: reqHeader(t, 17, 1, 1, nil, nil), hv: 1, key: 17, ver: 1, corr: 1, null: true, bodyStart: 10},
		{name: "v1 empty client id", frame: reqHeader(t, 17, 1, 1, strp(""), nil), hv: 1, key: 17, ver: 1, corr: 1, bodyStart: 10},
		{name: "v2 no tags", frame: reqHeader(t, 3, 12, 5, strp("c"), nil), hv: 2, key: 3, ver: 12, corr: 5, clientID: "c", bodyStart: 12},
		{name: "v2 instance id", frame: cat(reqHeader(t, 3, 12, 5, strp("c"), []tag{{0, iid[:]}}), []byte{9}), hv: 2, key: 3, ver: 12, corr: 5, clientID: "c", hasIID: true, iid: iid, bodyStart: 30},
		{name: "v2 zero instance id", frame: reqHeader(t, 3, 12, 5, strp("c"), []tag{{0, make([]byte, 16)}}), hv: 2, key: 3, ver: 12, corr: 5, clientID: "c", hasIID: true, bodyStart: 30},
		{name: "v2 unknown tags skipped", frame: reqHeader(t, 3, 12, 5, strp("c"), []tag{{0, iid[:]}, {7, []byte("xyz")}, {300, nil}}), hv: 2, key: 3, ver: 12, corr: 5, clientID: "c", hasIID: true, iid: iid, bodyStart: -1},
		{name: "v2 null client id", frame: reqHeader(t, 3, 12, 5, nil, nil), hv: 2, key: 3, ver: 12, corr: 5, null: true, bodyStart: 11},
		{name: "tag 0 size 15", frame: reqHeader(t, 3, 12, 5, strp("c"), []tag{{0, iid[:15]}}), hv: 2, key: 3, ver: 12, corr: 5, clientID: "c", problem: TagBadSize, bodyStart: -1},
		{name: "tag 0 twice", frame: reqHeader(t, 3, 12, 5, strp("c"), []tag{{0, iid[:]}, {0, iid[:]}}), hv: 2, key: 3, ver: 12, corr: 5, clientID: "c", problem: TagDuplicate, bodyStart: -1},
		{name: "descending", frame: reqHeader(t, 3, 12, 5, strp("c"), []tag{{5, nil}, {0, iid[:]}}), hv: 2, key: 3, ver: 12, corr: 5, clientID: "c", problem: TagDescending, bodyStart: -1},
		{name: "overrun", frame: reqHeader(t, 3, 12, 5, strp("c"), []tag{{0, iid[:]}})[:25], hv: 2, key: 3, ver: 12, corr: 5, clientID: "c", problem: TagOverrun, bodyStart: -1},
		{name: "overrun count", frame: cat(reqHeader(t, 3, 12, 5, strp("c"), nil)[:11], []byte{3}), hv: 2, key: 3, ver: 12, corr: 5, clientID: "c", problem: TagOverrun, bodyStart: -1},
		{name: "long varint", frame: cat(reqHeader(t, 3, 12, 5, strp("c"), nil)[:11], []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0}), hv: 2, key: 3, ver: 12, corr: 5, clientID: "c", problem: TagOverrun, bodyStart: -1},
		{name: "huge tag size", frame: cat(reqHeader(t, 3, 12, 5, strp("c"), nil)[:11], []byte{1, 4, 0xff, 0xff, 0xff, 0xff, 0x0f}), hv: 2, key: 3, ver: 12, corr: 5, clientID: "c", problem: TagOverrun, bodyStart: -1},
		{name: "above kmsg max is flexible", frame: reqHeader(t, 3, 14, 5, strp("c"), nil), hv: 2, key: 3, ver: 14, corr: 5, clientID: "c", bodyStart: 12},
		{name: "share group heartbeat", frame: reqHeader(t, 76, 1, 5, strp("c"), nil), hv: 2, key: 76, ver: 1, corr: 5, clientID: "c", bodyStart: 12},
		{name: "streams group heartbeat", frame: reqHeader(t, 88, 0, 5, strp("c"), nil), hv: 2, key: 88, ver: 0, corr: 5, clientID: "c", bodyStart: 12},
		{name: "unknown key", frame: reqHeader(t, 200, 0, 1, strp("c"), nil), err: ErrUnknownAPIKey},
		{name: "negative key", frame: reqHeader(t, -1, 0, 1, strp("c"), nil), err: ErrUnknownAPIKey},
		{name: "version too high", frame: reqHeader(t, 3, 100, 1, strp("c"), nil), err: ErrBadVersion},
		{name: "negative version", frame: reqHeader(t, 3, -1, 1, strp("c"), nil), err: ErrBadVersion},
		{name: "client id length -2", frame: []byte{0, 3, 0, 1, 0, 0, 0, 1, 0xff, 0xfe}, err: ErrBadClientID},
		{name: "short fixed part", frame: []byte{0, 3, 0}, err: ErrShortHeader},
		{name: "short client id", frame: reqHeader(t, 3, 1, 1, strp("abcdef"), nil)[:12], err: ErrShortHeader},
		{name: "empty", frame: nil, err: ErrShortHeader},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h RequestHeader
			err := ParseRequestHeader(tt.frame, &h)
			if !errors.Is(err, tt.err) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if err != nil {
				return
			}
			if h.HeaderVersion != tt.hv || h.APIKey != tt.key || h.APIVersion != tt.ver || h.CorrelationID != tt.corr {
				t.Errorf("header = v%d key %d ver %d corr %d", h.HeaderVersion, h.APIKey, h.APIVersion, h.CorrelationID)
			}
			if string(h.ClientID) != tt.clientID || h.ClientIDNull != tt.null {
				t.Errorf("client id = %q null %v, want %q null %v", h.ClientID, h.ClientIDNull, tt.clientID, tt.null)
			}
			if h.HasInstanceID != tt.hasIID || h.InstanceID != tt.iid {
				t.Errorf("instance id = %x %v, want %x %v", h.InstanceID, h.HasInstanceID, tt.iid, tt.hasIID)
			}
			if h.TagProblem != tt.problem {
				t.Errorf("tag problem = %v, want %v", h.TagProblem, tt.problem)
			}
			want := tt.bodyStart
			if want < 0 {
				want = len(tt.frame)
			}
			if h.Len != want {
				t.Errorf("Len = %d, want %d", h.Len, want)
			}
		})
	}
}

func TestParseRequestHeaderClientIDPointsIntoFrame(t *testing.T) {
	f := reqHeader(t, 3, 12, 5, strp("orders"), nil)
	var h RequestHeader
	if err := ParseRequestHeader(f, &h); err != nil {
		t.Fatal(err)
	}
	f[10] = 'O'
	if !bytes.Equal(h.ClientID, []byte("Orders")) {
		t.Fatalf("ClientID %q does not alias the frame", h.ClientID)
	}
}

func TestParseRequestHeaderAllocs(t *testing.T) {
	f := reqHeader(t, 3, 12, 5, strp("orders-app"), []tag{{0, iid[:]}, {3, []byte("x")}})
	var h RequestHeader
	if n := testing.AllocsPerRun(1000, func() { _ = ParseRequestHeader(f, &h) }); n != 0 {
		t.Fatalf("ParseRequestHeader allocates %v times", n)
	}
}

func TestHeaderVersions(t *testing.T) {
	tests := []struct {
		name     string
		key, ver int16
		req      int8
		known    bool
		resp     int8
	}{
		{name: "controlled shutdown v0", key: 7, ver: 0, req: 0, known: true, resp: 0},
		{name: "controlled shutdown v1", key: 7, ver: 1, req: 1, known: true, resp: 0},
		{name: "controlled shutdown v3", key: 7, ver: 3, req: 2, known: true, resp: 1},
		{name: "produce v8", key: 0, ver: 8, req: 1, known: true, resp: 0},
		{name: "produce v9", key: 0, ver: 9, req: 2, known: true, resp: 1},
		{name: "api versions v3", key: 18, ver: 3, req: 2, known: true, resp: 0},
		{name: "api versions v2", key: 18, ver: 2, req: 1, known: true, resp: 0},
		{name: "sasl handshake v1", key: 17, ver: 1, req: 1, known: true, resp: 0},
		{name: "offset delete v0", key: 47, ver: 0, req: 1, known: true, resp: 0},
		{name: "consumer group heartbeat v0", key: 68, ver: 0, req: 2, known: true, resp: 1},
		{name: "share group heartbeat v1", key: 76, ver: 1, req: 2, known: true, resp: 1},
		{name: "streams group heartbeat v1", key: 88, ver: 1, req: 2, known: true, resp: 1},
		{name: "metadata above max", key: 3, ver: 14, req: 2, known: true, resp: 1},
		{name: "unknown", key: 1000, ver: 0, req: 0, known: false, resp: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, known := RequestHeaderVersion(tt.key, tt.ver)
			if req != tt.req || known != tt.known {
				t.Errorf("RequestHeaderVersion = %d %v, want %d %v", req, known, tt.req, tt.known)
			}
			if got := ResponseHeaderVersion(tt.key, tt.ver); got != tt.resp {
				t.Errorf("ResponseHeaderVersion = %d, want %d", got, tt.resp)
			}
		})
	}
}

func BenchmarkParseRequestHeader(b *testing.B) {
	f := reqHeader(b, 3, 12, 5, strp("orders-app-1"), []tag{{0, iid[:]}})
	var h RequestHeader
	b.ReportAllocs()
	b.SetBytes(int64(len(f)))
	for b.Loop() {
		if err := ParseRequestHeader(f, &h); err != nil {
			b.Fatal(err)
		}
	}
}
