package pipeline

import (
	"github.com/kwatch/kwatch/decode"
	"github.com/kwatch/kwatch/flow"
	"github.com/kwatch/kwatch/reassembly"
	"github.com/kwatch/kwatch/tlsdec"
)

// TLS connections with secrets (SPEC.md section 2.1): when Options.Keys is
// active, a connection seen from its start whose client speaks TLS first
// is fed to a tlsdec.Conn, and the plaintext it decrypts to the
// decode.Conn exactly as plaintext is fed. Without its secrets the
// connection is reported as tls-connection when that is certain (the
// connection ended, or the records held waiting outgrew their bound); a
// record that fails to authenticate is one tls-decrypt-failed event, and
// nothing after it is decoded.

// open makes the stream of flow f: its decoder feeds the sink of ss.
func (ss *streams) open(f reassembly.Flow) reassembly.Stream {
	id := f.ConnID
	s := &stream{id: id, fromStart: f.FromStart, env: ss}
	if !f.FromStart || !ss.keys.Active() {
		return s
	}
	s.tls = &tlsStream{keys: ss.keys, id: id, sink: ss.sink, stats: ss.tls}
	s.tls.stream = s
	return s
}

// tlsStream is a stream's TLS state.
type tlsStream struct {
	stream *stream
	keys   *tlsdec.KeyLog // until the client's first byte is seen
	dec    *tlsdec.Conn   // once it was a TLS handshake record
	id     flow.ConnID
	sink   decode.Sink
	first  flow.Meta // the packet of the client's first byte
	said   bool      // the final status was reported
	stats  *tlsdec.Stats
}

// start decides, on the first bytes of the connection, whether it is TLS.
func (t *tlsStream) start(side flow.Side, p []byte, m flow.Meta) {
	if side == flow.Client && len(p) > 0 && p[0] == tlsdec.FirstByte {
		t.dec = tlsdec.NewConn(t.keys, t, tlsdec.Options{})
		t.first = m
	}
	t.keys = nil
}

// data feeds p; it returns false when the stream is plaintext.
func (t *tlsStream) data(side flow.Side, p []byte, m flow.Meta) bool {
	if t.keys != nil {
		t.start(side, p, m)
	}
	if t.dec == nil {
		return false
	}
	t.dec.Feed(side, p, m)
	t.report()
	return true
}

// gap: before the first byte, the stream is plaintext; a decrypting
// connection's decoder hears of the loss, and decryption stops.
func (t *tlsStream) gap(side flow.Side, lost int, m flow.Meta) bool {
	t.keys = nil
	if t.dec == nil {
		return false
	}
	if t.dec.Status() == tlsdec.StatusDecrypting {
		t.stream.decoder().Gap(side, lost, m)
	}
	t.dec.Gap(side, m)
	t.report()
	return true
}

func (t *tlsStream) end(m flow.Meta) {
	if t.dec == nil {
		return
	}
	t.dec.Close(m)
	t.report()
	t.stats.Add(t.dec.Stats())
}

// Plain feeds decrypted bytes to the decoder (tlsdec.Output).
func (t *tlsStream) Plain(side flow.Side, p []byte, m flow.Meta) {
	t.stream.decoder().Feed(side, p, m)
}

// Event passes the decoder's events on, marked when decrypted (decode.Sink).
func (t *tlsStream) Event(e *decode.Event) {
	if t.dec != nil {
		e.Decrypted = true
	}
	t.sink.Event(e)
}

// report says, once, why a TLS connection is not (or no longer) decoded.
func (t *tlsStream) report() {
	st := t.dec.Status()
	if t.said || !st.Final() || st == tlsdec.StatusLost {
		return
	}
	t.said = true
	detail, at := t.dec.Detail()
	e := decode.Event{Kind: decode.KindCoverage, Conn: t.id, FromStart: true}
	if st == tlsdec.StatusFailed {
		e.Coverage, e.Frame, e.Time = decode.TLSDecryptFailed, at.Frame, at.Time
		e.Detail = detail
	} else {
		// As without a key log: the connection is TLS, from its first packet.
		e.Coverage, e.Frame, e.Time = decode.TLSConnection, t.first.Frame, t.first.Time
		e.Detail = "client's first bytes are a TLS record; " + detail
	}
	t.sink.Event(&e)
}
