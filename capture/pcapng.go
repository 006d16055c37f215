package capture

import (
	"fmt"
	"math/bits"
	"time"

	"github.com/gopacket/gopacket/layers"
)

// pcapng: a sequence of blocks (type, total length, body, total length).
// A Section Header Block starts a section, sets its byte order and forgets
// the previous section's interfaces; Interface Description Blocks define
// interfaces (link type, snap length, timestamp resolution and offset), and
// packet blocks name their interface by index.

const (
	blockSHB = 0x0a0d0d0a
	blockIDB = 0x00000001
	blockOPB = 0x00000002 // obsolete Packet Block
	blockSPB = 0x00000003
	blockEPB = 0x00000006
	blockDSB = 0x0000000a // Decryption Secrets Block

	byteOrderMagic = 0x1a2b3c4d

	// maxInterfaces bounds the interface table a hostile file can grow.
	maxInterfaces = 1 << 16

	optEnd      = 0
	optTSResol  = 9
	optTSOffset = 14

	// maxPacketSec bounds packet times to [1970, 2262): what time.Time's
	// nanoseconds since 1970 can hold, so that every time kwatch computes
	// with, formats or subtracts stays exact. A pcapng timestamp or
	// if_tsoffset beyond it (a year of 292277026596 is what INT64_MAX
	// seconds gives) is clamped, counted and warned about.
	maxPacketSec = 9214646400 // 2262-01-01T00:00:00Z
)

type ngState struct {
	big      bool
	sections int
	ifaces   []ngIface
}

type ngIface struct {
	link    layers.LinkType
	snaplen uint32
	units   uint64 // timestamp units per second (if_tsresol)
	offset  int64  // seconds added to every timestamp (if_tsoffset)
}

// time converts a timestamp in the interface's units; clamped reports a
// time outside [0, maxPacketSec] moved to the nearer end.
func (i *ngIface) time(ts uint64) (t time.Time, clamped bool) {
	var sec, ns uint64
	switch i.units {
	case 1e6:
		sec, ns = ts/1e6, ts%1e6*1e3
	case 1e9:
		sec, ns = ts/1e9, ts%1e9
	default:
		sec = ts / i.units
		// rem < units, so rem*1e9/units cannot overflow Div64.
		hi, lo := bits.Mul64(ts%i.units, 1e9)
		ns, _ = bits.Div64(hi, lo, i.units)
	}
	// offset is within ±maxPacketSec (readIDB), so the sum cannot overflow.
	s := int64(min(sec, maxPacketSec+1)) + i.offset
	switch {
	case s < 0:
		return packetTime(0, 0), true
	case s > maxPacketSec || s == maxPacketSec && ns > 0:
		return packetTime(maxPacketSec, 0), true
	}
	return packetTime(s, int64(ns)), false
}

func (r *fileReader) nextPcapng() (Packet, error) {
	ng := &r.ng
	for {
		h, err := r.win.peek(8)
		if len(h) < 8 {
			return Packet{}, r.short("block header", 8, len(h), err)
		}
		typ := u32(h, ng.big)
		if typ == blockSHB {
			if err := r.readSHB(); err != nil {
				return Packet{}, err
			}
			continue
		}
		if ng.sections == 0 {
			return Packet{}, r.fail(r.frame+1, fmt.Errorf("%w: pcapng block before the section header", ErrCorrupt))
		}
		total := u32(h[4:], ng.big)
		if total < 12 || total%4 != 0 {
			return Packet{}, r.fail(r.frame+1, fmt.Errorf("%w block: type %#x has length %d", ErrCorrupt, typ, total))
		}
		switch typ {
		case blockEPB, blockOPB, blockSPB:
			if total > uint32(r.win.bound) {
				return Packet{}, r.fail(r.frame+1, fmt.Errorf("%w packet block: length %d exceeds the %d-byte bound", ErrCorrupt, total, r.win.bound))
			}
			b, err := r.win.peek(int(total))
			if len(b) < int(total) {
				return Packet{}, r.truncated(r.frame+1, "packet block", int(total), len(b), err)
			}
			p, err := r.packetBlock(typ, b)
			if err != nil {
				return Packet{}, err
			}
			r.win.advance(int(total))
			return p, nil
		case blockIDB:
			if err := r.readIDB(total); err != nil {
				return Packet{}, err
			}
		case blockDSB:
			if err := r.readDSB(total); err != nil {
				return Packet{}, err
			}
		default:
			// Name resolution, statistics, custom blocks: skipped
			// unread, whatever their size.
			n, err := r.win.skip(int64(total))
			if n < int64(total) {
				return Packet{}, r.truncated(r.frame+1, fmt.Sprintf("block of type %#x", typ), int(total), int(n), err)
			}
		}
	}
}

