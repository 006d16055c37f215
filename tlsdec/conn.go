package tlsdec

import (
	"errors"
	"fmt"

	"github.com/kwatch/kwatch/flow"
)

// Status is what a Conn has concluded about its connection.
type Status uint8

const (
	// StatusHandshake: the hellos have not both been seen yet.
	StatusHandshake Status = iota
	// StatusWaiting: the hellos were seen, the secrets are not known yet,
	// and the key log is followed (KeyLog.Follow): records are held (up to
	// Options.MaxHeld bytes) until they are.
	StatusWaiting
	// StatusDecrypting: keyed; application data goes to the Output.
	StatusDecrypting
	// StatusNoSecrets (final): the secrets never came, or the held records
	// outgrew their bound first.
	StatusNoSecrets
	// StatusUnsupported (final): a version or cipher suite tlsdec does not
	// decrypt, or a handshake it could not follow.
	StatusUnsupported
	// StatusFailed (final): a record failed to authenticate (wrong secrets,
	// or bytes that are not this connection's records) or was malformed.
	// Nothing after it is decrypted.
	StatusFailed
	// StatusLost (final): bytes of the stream were lost; decryption stops.
	StatusLost
)

var statusNames = [...]string{
	StatusHandshake:   "handshake",
	StatusWaiting:     "waiting-for-secrets",
	StatusDecrypting:  "decrypting",
	StatusNoSecrets:   "no-secrets",
	StatusUnsupported: "unsupported",
	StatusFailed:      "failed",
	StatusLost:        "lost",
}

func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return "unknown"
}

// Final reports whether s can no longer change.
func (s Status) Final() bool { return s >= StatusNoSecrets }

// Output receives a connection's decrypted application data, in stream
// order per side, with the Meta of the packet that carried the last byte of
// the record. p is valid only during the call.
type Output interface {
	Plain(side flow.Side, p []byte, m flow.Meta)
}

// Options tune a Conn. The zero value is usable.
type Options struct {
	// MaxHeld bounds the record bytes held while the secrets are not known
	// (default DefaultMaxHeld). Reaching it ends the wait: StatusNoSecrets.
	MaxHeld int
}

// DefaultMaxHeld is the default of Options.MaxHeld.
const DefaultMaxHeld = 1 << 20

// Stats counts what Conns did; Add sums them.
type Stats struct {
	// Connections: Conns made (client streams starting with a handshake
	// record). Decrypted: those keyed.
	Connections, Decrypted uint64
	// Records decrypted, and the application data bytes they held.
	Records, Bytes uint64
	// Final outcomes other than decrypting: no secrets (Overflow of them
	// because the held records reached MaxHeld), unsupported, failed, lost.
	NoSecrets, Overflow, Unsupported, Failed, Lost uint64
}

// Add adds t to s.
func (s *Stats) Add(t Stats) {
	s.Connections += t.Connections
	s.Decrypted += t.Decrypted
	s.Records += t.Records
	s.Bytes += t.Bytes
	s.NoSecrets += t.NoSecrets
	s.Overflow += t.Overflow
	s.Unsupported += t.Unsupported
	s.Failed += t.Failed
	s.Lost += t.Lost
}

// direction is one side's decryption state.
type direction struct {
	recs records
	msgs messages
	prot *protection
	// TLS 1.2: encrypted after this side's ChangeCipherSpec, with next
	// once the keys are known.
	encrypted bool
	next      *protection
	// TLS 1.3: the traffic secret to key with once rekey is set (after a
	// record that ended with Finished or KeyUpdate).
	secret []byte
	rekey  bool
	seen   uint64 // records processed
}

// heldRecord is a record held while waiting for secrets: its bytes are
// held[off:off+n].
type heldRecord struct {
	side   flow.Side
	off, n int
	m      flow.Meta
}

var errSecretLen = errors.New("secret length does not match the suite's hash")

