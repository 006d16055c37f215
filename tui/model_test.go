package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/kwatch/kwatch/audit"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// newSized returns a model of the given size holding d.
func newSized(t testing.TB, w, h int, d Data, opts Options) *Model {
	t.Helper()
	if opts.Explain == nil {
		opts.Explain = explainFixture
	}
	m := NewModel(opts)
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	m.Update(dataMsg{d})
	return m
}

// press sends keys one by one and returns the last command.
func press(m *Model, keys ...string) tea.Cmd {
	var cmd tea.Cmd
	for _, k := range keys {
		_, cmd = m.Update(keyMsg(k))
	}
	return cmd
}

// screen is the rendered screen without styling.
func screen(m *Model) string { return ansi.Strip(m.render()) }

func isQuit(cmd tea.Cmd) bool {
	if cmd == nil {
		return false
	}
	_, ok := cmd().(tea.QuitMsg)
	return ok
}

func TestKeys(t *testing.T) {
	tests := []struct {
		name       string
		keys       []string
		wantPane   int
		wantQuit   bool
		wantScreen []string // substrings of the screen
		notScreen  []string
	}{
		{name: "starts on overview", wantPane: PaneOverview, wantScreen: []string{"[1 Overview]", "Compliance by client", "2 error · 2 warn · 1 info", "stream-gap 2"}},
		{name: "overview scrolls to the traffic", wantPane: PaneOverview, keys: []string{"G"}, wantScreen: []string{"12,345", "9 TCP · 7 Kafka"}},
		{name: "tab cycles", keys: []string{"tab", "tab"}, wantPane: PaneFindings, wantScreen: []string{"[3 Findings]"}},
		{name: "tab wraps", keys: []string{"tab", "tab", "tab", "tab", "tab"}, wantPane: PaneOverview},
		{name: "shift+tab goes back", keys: []string{"shift+tab"}, wantPane: PaneBrokers},
		{name: "groups pane", keys: []string{"4"}, wantPane: PaneGroups, wantScreen: []string{"[4 Groups]", "orders", "shares", "2/2 groups"}},
		{name: "group detail: who holds which member ID", keys: []string{"4", "s", "enter"}, wantPane: PaneGroups,
			wantScreen: []string{"Group orders", "AAECAwQFBgcICQoLDA0ODw==", "member-id-encoding × 1"}},
		{name: "brokers pane", keys: []string{"5"}, wantPane: PaneBrokers, wantScreen: []string{"[5 Brokers]", "10.0.0.9:9092", "2/2 brokers"}},
		{name: "broker detail", keys: []string{"5", "enter"}, wantPane: PaneBrokers, wantScreen: []string{"Broker 10.0.0.", "Broker rules broken (0)"}},
		{name: "digits jump", keys: []string{"3", "2"}, wantPane: PaneInstances, wantScreen: []string{"[2 Instances]", "FINDINGS ▼", "3/3 instances"}},
		{name: "q quits", keys: []string{"q"}, wantQuit: true},
		{name: "ctrl+c quits", keys: []string{"2", "ctrl+c"}, wantPane: PaneInstances, wantQuit: true},
		{name: "help toggles full help", keys: []string{"?"}, wantScreen: []string{"shift+tab prev pane"}},
		{name: "help toggles back", keys: []string{"?", "?"}, notScreen: []string{"shift+tab prev pane"}},

		{name: "sort cycles column", keys: []string{"2", "s"}, wantPane: PaneInstances, wantScreen: []string{"sort: instance ▲", "INSTANCE ▲"}},
		{name: "sort reverses", keys: []string{"2", "s", "S"}, wantPane: PaneInstances, wantScreen: []string{"sort: instance ▼"}},
		{name: "instance filter", keys: []string{"2", "/", "b", "i", "l", "enter"}, wantPane: PaneInstances,
			wantScreen: []string{"1/3 instances", "filter: bil", "franz-go"}, notScreen: []string{"apache-kafka"}},
		{name: "q while filtering is text", keys: []string{"2", "/", "q"}, wantPane: PaneInstances, wantScreen: []string{"/q█"}},
		{name: "tab while filtering is no switch", keys: []string{"2", "/", "tab"}, wantPane: PaneInstances},
		{name: "esc clears filter", keys: []string{"2", "/", "z", "z", "esc"}, wantPane: PaneInstances, wantScreen: []string{"3/3 instances"}},
		{name: "backspace edits filter", keys: []string{"2", "/", "z", "backspace", "enter"}, wantPane: PaneInstances, wantScreen: []string{"3/3 instances"}},
		{name: "filter with no match", keys: []string{"2", "/", "z", "z", "enter"}, wantPane: PaneInstances, wantScreen: []string{"no instance matches"}},
		{name: "enter opens instance", keys: []string{"2", "enter"}, wantPane: PaneInstances,
			wantScreen: []string{"Client instance AAECAwQFBgcICQoLDA0ODw", "Connections (2)", "Identity timeline (4)", "10.0.0.5:53123 -> 10.0.0.9:9092  from frame 48"}},
		{name: "down then open", keys: []string{"2", "down", "enter"}, wantPane: PaneInstances, wantScreen: []string{"Client instance EBESExQVFhcYGRobHB0eHw", "billing, billing-2", "+3 more not listed by the report"}},
		{name: "esc closes instance", keys: []string{"2", "enter", "esc"}, wantPane: PaneInstances, wantScreen: []string{"3/3 instances"}},

		{name: "findings list", keys: []string{"3"}, wantPane: PaneFindings, wantScreen: []string{"5/5 · sev all", "instance-id-dropped", "member-id-not-uuid"}},
		{name: "severity warn is a minimum", keys: []string{"3", "v"}, wantPane: PaneFindings,
			wantScreen: []string{"4/5 · sev warn+", "instance-id-changed", "client-id-changed", "member-id-not-uuid"}, notScreen: []string{"member-id-encoding"}},
		{name: "severity error", keys: []string{"3", "v", "v"}, wantPane: PaneFindings, wantScreen: []string{"2/5 · sev error", "instance-id-changed"}, notScreen: []string{"client-id-changed"}},
		{name: "severity wraps to all", keys: []string{"3", "v", "v", "v"}, wantPane: PaneFindings, wantScreen: []string{"5/5 · sev all"}},
		{name: "sort by time, newest first", keys: []string{"3", "s"}, wantPane: PaneFindings, wantScreen: []string{"sort time ▼"}},
		{name: "sort reverses", keys: []string{"3", "s", "S"}, wantPane: PaneFindings, wantScreen: []string{"sort time ▲"}},
		{name: "sort back to report order", keys: []string{"3", "s", "s", "s", "s", "s", "s", "s", "s", "s"}, wantPane: PaneFindings, notScreen: []string{"· sort"}},
		{name: "scroll right shows every column", keys: []string{"3", "l", "l", "l", "l", "l", "l", "l", "l", "l", "l"}, wantPane: PaneFindings,
			wantScreen: []string{"MESSAGE", "a conforming broker re"}},
		{name: "next finding in the detail", keys: []string{"3", "enter", "n"}, wantPane: PaneFindings, wantScreen: []string{"finding 2/5"}},
		{name: "previous finding in the detail", keys: []string{"3", "enter", "n", "n", "p"}, wantPane: PaneFindings, wantScreen: []string{"finding 2/5"}},
		{name: "no previous before the first", keys: []string{"3", "enter", "p"}, wantPane: PaneFindings, wantScreen: []string{"finding 1/5"}},
		{name: "rule filter", keys: []string{"3", "r"}, wantPane: PaneFindings, wantScreen: []string{"1/5 · sev all · rule client-id-changed"}},
		{name: "instance filter cycles", keys: []string{"3", "i"}, wantPane: PaneFindings, wantScreen: []string{"2/5", "instance AAECAwQFBgcICQoLDA0ODw"}},
		{name: "search", keys: []string{"3", "/", "d", "r", "o", "p", "enter"}, wantPane: PaneFindings, wantScreen: []string{"1/5", "/drop", "instance-id-dropped"}},
		{name: "search no match", keys: []string{"3", "/", "x", "x", "x", "enter"}, wantPane: PaneFindings, wantScreen: []string{"0/5", "no finding matches"}},
		{name: "clear filters", keys: []string{"3", "v", "r", "c"}, wantPane: PaneFindings, wantScreen: []string{"5/5 · sev all · rule all"}},
		{name: "open finding", keys: []string{"3", "enter"}, wantPane: PaneFindings,
			wantScreen: []string{"instance-id-changed: the header instance ID changed", "Expected     AAECAwQFBgcICQoLDA0ODw", "Observed     Dw4NDAsKCQgHBgUEAwIBAA", "Why it matters", "finding 1/5"}},
		{name: "scroll finding to around", keys: []string{"3", "enter", "G"}, wantPane: PaneFindings, wantScreen: []string{"Requests around it on this connection (3)", "▸ 16:49:26.623 #40"}},
		{name: "open filtered finding", keys: []string{"3", "r", "enter"}, wantPane: PaneFindings, wantScreen: []string{"client-id-changed", "Confidence   partial", "finding 1/1"}},
		{name: "instance to its findings", keys: []string{"2", "down", "enter", "F"}, wantPane: PaneFindings,
			wantScreen: []string{"2/5", "instance EBESExQVFhcYGRobHB0eHw", "client-id-changed"}, notScreen: []string{"member-id-encoding"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newSized(t, 80, 24, fixtureData(), Options{})
			var quit bool
			for _, k := range tt.keys {
				cmd := press(m, k)
				// showFindingsMsg and friends come back as commands.
				if cmd != nil {
					msg := cmd()
					if _, ok := msg.(tea.QuitMsg); ok {
						quit = true
						continue
					}
					if _, ok := msg.(showFindingsMsg); ok {
						m.Update(msg)
					}
				}
			}
			if quit != tt.wantQuit {
				t.Fatalf("quit = %v, want %v", quit, tt.wantQuit)
			}
			if m.Active() != tt.wantPane {
				t.Errorf("active pane = %d, want %d", m.Active(), tt.wantPane)
			}
			s := screen(m)
			for _, want := range tt.wantScreen {
				if !strings.Contains(s, want) {
					t.Errorf("screen lacks %q:\n%s", want, s)
				}
			}
			for _, not := range tt.notScreen {
				if strings.Contains(s, not) {
					t.Errorf("screen has %q:\n%s", not, s)
				}
			}
		})
	}
}

