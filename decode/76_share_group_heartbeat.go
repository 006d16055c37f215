package decode

// ShareGroupHeartbeat, versions 0-1 (KIP-932). Request: group, member ID,
// member epoch. Response: error code, member ID (nullable), member epoch.

import "github.com/twmb/franz-go/pkg/kmsg"

func shareGroupHeartbeatRequest(ver int16, body []byte, out *Body) error {
	m := kmsg.NewPtrShareGroupHeartbeatRequest()
	if err := readBody(m, clampVersion(keyShareGroupHeartbeat, ver), body); err != nil {
		return err
	}
	out.Group, out.MemberID, out.HasMemberID, out.MemberEpoch = m.GroupID, m.MemberID, true, m.MemberEpoch
	return nil
}

func shareGroupHeartbeatResponse(ver int16, body []byte, out *Body) error {
	m := kmsg.NewPtrShareGroupHeartbeatResponse()
	if err := readBody(m, clampVersion(keyShareGroupHeartbeat, ver), body); err != nil {
		return err
	}
	out.ErrorCode, out.HasErrorCode = m.ErrorCode, true
	out.MemberID, out.HasMemberID = nullableString(m.MemberID)
	out.MemberEpoch = m.MemberEpoch
	return nil
}
