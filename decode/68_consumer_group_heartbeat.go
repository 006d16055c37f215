package decode

// ConsumerGroupHeartbeat, versions 0-1 (KIP-848; member IDs per KIP-1082).
// Request: group, member ID, member epoch. Response: error code, member ID
// (nullable), member epoch.

import "github.com/twmb/franz-go/pkg/kmsg"

func consumerGroupHeartbeatRequest(ver int16, body []byte, out *Body) error {
	m := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	if err := readBody(m, clampVersion(keyConsumerGroupHeartbeat, ver), body); err != nil {
		return err
	}
	out.Group, out.MemberID, out.HasMemberID, out.MemberEpoch = m.Group, m.MemberID, true, m.MemberEpoch
	return nil
}

func consumerGroupHeartbeatResponse(ver int16, body []byte, out *Body) error {
	m := kmsg.NewPtrConsumerGroupHeartbeatResponse()
	if err := readBody(m, clampVersion(keyConsumerGroupHeartbeat, ver), body); err != nil {
		return err
	}
	out.ErrorCode, out.HasErrorCode = m.ErrorCode, true
	out.MemberID, out.HasMemberID = nullableString(m.MemberID)
	out.MemberEpoch = m.MemberEpoch
	return nil
}
