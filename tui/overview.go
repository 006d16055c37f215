package tui

import (
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/kwatch/kwatch/audit"
)

// sparkSamples is how many updates the request-rate sparkline keeps.
const sparkSamples = 60

// Bounds of the overview's lists: past them a "+N more" line points to
// the panes that list everything.
const (
	overviewClients  = 12
	overviewCases    = 6
	overviewSoftware = 8
)

// overview is the first pane: the compliance summary (per client its
// rule cases), findings by rule, client software, then the traffic
// counters, rates and a request-rate sparkline. It scrolls.
type overview struct {
	c             *common
	data          *Data
	width, height int
	det           detail

	// prev is the last snapshot's counters; rates are the deltas over the
	// capture time between the two snapshots.
	prev              Data
	havePrev          bool
	pktRate, byteRate float64
	reqRate           float64
	haveRate          bool
	samples           []float64 // requests/s, oldest first
}

func newOverview(c *common) *overview { return &overview{c: c, det: newDetail(c)} }

func (o *overview) SetSize(w, h int) {
	o.width, o.height = w, h
	o.det.setSize(w, h)
	o.refresh()
}

func (o *overview) SetData(d *Data) {
	o.data = d
	if o.havePrev && d.Elapsed > o.prev.Elapsed {
		dt := (d.Elapsed - o.prev.Elapsed).Seconds()
		o.pktRate = float64(d.Packets-min(o.prev.Packets, d.Packets)) / dt
		o.byteRate = float64(d.Bytes-min(o.prev.Bytes, d.Bytes)) / dt
		o.reqRate = float64(d.Requests-min(o.prev.Requests, d.Requests)) / dt
		o.haveRate = true
		o.samples = append(o.samples, o.reqRate)
		if len(o.samples) > sparkSamples {
			o.samples = append(o.samples[:0], o.samples[len(o.samples)-sparkSamples:]...)
		}
	}
	// Only advance the reference when time moved, so a stalled feed does
	// not turn into a zero rate.
	if !o.havePrev || d.Elapsed > o.prev.Elapsed {
		o.prev = Data{Elapsed: d.Elapsed, Packets: d.Packets, Bytes: d.Bytes, Requests: d.Requests}
		o.havePrev = true
	}
	o.refresh()
}

func (o *overview) Update(msg tea.Msg) tea.Cmd {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		return o.det.update(k)
	}
	return nil
}

func (o *overview) Capturing() bool { return false }

// Status says what the figures are, not more figures: the overview shows
// the counts.
func (o *overview) Status() string {
	if o.data == nil {
		return ""
	}
	s := "figures grow until the end of the file"
	switch {
	case o.data.Done:
		s = "the report is final"
	case o.data.Live:
		s = "figures update as packets arrive"
	}
	if sc := o.det.scroll(); sc != "" {
		s += " · " + sc
	}
	return s
}

func (o *overview) ShortHelp() []key.Binding {
	k := o.c.keys
	return append([]key.Binding{k.Down, k.Clients, k.Findings}, k.globalKeys()...)
}

func (o *overview) FullHelp() [][]key.Binding {
	return [][]key.Binding{o.c.keys.scrollKeys(), o.c.keys.globalColumn()}
}

func (o *overview) View() string {
	if o.data == nil {
		return o.c.styles.Dim.Render("waiting for data…")
	}
	return o.det.view()
}

func (o *overview) refresh() {
	if o.data == nil || o.width <= 0 {
		return
	}
	d := &doc{st: o.c.styles, width: o.width}
	o.totals(d)
	o.compliance(d)
	o.byRule(d)
	o.software(d)
	o.traffic(d)
	o.det.setContent(d.String())
}

// lab is a label column of the overview.
func (o *overview) lab(s string) string { return o.c.styles.Label.Render(fit(s, 12, false)) }

// totals: findings by severity and whether the audit saw everything.
func (o *overview) totals(d *doc) {
	st, data := o.c.styles, o.data
	sev := data.FindingsBySeverity
	parts := make([]string, 0, 3)
	for _, s := range []audit.Severity{audit.SeverityError, audit.SeverityWarn, audit.SeverityInfo} {
		txt := count(sev[s]) + " " + s.String()
		if sev[s] == 0 {
			txt = st.Dim.Render(txt) // a zero must not draw the eye
		} else {
			txt = st.sev(s).Render(txt)
		}
		parts = append(parts, txt)
	}
	d.line(o.lab("Findings")+strings.Join(parts, " · "), st.Value)
	d.line(o.lab("Coverage")+coverageLine(data), st.Value)
	for _, w := range data.Warnings {
		d.line(o.lab("")+st.Sev[audit.SeverityWarn].Render("incomplete: "+w), st.Value)
	}
}

