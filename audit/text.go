package audit

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// ANSI colours for severities; used only when WriteText's color is true.
const (
	ansiReset  = "\x1b[0m"
	ansiBold   = "\x1b[1m"
	ansiRed    = "\x1b[31m"
	ansiYellow = "\x1b[33m"
	ansiCyan   = "\x1b[36m"
	ansiDim    = "\x1b[2m"
)

type painter bool

func (p painter) sev(s Severity, text string) string {
	if !p {
		return text
	}
	switch s {
	case SeverityError:
		return ansiBold + ansiRed + text + ansiReset
	case SeverityWarn:
		return ansiYellow + text + ansiReset
	case SeverityInfo:
		return ansiCyan + text + ansiReset
	}
	return text
}

func (p painter) bold(text string) string {
	if !p {
		return text
	}
	return ansiBold + text + ansiReset
}

func (p painter) dim(text string) string {
	if !p {
		return text
	}
	return ansiDim + text + ansiReset
}

func humanBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// writeHeader writes why the audit is incomplete, if it is, and the
// totals: the first lines of every text report and of the NDJSON summary.
func writeHeader(bw *bufio.Writer, p painter, r *Report) {
	t := &r.Totals
	pf := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }
	for _, why := range r.Warnings {
		pf("%s\n", p.sev(SeverityWarn, "INCOMPLETE AUDIT: "+PlainText(why)))
	}
	pf("%s\n", p.bold("kwatch identity audit (profile "+r.Profile+")"))
	if r.Start != "" {
		pf("  time         %s .. %s\n", r.Start, r.End)
	}
	pf("  capture      %d packets, %s\n", t.Packets, humanBytes(t.Bytes))
	if len(t.Unwrapped) > 0 {
		parts := make([]string, 0, len(t.Unwrapped))
		for _, k := range sortedKeys(t.Unwrapped) {
			parts = append(parts, fmt.Sprintf("%s %d", k, t.Unwrapped[k]))
		}
		pf("  unwrapped    %s\n", strings.Join(parts, ", "))
	}
	if t.NotKafkaConnections > 0 {
		pf("  connections  %d TCP, %d Kafka, %d not Kafka\n", t.Connections, t.KafkaConnections, t.NotKafkaConnections)
	} else {
		pf("  connections  %d TCP, %d Kafka\n", t.Connections, t.KafkaConnections)
	}
	if t.EvictedConnections > 0 {
		pf("  evicted      %d connections over --max-connections (a later packet of one joins mid-stream)\n", t.EvictedConnections)
	}
	pf("  requests     %d (header %s), %d responses\n", t.Requests, byVersion(t.RequestsByHeaderVersion), t.Responses)
	pf("  clients      %d with instance ID, %d without (legacy)\n", countRows(r.Instances, false), countRows(r.Instances, true))
	pf("  findings     %s, %s, %s\n",
		p.sev(SeverityError, fmt.Sprintf("%d error", t.FindingsBySeverity["error"])),
		p.sev(SeverityWarn, fmt.Sprintf("%d warn", t.FindingsBySeverity["warn"])),
		p.sev(SeverityInfo, fmt.Sprintf("%d info", t.FindingsBySeverity["info"])))
	if cov := coverageLine(t.Coverage); cov != "" {
		pf("  not seen     %s (see Coverage)\n", cov)
	}
	if t.Suppressed > 0 {
		pf("  suppressed   %d findings of cases the baseline lists\n", t.Suppressed)
	}
	if t.ClientIDRepeatBytes > 0 {
		pf("  client IDs   %d later requests repeated the client ID (%s that null would save)\n", t.ClientIDRepeats, humanBytes(t.ClientIDRepeatBytes))
	}
	if t.EvictedInstances > 0 || t.FindingsNotKept > 0 || t.StateLimited > 0 {
		pf("  limits       %d rows evicted, %d findings not kept, %d checks skipped at state bounds\n",
			t.EvictedInstances, t.FindingsNotKept, t.StateLimited)
	}
}

