package decode

// SaslHandshake, versions 0-1. Only the response's error code is read: a
// successful v0 handshake switches the connection to raw SASL tokens (see
// conn.go). The request's mechanism is not needed.
var saslHandshake = bodyCodec{
	response: &layout{fields: []field{fErrorCode}},
}
