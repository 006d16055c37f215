package tui

import (
	"fmt"
	"sort"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// sparkSamples is how many updates the request-rate sparkline keeps.
const sparkSamples = 60

// overview is the first pane: totals, rates and a request-rate sparkline.
type overview struct {
	c             *common
	data          *Data
	width, height int

	// prev is the last snapshot's counters; rates are the deltas over the
	// capture time between the two snapshots.
	prev              Data
	havePrev          bool
	pktRate, byteRate float64
	reqRate           float64
	haveRate          bool
	samples           []float64 // requests/s, oldest first
}

func newOverview(c *common) *overview { return &overview{c: c} }

func (o *overview) SetSize(w, h int) { o.width, o.height = w, h }

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
	// Only advance the reference when capture time moved, so a stalled
	// feed does not turn into a zero rate.
	if !o.havePrev || d.Elapsed > o.prev.Elapsed {
		o.prev = Data{Elapsed: d.Elapsed, Packets: d.Packets, Bytes: d.Bytes, Requests: d.Requests}
		o.havePrev = true
	}
}

func (o *overview) Update(tea.Msg) tea.Cmd { return nil }
func (o *overview) Capturing() bool        { return false }
func (o *overview) Status() string {
	if o.data == nil {
		return ""
	}
	return fmt.Sprintf("%s instances · %s findings", count(len(o.data.Instances)), count(o.data.findingTotal()))
}

func (o *overview) ShortHelp() []key.Binding {
	k := o.c.keys
	return append([]key.Binding{k.Clients, k.Findings}, k.globalKeys()...)
}

func (o *overview) FullHelp() [][]key.Binding {
	return [][]key.Binding{o.c.keys.globalColumn(), {o.c.keys.Help}}
}

func (o *overview) View() string {
	st := o.c.styles
	if o.data == nil {
		return st.Dim.Render("waiting for data…")
	}
	d := o.data
	var lines []string
	add := func(s string) { lines = append(lines, s) }
	lab := func(s string) string { return st.Label.Render(fit(s, 12, false)) }

	add(lab("Capture") + orDash(d.Source))
	add(lab("Elapsed") + elapsed(d.Elapsed) + st.Dim.Render(" of capture time"))
	add("")
	add(st.Header.Render(fmt.Sprintf("%-12s%14s %12s %12s", "", "total", "now/s", "avg/s")))
	avg := func(n uint64) float64 {
		if d.Elapsed <= 0 {
			return -1
		}
		return float64(n) / d.Elapsed.Seconds()
	}
	now := func(v float64) float64 {
		if !o.haveRate {
			return -1
		}
		return v
	}
	add(lab("Packets") + fmt.Sprintf("%14s %12s %12s", count(d.Packets), rate(now(o.pktRate)), rate(avg(d.Packets))))
	add(lab("Bytes") + fmt.Sprintf("%14s %12s %12s", bytesIEC(float64(d.Bytes)), byteRate(now(o.byteRate)), byteRate(avg(d.Bytes))))
	add(lab("Requests") + fmt.Sprintf("%14s %12s %12s", count(d.Requests), rate(now(o.reqRate)), rate(avg(d.Requests))))
	h := d.RequestsByHeader
	add(lab("") + st.Dim.Render(fmt.Sprintf("by header: v0 %s · v1 %s · v2 %s · v3 %s", count(h[0]), count(h[1]), count(h[2]), count(h[3]))))
	conns := count(d.Connections) + " seen"
	if d.OpenConns >= 0 {
		conns = count(d.OpenConns) + " open of " + conns
	}
	add(lab("Connections") + conns + " · " + count(len(d.Instances)) + " client instances")
	sev := d.FindingsBySeverity
	add(lab("Findings") + st.Sev[SeverityError].Render(count(sev[SeverityError])+" error") + " · " +
		st.Sev[SeverityWarn].Render(count(sev[SeverityWarn])+" warn") + " · " +
		st.Sev[SeverityInfo].Render(count(sev[SeverityInfo])+" info"))
	add(lab("Coverage") + coverageLine(d.Coverage))
	add("")
	peak := 0.0
	for _, v := range o.samples {
		peak = max(peak, v)
	}
	if len(o.samples) == 0 {
		add(st.Title.Render("Requests/s") + st.Dim.Render(" no rate yet: it needs two updates"))
	} else {
		add(st.Title.Render("Requests/s") + st.Dim.Render(fmt.Sprintf(" last %d updates, peak %s", len(o.samples), rate(peak))))
		add(st.Spark.Render(sparkline(o.samples, min(sparkSamples, o.width))))
	}

	if rules := o.topRules(); len(rules) > 0 {
		add("")
		add(st.Title.Render("Findings by rule"))
		for _, r := range rules {
			add(r)
		}
	}

	if len(lines) > o.height {
		lines = lines[:max(o.height, 0)]
	}
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, o.width, "…")
	}
	return strings.Join(lines, "\n")
}

// byteRate is rate for bytes.
func byteRate(v float64) string {
	if v < 0 {
		return "-"
	}
	return bytesIEC(v)
}

// coverageLine lists the non-zero coverage events in name order.
func coverageLine(m map[string]uint64) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		if m[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s %s", k, count(m[k])))
		}
	}
	if len(parts) == 0 {
		return "none: everything was seen"
	}
	return strings.Join(parts, " · ")
}

// topRules lists rules by finding count, most first, as many as fit.
func (o *overview) topRules() []string {
	d := o.data
	if len(d.FindingsByRule) == 0 {
		return nil
	}
	sevOf := make(map[string]Severity, len(d.FindingsByRule))
	for i := range d.Findings {
		sevOf[d.Findings[i].Rule] = d.Findings[i].Severity
	}
	rules := sortedKeys(d.FindingsByRule)
	sort.SliceStable(rules, func(i, j int) bool { return d.FindingsByRule[rules[i]] > d.FindingsByRule[rules[j]] })
	out := make([]string, 0, len(rules))
	for _, r := range rules {
		sev, known := sevOf[r]
		tag := "     "
		if known {
			tag = o.c.styles.sev(sev).Render(fit(sev.String(), 5, false))
		}
		out = append(out, fmt.Sprintf("  %s %8s  %s", tag, count(d.FindingsByRule[r]), r))
	}
	return out
}
