package decode

// StreamsGroupHeartbeat, versions 0-1 (KIP-1071). Request: group, member
// ID, member epoch. Response: error code, member ID, member epoch. kmsg
// v1.15.1 declares the response's member ID non-nullable, so HasMemberID
// is always true for a decoded response.

import "github.com/twmb/franz-go/pkg/kmsg"

func streamsGroupHeartbeatRequest(ver int16, body []byte, out *Body) error {
	m := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	if err := readBody(m, clampVersion(keyStreamsGroupHeartbeat, ver), body); err != nil {
		return err
	}
	out.Group, out.MemberID, out.HasMemberID, out.MemberEpoch = m.Group, m.MemberID, true, m.MemberEpoch
	return nil
}

func streamsGroupHeartbeatResponse(ver int16, body []byte, out *Body) error {
	m := kmsg.NewPtrStreamsGroupHeartbeatResponse()
	if err := readBody(m, clampVersion(keyStreamsGroupHeartbeat, ver), body); err != nil {
		return err
	}
	out.ErrorCode, out.HasErrorCode = m.ErrorCode, true
	out.MemberID, out.HasMemberID = m.MemberID, true
	out.MemberEpoch = m.MemberEpoch
	return nil
}
