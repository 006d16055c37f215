//go:build e2e

package livebench

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/kwatch/kwatch/internal/pcapgen"
)

// Kafka API keys the generator speaks.
const (
	keyProduce   = 0
	keyVersions  = 18
	keyHeartbeat = 68
)

// errInvalidRequest is INVALID_REQUEST, what a broker answers a
// ConsumerGroupHeartbeat v1 join without a member ID (KIP-1082).
const errInvalidRequest = 42

// maxFrame bounds a frame the broker or client buffers: the largest request
// the generator sends is one record batch plus a few hundred header bytes.
const maxFrame = 4 << 20

// loadConfig is one generator run.
type loadConfig struct {
	// Conns is the number of client connections.
	Conns int
	// Payload is the size of each Produce record batch.
	Payload int
	// Rate is the total request bytes per second over all connections
	// (Kafka frames, size prefix included); 0 sends as fast as the broker
	// answers.
	Rate float64
	// Duration bounds the sending; each connection then waits for its last
	// responses and closes.
	Duration time.Duration
	// Window is the number of Produce requests a connection may have in
	// flight (pipelined) before it waits for a response.
	Window int
	// MaxBytes, when > 0, stops each connection once it has sent
	// MaxBytes/Conns request bytes, even before Duration.
	MaxBytes int64
	// ClientIDEveryRequest puts the client ID in every request header, as
	// today's clients do; false sends it on ApiVersions only, as a KIP-1313
	// client with a header instance ID may (the Produce headers then carry
	// a null client ID).
	ClientIDEveryRequest bool
}

// connResult is what one generator connection sent and had answered.
type connResult struct {
	Client    netip.AddrPort
	Requests  uint64 // ApiVersions + Produce, all answered
	Bytes     uint64 // request frame bytes written
	Responses uint64
	Err       error
}

// loadResult is a generator run's outcome.
type loadResult struct {
	Conns    []connResult
	Elapsed  time.Duration // first request to last response
	Requests uint64
	Bytes    uint64
}

// Rate is the achieved request byte rate.
func (r loadResult) Rate() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Bytes) / r.Elapsed.Seconds()
}

// Err joins the connections' errors.
func (r loadResult) Err() error {
	var errs []error
	for _, c := range r.Conns {
		if c.Err != nil {
			errs = append(errs, fmt.Errorf("connection %v: %w", c.Client, c.Err))
		}
	}
	return errors.Join(errs...)
}

// broker is a minimal Kafka broker on 127.0.0.1: it answers ApiVersions
// with a v4 response, every Produce with a ProduceResponse v11 and a
// ConsumerGroupHeartbeat with INVALID_REQUEST, in order; any other key ends
// the connection with an error.
type broker struct {
	ln       net.Listener
	wg       sync.WaitGroup
	versions []byte
	produce  []byte
	cgh      []byte

	mu    sync.Mutex
	conns map[net.Conn]bool
	errs  []error
}

// startBroker listens on an ephemeral loopback port.
func startBroker() (*broker, error) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("broker: listen: %w", err)
	}
	b := &broker{
		ln:       ln,
		versions: pcapgen.EncodeResponse(0, 4, pcapgen.APIVersionsResponse(4)),
		produce:  pcapgen.EncodeResponse(0, 11, pcapgen.ProduceResponse(11, loadTopic, loadTopicID)),
		cgh:      pcapgen.EncodeResponse(0, 1, pcapgen.ConsumerGroupHeartbeatResponse(1, errInvalidRequest, nil, 0)),
		conns:    map[net.Conn]bool{},
	}
	b.wg.Go(b.accept)
	return b, nil
}

// Port is the broker's TCP port.
func (b *broker) Port() int { return b.ln.Addr().(*net.TCPAddr).Port }

// Addr is the broker's address.
func (b *broker) Addr() string { return b.ln.Addr().String() }

// Close stops accepting, closes open connections and waits for their
// goroutines; it returns the first connection error (EOF is none).
func (b *broker) Close() error {
	b.ln.Close()
	b.mu.Lock()
	for c := range b.conns {
		c.Close()
	}
	b.mu.Unlock()
	b.wg.Wait()
	return errors.Join(b.errs...)
}

