package decode

// StreamsGroupHeartbeat, versions 0-1 (KIP-1071). Request: group, member
// ID, member epoch. Response: error code, member ID, member epoch. kmsg
// v1.15.1 declares the response's member ID non-nullable, so HasMemberID
// is always true for a decoded response.
var streamsGroupHeartbeat = bodyCodec{
	request:  consumerGroupHeartbeat.request,
	response: &layout{fields: []field{fThrottle, fErrorCode, fErrorMessage, fMemberID, fMemberEpoch}},
}
