package main

// Black-box scenarios (batch 8f): false-positive hunt on realistic captures
// of busy clusters. A capture starts while 30-40 connections are open
// (mid-stream, no SYN) from KIP-1313 clients and legacy clients with
// pipelined Produce/Fetch, lost and reordered segments, idle periods longer
// than 10 minutes, Java correlation IDs numbered per client across
// connections. Expectations come from SPEC.md and README.md only.

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kwatch/kwatch/internal/pcapgen"
)

type bb8fClient struct {
	name     string
	java     bool // correlation IDs numbered per client across connections
	inst     *[16]byte
	clientID string
	corr     int32
	host     netip.Addr
	member   string // KIP-848 member ID ("" = none)
	group    string
	epoch    int32
	telem    [16]byte // legacy telemetry ID (body R) when non-zero
	subID    int32
}

type bb8fConn struct {
	cl      *bb8fClient
	cn      *pcapgen.Conn
	s       *pcapgen.Session
	role    string // "prod", "cons", "classic", "cgh"
	idle    bool   // silent from round idleFrom to idleTo
	started bool
}

type bb8fWorld struct {
	c       *pcapgen.Capture
	rng     *rand.Rand
	written int // requests written
	lost    int // requests whose bytes were (partly) lost
	gaps    int // losses after the connection's first captured byte
	midLost int // requests cut by the capture's start
	mids    int // mid-stream connections (including idle splits)
	per     map[string][2]int
	port    uint16
}

var bb8fBrokers = []netip.AddrPort{
	netip.MustParseAddrPort("10.0.0.1:9092"),
	netip.MustParseAddrPort("10.0.0.2:9092"),
	netip.MustParseAddrPort("10.0.0.3:9092"),
}

func (w *bb8fWorld) conn(cl *bb8fClient, broker int, role string, syn bool, p *pcapgen.Perturb) *bb8fConn {
	w.port++
	o := pcapgen.ConnOptions{
		Client:  netip.AddrPortFrom(cl.host, 40000+w.port),
		Broker:  bb8fBrokers[broker%len(bb8fBrokers)],
		NoSYN:   !syn,
		Perturb: p,
	}
	if !syn {
		w.mids++
	}
	cn := w.c.Conn(o)
	h := pcapgen.RequestHeader{InstanceID: cl.inst}
	if cl.inst == nil || syn {
		h.ClientID = pcapgen.Ptr(cl.clientID)
	}
	s := cn.Session(h)
	s.Header.CorrelationID = int32(100 + w.rng.IntN(5000))
	return &bb8fConn{cl: cl, cn: cn, s: s, role: role}
}

// after records the header template change of a KIP-1313 client after the
// connection's first request: client ID null from then on.
func (k *bb8fConn) after() {
	if k.cl.inst != nil {
		k.s.Header.ClientID = nil
	}
	k.started = true
}

func (w *bb8fWorld) pipeline(k *bb8fConn, bodies ...kmsg.Request) []int32 {
	if k.cl.java {
		k.s.Header.CorrelationID = k.cl.corr
	}
	var corrs []int32
	var frames []int
	if len(bodies) == 1 || k.s.Header.ClientID != nil && k.cl.inst != nil {
		// the first request of a KIP-1313 connection is alone in its write
		for i, b := range bodies {
			c, f := k.s.Request(b)
			corrs = append(corrs, c)
			frames = append(frames, f)
			if i == 0 {
				k.after()
			}
		}
	} else {
		corrs, frames = k.s.Pipeline(bodies...)
	}
	k.after()
	if k.cl.java {
		// other connections of the same client take numbers in between
		k.cl.corr = k.s.Header.CorrelationID + int32(w.rng.IntN(6))
	}
	if w.per == nil {
		w.per = map[string][2]int{}
	}
	pc := w.per[k.cn.Client().String()]
	for _, f := range frames {
		w.written++
		pc[0]++
		if f == 0 {
			w.lost++
			pc[1]++
		}
	}
	w.per[k.cn.Client().String()] = pc

	return corrs
}

func (w *bb8fWorld) respond(k *bb8fConn, corrs []int32, resps ...kmsg.Response) {
	var frames [][]byte
	for i, r := range resps {
		frames = append(frames, pcapgen.EncodeResponse(corrs[i], r.GetVersion(), r))
	}
	k.cn.Reply(frames...)
}