// compliance lists per client (or broker) its rule cases, in the report's
// order (most severe first).
func (o *overview) compliance(d *doc) {
	data := o.data
	if len(data.Cases) == 0 {
		d.title("Compliance by client")
		msg := "no rule broken so far"
		if data.Done {
			msg = "no rule broken"
		}
		d.line("  "+msg, o.c.styles.Dim)
		return
	}
	var order []string
	byClient := map[string][]*CaseRow{}
	for i := range data.Cases {
		c := &data.Cases[i]
		name := caseOwner(c)
		if _, ok := byClient[name]; !ok {
			order = append(order, name)
		}
		byClient[name] = append(byClient[name], c)
	}
	d.title(fmt.Sprintf("Compliance by client (%s clients, %s cases)", count(len(order)), count(len(data.Cases))))
	for _, name := range order[:min(len(order), overviewClients)] {
		cases := byClient[name]
		head := "  " + name
		if sw := cases[0].Software; sw != "" && cases[0].Broker == "" {
			head += o.c.styles.Dim.Render("  " + sw)
		}
		d.line(head, o.c.styles.Value)
		for _, c := range cases[:min(len(cases), overviewCases)] {
			d.line(fmt.Sprintf("    %s %8s  %s", o.sevTag(c.Severity), count(c.Count), c.Rule)+
				o.c.styles.Dim.Render("  "+frameSpan(c.FirstFrame, c.LastFrame)), o.c.styles.Value)
		}
		if more := len(cases) - overviewCases; more > 0 {
			d.line(fmt.Sprintf("    +%d more cases (3 findings, i filters by instance)", more), o.c.styles.Dim)
		}
	}
	if more := len(order) - overviewClients; more > 0 {
		d.line(fmt.Sprintf("  +%s more clients (2 instances)", count(more)), o.c.styles.Dim)
	}
}

// caseOwner names the client or broker of a case.
func caseOwner(c *CaseRow) string {
	if c.Broker != "" {
		return "broker " + c.Broker
	}
	return "client " + orDash(c.Client)
}

func (o *overview) sevTag(s audit.Severity) string {
	return o.c.styles.sev(s).Render(fit(s.String(), 5, false))
}

// byRule lists rules by their most severe finding, errors first, then by
// count.
func (o *overview) byRule(d *doc) {
	data := o.data
	if len(data.FindingsByRule) == 0 {
		return
	}
	sevOf := func(r string) audit.Severity {
		if s, ok := data.RuleSeverity[r]; ok {
			return s
		}
		worst := audit.SeverityInfo
		for i := range data.Findings {
			if data.Findings[i].Rule == r {
				worst = max(worst, data.Findings[i].Severity)
			}
		}
		return worst
	}
	rules := sortedKeys(data.FindingsByRule)
	sevs := make(map[string]audit.Severity, len(rules))
	for _, r := range rules {
		sevs[r] = sevOf(r)
	}
	slices.SortStableFunc(rules, func(a, b string) int {
		if sevs[a] != sevs[b] {
			return int(sevs[b]) - int(sevs[a])
		}
		return data.FindingsByRule[b] - data.FindingsByRule[a]
	})
	d.title("Findings by rule")
	for _, r := range rules {
		d.line(fmt.Sprintf("  %s %8s  %s", o.sevTag(sevs[r]), count(data.FindingsByRule[r]), r), o.c.styles.Value)
	}
}

// software lists the clients by software version.
func (o *overview) software(d *doc) {
	sw := o.data.Software
	if len(sw) == 0 {
		return
	}
	d.title("Client software")
	for _, s := range sw[:min(len(sw), overviewSoftware)] {
		name := s.Software
		if name == "" {
			name = "(not sent)"
		}
		line := fmt.Sprintf("  %-28s %5s clients, %s breaking rules", name, count(s.Clients), count(s.Breaking))
		if rules := sortedKeys(s.Findings); len(rules) > 0 {
			line += o.c.styles.Dim.Render(": " + list(rules, 3))
		}
		d.line(line, o.c.styles.Value)
	}
	if more := len(sw) - overviewSoftware; more > 0 {
		d.line(fmt.Sprintf("  +%d more versions", more), o.c.styles.Dim)
	}
}