// TestScreenFits checks every pane at several sizes: exactly height lines,
// none wider than the terminal, no panic on tiny terminals.
func TestScreenFits(t *testing.T) {
	sizes := [][2]int{{80, 24}, {120, 40}, {60, 15}, {20, 5}, {1, 1}, {200, 60}}
	states := []struct {
		name string
		keys []string
	}{
		{"overview", nil},
		{"instances", []string{"2"}},
		{"instance", []string{"2", "enter"}},
		{"findings", []string{"3"}},
		{"finding", []string{"3", "enter"}},
		{"full help", []string{"3", "?"}},
		{"search", []string{"3", "/", "x"}},
	}
	for _, sz := range sizes {
		for _, st := range states {
			m := newSized(t, sz[0], sz[1], bigData(50, 500), Options{})
			press(m, st.keys...)
			lines := strings.Split(screen(m), "\n")
			if len(lines) < sz[1] {
				t.Errorf("%dx%d %s: %d lines, want at least %d", sz[0], sz[1], st.name, len(lines), sz[1])
			}
			// Help and status may not fit a 1-line terminal; above the
			// minimum the screen must be exactly the terminal height.
			if sz[1] >= 10 && len(lines) != sz[1] {
				t.Errorf("%dx%d %s: %d lines, want %d", sz[0], sz[1], st.name, len(lines), sz[1])
			}
			for i, l := range lines {
				if w := ansi.StringWidth(l); w > sz[0] {
					t.Errorf("%dx%d %s: line %d is %d wide: %q", sz[0], sz[1], st.name, i, w, l)
				}
			}
		}
	}
}

