package pipeline_test

import (
	"bytes"
	"fmt"
	"regexp"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kwatch/kwatch/audit"
	"github.com/kwatch/kwatch/internal/pcapgen"
	"github.com/kwatch/kwatch/pipeline"
)

// capTraffic is 1,200 connections that each send a request, 400 more that
// only shake hands, then a second request on each of the first: over a
// small cap, the first ones are evicted before their second request.
func capTraffic(t *testing.T) []byte {
	t.Helper()
	c := pcapgen.New(pcapgen.Options{Seed: 3})
	req := func(corr int32) []byte {
		return pcapgen.EncodeRequest(pcapgen.RequestHeader{APIKey: int16(kmsg.ApiVersions), APIVersion: 3, CorrelationID: corr, ClientID: pcapgen.Ptr("cap")},
			pcapgen.APIVersions(3, "kwatch-test", "1.0"))
	}
	var conns []*pcapgen.Conn
	for i := range 1600 {
		cn := c.Conn(pcapgen.ConnOptions{})
		if i%4 == 3 {
			continue // a handshake alone: an embryo
		}
		cn.Send(req(1))
		conns = append(conns, cn)
	}
	for _, cn := range conns {
		cn.Send(req(2))
	}
	data, err := c.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

var evictedRE = regexp.MustCompile(`Evicted:(\d+)`)

// TestConnectionCap: over --max-connections, connections are evicted, the
// eviction is counted, and the report and the events are the same for 1,
// 2 and 4 workers; under the cap nothing is counted.
func TestConnectionCap(t *testing.T) {
	data := capTraffic(t)
	tests := []struct {
		name    string
		max     int
		evicted bool
	}{
		{name: "over the cap", max: 256, evicted: true},
		{name: "under the cap", max: 0, evicted: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var first []byte
			for _, w := range []int{1, 2, 4} {
				rep, _ := report(t, data, "cap.pcap", pipeline.Options{MaxConnections: tt.max, Workers: w}, audit.ProfileSeed, false)
				m := evictedRE.FindSubmatch(rep)
				if m == nil {
					t.Fatal("no Evicted count in the stats")
				}
				if got := string(m[1]) != "0"; got != tt.evicted {
					t.Errorf("workers %d: Evicted:%s, want evictions %v", w, m[1], tt.evicted)
				}
				joins := bytes.Contains(rep, []byte(`"midstream-join": 0`))
				if joins == tt.evicted {
					t.Errorf("workers %d: midstream-join zero %v, want %v", w, joins, !tt.evicted)
				}
				if first == nil {
					first = rep
				} else if !bytes.Equal(first, rep) {
					t.Errorf("workers %d: report differs from 1 worker:\n%s", w, fmt.Sprint(diffLines(first, rep)))
				}
			}
		})
	}
}

func diffLines(a, b []byte) string {
	al, bl := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := range min(len(al), len(bl)) {
		if !bytes.Equal(al[i], bl[i]) {
			return fmt.Sprintf("line %d:\n- %s\n+ %s", i+1, al[i], bl[i])
		}
	}
	return fmt.Sprintf("lengths %d and %d", len(al), len(bl))
}