// traffic: what was read, with rates.
func (o *overview) traffic(d *doc) {
	st, data := o.c.styles, o.data
	d.title("Traffic")
	d.line(o.lab("Capture")+orDash(data.Source), st.Value)
	clock := " of capture time"
	if data.Live {
		clock = " capturing"
	}
	d.line(o.lab("Elapsed")+elapsed(data.Elapsed)+st.Dim.Render(clock), st.Value)
	d.line(st.Header.Render(fmt.Sprintf("%-12s%14s %12s %12s", "", "total", "now/s", "avg/s")), st.Value)
	avg := func(n uint64) float64 {
		if data.Elapsed <= 0 {
			return -1
		}
		return float64(n) / data.Elapsed.Seconds()
	}
	now := func(v float64) float64 {
		if !o.haveRate || data.Done {
			return -1 // a finished replay has no "now"
		}
		return v
	}
	d.line(o.lab("Packets")+fmt.Sprintf("%14s %12s %12s", count(data.Packets), rate(now(o.pktRate)), rate(avg(data.Packets))), st.Value)
	d.line(o.lab("Bytes")+fmt.Sprintf("%14s %12s %12s", bytesIEC(float64(data.Bytes)), byteRate(now(o.byteRate)), byteRate(avg(data.Bytes))), st.Value)
	d.line(o.lab("Requests")+fmt.Sprintf("%14s %12s %12s", count(data.Requests), rate(now(o.reqRate)), rate(avg(data.Requests))), st.Value)
	h := data.RequestsByHeader
	d.line(o.lab("")+st.Dim.Render(fmt.Sprintf("by header: v0 %s · v1 %s · v2 %s · v3 %s", count(h[0]), count(h[1]), count(h[2]), count(h[3]))), st.Value)
	d.line(o.lab("Connections")+connLine(data), st.Value)
	o.spark(d)
}

// connLine counts connections: every TCP one followed, the Kafka ones
// among them, those still open.
func connLine(d *Data) string {
	kafka := count(d.Connections) + " Kafka"
	if d.OpenConns >= 0 && !d.Done {
		kafka += fmt.Sprintf(" (%s open)", count(d.OpenConns))
	}
	s := kafka
	if d.TCPConns >= 0 {
		s = count(d.TCPConns) + " TCP · " + kafka
	}
	return s + " · " + count(len(d.Instances)) + " client instances"
}

func (o *overview) spark(d *doc) {
	st, data := o.c.styles, o.data
	d.b.WriteByte('\n')
	switch {
	case len(o.samples) > 0:
		peak := 0.0
		for _, v := range o.samples {
			peak = max(peak, v)
		}
		d.line(st.Title.Render("Requests/s")+st.Dim.Render(fmt.Sprintf(" last %d updates, peak %s", len(o.samples), rate(peak))), st.Value)
		d.line(st.Spark.Render(sparkline(o.samples, min(sparkSamples, o.width))), st.Value)
	case data.Done && data.Elapsed > 0:
		d.line(st.Title.Render("Requests/s")+st.Dim.Render(fmt.Sprintf(" %s on average: the input ended before a second update",
			rate(float64(data.Requests)/data.Elapsed.Seconds()))), st.Value)
	case data.Done:
		d.line(st.Title.Render("Requests/s")+st.Dim.Render(" none: the input ended at once"), st.Value)
	default:
		d.line(st.Title.Render("Requests/s")+st.Dim.Render(" no rate yet: it needs two updates"), st.Value)
	}
}

// byteRate is rate for bytes.
func byteRate(v float64) string {
	if v < 0 {
		return "-"
	}
	return bytesIEC(v)
}

// coverageLine lists the non-zero coverage events in name order, and says
// when the input failed or packets were cut: "none" only when nothing is
// known to be missing.
func coverageLine(d *Data) string {
	var parts []string
	if d.Err != nil {
		parts = append(parts, "input failed")
	}
	if d.Truncated > 0 {
		parts = append(parts, fmt.Sprintf("snap-length-cut packets %s", count(d.Truncated)))
	}
	m := d.Coverage
	for _, k := range sortedKeys(m) {
		if m[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s %s", k, count(m[k])))
		}
	}
	switch {
	case len(parts) > 0:
		return strings.Join(parts, " · ")
	case len(d.Warnings) > 0:
		return "incomplete (below)"
	}
	return "none: everything was seen"
}
