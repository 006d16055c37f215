package audit

import (
	"fmt"
	"strings"

	"github.com/kwatch/kwatch/internal/enum"
)

// Severity ranks a finding. The zero value is no severity.
type Severity uint8

const (
	SeverityInfo Severity = iota + 1
	SeverityWarn
	SeverityError
)

var severityNames = []string{SeverityInfo: "info", SeverityWarn: "warn", SeverityError: "error"}

func (s Severity) String() string { return enum.Name(severityNames, s, "unknown") }

// MarshalText writes the severity's name ("info", "warn", "error").
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// ParseSeverity reads "info", "warn" (or "warning") or "error". The CLI's
// --fail-on "never" is the caller's business: it means no threshold.
func ParseSeverity(s string) (Severity, error) {
	switch strings.ToLower(s) {
	case "info":
		return SeverityInfo, nil
	case "warn", "warning":
		return SeverityWarn, nil
	case "error":
		return SeverityError, nil
	}
	return 0, fmt.Errorf("audit: unknown severity %q (want info, warn or error)", s)
}

// Profile selects which reading of KIP-1313 is audited (SPEC.md section 4).
type Profile uint8

const (
	// ProfileSeed follows the seed texts as written (default).
	ProfileSeed Profile = iota
	// ProfileAccepted2026 follows the revision accepted in Aug 2026:
	// instance ID in header v3, on the first request only.
	ProfileAccepted2026
)

var profileNames = []string{ProfileSeed: "seed", ProfileAccepted2026: "accepted-2026"}

func (p Profile) String() string { return enum.Name(profileNames, p, "seed") }

// ParseProfile reads "seed" or "accepted-2026".
func ParseProfile(s string) (Profile, error) {
	switch s {
	case "", "seed":
		return ProfileSeed, nil
	case "accepted-2026":
		return ProfileAccepted2026, nil
	}
	return 0, fmt.Errorf("audit: unknown profile %q (want seed or accepted-2026)", s)
}

// Rule describes one check. Rules() returns them in table order, which is
// also the order findings of the same frame are sorted in.
type Rule struct {
	ID       string
	Severity Severity // default severity; some rules state when it differs
	KIP      string
	Section  string // SPEC.md section
	Summary  string // one line
	// Fix says in one line what to change, and where: the text an
	// operator takes to the client's (or broker's) owner.
	Fix string
	// Explanation is the long text of `kwatch rules RULE`: what the KIP
	// requires, what a conforming broker does, an example, the fix.
	Explanation string
	// Profiles lists the profiles the rule runs under.
	Profiles []Profile
	// FirstRequest: the rule judges a request against the connection's
	// first request, so a finding on a connection joined mid-stream is
	// "partial" (SPEC.md 2).
	FirstRequest bool
	// BrokerRejects: a conforming broker answers a request that breaks the
	// rule at severity error with INVALID_REQUEST, so an answer without it
	// is broker-accepted-invalid (SPEC.md 3.5).
	BrokerRejects bool
}

// AboutBroker reports whether the rule judges the broker (SPEC.md 3.5)
// rather than the client.
func (r *Rule) AboutBroker() bool { return r.Section == "3.5" }

// ruleID indexes the rule table; findings carry it so that sorting and
// per-rule counters need no string lookups.
type ruleID uint8

const (
	rInstanceDropped ruleID = iota
	rInstanceChanged
	rInstanceLate
	rInstanceMalformed
	rInstanceReserved
	rInstanceShared
	rInstanceMissingFirst
	rInstanceRepeated
	rClientIDChanged
	rClientIDMissingFirst
	rClientIDRepeated
	rTelemetryRequestedWithHeader
	rTelemetryMismatch
	rTelemetryZeroPush
	rTelemetryNotAdopted
	rMemberEmpty
	rLeaveWithoutMember
	rMemberChanged
	rGhostMember
	rMemberCollision
	rMemberNotUUID
	rMemberEncoding
	rMemberNotV4
	rMemberMisaligned
	rMemberAlignmentEncoding
	rBrokerAcceptedInvalid
	rBrokerGeneratedMember
	rBrokerTelemetryEcho
	rBrokerTelemetryMissing
	numRules
)

