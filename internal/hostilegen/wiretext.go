package hostilegen

import (
	"unicode/utf8"

	"github.com/kwatch/kwatch/internal/pcapgen"
)

// WireText holds one of every class of text that must never reach a
// terminal raw: C0 controls (ESC with a colour, BEL, CR LF forging a report
// line, an OSC 8 hyperlink), DEL, a C1 CSI and NEL, the bidirectional
// override and isolate, and invalid UTF-8.
const WireText = "evil\x1b[31mred\x07\r\nERROR forged-rule\x1b]8;;http://x\x1b\\link\x7f\u009b2J\u0085\u202eabc\u2066\xff\xfe"

// WireTextCapture writes a conversation whose client ID, software name and
// version, group and member ID are all WireText, with a finding on the
// member ID (member-id-not-uuid) so that finding lines carry it too.
func WireTextCapture(path string) error {
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(pcapgen.ConnOptions{})
	cid := WireText
	cn.Send(pcapgen.EncodeRequest(pcapgen.RequestHeader{APIKey: 18, APIVersion: 3, CorrelationID: 1, ClientID: &cid},
		pcapgen.APIVersions(3, WireText, WireText)))
	cn.Reply(pcapgen.EncodeResponse(1, 3, pcapgen.APIVersionsResponse(3)))
	cn.Send(pcapgen.EncodeRequest(pcapgen.RequestHeader{APIKey: 68, APIVersion: 1, CorrelationID: 2, ClientID: &cid},
		pcapgen.ConsumerGroupHeartbeat(1, WireText, WireText, 0)))
	mid := WireText
	cn.Reply(pcapgen.EncodeResponse(2, 1, pcapgen.ConsumerGroupHeartbeatResponse(1, 0, &mid, 1)))
	other := "other-" + WireText
	cn.Send(pcapgen.EncodeRequest(pcapgen.RequestHeader{APIKey: 3, APIVersion: 12, CorrelationID: 3, ClientID: &other},
		pcapgen.Metadata(12)))
	cn.Close()
	return c.WriteFile(path)
}

// TerminalUnsafe returns the first byte sequence of out that a terminal
// would act on: a control character other than newline (and tab), DEL, a
// C1 control, a bidirectional control or invalid UTF-8.
func TerminalUnsafe(out string) (string, bool) {
	for i := 0; i < len(out); {
		r, size := utf8.DecodeRuneInString(out[i:])
		switch {
		case r == utf8.RuneError && size == 1,
			r < 0x20 && r != '\n' && r != '\t', r == 0x7f,
			r >= 0x80 && r <= 0x9f,
			r == 0x061c, r == 0x200e, r == 0x200f,
			r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			return out[max(0, i-20):min(len(out), i+20)], true
		}
		i += size
	}
	return "", false
}

// FindingsHeavy writes the findings-heavy workload with requests requests:
// bench's packet-heavy traffic (200 connections, small Produce and Fetch,
// 5% of writes split, a few retransmissions) from clients that send the
// instance ID on a connection's first request only, so that under the seed
// profile every later request is an instance-id-dropped.
func FindingsHeavy(path string, requests int) (int64, error) {
	return pcapgen.WriteBulkFile(path, pcapgen.BulkOptions{Requests: requests, MTU: 1500, Connections: 200, PayloadSize: 145,
		SplitFraction: 0.05, RetransmitFraction: 0.002, Seed: 3, Compression: pcapgen.CompressionSnappy, InstanceFirstOnly: true})
}