// packetBlock decodes an Enhanced, Simple or obsolete Packet Block; b is the
// whole block.
func (r *fileReader) packetBlock(typ uint32, b []byte) (Packet, error) {
	ng := &r.ng
	total := uint32(len(b))
	if u32(b[total-4:], ng.big) != total {
		return Packet{}, r.fail(r.frame+1, fmt.Errorf("%w packet block: trailing length %d differs from %d", ErrCorrupt, u32(b[total-4:], ng.big), total))
	}
	var (
		iface       uint32
		ts          uint64
		incl, orig  uint32
		data        = b[8 : total-4]
		hasTime     = true
		headerBytes uint32
	)
	switch typ {
	case blockEPB, blockOPB:
		headerBytes = 32
		if total < headerBytes {
			return Packet{}, r.fail(r.frame+1, fmt.Errorf("%w packet block: length %d", ErrCorrupt, total))
		}
		if typ == blockEPB {
			iface = u32(b[8:], ng.big)
		} else {
			iface = uint32(u16(b[8:], ng.big))
		}
		ts = uint64(u32(b[12:], ng.big))<<32 | uint64(u32(b[16:], ng.big))
		incl, orig = u32(b[20:], ng.big), u32(b[24:], ng.big)
		data = b[28 : total-4]
	case blockSPB:
		headerBytes = 16
		if total < headerBytes {
			return Packet{}, r.fail(r.frame+1, fmt.Errorf("%w simple packet block: length %d", ErrCorrupt, total))
		}
		hasTime = false
		orig = u32(b[8:], ng.big)
		data = b[12 : total-4]
		incl = min(orig, uint32(len(data)))
		if len(ng.ifaces) > 0 && ng.ifaces[0].snaplen != 0 {
			incl = min(incl, ng.ifaces[0].snaplen)
		}
	}
	if iface >= uint32(len(ng.ifaces)) {
		return Packet{}, r.fail(r.frame+1, fmt.Errorf("%w packet block: interface %d, but the section defines %d", ErrCorrupt, iface, len(ng.ifaces)))
	}
	if incl > uint32(len(data)) {
		return Packet{}, r.fail(r.frame+1, fmt.Errorf("%w packet block: captured length %d exceeds the block's %d bytes", ErrCorrupt, incl, len(data)))
	}
	if incl > uint32(r.max) {
		return Packet{}, r.fail(r.frame+1, fmt.Errorf("%w packet block: captured length %d exceeds the %d-byte bound", ErrCorrupt, incl, r.max))
	}
	ifc := &ng.ifaces[iface]
	r.frame++
	p := Packet{
		Frame:         r.frame,
		Data:          data[:incl:incl],
		CaptureLength: int(incl),
		Length:        max(int(orig), int(incl)),
		LinkType:      ifc.link,
	}
	if hasTime {
		var clamped bool
		if p.Time, clamped = ifc.time(ts); clamped {
			r.clampedTime(p.Frame)
		}
	}
	return p, nil
}

// clampedTime counts a packet time clamped into [1970, 2262) and says so
// once per file.
func (r *fileReader) clampedTime(frame uint64) {
	r.clamped++
	if r.clamped == 1 {
		r.log.Warn().Msgf("%s: frame %d: timestamp outside 1970..2262, clamped (and every later one)", r.name, frame)
	}
}

func (r *fileReader) readSHB() error {
	ng := &r.ng
	h, err := r.win.peek(12)
	if len(h) < 12 {
		return r.truncated(r.frame+1, "section header block", 12, len(h), err)
	}
	switch {
	case le32(h[8:]) == byteOrderMagic:
		ng.big = false
	case be32(h[8:]) == byteOrderMagic:
		ng.big = true
	default:
		return r.fail(r.frame+1, fmt.Errorf("%w section header: byte-order magic % x", ErrCorrupt, h[8:12]))
	}
	total := u32(h[4:], ng.big)
	if total < 28 || total%4 != 0 || total > uint32(r.win.bound) {
		return r.fail(r.frame+1, fmt.Errorf("%w section header: length %d", ErrCorrupt, total))
	}
	b, err := r.win.peek(int(total))
	if len(b) < int(total) {
		return r.truncated(r.frame+1, "section header block", int(total), len(b), err)
	}
	if major := u16(b[12:], ng.big); major != 1 {
		return r.fail(r.frame+1, fmt.Errorf("%w section header: pcapng version %d", ErrCorrupt, major))
	}
	ng.sections++
	ng.ifaces = ng.ifaces[:0]
	if ng.sections > 1 {
		r.log.Debug().Str("file", r.name).Int("section", ng.sections).Bool("big_endian", ng.big).Msg("new pcapng section")
	}
	r.win.advance(int(total))
	return nil
}

