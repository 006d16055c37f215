package audit

import "github.com/kwatch/kwatch/decode"

// CoverageDoc explains a coverage event (SPEC.md 3.6) for `kwatch rules`:
// not a violation, a place where the audit could not see everything.
type CoverageDoc struct {
	Event       decode.Coverage
	Summary     string
	Explanation string
}

// coverageDocs is the one table of coverage event explanations, in report
// order (decode.Coverages).
var coverageDocs = []CoverageDoc{
	{decode.MidstreamJoin, "the connection's SYN and SYN-ACK were not captured: it was joined mid-stream",
		`The capture started after the connection was opened, so its first request may not have been seen.
Findings that depend on the first request (instance-id-dropped, -changed, -late, the client-ID rules,
member-id-changed, telemetry-id-not-adopted) carry "confidence": "partial". Start the capture before
the clients connect, or restart them while capturing, for full confidence.`},
	{decode.StreamGap, "bytes of the connection were lost: a missing segment, or more out of order than the buffer holds",
		`The capture lacks bytes that the connection carried (seen by the sequence numbers, or by the other
side acknowledging them). The decoder resyncs to the next plausible frame; findings after the gap carry
"confidence": "partial". Capture with a larger buffer (tcpdump -B) or fewer drops on the capture host.`},
	{decode.FramingError, "a frame size or header made no sense; the decoder resynchronised",
		`A size below 8 or above --max-frame, or a header that cannot be Kafka's. The frame is skipped and the
decoder looks for the next plausible one. Often the sign of a non-Kafka protocol on a watched port.`},
	{decode.TLSConnection, "the connection is TLS and its secrets are not known: counted, not decoded",
		`The client's first byte opened a TLS record. Without its secrets the connection cannot be audited. Give
kwatch a key log (--tls-keylog FILE, as written by SSLKEYLOGFILE or Go's tls.Config.KeyLogWriter), or
capture a plaintext listener.`},
	{decode.SASLRawTokens, "raw SASL tokens after a SaslHandshake v0 were skipped, never decoded or printed",
		`After SaslHandshake v0 the client sends SASL tokens without Kafka framing until authentication ends.
kwatch skips them by length and never decodes, keeps or prints them.`},
	{decode.UnmatchedResponse, "a response whose correlation ID matches no request kwatch saw",
		`The request was not captured (a gap, a mid-stream join, a one-way capture) or was beyond the bound of
requests awaiting an answer. Broker rules (SPEC.md 3.5) cannot judge such a response.`},
	{decode.TruncatedPacket, "the capture's snap length cut the packet",
		`The packet was captured short (tcpdump -s). Its lost bytes are known in number and place, so framing
goes on; a field that was cut is not judged.`},
	{decode.TLSDecryptFailed, "a TLS record failed to decrypt with the key log's secrets: nothing after it was decoded",
		`The key log (--tls-keylog, or a Decryption Secrets Block in the capture) has secrets for the connection,
but a record did not authenticate with them: a key log from another run or host, an edited line, or bytes
that are not the connection's records. kwatch never decodes garbage, so the rest of the connection is not
audited. Check that the key log was written by the clients of this capture (see docs/tls.md).`},
}

// CoverageDocs returns the explanation of every coverage event.
func CoverageDocs() []CoverageDoc { return append([]CoverageDoc(nil), coverageDocs...) }

// LookupCoverage finds a coverage event's explanation by its name.
func LookupCoverage(name string) (CoverageDoc, bool) {
	for _, d := range coverageDocs {
		if d.Event.String() == name {
			return d, true
		}
	}
	return CoverageDoc{}, false
}
