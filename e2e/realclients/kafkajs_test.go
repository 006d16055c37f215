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
	kafkajsTopic = "kafkajs-topic"
	kafkajsGroup = "kafkajs-group"
	// kafkajsInstall is what .ci/run runs (from the repository root) so
	// that testdata/kafkajs/node_modules holds kafkajs 2.2.4.
	kafkajsInstall = "npm ci --prefix e2e/realclients/testdata/kafkajs"
)

// kafkajsDir returns the driver's directory and the NODE_PATH under which
// node finds kafkajs: testdata/kafkajs/node_modules, or the directory named
// by KAFKAJS_NODE_MODULES (an install kept outside the checkout).
func kafkajsDir(t *testing.T) (dir, nodePath string) {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("testdata", "kafkajs"))
	if err != nil {
		t.Fatal(err)
	}
	for _, nm := range []string{os.Getenv("KAFKAJS_NODE_MODULES"), filepath.Join(dir, "node_modules")} {
		if nm == "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(nm, "kafkajs", "package.json")); err == nil {
			return dir, nm
		}
	}
	missingTool(t, "kafkajs", kafkajsInstall+" (or set KAFKAJS_NODE_MODULES to a node_modules holding kafkajs@2.2.4)")
	return "", ""
}

func TestKafkaJS(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		missingTool(t, "node", "apt-get install -y nodejs npm")
	}
	dir, nodePath := kafkajsDir(t)
	out := record(t, scenario{
		name:   "kafkajs",
		topics: []string{kafkajsTopic},
		clients: func(t *testing.T, bootstrap string) {
			got := run(t, "", []string{"NODE_PATH=" + nodePath}, node, filepath.Join(dir, "client.js"), bootstrap, kafkajsTopic, kafkajsGroup)
			if got != "one\ntwo\nthree\n" {
				t.Errorf("kafkajs consumed %q, want one two three", got)
			}
		},
		// tshark 4.0 throws on ListPartitionReassignments v0's null
		// compact topics array (a single 0x00), so it never pairs the
		// response with its request.
		tsharkNoResponse: []kmsg.Key{kmsg.ListPartitionReassignments},
	})
	// kafkajs 2.2.4 (src/protocol/request.js) writes every request header
	// as v1: key, version, correlation ID, client ID. Its highest
	// ApiVersions is v2 (src/protocol/requests/apiVersions), which has no
	// ClientSoftwareName/Version, so kwatch cannot name the library. All
	// its versions are non-flexible except AlterPartitionReassignments v0
	// and ListPartitionReassignments v0, whose encoders start the body with
	// an empty tag buffer: on the wire exactly a v2 header without tags. No
	// instance ID, classic groups (JoinGroup v5), no telemetry: no finding.
	if vs := versionsOf(out, kmsg.ApiVersions); !slices.Equal(vs, []int16{2}) {
		t.Errorf("ApiVersions versions %v, want [2]", vs)
	}
	if vs := versionsOf(out, kmsg.ListPartitionReassignments); !slices.Equal(vs, []int16{0}) {
		t.Errorf("ListPartitionReassignments versions %v, want [0]", vs)
	}
	checkLegacy(t, out, legacyExpect{
		clients: map[string]software{"kafkajs-producer": {}, "kafkajs-consumer": {}, "kafkajs-admin": {}},
	})
}