func bb8fRecords(rng *rand.Rand, n int) []byte {
	// a v2 record batch header, then JSON-like record values with varints
	b := make([]byte, 0, n+64)
	b = append(b, 0, 0, 0, 0, 0, 0, 0x12, 0x34) // base offset
	b = append(b, 0, 0, 0, 0)                   // length (not checked)
	b = append(b, 0, 0, 0, 3, 2)                // leader epoch, magic
	b = append(b, 0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 0, 0, 9)
	for len(b) < n {
		v := fmt.Sprintf(`{"order":%d,"sku":"SKU-%05d","qty":%d,"ts":"2026-11-29T16:%02d:%02d"}`,
			rng.IntN(1e6), rng.IntN(99999), rng.IntN(9)+1, rng.IntN(60), rng.IntN(60))
		b = append(b, byte(len(v)*2), 0, byte(rng.IntN(128)), 0, byte(len(v)*2))
		b = append(b, v...)
		b = append(b, 0)
	}
	return b[:n]
}

var bb8fTopicID = pcapgen.SeqUUID(0x11)

// step makes connection k do one round of its traffic.
func (w *bb8fWorld) step(k *bb8fConn, round int) {
	cl := k.cl
	modern := cl.inst != nil
	switch k.role {
	case "prod":
		n := 1 + w.rng.IntN(3)
		var bodies []kmsg.Request
		var resps []kmsg.Response
		ver := int16(7)
		if modern {
			ver = 11
		}
		for range n {
			size := []int{180, 900, 3000, 7000}[w.rng.IntN(4)]
			bodies = append(bodies, pcapgen.Produce(ver, "orders", bb8fTopicID, bb8fRecords(w.rng, size)))
			resps = append(resps, pcapgen.ProduceResponse(ver, "orders", bb8fTopicID))
		}
		corrs := w.pipeline(k, bodies...)
		w.respond(k, corrs, resps...)
	case "cons", "cgh", "classic":
		ver := int16(11)
		if modern {
			ver = 16
		}
		corrs := w.pipeline(k, pcapgen.Fetch(ver, "orders", bb8fTopicID))
		size := []int{0, 400, 5000, 20000}[w.rng.IntN(4)]
		var recs []byte
		if size > 0 {
			recs = bb8fRecords(w.rng, size)
		}
		w.respond(k, corrs, pcapgen.FetchResponse(ver, "orders", bb8fTopicID, recs))
		switch k.role {
		case "cgh":
			w.heartbeat(k)
		case "classic":
			hb := kmsg.NewPtrHeartbeatRequest()
			hb.Version = 3
			hb.Group = cl.group
			hb.Generation = 7
			hb.MemberID = cl.member
			corrs := w.pipeline(k, hb)
			r := kmsg.NewPtrHeartbeatResponse()
			r.Version = 3
			w.respond(k, corrs, r)
		}
	}
	// telemetry every 8 rounds
	if round%8 == 3 {
		switch {
		case modern:
			if cl.subID == 0 {
				cl.subID = 77
				corrs := w.pipeline(k, pcapgen.GetTelemetrySubscriptions(*cl.inst))
				w.respond(k, corrs, pcapgen.GetTelemetrySubscriptionsResponse(0, [16]byte{}, cl.subID))
			}
			corrs := w.pipeline(k, pcapgen.PushTelemetry(*cl.inst, cl.subID))
			w.respond(k, corrs, pcapgen.PushTelemetryResponse(0))
		case cl.telem != [16]byte{}:
			corrs := w.pipeline(k, pcapgen.PushTelemetry(cl.telem, 55))
			w.respond(k, corrs, pcapgen.PushTelemetryResponse(0))
		}
	}
}

func (w *bb8fWorld) heartbeat(k *bb8fConn) {
	cl := k.cl
	corrs := w.pipeline(k, pcapgen.ConsumerGroupHeartbeat(1, cl.group, cl.member, cl.epoch))
	w.respond(k, corrs, pcapgen.ConsumerGroupHeartbeatResponse(1, 0, pcapgen.Ptr(cl.member), cl.epoch))
}

type bb8fPlan struct {
	plant bool
}

type bb8fBusy struct {
	w    *bb8fWorld
	c    *pcapgen.Capture
	conn int // connections in the capture (including idle splits)
}

