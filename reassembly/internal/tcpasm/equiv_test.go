package tcpasm

import (
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"net/netip"
	"reflect"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	upstream "github.com/gopacket/gopacket/reassembly"
)

// The fork must make the same Stream calls, with the same arguments, as the
// gopacket release it was taken from. These tests run one script of packets
// and flushes through both and compare what every Stream saw.

// eqLog records the calls made to the Streams of one Assembler: one list of
// calls per Stream, in creation order. Calls of different connections made
// during a flush come in map order, so only each Stream's own calls are
// compared, each tagged with the step that made it.
type eqLog struct {
	step    int
	streams [][]string
	news    []string
}

func (l *eqLog) add(i int, format string, args ...any) {
	l.streams[i] = append(l.streams[i], fmt.Sprintf("step %d: ", l.step)+fmt.Sprintf(format, args...))
}

// frameOf turns a capture time set by eqScript into microseconds, or -1
// for none.
func frameOf(ci gopacket.CaptureInfo) int64 {
	if ci.Timestamp.IsZero() {
		return -1
	}
	return ci.Timestamp.Sub(eqBase).Microseconds()
}

var eqBase = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// The decisions a Stream takes are functions of what it is shown, so that
// both Assemblers get the same answers.
func eqRefuse(t *layers.TCP) bool     { return t.Seq%23 == 5 && !t.SYN }
func eqDecline(t *layers.TCP) bool    { return t.Seq%29 == 7 }
func eqForceStart(t *layers.TCP) bool { return t.Seq%3 == 0 }
func eqRemoveOnComplete(i int) bool   { return i%2 == 0 }

// eqKeep is the offset a Stream keeps from, or -1.
func eqKeep(n int, data []byte) int {
	if n == 0 || data[0]%4 != 0 {
		return -1
	}
	return n - int(data[0])%(n+1)
}

// eqSample lists the offsets whose CaptureInfo is recorded.
func eqSample(n int) []int { return []int{-1, 0, n / 2, n - 1, n} }

func eqPkt(t *layers.TCP) string {
	return fmt.Sprintf("seq=%d ack=%d syn=%v ack=%v fin=%v rst=%v len=%d", t.Seq, t.Ack, t.SYN, t.ACK, t.FIN, t.RST, len(t.Payload))
}

// Fork side.

type eqFactory struct{ log *eqLog }

type eqStream struct {
	log *eqLog
	i   int
}

func (f *eqFactory) New(netFlow, tcpFlow gopacket.Flow, t *layers.TCP, ac AssemblerContext) Stream {
	f.log.news = append(f.log.news, fmt.Sprintf("step %d: %v %v %s frame=%d", f.log.step, netFlow, tcpFlow, eqPkt(t), frameOf(ac.GetCaptureInfo())))
	if eqDecline(t) {
		return nil
	}
	f.log.streams = append(f.log.streams, nil)
	return &eqStream{log: f.log, i: len(f.log.streams) - 1}
}

func (s *eqStream) Accept(t *layers.TCP, ci gopacket.CaptureInfo, dir TCPFlowDirection, nextSeq, _ Sequence, start *bool, ac AssemblerContext) bool {
	s.log.add(s.i, "accept %s ci=%d ac=%d dir=%v next=%d start=%v", eqPkt(t), frameOf(ci), frameOf(ac.GetCaptureInfo()), bool(dir), nextSeq, *start)
	if nextSeq < 0 && eqForceStart(t) {
		*start = true
	}
	return !eqRefuse(t)
}

func (s *eqStream) ReassembledSG(sg ScatterGather, ac AssemblerContext) {
	n, saved := sg.Lengths()
	dir, start, end, skip := sg.Info()
	data := sg.Fetch(n)
	var cis []int64
	for _, off := range eqSample(n) {
		cis = append(cis, frameOf(sg.CaptureInfo(off)))
	}
	l, sum := len(data), crc32.ChecksumIEEE(data)
	s.log.add(s.i, "sg len=%d saved=%d dir=%v start=%v end=%v skip=%d stats=%+v data=%d/%08x cis=%v ac=%d",
		n, saved, bool(dir), start, end, skip, sg.Stats(), l, sum, cis, frameOf(ac.GetCaptureInfo()))
	if k := eqKeep(n, data); k >= 0 {
		sg.KeepFrom(k)
	}
}