func (b *broker) accept() {
	for {
		c, err := b.ln.Accept()
		if err != nil {
			return
		}
		b.mu.Lock()
		b.conns[c] = true
		b.mu.Unlock()
		b.wg.Go(func() {
			err := b.serve(c)
			b.mu.Lock()
			delete(b.conns, c)
			if err != nil && !errors.Is(err, net.ErrClosed) {
				b.errs = append(b.errs, err)
			}
			b.mu.Unlock()
			c.Close()
		})
	}
}

// serve answers one connection's requests until the client closes it.
// Responses are buffered and flushed whenever no further request is
// already buffered, as a broker's network thread batches its writes.
func (b *broker) serve(c net.Conn) error {
	r := bufio.NewReaderSize(c, 256<<10)
	w := bufio.NewWriterSize(c, 64<<10)
	var hdr [12]byte
	for {
		if r.Buffered() < 4 {
			if err := w.Flush(); err != nil {
				return fmt.Errorf("broker: write: %w", err)
			}
		}
		if _, err := io.ReadFull(r, hdr[:4]); err != nil {
			if errors.Is(err, io.EOF) {
				return w.Flush()
			}
			return fmt.Errorf("broker: read: %w", err)
		}
		size := int(binary.BigEndian.Uint32(hdr[:4]))
		if size < 8 || size > maxFrame {
			return fmt.Errorf("broker: request size %d out of range", size)
		}
		if _, err := io.ReadFull(r, hdr[4:12]); err != nil {
			return fmt.Errorf("broker: read header: %w", err)
		}
		if _, err := r.Discard(size - 8); err != nil {
			return fmt.Errorf("broker: read body: %w", err)
		}
		key := int16(binary.BigEndian.Uint16(hdr[4:6]))
		corr := hdr[8:12]
		var resp []byte
		switch key {
		case keyVersions:
			resp = b.versions
		case keyProduce:
			resp = b.produce
		case keyHeartbeat:
			resp = b.cgh
		default:
			return fmt.Errorf("broker: unexpected API key %d", key)
		}
		// The response frames are shared by all connections: write them
		// around this request's correlation ID instead of patching them.
		if _, err := w.Write(resp[:4]); err != nil {
			return fmt.Errorf("broker: write: %w", err)
		}
		if _, err := w.Write(corr); err != nil {
			return fmt.Errorf("broker: write: %w", err)
		}
		if _, err := w.Write(resp[8:]); err != nil {
			return fmt.Errorf("broker: write: %w", err)
		}
	}
}

// The topic the generator produces to.
const loadTopic = "livebench"

var loadTopicID = [16]byte{0x6c, 0x69, 0x76, 0x65, 0x62, 0x65, 0x6e, 0x63, 0x68, 0, 0, 0, 0, 0, 0, 1}

// runLoad runs cfg against the broker at addr and returns when every
// connection has sent, been answered and closed, or ctx ends.
func runLoad(ctx context.Context, addr string, cfg loadConfig) loadResult {
	if cfg.Window <= 0 {
		cfg.Window = 8
	}
	rng := rand.New(rand.NewPCG(1, 2))
	payload := make([]byte, cfg.Payload)
	for i := range payload {
		payload[i] = byte(rng.Uint32())
	}
	res := loadResult{Conns: make([]connResult, cfg.Conns)}
	start := time.Now()
	var wg sync.WaitGroup
	for i := range cfg.Conns {
		var id [16]byte
		for j := range id {
			id[j] = byte(rng.Uint32())
		}
		id[6] = id[6]&0x0f | 0x40 // UUID version 4
		id[8] = id[8]&0x3f | 0x80 // RFC 4122 variant
		wg.Go(func() {
			res.Conns[i] = runConn(ctx, addr, cfg, start, i, id, payload)
		})
	}
	wg.Wait()
	res.Elapsed = time.Since(start)
	for _, c := range res.Conns {
		res.Requests += c.Requests
		res.Bytes += c.Bytes
	}
	return res
}

