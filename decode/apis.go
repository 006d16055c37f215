package decode

import (
	"strings"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// apiInfo is what the decoder knows about one API key, taken from kmsg's
// generated message specs.
type apiInfo struct {
	known bool
	// name is Kafka's name for the API (see APIName).
	name string
	// maxVersion is kmsg's highest version for the key.
	maxVersion int16
	// flexible[v] reports whether request (and response) version v uses
	// the flexible encoding, for v in 0..maxVersion.
	flexible []bool
}

// versionSlack is how far above kmsg's highest version a request version
// is still accepted: brokers and clients newer than our kmsg copy exist.
const versionSlack = 2

// apiTable holds what kmsg says of each API key, worked out the first time
// the key is looked up: building all of it takes kmsg.RequestForKey for
// every key, ~500 allocations and 0.9 ms of every process's start, when a
// capture uses a handful of keys. An entry is immutable once done.
var apiTable [kmsg.MaxKey + 1]apiEntry

type apiEntry struct {
	// ready is set once info is: the per-frame check is one load, where
	// once.Do with its closure cost about ten instructions a look-up, two
	// or three look-ups a request.
	ready atomic.Bool
	once  sync.Once
	info  apiInfo
}

// apiInfoFor asks kmsg about key; kmsg.RequestForKey allocates, so it must
// never be called per frame.
func apiInfoFor(key int16) apiInfo {
	req := kmsg.RequestForKey(key)
	if req == nil {
		return apiInfo{}
	}
	max := req.MaxVersion()
	info := apiInfo{known: true, name: kafkaSpelling.Replace(kmsg.NameForKey(key)), maxVersion: max, flexible: make([]bool, max+1)}
	for v := int16(0); v <= max; v++ {
		req.SetVersion(v)
		info.flexible[v] = req.IsFlexible()
	}
	return info
}

// lookupAPI returns the table entry for key, or nil for keys kmsg does not know.
func lookupAPI(key int16) *apiInfo {
	if key < 0 || int(key) >= len(apiTable) {
		return nil
	}
	e := &apiTable[key]
	if !e.ready.Load() {
		e.load(key)
	}
	if !e.info.known {
		return nil
	}
	return &e.info
}

// load works out e's info, once whatever the goroutines asking.
func (e *apiEntry) load(key int16) {
	e.once.Do(func() {
		e.info = apiInfoFor(key)
		e.ready.Store(true)
	})
}

// versionOK reports whether v is a version kwatch accepts for the API.
func (a *apiInfo) versionOK(v int16) bool {
	return v >= 0 && v <= a.maxVersion+versionSlack
}

// isFlexible reports whether version v of the API is flexible. Versions
// above kmsg's maximum are flexible when the maximum is.
func (a *apiInfo) isFlexible(v int16) bool {
	if v < 0 {
		return false
	}
	if v > a.maxVersion {
		return a.flexible[a.maxVersion]
	}
	return a.flexible[v]
}

// APIKey is a Kafka API key (the request header's api_key). Its String is
// Kafka's name for the API. The named keys are every key kwatch treats
// specially: the decoder's framing exceptions and the identity bodies of
// SPEC.md section 1. kwatch has its own type rather than kmsg.Key because
// kmsg spells names its own way (SASLHandshake for Kafka's SaslHandshake,
// see kafkaSpelling) and every output uses Kafka's.
type APIKey int16

// API keys kwatch names.
const (
	KeyMetadata                  APIKey = 3
	KeyControlledShutdown        APIKey = 7
	KeySASLHandshake             APIKey = 17
	KeyAPIVersions               APIKey = 18
	KeySASLAuthenticate          APIKey = 36
	KeyOffsetDelete              APIKey = 47
	KeyConsumerGroupHeartbeat    APIKey = 68
	KeyGetTelemetrySubscriptions APIKey = 71
	KeyPushTelemetry             APIKey = 72
	KeyShareGroupHeartbeat       APIKey = 76
	KeyStreamsGroupHeartbeat     APIKey = 88
)

// String returns Kafka's name for the key (SaslHandshake, InitProducerId),
// or kmsg's answer ("Unknown") for keys it does not know. It does not
// allocate.
func (k APIKey) String() string { return APIName(int16(k)) }

// IsGroupHeartbeat reports whether k is one of the group heartbeats whose
// member IDs SPEC.md 3.4 judges (consumer, share and streams groups).
func (k APIKey) IsGroupHeartbeat() bool {
	return k == KeyConsumerGroupHeartbeat || k == KeyShareGroupHeartbeat || k == KeyStreamsGroupHeartbeat
}

// HasIdentityBody reports whether the decoder reads k's request or
// response body for identity fields (SPEC.md section 1; body.go's table).
func (k APIKey) HasIdentityBody() bool {
	c := codecFor(int16(k))
	return c.request != nil || c.response != nil
}

// The decoder's internals read api_key off the wire as an int16; these are
// the same keys in that spelling (the values are the constants above).
const (
	keyMetadata                  = int16(KeyMetadata)
	keyControlledShutdown        = int16(KeyControlledShutdown)
	keySASLHandshake             = int16(KeySASLHandshake)
	keyAPIVersions               = int16(KeyAPIVersions)
	keySASLAuthenticate          = int16(KeySASLAuthenticate)
	keyConsumerGroupHeartbeat    = int16(KeyConsumerGroupHeartbeat)
	keyGetTelemetrySubscriptions = int16(KeyGetTelemetrySubscriptions)
	keyPushTelemetry             = int16(KeyPushTelemetry)
	keyShareGroupHeartbeat       = int16(KeyShareGroupHeartbeat)
	keyStreamsGroupHeartbeat     = int16(KeyStreamsGroupHeartbeat)
)

// RequestHeaderVersion returns the request header version (0, 1 or 2) that
// version ver of API key uses, and false for keys kmsg does not know.
// v2 for flexible versions, v1 otherwise, v0 only for ControlledShutdown v0.
func RequestHeaderVersion(key, ver int16) (int8, bool) {
	a := lookupAPI(key)
	if a == nil {
		return 0, false
	}
	req, _ := a.headerVersions(key, ver)
	return req, true
}

// headerVersions returns RequestHeaderVersion and ResponseHeaderVersion for
// a known key's a, for a caller that has looked a up already: the request
// decoder, which keeps both with the request.
func (a *apiInfo) headerVersions(key, ver int16) (req, resp int8) {
	switch {
	case key == keyControlledShutdown && ver == 0:
		return 0, 0
	case !a.isFlexible(ver):
		return 1, 0
	case key == keyAPIVersions:
		return 2, 0
	}
	return 2, 1
}

// ResponseHeaderVersion returns the response header version (0 or 1) that
// answers version ver of API key: v1 when the version is flexible, except
// ApiVersions, whose responses always use v0 (a client must be able to
// read the answer before it knows what the broker supports).
func ResponseHeaderVersion(key, ver int16) int8 {
	a := lookupAPI(key)
	if a == nil {
		return 0
	}
	_, resp := a.headerVersions(key, ver)
	return resp
}

// kafkaSpelling turns kmsg's names into Kafka's own (its message schemas,
// protocol guide and Wireshark): kmsg capitalizes initialisms
// (SASLHandshake, InitProducerID, DescribeACLs), Kafka does not.
var kafkaSpelling = strings.NewReplacer("SASL", "Sasl", "ACLs", "Acls", "ISR", "Isr", "SCRAM", "Scram", "ProducerID", "ProducerId",
	"AlterPartitionAssignments", "AlterPartitionReassignments") // kmsg drops the "Re"

// APIName returns Kafka's name for an API key (SaslHandshake,
// InitProducerId), or kmsg's answer for keys it does not know. It returns a
// string built once and does not allocate.
func APIName(key int16) string {
	if a := lookupAPI(key); a != nil {
		return a.name
	}
	return kmsg.NameForKey(key)
}

// clampVersion maps a version above kmsg's newest to the newest, so that a
// body from a newer peer is read with the closest layout kmsg knows.
func clampVersion(key, ver int16) int16 {
	if a := lookupAPI(key); a != nil && ver > a.maxVersion {
		return a.maxVersion
	}
	return ver
}
