package output

import (
	"strconv"

	"github.com/kwatch/kwatch/audit"
	"github.com/kwatch/kwatch/decode"
)

// appendJSON renders the NDJSON object of SPEC.md section 5 for kwatch
// dump: where it was captured and the connection, then per kind the
// coverage event or the PDU's header, request fields and body fields.
func appendJSON(b []byte, ev *decode.Event, names Namer) []byte {
	b = append(b, `{"kind":`...)
	b = audit.AppendJSONString(b, ev.Kind.String())
	b = append(b, `,"time":"`...)
	b = appendTime(b, ev.Time)
	b = append(b, '"')
	capture, frame := frameOf(ev.Frame, names)
	if capture != "" {
		b = append(b, `,"capture":`...)
		b = audit.AppendJSONString(b, capture)
	}
	b = append(b, `,"frame":`...)
	b = strconv.AppendUint(b, frame, 10)
	if ev.Kind == decode.KindCoverage {
		b = append(b, `,"event":`...)
		b = audit.AppendJSONString(b, ev.Coverage.String())
	}
	b = append(b, `,"conn":{"client":"`...)
	b = ev.Conn.Client.AppendTo(b)
	b = append(b, `","broker":"`...)
	b = ev.Conn.Broker.AppendTo(b)
	b = append(b, `"}`...)
	if ev.Kind == decode.KindCoverage {
		return appendJSONCoverage(b, ev)
	}
	b = appendJSONHeader(b, ev, names)
	if ev.Body.Decoded {
		b = appendJSONBody(b, ev)
	}
	if ev.Body.BodyError {
		b = append(b, `,"body_error":true`...)
	}
	if ev.Partial {
		b = append(b, `,"partial":true`...)
	}
	return appendJSONEnd(b, ev)
}

// appendJSONCoverage renders a coverage event's fields after its
// connection.
func appendJSONCoverage(b []byte, ev *decode.Event) []byte {
	if ev.Detail != "" {
		b = append(b, `,"detail":`...)
		b = audit.AppendJSONString(b, ev.Detail)
	}
	if ev.Bytes != 0 {
		b = append(b, `,"bytes":`...)
		b = strconv.AppendInt(b, ev.Bytes, 10)
	}
	return appendJSONEnd(b, ev)
}

// appendJSONEnd marks what was decrypted and closes the object.
func appendJSONEnd(b []byte, ev *decode.Event) []byte {
	if ev.Decrypted {
		b = append(b, `,"decrypted":true`...)
	}
	return append(b, '}')
}

// appendJSONHeader renders a PDU's header, a request's client and instance
// IDs, and a response's request frame.
func appendJSONHeader(b []byte, ev *decode.Event, names Namer) []byte {
	b = append(b, `,"api":`...)
	b = audit.AppendJSONString(b, ev.APIKey.String())
	b = append(b, `,"api_key":`...)
	b = strconv.AppendInt(b, int64(ev.APIKey), 10)
	b = append(b, `,"api_version":`...)
	b = strconv.AppendInt(b, int64(ev.APIVersion), 10)
	b = append(b, `,"header_version":`...)
	b = strconv.AppendInt(b, int64(ev.HeaderVersion), 10)
	b = append(b, `,"correlation_id":`...)
	b = strconv.AppendInt(b, int64(ev.CorrelationID), 10)
	b = append(b, `,"size":`...)
	b = strconv.AppendInt(b, int64(ev.Size), 10)
	if ev.Kind != decode.KindRequest {
		_, reqFrame := frameOf(ev.RequestFrame, names)
		b = append(b, `,"request_frame":`...)
		return strconv.AppendUint(b, reqFrame, 10)
	}
	b = append(b, `,"client_id":`...)
	if ev.ClientIDNull {
		b = append(b, "null"...)
	} else {
		// The conversion does not escape: the compiler reuses the bytes.
		b = audit.AppendJSONString(b, string(ev.ClientID))
	}
	if ev.TagProblem != decode.TagOK {
		b = append(b, `,"instance_id_malformed":`...)
		b = audit.AppendJSONString(b, ev.TagProblem.String())
	} else if ev.HasInstanceID && !ev.InstanceID.IsZero() {
		b = append(b, `,"instance_id":"`...)
		b = appendUUID(b, ev.InstanceID)
		b = append(b, '"')
	}
	return b
}

// appendJSONBody renders the identity fields of a decoded body.
func appendJSONBody(b []byte, ev *decode.Event) []byte {
	bd := &ev.Body
	heartbeatRequest := ev.APIKey.IsGroupHeartbeat() && ev.Kind == decode.KindRequest
	if heartbeatRequest {
		b = append(b, `,"group":`...)
		b = audit.AppendJSONString(b, bd.Group)
	}
	if bd.HasMemberID || heartbeatRequest {
		b = append(b, `,"member_id":`...)
		if bd.HasMemberID || ev.Kind == decode.KindRequest {
			b = audit.AppendJSONString(b, bd.MemberID)
		} else {
			b = append(b, "null"...)
		}
	}
	if ev.APIKey.IsGroupHeartbeat() {
		b = append(b, `,"member_epoch":`...)
		b = strconv.AppendInt(b, int64(bd.MemberEpoch), 10)
	}
	if bd.HasTelemetryInstanceID {
		b = append(b, `,"telemetry_instance_id":"`...)
		b = appendUUID(b, bd.TelemetryInstanceID)
		b = append(b, '"')
	}
	if bd.HasSubscriptionID {
		b = append(b, `,"subscription_id":`...)
		b = strconv.AppendInt(b, int64(bd.SubscriptionID), 10)
	}
	if bd.HasErrorCode {
		b = append(b, `,"error_code":`...)
		b = strconv.AppendInt(b, int64(bd.ErrorCode), 10)
	}
	if bd.ClientSoftwareName != "" || bd.ClientSoftwareVersion != "" {
		b = append(b, `,"client_software_name":`...)
		b = audit.AppendJSONString(b, bd.ClientSoftwareName)
		b = append(b, `,"client_software_version":`...)
		b = audit.AppendJSONString(b, bd.ClientSoftwareVersion)
	}
	return b
}
