//go:build e2e

package realclients

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	confluentTopic = "confluent-topic"
	confluentGroup = "confluent-group"
	// debianPython is Debian's interpreter, which sees the
	// python3-confluent-kafka package whatever python3 is first on PATH.
	debianPython = "/usr/bin/python3"
)

func TestConfluentKafkaPython(t *testing.T) {
	if _, err := os.Stat(debianPython); err != nil {
		missingTool(t, debianPython, "apt-get install -y python3 python3-confluent-kafka")
	}
	if err := exec.Command(debianPython, "-c", "import confluent_kafka").Run(); err != nil {
		missingTool(t, "python3-confluent-kafka", "apt-get install -y python3-confluent-kafka")
	}
	out := record(t, scenario{
		name:   "confluent-kafka-python",
		topics: []string{confluentTopic},
		clients: func(t *testing.T, bootstrap string) {
			got := run(t, "", nil, debianPython, filepath.Join("testdata", "confluent", "client.py"), bootstrap, confluentTopic, confluentGroup)
			if got != "one\ntwo\nthree\n" {
				t.Errorf("confluent-kafka consumed %q, want one two three", got)
			}
		},
	})
	// confluent-kafka-python 1.7.0 names itself in ApiVersions v3
	// (client.software.name/version, set by the binding over librdkafka
	// 2.0.2's defaults); producer and consumer keep the default client ID
	// "rdkafka", so kwatch shows one legacy row for the host. Like kcat:
	// no instance ID, classic group, no finding.
	if vs := versionsOf(out, kmsg.ApiVersions); !slices.Equal(vs, []int16{3}) {
		t.Errorf("ApiVersions versions %v, want [3]", vs)
	}
	checkLegacy(t, out, legacyExpect{
		clients: map[string]software{"rdkafka": {"confluent-kafka-python", "1.7.0-rdkafka-2.0.2"}},
	})
}
