//go:build e2e

package realclients

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

const kcatTopic = "kcat-topic"

func TestKcat(t *testing.T) {
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		missingTool(t, "kcat", "apt-get install -y kcat")
	}
	out := record(t, scenario{
		name:   "kcat",
		topics: []string{kcatTopic},
		clients: func(t *testing.T, bootstrap string) {
			msgs := "one\ntwo\nthree\n"
			run(t, msgs, nil, kcat, "-P", "-b", bootstrap, "-t", kcatTopic, "-X", "client.id=kcat-producer")
			got := run(t, "", nil, kcat, "-C", "-b", bootstrap, "-t", kcatTopic, "-o", "beginning", "-e", "-X", "client.id=kcat-consumer")
			if got != msgs {
				t.Errorf("consumer read %q, want %q", got, msgs)
			}
			got = run(t, "", nil, kcat, "-b", bootstrap, "-G", "kcat-group", "-o", "beginning", "-e", "-X", "client.id=kcat-group", kcatTopic)
			if !strings.Contains(got, "three") {
				t.Errorf("group consumer read %q, want the three messages", got)
			}
		},
	})
	// librdkafka 2.0.2 asks ApiVersions v3 (flexible: header v2, with
	// its own name and version, kcat sets neither) and every other API at
	// a non-flexible version (header v1), repeats the client ID on every
	// request, sends no header instance ID and uses the classic group
	// protocol: no rule applies, so no finding.
	if vs := versionsOf(out, kmsg.ApiVersions); !slices.Equal(vs, []int16{3}) {
		t.Errorf("ApiVersions versions %v, want [3]", vs)
	}
	rdkafka := software{"librdkafka", "2.0.2"}
	checkLegacy(t, out, legacyExpect{
		clients: map[string]software{"kcat-producer": rdkafka, "kcat-consumer": rdkafka, "kcat-group": rdkafka},
	})
}
