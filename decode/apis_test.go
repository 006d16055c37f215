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
