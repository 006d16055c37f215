package decode

// ConsumerGroupHeartbeat, versions 0-1 (KIP-848; member IDs per KIP-1082).
// Request: group, member ID, member epoch. Response: error code, member ID
// (nullable), member epoch.
var consumerGroupHeartbeat = bodyCodec{
	request:  &layout{fields: []field{fGroup, fMemberID, fMemberEpoch}},
	response: &layout{fields: []field{fThrottle, fErrorCode, fErrorMessage, fNullableMemberID, fMemberEpoch}},
}
