//go:build e2e

package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/kwatch/kwatch/audit"
	"github.com/kwatch/kwatch/capture"
	"github.com/kwatch/kwatch/decode"
	"github.com/kwatch/kwatch/pipeline"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// seenPDU is what the audit test keeps of a decode.Event (which is only
// valid during the Sink call).
type seenPDU struct {
	kind      decode.Kind
	client    netip.AddrPort
	key       int16
	hdrVer    int8
	clientID  string
	nullID    bool
	hasInst   bool
	tagProb   decode.TagProblem
	fromStart bool
	partial   bool
	body      decode.Body
	coverage  decode.Coverage
}

// kwatchRun runs kwatch's pipeline and auditor over the shared capture.
func kwatchRun(t *testing.T, path string) ([]seenPDU, *audit.Report, pipeline.Stats) {
	t.Helper()
	src, err := capture.Open(path, capture.Options{})
	if err != nil {
		t.Fatalf("open capture: %v", err)
	}
	defer src.Close()
	aud := audit.New(audit.Options{})
	var seen []seenPDU
	var last time.Time
	sink := decode.SinkFunc(func(e *decode.Event) {
		aud.Event(e)
		if e.Time.After(last) {
			last = e.Time
		}
		seen = append(seen, seenPDU{
			kind: e.Kind, client: e.Conn.Client, key: int16(e.APIKey), hdrVer: e.HeaderVersion,
			clientID: string(e.ClientID), nullID: e.ClientIDNull, hasInst: e.HasInstanceID && !e.InstanceID.IsZero(),
			tagProb: e.TagProblem, fromStart: e.FromStart, partial: e.Partial, body: e.Body, coverage: e.Coverage,
		})
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	stats, err := pipeline.Run(ctx, src, pipeline.Options{}, sink)
	if err != nil {
		t.Fatalf("pipeline: %v", err)
	}
	aud.AddCapture(stats.Packets, stats.Bytes, stats.Connections)
	return seen, aud.Finish(last), stats
}

// TestAudit runs kwatch on the recorded kgo/kfake traffic and compares what
// it decodes and reports with kgo's hooks, the reference reader and the
// source study (FINDINGS.md).
func TestAudit(t *testing.T) {
	r, rc, owner := refRecording(t)
	start := time.Now()
	seen, rep, stats := kwatchRun(t, r.pcap)
	t.Logf("kwatch: %d packets, %d events, %d findings in %v", stats.Packets, len(seen), len(rep.Findings), time.Since(start))

	t.Run("coverage", func(t *testing.T) {
		for _, s := range seen {
			if s.kind == decode.KindCoverage {
				t.Errorf("coverage event %v on %v: the capture is complete and in order", s.coverage, s.client)
			}
			if (s.kind == decode.KindRequest || s.kind == decode.KindResponse) && (!s.fromStart || s.partial) {
				t.Errorf("%v: PDU from start %v, partial %v; every connection was recorded from its SYN", s.client, s.fromStart, s.partial)
			}
		}
		for name, n := range rep.Totals.Coverage {
			if n != 0 {
				t.Errorf("report coverage %s = %d, want 0", name, n)
			}
		}
		if stats.Packets != uint64(rc.packets) {
			t.Errorf("pipeline read %d packets, capture has %d", stats.Packets, rc.packets)
		}
		if got, want := rep.Totals.KafkaConnections, uint64(len(rc.conns)); got != want {
			t.Errorf("Kafka connections %d, want %d", got, want)
		}
	})

	t.Run("requests", func(t *testing.T) {
		for _, c := range r.clients {
			writes, _, _, _ := c.hooks.snapshot()
			got := map[int16]int{}
			for _, s := range seen {
				if s.kind != decode.KindRequest || owner[s.client] != c {
					continue
				}
				got[s.key]++
				if s.hdrVer != 2 || s.nullID || s.clientID != c.clientID || s.hasInst || s.tagProb != decode.TagOK {
					t.Errorf("%s %s: header v%d client ID %q (null %v), instance ID %v, tags %v; want v2, %q, none, ok",
						c.clientID, kmsg.NameForKey(s.key), s.hdrVer, s.clientID, s.nullID, s.hasInst, s.tagProb, c.clientID)
				}
			}
			if !maps.Equal(got, writes) {
				t.Errorf("%s: kwatch decoded requests %v, kgo wrote %v", c.clientID, got, writes)
			}
		}
		var refReq, refResp uint64
		for _, p := range rc.pdus {
			if p.request {
				refReq++
			} else {
				refResp++
			}
		}
		if rep.Totals.Requests != refReq || rep.Totals.Responses != refResp {
			t.Errorf("totals: %d requests, %d responses; reference reader: %d, %d", rep.Totals.Requests, rep.Totals.Responses, refReq, refResp)
		}
		if want := map[string]uint64{"v2": refReq}; !equalNonZero(rep.Totals.RequestsByHeaderVersion, want) {
			t.Errorf("requests by header version %v, want %v", rep.Totals.RequestsByHeaderVersion, want)
		}
	})

	t.Run("findings", func(t *testing.T) {
		want := predictFindings(t, r, rc, owner)
		got := map[string]int{}
		for _, f := range rep.Findings {
			c := owner[f.Conn.Client]
			name := "<unknown client>"
			if c != nil {
				name = c.clientID
			}
			got[findingKey(name, f.Rule, f.Severity.String(), f.MemberID)]++
		}
		for _, k := range slices.Sorted(maps.Keys(union(got, want))) {
			if got[k] != want[k] {
				t.Errorf("%s: %d findings, want %d", k, got[k], want[k])
			}
		}
		if rep.Totals.FindingsNotKept != 0 {
			t.Errorf("%d findings not kept", rep.Totals.FindingsNotKept)
		}
	})

	t.Run("instances", func(t *testing.T) {
		rows := map[string]*audit.Instance{}
		for i := range rep.Instances {
			in := &rep.Instances[i]
			if !in.Legacy || in.InstanceID != "" {
				t.Errorf("row %v: kgo sends no header instance ID, want legacy rows only", in.ClientIDs)
			}
			for _, id := range in.ClientIDs {
				if rows[id] != nil {
					t.Errorf("client ID %s in two rows", id)
				}
				rows[id] = in
			}
		}
		for _, c := range r.clients {
			in := rows[c.clientID]
			if in == nil {
				t.Errorf("%s: no report row", c.clientID)
				continue
			}
			exp := expectRow(rc, owner, c)
			if in.SoftwareName != "kgo" || in.SoftwareVersion != exp.softwareVersion {
				t.Errorf("%s: software %q %q, want \"kgo\" %q", c.clientID, in.SoftwareName, in.SoftwareVersion, exp.softwareVersion)
			}
			if in.Connections != exp.conns {
				t.Errorf("%s: %d connections, want %d", c.clientID, in.Connections, exp.conns)
			}
			if in.TelemetryID != exp.telemetryID {
				t.Errorf("%s: telemetry ID %q, want %q", c.clientID, in.TelemetryID, exp.telemetryID)
			}
			if c.kind == kind848 && !slices.Contains(in.MemberIDs[c.group], exp.memberID) {
				t.Errorf("%s: member IDs %v, want %q in group %s", c.clientID, in.MemberIDs, exp.memberID, c.group)
			}
		}
	})
}

func findingKey(client, rule, sev, member string) string {
	return fmt.Sprintf("%s %s/%s member=%q", client, rule, sev, member)
}

// predictFindings is the source study turned into numbers, per client:
//   - kgo's KIP-848 member ID is padded URL-safe base64 of 16 random bytes
//     (newStringUUID): member-id-encoding (info, no '+' or '/') once per
//     connection it is used on, and member-id-not-v4 on those connections
//     unless the random version nibble happens to be 4. It never sends a
//     header instance ID (AppendRequest writes zero tags), so no
//     member-id-misaligned, no instance-id-* and no client-id-repeated; it
//     keeps one member ID and sends it on leave, so no member-id-changed,
//     -empty or leave-without-member-id.
//   - Telemetry: the first GetTelemetrySubscriptions has a zero body ID and
//     kfake assigns a non-zero one (row 1 of SPEC 3.3); pushes use it: no
//     telemetry finding.
//   - The probes' empty-ID join: member-id-empty (error at v1, info at v0);
//     at v1 kfake's NONE answer with a generated ID adds
//     broker-generated-member-id and broker-accepted-invalid. Their empty
//     leave is leave-without-member-id. The ID kfake assigned is not
//     judged.
func predictFindings(t *testing.T, r *recording, rc *refCapture, owner map[netip.AddrPort]*clientRun) map[string]int {
	t.Helper()
	want := map[string]int{}
	for _, c := range r.clients {
		switch c.kind {
		case kind848:
			conns := map[netip.AddrPort]string{}
			for _, p := range rc.pdus {
				if v, ok := p.req.(*kmsg.ConsumerGroupHeartbeatRequest); ok && owner[p.client] == c {
					conns[p.client] = v.MemberID
				}
			}
			for _, m := range conns {
				want[findingKey(c.clientID, "member-id-encoding", "info", m)]++
				b, err := base64.URLEncoding.DecodeString(m)
				if err != nil || len(b) != 16 {
					t.Fatalf("%s: member ID %q: %v", c.clientID, m, err)
				}
				if b[6]>>4 != 4 {
					want[findingKey(c.clientID, "member-id-not-v4", "info", m)]++
				}
			}
		case kindProbe:
			if c.cghMax >= 1 {
				want[findingKey(c.clientID, "member-id-empty", "error", "")]++
				// This finding names the ID kfake generated.
				want[findingKey(c.clientID, "broker-generated-member-id", "warn", firstAssigned(rc, owner, c))]++
				want[findingKey(c.clientID, "broker-accepted-invalid", "warn", "")]++
			} else {
				want[findingKey(c.clientID, "member-id-empty", "info", "")]++
			}
			want[findingKey(c.clientID, "leave-without-member-id", "error", "")]++
		}
	}
	return want
}

// firstAssigned returns the member ID of the client's first
// ConsumerGroupHeartbeat response.
func firstAssigned(rc *refCapture, owner map[netip.AddrPort]*clientRun, c *clientRun) string {
	for _, p := range rc.pdus {
		if v, ok := p.resp.(*kmsg.ConsumerGroupHeartbeatResponse); ok && owner[p.client] == c && v.MemberID != nil {
			return *v.MemberID
		}
	}
	return "<none>"
}

type rowExpect struct {
	softwareVersion, telemetryID, memberID string
	conns                                  int
}

func expectRow(rc *refCapture, owner map[netip.AddrPort]*clientRun, c *clientRun) rowExpect {
	var e rowExpect
	for a := range rc.conns {
		if owner[a] == c {
			e.conns++
		}
	}
	for _, p := range rc.pdus {
		if owner[p.client] != c {
			continue
		}
		switch v := p.req.(type) {
		case *kmsg.ApiVersionsRequest:
			e.softwareVersion = v.ClientSoftwareVersion
		case *kmsg.ConsumerGroupHeartbeatRequest:
			e.memberID = v.MemberID
		}
		if v, ok := p.resp.(*kmsg.GetTelemetrySubscriptionsResponse); ok {
			e.telemetryID = audit.JavaString(decode.UUID(v.ClientInstanceID))
		}
	}
	return e
}

func equalNonZero(a, b map[string]uint64) bool {
	return maps.EqualFunc(dropZero(a), dropZero(b), func(x, y uint64) bool { return x == y })
}

func dropZero(m map[string]uint64) map[string]uint64 {
	out := map[string]uint64{}
	for k, v := range m {
		if v != 0 {
			out[k] = v
		}
	}
	return out
}

func union(a, b map[string]int) map[string]int {
	out := maps.Clone(a)
	for k := range b {
		out[k] += 0
	}
	return out
}
