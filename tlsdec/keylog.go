package tlsdec

import (
	"bytes"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// The NSS key log format: one secret a line, "LABEL <client random hex>
// <secret hex>", comments starting with '#'.
// https://firefox-source-docs.mozilla.org/security/nss/legacy/key_log_format/

const (
	// MaxKeyLogEntries bounds the client randoms a KeyLog remembers; lines
	// for new randoms beyond it are counted in KeyLogStats.Dropped.
	MaxKeyLogEntries = 1 << 18
	// maxLine bounds a key log line (the longest valid one is a 1.3 label,
	// 64 and 96 hex digits: under 200 bytes); longer ones are Malformed.
	maxLine = 1024
	// maxSecret is the longest secret: a SHA-384 traffic secret or a TLS
	// 1.2 master secret (48 bytes).
	maxSecret = 48
	// pollEvery is how often, in packet time, a followed file is re-read
	// when a connection waits for its secrets.
	pollEvery = 100 * time.Millisecond
	// DSBTypeTLS is the pcapng Decryption Secrets Block type for NSS key
	// log text ("TLSK").
	DSBTypeTLS = 0x544c534b
)

// label indexes the secrets a client random can have.
type label uint8

const (
	labMaster label = iota // CLIENT_RANDOM: the TLS 1.2 master secret
	labClientHS
	labServerHS
	labClientApp
	labServerApp
	numLabels
)

var labelNames = [numLabels]string{
	labMaster:    "CLIENT_RANDOM",
	labClientHS:  "CLIENT_HANDSHAKE_TRAFFIC_SECRET",
	labServerHS:  "SERVER_HANDSHAKE_TRAFFIC_SECRET",
	labClientApp: "CLIENT_TRAFFIC_SECRET_0",
	labServerApp: "SERVER_TRAFFIC_SECRET_0",
}

// secret is one secret, stored inline.
type secret struct {
	b [maxSecret]byte
	n uint8
}

func (s *secret) bytes() []byte { return s.b[:s.n] }

// Secrets are the key log's secrets for one client random. They are never
// printed: String and GoString say so instead, so a %v in a log line cannot
// leak them.
type Secrets struct {
	s [numLabels]secret
}

func (Secrets) String() string   { return "tlsdec.Secrets{redacted}" }
func (Secrets) GoString() string { return "tlsdec.Secrets{redacted}" }

func (s *Secrets) has(l label) bool { return s.s[l].n > 0 }

// KeyLogStats counts what a KeyLog read.
type KeyLogStats struct {
	// Lines is the number of secret lines kept (one per label and random).
	Lines uint64
	// Ignored lines: comments, blank lines and labels kwatch does not use
	// (EXPORTER_SECRET, early traffic secrets).
	Ignored uint64
	// Malformed lines: bad hex, wrong lengths, over-long lines.
	Malformed uint64
	// Dropped lines: for a new client random once MaxKeyLogEntries are held.
	Dropped uint64
	// Blocks is the number of pcapng Decryption Secrets Blocks of type TLSK
	// read; OtherBlocks those of other types (WireGuard, SSH), ignored.
	Blocks, OtherBlocks uint64
}

// KeyLog holds TLS secrets by client random. It is fed NSS key log text
// through Write (it is an io.Writer, so it can be a tls.Config.KeyLogWriter
// itself), pcapng Decryption Secrets Blocks through AddSecretsBlock, and a
// followed file through Poll. It is safe for concurrent use: the sharded
// pipeline's workers look secrets up while the reader adds blocks. Secrets
// are never logged or printed.
type KeyLog struct {
	mu      sync.Mutex
	m       map[[32]byte]*Secrets
	partial []byte // an unfinished last line
	stats   KeyLogStats
	// The followed file, if any, and how far it was read. It stays open:
	// kwatch live drops its privileges after opening it.
	file     *os.File
	off      int64
	lastPoll time.Time
	polled   bool
	// active is set once the KeyLog has a file or a secret: connections
	// are held for decryption only then.
	active atomic.Bool
	// follow: the key log may still grow (see Follow).
	follow atomic.Bool
}

// NewKeyLog returns an empty KeyLog.
func NewKeyLog() *KeyLog {
	return &KeyLog{m: make(map[[32]byte]*Secrets)}
}

// OpenKeyLog reads the key log file at path and follows it: Poll reads the
// lines appended since (a live capture's clients keep writing it). The file
// is kept open, so that it can still be read once kwatch live has dropped
// its privileges, until Close.
func OpenKeyLog(path string) (*KeyLog, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	k := NewKeyLog()
	k.file = f
	k.active.Store(true)
	k.mu.Lock()
	defer k.mu.Unlock()
	if err := k.readFile(); err != nil {
		f.Close()
		return nil, err
	}
	return k, nil
}

// Close closes the followed file, if any; the secrets read stay known.
func (k *KeyLog) Close() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.file == nil {
		return nil
	}
	err := k.file.Close()
	k.file = nil
	return err
}