// bb8fBuildBusy writes the busy-cluster capture. With plant, one violation
// per rule family is hidden in it.
func bb8fBuildBusy(t *testing.T, plant bool) bb8fBusy {
	t.Helper()
	c := pcapgen.New(pcapgen.Options{Seed: 8, Step: 200 * time.Microsecond})
	w := &bb8fWorld{c: c, rng: rand.New(rand.NewPCG(8, 15))}
	var conns []*bb8fConn
	host := func(n int) netip.Addr { return netip.AddrFrom4([4]byte{10, 2, byte(n / 200), byte(n%200 + 1)}) }
	perturbs := []*pcapgen.Perturb{nil, {MSS: 536}, {Reorder: 2}, {MSS: 1448, Reorder: 3, Shuffle: true}, {MSS: 8960}, {Reorder: 2, MSS: 700}}
	pi := 0
	nextP := func() *pcapgen.Perturb { pi++; return perturbs[pi%len(perturbs)] }
	hostN := 0
	// KIP-1313 Java producers: 8 clients, 3 broker connections each.
	var javaProd []*bb8fClient
	for i := range 8 {
		hostN++
		id := pcapgen.SeqUUID(byte(0x20 + 2*i))
		cl := &bb8fClient{name: fmt.Sprintf("java-prod-%d", i), java: true, inst: &id, clientID: fmt.Sprintf("orders-producer-%d", i), corr: int32(1000 * (i + 1)), host: host(hostN)}
		javaProd = append(javaProd, cl)
		for b := range 3 {
			conns = append(conns, w.conn(cl, b, "prod", false, nextP()))
		}
	}
	// KIP-1313 Java KIP-848 consumers: 6 clients, coordinator conn + fetch conn.
	for i := range 6 {
		hostN++
		id := pcapgen.SeqUUID(byte(0x60 + 2*i))
		cl := &bb8fClient{name: fmt.Sprintf("java-cons-%d", i), java: true, inst: &id, clientID: fmt.Sprintf("orders-consumer-%d", i), corr: int32(500 * (i + 1)), host: host(hostN), member: pcapgen.JavaString(id), group: "orders-g", epoch: int32(10 + i)}
		conns = append(conns, w.conn(cl, i, "cgh", false, nextP()), w.conn(cl, i+1, "cons", false, nextP()))
	}
	// Legacy producers (librdkafka-like, per-connection correlation IDs).
	var legProd []*bb8fClient
	for i := range 5 {
		hostN++
		cl := &bb8fClient{name: fmt.Sprintf("legacy-prod-%d", i), clientID: fmt.Sprintf("rdkafka-prod-%d", i), host: host(hostN)}
		if i%2 == 0 {
			cl.telem = pcapgen.SeqUUID(byte(0xc0 + i))
		}
		legProd = append(legProd, cl)
		conns = append(conns, w.conn(cl, i, "prod", false, nextP()), w.conn(cl, i+1, "prod", false, nextP()))
	}
	// Legacy classic consumers.
	for i := range 4 {
		hostN++
		cl := &bb8fClient{name: fmt.Sprintf("classic-%d", i), clientID: fmt.Sprintf("etl-%d", i), host: host(hostN), group: "etl", member: fmt.Sprintf("etl-%d-0b5e%04d", i, i)}
		conns = append(conns, w.conn(cl, i, "classic", false, nextP()))
	}
	// Legacy KIP-848 consumers without instance IDs.
	var legCGH []*bb8fClient
	for i := range 4 {
		hostN++
		m := pcapgen.SeqUUID(byte(0xd0 + 3*i))
		cl := &bb8fClient{name: fmt.Sprintf("legacy-cgh-%d", i), clientID: fmt.Sprintf("rdkafka-cons-%d", i), host: host(hostN), member: pcapgen.JavaString(m), group: "billing", epoch: int32(4 + i)}
		legCGH = append(legCGH, cl)
		conns = append(conns, w.conn(cl, i, "cgh", false, nil))
	}
	if plant {
		// member-id-collision: two legacy hosts, both alive, one member ID.
		legCGH[1].member = legCGH[0].member
	}
	// Idle connections: a Java producer's third connection, a legacy
	// producer's second, a legacy KIP-848 consumer.
	idle := map[*bb8fConn]bool{conns[2]: true, conns[8*3+6*2+1]: true, conns[len(conns)-1]: true}
	for k := range idle {
		k.idle = true
	}
	// Losses: connections (by index) that lose one segment at a round.
	type loss struct {
		conn, round int
		toClient    bool
	}
	losses := []loss{{4, 5, false}, {7, 9, false}, {16, 12, true}, {20, 6, false}, {26, 14, false}, {31, 18, true}, {8*3 + 6*2 + 3, 8, false}, {8*3 + 6*2 + 5, 21, true}}
	// Connections whose capture starts inside a request (first write cut).
	cutStart := map[int]bool{5: true, 10: true, 8*3 + 6*2 + 2: true}
	planted := map[string]int{}
	const rounds = 42
	idleFrom, idleTo := 3, 38 // 35 rounds of 20 s: 11m40s silent
	var ghost *bb8fConn
	for r := range rounds {
		for i, k := range conns {
			if k.idle && r >= idleFrom && r < idleTo {
				continue
			}
			if k.idle && r == idleTo {
				w.mids++ // README 16: speaking again is a new mid-stream connection
				k.cl.corr += 900
				k.s.Header.CorrelationID += 900
				v := int16(12)
				if k.cl.inst == nil {
					v = 9
				}
				corrs := w.pipeline(k, pcapgen.Metadata(v, "orders"))
				w.respond(k, corrs, pcapgen.MetadataResponse(v, "10.0.0.1", 9092))
			}
			if r == 0 && !cutStart[i] && !k.started {
				// a lone small request first, so that the capture's
				// start is not inside a reordered write (README 17)
				v := int16(12)
				if k.cl.inst == nil {
					v = 9
				}
				corrs := w.pipeline(k, pcapgen.Metadata(v, "orders"))
				w.respond(k, corrs, pcapgen.MetadataResponse(v, "10.0.0.1", 9092))
			}
			if r == 0 && cutStart[i] {
				k.cn.DropNext(1)
				before := w.lost
				w.step(k, r)
				w.midLost += w.lost - before
				continue
			}
			for _, l := range losses {
				if l.conn == i && l.round == r {
					if l.toClient {
						// lose the first segment of a big Fetch answer
						corrs := w.pipeline(k, pcapgen.Fetch(16-5*b2i(k.cl.inst == nil), "orders", bb8fTopicID))
						k.cn.DropNext(1)
						v := int16(16)
						if k.cl.inst == nil {
							v = 11
						}
						w.respond(k, corrs, pcapgen.FetchResponse(v, "orders", bb8fTopicID, bb8fRecords(w.rng, 9000)))
					} else {
						k.cn.DropNext(1)
					}
					w.gaps++
				}
			}
			if plant {
				switch {
				case r == 10 && k == conns[0]:
					// instance-id-changed: one request with another ID
					y := pcapgen.SeqUUID(0xf1)
					k.s.Header.InstanceID = &y
					corrs := w.pipeline(k, pcapgen.Metadata(12, "orders"))
					w.respond(k, corrs, pcapgen.MetadataResponse(12, "10.0.0.1", 9092))
					k.s.Header.InstanceID = k.cl.inst
					planted["instance-id-changed"]++
				case r == 12 && k.cl == legProd[0] && k == conns[8*3+6*2]:
					// client-id-changed: one request names another client
					k.s.Header.ClientID = pcapgen.Ptr("rdkafka-prod-0-tmp")
					corrs := w.pipeline(k, pcapgen.Metadata(9, "orders"))
					w.respond(k, corrs, pcapgen.MetadataResponse(9, "10.0.0.1", 9092))
					k.s.Header.ClientID = pcapgen.Ptr(k.cl.clientID)
					planted["client-id-changed"]++
				case r == 20 && k == conns[3]:
					// telemetry-id-mismatch: body ID differs from the header's
					corrs := w.pipeline(k, pcapgen.GetTelemetrySubscriptions(pcapgen.SeqUUID(0xe7)))
					w.respond(k, corrs, pcapgen.GetTelemetrySubscriptionsResponse(42, [16]byte{}, 0))
					planted["telemetry-id-mismatch"]++
				}
			}
			w.step(k, r)
		}
		if r == 15 {
			// a new legacy KIP-848 consumer connects (SYN) and joins; its
			// first join gets COORDINATOR_NOT_AVAILABLE and it retries.
			hostN++
			a := pcapgen.SeqUUID(0x05)
			cl := &bb8fClient{name: "ghosty", clientID: "rdkafka-late", host: host(hostN), member: pcapgen.JavaString(a), group: "billing", epoch: 0}
			ghost = w.conn(cl, 1, "cgh", true, nil)
			corrs := w.pipeline(ghost, pcapgen.APIVersions(3, "librdkafka", "2.6.0"))
			w.respond(ghost, corrs, pcapgen.APIVersionsResponse(3))
			corrs = w.pipeline(ghost, pcapgen.ConsumerGroupHeartbeat(1, "billing", cl.member, 0))
			w.respond(ghost, corrs, pcapgen.ConsumerGroupHeartbeatResponse(1, 15, nil, 0))
			if plant {
				cl.member = pcapgen.JavaString(pcapgen.SeqUUID(0x06))
				planted["ghost-member"]++
			}
			corrs = w.pipeline(ghost, pcapgen.ConsumerGroupHeartbeat(1, "billing", cl.member, 0))
			w.respond(ghost, corrs, pcapgen.ConsumerGroupHeartbeatResponse(1, 0, pcapgen.Ptr(cl.member), 1))
			cl.epoch = 1
			conns = append(conns, ghost)
		}
		c.Sleep(20 * time.Second)
	}
	if plant {
		planted["member-id-collision"]++
	}
	if err := c.Err(); err != nil {
		t.Fatal(err)
	}
	_ = planted
	return bb8fBusy{w: w, c: c, conn: w.mids + 1}
}