var (
	both     = []Profile{ProfileSeed, ProfileAccepted2026}
	seedOnly = []Profile{ProfileSeed}
	accOnly  = []Profile{ProfileAccepted2026}
)

// ruleTable is the one table of rules (STYLE.md habit 7), indexed by ruleID.
var ruleTable = [numRules]Rule{
	rInstanceDropped: {
		ID: "instance-id-dropped", Severity: SeverityError, KIP: "KIP-1313", Section: "3.1", Profiles: seedOnly, FirstRequest: true, BrokerRejects: true,
		Summary: "the connection's first v2-header request carried a client instance ID; a later v2-header request carries none",
		Fix:     "send the same header instance ID on every v2-header request of a connection (a client library fix)",
		Explanation: `KIP-1313 puts the client instance ID (a UUID) in tag 0 of the v2 request header and requires a
connection to be consistent: once its first v2-header request specifies an instance ID, every later
v2-header request must specify the same value. Omitting it and sending the all-zero UUID mean the same.
A conforming broker rejects the offending request with INVALID_REQUEST (42).

Example: Metadata v12 with header instance ID AAECAwQFBgcICQoLDA0ODw, then Produce v9 on the same
connection with no tag 0 in its header.

Fix: set the instance ID once per client instance and put it in every v2 request header the client
sends, on every connection (a per-client field copied into every header, not a per-request option).`,
	},
	rInstanceChanged: {
		ID: "instance-id-changed", Severity: SeverityError, KIP: "KIP-1313", Section: "3.1", Profiles: both, FirstRequest: true, BrokerRejects: true,
		Summary: "a later request carries a non-zero client instance ID different from the connection's first",
		Fix:     "create the instance ID once per process and send it unchanged on every request of the connection",
		Explanation: `KIP-1313: the instance ID of a connection's first request is cached by the broker; every later
request must carry the same value. A conforming broker rejects a request with a different non-zero ID
with INVALID_REQUEST (42).

Example: ApiVersions v4 with instance ID AAECAwQFBgcICQoLDA0ODw, then Metadata v12 with
Dw4NDAsKCQgHBgUEAwIBAA on the same connection.

Fix: generate the instance ID once when the client is constructed and never regenerate it; connection
pools shared by two client objects must not mix their headers.`,
	},
	rInstanceLate: {
		ID: "instance-id-late", Severity: SeverityError, KIP: "KIP-1313", Section: "3.1", Profiles: seedOnly, FirstRequest: true, BrokerRejects: true,
		Summary: "the connection's first v2-header request carried no instance ID; a later one carries one",
		Fix:     "send the instance ID from the connection's first v2-header request on, or on none of them",
		Explanation: `KIP-1313: if a connection's first v2-header request does not specify an instance ID (absent or
zero), no later request on it may specify one. A conforming broker rejects the later request with
INVALID_REQUEST (42).

Example: ApiVersions v4 without tag 0, then Metadata v12 with instance ID AAECAwQFBgcICQoLDA0ODw.

Fix: decide before the first request of a connection whether the client sends instance IDs; a client
that learns its ID late must open new connections to use it.`,
	},
	rInstanceMalformed: {
		ID: "instance-id-malformed", Severity: SeverityError, KIP: "KIP-1313", Section: "3.1", Profiles: both, BrokerRejects: true,
		Summary: "the request header's tagged fields are malformed (tag 0 size != 16, duplicate or descending tags, overrun)",
		Fix:     "write tag 0 as exactly 16 bytes, with tags strictly ascending and within the header",
		Explanation: `Request header v2 ends with tagged fields: a count, then per field a tag, a size and the bytes; tags
strictly ascending. KIP-1313 defines tag 0 as ClientInstanceId, a 16-byte UUID. A header whose tag 0 is
not 16 bytes, whose tags repeat or descend, or whose tagged fields overrun the frame cannot be parsed
by a conforming broker: it rejects the request. kwatch does not let such a request set or break the
connection's instance-ID state.

Example: a header with tagged fields 01 00 08 <8 bytes> (tag 0 of size 8).

Fix: write tag 0 as uvarint 0, uvarint 16, then the 16 UUID bytes; write tags in ascending order once each.`,
	},
	rInstanceReserved: {
		ID: "instance-id-reserved", Severity: SeverityWarn, KIP: "KIP-1313", Section: "3.1", Profiles: both,
		Summary: "the client instance ID is ONE_UUID (00000000-0000-0000-0000-000000000001), which Kafka reserves",
		Fix:     "generate the instance ID as a random version-4 UUID; ONE_UUID is reserved",
		Explanation: `Kafka reserves the all-zero UUID (meaning "no ID") and ONE_UUID (...0001). Kafka's Uuid.randomUuid()
never returns them. A client using ONE_UUID as its instance ID is almost certainly hard-coded or
uninitialised, and every such client shares the same "unique" ID.

Fix: generate the ID with a version-4 random UUID generator and reject the reserved values.`,
	},
	rInstanceShared: {
		ID: "instance-id-shared", Severity: SeverityWarn, KIP: "KIP-1313", Section: "3.1", Profiles: both,
		Summary: "one instance ID is used from two client hosts or with two client IDs: two processes share a UUID",
		Fix:     "give every client process its own random instance ID (never copy one through configuration or a fixed seed)",
		Explanation: `A client instance ID identifies one client instance. When the same ID appears from two different
client IP addresses, or on connections whose first client IDs differ, two processes (or two client
objects) share it: brokers, telemetry and group coordinators will conflate them.

Example: AAECAwQFBgcICQoLDA0ODw from 10.0.0.5 and from 10.0.0.6; or with client IDs "orders" and "billing".

Fix: generate the ID at client construction at run time; never bake it into configuration, images or
templates.`,
	},
	rInstanceMissingFirst: {
		ID: "instance-id-missing-first", Severity: SeverityError, KIP: "KIP-1313", Section: "4", Profiles: accOnly, BrokerRejects: true,
		Summary: "(accepted-2026) the connection's first v3-header request carries no instance ID",
		Fix:     "send the instance ID in the first v3-header request of every connection",
		Explanation: `Under the revision accepted in Aug 2026 the instance ID moves to request header v3 and is required on
the first request of a connection, then omitted, like the client ID. A connection whose first v3
request has none breaks that requirement. A connection whose first request was not captured is
"identity unobservable" and is never reported on this ground.

Fix: send the instance ID in the header of the first v3 request of every connection.`,
	},
	rInstanceRepeated: {
		ID: "instance-id-repeated", Severity: SeverityInfo, KIP: "KIP-1313", Section: "4", Profiles: accOnly, FirstRequest: true,
		Summary: "(accepted-2026) a later request repeats the instance ID already sent on the connection's first request",
		Fix:     "omit the instance ID after a connection's first request",
		Explanation: `Under the revision accepted in Aug 2026 the instance ID is sent on the first request of a connection
only; repeating it on later requests wastes 18 header bytes per request. Reported once per connection.

Fix: omit tag 0 after the first request of a connection.`,
	},
	rClientIDChanged: {
		ID: "client-id-changed", Severity: SeverityWarn, KIP: "KIP-1313", Section: "3.2", Profiles: both, FirstRequest: true,
		Summary: "a later request carries a non-null client ID different from the first request's; the broker attributes it to the first",
		Fix:     "send the client ID on a connection's first request only; to change it, open a new connection",
		Explanation: `KIP-1313: post-KIP brokers cache the client ID of a connection's first request (header v1 or higher)
and ignore the client ID of every later request. A client that changes its client ID mid-connection
(for quotas, logging or ACL attribution) is attributed to the first one.

Example: ApiVersions with client ID "orders", then Produce with client ID "orders-retry".

Fix: open a new connection when the client ID must change; send null after the first request.`,
	},
	rClientIDMissingFirst: {
		ID: "client-id-missing-first", Severity: SeverityWarn, KIP: "KIP-1313", Section: "3.2", Profiles: both, FirstRequest: true,
		Summary: "the first request's client ID is null or empty but a later request sets one",
		Fix:     "send the client ID on the connection's first request",
		Explanation: `KIP-1313: the broker keeps the client ID of the connection's first request (header v1 or higher).
When that one is null or empty, every later client ID is ignored, and the connection stays anonymous
for quotas, logs and metrics. Reported once per offending request.

Example: ApiVersions with a null client ID, then Metadata with client ID "orders".

Fix: put the client ID on the first request of every connection.`,
	},
	rClientIDRepeated: {
		ID: "client-id-repeated", Severity: SeverityInfo, KIP: "KIP-1313", Section: "3.2", Profiles: both, FirstRequest: true,
		Summary: "a client that sends header instance IDs still repeats its client ID on later requests (bytes that null would save)",
		Fix:     "send a null client ID after the connection's first request (the broker keeps the first)",
		Explanation: `KIP-1313 lets a client send its client ID only on the first request of a connection and null
afterwards. A client that sends header instance IDs claims KIP-1313 support and could save these
bytes. Reported once per connection when it ends, with the number of requests and the bytes saved.
For clients without instance IDs this is only a statistic in the totals.

Fix: after the first request of a connection, send a null client ID (length -1).`,
	},
	rTelemetryRequestedWithHeader: {
		ID: "telemetry-id-requested-with-header", Severity: SeverityError, KIP: "KIP-1313", Section: "3.3", Profiles: both, BrokerRejects: true,
		Summary: "GetTelemetrySubscriptions with a header instance ID but a zero body ClientInstanceId",
		Fix:     "send the header instance ID as GetTelemetrySubscriptions' ClientInstanceId",
		Explanation: `KIP-1313 changes KIP-714: a client that sends an instance ID H in its request headers generates its
own telemetry ID, which is H. Asking the broker for one (body ClientInstanceId = 0) while sending H is
not allowed: a conforming broker answers INVALID_REQUEST (42).

Example: GetTelemetrySubscriptions v0, header tag 0 = H, body ClientInstanceId = 0.

Fix: put H in the body's ClientInstanceId.`,
	},
	rTelemetryMismatch: {
		ID: "telemetry-id-mismatch", Severity: SeverityError, KIP: "KIP-1313", Section: "3.3", Profiles: both, BrokerRejects: true,
		Summary: "a telemetry request's body ClientInstanceId differs from the non-zero header instance ID",
		Fix:     "use the header instance ID as the telemetry ClientInstanceId",
		Explanation: `KIP-1313: when the request header carries instance ID H, GetTelemetrySubscriptions and PushTelemetry
must carry H in the body too. A conforming broker answers GetTelemetrySubscriptions with R != H with
INVALID_REQUEST (42). Needs two non-zero IDs (a zero PushTelemetry ID is telemetry-id-zero-push).

Example: header tag 0 = AAECAwQFBgcICQoLDA0ODw, body ClientInstanceId = Dw4NDAsKCQgHBgUEAwIBAA.

Fix: use the header instance ID as the telemetry client instance ID.`,
	},
	rTelemetryZeroPush: {
		ID: "telemetry-id-zero-push", Severity: SeverityError, KIP: "KIP-714", Section: "3.3", Profiles: both, BrokerRejects: true,
		Summary: "PushTelemetry with a zero ClientInstanceId",
		Fix:     "push telemetry with the ClientInstanceId the client uses (the header instance ID, or the one the broker assigned)",
		Explanation: `KIP-714: PushTelemetry carries the client instance ID the client obtained (or, after KIP-1313,
generated). A zero ID identifies nobody; a conforming broker rejects it with INVALID_REQUEST (42).

Fix: push metrics only after GetTelemetrySubscriptions gave (or confirmed) a non-zero ID, and use it.`,
	},
	rTelemetryNotAdopted: {
		ID: "telemetry-id-not-adopted", Severity: SeverityWarn, KIP: "KIP-714", Section: "3.3", Profiles: both, FirstRequest: true,
		Summary: "after the broker assigned telemetry ID B, a later telemetry request of the same client uses another ID",
		Fix:     "use the ClientInstanceId the broker assigned on every later telemetry request",
		Explanation: `KIP-714 (legacy flow): a client without a header instance ID sends GetTelemetrySubscriptions with a
zero ClientInstanceId; the broker answers with an ID B, and the client must use B in every later
GetTelemetrySubscriptions and PushTelemetry. Using another ID splits the client's metrics.

Example: response ClientInstanceId = B, then PushTelemetry with ClientInstanceId = C != B.

Fix: store the ID from the first GetTelemetrySubscriptions response and reuse it.`,
	},
	rMemberEmpty: {
		ID: "member-id-empty", Severity: SeverityError, KIP: "KIP-1082", Section: "3.4", Profiles: both, BrokerRejects: true,
		Summary: "a group join (epoch 0) carries an empty member ID (info below the version that requires it)",
		Fix:     "generate the member ID in the client (a random UUID in Java's string form) before the first join",
		Explanation: `KIP-1082 makes the consumer generate its member ID (a UUID) before its first heartbeat so that the
join is idempotent. Apache Kafka brokers require it from ConsumerGroupHeartbeat v1 (the seed text
says v2; kwatch follows the broker, configurable); ShareGroupHeartbeat and StreamsGroupHeartbeat
require it from v0. At or above that version a conforming broker rejects an empty member ID with
INVALID_REQUEST (42); below it, the broker generates one (info).

Example: ConsumerGroupHeartbeat v1, GroupId "orders", MemberId "", MemberEpoch 0.

Fix: generate a version-4 UUID when the consumer is created (ideally the client instance ID) and send
its Java string form as the member ID from the first heartbeat on.`,
	},
	rLeaveWithoutMember: {
		ID: "leave-without-member-id", Severity: SeverityError, KIP: "KIP-1082", Section: "3.4", Profiles: both,
		Summary: "a leave heartbeat (epoch -1 or -2) carries an empty member ID; a ghost member stays until its session times out",
		Fix:     "leave with the member ID the client joined with, even when the join was never answered",
		Explanation: `KIP-1082's motivation: a consumer that closes before its join response arrives sends a leave without
a member ID; the broker answers UNKNOWN_MEMBER_ID and the member it created stays, holding partitions,
until the session timeout. Epoch -2 (static leave) is a leave too.

Example: ConsumerGroupHeartbeat, MemberId "", MemberEpoch -1.

Fix: generate the member ID before the join and send it on the leave.`,
	},
	rMemberChanged: {
		ID: "member-id-changed", Severity: SeverityWarn, KIP: "KIP-1082", Section: "3.4", Profiles: both, FirstRequest: true,
		Summary: "the same client uses a second member ID in the same group",
		Fix:     "keep one member ID for the life of the process, across leave, rejoin and fencing",
		Explanation: `KIP-1082: a member ID lives as long as the client process, across leave and rejoin and after being
fenced. A client (one connection, or one instance ID across connections) that switches to a new member
ID creates a new member while the old one lingers. Not reported when the new ID is one the broker
assigned (learned from a heartbeat response), nor for a ghost-member retry (reported as ghost-member).

Example: heartbeats with MemberId A, a leave with A, then a join with MemberId B.

Fix: keep the member ID for the lifetime of the consumer.`,
	},
	rGhostMember: {
		ID: "ghost-member", Severity: SeverityError, KIP: "KIP-1082", Section: "3.4", Profiles: both,
		Summary: "a join with member ID A got no response or an error, and the client retried the join with a different ID B",
		Fix:     "retry an unanswered or failed join with the same member ID",
		Explanation: `The non-idempotent join KIP-1082 exists to prevent: when the join with A was received by the
coordinator but its response was lost, retrying with B creates a second member; A stays as a ghost,
holding partitions until its session times out.

Example: join (epoch 0) with A, connection lost before the response, join with B on a new connection.

Fix: retry a join with the same member ID.`,
	},
	rMemberCollision: {
		ID: "member-id-collision", Severity: SeverityError, KIP: "KIP-1082", Section: "3.4", Profiles: both,
		Summary: "two different client instances alive at the same time use the same member ID in the same group",
		Fix:     "generate member IDs from a cryptographic random source, never from a clock-seeded generator",
		Explanation: `Member IDs must be unique: two consumers with one member ID fence each other and corrupt the
group's assignment. Usually a weak generator (librdkafka issue 5263: a PRNG seeded per second) or a
copied configuration. Clients are told apart by instance ID, or without one by client host:port.

Fix: generate member IDs with a cryptographic random version-4 UUID generator.`,
	},
	rMemberNotUUID: {
		ID: "member-id-not-uuid", Severity: SeverityWarn, KIP: "KIP-1082", Section: "3.4", Profiles: both,
		Summary: "the client-generated member ID decodes to 16 bytes in none of the known encodings",
		Fix:     "use a random UUID as the member ID",
		Explanation: `KIP-1082 asks for a UUID as member ID; brokers since KAFKA-19846-era releases validate it. kwatch
recognises Java's URL-safe base64 (22 chars), padded URL-safe base64, standard base64 (padded or not),
8-4-4-4-12 hex and 32-char hex. A member ID in none of them is not a UUID.

Fix: use a version-4 UUID in Java's string form (URL-safe base64 without padding).`,
	},
	rMemberEncoding: {
		ID: "member-id-encoding", Severity: SeverityInfo, KIP: "KIP-1082", Section: "3.4", Profiles: both,
		Summary: "the member ID is a UUID spelled in an encoding other than Java's (warn when it holds '+' or '/')",
		Fix:     "spell the member ID as Java's Uuid.toString() does: URL-safe base64 without padding",
		Explanation: `Java clients spell a UUID as URL-safe base64 without padding (22 chars). Other spellings work as
opaque strings but not as the UUID they encode; standard base64 with '+' or '/' broke share fetches on
brokers before KAFKA-19846 (warn). franz-go's kgo spells member IDs as padded URL-safe base64.

Fix: spell the member ID as base64.RawURLEncoding of the 16 bytes.`,
	},
	rMemberNotV4: {
		ID: "member-id-not-v4", Severity: SeverityInfo, KIP: "KIP-1082", Section: "3.4", Profiles: both,
		Summary: "the member ID's UUID is not version 4, or is reserved",
		Fix:     "generate the member ID as a random version-4 UUID",
		Explanation: `KIP-1082 recommends version-4 (random) UUIDs and avoiding reserved values (all zero, ONE_UUID).
Other versions (time based, name based) collide more easily across hosts.

Fix: use a version-4 UUID generator.`,
	},
	rMemberMisaligned: {
		ID: "member-id-misaligned", Severity: SeverityWarn, KIP: "KIP-1313", Section: "3.4", Profiles: both,
		Summary: "the member ID is not the Java string form of the connection's header instance ID",
		Fix:     "use the header instance ID as the member ID (KIP-1313)",
		Explanation: `KIP-1313: a client SHOULD use its client instance ID as its member ID (Java string form), so that one
UUID identifies the client everywhere. Needs a header instance ID on the connection.

Example: header instance ID AAECAwQFBgcICQoLDA0ODw, MemberId "f3Xc...".

Fix: use the instance ID's Java string as the member ID.`,
	},
	rMemberAlignmentEncoding: {
		ID: "member-id-alignment-encoding", Severity: SeverityInfo, KIP: "KIP-1313", Section: "3.4", Profiles: both,
		Summary: "the member ID holds the instance ID's 16 bytes but in another encoding: aligned in value, not in text",
		Fix:     "spell the member ID as the instance ID's Java string form",
		Explanation: `The member ID decodes to the same UUID as the header instance ID, but is not its Java string form
(for instance padded base64 or hex). Tools comparing IDs as text will not match them.

Fix: spell the member ID as base64.RawURLEncoding of the instance ID.`,
	},
	rBrokerAcceptedInvalid: {
		ID: "broker-accepted-invalid", Severity: SeverityWarn, KIP: "KIP-1313", Section: "3.5", Profiles: both,
		Summary: "a request a conforming broker rejects was answered without INVALID_REQUEST",
		Fix:     "upgrade the broker to a version that enforces the KIP (it then answers INVALID_REQUEST)",
		Explanation: `Requests that break a MUST (the error rules of 3.1 and 3.3, member-id-empty at or above the required
version) are rejected by a conforming broker with INVALID_REQUEST (42). Judged only where the response
has a top-level error code (ApiVersions, SaslHandshake, the group heartbeats, telemetry). The broker
predates the KIP or does not enforce it. The finding's KIP is that of the rule it answers.

Fix: upgrade the broker, and fix the client (see the answered rule).`,
	},
	rBrokerGeneratedMember: {
		ID: "broker-generated-member-id", Severity: SeverityWarn, KIP: "KIP-1082", Section: "3.5", Profiles: both,
		Summary: "a join with an empty member ID at or above the required version was answered with a broker-assigned member ID",
		Fix:     "upgrade the broker to one that requires a client-generated member ID at this version",
		Explanation: `At or above the version that requires client-generated member IDs a conforming broker rejects an
empty member ID; this one generated one (the pre-KIP-1082 behaviour).

Fix: upgrade the broker; fix the client (member-id-empty).`,
	},
	rBrokerTelemetryEcho: {
		ID: "broker-telemetry-id-echo", Severity: SeverityInfo, KIP: "KIP-714", Section: "3.5", Profiles: both,
		Summary: "GetTelemetrySubscriptions with a non-zero body ID was answered with a non-zero ID (KIP-714 says 0)",
		Fix:     "upgrade the broker: KIP-714 answers a request that carries its ID with a zero ID",
		Explanation: `KIP-714 (and the KIP-1313 table): when the client supplies its telemetry ID, the broker answers
ClientInstanceId = 0. Echoing an ID follows an earlier, superseded revision of KIP-1313.`,
	},
	rBrokerTelemetryMissing: {
		ID: "broker-telemetry-id-missing", Severity: SeverityError, KIP: "KIP-714", Section: "3.5", Profiles: both,
		Summary: "a legacy first GetTelemetrySubscriptions (body ID 0) was answered NONE with a zero ID",
		Fix:     "fix the broker: a first GetTelemetrySubscriptions must be answered with a new ID",
		Explanation: `KIP-714: a client without a header instance ID asks for a telemetry ID with ClientInstanceId = 0; a
conforming broker answers with a new non-zero ID B. A zero answer with no error leaves the client
without an ID.`,
	},
}

var ruleIndex = func() map[string]ruleID {
	m := make(map[string]ruleID, numRules)
	for i := range ruleTable {
		m[ruleTable[i].ID] = ruleID(i)
	}
	return m
}()

// Rules returns every rule, in table order.
func Rules() []Rule {
	out := make([]Rule, numRules)
	copy(out, ruleTable[:])
	return out
}

// LookupRule finds a rule by its ID.
func LookupRule(id string) (Rule, bool) {
	i, ok := ruleIndex[id]
	if !ok {
		return Rule{}, false
	}
	return ruleTable[i], true
}

func (r ruleID) rule() *Rule { return &ruleTable[r] }

func (r ruleID) runsUnder(p Profile) bool {
	for _, q := range ruleTable[r].Profiles {
		if q == p {
			return true
		}
	}
	return false
}
