//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kwatch/kwatch/audit"
	"github.com/kwatch/kwatch/capture"
	"github.com/kwatch/kwatch/decode"
	"github.com/kwatch/kwatch/internal/tlstest"
	"github.com/kwatch/kwatch/pipeline"
	"github.com/kwatch/kwatch/tlsdec"
)

// TLS end to end: kgo speaks TLS to kfake (kfake.TLS) through a proxy that
// terminates the client's TLS session and opens its own to kfake. The proxy
// records the client's TLS bytes in one capture and the plaintext it relays
// in another, with the same addresses: the same Kafka conversation, byte
// for byte, once encrypted and once not. Decrypted with kgo's key log
// (tls.Config.KeyLogWriter), the encrypted capture must give exactly the
// plaintext capture's PDUs and findings.

// tlsProxies terminates TLS in front of each kfake broker: proxies with
// accept replaced.
type tlsProxies struct {
	*proxies
	cipher, plain *recorder
	serverCfg     *tls.Config
}

func newTLSProxies(cipher, plain *recorder, serverCfg *tls.Config) *tlsProxies {
	p := &tlsProxies{proxies: newProxies(cipher), cipher: cipher, plain: plain, serverCfg: serverCfg}
	p.acceptor = p.accept
	return p
}

func (p *tlsProxies) accept(front net.Listener, target string) {
	defer p.wg.Done()
	for {
		raw, err := front.Accept()
		if err != nil {
			return
		}
		client, broker := addrPort(raw.RemoteAddr()), addrPort(front.Addr())
		rc := &cipherConn{Conn: raw, rec: p.cipher, fl: p.cipher.newFlow(client, broker)}
		pf := p.plain.newFlow(client, broker)
		p.wg.Go(func() { p.serve(rc, pf, target) })
	}
}

// serve relays plaintext between the client's TLS session and a new one to
// the broker, recording it.
func (p *tlsProxies) serve(rc *cipherConn, pf *flow, target string) {
	defer rc.Close()
	tc := tls.Server(rc, p.serverCfg)
	bc, err := tls.Dial("tcp", target, &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		return
	}
	defer bc.Close()
	var wg sync.WaitGroup
	relay := func(fromClient bool, src, dst net.Conn) {
		buf := make([]byte, 64<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				p.plain.data(pf, fromClient, buf[:n])
				if _, werr := dst.Write(buf[:n]); werr != nil {
					err = werr
				}
			}
			if err != nil {
				p.plain.fin(pf, fromClient, !errors.Is(err, io.EOF))
				src.Close()
				dst.Close()
				return
			}
		}
	}
	wg.Go(func() { relay(true, tc, bc) })
	wg.Go(func() { relay(false, bc, tc) })
	wg.Wait()
	rc.rec.fin(rc.fl, true, false)
	rc.rec.fin(rc.fl, false, false)
}

// cipherConn records the client's TLS bytes as they cross the socket.
type cipherConn struct {
	net.Conn
	rec *recorder
	fl  *flow
}

func (c *cipherConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.rec.data(c.fl, true, b[:n])
	}
	return n, err
}

func (c *cipherConn) Write(b []byte) (int, error) {
	c.rec.data(c.fl, false, b)
	return c.Conn.Write(b)
}

// tlsScenario runs a producer and a KIP-848 consumer over TLS with cfg's
// version and suites, and returns the encrypted and plaintext captures and
// the key log file.
func tlsScenario(t *testing.T, dir string, cfg *tls.Config) (cipherPcap, plainPcap, keylog string) {
	cipherPcap, plainPcap, keylog = filepath.Join(dir, "tls.pcap"), filepath.Join(dir, "plain.pcap"), filepath.Join(dir, "keys.log")
	cr, err := newRecorder(cipherPcap)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := newRecorder(plainPcap)
	if err != nil {
		t.Fatal(err)
	}
	kf, err := os.Create(keylog)
	if err != nil {
		t.Fatal(err)
	}
	defer kf.Close()
	px := newTLSProxies(cr, pr, tlstest.ServerConfig(t))
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.ListenFn(px.listen),
		kfake.TLS(tlstest.ServerConfig(t)), kfake.SeedTopics(1, topic))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ccfg := cfg.Clone()
	ccfg.InsecureSkipVerify, ccfg.KeyLogWriter = true, kf
	opts := []kgo.Opt{kgo.SeedBrokers(px.Addrs()...), kgo.DialTLSConfig(ccfg), kgo.DefaultProduceTopic(topic)}
	err = produceConsume(ctx, opts, "tls", "g-tls")
	cluster.Close()
	px.Close()
	err = errors.Join(err, cr.Close(), pr.Close())
	if err != nil {
		t.Fatal(err)
	}
	return cipherPcap, plainPcap, keylog
}