func (s *eqStream) ReassemblyComplete(ac AssemblerContext) bool {
	s.log.add(s.i, "complete ac-nil=%v", ac == nil)
	return eqRemoveOnComplete(s.i)
}

// Upstream side.

type upFactory struct{ log *eqLog }

type upStream struct {
	log *eqLog
	i   int
}

func (f *upFactory) New(netFlow, tcpFlow gopacket.Flow, t *layers.TCP, ac upstream.AssemblerContext) upstream.Stream {
	f.log.news = append(f.log.news, fmt.Sprintf("step %d: %v %v %s frame=%d", f.log.step, netFlow, tcpFlow, eqPkt(t), frameOf(ac.GetCaptureInfo())))
	if eqDecline(t) {
		return nil
	}
	f.log.streams = append(f.log.streams, nil)
	return &upStream{log: f.log, i: len(f.log.streams) - 1}
}

func (s *upStream) Accept(t *layers.TCP, ci gopacket.CaptureInfo, dir upstream.TCPFlowDirection, nextSeq upstream.Sequence, start *bool, ac upstream.AssemblerContext) bool {
	s.log.add(s.i, "accept %s ci=%d ac=%d dir=%v next=%d start=%v", eqPkt(t), frameOf(ci), frameOf(ac.GetCaptureInfo()), bool(dir), nextSeq, *start)
	if nextSeq < 0 && eqForceStart(t) {
		*start = true
	}
	return !eqRefuse(t)
}

func (s *upStream) ReassembledSG(sg upstream.ScatterGather, ac upstream.AssemblerContext) {
	n, saved := sg.Lengths()
	dir, start, end, skip := sg.Info()
	data := sg.Fetch(n)
	var cis []int64
	for _, off := range eqSample(n) {
		cis = append(cis, frameOf(sg.CaptureInfo(off)))
	}
	l, sum := len(data), crc32.ChecksumIEEE(data)
	st := sg.Stats()
	s.log.add(s.i, "sg len=%d saved=%d dir=%v start=%v end=%v skip=%d stats=%+v data=%d/%08x cis=%v ac=%d",
		n, saved, bool(dir), start, end, skip, TCPAssemblyStats(st), l, sum, cis, frameOf(ac.GetCaptureInfo()))
	if k := eqKeep(n, data); k >= 0 {
		sg.KeepFrom(k)
	}
}

func (s *upStream) ReassemblyComplete(ac upstream.AssemblerContext) bool {
	s.log.add(s.i, "complete ac-nil=%v", ac == nil)
	return eqRemoveOnComplete(s.i)
}

// eqCtx is the AssemblerContext of a packet.
type eqCtx struct{ ci gopacket.CaptureInfo }

func (c *eqCtx) GetCaptureInfo() gopacket.CaptureInfo { return c.ci }

// eqConn is a connection of the script: its endpoints and, per direction,
// the next sequence number a sender would use.
type eqConn struct {
	a, b netip.AddrPort
	next [2]uint32
}

// eqAsm is an Assembler under comparison.
type eqAsm interface {
	assemble(src, dst netip.AddrPort, tcp *layers.TCP, ac *eqCtx, viaAddrs bool)
	flush(opt FlushOptions) (flushed, closed int)
	flushAll() int
	setLimits(perConn, total int)
}

type forkAsm struct{ *Assembler }

func (a forkAsm) assemble(src, dst netip.AddrPort, tcp *layers.TCP, ac *eqCtx, viaAddrs bool) {
	if viaAddrs {
		a.AssembleAddrs(src, dst, tcp, ac.ci.Timestamp, 0, ac)
	} else {
		a.AssembleWithContext(flowOf(src, dst), tcp, ac)
	}
}
func (a forkAsm) flush(opt FlushOptions) (int, int) { return a.FlushWithOptions(opt) }
func (a forkAsm) flushAll() int                     { return a.FlushAll() }
func (a forkAsm) setLimits(perConn, total int) {
	a.MaxBufferedPagesPerConnection, a.MaxBufferedPagesTotal = perConn, total
}

