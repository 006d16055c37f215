package pcapgen

import "github.com/twmb/franz-go/pkg/kmsg"

// Body helpers for the APIs kwatch audits. Each returns a kmsg body with
// kmsg's defaults and the version set, ready for EncodeRequest,
// EncodeResponse or Session; adjust other fields on the result.

// APIVersions is an ApiVersions request (key 18); v3+ carries the client
// software name and version.
func APIVersions(version int16, softwareName, softwareVersion string) *kmsg.ApiVersionsRequest {
	r := kmsg.NewPtrApiVersionsRequest()
	r.Version = version
	r.ClientSoftwareName = softwareName
	r.ClientSoftwareVersion = softwareVersion
	return r
}

// APIVersionsResponse is a successful ApiVersions response listing the
// identity APIs and Produce, Fetch and Metadata.
func APIVersionsResponse(version int16) *kmsg.ApiVersionsResponse {
	r := kmsg.NewPtrApiVersionsResponse()
	r.Version = version
	for _, k := range [][3]int16{{0, 3, 13}, {1, 4, 18}, {3, 0, 13}, {17, 0, 1}, {18, 0, 5}, {68, 0, 1}, {71, 0, 0}, {72, 0, 0}, {76, 0, 1}, {88, 0, 1}} {
		r.ApiKeys = append(r.ApiKeys, kmsg.ApiVersionsResponseApiKey{ApiKey: k[0], MinVersion: k[1], MaxVersion: k[2]})
	}
	return r
}

// Metadata is a Metadata request (key 3) for the named topics (none = all
// topics on versions that allow it).
func Metadata(version int16, topics ...string) *kmsg.MetadataRequest {
	r := kmsg.NewPtrMetadataRequest()
	r.Version = version
	for _, t := range topics {
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = Ptr(t)
		r.Topics = append(r.Topics, mt)
	}
	if len(topics) == 0 && version >= 1 {
		r.Topics = nil // null = all topics
	}
	return r
}

// MetadataResponse is a Metadata response naming one broker.
func MetadataResponse(version int16, brokerHost string, brokerPort int32) *kmsg.MetadataResponse {
	r := kmsg.NewPtrMetadataResponse()
	r.Version = version
	b := kmsg.NewMetadataResponseBroker()
	b.NodeID = 1
	b.Host = brokerHost
	b.Port = brokerPort
	r.Brokers = append(r.Brokers, b)
	r.ClusterID = Ptr("kwatch-test-cluster")
	r.ControllerID = 1
	return r
}

// SaslHandshake is a SaslHandshake request (key 17). After a v0 handshake the
// client sends raw tokens (see SASLToken); v1 wraps them in SaslAuthenticate.
func SaslHandshake(version int16, mechanism string) *kmsg.SASLHandshakeRequest {
	r := kmsg.NewPtrSASLHandshakeRequest()
	r.Version = version
	r.Mechanism = mechanism
	return r
}

// SaslHandshakeResponse is a successful SaslHandshake response.
func SaslHandshakeResponse(version int16, mechanisms ...string) *kmsg.SASLHandshakeResponse {
	r := kmsg.NewPtrSASLHandshakeResponse()
	r.Version = version
	r.SupportedMechanisms = mechanisms
	return r
}

// heartbeatInterval is what every group heartbeat response asks for, in
// milliseconds.
const heartbeatInterval = 5000

// ConsumerGroupHeartbeat is a ConsumerGroupHeartbeat request (key 68). Epoch
// 0 joins, -1 leaves, -2 leaves statically.
func ConsumerGroupHeartbeat(version int16, group, memberID string, epoch int32) *kmsg.ConsumerGroupHeartbeatRequest {
	r := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	r.Version, r.Group, r.MemberID, r.MemberEpoch = version, group, memberID, epoch
	if epoch == 0 {
		r.RebalanceTimeoutMillis = 300000
		r.SubscribedTopicNames = []string{"orders"}
		r.ServerAssignor = Ptr("uniform")
		r.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	}
	return r
}

// ConsumerGroupHeartbeatResponse answers a ConsumerGroupHeartbeat; memberID
// nil writes a null member ID.
func ConsumerGroupHeartbeatResponse(version int16, errorCode int16, memberID *string, epoch int32) *kmsg.ConsumerGroupHeartbeatResponse {
	r := kmsg.NewPtrConsumerGroupHeartbeatResponse()
	r.Version, r.ErrorCode, r.MemberID, r.MemberEpoch = version, errorCode, memberID, epoch
	r.HeartbeatIntervalMillis = heartbeatInterval
	return r
}

// ShareGroupHeartbeat is a ShareGroupHeartbeat request (key 76).
func ShareGroupHeartbeat(version int16, group, memberID string, epoch int32) *kmsg.ShareGroupHeartbeatRequest {
	r := kmsg.NewPtrShareGroupHeartbeatRequest()
	r.Version, r.GroupID, r.MemberID, r.MemberEpoch = version, group, memberID, epoch
	if epoch == 0 {
		r.SubscribedTopicNames = []string{"orders"}
	}
	return r
}

// ShareGroupHeartbeatResponse answers a ShareGroupHeartbeat.
func ShareGroupHeartbeatResponse(version int16, errorCode int16, memberID *string, epoch int32) *kmsg.ShareGroupHeartbeatResponse {
	r := kmsg.NewPtrShareGroupHeartbeatResponse()
	r.Version, r.ErrorCode, r.MemberID, r.MemberEpoch = version, errorCode, memberID, epoch
	r.HeartbeatIntervalMillis = heartbeatInterval
	return r
}

