//go:build e2e

package e2e

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync"
)

// advertisedListener is the broker's real listener with Addr() replaced by
// its proxy's address. kfake advertises b.ln.Addr() in Metadata
// (cluster.go, broker.hostport), so kgo learns and dials the proxies only.
type advertisedListener struct {
	net.Listener
	addr net.Addr
}

func (l *advertisedListener) Addr() net.Addr { return l.addr }

// proxies owns one recording proxy per kfake broker.
type proxies struct {
	rec *recorder
	// acceptor, when set, serves a front listener instead of accept (it
	// calls wg.Done when it returns).
	acceptor func(front net.Listener, target string)

	mu    sync.Mutex
	lns   []net.Listener
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

func newProxies(rec *recorder) *proxies {
	return &proxies{rec: rec, conns: make(map[net.Conn]struct{})}
}

// listen is kfake's ListenFn: it opens the broker's real listener and a
// proxy listener in front of it, and hands kfake the real one disguised as
// the proxy.
func (p *proxies) listen(network, address string) (net.Listener, error) {
	real, err := net.Listen(network, address)
	if err != nil {
		return nil, fmt.Errorf("broker listener: %w", err)
	}
	front, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		real.Close()
		return nil, fmt.Errorf("proxy listener: %w", err)
	}
	p.mu.Lock()
	p.lns = append(p.lns, front)
	p.mu.Unlock()
	p.wg.Add(1)
	if p.acceptor != nil {
		go p.acceptor(front, real.Addr().String())
	} else {
		go p.accept(front, real.Addr().String())
	}
	return &advertisedListener{Listener: real, addr: front.Addr()}, nil
}

// Addrs returns the proxy addresses, one per broker, for kgo's seeds.
func (p *proxies) Addrs() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, ln := range p.lns {
		out = append(out, ln.Addr().String())
	}
	return out
}

// Close stops accepting, closes every live connection and waits for all
// proxy goroutines.
func (p *proxies) Close() {
	p.mu.Lock()
	for _, ln := range p.lns {
		ln.Close()
	}
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

func (p *proxies) track(c net.Conn, add bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if add {
		p.conns[c] = struct{}{}
	} else {
		delete(p.conns, c)
	}
}

func (p *proxies) accept(front net.Listener, target string) {
	defer p.wg.Done()
	for {
		client, err := front.Accept()
		if err != nil {
			return
		}
		broker, err := net.Dial("tcp", target)
		if err != nil {
			client.Close()
			continue
		}
		p.track(client, true)
		p.track(broker, true)
		fl := p.rec.newFlow(addrPort(client.RemoteAddr()), addrPort(front.Addr()))
		p.wg.Add(1)
		go p.serve(fl, client.(*net.TCPConn), broker.(*net.TCPConn))
	}
}

// serve pipes both directions of one connection and closes both sockets
// when both directions are done.
func (p *proxies) serve(fl *flow, client, broker *net.TCPConn) {
	defer p.wg.Done()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); p.pipe(fl, true, client, broker) }()
	go func() { defer wg.Done(); p.pipe(fl, false, broker, client) }()
	wg.Wait()
	client.Close()
	broker.Close()
	p.track(client, false)
	p.track(broker, false)
}

// pipe copies src to dst. Each read is recorded before it is forwarded, so
// the pcap holds a request before any response it causes.
func (p *proxies) pipe(fl *flow, fromClient bool, src, dst *net.TCPConn) {
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.rec.data(fl, fromClient, buf[:n])
			if _, werr := dst.Write(buf[:n]); werr != nil {
				p.rec.fin(fl, !fromClient, true)
				src.Close()
				dst.Close()
				return
			}
		}
		if err != nil {
			// A clean EOF is a FIN: pass the half-close on. Anything
			// else (reset, our own Close at teardown) is recorded as RST.
			p.rec.fin(fl, fromClient, !errors.Is(err, io.EOF))
			if errors.Is(err, io.EOF) {
				dst.CloseWrite()
			} else {
				dst.Close()
			}
			return
		}
	}
}

func addrPort(a net.Addr) netip.AddrPort {
	if ta, ok := a.(*net.TCPAddr); ok {
		ap := ta.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	ap, _ := netip.ParseAddrPort(a.String())
	return ap
}
