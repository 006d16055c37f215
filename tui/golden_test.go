package tui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest/v2"
)

// TestGoldenScreens drives the real program with teatest at fixed sizes
// and compares the final screen, stripped of styling, with
// testdata/TestGoldenScreens/*.golden. Refresh with:
//
//	go test ./tui -run TestGoldenScreens -update
//
// Deterministic by construction: the feed is a finished replay (one pull,
// no ticks), times come from the fixture, colours are forced off.
func TestGoldenScreens(t *testing.T) {
	screens := []struct {
		name string
		keys []string
	}{
		{"overview", nil},
		{"instances", []string{"2"}},
		{"instances-sorted", []string{"2", "s", "s"}},
		{"instance-detail", []string{"2", "enter"}},
		{"findings", []string{"3"}},
		{"findings-min-warn", []string{"3", "v"}},
		{"findings-sorted", []string{"3", "s", "s"}},
		{"findings-scrolled", []string{"3", "l", "l", "l", "l"}},
		{"overview-help", []string{"?"}},
		{"groups", []string{"4"}},
		{"group-detail", []string{"4", "enter"}},
		{"brokers", []string{"5"}},
		{"finding-detail", []string{"3", "enter"}},
		{"full-help", []string{"3", "?"}},
	}
	sizes := [][2]int{{80, 24}, {120, 40}}
	for _, sz := range sizes {
		for _, sc := range screens {
			t.Run(fmt.Sprintf("%s_%dx%d", sc.name, sz[0], sz[1]), func(t *testing.T) {
				m := NewModel(Options{Feed: staticFeed{fixtureData()}, Explain: explainFixture})
				tm := teatest.NewTestModel(t, m,
					teatest.WithInitialTermSize(sz[0], sz[1]),
					teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.NoTTY)),
				)
				// Keys must follow the first snapshot, or they act on an
				// empty screen.
				teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
					return bytes.Contains(b, []byte("replay finished"))
				}, teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
				for _, k := range sc.keys {
					tm.Send(keyMsg(k))
				}
				if err := tm.Quit(); err != nil {
					t.Fatal(err)
				}
				final := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Model)
				golden.RequireEqual(t, ansi.Strip(final.View().Content))
			})
		}
	}
}

// TestRunQuits runs the program the way cmd/kwatch does: Run returns nil
// when the user presses q.
func TestRunQuits(t *testing.T) {
	var out bytes.Buffer
	err := Run(t.Context(), Options{Feed: staticFeed{fixtureData()}, Input: bytes.NewReader([]byte("q")), Output: &out})
	if err != nil {
		t.Fatalf("Run = %v, want nil after q", err)
	}
}

func TestRunContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	r, w := io.Pipe()
	defer w.Close()
	done := make(chan error, 1)
	go func() { done <- Run(ctx, Options{Feed: staticFeed{Data{}}, Input: r, Output: &bytes.Buffer{}}) }()
	time.Sleep(50 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Run = %v, want %v", err, ctx.Err())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after the context ended")
	}
}

func TestRunNoFeed(t *testing.T) {
	if err := Run(t.Context(), Options{}); err == nil {
		t.Fatal("Run without a feed should fail")
	}
}