type upAsm struct{ *upstream.Assembler }

func (a upAsm) assemble(src, dst netip.AddrPort, tcp *layers.TCP, ac *eqCtx, _ bool) {
	a.AssembleWithContext(flowOf(src, dst), tcp, ac)
}
func (a upAsm) flush(opt FlushOptions) (int, int) {
	return a.FlushWithOptions(upstream.FlushOptions{T: opt.T, TC: opt.TC})
}
func (a upAsm) flushAll() int { return a.FlushAll() }
func (a upAsm) setLimits(perConn, total int) {
	a.MaxBufferedPagesPerConnection, a.MaxBufferedPagesTotal = perConn, total
}

func newFork(log *eqLog, fast bool) eqAsm {
	a := NewAssembler(NewStreamPool(&eqFactory{log: log}))
	a.noFastPath = !fast
	return forkAsm{a}
}

func newUpstream(log *eqLog) eqAsm {
	a := upstream.NewAssembler(upstream.NewStreamPool(&upFactory{log: log}))
	a.AssemblerOptions = upstream.AssemblerOptions{}
	return upAsm{a}
}

// eqScript runs the packets and flushes that src describes through two
// Assemblers, payloads up to maxPayload bytes, and fails if any Stream saw
// something different.
func eqScript(t *testing.T, src func() byte, steps, maxPayload int, mk func(l1, l2 *eqLog) (eqAsm, eqAsm)) {
	t.Helper()
	conns := []*eqConn{
		{a: netip.MustParseAddrPort("10.0.0.1:50000"), b: netip.MustParseAddrPort("10.0.0.2:9092")},
		{a: netip.MustParseAddrPort("10.0.0.1:50001"), b: netip.MustParseAddrPort("10.0.0.2:9092")},
		{a: netip.MustParseAddrPort("[fd00::1]:40000"), b: netip.MustParseAddrPort("[fd00::2]:9092")},
		// The same address on both sides: both directions are one half.
		{a: netip.MustParseAddrPort("127.0.0.1:7000"), b: netip.MustParseAddrPort("127.0.0.1:7000")},
	}
	for i, c := range conns {
		c.next = [2]uint32{uint32(1000 * (i + 1)), 0xfffff000 + uint32(i)}
	}
	l1, l2 := &eqLog{}, &eqLog{}
	a1, a2 := mk(l1, l2)
	limits := src()
	perConn, total := 0, 0
	if limits&1 != 0 {
		perConn = 4
	}
	if limits&2 != 0 {
		total = 6
	}
	a1.setLimits(perConn, total)
	a2.setLimits(perConn, total)
	payload := make([]byte, maxPayload+64)
	for i := range payload {
		payload[i] = byte(i*7 + i>>8)
	}
	now := eqBase
	for step := 1; step <= steps; step++ {
		l1.step, l2.step = step, step
		op := src()
		if op%16 == 15 {
			// A flush, by packet time: what is older than a few packets.
			older := time.Duration(src()%8) * time.Microsecond
			closeOlder := time.Duration(src()%16) * time.Microsecond
			opt := FlushOptions{T: now.Add(-older), TC: now.Add(-closeOlder)}
			if src()%2 == 0 {
				opt.TC = time.Time{}
			}
			f1, c1 := a1.flush(opt)
			f2, c2 := a2.flush(opt)
			if f1 != f2 || c1 != c2 {
				t.Errorf("step %d: flush returned %d, %d and %d, %d", step, f1, c1, f2, c2)
			}
			continue
		}
		c := conns[int(src())%len(conns)]
		dir := int(op>>4) & 1
		from, to := c.a, c.b
		if dir == 1 {
			from, to = to, from
		}
		var tcp layers.TCP
		tcp.SrcPort, tcp.DstPort = layers.TCPPort(from.Port()), layers.TCPPort(to.Port())
		tcp.ACK = src()%4 != 0
		tcp.Ack = c.next[1-dir]
		n := int(src()) * int(src()) / 13 // mostly small, up to 5000
		n = min(n, maxPayload)
		seq := c.next[dir]
		advance := true
		switch op % 15 {
		case 0, 1, 2, 3, 4, 5: // in order
		case 6: // pure ACK
			n = 0
		case 7: // ahead: a hole before it
			seq += uint32(src())*uint32(src()) + 1
			advance = false
		case 8: // retransmission, or overlapping the end of what was sent
			seq -= uint32(src()) * 8
		case 9:
			tcp.SYN = true
			tcp.ACK = dir == 1
			seq -= 1
			if src()%2 == 0 {
				n = 0
			}
		case 10:
			tcp.FIN = true
			if src()%2 == 0 {
				n = 0
			}
		case 11:
			tcp.RST = true
			n = 0
			if src()%2 == 0 {
				seq += uint32(src())
			}
		case 12: // a new ISN
			c.next[dir] += 0x10000000
			seq = c.next[dir]
			tcp.SYN = src()%2 == 0
		case 13: // keep-alive
			seq--
			n = min(n, 1)
			advance = false
		case 14: // ahead with a FIN
			seq += uint32(src()) + 1
			tcp.FIN = true
			advance = false
		}
		tcp.Seq = seq
		tcp.Payload = payload[int(src())%64:][:n]
		tcp.SetInternalPortsForTesting()
		if advance {
			end := seq + uint32(len(tcp.Payload))
			if tcp.SYN || tcp.FIN {
				end++
			}
			if int32(end-c.next[dir]) > 0 {
				c.next[dir] = end
			}
		}
		if src()%8 != 0 {
			now = now.Add(time.Microsecond)
		}
		ctx := &eqCtx{ci: gopacket.CaptureInfo{Timestamp: now}}
		viaAddrs := src()%2 == 0
		a1.assemble(from, to, &tcp, ctx, viaAddrs)
		a2.assemble(from, to, &tcp, ctx, !viaAddrs)
	}
	l1.step, l2.step = steps+1, steps+1
	if n1, n2 := a1.flushAll(), a2.flushAll(); n1 != n2 {
		t.Fatalf("FlushAll closed %d and %d connections", n1, n2)
	}
	for i := range min(len(l2.streams), len(l1.streams)) {
		f, u := l1.streams[i], l2.streams[i]
		for j := range max(len(f), len(u)) {
			var fs, us string
			if j < len(f) {
				fs = f[j]
			}
			if j < len(u) {
				us = u[j]
			}
			if fs != us {
				t.Fatalf("stream %d, call %d:\nfirst:  %s\nsecond: %s", i, j, fs, us)
			}
		}
	}
	if !reflect.DeepEqual(l1.news, l2.news) {
		t.Fatalf("StreamFactory.New calls differ:\nfirst:  %q\nsecond: %q", l1.news, l2.news)
	}
}

