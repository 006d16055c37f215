package decode

import "testing"

// APIName spells names as Kafka's message schemas do, not as kmsg does.
func TestAPIName(t *testing.T) {
	tests := []struct {
		key  int16
		want string
	}{
		{0, "Produce"},
		{3, "Metadata"},
		{4, "LeaderAndIsr"},
		{17, "SaslHandshake"},
		{18, "ApiVersions"},
		{22, "InitProducerId"},
		{29, "DescribeAcls"},
		{36, "SaslAuthenticate"},
		{45, "AlterPartitionReassignments"},
		{46, "ListPartitionReassignments"},
		{50, "DescribeUserScramCredentials"},
		{67, "AllocateProducerIds"},
		{68, "ConsumerGroupHeartbeat"},
		{71, "GetTelemetrySubscriptions"},
	}
	for _, tt := range tests {
		if got := APIName(tt.key); got != tt.want {
			t.Errorf("APIName(%d) = %q, want %q", tt.key, got, tt.want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = APIName(17) }); n != 0 {
		t.Errorf("APIName allocates %v times", n)
	}
}

// An APIKey names itself as APIName does and knows the keys SPEC.md
// section 1 decodes, and among them the group heartbeats.
func TestAPIKey(t *testing.T) {
	tests := []struct {
		name                string
		key                 APIKey
		want                string
		heartbeat, identity bool
	}{
		{"produce", 0, "Produce", false, false},
		{"metadata", KeyMetadata, "Metadata", false, false},
		{"sasl handshake", KeySASLHandshake, "SaslHandshake", false, true},
		{"api versions", KeyAPIVersions, "ApiVersions", false, true},
		{"offset delete", KeyOffsetDelete, "OffsetDelete", false, false},
		{"consumer heartbeat", KeyConsumerGroupHeartbeat, "ConsumerGroupHeartbeat", true, true},
		{"get telemetry", KeyGetTelemetrySubscriptions, "GetTelemetrySubscriptions", false, true},
		{"push telemetry", KeyPushTelemetry, "PushTelemetry", false, true},
		{"share heartbeat", KeyShareGroupHeartbeat, "ShareGroupHeartbeat", true, true},
		{"streams heartbeat", KeyStreamsGroupHeartbeat, "StreamsGroupHeartbeat", true, true},
		{"negative", -1, "Unknown", false, false},
		{"past the table", 30000, "Unknown", false, false},
	}
	for _, tt := range tests {
		if got := tt.key.String(); got != tt.want {
			t.Errorf("%s: String() = %q, want %q", tt.name, got, tt.want)
		}
		if got := tt.key.IsGroupHeartbeat(); got != tt.heartbeat {
			t.Errorf("%s: IsGroupHeartbeat() = %v", tt.name, got)
		}
		if got := tt.key.HasIdentityBody(); got != tt.identity {
			t.Errorf("%s: HasIdentityBody() = %v", tt.name, got)
		}
	}
}
