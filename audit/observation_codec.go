package audit

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"time"

	"github.com/kwatch/kwatch/decode"
	"github.com/kwatch/kwatch/internal/wire"
)

// observationVersion is the first byte of an encoded Observation. A new
// field is appended at the end under a new version; a decoder rejects
// versions it does not know rather than misread them.
const observationVersion = 1

// Flags of an encoded Observation, one bit each.
const (
	obsHasClientID = 1 << iota
	obsInstanceFixed
	obsNoInstance
	obsFromStart
	obsPartial
	obsKafka
	obsOK
	obsJoin
	obsSet
	obsAdoptedHere
)

// ErrObservation is returned for bytes that are no encoded Observation.
var ErrObservation = errors.New("audit: malformed observation")

// AppendBinary appends o's stable encoding to b (encoding.BinaryAppender):
// a version byte, then the fields in declaration order; integers as
// varints, strings and addresses length-prefixed, UUIDs as 16 bytes.
func (o *Observation) AppendBinary(b []byte) ([]byte, error) {
	o.Complete()
	b = append(b, observationVersion, byte(o.Step), byte(o.PDU))
	b = appendAddrPort(b, o.Conn.Client)
	b = appendAddrPort(b, o.Conn.Broker)
	b = binary.AppendUvarint(b, o.Conn.StartFrame)
	b = binary.AppendUvarint(b, o.Frame)
	b = binary.AppendVarint(b, o.Time.UnixNano())
	b = binary.AppendVarint(b, int64(o.APIKey))
	b = binary.AppendVarint(b, int64(o.APIVersion))
	b = binary.AppendVarint(b, int64(o.CorrelationID))
	b = binary.AppendUvarint(b, uint64(o.flags()))
	b = appendString(b, o.ClientID)
	b = append(b, o.Instance[:]...)
	b = append(b, o.HeaderID[:]...)
	b = appendString(b, o.Group)
	b = appendString(b, o.MemberID)
	b = binary.AppendVarint(b, int64(o.MemberEpoch))
	b = appendString(b, o.Assigned)
	b = append(b, o.Telemetry[:]...)
	b = appendString(b, o.Software)
	b = appendString(b, o.SwVersion)
	return b, nil
}

func (o *Observation) flags() uint {
	var f uint
	for i, set := range []bool{o.HasClientID, o.InstanceFixed, o.NoInstance, o.FromStart, o.Partial, o.Kafka, o.OK, o.Join, o.Set, o.AdoptedHere} {
		if set {
			f |= 1 << i
		}
	}
	return f
}

// UnmarshalBinary reads what AppendBinary wrote; strings are copied.
func (o *Observation) UnmarshalBinary(data []byte) error {
	r := obsReader{wire.Reader{B: data}}
	if r.byte() != observationVersion {
		return ErrObservation
	}
	*o = Observation{Step: Step(r.byte()), PDU: decode.Kind(r.byte())}
	o.Conn.Client, o.Conn.Broker = r.addrPort(), r.addrPort()
	o.Conn.StartFrame, o.Frame = r.uvarint(), r.uvarint()
	o.Time = time.Unix(0, r.varint()).UTC()
	o.APIKey, o.APIVersion = decode.APIKey(r.varint()), int16(r.varint())
	o.CorrelationID = int32(r.varint())
	f := r.uvarint()
	o.HasClientID, o.InstanceFixed, o.NoInstance = f&obsHasClientID != 0, f&obsInstanceFixed != 0, f&obsNoInstance != 0
	o.FromStart, o.Partial, o.Kafka = f&obsFromStart != 0, f&obsPartial != 0, f&obsKafka != 0
	o.OK, o.Join, o.Set, o.AdoptedHere = f&obsOK != 0, f&obsJoin != 0, f&obsSet != 0, f&obsAdoptedHere != 0
	o.ClientID = r.string()
	o.Instance, o.HeaderID = r.uuid(), r.uuid()
	o.Group, o.MemberID = r.string(), r.string()
	o.MemberEpoch = int32(r.varint())
	o.Assigned = r.string()
	o.Telemetry = r.uuid()
	o.Software, o.SwVersion = r.string(), r.string()
	if r.Bad || len(r.B) != 0 {
		return ErrObservation
	}
	return nil
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendAddrPort(b []byte, ap netip.AddrPort) []byte {
	a, _ := ap.MarshalBinary() // never fails
	b = binary.AppendUvarint(b, uint64(len(a)))
	return append(b, a...)
}

// obsReader reads an encoded Observation; Bad records the first failure,
// checked once at the end (as kbin does), and every read after it yields
// zero values.
type obsReader struct{ wire.Reader }

func (r *obsReader) take(n uint64) []byte {
	if n > uint64(len(r.B)) {
		r.Bad, r.B = true, nil
		return nil
	}
	return r.Take(int(n))
}

func (r *obsReader) byte() byte { return byte(r.U8()) }

func (r *obsReader) uvarint() uint64 { return r.advance(binary.Uvarint(r.B)) }

func (r *obsReader) varint() int64 {
	v, n := binary.Varint(r.B)
	return int64(r.advance(uint64(v), n))
}

// advance steps over the n bytes a varint of value v took (n <= 0: none
// could be read).
func (r *obsReader) advance(v uint64, n int) uint64 {
	if r.Bad || n <= 0 {
		r.Bad = true
		return 0
	}
	r.B = r.B[n:]
	return v
}

func (r *obsReader) string() string { return string(r.take(r.uvarint())) }

func (r *obsReader) uuid() (u decode.UUID) {
	copy(u[:], r.take(16))
	return u
}

func (r *obsReader) addrPort() netip.AddrPort {
	var ap netip.AddrPort
	if err := ap.UnmarshalBinary(r.take(r.uvarint())); err != nil {
		r.Bad = true
	}
	return ap
}
