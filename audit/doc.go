// Package audit owns kwatch's identity rules (SPEC.md sections 2-5): it
// turns decode.Events into Findings and builds the Report (totals, one row
// per client, the findings) with its JSON and text forms. The rule table
// is rules.go. The Auditor has two parts that meet through Observation
// (observation.go): the per-connection part (checks.go, state.go) follows
// each connection and judges what it shows alone, dispatching identity
// bodies through apiChecks; the per-instance part (instance.go, claims.go,
// legacy.go) keeps the rows, member IDs across connections and member-ID
// claims, judges what spans connections, and attributes every finding.
//
// Concurrency: Auditor.Event is called from one goroutine, in capture order
// (events of different connections may interleave). Snapshot may be called
// from any goroutine: a mutex guards the state (Options.SingleGoroutine
// drops it when nothing runs concurrently). OnFinding is called outside the
// lock, on Event's goroutine.
//
// Buffers: an Event (and its ClientID bytes) is valid only during the Event
// call; the Auditor copies every string it keeps. Reports and Findings are
// owned by the caller.
//
// Memory is bounded: per-connection state does not grow with the number of
// requests (a fixed table of pending requests, capped sets of judged member
// IDs); closed connections are dropped after Options.ClosedGrace of packet
// time; report rows are capped by Options.MaxInstances (least recently seen
// evicted and counted) and kept findings by Options.MaxFindings and, in
// estimated bytes, Options.MaxFindingBytes (all are counted).
//
// # Decisions
//
// Where SPEC.md is silent, the audit decides as follows (copy into README):
//
//  1. 3.1 "first request" is the first v2-header request whose tagged fields
//     are well formed. A request with a tag problem fires
//     instance-id-malformed and neither sets nor breaks the state. A present
//     but zero instance ID is absent.
//  2. instance-id-reserved fires once per instance ID (ONE_UUID), when its
//     report row is created; instance-id-shared once per instance ID, when
//     the ID is seen from a second client IP (host, not port) or with a
//     second distinct non-empty first client ID of a connection. A row that
//     is evicted and seen again may report them again.
//  3. Confidence "partial": the event has Partial set, or a stream gap was
//     seen earlier on the connection, or the connection was not observed from
//     its start and the rule depends on its first request (instance-id-
//     dropped/-changed/-late/-repeated, client-id-*, member-id-changed,
//     telemetry-id-not-adopted).
//  4. 3.2: the client-ID "first request" is the first v1+ header request. A
//     later empty client ID counts as null (no finding). client-id-changed
//     and client-id-missing-first fire once per offending request; after a
//     null or empty first client ID every later request that sets one is
//     client-id-missing-first only (never also client-id-changed).
//     client-id-repeated fires once per connection at its end (or at Finish)
//     when the connection ever sent a non-zero header instance ID and
//     repeated a non-empty client ID; "observed" gives the request count and
//     the client ID bytes of those requests. Its API fields are "" / -1 (it
//     is about the connection, not one PDU) and its frame is the ConnEnd
//     event's (at Finish: the connection's last frame).
//  5. 3.3: GetTelemetrySubscriptions rows are exclusive. PushTelemetry: zero
//     body ID -> telemetry-id-zero-push only; body ID != non-zero header ID
//     -> telemetry-id-mismatch; otherwise telemetry-id-not-adopted when a
//     broker-assigned B is known and the body ID differs. B is known from a
//     legacy first GetTelemetrySubscriptions answered NONE on the same
//     connection or on another connection of the same instance row.
//     broker-telemetry-id-echo judges only requests of rows 2 and 3 (R != 0
//     and valid); an invalid request answered with an ID is
//     broker-accepted-invalid's business.
//  6. 3.4: epoch 0 = join, -1 and -2 = leave. An empty member ID on a
//     heartbeat that is neither join nor leave gives no finding. Member IDs
//     are followed per client: the instance row when the connection has a
//     header instance ID (so across connections), else the connection.
//     ghost-member: a join with B while the client's last join (A != B) has
//     no response yet (or never will: connection lost) or got an error.
//     member-id-changed: a non-empty member ID different from the client's
//     last one in the group, unless it is a ghost retry or an ID the broker
//     assigned to this client in a heartbeat response.
//  7. member-id-collision: claimants are instance IDs, or client host:port
//     without one. An instance is alive while any connection registered
//     with its row is open; a claimant without one while the connection it
//     last used the member ID on is open. Once per (group, member ID,
//     second claimant); a claimant that was gone when another took the ID
//     collides when it comes back while that one is alive. Broker-assigned
//     IDs are included (two clients using one is a collision too).
//  8. Member-ID encodings: strict base64 (non-zero trailing bits are not a
//     UUID); a 22- or 24-char string without '+' or '/' is read in the
//     URL-safe alphabet. member-id-not-v4 also fires for encodings other than
//     Java's, and for the reserved all-zero and ONE_UUID values.
//     member-id-misaligned compares with the request's header instance ID,
//     else the connection's first; a member ID that is not a UUID at all is
//     also misaligned.
//  9. 3.5: broker-accepted-invalid is judged for the error rules of 3.1,
//     3.3, instance-id-missing-first and member-id-empty at or above the
//     required version, when the response body was decoded and has a
//     top-level error code != 42; its "kip" is the answered rule's KIP. One
//     finding per response. Requests awaiting a response are kept in a
//     16-slot table per connection (oldest overwritten).
//  10. accepted-2026: header version 3 comes from the headerV3 table
//     (OffsetDelete v1+), else the decoder's HeaderVersion. Only v3 requests
//     feed the instance-ID consistency state (v2 requests still register
//     instance rows and are checked for malformed tags). instance-id-
//     repeated fires once per connection, at the first repeat. A connection
//     not observed from its start (or with a gap before its first v3
//     request) is "identity unobservable": counted in totals, never
//     instance-id-missing-first; an ID seen later becomes its ID silently.
//  11. Report rows: a connection's row is its first instance row; a
//     connection without instance ID gets a legacy row keyed (client IP,
//     first client ID). Rows are evicted least recently seen first.
//  12. Options.MemberIDRequiredFrom: 0 = default (1); negative = every
//     version.
package audit
