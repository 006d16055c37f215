package decode

// ApiVersions, versions 0-5 (and above, read as kmsg's newest). The v3+
// request names the client library (ClientSoftwareName/Version); the
// response gives its error code, the first field of every version's
// layout (so also of the v0 layout a broker answers an unsupported version
// in, with UNSUPPORTED_VERSION).
var apiVersions = bodyCodec{
	request:  &layout{since: 3, fields: []field{fSoftwareName, fSoftwareVersion}},
	response: &layout{fields: []field{fErrorCode}},
}
