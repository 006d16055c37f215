//go:build e2e

package realclients

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kwatch/kwatch/audit"
	"github.com/kwatch/kwatch/capture"
	"github.com/kwatch/kwatch/decode"
	"github.com/kwatch/kwatch/pipeline"
)

// pdu is what the tests keep of one decode.Event (which is valid only
// during the Sink call).
type pdu struct {
	kind      decode.Kind
	conn      netip.AddrPort // client side
	frame     uint64
	key       int16
	version   int16
	hdrVer    int8
	corr      int32
	clientID  string
	nullID    bool
	hasInst   bool
	tagProb   decode.TagProblem
	fromStart bool
	partial   bool
	body      decode.Body
	coverage  decode.Coverage
	detail    string
}

// kwatchResult is kwatch's view of one capture: every event, in order, and
// the auditor's report.
type kwatchResult struct {
	events []pdu
	report *audit.Report
	stats  pipeline.Stats
}

// runKwatch runs kwatch's pipeline and auditor over path, the way
// `kwatch read` does (every TCP port, Kafka recognised by content).
func runKwatch(t *testing.T, path string) kwatchResult {
	t.Helper()
	src, err := capture.Open(path, capture.Options{})
	if err != nil {
		t.Fatalf("open capture: %v", err)
	}
	defer src.Close()
	aud := audit.New(audit.Options{})
	var res kwatchResult
	var last time.Time
	sink := decode.SinkFunc(func(e *decode.Event) {
		aud.Event(e)
		if e.Time.After(last) {
			last = e.Time
		}
		res.events = append(res.events, pdu{
			kind: e.Kind, conn: e.Conn.Client, frame: e.Frame, key: int16(e.APIKey), version: e.APIVersion,
			hdrVer: e.HeaderVersion, corr: e.CorrelationID, clientID: string(e.ClientID), nullID: e.ClientIDNull,
			hasInst: e.HasInstanceID && !e.InstanceID.IsZero(), tagProb: e.TagProblem,
			fromStart: e.FromStart, partial: e.Partial, body: e.Body, coverage: e.Coverage, detail: e.Detail,
		})
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res.stats, err = pipeline.Run(ctx, src, pipeline.Options{}, sink)
	if err != nil {
		t.Fatalf("pipeline: %v", err)
	}
	aud.AddCapture(res.stats.Packets, res.stats.Bytes, res.stats.Connections)
	res.report = aud.Finish(last)
	return res
}

// counts returns kwatch's requests and responses by API key.
func (r kwatchResult) counts() (reqs, resps map[int16]int) {
	reqs, resps = map[int16]int{}, map[int16]int{}
	for _, e := range r.events {
		switch e.kind {
		case decode.KindRequest:
			reqs[e.key]++
		case decode.KindResponse:
			resps[e.key]++
		}
	}
	return reqs, resps
}

// clientIDOf maps each connection to the client ID of its first request
// with one: each client process of a scenario has its own client ID.
func (r kwatchResult) clientIDOf() map[netip.AddrPort]string {
	out := map[netip.AddrPort]string{}
	for _, e := range r.events {
		if e.kind == decode.KindRequest && e.hdrVer >= 1 {
			if _, ok := out[e.conn]; !ok {
				out[e.conn] = e.clientID
			}
		}
	}
	return out
}

// tsharkView is what Wireshark's Kafka dissector decodes of a capture.
type tsharkView struct {
	reqs, resps map[int16]int
	software    map[string]bool // "name version" of ApiVersions v3+ requests
	malformed   int
}

// runTshark decodes path with tshark, every broker port forced to Kafka.
// tshark folds all PDUs of a frame into one row; occurrence=a lists them.
func runTshark(t *testing.T, path string, ports []uint16) tsharkView {
	t.Helper()
	tshark, err := exec.LookPath("tshark")
	if err != nil {
		missingTool(t, "tshark", "apt-get install -y tshark")
	}
	args := []string{"-n", "-r", path, "-o", "tcp.reassemble_out_of_order:TRUE",
		"-T", "fields", "-E", "occurrence=a", "-E", "aggregator=\x1f", "-E", "separator=\x1e"}
	for _, p := range ports {
		args = append(args, "-d", fmt.Sprintf("tcp.port==%d,kafka", p))
	}
	args = append(args, "-Y", "kafka || _ws.malformed",
		"-e", "kafka.request_key", "-e", "kafka.response_key",
		"-e", "kafka.client_software_name", "-e", "kafka.client_software_version", "-e", "_ws.malformed")
	cmd := exec.Command(tshark, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tshark %s: %v: %s", path, err, stderr.String())
	}
	v := tsharkView{reqs: map[int16]int{}, resps: map[int16]int{}, software: map[string]bool{}}
	split := func(s string) []string {
		if s == "" {
			return nil
		}
		return strings.Split(s, "\x1f")
	}
	for _, line := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		if line == "" {
			continue
		}
		f := strings.Split(line, "\x1e")
		if len(f) != 5 {
			t.Fatalf("tshark: unexpected row %q", line)
		}
		for i, m := range []map[int16]int{v.reqs, v.resps} {
			for _, k := range split(f[i]) {
				n, err := strconv.Atoi(k)
				if err != nil {
					t.Fatalf("tshark: api key %q: %v", k, err)
				}
				m[int16(n)]++
			}
		}
		names, vers := split(f[2]), split(f[3])
		for i := range names {
			if i < len(vers) {
				v.software[names[i]+" "+vers[i]] = true
			}
		}
		if f[4] != "" {
			v.malformed++
		}
	}
	return v
}