func TestResize(t *testing.T) {
	m := newSized(t, 80, 24, fixtureData(), Options{})
	press(m, "3")
	if s := screen(m); strings.Contains(s, "MESSAGE") {
		t.Fatalf("80 columns should hide the message column:\n%s", s)
	}
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	s := screen(m)
	if !strings.Contains(s, "MESSAGE") || !strings.Contains(s, "API") {
		t.Errorf("120 columns should show API and MESSAGE:\n%s", s)
	}
	if n := strings.Count(s, "\n") + 1; n != 40 {
		t.Errorf("screen has %d lines after resize, want 40", n)
	}
}

func TestScrollKeepsCursorVisible(t *testing.T) {
	m := newSized(t, 80, 24, bigData(10, 500), Options{})
	press(m, "3", "G")
	s := screen(m)
	if !strings.Contains(s, "▸") || !strings.Contains(s, " 500") {
		t.Fatalf("bottom row not visible after G:\n%s", s)
	}
	press(m, "g")
	if s := screen(m); !strings.Contains(s, "▸ 16:49:25.123") {
		t.Fatalf("first row not selected after g:\n%s", s)
	}
	press(m, "space", "space")
	if c := m.findings.tbl.cursor; c != 2*m.findings.tbl.visible() {
		t.Errorf("cursor after two pages = %d, want %d", c, 2*m.findings.tbl.visible())
	}
}

