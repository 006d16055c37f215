package pcapgen

// Demo scenarios: the captures cmd/gencaps writes, also handy as known-good
// inputs in tests.

// DemoInstanceID is the modern demo client's instance ID.
func DemoInstanceID() [16]byte { return MustUUID("7b1c2f1e-6a8d-4c3b-9e5f-0a1b2c3d4e5f") }

// DemoLegacyTelemetryID is the telemetry ID the broker assigns the legacy
// demo client.
func DemoLegacyTelemetryID() [16]byte { return MustUUID("3f2e1d0c-4b5a-4978-8695-a4b3c2d1e0f0") }

// DemoModern writes a KIP-1313 client on one connection into c: every
// request carries the header instance ID; ApiVersions v4 names the software;
// Metadata; a ConsumerGroupHeartbeat join, heartbeat and leave whose member
// ID is the Java string of the instance ID; telemetry whose body IDs equal
// the header ID (aligned). The broker answers as a conforming one.
func DemoModern(c *Capture, o ConnOptions) *Conn {
	id := DemoInstanceID()
	cn := c.Conn(o)
	s := cn.Session(RequestHeader{ClientID: Ptr("orders-app"), InstanceID: &id, CorrelationID: 1})
	s.RoundTrip(APIVersions(4, "apache-kafka-java", "4.2.0"), APIVersionsResponse(4))
	s.RoundTrip(Metadata(12, "orders"), MetadataResponse(12, cn.Broker().Addr().String(), int32(cn.Broker().Port())))
	member := JavaString(id)
	s.RoundTrip(ConsumerGroupHeartbeat(1, "orders-group", member, 0), ConsumerGroupHeartbeatResponse(1, 0, &member, 1))
	s.RoundTrip(GetTelemetrySubscriptions(id), GetTelemetrySubscriptionsResponse(0, [16]byte{}, 1))
	s.RoundTrip(PushTelemetry(id, 1), PushTelemetryResponse(0))
	s.RoundTrip(ConsumerGroupHeartbeat(1, "orders-group", member, 1), ConsumerGroupHeartbeatResponse(1, 0, &member, 1))
	s.RoundTrip(ConsumerGroupHeartbeat(1, "orders-group", member, -1), ConsumerGroupHeartbeatResponse(1, 0, &member, -1))
	cn.Close()
	return cn
}

// DemoLegacy writes a pre-KIP-1313 client: no header instance IDs, the
// legacy telemetry flow (the broker assigns DemoLegacyTelemetryID and the
// client pushes with it), and a ConsumerGroupHeartbeat v0 join with an empty
// member ID that the broker fills in.
func DemoLegacy(c *Capture, o ConnOptions) *Conn {
	tid := DemoLegacyTelemetryID()
	cn := c.Conn(o)
	s := cn.Session(RequestHeader{ClientID: Ptr("legacy-app"), CorrelationID: 1})
	s.RoundTrip(APIVersions(3, "librdkafka", "2.3.0"), APIVersionsResponse(3))
	s.RoundTrip(Metadata(9, "orders"), MetadataResponse(9, cn.Broker().Addr().String(), int32(cn.Broker().Port())))
	s.RoundTrip(GetTelemetrySubscriptions([16]byte{}), GetTelemetrySubscriptionsResponse(0, tid, 7))
	s.RoundTrip(PushTelemetry(tid, 7), PushTelemetryResponse(0))
	assigned := "broker-assigned-member-0001"
	s.RoundTrip(ConsumerGroupHeartbeat(0, "legacy-group", "", 0), ConsumerGroupHeartbeatResponse(0, 0, &assigned, 1))
	s.RoundTrip(ConsumerGroupHeartbeat(0, "legacy-group", assigned, 1), ConsumerGroupHeartbeatResponse(0, 0, &assigned, 1))
	cn.Close()
	return cn
}
