package decode

// GetTelemetrySubscriptions, version 0 (KIP-714). Request: the body's
// ClientInstanceId. Response: error code, ClientInstanceId (the
// broker-assigned ID), SubscriptionId.

import "github.com/twmb/franz-go/pkg/kmsg"

func getTelemetrySubscriptionsRequest(ver int16, body []byte, out *Body) error {
	m := kmsg.NewPtrGetTelemetrySubscriptionsRequest()
	if err := readBody(m, clampVersion(keyGetTelemetrySubscriptions, ver), body); err != nil {
		return err
	}
	out.TelemetryInstanceID, out.HasTelemetryInstanceID = m.ClientInstanceID, true
	return nil
}

func getTelemetrySubscriptionsResponse(ver int16, body []byte, out *Body) error {
	m := kmsg.NewPtrGetTelemetrySubscriptionsResponse()
	if err := readBody(m, clampVersion(keyGetTelemetrySubscriptions, ver), body); err != nil {
		return err
	}
	out.ErrorCode, out.HasErrorCode = m.ErrorCode, true
	out.TelemetryInstanceID, out.HasTelemetryInstanceID = m.ClientInstanceID, true
	out.SubscriptionID, out.HasSubscriptionID = m.SubscriptionID, true
	return nil
}