// Conn decrypts one TCP connection's TLS records: Feed it each side's
// bytes in order, and it hands the application data to its Output. It is
// not safe for concurrent use (its KeyLog is).
type Conn struct {
	keys   *KeyLog
	out    Output
	opts   Options
	status Status
	detail string
	at     flow.Meta // the packet that made the status final

	dirs         [2]direction
	client       hello
	server       hello
	clientHello  bool
	suite        *suite
	tls13        bool
	plain        []byte
	held         []byte
	heldRecs     []heldRecord
	heldHead     int
	stats        Stats
	finalCounted bool
}

// NewConn returns a decryptor that looks secrets up in keys and writes
// application data to out.
func NewConn(keys *KeyLog, out Output, opts Options) *Conn {
	if opts.MaxHeld <= 0 {
		opts.MaxHeld = DefaultMaxHeld
	}
	c := &Conn{keys: keys, out: out, opts: opts}
	c.stats.Connections = 1
	return c
}

// Status returns what the Conn concluded so far.
func (c *Conn) Status() Status { return c.status }

// Detail says why the status is final, for a coverage event: never a
// secret, nor decrypted bytes. At is the packet that decided it.
func (c *Conn) Detail() (string, flow.Meta) { return c.detail, c.at }

// Stats returns this connection's counters.
func (c *Conn) Stats() Stats { return c.stats }

// Feed takes bytes of side's stream that arrived in the packet m. p is
// only read during the call.
func (c *Conn) Feed(side flow.Side, p []byte, m flow.Meta) {
	d := &c.dirs[side&1]
	for len(p) > 0 && !c.status.Final() {
		hdr, body, rest, err := d.recs.next(p)
		if err != nil {
			// Once decrypting, bytes that are no record are a failure;
			// before, the connection was never TLS that tlsdec can read.
			s := StatusUnsupported
			if c.status == StatusDecrypting {
				s = StatusFailed
			}
			c.end(s, m, "%s side: %v", side, err)
			return
		}
		if hdr == nil {
			return
		}
		p = rest
		if c.heldHead < len(c.heldRecs) || c.mustHold(d, hdr[0]) {
			c.hold(side, hdr, body, m)
		} else {
			c.record(side, hdr, body, m)
		}
		if c.status == StatusDecrypting && c.heldHead < len(c.heldRecs) {
			c.drain()
		}
	}
}

// Gap says bytes of side were lost: the record boundaries and sequence
// numbers are, so decryption stops (StatusLost) unless no secrets could be
// used anyway.
func (c *Conn) Gap(side flow.Side, m flow.Meta) {
	if c.status.Final() {
		return
	}
	if c.status == StatusDecrypting {
		c.end(StatusLost, m, "bytes lost on the %s side", side)
		return
	}
	c.end(StatusNoSecrets, m, "bytes lost on the %s side before the connection could be decrypted", side)
}

// Close ends the connection: a Conn still waiting looks its secrets up a
// last time, then gives up (StatusNoSecrets).
func (c *Conn) Close(m flow.Meta) {
	if c.status == StatusWaiting {
		if c.keys != nil {
			c.keys.forcePoll(m.Time)
		}
		c.unlock(m)
		c.drain()
	}
	switch c.status {
	case StatusHandshake:
		c.end(StatusNoSecrets, m, "the TLS handshake was not seen whole")
	case StatusWaiting:
		c.end(StatusNoSecrets, m, "no secrets for this connection's client random")
	}
}

// end makes the status final.
func (c *Conn) end(s Status, m flow.Meta, format string, args ...any) {
	c.status, c.at = s, m
	c.detail = fmt.Sprintf(format, args...)
	switch s {
	case StatusNoSecrets:
		c.stats.NoSecrets++
	case StatusUnsupported:
		c.stats.Unsupported++
	case StatusFailed:
		c.stats.Failed++
	case StatusLost:
		c.stats.Lost++
	}
	c.held, c.heldRecs, c.heldHead = nil, nil, 0
}

// encrypted reports whether a record of type typ on d is protected.
func (c *Conn) encrypted(d *direction, typ byte) bool {
	if c.suite == nil {
		// Before the ServerHello only application data (0-RTT, which
		// tlsdec does not decrypt) can be protected.
		return typ == typeAppData
	}
	if c.tls13 {
		return typ == typeAppData // RFC 8446 5.1: the outer type of every protected record
	}
	return d.encrypted
}