// runConn is one client connection: ApiVersions, then paced, pipelined
// Produce requests until the deadline, then a ConsumerGroupHeartbeat v1
// join without a member ID, which kwatch reports as member-id-empty: one
// such finding per connection proves kwatch decoded the connection's last
// request. The connection closes cleanly once every response is in.
func runConn(ctx context.Context, addr string, cfg loadConfig, start time.Time, i int, id [16]byte, payload []byte) (res connResult) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp4", addr)
	if err != nil {
		res.Err = fmt.Errorf("dial: %w", err)
		return res
	}
	defer c.Close()
	res.Client = c.LocalAddr().(*net.TCPAddr).AddrPort()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()

	clientID := fmt.Sprintf("livebench-%d", i)
	apiReq := pcapgen.EncodeRequest(pcapgen.RequestHeader{ClientID: &clientID, InstanceID: &id, APIVersion: 4},
		pcapgen.APIVersions(4, "kwatch-livebench", "1.0"))
	ph := pcapgen.RequestHeader{InstanceID: &id, APIVersion: 11}
	if cfg.ClientIDEveryRequest {
		ph.ClientID = &clientID
	}
	produce := pcapgen.EncodeRequest(ph, pcapgen.Produce(11, loadTopic, loadTopicID, payload))
	ph.APIVersion = 1
	join := pcapgen.EncodeRequest(ph, pcapgen.ConsumerGroupHeartbeat(1, clientID, "", 0))

	// The receiver checks every response's correlation ID against the
	// order of the requests and hands a window credit back per response.
	credits := make(chan struct{}, cfg.Window)
	sent := make(chan int32, cfg.Window+1) // correlation IDs in flight, in order
	recvDone := make(chan error, 1)
	var responses uint64
	go func() {
		r := bufio.NewReaderSize(c, 64<<10)
		var hdr [8]byte
		for want := range sent {
			if _, err := io.ReadFull(r, hdr[:]); err != nil {
				recvDone <- fmt.Errorf("reading response %d: %w", want, err)
				return
			}
			size := int(binary.BigEndian.Uint32(hdr[:4]))
			if size < 4 || size > maxFrame {
				recvDone <- fmt.Errorf("response size %d out of range", size)
				return
			}
			if got := int32(binary.BigEndian.Uint32(hdr[4:])); got != want {
				recvDone <- fmt.Errorf("response correlation ID %d, want %d", got, want)
				return
			}
			if _, err := r.Discard(size - 4); err != nil {
				recvDone <- fmt.Errorf("reading response %d: %w", want, err)
				return
			}
			responses++
			<-credits
		}
		recvDone <- nil
	}()

	send := func(frame []byte, corr int32) error {
		binary.BigEndian.PutUint32(frame[8:], uint32(corr))
		select {
		case credits <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		sent <- corr
		if _, err := c.Write(frame); err != nil {
			return fmt.Errorf("write request %d: %w", corr, err)
		}
		res.Requests++
		res.Bytes += uint64(len(frame))
		return nil
	}

	err = send(apiReq, 0)
	deadline := start.Add(cfg.Duration)
	perConn := cfg.Rate / float64(cfg.Conns)
	var maxBytes uint64
	if cfg.MaxBytes > 0 {
		maxBytes = uint64(cfg.MaxBytes) / uint64(cfg.Conns)
	}
	corr := int32(1)
	for ; err == nil; corr++ {
		now := time.Now()
		if !now.Before(deadline) || maxBytes > 0 && res.Bytes >= maxBytes {
			break
		}
		if perConn > 0 {
			// Pace on bytes sent so far: sleeping to the due time keeps the
			// long-run rate exact whatever the sleep granularity.
			due := start.Add(time.Duration(float64(res.Bytes) / perConn * float64(time.Second)))
			if due.After(deadline) {
				break
			}
			if d := due.Sub(now); d > 0 {
				time.Sleep(d)
			}
		}
		err = send(produce, corr)
	}
	if err == nil {
		err = send(join, corr)
	}
	close(sent)
	rerr := <-recvDone
	res.Responses = responses
	res.Err = errors.Join(err, rerr)
	if res.Err == nil && res.Responses != res.Requests {
		res.Err = fmt.Errorf("%d requests sent, %d answered", res.Requests, res.Responses)
	}
	return res
}