// flowOf is the IP flow capture builds for a packet from src to dst.
func flowOf(src, dst netip.AddrPort) gopacket.Flow {
	if src.Addr().Is4() {
		return gopacket.NewFlow(layers.EndpointIPv4, src.Addr().AsSlice(), dst.Addr().AsSlice())
	}
	return gopacket.NewFlow(layers.EndpointIPv6, src.Addr().AsSlice(), dst.Addr().AsSlice())
}

// gopacket reuses pages without clearing their flags (see pageCache.next):
// with packets of more than one page, what it hands a Stream depends on
// which page comes back from its pool, and so on the order of flushes.
// Comparisons with gopacket keep to one-page packets.
const upstreamMaxPayload = pageBytes

func vsUpstream(l1, l2 *eqLog) (eqAsm, eqAsm) { return newFork(l1, true), newUpstream(l2) }
func vsGeneral(l1, l2 *eqLog) (eqAsm, eqAsm)  { return newFork(l1, true), newFork(l2, false) }

// TestSameAsGopacket runs random scripts through the fork and gopacket.
func TestSameAsGopacket(t *testing.T) {
	eqSeeds(t, upstreamMaxPayload, vsUpstream)
}

// TestFastPathSameAsGeneral runs random scripts, with packets of several
// pages, through the fork with and without its in-order fast path.  The
// two pools hash differently, so flushes visit connections in different
// orders too.
func TestFastPathSameAsGeneral(t *testing.T) {
	eqSeeds(t, 5000, vsGeneral)
}

