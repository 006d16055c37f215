package decode

// ApiVersions, versions 0-5 (and above, read as kmsg's newest). The v3+
// request names the client library (ClientSoftwareName/Version); the
// response gives its error code.

import "github.com/twmb/franz-go/pkg/kmsg"

func apiVersionsRequest(ver int16, body []byte, out *Body) error {
	m := kmsg.NewPtrApiVersionsRequest()
	if err := readBody(m, clampVersion(keyAPIVersions, ver), body); err != nil {
		return err
	}
	out.ClientSoftwareName = m.ClientSoftwareName
	out.ClientSoftwareVersion = m.ClientSoftwareVersion
	return nil
}

func apiVersionsResponse(ver int16, body []byte, out *Body) error {
	m := kmsg.NewPtrApiVersionsResponse()
	err := readBody(m, clampVersion(keyAPIVersions, ver), body)
	if err != nil {
		// A broker that does not support the request's version answers
		// UNSUPPORTED_VERSION in the v0 layout.
		m = kmsg.NewPtrApiVersionsResponse()
		if readBody(m, 0, body) != nil {
			return err
		}
	}
	out.ErrorCode, out.HasErrorCode = m.ErrorCode, true
	return nil
}
