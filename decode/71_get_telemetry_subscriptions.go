package decode

// GetTelemetrySubscriptions, version 0 (KIP-714). Request: the body's
// ClientInstanceId. Response: error code, ClientInstanceId (the
// broker-assigned ID), SubscriptionId.
var getTelemetrySubscriptions = bodyCodec{
	request:  &layout{fields: []field{fTelemetryID}},
	response: &layout{fields: []field{fThrottle, fErrorCode, fTelemetryID, fSubscriptionID}},
}
