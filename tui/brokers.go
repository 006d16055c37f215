package tui

import (
	"fmt"

	"github.com/kwatch/kwatch/audit"
)

// Broker table columns.
const (
	bcBroker = iota
	bcClients
	bcFindings
	bcRules
)

// brokersSpec: one row per broker, from the report's broker view: the
// clients that used it and the broker rules it broke (accepting requests a
// conforming broker rejects, generating member IDs, ...).
var brokersSpec = rollupSpec{
	noun: "brokers",
	cols: []column{
		bcBroker:   {title: "BROKER", min: 15, max: 40, prio: 0},
		bcClients:  {title: "CLIENTS", min: 9, prio: 1, right: true, num: true},
		bcFindings: {title: "FINDINGS", min: 10, prio: 1, right: true, num: true},
		bcRules:    {title: "RULES BROKEN", min: 12, max: 80, prio: 2},
	},
	sortCol: bcFindings,
	build:   buildBrokers,
	empty:   "no broker seen yet",
}

func buildBrokers(d *Data) []rollupRow {
	cases := map[string][]*CaseRow{}
	for i := range d.Cases {
		if c := &d.Cases[i]; c.Broker != "" {
			cases[c.Broker] = append(cases[c.Broker], c)
		}
	}
	rows := make([]rollupRow, 0, len(d.Brokers))
	for i := range d.Brokers {
		b := &d.Brokers[i]
		var worst *audit.Severity
		for _, c := range cases[b.Broker] {
			if worst == nil || c.Severity > *worst {
				s := c.Severity
				worst = &s
			}
		}
		n := sumValues(b.Findings)
		r := rollupRow{key: "broker " + b.Broker, sev: worst, nums: map[int]int{bcClients: b.Clients, bcFindings: n}}
		r.cells = []string{bcBroker: b.Broker, bcClients: count(b.Clients), bcFindings: count(n), bcRules: list(sortedKeys(b.Findings), 3)}
		bc := cases[b.Broker]
		r.detail = func(st *Styles, width int) string { return brokerDetail(st, b, bc, width) }
		rows = append(rows, r)
	}
	return rows
}

// brokerDetail lists a broker's cases: each broker rule it broke, how
// often, where.
func brokerDetail(st *Styles, b *BrokerRow, cases []*CaseRow, width int) string {
	d := &doc{st: st, width: width}
	d.title("Broker " + b.Broker)
	d.field("Clients", count(b.Clients))
	d.title(fmt.Sprintf("Broker rules broken (%d)", len(cases)))
	if len(cases) == 0 {
		d.line("  none: it answered as a conforming broker would, where kwatch could tell", st.Dim)
	}
	for _, c := range cases {
		d.line(fmt.Sprintf("  %-5s %8s  %s  %s", c.Severity, count(c.Count), c.Rule, frameSpan(c.FirstFrame, c.LastFrame)), st.sev(c.Severity))
	}
	return d.String()
}