func (r *fileReader) readIDB(total uint32) error {
	ng := &r.ng
	if total < 20 || total > uint32(r.win.bound) {
		return r.fail(r.frame+1, fmt.Errorf("%w interface description: length %d", ErrCorrupt, total))
	}
	b, err := r.win.peek(int(total))
	if len(b) < int(total) {
		return r.truncated(r.frame+1, "interface description block", int(total), len(b), err)
	}
	ifc := ngIface{
		link:    layers.LinkType(u16(b[8:], ng.big)),
		snaplen: u32(b[12:], ng.big),
		units:   1e6,
	}
	opts := b[16 : total-4]
	for len(opts) >= 4 {
		code, n := u16(opts, ng.big), int(u16(opts[2:], ng.big))
		if code == optEnd || 4+n > len(opts) {
			break
		}
		v := opts[4 : 4+n]
		switch {
		case code == optTSResol && n == 1:
			e := v[0] & 0x7f
			switch {
			case v[0]&0x80 != 0 && e < 64:
				ifc.units = 1 << e
			case v[0]&0x80 == 0 && e <= 19:
				ifc.units = 1
				for range e {
					ifc.units *= 10
				}
			default:
				return r.fail(r.frame+1, fmt.Errorf("%w interface description: if_tsresol %#x", ErrCorrupt, v[0]))
			}
		case code == optTSOffset && n == 8:
			hi, lo := uint64(u32(v, ng.big)), uint64(u32(v[4:], ng.big))
			if !ng.big {
				hi, lo = lo, hi
			}
			ifc.offset = int64(hi<<32 | lo)
			if ifc.offset > maxPacketSec || ifc.offset < -maxPacketSec {
				r.log.Warn().Msgf("%s: interface %d: if_tsoffset of %d s is beyond any real clock: ignored", r.name, len(ng.ifaces), ifc.offset)
				r.clamped++
				ifc.offset = 0
			}
		}
		opts = opts[min(len(opts), 4+(n+3)&^3):]
	}
	if !LinkTypeSupported(ifc.link) {
		r.warnLink(ifc.link, fmt.Sprintf(" (interface %d)", len(ng.ifaces)))
	}
	if len(ng.ifaces) >= maxInterfaces {
		return r.fail(r.frame+1, fmt.Errorf("%w: more than %d interfaces in one section", ErrCorrupt, maxInterfaces))
	}
	ng.ifaces = append(ng.ifaces, ifc)
	r.win.advance(int(total))
	return nil
}

// readDSB hands a Decryption Secrets Block's secrets to Options.Secrets:
// type (4 bytes), length (4), data, options. Without a hook, or when the
// block is larger than the window, it is skipped unread.
func (r *fileReader) readDSB(total uint32) error {
	if r.secrets == nil || total > uint32(r.win.bound) {
		if r.secrets != nil {
			r.log.Warn().Msgf("%s: a decryption secrets block of %d bytes exceeds the %d-byte bound: its secrets are not used", r.name, total, r.win.bound)
		}
		n, err := r.win.skip(int64(total))
		if n < int64(total) {
			return r.truncated(r.frame+1, "decryption secrets block", int(total), int(n), err)
		}
		return nil
	}
	b, err := r.win.peek(int(total))
	if len(b) < int(total) {
		return r.truncated(r.frame+1, "decryption secrets block", int(total), len(b), err)
	}
	if total < 20 {
		return r.fail(r.frame+1, fmt.Errorf("%w decryption secrets block: length %d", ErrCorrupt, total))
	}
	typ, n := u32(b[8:], r.ng.big), u32(b[12:], r.ng.big)
	if n > total-20 {
		return r.fail(r.frame+1, fmt.Errorf("%w decryption secrets block: %d bytes of secrets in a %d-byte block", ErrCorrupt, n, total))
	}
	r.secrets(typ, b[16:16+n])
	r.win.advance(int(total))
	return nil
}