// produceConsume runs a producer (client ID prefix-producer) and then a
// KIP-848 consumer of group (prefix-848) that reads what it produced.
func produceConsume(ctx context.Context, opts []kgo.Opt, prefix, group string) error {
	prod, err := kgo.NewClient(append(opts, kgo.ClientID(prefix+"-producer"))...)
	if err != nil {
		return err
	}
	err = produce(ctx, prod)
	prod.Close()
	if err != nil {
		return err
	}
	cons, err := kgo.NewClient(append(opts, kgo.ClientID(prefix+"-848"), kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.ServerSideBalancer())...)
	if err != nil {
		return err
	}
	defer cons.Close()
	return consume(ctx, cons)
}

// tlsResult is a run's PDUs and findings, without frame numbers and
// times (the encrypted capture has more packets), and what tlsdec did.
type tlsResult struct {
	pdus, findings []string
	decrypted      int
	coverage       map[string]int
	tls            tlsdec.Stats
}

func analyze(t *testing.T, path, keylog string) tlsResult {
	t.Helper()
	keys := tlsdec.NewKeyLog()
	if keylog != "" {
		var err error
		if keys, err = tlsdec.OpenKeyLog(keylog); err != nil {
			t.Fatal(err)
		}
	}
	src, err := capture.Open(path, capture.Options{Secrets: keys.AddSecretsBlock})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	r := tlsResult{coverage: map[string]int{}}
	a := audit.New(audit.Options{})
	st, err := pipeline.Run(context.Background(), src, pipeline.Options{Keys: keys}, decode.SinkFunc(func(e *decode.Event) {
		switch e.Kind {
		case decode.KindRequest, decode.KindResponse:
			r.pdus = append(r.pdus, fmt.Sprintf("%v %v key=%d v%d corr=%d cid=%q body=%+v", e.Kind, e.Conn.Client, e.APIKey, e.APIVersion, e.CorrelationID, e.ClientID, e.Body))
			if e.Decrypted {
				r.decrypted++
			}
		case decode.KindCoverage:
			r.coverage[e.Coverage.String()]++
		}
		a.Event(e)
	}))
	if err != nil {
		t.Fatal(err)
	}
	r.tls = st.TLS
	for _, f := range a.Finish(st.LastTime).Findings {
		r.findings = append(r.findings, fmt.Sprintf("%s/%s %s %s v%d corr=%d exp=%q obs=%q g=%q m=%q",
			f.Rule, f.Confidence, f.ClientID, f.API, f.APIVersion, f.CorrelationID, f.Expected, f.Observed, f.Group, f.MemberID))
	}
	// The two captures interleave connections, and a connection's two
	// directions, differently (each recorder stamps packets as they cross
	// its side of the proxy): compare each connection's requests in order
	// and its responses in order, and the findings as a set.
	slices.SortStableFunc(r.pdus, func(a, b string) int { return strings.Compare(streamOf(a), streamOf(b)) })
	slices.Sort(r.findings)
	return r
}

// streamOf is the client address and the kind of a PDU line.
func streamOf(pdu string) string {
	f := strings.Fields(pdu)
	return f[1] + " " + f[0]
}

