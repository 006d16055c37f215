//go:build e2e

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// pdu is what both kwatch dump and tshark say of one Kafka PDU.
type pdu struct {
	request  bool
	key      int
	version  int
	corr     int
	clientID string
	hasCID   bool
}

func (p pdu) String() string {
	kind := "response"
	if p.request {
		kind = "request"
	}
	return fmt.Sprintf("%s key=%d v%d corr=%d client_id=%q", kind, p.key, p.version, p.corr, p.clientID)
}

func captureFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, pat := range []string{"*.pcap", "*.pcapng", "*.pcap.gz", "*.pcapng.gz"} {
		m, err := filepath.Glob(filepath.Join("..", "..", "testdata", "pcaps", pat))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	slices.Sort(files)
	if len(files) == 0 {
		t.Fatal("no captures in testdata/pcaps")
	}
	return files
}

// kwatchPDUs runs kwatch dump on file and returns its PDUs by frame, and the
// broker ports it saw.
func kwatchPDUs(t *testing.T, file string) (map[int][]pdu, []int) {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := run([]string{"dump", "--format", "ndjson", file}, &out, &errOut); code != 0 {
		t.Fatalf("kwatch dump %s: exit %d: %s", file, code, errOut.String())
	}
	byFrame := map[int][]pdu{}
	ports := map[int]bool{}
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var rec struct {
			Kind     string  `json:"kind"`
			Frame    int     `json:"frame"`
			APIKey   int     `json:"api_key"`
			Version  int     `json:"api_version"`
			Corr     int     `json:"correlation_id"`
			ClientID *string `json:"client_id"`
			Conn     struct {
				Broker string `json:"broker"`
			} `json:"conn"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("kwatch dump %s: bad ndjson line %q: %v", file, sc.Text(), err)
		}
		if rec.Kind != "request" && rec.Kind != "response" {
			continue
		}
		p := pdu{request: rec.Kind == "request", key: rec.APIKey, version: rec.Version, corr: rec.Corr}
		if rec.ClientID != nil {
			p.clientID, p.hasCID = *rec.ClientID, true
		}
		byFrame[rec.Frame] = append(byFrame[rec.Frame], p)
		if i := strings.LastIndexByte(rec.Conn.Broker, ':'); i >= 0 {
			port, _ := strconv.Atoi(rec.Conn.Broker[i+1:])
			ports[port] = true
		}
	}
	var list []int
	for p := range ports {
		list = append(list, p)
	}
	slices.Sort(list)
	return byFrame, list
}

// tsharkPDUs runs tshark's Kafka dissector on file. tshark folds the PDUs of
// one frame into one row; with -E occurrence=a every field lists all of them.
func tsharkPDUs(t *testing.T, tshark, file string, ports []int) map[int][]pdu {
	t.Helper()
	args := []string{"-n", "-r", file, "-o", "tcp.reassemble_out_of_order:TRUE",
		"-T", "fields", "-E", "occurrence=a", "-E", "aggregator=\x1f", "-E", "separator=\x1e"}
	for _, p := range ports {
		args = append(args, "-d", fmt.Sprintf("tcp.port==%d,kafka", p))
	}
	args = append(args, "-Y", "kafka",
		"-e", "frame.number", "-e", "kafka.request_key", "-e", "kafka.request.version",
		"-e", "kafka.response_key", "-e", "kafka.response.version",
		"-e", "kafka.correlation_id", "-e", "kafka.client_id")
	cmd := exec.Command(tshark, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tshark %s: %v: %s", file, err, stderr.String())
	}
	split := func(s string) []string {
		if s == "" {
			return nil
		}
		return strings.Split(s, "\x1f")
	}
	atoi := func(s string) int {
		n, err := strconv.Atoi(s)
		if err != nil {
			return -1
		}
		return n
	}
	byFrame := map[int][]pdu{}
	for _, line := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		if line == "" {
			continue
		}
		f := strings.Split(line, "\x1e")
		if len(f) != 7 {
			t.Fatalf("tshark %s: unexpected row %q", file, line)
		}
		frame := atoi(f[0])
		reqKeys, reqVers := split(f[1]), split(f[2])
		respKeys, respVers := split(f[3]), split(f[4])
		corrs, cids := split(f[5]), split(f[6])
		keys, vers, request := reqKeys, reqVers, true
		if len(reqKeys) == 0 {
			keys, vers, request = respKeys, respVers, false
		}
		for i, k := range keys {
			p := pdu{request: request, key: atoi(k), version: -1, corr: -1}
			if i < len(vers) {
				p.version = atoi(vers[i])
			}
			if i < len(corrs) {
				p.corr = atoi(corrs[i])
			}
			// tshark omits a null client ID, so client IDs line up with
			// the PDUs only when every PDU of the row has one.
			if request && len(cids) == len(keys) {
				p.clientID, p.hasCID = cids[i], true
			}
			byFrame[frame] = append(byFrame[frame], p)
		}
	}
	return byFrame
}

// TestTsharkAgrees cross-checks kwatch dump with Wireshark's Kafka dissector
// on every shipped capture, PDU by PDU: api key, version, correlation id and
// client id wherever tshark decodes them. tshark 4.0 knows fewer APIs than
// kwatch; where it shows nothing, kwatch decoding more is the point.
func TestTsharkAgrees(t *testing.T) {
	tshark, err := exec.LookPath("tshark")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("tshark is not installed; .ci/run installs it")
		}
		t.Skip("tshark not installed")
	}
	for _, file := range captureFiles(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			ours, ports := kwatchPDUs(t, file)
			if len(ports) == 0 {
				if strings.Contains(file, "tls") || strings.Contains(file, "garbage") || strings.Contains(file, "not-kafka") {
					return // nothing Kafka to compare by design
				}
				t.Fatalf("kwatch decoded no Kafka PDU in %s", file)
			}
			theirs := tsharkPDUs(t, tshark, file, ports)
			compared := 0
			frames := make([]int, 0, len(theirs))
			for f := range theirs {
				frames = append(frames, f)
			}
			slices.Sort(frames)
			for _, frame := range frames {
				tp, kp := theirs[frame], ours[frame]
				if len(kp) < len(tp) {
					t.Errorf("frame %d: tshark has %d PDUs %v, kwatch %d %v", frame, len(tp), tp, len(kp), kp)
					continue
				}
				for i, want := range tp {
					got := kp[i]
					switch {
					case want.request != got.request, want.key != got.key,
						want.version >= 0 && want.version != got.version,
						want.corr >= 0 && want.corr != got.corr,
						want.hasCID && got.hasCID && want.clientID != got.clientID:
						t.Errorf("frame %d PDU %d: tshark %v, kwatch %v", frame, i, want, got)
					}
					compared++
				}
			}
			if compared == 0 {
				t.Fatalf("tshark decoded no Kafka PDU that kwatch could be compared with")
			}
			t.Logf("%d PDUs agree (kwatch decoded %d frames with PDUs)", compared, len(ours))
		})
	}
}