func eqSeeds(t *testing.T, maxPayload int, mk func(l1, l2 *eqLog) (eqAsm, eqAsm)) {
	seeds := 400
	if testing.Short() {
		seeds = 40
	}
	for seed := range seeds {
		r := rand.New(rand.NewPCG(uint64(seed), 7))
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			eqScript(t, func() byte { return byte(r.Uint32()) }, 400, maxPayload, mk)
		})
	}
}

// FuzzSameAsGopacket reads the input as a script of packets and flushes.
// Invariant: every Stream sees the same calls, with the same arguments, from
// the fork as from gopacket v1.7.7 (one-page packets), and from the fork
// with its fast path as without (any packets).
func FuzzSameAsGopacket(f *testing.F) {
	f.Add([]byte{0, 0, 0, 10, 0, 1, 1, 0x10, 0, 1, 20, 3, 1, 7, 0, 0, 9, 9, 0, 1, 2})
	f.Add([]byte{3, 7, 1, 1, 200, 200, 3, 3, 0x1a, 1, 0, 0, 0, 0, 0, 0x0f, 1, 1, 0})
	f.Fuzz(func(t *testing.T, script []byte) {
		for _, c := range []struct {
			max int
			mk  func(l1, l2 *eqLog) (eqAsm, eqAsm)
		}{{upstreamMaxPayload, vsUpstream}, {5000, vsGeneral}} {
			i := 0
			src := func() byte {
				if i >= len(script) {
					return 0
				}
				i++
				return script[i-1]
			}
			eqScript(t, src, len(script)/4, c.max, c.mk)
		}
	})
}

// TestPageReuseClearsFlags: a page back from the pool is as clean as a new
// one.
func TestPageReuseClearsFlags(t *testing.T) {
	pc := newPageCache()
	var dirty []*page
	for range 100 {
		p := pc.next(eqBase)
		p.start, p.end, p.first = true, true, true
		dirty = append(dirty, p)
	}
	for _, p := range dirty {
		pc.replace(p)
	}
	for range 100 {
		if p := pc.next(eqBase); p.start || p.end || p.first {
			t.Fatalf("page from the pool has start=%v end=%v first=%v", p.start, p.end, p.first)
		}
	}
}

// makeKey returns the key of a packet from src to dst, and whether src is
// its lo endpoint.
func makeKey(src, dst endpoint) (key, bool) {
	var k key
	lo := k.set(src, dst)
	return k, lo
}

// TestKeySameBothWays: a connection's packets find it whichever of
// AssembleAddrs and AssembleWithContext they come through.
func TestKeySameBothWays(t *testing.T) {
	for _, tc := range []struct{ name, a, b string }{
		{"ipv4", "192.0.2.1:40000", "192.0.2.9:9092"},
		{"ipv6", "[2001:db8::1]:40000", "[2001:db8::9]:9092"},
		{"4in6", "[::ffff:192.0.2.1]:40000", "[::ffff:192.0.2.9]:9092"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := netip.MustParseAddrPort(tc.a), netip.MustParseAddrPort(tc.b)
			for _, pair := range [][2]netip.AddrPort{{a, b}, {b, a}} {
				src, dst := pair[0], pair[1]
				nf := flowOf(src, dst)
				fs, fd := nf.Endpoints()
				k1, lo1 := makeKey(flowEndpoint(nf.EndpointType(), fs.Raw(), src.Port()), flowEndpoint(nf.EndpointType(), fd.Raw(), dst.Port()))
				k2, lo2 := makeKey(addrEndpoint(src), addrEndpoint(dst))
				if k1 != k2 || lo1 != lo2 {
					t.Errorf("%v -> %v: keys %+v/%v and %+v/%v", src, dst, k1, lo1, k2, lo2)
				}
				if got := addrFlow(src, dst); got != nf {
					t.Errorf("addrFlow(%v, %v) = %v, want %v", src, dst, got, nf)
				}
			}
			ka, _ := makeKey(addrEndpoint(a), addrEndpoint(b))
			kb, _ := makeKey(addrEndpoint(b), addrEndpoint(a))
			if ka != kb {
				t.Errorf("the two directions have different keys")
			}
		})
	}
}