// WriteSummary writes the report's first lines and one line per case: the
// summary that kwatch read --format ndjson writes on stderr while stdout
// carries the findings.
func (r *Report) WriteSummary(w io.Writer, color bool) error {
	bw := bufio.NewWriter(w)
	p := painter(color)
	writeHeader(bw, p, r)
	const most = 20
	for i := range r.Cases[:min(len(r.Cases), most)] {
		c := &r.Cases[i]
		fmt.Fprintf(bw, "  %s %s x%d  %s\n", p.sev(c.Severity, fmt.Sprintf("%-5s", strings.ToUpper(c.Severity.String()))), c.Rule, c.Count, caseSubject(c))
	}
	if len(r.Cases) > most {
		fmt.Fprintf(bw, "  ... %d more cases (kwatch read --format json lists them all)\n", len(r.Cases)-most)
	}
	return bw.Flush()
}

// WriteText writes the report for a person: totals first, then the
// compliance summary, one block per client instance, every finding, and
// coverage. ANSI colours only when color is true.
func (r *Report) WriteText(w io.Writer, color bool) error {
	bw := bufio.NewWriter(w)
	p := painter(color)
	t := &r.Totals
	pf := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }

	writeHeader(bw, p, r)
	writeSummary(bw, p, r)

	for _, legacy := range []bool{false, true} {
		n := countRows(r.Instances, legacy)
		if n == 0 {
			continue
		}
		title := "Client instances"
		if legacy {
			title = "Clients without instance ID (by host and first client ID)"
		}
		pf("\n%s (%d)\n", p.bold(title), n)
		for i := range r.Instances {
			in := &r.Instances[i]
			if in.Legacy == legacy {
				writeInstance(bw, p, in)
			}
		}
	}

	writeViews(bw, p, r)

	pf("\n%s (%d)\n", p.bold("Findings"), t.Findings)
	if len(r.Findings) == 0 {
		pf("  none\n")
	}
	// A client that repeats its fault would fill the page: a person reads
	// the first few findings of each case, the summary counts them all.
	shown, unlisted := map[textCase]int{}, 0
	for i := range r.Findings {
		f := &r.Findings[i]
		k := textCaseOf(f)
		if shown[k] >= textPerCase {
			unlisted++
			continue
		}
		shown[k]++
		writeFinding(bw, p, f)
	}
	if unlisted > 0 {
		pf("  ... %d more findings of the cases above, not listed (the compliance summary counts them; --format json lists them)\n", unlisted)
	}
	if t.FindingsNotKept > 0 {
		pf("  ... %d more not kept (the report keeps a bounded number of findings, by count and memory; all are counted above)\n", t.FindingsNotKept)
	}

	pf("\n%s\n", p.bold("Coverage (what could not be audited)"))
	for _, k := range sortedKeys(t.Coverage) {
		pf("  %-20s %d\n", k, t.Coverage[k])
	}
	if t.UnobservableConnections > 0 {
		pf("  %-20s %d\n", "identity-unobservable", t.UnobservableConnections)
	}
	if t.KernelReceived > 0 || t.KernelDropped > 0 {
		pf("  %-20s %d of %d packets\n", "kernel-drops", t.KernelDropped, t.KernelReceived+t.KernelDropped)
	}
	return bw.Flush()
}

func writeInstance(w io.Writer, p painter, in *Instance) {
	pf := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	if in.Legacy {
		cid := "(no client ID)"
		if len(in.ClientIDs) > 0 {
			cid = fmt.Sprintf("%q", in.ClientIDs[0])
		}
		pf("  %s %s\n", p.bold(strings.Join(in.ClientHosts, ",")), cid)
	} else {
		pf("  %s  %s\n", p.bold(in.InstanceID), p.dim(in.InstanceIDHex))
		if len(in.ClientIDs) > 0 {
			pf("    client IDs   %s\n", quoteAll(in.ClientIDs))
		}
		pf("    hosts        %s\n", strings.Join(in.ClientHosts, ", "))
	}
	if in.SoftwareName != "" || in.SoftwareVersion != "" {
		pf("    software     %s %s\n", PlainText(in.SoftwareName), PlainText(in.SoftwareVersion))
	}
	pf("    brokers      %s\n", strings.Join(in.Brokers, ", "))
	pf("    connections  %d\n", in.Connections)
	for _, g := range sortedKeys(in.MemberIDs) {
		pf("    member IDs   group %q: %s\n", g, PlainText(strings.Join(in.MemberIDs[g], ", ")))
	}
	if in.TelemetryID != "" {
		pf("    telemetry ID %s\n", in.TelemetryID)
	}
	if len(in.Findings) == 0 {
		pf("    findings     none\n")
		return
	}
	var parts []string
	for _, rl := range Rules() {
		if n := in.Findings[rl.ID]; n > 0 {
			parts = append(parts, p.sev(rl.Severity, fmt.Sprintf("%s x%d", rl.ID, n)))
		}
	}
	pf("    findings     %s\n", strings.Join(parts, ", "))
}

