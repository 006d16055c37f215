//go:build e2e

package realclients

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kwatch/kwatch/decode"
)

// The Go client libraries run inside the test process, on goroutines:
// there is no process to time out, so within bounds each step instead.

// goMessages is what every Go client produces and must consume back.
var goMessages = []string{"one", "two", "three"}

// within runs step on its own goroutine and fails the test when it returns
// an error or has not returned within clientTimeout. A step that hangs is
// left behind (the test has failed): Go cannot stop a goroutine.
func within(t *testing.T, name string, step func(ctx context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- step(ctx) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		t.Logf("%s: %v", name, time.Since(start).Round(time.Millisecond))
	case <-time.After(clientTimeout + 2*time.Second):
		t.Fatalf("%s: still running after %v", name, clientTimeout+2*time.Second)
	}
}

// firstRequests returns the API key of every connection's first request.
func firstRequests(out outcome) map[netip.AddrPort]int16 {
	first := map[netip.AddrPort]int16{}
	for _, e := range out.kw.events {
		if e.kind != decode.KindRequest {
			continue
		}
		if _, ok := first[e.conn]; !ok {
			first[e.conn] = e.key
		}
	}
	return first
}

// checkFirstRequests fails for every connection that opens with a request
// outside allowed.
func checkFirstRequests(t *testing.T, out outcome, allowed ...kmsg.Key) {
	t.Helper()
	for conn, k := range firstRequests(out) {
		if !slices.Contains(allowed, kmsg.Key(k)) {
			t.Errorf("%v: the connection opens with %s, want one of %v", conn, kmsg.NameForKey(k), allowed)
		}
	}
}

// consumed compares what a consumer read with goMessages.
func consumed(got []string) error {
	if fmt.Sprint(got) != fmt.Sprint(goMessages) {
		return fmt.Errorf("consumed %q, want %q", got, goMessages)
	}
	return nil
}
