//go:build e2e

package e2e

import (
	"encoding/base64"
	"encoding/hex"
	"maps"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// refRecording decodes the shared capture with the reference reader and
// attributes each connection to the client whose hooks saw its local port.
func refRecording(t *testing.T) (*recording, *refCapture, map[netip.AddrPort]*clientRun) {
	t.Helper()
	r := sharedRecording(t)
	owner := map[netip.AddrPort]*clientRun{}
	for _, c := range r.clients {
		_, _, locals, _ := c.hooks.snapshot()
		for a := range locals {
			if prev := owner[a]; prev != nil {
				t.Fatalf("local address %v claimed by %s and %s", a, prev.clientID, c.clientID)
			}
			owner[a] = c
		}
	}
	brokers := map[netip.AddrPort]bool{}
	// Brokers are whatever the clients connected to: every connection's
	// far end is a proxy, and no client port is ever a proxy port.
	rc, err := readCaptureWith(r.pcap, brokers)
	if err != nil {
		t.Fatalf("reference read: %v", err)
	}
	return r, rc, owner
}

// readCaptureWith learns the proxy addresses from the SYNs (the SYN goes to
// the broker), then decodes.
func readCaptureWith(path string, brokers map[netip.AddrPort]bool) (*refCapture, error) {
	syns, err := synTargets(path)
	if err != nil {
		return nil, err
	}
	maps.Copy(brokers, syns)
	return readCapture(path, brokers)
}

// TestHarness checks the recording itself: every connection is complete
// (handshake, FIN or RST both ways), belongs to exactly one client, decodes
// cleanly, and carries exactly the requests kgo's hooks counted.
func TestHarness(t *testing.T) {
	r, rc, owner := refRecording(t)
	t.Logf("scenario took %v, %d packets, %d connections, %d PDUs", r.took, rc.packets, len(rc.conns), len(rc.pdus))
	if rc.packets != r.packets {
		t.Errorf("capture holds %d packets, recorder wrote %d", rc.packets, r.packets)
	}
	for a, c := range rc.conns {
		if !c.synSeen || !c.finSeen[0] || !c.finSeen[1] {
			t.Errorf("connection %v: SYN %v, FIN/RST client %v broker %v", a, c.synSeen, c.finSeen[0], c.finSeen[1])
		}
		if owner[a] == nil {
			t.Errorf("connection %v belongs to no client", a)
		}
		for i, b := range c.buf {
			if len(b) != 0 {
				t.Errorf("connection %v direction %d: %d bytes of an incomplete frame", a, i, len(b))
			}
		}
	}
	for _, c := range r.clients {
		t.Run(c.clientID, func(t *testing.T) {
			writes, reads, _, failed := c.hooks.snapshot()
			if failed != 0 {
				t.Errorf("%d writes failed part way; counts cannot be compared", failed)
			}
			decReq, decResp := map[int16]int{}, map[int16]int{}
			for _, p := range rc.pdus {
				if owner[p.client] != c {
					continue
				}
				if p.request {
					decReq[p.key]++
				} else {
					decResp[p.key]++
				}
			}
			if !maps.Equal(decReq, writes) {
				t.Errorf("requests decoded %v, kgo wrote %v", decReq, writes)
			}
			// A response can be on the wire yet unread by kgo (closed
			// while a fetch was in flight), never the reverse.
			for k, n := range reads {
				if decResp[k] < n {
					t.Errorf("%s: %d responses decoded, kgo read %d", kmsg.NameForKey(k), decResp[k], n)
				}
			}
		})
	}
}

// TestKgoFacts checks the source-study facts of FINDINGS.md on the traffic.
func TestKgoFacts(t *testing.T) {
	r, rc, owner := refRecording(t)
	byClient := map[*clientRun][]refPDU{}
	for _, p := range rc.pdus {
		byClient[owner[p.client]] = append(byClient[owner[p.client]], p)
	}
	for _, c := range r.clients {
		t.Run(c.clientID, func(t *testing.T) {
			pdus := byClient[c]
			if len(pdus) == 0 {
				t.Fatal("no traffic")
			}
			checkHeaders(t, c, pdus)
			checkTelemetry(t, c, pdus)
			switch c.kind {
			case kind848:
				check848(t, pdus)
			case kindProbe:
				checkProbe(t, c, pdus)
			}
		})
	}
}

// checkHeaders: kmsg's RequestFormatter (api.go, AppendRequest) writes the
// client ID on every request, a v2 header for every flexible version and
// always zero header tags, so no ClientInstanceId (tag 0) ever; kgo opens
// every connection with ApiVersions naming itself (broker.go,
// brokerCxn.requestAPIVersions).
func checkHeaders(t *testing.T, c *clientRun, pdus []refPDU) {
	t.Helper()
	v1 := 0
	for _, p := range pdus {
		if !p.request {
			continue
		}
		if p.clientID == nil || *p.clientID != c.clientID {
			t.Errorf("frame %d %s: client ID %v, want %q on every request", p.frame, kmsg.NameForKey(p.key), p.clientID, c.clientID)
		}
		if p.hdrVer == 1 {
			v1++
		}
		if len(p.tags) != 0 {
			t.Errorf("frame %d %s: header tags %v, kgo sends none", p.frame, kmsg.NameForKey(p.key), slices.Collect(maps.Keys(p.tags)))
		}
		if p.connNumber == 1 {
			av, ok := p.req.(*kmsg.ApiVersionsRequest)
			if !ok {
				t.Errorf("frame %d: first request of the connection is %s, want ApiVersions", p.frame, kmsg.NameForKey(p.key))
				continue
			}
			if av.Version < 3 || av.ClientSoftwareName != "kgo" || av.ClientSoftwareVersion == "" {
				t.Errorf("frame %d: ApiVersions v%d software %q %q, want v3+ \"kgo\" and a version", p.frame, av.Version, av.ClientSoftwareName, av.ClientSoftwareVersion)
			}
		}
	}
	if v1 != 0 {
		t.Errorf("%d requests with a v1 header; against kfake kgo negotiates only flexible versions", v1)
	}
}

// checkTelemetry: kgo's pushMetrics (metrics_714.go) asks
// GetTelemetrySubscriptions with a zero body ID, adopts the ID kfake assigns
// (71_get_telemetry_subscriptions.go), and pushes with it, the last push
// Terminating on Close. DisableClientMetrics sends neither.
func checkTelemetry(t *testing.T, c *clientRun, pdus []refPDU) {
	t.Helper()
	var gets, pushes int
	var assigned [16]byte
	var lastPush *kmsg.PushTelemetryRequest
	for _, p := range pdus {
		switch v := p.req.(type) {
		case *kmsg.GetTelemetrySubscriptionsRequest:
			gets++
			if gets == 1 && v.ClientInstanceID != [16]byte{} {
				t.Errorf("frame %d: first GetTelemetrySubscriptions body ID %x, want zero", p.frame, v.ClientInstanceID)
			}
		case *kmsg.PushTelemetryRequest:
			pushes++
			lastPush = v
			if v.ClientInstanceID != assigned || assigned == [16]byte{} {
				t.Errorf("frame %d: PushTelemetry body ID %x, kfake assigned %x", p.frame, v.ClientInstanceID, assigned)
			}
		}
		switch v := p.resp.(type) {
		case *kmsg.GetTelemetrySubscriptionsResponse:
			if v.ErrorCode != 0 || v.ClientInstanceID == [16]byte{} {
				t.Errorf("frame %d: GetTelemetrySubscriptions answered error %d ID %x, want 0 and a non-zero ID", p.frame, v.ErrorCode, v.ClientInstanceID)
			}
			assigned = v.ClientInstanceID
		case *kmsg.PushTelemetryResponse:
			if v.ErrorCode != 0 {
				t.Errorf("frame %d: PushTelemetry answered %v", p.frame, kerr.ErrorForCode(v.ErrorCode))
			}
		}
	}
	if !c.telemetry {
		if gets+pushes != 0 {
			t.Errorf("telemetry disabled, yet %d gets and %d pushes", gets, pushes)
		}
		return
	}
	if gets != 1 || pushes < 1 || !lastPush.Terminating {
		t.Errorf("telemetry: %d gets, %d pushes (last terminating: %v), want 1 get and a final terminating push",
			gets, pushes, lastPush != nil && lastPush.Terminating)
	}
}

// check848: kgo's manage848 (consumer_group_848.go) stores newStringUUID()
// once (16 random bytes, base64.URLEncoding: 24 chars, "==" padded), joins
// with epoch 0 at v1, keeps the ID on every heartbeat and sends it on the
// leave (leave848, epoch -1). kfake echoes it.
func check848(t *testing.T, pdus []refPDU) {
	t.Helper()
	var member string
	var reqs []*kmsg.ConsumerGroupHeartbeatRequest
	for _, p := range pdus {
		if v, ok := p.req.(*kmsg.ConsumerGroupHeartbeatRequest); ok {
			reqs = append(reqs, v)
			if member == "" {
				member = v.MemberID
			}
			if v.MemberID != member {
				t.Errorf("frame %d: member ID %q, first was %q", p.frame, v.MemberID, member)
			}
			if v.Version != 1 {
				t.Errorf("frame %d: ConsumerGroupHeartbeat v%d, want v1", p.frame, v.Version)
			}
		}
		if v, ok := p.resp.(*kmsg.ConsumerGroupHeartbeatResponse); ok && v.MemberID != nil && *v.MemberID != member {
			t.Errorf("frame %d: kfake answered member ID %q, client sent %q", p.frame, *v.MemberID, member)
		}
	}
	if len(reqs) < 2 {
		t.Fatalf("%d heartbeats, want a join and a leave at least", len(reqs))
	}
	if reqs[0].MemberEpoch != 0 || reqs[len(reqs)-1].MemberEpoch != -1 {
		t.Errorf("first epoch %d, last epoch %d, want 0 (join) and -1 (leave)", reqs[0].MemberEpoch, reqs[len(reqs)-1].MemberEpoch)
	}
	b, err := base64.URLEncoding.DecodeString(member)
	if len(member) != 24 || !strings.HasSuffix(member, "==") || strings.ContainsAny(member, "+/") || err != nil || len(b) != 16 {
		t.Errorf("member ID %q is not padded URL-safe base64 of 16 bytes (err %v)", member, err)
	}
}

var kfakeMemberID = regexp.MustCompile(`^(.+)-([0-9a-f]{32})$`)

// checkProbe: kfake's consumerJoin (groups.go) answers an empty member ID at
// any version with generateMemberID: "<client ID>-<32 hex>", error NONE; a
// leave with an empty member ID gets UNKNOWN_MEMBER_ID (consumerLeave).
func checkProbe(t *testing.T, c *clientRun, pdus []refPDU) {
	t.Helper()
	var codes []int16
	var ids []string
	for _, p := range pdus {
		if v, ok := p.req.(*kmsg.ConsumerGroupHeartbeatRequest); ok && v.Version != c.cghMax {
			t.Errorf("frame %d: ConsumerGroupHeartbeat v%d, want v%d", p.frame, v.Version, c.cghMax)
		}
		if v, ok := p.resp.(*kmsg.ConsumerGroupHeartbeatResponse); ok {
			codes = append(codes, v.ErrorCode)
			id := "<null>"
			if v.MemberID != nil {
				id = *v.MemberID
			}
			ids = append(ids, id)
		}
	}
	want := []int16{0, kerr.UnknownMemberID.Code, 0}
	if !slices.Equal(codes, want) {
		t.Fatalf("heartbeat answers %v, want %v (join, empty leave, leave)", codes, want)
	}
	m := kfakeMemberID.FindStringSubmatch(ids[0])
	if m == nil || m[1] != c.clientID {
		t.Errorf("kfake assigned member ID %q, want %q-<32 hex>", ids[0], c.clientID)
	} else if _, err := hex.DecodeString(m[2]); err != nil {
		t.Errorf("member ID suffix %q: %v", m[2], err)
	}
}