func TestPolling(t *testing.T) {
	tests := []struct {
		name     string
		data     Data
		wantNext bool
		want     string
	}{
		{name: "replay running re-arms", data: Data{Source: "f.pcap"}, wantNext: true, want: "replaying"},
		{name: "replay done stops", data: Data{Source: "f.pcap", Done: true}, wantNext: false, want: "replay finished"},
		{name: "live", data: Data{Source: "eth0", Live: true}, wantNext: true, want: "live"},
		{name: "live stopped", data: Data{Source: "eth0", Live: true, Done: true}, want: "capture stopped"},
		{name: "producer error", data: Data{Source: "eth0", Live: true, Err: errFixture}, wantNext: true, want: "error: capture: interface went down"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewModel(Options{Feed: staticFeed{tt.data}, Interval: time.Millisecond})
			m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
			init := m.Init()
			if init == nil {
				t.Fatal("Init returned no command with a feed")
			}
			_, next := m.Update(init())
			if (next != nil) != tt.wantNext {
				t.Fatalf("re-armed = %v, want %v", next != nil, tt.wantNext)
			}
			if next != nil {
				if _, ok := next().(dataMsg); !ok {
					t.Errorf("tick produced no dataMsg")
				}
			}
			if s := screen(m); !strings.Contains(s, tt.want) {
				t.Errorf("screen lacks %q:\n%s", tt.want, s)
			}
		})
	}
}

func TestRates(t *testing.T) {
	m := newSized(t, 80, 24, Data{Elapsed: time.Second, Requests: 10, Packets: 100, Bytes: 1000}, Options{})
	m.Update(dataMsg{Data{Elapsed: 3 * time.Second, Requests: 50, Packets: 300, Bytes: 1000 + 4096}})
	// Same capture time again: a stalled feed adds no sample.
	m.Update(dataMsg{Data{Elapsed: 3 * time.Second, Requests: 50, Packets: 300, Bytes: 1000 + 4096}})
	o := m.overview
	if o.reqRate != 20 || o.pktRate != 100 || o.byteRate != 2048 {
		t.Errorf("rates = %v req/s %v pkt/s %v B/s, want 20, 100, 2048", o.reqRate, o.pktRate, o.byteRate)
	}
	if len(o.samples) != 1 {
		t.Errorf("samples = %v, want one", o.samples)
	}
	for i := range 100 {
		m.Update(dataMsg{Data{Elapsed: time.Duration(4+i) * time.Second, Requests: uint64(60 + i)}})
	}
	if len(o.samples) != sparkSamples {
		t.Errorf("kept %d samples, want %d", len(o.samples), sparkSamples)
	}
	if s := screen(m); !strings.Contains(s, "last 60 updates") || !strings.Contains(s, strings.Repeat("█", sparkSamples)) {
		t.Errorf("sparkline missing:\n%s", s)
	}
}

