package output

import (
	"strconv"

	"github.com/kwatch/kwatch/audit"
	"github.com/kwatch/kwatch/decode"
)

// appendText renders one line a person reads, as tshark would print it:
// where it was captured, the connection and direction, then per kind the
// coverage event or the PDU's header, request fields and body fields.
func appendText(b []byte, ev *decode.Event, names Namer) []byte {
	b = appendTime(b, ev.Time)
	b = append(b, ' ')
	capture, frame := frameOf(ev.Frame, names)
	if capture != "" {
		b = append(b, audit.PlainText(capture)...)
	}
	b = append(b, '#')
	b = strconv.AppendUint(b, frame, 10)
	b = append(b, ' ')
	b = ev.Conn.Client.AppendTo(b)
	switch ev.Kind {
	case decode.KindRequest:
		b = append(b, " > "...)
		b = ev.Conn.Broker.AppendTo(b)
		b = append(b, " request  "...)
	case decode.KindResponse:
		b = append(b, " < "...)
		b = ev.Conn.Broker.AppendTo(b)
		b = append(b, " response "...)
	default:
		b = append(b, " - "...)
		b = ev.Conn.Broker.AppendTo(b)
		return appendTextCoverage(b, ev)
	}
	b = appendTextHeader(b, ev)
	if ev.Body.Decoded {
		b = appendTextBody(b, ev)
	}
	if ev.Body.BodyError {
		b = append(b, " body=undecodable"...)
	}
	if ev.Partial {
		b = append(b, " partial"...)
	}
	return appendTextTLS(b, ev)
}

// appendTextCoverage renders a coverage event after its connection.
func appendTextCoverage(b []byte, ev *decode.Event) []byte {
	b = append(b, " event "...)
	b = append(b, ev.Coverage.String()...)
	if ev.Detail != "" {
		b = append(b, ": "...)
		b = append(b, ev.Detail...)
	}
	if ev.Bytes != 0 {
		b = append(b, " bytes="...)
		b = strconv.AppendInt(b, ev.Bytes, 10)
	}
	return appendTextTLS(b, ev)
}

// appendTextTLS marks what was decrypted with the key log's secrets.
func appendTextTLS(b []byte, ev *decode.Event) []byte {
	if ev.Decrypted {
		b = append(b, " tls"...)
	}
	return b
}

// appendTextHeader renders a PDU's header: the API, its version, the
// header version and correlation ID, and a request's client and instance
// IDs.
func appendTextHeader(b []byte, ev *decode.Event) []byte {
	b = append(b, ev.APIKey.String()...)
	b = append(b, '(')
	b = strconv.AppendInt(b, int64(ev.APIKey), 10)
	b = append(b, ") v"...)
	b = strconv.AppendInt(b, int64(ev.APIVersion), 10)
	b = append(b, " hdr"...)
	b = strconv.AppendInt(b, int64(ev.HeaderVersion), 10)
	b = append(b, " corr="...)
	b = strconv.AppendInt(b, int64(ev.CorrelationID), 10)
	if ev.Kind != decode.KindRequest {
		return b
	}
	b = append(b, " client_id="...)
	if ev.ClientIDNull {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendQuote(b, string(ev.ClientID))
	}
	b = append(b, " instance="...)
	switch {
	case ev.TagProblem != decode.TagOK:
		b = append(b, "malformed("...)
		b = append(b, ev.TagProblem.String()...)
		b = append(b, ')')
	case ev.HasInstanceID && !ev.InstanceID.IsZero():
		b = appendUUID(b, ev.InstanceID)
	default:
		b = append(b, '-')
	}
	return b
}

// appendTextBody renders the identity fields of a decoded body.
func appendTextBody(b []byte, ev *decode.Event) []byte {
	bd := &ev.Body
	if bd.Group != "" {
		b = append(b, " group="...)
		b = strconv.AppendQuote(b, bd.Group)
	}
	if bd.HasMemberID || ev.APIKey.IsGroupHeartbeat() && ev.Kind == decode.KindRequest {
		b = append(b, " member_id="...)
		b = strconv.AppendQuote(b, bd.MemberID)
		b = append(b, " epoch="...)
		b = strconv.AppendInt(b, int64(bd.MemberEpoch), 10)
	}
	if bd.HasTelemetryInstanceID {
		b = append(b, " telemetry_id="...)
		b = appendUUID(b, bd.TelemetryInstanceID)
	}
	if bd.HasSubscriptionID {
		b = append(b, " subscription_id="...)
		b = strconv.AppendInt(b, int64(bd.SubscriptionID), 10)
	}
	if bd.ClientSoftwareName != "" || bd.ClientSoftwareVersion != "" {
		b = append(b, " software="...)
		b = strconv.AppendQuote(b, bd.ClientSoftwareName+"/"+bd.ClientSoftwareVersion)
	}
	if bd.HasErrorCode {
		b = append(b, " error="...)
		b = append(b, audit.ErrorName(bd.ErrorCode)...)
		b = append(b, '(')
		b = strconv.AppendInt(b, int64(bd.ErrorCode), 10)
		b = append(b, ')')
	}
	return b
}