func b2i(b bool) int16 {
	if b {
		return 1
	}
	return 0
}

func bb8fCheckCoverage(t *testing.T, b bb8fBusy, rep bb7Report) {
	t.Helper()
	w := b.w
	if got := rep.Totals.Coverage["midstream-join"]; got != w.mids {
		t.Errorf("midstream-join %d, want %d (one per connection joined mid-stream, idle splits included)", got, w.mids)
	}
	if got := rep.Totals.Coverage["stream-gap"]; got != w.gaps {
		t.Errorf("stream-gap %d, want %d (one per lost segment)", got, w.gaps)
	}
	for _, ev := range []string{"framing-error", "tls-connection", "sasl-raw-tokens", "truncated-packet"} {
		if n := rep.Totals.Coverage[ev]; n != 0 {
			t.Errorf("coverage %s = %d, want 0", ev, n)
		}
	}
	if n := rep.Totals.Coverage["unmatched-response"]; n > w.lost {
		t.Errorf("unmatched-response %d, more than the %d requests lost", n, w.lost)
	}
	want := w.written - w.lost
	if rep.Totals.Requests != want {
		t.Errorf("totals.requests %d, want %d (%d written, %d lost with their bytes, %d of them cut by the capture's start)",
			rep.Totals.Requests, want, w.written, w.lost, w.midLost)
	}
	if rep.Totals.Connections != b.conn {
		t.Errorf("connections %d, want %d", rep.Totals.Connections, b.conn)
	}
}