// mustHold reports whether a record of type typ on d cannot be read yet.
func (c *Conn) mustHold(d *direction, typ byte) bool {
	return c.encrypted(d, typ) && c.status != StatusDecrypting
}

// hold keeps a record until the secrets are known.
func (c *Conn) hold(side flow.Side, hdr, body []byte, m flow.Meta) {
	if len(c.held)+len(hdr)+len(body) > c.opts.MaxHeld {
		c.stats.Overflow++
		c.end(StatusNoSecrets, m, "no secrets before %d bytes of records were held", c.opts.MaxHeld)
		return
	}
	off := len(c.held)
	c.held = append(append(c.held, hdr...), body...)
	c.heldRecs = append(c.heldRecs, heldRecord{side: side, off: off, n: len(hdr) + len(body), m: m})
	c.unlock(m)
}

// drain processes held records in arrival order while they can be read.
func (c *Conn) drain() {
	for c.heldHead < len(c.heldRecs) && !c.status.Final() {
		h := c.heldRecs[c.heldHead]
		rec := c.held[h.off : h.off+h.n]
		if c.mustHold(&c.dirs[h.side&1], rec[0]) {
			return
		}
		c.heldHead++
		c.record(h.side, rec[:headerLen], rec[headerLen:], h.m)
	}
	if c.heldHead == len(c.heldRecs) {
		c.held, c.heldRecs, c.heldHead = c.held[:0], c.heldRecs[:0], 0
	}
}

// record processes one whole record of side.
func (c *Conn) record(side flow.Side, hdr, body []byte, m flow.Meta) {
	d := &c.dirs[side&1]
	d.seen++
	if !c.encrypted(d, hdr[0]) {
		switch hdr[0] {
		case typeHandshake:
			c.handshake(side, d, body, m)
		case typeCCS:
			// TLS 1.2: this side's next records are protected. TLS 1.3
			// sends one for middleboxes only.
			if c.suite != nil && !c.tls13 {
				d.encrypted = true
				d.prot = d.next
			}
		}
		return
	}
	plain, err := d.prot.open(c.plain[:0], hdr, body)
	if err != nil {
		c.end(StatusFailed, m, "record %d on the %s side failed to authenticate: wrong secrets, or not this connection's records", d.seen, side)
		return
	}
	c.plain = plain[:0]
	c.stats.Records++
	typ := hdr[0]
	if c.tls13 {
		// RFC 8446 5.4: the real type is the last non-zero byte.
		i := len(plain) - 1
		for i >= 0 && plain[i] == 0 {
			i--
		}
		if i < 0 {
			c.end(StatusFailed, m, "record %d on the %s side has no content type", d.seen, side)
			return
		}
		typ, plain = plain[i], plain[:i]
	}
	switch typ {
	case typeAppData:
		c.stats.Bytes += uint64(len(plain))
		if len(plain) > 0 {
			c.out.Plain(side, plain, m)
		}
	case typeHandshake:
		c.handshake(side, d, plain, m)
	}
	if d.rekey {
		c.rekey(side, d, m)
	}
}

// handshake follows side's handshake messages in p.
func (c *Conn) handshake(side flow.Side, d *direction, p []byte, m flow.Meta) {
	for len(p) > 0 && !c.status.Final() {
		typ, body, rest, ok := d.msgs.next(p)
		if !ok {
			return
		}
		p = rest
		switch {
		case typ == hsClientHello && side == flow.Client:
			h, ok := parseClientHello(body)
			if !ok {
				c.end(StatusUnsupported, m, "a ClientHello tlsdec cannot read")
				return
			}
			c.client, c.clientHello = h, true
		case typ == hsServerHello && side == flow.Broker:
			c.serverHello(body, m)
		case (typ == hsFinished || typ == hsKeyUpdate) && c.tls13:
			// The keys change after the record that ends this message.
			d.rekey = true
		}
	}
}

