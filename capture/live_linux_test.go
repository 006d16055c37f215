//go:build linux

package capture

import (
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestOpenLive captures on lo for real (root only): a port filter keeps the
// exchange with one listener and drops the exchange with another.
func TestOpenLive(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("live capture needs root (CAP_NET_RAW)")
	}
	wanted, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer wanted.Close()
	other, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	wantPort := uint16(wanted.Addr().(*net.TCPAddr).Port)
	otherPort := uint16(other.Addr().(*net.TCPAddr).Port)

	src, err := OpenLive("lo", LiveOptions{Ports: []uint16{wantPort}, Snaplen: 65535})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()

	type seen struct {
		ports   [2]uint16
		payload string
	}
	got := make(chan seen, 1024)
	done := make(chan error, 1)
	go func() {
		d := NewLayerDecoder()
		var s Segment
		for {
			p, err := src.Next()
			if err != nil {
				done <- err
				return
			}
			if d.Decode(&p, &s) {
				got <- seen{[2]uint16{s.Src.Port(), s.Dst.Port()}, string(s.TCP.Payload)}
			}
		}
	}()

	exchange := func(l net.Listener, msg string) {
		go func() {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
			io.Copy(c, c) // echo
		}()
		c, err := net.Dial("tcp4", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Write([]byte(msg)); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, len(msg))
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.ReadFull(c, buf); err != nil {
			t.Fatal(err)
		}
	}
	exchange(other, "to the other port")
	exchange(wanted, "to the wanted port")

	deadline := time.After(5 * time.Second)
	var requests, echoes int
	check := func(s seen) {
		if s.ports[0] != wantPort && s.ports[1] != wantPort {
			t.Errorf("the filter let through %d -> %d", s.ports[0], s.ports[1])
		}
		if s.payload == "to the wanted port" {
			if s.ports[1] == wantPort {
				requests++
			} else {
				echoes++
			}
		}
		if strings.Contains(s.payload, "other") || s.ports[0] == otherPort || s.ports[1] == otherPort {
			t.Errorf("saw traffic of the other port: %+v", s)
		}
	}
	for requests == 0 || echoes == 0 {
		select {
		case s := <-got:
			check(s)
		case <-deadline:
			t.Fatalf("timed out: request seen %d times, echo %d times", requests, echoes)
		}
	}
	// Loopback hands packet sockets each packet twice (sent and received):
	// the sent copy must be filtered out.
	settle := time.After(300 * time.Millisecond)
	for waiting := true; waiting; {
		select {
		case s := <-got:
			check(s)
		case <-settle:
			waiting = false
		}
	}
	if requests != 1 || echoes != 1 {
		t.Errorf("request seen %d times and echo %d times, want each once", requests, echoes)
	}
	st, err := src.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if st.Received == 0 {
		t.Errorf("Stats = %+v, want packets received", st)
	}
	// Close unblocks the reading goroutine, which is waiting in Next.
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != io.EOF {
			t.Errorf("Next after Close = %v, want io.EOF", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not unblock Next")
	}
}

func TestOpenLiveErrors(t *testing.T) {
	if _, err := OpenLive("no-such-if0", LiveOptions{}); err == nil || err.Error() != "capture: no-such-if0: no such interface" {
		t.Errorf("OpenLive(missing) = %v", err)
	}
	if _, err := OpenLive("any", LiveOptions{}); err == nil || !strings.Contains(err.Error(), "tcpdump -i any -w -") {
		t.Errorf("OpenLive(any) = %v, want advice to pipe tcpdump", err)
	}
	if _, err := OpenLive("lo", LiveOptions{Ports: make([]uint16, MaxFilterPorts+1)}); err == nil {
		t.Error("OpenLive with too many ports should fail")
	}
}

func TestPcapngWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.pcapng")
	if err := os.WriteFile(path, []byte("old contents, world-readable"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := NewPcapngWriter(path, 1, 65535, true)
	if err != nil {
		t.Fatal(err)
	}
	when := time.Unix(1764434965, 123456789).UTC()
	for i := range 3 {
		p := Packet{Frame: uint64(i + 1), Time: when.Add(time.Duration(i) * time.Second), Data: []byte{byte(i), 1, 2}, CaptureLength: 3, Length: 60}
		if err := w.WritePacket(&p); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
	src, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	got, err := readAll(t, src)
	if err != nil || len(got) != 3 {
		t.Fatalf("read back %d packets, %v", len(got), err)
	}
	for i, p := range got {
		if !p.Time.Equal(when.Add(time.Duration(i)*time.Second)) || p.Length != 60 || p.Data[0] != byte(i) || p.LinkType != 1 {
			t.Errorf("packet %d = %+v", i, p)
		}
	}
	if _, err := NewPcapngWriter(filepath.Join(t.TempDir(), "missing", "x.pcapng"), 1, 0, false); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("writer in a missing directory: %v", err)
	}
}

// TestPcapngWriterRefuses: -w is opened as root, so it never follows a
// symlink and replaces an existing file only when asked; what it refuses
// stays as it was.
func TestPcapngWriterRefuses(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	const old = "root-owned contents"
	if err := os.WriteFile(target, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.pcapng")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		path    string
		replace bool
		want    string
	}{
		{name: "existing file", path: target, want: "already exists; remove it or let it be replaced (--force)"},
		{name: "symlink", path: link, want: "is a symbolic link"},
		{name: "symlink with replace", path: link, replace: true, want: "is a symbolic link"},
		{name: "device with replace", path: os.DevNull, replace: true, want: "not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := NewPcapngWriter(tt.path, 1, 0, tt.replace)
			if err == nil {
				w.Close()
				t.Fatalf("NewPcapngWriter(%s) succeeded", tt.path)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want it to say %q", err, tt.want)
			}
			b, err := os.ReadFile(target)
			if err != nil || string(b) != old {
				t.Errorf("target now holds %q (%v)", b, err)
			}
			if fi, err := os.Stat(target); err != nil || fi.Mode().Perm() != 0o644 {
				t.Errorf("target mode changed: %v %v", fi.Mode(), err)
			}
		})
	}
	// A new file is created 0600.
	fresh := filepath.Join(dir, "new.pcapng")
	w, err := NewPcapngWriter(fresh, 1, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if fi, err := os.Stat(fresh); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("new file: %v %v, want mode 0600", fi.Mode(), err)
	}
}

// TestOpenLivePermission runs without root (e.g. the test binary under
// setpriv --reuid=nobody): the error must say how to grant the capability.
func TestOpenLivePermission(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("needs an unprivileged user")
	}
	_, err := OpenLive("lo", LiveOptions{})
	want := "capture: lo: permission denied opening a packet socket: run as root or grant the capability with: sudo setcap cap_net_raw+ep $(which kwatch)"
	if err == nil || err.Error() != want {
		t.Errorf("OpenLive as an unprivileged user = %v\nwant %s", err, want)
	}
}