func TestDetailer(t *testing.T) {
	extra := []TimelineRow{{Time: at(5), Frame: 999, Client: "10.9.9.9:1", API: "Metadata", APIVersion: 13, Header: 2, Note: "from-detailer"}}
	d := fixtureData()
	for i := range d.Findings {
		d.Findings[i].Around = nil
	}
	feed := detailFeed{staticFeed{d}, extra}
	tests := []struct {
		name string
		keys []string
	}{
		{"instance timeline", []string{"2", "enter"}},
		{"finding around", []string{"3", "enter"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newSized(t, 120, 40, d, Options{Feed: feed})
			cmd := press(m, tt.keys...)
			if cmd == nil {
				t.Fatal("opening a detail fetched nothing from the Detailer")
			}
			m.Update(cmd())
			if s := screen(m); !strings.Contains(s, "from-detailer") {
				t.Errorf("detail lacks the Detailer's rows:\n%s", s)
			}
		})
	}
}

func TestDataRefreshKeepsSelection(t *testing.T) {
	m := newSized(t, 80, 24, fixtureData(), Options{})
	press(m, "2", "down") // billing, second by findings then key
	sel, _ := m.instances.tbl.selected()
	d := fixtureData()
	d.Instances[2].Findings = map[string]int{"member-id-not-uuid": 9} // legacy moves to the top
	m.Update(dataMsg{d})
	got, _ := m.instances.tbl.selected()
	if got.key != sel.key {
		t.Errorf("selection moved from %q to %q", sel.key, got.key)
	}
	if m.instances.rows[0].Key != "legacy 10.0.0.8 rdkafka" {
		t.Errorf("first row = %q, want the legacy instance", m.instances.rows[0].Key)
	}
}

// TestFindingsReorder: a finding that sorts first in a later snapshot
// (end-of-input findings carry frame 0) moves neither the selection nor
// the open detail.
func TestFindingsReorder(t *testing.T) {
	m := newSized(t, 80, 24, fixtureData(), Options{})
	press(m, "3", "down", "down") // client-id-changed
	d := fixtureData()
	late := FindingRow{Rule: "client-id-repeated", Severity: audit.SeverityInfo, Client: "10.0.0.5:53122", Message: "repeated"}
	d.Findings = append([]FindingRow{late}, d.Findings...)
	m.Update(dataMsg{d})
	if r, _ := m.findings.tbl.selected(); r.cells[fcRule] != "client-id-changed" {
		t.Errorf("selection moved to %q", r.cells[fcRule])
	}
	press(m, "enter")
	d.Findings = d.Findings[1:]
	m.Update(dataMsg{d})
	if s := screen(m); !strings.Contains(s, "client-id-changed") || !strings.Contains(s, "Observed     billing-2") {
		t.Errorf("open finding changed:\n%s", s)
	}
}

func TestNoData(t *testing.T) {
	m := NewModel(Options{})
	if m.Init() != nil {
		t.Error("Init without a feed should do nothing")
	}
	if got := m.render(); got != "" {
		t.Errorf("render before a size = %q, want empty", got)
	}
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	if s := screen(m); !strings.Contains(s, "waiting for data") {
		t.Errorf("screen lacks waiting message:\n%s", s)
	}
	press(m, "2", "enter", "s", "3", "enter", "v", "r", "i")
	if s := screen(m); !strings.Contains(s, "0/0 · sev warn+") {
		t.Errorf("empty findings pane:\n%s", s)
	}
	if v := m.View(); !v.AltScreen {
		t.Error("view should use the alternate screen")
	}
}