func TestTLSKgoKfake(t *testing.T) {
	if testing.Short() {
		t.Skip("real clients: skipped in -short")
	}
	tests := []struct {
		name string
		cfg  *tls.Config
	}{
		{"tls12-aes128-gcm", &tls.Config{MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}}},
		{"tls12-chacha20", &tls.Config{MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256}}},
		{"tls13", &tls.Config{MinVersion: tls.VersionTLS13}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			enc, plain, keylog := tlsScenario(t, dir, tt.cfg)
			want := analyze(t, plain, "")
			got := analyze(t, enc, keylog)
			if len(want.pdus) < 20 || len(want.findings) == 0 {
				t.Fatalf("plaintext: %d PDUs, %d findings: the scenario did not run", len(want.pdus), len(want.findings))
			}
			if strings.Join(got.pdus, "\n") != strings.Join(want.pdus, "\n") {
				t.Fatalf("decrypted PDUs differ from the plaintext capture's: %d against %d", len(got.pdus), len(want.pdus))
			}
			if strings.Join(got.findings, "\n") != strings.Join(want.findings, "\n") {
				t.Fatalf("findings differ:\ndecrypted:\n%s\nplaintext:\n%s", strings.Join(got.findings, "\n"), strings.Join(want.findings, "\n"))
			}
			// SPEC.md 2.1: the coverage of the plaintext capture, exactly.
			if !maps.Equal(got.coverage, want.coverage) {
				t.Fatalf("coverage %v, the plaintext capture's %v", got.coverage, want.coverage)
			}
			if got.decrypted != len(got.pdus) || got.tls.Decrypted != got.tls.Connections || got.tls.Connections == 0 ||
				got.coverage["tls-connection"]+got.coverage["tls-decrypt-failed"] != 0 {
				t.Fatalf("%d of %d PDUs decrypted, tls stats %+v, coverage %v", got.decrypted, len(got.pdus), got.tls, got.coverage)
			}
			// Without the key log: every connection is one tls-connection.
			none := analyze(t, enc, "")
			if len(none.pdus) != 0 || none.coverage["tls-connection"] == 0 {
				t.Fatalf("without secrets: %d PDUs, coverage %v", len(none.pdus), none.coverage)
			}
			tsharkCrossCheck(t, enc, keylog, len(got.pdus))
		})
	}
}

// tsharkCrossCheck counts the Kafka PDUs tshark decrypts with the same key
// log (the broker port, the first packet's destination, decoded as TLS
// carrying Kafka); skipped when tshark is not installed.
func tsharkCrossCheck(t *testing.T, pcap, keylog string, want int) {
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Log("tshark not installed: cross-check skipped")
		return
	}
	port, err := exec.Command("tshark", "-r", pcap, "-c", "1", "-T", "fields", "-e", "tcp.dstport").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	p := strings.TrimSpace(string(port))
	out, err := exec.Command("tshark", "-r", pcap, "-o", "tls.keylog_file:"+keylog,
		"-d", "tcp.port=="+p+",tls", "-d", "tls.port=="+p+",kafka",
		"-Y", "kafka", "-T", "fields", "-e", "kafka.correlation_id").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	n := 0
	for _, f := range strings.FieldsFunc(string(out), func(r rune) bool { return r == '\n' || r == ',' || r == '\t' }) {
		if f != "" {
			n++
		}
	}
	if n != want {
		t.Fatalf("tshark decrypted %d Kafka PDUs, kwatch %d", n, want)
	}
}

// TestLiveTLS: kwatch live on lo with --tls-keylog, while kgo writes the
// key log file (it grows as connections open): the TLS traffic is audited
// as plaintext, and no connection is left as tls-connection.
func TestLiveTLS(t *testing.T) {
	requireRoot(t)
	kwatchBin(t)
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, topic), kfake.TLS(tlstest.ServerConfig(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	seeds := cluster.ListenAddrs()
	_, port, _ := net.SplitHostPort(seeds[0])
	keylog := filepath.Join(t.TempDir(), "keys.log")
	kf, err := os.OpenFile(keylog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer kf.Close()

	p := startKwatch(t, nil, "live", "-i", "lo", "--no-tui", "--format", "ndjson", "--fail-on", "never", "--port", port, "--tls-keylog", keylog)
	p.WaitCapturing(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	opts := []kgo.Opt{kgo.SeedBrokers(seeds...), kgo.DefaultProduceTopic(topic),
		kgo.DialTLSConfig(&tls.Config{InsecureSkipVerify: true, KeyLogWriter: kf})}
	err = produceConsume(ctx, opts, "live-tls", "lg-tls")
	if err != nil {
		t.Fatal(err)
	}
	cluster.Close()
	p.waitDrained(t)
	if code, _ := p.Stop(t, syscall.SIGINT, 5*time.Second); code != 0 {
		t.Fatalf("exit status %d; stderr:\n%s", code, p.Stderr.String())
	}
	stderr := p.Stdout.String() + p.Stderr.String()
	for _, want := range []string{`"rule":"member-id-encoding"`, `"client_id":"live-tls-848"`} {
		if !strings.Contains(stderr, want) {
			t.Fatalf("no %s in kwatch live's output:\n%s", want, stderr)
		}
	}
	// Every connection was Kafka, none left as TLS.
	m := regexp.MustCompile(`connections\s+(\d+) TCP, (\d+) Kafka`).FindStringSubmatch(stderr)
	if m == nil || m[1] != m[2] || strings.Contains(stderr, "tls-connection") || strings.Contains(stderr, "tls-decrypt-failed") {
		t.Fatalf("not every connection was decrypted:\n%s", stderr)
	}
}
