//go:build e2e

package realclients

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kwatch/kwatch/decode"
)

// software is a client's ApiVersions v3+ ClientSoftwareName and Version;
// zero when the client sends ApiVersions below v3, which has neither.
type software struct{ name, version string }

// legacyExpect is what a client without KIP-1313 support must look like in
// kwatch's decode and report.
type legacyExpect struct {
	// clients maps each client ID of the scenario to its software.
	clients map[string]software
	// findings: the exact findings, keyed as findingKey does.
	findings map[string]int
}

// wantHeader is the request header version a client following Kafka's
// message specs uses: v2 for flexible versions, v1 otherwise, v0 only for
// ControlledShutdown v0.
func wantHeader(key, version int16) int8 {
	if key == int16(kmsg.ControlledShutdown) && version == 0 {
		return 0
	}
	r := kmsg.RequestForKey(key)
	if r == nil {
		return -1
	}
	r.SetVersion(version)
	if r.IsFlexible() {
		return 2
	}
	return 1
}

// checkLegacy checks a scenario whose clients send no header instance ID:
// per request, per connection, per report row and the findings.
func checkLegacy(t *testing.T, out outcome, want legacyExpect) {
	t.Helper()
	byHdr := map[string]uint64{}
	perConn := map[netip.AddrPort]int{}
	cidOf := out.kw.clientIDOf()
	var repeats, repeatBytes uint64
	t.Run("headers", func(t *testing.T) {
		for _, e := range out.kw.events {
			if e.kind != decode.KindRequest {
				continue
			}
			name := kmsg.NameForKey(e.key)
			byHdr[fmt.Sprintf("v%d", e.hdrVer)]++
			if h := wantHeader(e.key, e.version); e.hdrVer != h {
				t.Errorf("frame %d %s v%d: header v%d, want v%d", e.frame, name, e.version, e.hdrVer, h)
			}
			if e.hasInst || e.tagProb != decode.TagOK {
				t.Errorf("frame %d %s: instance ID %v, tags %v; the client sends none", e.frame, name, e.hasInst, e.tagProb)
			}
			if e.nullID || e.clientID != cidOf[e.conn] {
				t.Errorf("frame %d %s: client ID %q (null %v), the connection's first was %q", e.frame, name, e.clientID, e.nullID, cidOf[e.conn])
			}
			if _, ok := want.clients[e.clientID]; !ok {
				t.Errorf("frame %d %s: client ID %q is none of the scenario's", e.frame, name, e.clientID)
			}
			if perConn[e.conn] > 0 {
				repeats++
				repeatBytes += uint64(len(e.clientID))
			}
			perConn[e.conn]++
		}
	})
	tot := out.kw.report.Totals
	t.Run("totals", func(t *testing.T) {
		if got := dropZero(tot.RequestsByHeaderVersion); !maps.Equal(got, byHdr) {
			t.Errorf("requests by header version %v, want %v", got, byHdr)
		}
		// Legacy clients repeat the client ID on every later request of
		// a connection: a statistic, never a finding.
		if tot.ClientIDRepeats != repeats || tot.ClientIDRepeatBytes != repeatBytes {
			t.Errorf("client ID repeats %d (%d bytes), want %d (%d bytes)", tot.ClientIDRepeats, tot.ClientIDRepeatBytes, repeats, repeatBytes)
		}
		if got, want := tot.KafkaConnections, uint64(len(perConn)); got != want {
			t.Errorf("%d Kafka connections, %d carried requests", got, want)
		}
	})
	t.Run("instances", func(t *testing.T) {
		seen := map[string]bool{}
		for _, in := range out.kw.report.Instances {
			if !in.Legacy || in.InstanceID != "" {
				t.Errorf("row %v: instance ID %q, want a legacy row", in.ClientIDs, in.InstanceID)
			}
			if len(in.ClientIDs) != 1 {
				t.Errorf("row %v: want one client ID per row", in.ClientIDs)
				continue
			}
			id := in.ClientIDs[0]
			seen[id] = true
			sw, ok := want.clients[id]
			if !ok {
				t.Errorf("row %q: not a client of the scenario", id)
				continue
			}
			if in.SoftwareName != sw.name || in.SoftwareVersion != sw.version {
				t.Errorf("row %q: software %q %q, want %q %q", id, in.SoftwareName, in.SoftwareVersion, sw.name, sw.version)
			}
			conns := 0
			for c, cid := range cidOf {
				if cid == id && perConn[c] > 0 {
					conns++
				}
			}
			if in.Connections != conns {
				t.Errorf("row %q: %d connections, want %d", id, in.Connections, conns)
			}
		}
		for id := range want.clients {
			if !seen[id] {
				t.Errorf("client %q has no report row", id)
			}
		}
		// tshark must read the same software names from ApiVersions.
		wantSW := map[string]bool{}
		for _, sw := range want.clients {
			if sw.name != "" {
				wantSW[sw.name+" "+sw.version] = true
			}
		}
		if !maps.Equal(out.ts.software, wantSW) {
			t.Errorf("tshark reads client software %v, want %v", slices.Sorted(maps.Keys(out.ts.software)), slices.Sorted(maps.Keys(wantSW)))
		}
	})
	t.Run("findings", func(t *testing.T) {
		checkFindings(t, out, want.findings)
		if tot.FindingsNotKept != 0 {
			t.Errorf("%d findings not kept", tot.FindingsNotKept)
		}
	})
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

// versionsOf returns the versions of key's requests, sorted.
func versionsOf(out outcome, key kmsg.Key) []int16 {
	var vs []int16
	for _, e := range out.kw.events {
		if e.kind == decode.KindRequest && e.key == int16(key) && !slices.Contains(vs, e.version) {
			vs = append(vs, e.version)
		}
	}
	slices.Sort(vs)
	return vs
}
