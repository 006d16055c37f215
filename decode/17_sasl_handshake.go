package decode

// SaslHandshake, versions 0-1. Only the response's error code is read: a
// successful v0 handshake switches the connection to raw SASL tokens (see
// conn.go). The request's mechanism is not needed.

import "github.com/twmb/franz-go/pkg/kmsg"

func saslHandshakeResponse(ver int16, body []byte, out *Body) error {
	m := kmsg.NewPtrSASLHandshakeResponse()
	if err := readBody(m, ver, body); err != nil {
		return err
	}
	out.ErrorCode, out.HasErrorCode = m.ErrorCode, true
	return nil
}