func writeFinding(w io.Writer, p painter, f *Finding) {
	conf := ""
	if f.Confidence == ConfidencePartial {
		conf = " [partial]"
	}
	what := "connection"
	if f.APIKey >= 0 {
		what = fmt.Sprintf("%s v%d corr %d", f.API, f.APIVersion, f.CorrelationID)
	}
	where := fmt.Sprintf("frame %d", f.Frame)
	if f.Capture != "" {
		where += " of " + PlainText(f.Capture)
	}
	fmt.Fprintf(w, "  %s %s  %s  %s -> %s  %s%s\n", p.sev(f.Severity, fmt.Sprintf("%-5s", strings.ToUpper(f.Severity.String()))),
		p.bold(f.Rule), where, f.Conn.Client, f.Conn.Broker, what, conf)
	fmt.Fprintf(w, "        %s\n", PlainText(f.Message))
	if f.Expected != "" || f.Observed != "" {
		fmt.Fprintf(w, "        expected %s, observed %s\n", PlainText(f.Expected), PlainText(f.Observed))
	}
}

func countRows(in []Instance, legacy bool) int {
	n := 0
	for i := range in {
		if in[i].Legacy == legacy {
			n++
		}
	}
	return n
}

func byVersion(m map[string]uint64) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func coverageLine(m map[string]uint64) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		if m[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
		}
	}
	return strings.Join(parts, ", ")
}

func quoteAll(s []string) string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, ", ")
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// writeSummary writes the compliance summary: every case (rule and
// client), most severe and most frequent first, with where it was first
// and last seen and the fix; then the clients by software version.
func writeSummary(w *bufio.Writer, p painter, r *Report) {
	if len(r.Cases) == 0 && len(r.Suppressed) == 0 {
		return
	}
	who := map[string]bool{}
	for i := range r.Cases {
		who[r.Cases[i].Broker+caseClient(&r.Cases[i])] = true
	}
	fmt.Fprintf(w, "\n%s (%s of %s; fix them in this order)\n", p.bold("Compliance summary"),
		plural(uint64(len(r.Cases)), "problem"), countOf(len(who), "client or broker", "clients or brokers"))
	for i := range r.Cases {
		c := &r.Cases[i]
		fmt.Fprintf(w, "  %s %s  %s\n", p.sev(c.Severity, fmt.Sprintf("%-5s", strings.ToUpper(c.Severity.String()))),
			p.bold(c.Rule), plural(c.Count, "time"))
		if c.Broker != "" {
			fmt.Fprintf(w, "        broker   %s\n", c.Broker)
		} else {
			fmt.Fprintf(w, "        client   %s\n", caseClient(c))
		}
		if c.Count == 1 {
			fmt.Fprintf(w, "        seen     %s\n", frameText(&c.First))
		} else {
			fmt.Fprintf(w, "        seen     %s .. %s\n", frameText(&c.First), frameText(&c.Last))
		}
		fmt.Fprintf(w, "        fix      %s\n", c.Fix)
	}
	if len(r.Suppressed) > 0 {
		fmt.Fprintf(w, "\n%s (%d)\n", p.bold("Suppressed by the baseline"), len(r.Suppressed))
		for i := range r.Suppressed {
			c := &r.Suppressed[i]
			fmt.Fprintf(w, "  %-5s %s x%d  %s\n", strings.ToUpper(c.Severity.String()), c.Rule, c.Count, caseSubject(c))
		}
	}
	if len(r.Software) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s\n", p.bold("Client software"))
	for i := range r.Software {
		s := &r.Software[i]
		name := strings.TrimSuffix(PlainText(s.SoftwareName)+" "+PlainText(s.SoftwareVersion), " ")
		if name == "" {
			name = "(not named: no ApiVersions v3 seen)"
		}
		what := "no findings"
		if len(s.Findings) > 0 {
			parts := make([]string, 0, len(s.Findings))
			for _, k := range sortedKeys(s.Findings) {
				parts = append(parts, fmt.Sprintf("%s x%d", k, s.Findings[k]))
			}
			what = fmt.Sprintf("%s breaking rules: %s", plural(uint64(s.Breaking), "client"), strings.Join(parts, ", "))
		}
		fmt.Fprintf(w, "  %-32s %s, %s\n", name, plural(uint64(s.Clients), "client"), what)
	}
}