// serverHello learns the version and suite and starts waiting for secrets.
func (c *Conn) serverHello(body []byte, m flow.Meta) {
	h, ok := parseServerHello(body)
	switch {
	case !ok:
		c.end(StatusUnsupported, m, "a ServerHello tlsdec cannot read")
		return
	case h.random == helloRetry:
		return // a HelloRetryRequest: another ClientHello and ServerHello follow
	case !c.clientHello:
		c.end(StatusUnsupported, m, "a ServerHello without a ClientHello")
		return
	case h.version != 0x0303 && h.version != 0x0304:
		c.end(StatusUnsupported, m, "TLS version %#04x is not decrypted (only TLS 1.2 and 1.3)", h.version)
		return
	}
	c.tls13 = h.version == 0x0304
	c.suite = suiteFor(h.suite, c.tls13)
	if c.suite == nil {
		c.end(StatusUnsupported, m, "cipher suite %#04x is not decrypted (only AES-GCM and ChaCha20-Poly1305)", h.suite)
		return
	}
	c.server = h
	c.status = StatusWaiting
	c.unlock(m) // held records, if any, are drained by the caller: this record comes first
}

// unlock keys the connection once the key log has its secrets. It does not
// drain the held records (see Feed).
func (c *Conn) unlock(m flow.Meta) {
	if c.status != StatusWaiting {
		return
	}
	if c.keys == nil {
		c.end(StatusNoSecrets, m, "no key log")
		return
	}
	s, ok := c.keys.lookup(&c.client.random)
	if !ok || !c.complete(&s) {
		if !c.keys.Following() {
			c.end(StatusNoSecrets, m, "no secrets for this connection's client random")
			return
		}
		if c.keys.Poll(m.Time) != nil {
			return
		}
		if s, ok = c.keys.lookup(&c.client.random); !ok || !c.complete(&s) {
			return
		}
	}
	if err := c.key(&s); err != nil {
		c.end(StatusFailed, m, "the key log's secrets do not fit cipher suite %v", c.suite)
		return
	}
	c.status = StatusDecrypting
	c.stats.Decrypted++
}

// complete reports whether s holds every secret the version needs.
func (c *Conn) complete(s *Secrets) bool {
	if !c.tls13 {
		return s.has(labMaster)
	}
	return s.has(labClientHS) && s.has(labServerHS) && s.has(labClientApp) && s.has(labServerApp)
}

// key derives both directions' protection from s.
func (c *Conn) key(s *Secrets) error {
	cl, sv := &c.dirs[flow.Client], &c.dirs[flow.Broker]
	if !c.tls13 {
		client, server, err := keys12(c.suite, s.s[labMaster].bytes(), &c.client.random, &c.server.random)
		if err != nil {
			return err
		}
		cl.next, sv.next = client, server
		if cl.encrypted {
			cl.prot = client
		}
		if sv.encrypted {
			sv.prot = server
		}
		return nil
	}
	for _, l := range [...]label{labClientHS, labServerHS, labClientApp, labServerApp} {
		if int(s.s[l].n) != c.suite.hashLen() {
			return errSecretLen
		}
	}
	var err error
	if cl.prot, err = keys13(c.suite, s.s[labClientHS].bytes()); err != nil {
		return err
	}
	if sv.prot, err = keys13(c.suite, s.s[labServerHS].bytes()); err != nil {
		return err
	}
	cl.secret = append([]byte(nil), s.s[labClientApp].bytes()...)
	sv.secret = append([]byte(nil), s.s[labServerApp].bytes()...)
	return nil
}

// rekey moves d to its next traffic secret (TLS 1.3: after Finished, the
// application secret; after a KeyUpdate, the next one).
func (c *Conn) rekey(side flow.Side, d *direction, m flow.Meta) {
	d.rekey = false
	prot, err := keys13(c.suite, d.secret)
	if err == nil {
		d.secret, err = nextSecret(c.suite, d.secret)
	}
	if err != nil {
		c.end(StatusFailed, m, "the %s side's next traffic key could not be derived", side)
		return
	}
	d.prot = prot
}