// TestBB8FBusyClusterCompliant: a busy cluster joined mid-stream, compliant
// traffic only: zero findings, coverage only for what was lost.
func TestBB8FBusyClusterCompliant(t *testing.T) {
	b := bb8fBuildBusy(t, false)
	rep := bb7Run(t, b.c)
	bb7Expect(t, rep, map[string]int{})
	bb8fCheckCoverage(t, b, rep)
}

// TestBB8FBusyClusterPlanted: the same capture with one planted violation
// per rule family: exactly those, with SPEC/README confidence.
func TestBB8FBusyClusterPlanted(t *testing.T) {
	b := bb8fBuildBusy(t, true)
	rep := bb7Run(t, b.c)
	bb7Expect(t, rep, map[string]int{
		"instance-id-changed":   1,
		"client-id-changed":     1,
		"member-id-collision":   1,
		"ghost-member":          1,
		"telemetry-id-mismatch": 1,
	})
	// README 3: mid-stream + depends on the first request = partial.
	bb7Sev(t, rep, "instance-id-changed", "error", "partial")
	bb7Sev(t, rep, "client-id-changed", "warn", "partial")
	// Not first-request rules, on connections without a gap: full.
	bb7Sev(t, rep, "member-id-collision", "error", "full")
	bb7Sev(t, rep, "ghost-member", "error", "full")
	bb7Sev(t, rep, "telemetry-id-mismatch", "error", "full")
	bb8fCheckCoverage(t, b, rep)
}