// caseSubject names whom a case is about: its broker, or its client.
func caseSubject(c *Case) string {
	if c.Broker != "" {
		return "broker " + c.Broker
	}
	return caseClient(c)
}

// caseClient names a case's client for a person: its instance ID, or its
// first client ID and hosts when it has none, with its software.
func caseClient(c *Case) string {
	var b strings.Builder
	if c.InstanceID != "" {
		b.WriteString("instance " + c.InstanceID)
	} else {
		b.WriteString("legacy client")
	}
	if len(c.ClientIDs) > 0 {
		b.WriteString(" " + strconv.Quote(c.ClientIDs[0]))
	}
	if len(c.ClientHosts) > 0 {
		b.WriteString(" on " + strings.Join(c.ClientHosts, ", "))
	}
	if c.SoftwareName != "" {
		b.WriteString(" (" + PlainText(strings.TrimSpace(c.SoftwareName+" "+c.SoftwareVersion)) + ")")
	}
	return b.String()
}

// frameText names a packet: frame (and capture) and time.
func frameText(f *FrameRef) string {
	if f.Capture != "" {
		return fmt.Sprintf("frame %d of %s (%s)", f.Frame, PlainText(f.Capture), f.Time)
	}
	return fmt.Sprintf("frame %d (%s)", f.Frame, f.Time)
}

// countOf is n with the singular or plural noun.
func countOf(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// textPerCase is how many findings of one case the text report lists.
const textPerCase = 10

// textCase approximates a finding's case for the text listing: its rule and
// the client (instance ID, or host and client ID) or, for a broker rule,
// the broker.
type textCase struct {
	rule   string
	client string
}

func textCaseOf(f *Finding) textCase {
	if f.rule.rule().AboutBroker() {
		return textCase{f.Rule, f.Conn.Broker.String()}
	}
	if !f.InstanceID.IsZero() {
		return textCase{f.Rule, JavaString(f.InstanceID)}
	}
	return textCase{f.Rule, f.Conn.Client.Addr().String() + "/" + f.ClientID}
}

// writeViews writes the groups (member IDs and who holds them) and the
// brokers (clients and broker findings).
func writeViews(w *bufio.Writer, p painter, r *Report) {
	if len(r.Groups) > 0 {
		fmt.Fprintf(w, "\n%s (%d)\n", p.bold("Groups"), len(r.Groups))
		for i := range r.Groups {
			g := &r.Groups[i]
			fmt.Fprintf(w, "  %s  %s\n", strconv.Quote(g.Group), countOf(len(g.Members), "member ID", "member IDs"))
			for _, m := range g.Members {
				shared := ""
				if m.Shared {
					shared = p.sev(SeverityError, "  shared by "+strconv.Itoa(len(m.Clients))+" clients")
				}
				fmt.Fprintf(w, "    %-26s epoch %-4d %s%s\n", PlainText(m.MemberID), m.Epoch, PlainText(strings.Join(m.Clients, "; ")), shared)
			}
		}
	}
	if len(r.Brokers) > 0 {
		fmt.Fprintf(w, "\n%s (%d)\n", p.bold("Brokers"), len(r.Brokers))
		for _, b := range r.Brokers {
			what := "no broker findings"
			if len(b.Findings) > 0 {
				parts := make([]string, 0, len(b.Findings))
				for _, k := range sortedKeys(b.Findings) {
					parts = append(parts, fmt.Sprintf("%s x%d", k, b.Findings[k]))
				}
				what = strings.Join(parts, ", ")
			}
			fmt.Fprintf(w, "  %-22s %s, %s\n", b.Broker, countOf(b.Clients, "client", "clients"), what)
		}
	}
}
