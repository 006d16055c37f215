package decode

// PushTelemetry, version 0 (KIP-714). Request: ClientInstanceId and
// SubscriptionId (the metrics payload after them is counted down, never
// held). Response: error code.
var pushTelemetry = bodyCodec{
	request:  &layout{fields: []field{fTelemetryID, fSubscriptionID}},
	response: &layout{fields: []field{fThrottle, fErrorCode}},
}