// bb8fMidstream writes a mid-stream KIP-1313 (Java) connection whose
// capture starts as described by first, then rounds of answered pipelined
// Produce requests with Java correlation-ID jumps, and returns the capture
// and the correlation IDs README 13 requires decoded.
func bb8fMidstream(t *testing.T, p *pcapgen.Perturb, cutFirst bool, jump int32, sizes ...int) (*pcapgen.Capture, []int32) {
	t.Helper()
	c := pcapgen.New(pcapgen.Options{Seed: 3})
	id := pcapgen.SeqUUID(0x44)
	cn := c.Conn(pcapgen.ConnOptions{Client: netip.MustParseAddrPort("10.2.0.9:41000"), Broker: bb8fBrokers[0], NoSYN: true, Perturb: p})
	s := cn.Session(pcapgen.RequestHeader{InstanceID: &id})
	s.Header.CorrelationID = 2005
	rng := rand.New(rand.NewPCG(1, 2))
	var want []int32
	for r := range 6 {
		var bodies []kmsg.Request
		var resps [][]byte
		if len(sizes) == 0 {
			sizes = []int{3000, 900, 180}
		}
		for _, size := range sizes {
			bodies = append(bodies, pcapgen.Produce(11, "orders", bb8fTopicID, bb8fRecords(rng, size)))
		}
		if r == 0 && cutFirst {
			cn.DropNext(1)
		}
		corrs, frames := s.Pipeline(bodies...)
		for i, cr := range corrs {
			if frames[i] != 0 && !(r == 0 && i == 0) {
				want = append(want, cr)
			}
			resps = append(resps, pcapgen.EncodeResponse(cr, 11, pcapgen.ProduceResponse(11, "orders", bb8fTopicID)))
		}
		cn.Reply(resps...)
		s.Header.CorrelationID += jump
		c.Sleep(time.Second)
	}
	if err := c.Err(); err != nil {
		t.Fatal(err)
	}
	return c, want
}

func bb8fCheckCorrs(t *testing.T, c *pcapgen.Capture, want []int32) {
	t.Helper()
	path := bbCaptureFile(t, c, "")
	code, out, stderr := runKwatch("dump", "--format", "ndjson", path)
	if code != 0 {
		t.Fatalf("dump: exit %d: %s", code, stderr)
	}
	got := map[int32]bool{}
	var gotList []int32
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var o struct {
			Kind string `json:"kind"`
			Corr int32  `json:"correlation_id"`
		}
		if err := json.Unmarshal([]byte(line), &o); err == nil && o.Kind == "request" {
			got[o.Corr] = true
			gotList = append(gotList, o.Corr)
		}
	}
	var missing []int32
	for _, w := range want {
		if !got[w] {
			missing = append(missing, w)
		}
	}
	if len(missing) > 0 {
		t.Errorf("requests not decoded: %v (decoded %v; README 13: a null-client-ID request on a mid-stream connection is believed when the next request follows it or the broker answers it)", missing, gotList)
	}
	rep := bb7Read(t, path)
	bb7Expect(t, rep, map[string]int{})
}

// TestBB8FMidstreamCutFirstWrite: the capture starts inside a Produce
// (its first segment was before the capture); every later request, all
// answered, is decoded and nothing is flagged.
func TestBB8FMidstreamCutFirstWrite(t *testing.T) {
	for _, jump := range []int32{0, 11, 400} {
		t.Run(fmt.Sprint("jump", jump), func(t *testing.T) {
			c, want := bb8fMidstream(t, nil, true, jump)
			bb8fCheckCorrs(t, c, want)
		})
		// every request larger than 2 KB: only the broker's answers
		// vouch for them (README 13)
		t.Run(fmt.Sprint("large-jump", jump), func(t *testing.T) {
			c, want := bb8fMidstream(t, nil, true, jump, 3000, 3000, 7000)
			bb8fCheckCorrs(t, c, want)
		})
	}
}

// TestBB8FMidstreamReorderedStart: the capture's first segment of a
// connection is the second of a reordered write (README 17: the stream
// starts there). Requests wholly after that point, all answered, are
// decoded; nothing is flagged.
func TestBB8FMidstreamReorderedStart(t *testing.T) {
	for _, tc := range []struct {
		name  string
		p     pcapgen.Perturb
		jump  int32
		sizes []int
	}{
		{"small", pcapgen.Perturb{Reorder: 2}, 0, nil},
		{"small-jump", pcapgen.Perturb{Reorder: 2}, 11, nil},
		{"7seg", pcapgen.Perturb{Reorder: 2}, 0, []int{3000, 3000, 3000, 900}},
		{"7seg-jump", pcapgen.Perturb{Reorder: 2}, 11, []int{3000, 3000, 3000, 900}},
		{"shuffle3", pcapgen.Perturb{Reorder: 3, Shuffle: true, MSS: 1448}, 7, []int{3000, 3000, 7000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, want := bb8fMidstream(t, &tc.p, false, tc.jump, tc.sizes...)
			// the first Produce's header is in the segment before the start
			bb8fCheckCorrs(t, c, want)
		})
	}
}