// Follow says that the key log may still grow, as in live capture, where
// a client writes its key log line while its handshake's packets go by:
// Poll then re-reads the file for appended lines, and a Conn whose secrets
// are missing holds its records (up to Options.MaxHeld bytes) until they
// appear. Without Follow (a capture read from a file, its key log
// complete) a connection whose secrets are missing when its ServerHello is
// read is given up at once, holding nothing.
func (k *KeyLog) Follow() { k.follow.Store(true) }

// Following reports whether Follow was called.
func (k *KeyLog) Following() bool { return k != nil && k.follow.Load() }

// Active reports whether the KeyLog follows a file or holds a secret: until
// it does, TLS connections are left alone (reported as tls-connection at
// once, as without a key log).
func (k *KeyLog) Active() bool { return k != nil && k.active.Load() }

// Stats returns the counters so far.
func (k *KeyLog) Stats() KeyLogStats {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.stats
}

// Write adds key log text. Lines may be split across calls. It never fails.
func (k *KeyLog) Write(p []byte) (int, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.write(p)
	return len(p), nil
}

// AddSecretsBlock adds the payload of a pcapng Decryption Secrets Block of
// type typ; types other than DSBTypeTLS are counted and ignored.
func (k *KeyLog) AddSecretsBlock(typ uint32, data []byte) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if typ != DSBTypeTLS {
		k.stats.OtherBlocks++
		return
	}
	k.stats.Blocks++
	k.write(data)
	k.endLine() // a block holds whole lines; its last may lack the newline
}

// Poll reads lines appended to the followed file, at most once per
// pollEvery of packet time (now); a file that shrank is read again from
// its start. Without a file, or without Follow, it does nothing.
func (k *KeyLog) Poll(now time.Time) error {
	if !k.Following() {
		return nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.file == nil {
		return nil
	}
	if k.polled && now.Before(k.lastPoll.Add(pollEvery)) {
		return nil
	}
	k.polled, k.lastPoll = true, now
	return k.readFile()
}

// readFile reads the followed file from k.off; k.mu is held.
func (k *KeyLog) readFile() error {
	if st, err := k.file.Stat(); err == nil && st.Size() < k.off {
		k.off, k.partial = 0, k.partial[:0] // truncated
	}
	var buf [32 << 10]byte
	for {
		n, err := k.file.ReadAt(buf[:], k.off)
		k.off += int64(n)
		k.write(buf[:n])
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// write splits p into lines; k.mu is held.
func (k *KeyLog) write(p []byte) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			k.keep(p)
			return
		}
		k.keep(p[:i])
		k.endLine()
		p = p[i+1:]
	}
}

// keep appends to the unfinished line, up to maxLine+1 bytes: enough to
// know it is too long.
func (k *KeyLog) keep(p []byte) {
	if room := maxLine + 1 - len(k.partial); room > 0 {
		k.partial = append(k.partial, p[:min(len(p), room)]...)
	}
}

// endLine parses the unfinished line as a whole one.
func (k *KeyLog) endLine() {
	line := k.partial
	k.partial = k.partial[:0]
	if len(line) > maxLine {
		k.stats.Malformed++
		return
	}
	k.line(bytes.TrimRight(line, "\r"))
}

// line parses one key log line.
func (k *KeyLog) line(line []byte) {
	if len(line) == 0 || line[0] == '#' {
		k.stats.Ignored++
		return
	}
	f := bytes.Fields(line)
	if len(f) != 3 {
		k.stats.Malformed++
		return
	}
	lab := numLabels
	for i, n := range labelNames {
		if string(f[0]) == n {
			lab = label(i)
		}
	}
	if lab == numLabels {
		k.stats.Ignored++
		return
	}
	var random [32]byte
	var s secret
	n := hex.DecodedLen(len(f[2]))
	if len(f[1]) != 64 || n > maxSecret || n < 32 || (lab == labMaster && n != 48) {
		k.stats.Malformed++
		return
	}
	if _, err := hex.Decode(random[:], f[1]); err != nil {
		k.stats.Malformed++
		return
	}
	if _, err := hex.Decode(s.b[:n], f[2]); err != nil {
		k.stats.Malformed++
		return
	}
	s.n = uint8(n)
	e := k.m[random]
	if e == nil {
		if len(k.m) >= MaxKeyLogEntries {
			k.stats.Dropped++
			return
		}
		e = new(Secrets)
		k.m[random] = e
	}
	if e.s[lab].n == 0 {
		k.stats.Lines++
	}
	e.s[lab] = s
	k.active.Store(true)
}

// lookup returns the secrets known for random.
func (k *KeyLog) lookup(random *[32]byte) (Secrets, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	e, ok := k.m[*random]
	if !ok {
		return Secrets{}, false
	}
	return *e, true
}

// forcePoll reads the followed file now, whatever the last poll's time.
func (k *KeyLog) forcePoll(now time.Time) {
	k.mu.Lock()
	k.polled = false
	k.mu.Unlock()
	k.Poll(now)
}
