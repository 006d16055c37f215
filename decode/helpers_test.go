package decode

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/kwatch/kwatch/flow"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// tag is one raw tagged field for test headers.
type tag struct {
	id   uint64
	data []byte
}

func appendUvarint(b []byte, v uint64) []byte { return binary.AppendUvarint(b, v) }

func appendTags(b []byte, tags []tag) []byte {
	b = appendUvarint(b, uint64(len(tags)))
	for _, t := range tags {
		b = appendUvarint(b, t.id)
		b = appendUvarint(b, uint64(len(t.data)))
		b = append(b, t.data...)
	}
	return b
}

func strp(s string) *string { return &s }

// reqHeader encodes a request header in the version the API uses; tags are
// written only for v2 headers (nil tags = an empty tag section).
func reqHeader(t testing.TB, key, ver int16, corr int32, clientID *string, tags []tag) []byte {
	t.Helper()
	hv, ok := RequestHeaderVersion(key, ver)
	if !ok {
		hv = 1
	}
	b := binary.BigEndian.AppendUint16(nil, uint16(key))
	b = binary.BigEndian.AppendUint16(b, uint16(ver))
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	if hv == 0 {
		return b
	}
	if clientID == nil {
		b = binary.BigEndian.AppendUint16(b, 0xffff)
	} else {
		b = binary.BigEndian.AppendUint16(b, uint16(len(*clientID)))
		b = append(b, *clientID...)
	}
	if hv == 2 {
		b = appendTags(b, tags)
	}
	return b
}

// frame prefixes parts with their total length.
func frame(parts ...[]byte) []byte {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	b := binary.BigEndian.AppendUint32(nil, uint32(n))
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

// reqFrame builds a whole request frame; body may be a kmsg request (encoded
// at ver) or raw bytes.
func reqFrame(t testing.TB, key, ver int16, corr int32, clientID *string, tags []tag, body any) []byte {
	t.Helper()
	return frame(reqHeader(t, key, ver, corr, clientID, tags), encodeBody(body, ver))
}

// respFrame builds a response frame; the header has tagged fields when the
// request version's response header is v1.
func respFrame(key, ver int16, corr int32, body any) []byte {
	h := binary.BigEndian.AppendUint32(nil, uint32(corr))
	if ResponseHeaderVersion(key, ver) == 1 {
		h = append(h, 0)
	}
	return frame(h, encodeBody(body, ver))
}

func encodeBody(body any, ver int16) []byte {
	switch b := body.(type) {
	case nil:
		return nil
	case []byte:
		return b
	case interface {
		SetVersion(int16)
		AppendTo([]byte) []byte
	}:
		b.SetVersion(ver)
		return b.AppendTo(nil)
	}
	panic(fmt.Sprintf("bad body %T", body))
}

var testID = flow.ConnID{
	Client:     netip.MustParseAddrPort("10.0.0.5:53122"),
	Broker:     netip.MustParseAddrPort("10.0.0.9:9092"),
	StartFrame: 1,
}

// recorder renders events to one line each, for comparison.
type recorder struct{ lines []string }

func (r *recorder) Event(e *Event) { r.lines = append(r.lines, render(e)) }

func (r *recorder) String() string { return strings.Join(r.lines, "\n") }

func render(e *Event) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s f=%d", e.Kind, e.Frame)
	if e.Partial {
		b.WriteString(" partial")
	}
	switch e.Kind {
	case KindConnStart, KindConnEnd:
		fmt.Fprintf(&b, " client=%s start=%v", e.Conn.Client, e.FromStart)
	case KindCoverage:
		fmt.Fprintf(&b, " %s bytes=%d size=%d %q", e.Coverage, e.Bytes, e.Size, e.Detail)
	case KindRequest, KindResponse:
		fmt.Fprintf(&b, " %s v%d hv%d corr=%d size=%d", e.APIKey.String(), e.APIVersion, e.HeaderVersion, e.CorrelationID, e.Size)
		if e.Kind == KindRequest {
			if e.ClientIDNull {
				b.WriteString(" cid=null")
			} else {
				fmt.Fprintf(&b, " cid=%q", e.ClientID)
			}
			if e.HasInstanceID {
				fmt.Fprintf(&b, " iid=%x", e.InstanceID[:])
			}
			if e.TagProblem != TagOK {
				fmt.Fprintf(&b, " tags=%q", e.TagProblem)
			}
		} else {
			fmt.Fprintf(&b, " reqf=%d", e.RequestFrame)
		}
		bd := e.Body
		if bd.BodyError {
			b.WriteString(" body-error")
		}
		if bd.Decoded {
			fmt.Fprintf(&b, " body{%q %q/%v %d tid=%x/%v sub=%d/%v err=%d/%v sw=%q %q}", bd.Group, bd.MemberID, bd.HasMemberID,
				bd.MemberEpoch, bd.TelemetryInstanceID[:], bd.HasTelemetryInstanceID, bd.SubscriptionID, bd.HasSubscriptionID,
				bd.ErrorCode, bd.HasErrorCode, bd.ClientSoftwareName, bd.ClientSoftwareVersion)
		}
	}
	return b.String()
}

// seg is one packet's worth of bytes in a test stream.
type seg struct {
	dir  flow.Side
	data []byte
	gap  int // when > 0 (or gapUnknown), a Gap call instead of data
}

const gapUnknown = -1

// run feeds segs (packet i has Frame i+1) in chunks of at most chunk bytes
// (0 = whole segments) and returns the rendered events, with Close.
func run(id flow.ConnID, fromStart bool, opts Options, segs []seg, chunk int) (*recorder, *Conn) {
	r := &recorder{}
	c := NewConn(id, fromStart, opts, r)
	for i, s := range segs {
		at := flow.Meta{Frame: uint64(i + 1), Time: time.Unix(1700000000, int64(i)).UTC()}
		if s.gap != 0 {
			c.Gap(s.dir, max(s.gap, 0), at)
			continue
		}
		feedChunks(c, s.dir, s.data, at, func(int) int { return chunk })
	}
	c.Close(flow.Meta{Frame: uint64(len(segs) + 1)})
	return r, c
}

func feedChunks(c *Conn, dir flow.Side, p []byte, at flow.Meta, size func(int) int) {
	for len(p) > 0 {
		n := size(len(p))
		if n <= 0 || n > len(p) {
			n = len(p)
		}
		// copy, so the decoder cannot keep a reference unnoticed
		chunk := append([]byte(nil), p[:n]...)
		c.Feed(dir, chunk, at)
		for i := range chunk {
			chunk[i] = 0xAA
		}
		p = p[n:]
	}
}

func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

func metadataReq() *kmsg.MetadataRequest { return kmsg.NewPtrMetadataRequest() }
