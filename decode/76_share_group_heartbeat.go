package decode

// ShareGroupHeartbeat, versions 0-1 (KIP-932). Request: group, member ID,
// member epoch. Response: error code, member ID (nullable), member epoch.
// The layouts are ConsumerGroupHeartbeat's.
var shareGroupHeartbeat = consumerGroupHeartbeat