// StreamsGroupHeartbeat is a StreamsGroupHeartbeat request (key 88).
func StreamsGroupHeartbeat(version int16, group, memberID string, epoch int32) *kmsg.StreamsGroupHeartbeatRequest {
	r := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	r.Version, r.Group, r.MemberID, r.MemberEpoch = version, group, memberID, epoch
	if epoch == 0 {
		r.RebalanceTimeoutMillis = 300000
		r.ProcessID = Ptr("process-1")
	}
	return r
}

// StreamsGroupHeartbeatResponse answers a StreamsGroupHeartbeat (its member
// ID is not nullable).
func StreamsGroupHeartbeatResponse(version int16, errorCode int16, memberID string, epoch int32) *kmsg.StreamsGroupHeartbeatResponse {
	r := kmsg.NewPtrStreamsGroupHeartbeatResponse()
	r.Version, r.ErrorCode, r.MemberID, r.MemberEpoch = version, errorCode, memberID, epoch
	r.HeartbeatIntervalMillis = heartbeatInterval
	return r
}

// GetTelemetrySubscriptions is a GetTelemetrySubscriptions request (key 71,
// v0) with body ClientInstanceId id (zero = ask the broker for one).
func GetTelemetrySubscriptions(id [16]byte) *kmsg.GetTelemetrySubscriptionsRequest {
	r := kmsg.NewPtrGetTelemetrySubscriptionsRequest()
	r.ClientInstanceID = id
	return r
}

// GetTelemetrySubscriptionsResponse answers with error code and assigned ID.
func GetTelemetrySubscriptionsResponse(errorCode int16, id [16]byte, subscriptionID int32) *kmsg.GetTelemetrySubscriptionsResponse {
	r := kmsg.NewPtrGetTelemetrySubscriptionsResponse()
	r.ErrorCode = errorCode
	r.ClientInstanceID = id
	r.SubscriptionID = subscriptionID
	r.AcceptedCompressionTypes = []int8{0}
	r.PushIntervalMillis = 30000
	r.TelemetryMaxBytes = 1 << 20
	r.RequestedMetrics = []string{"org.apache.kafka."}
	return r
}

// PushTelemetry is a PushTelemetry request (key 72, v0) with a small opaque
// metrics payload.
func PushTelemetry(id [16]byte, subscriptionID int32) *kmsg.PushTelemetryRequest {
	r := kmsg.NewPtrPushTelemetryRequest()
	r.ClientInstanceID = id
	r.SubscriptionID = subscriptionID
	r.Metrics = []byte("otlp-metrics")
	return r
}

// PushTelemetryResponse answers a PushTelemetry.
func PushTelemetryResponse(errorCode int16) *kmsg.PushTelemetryResponse {
	r := kmsg.NewPtrPushTelemetryResponse()
	r.ErrorCode = errorCode
	return r
}

// Produce is a Produce request (key 0) writing records (opaque record-batch
// bytes) to partition 0 of topic. From v13 topics go by ID: topicID is used
// there and topic elsewhere.
func Produce(version int16, topic string, topicID [16]byte, records []byte) *kmsg.ProduceRequest {
	r := kmsg.NewPtrProduceRequest()
	r.Version = version
	r.Acks = -1
	r.TimeoutMillis = 30000
	t := kmsg.NewProduceRequestTopic()
	t.Topic = topic
	t.TopicID = topicID
	p := kmsg.NewProduceRequestTopicPartition()
	p.Records = records
	t.Partitions = append(t.Partitions, p)
	r.Topics = append(r.Topics, t)
	return r
}

// ProduceResponse acknowledges a Produce of partition 0 of topic.
func ProduceResponse(version int16, topic string, topicID [16]byte) *kmsg.ProduceResponse {
	r := kmsg.NewPtrProduceResponse()
	r.Version = version
	t := kmsg.NewProduceResponseTopic()
	t.Topic = topic
	t.TopicID = topicID
	t.Partitions = append(t.Partitions, kmsg.NewProduceResponseTopicPartition())
	r.Topics = append(r.Topics, t)
	return r
}

// Fetch is a Fetch request (key 1) for partition 0 of topic (by ID from v13).
func Fetch(version int16, topic string, topicID [16]byte) *kmsg.FetchRequest {
	r := kmsg.NewPtrFetchRequest()
	r.Version = version
	r.MaxWaitMillis = 500
	r.MinBytes = 1
	r.MaxBytes = 50 << 20
	t := kmsg.NewFetchRequestTopic()
	t.Topic = topic
	t.TopicID = topicID
	p := kmsg.NewFetchRequestTopicPartition()
	p.PartitionMaxBytes = 1 << 20
	t.Partitions = append(t.Partitions, p)
	r.Topics = append(r.Topics, t)
	return r
}

// FetchResponse returns records (opaque record-batch bytes) for partition 0
// of topic.
func FetchResponse(version int16, topic string, topicID [16]byte, records []byte) *kmsg.FetchResponse {
	r := kmsg.NewPtrFetchResponse()
	r.Version = version
	t := kmsg.NewFetchResponseTopic()
	t.Topic = topic
	t.TopicID = topicID
	p := kmsg.NewFetchResponseTopicPartition()
	p.HighWatermark = 1000
	p.RecordBatches = records
	t.Partitions = append(t.Partitions, p)
	r.Topics = append(r.Topics, t)
	return r
}
