package decode

// PushTelemetry, version 0 (KIP-714). Request: ClientInstanceId and
// SubscriptionId (the metrics payload is not kept). Response: error code.

import "github.com/twmb/franz-go/pkg/kmsg"

func pushTelemetryRequest(ver int16, body []byte, out *Body) error {
	m := kmsg.NewPtrPushTelemetryRequest()
	if err := readBody(m, clampVersion(keyPushTelemetry, ver), body); err != nil {
		return err
	}
	out.TelemetryInstanceID, out.HasTelemetryInstanceID = m.ClientInstanceID, true
	out.SubscriptionID, out.HasSubscriptionID = m.SubscriptionID, true
	return nil
}

func pushTelemetryResponse(ver int16, body []byte, out *Body) error {
	m := kmsg.NewPtrPushTelemetryResponse()
	if err := readBody(m, clampVersion(keyPushTelemetry, ver), body); err != nil {
		return err
	}
	out.ErrorCode, out.HasErrorCode = m.ErrorCode, true
	return nil
}
