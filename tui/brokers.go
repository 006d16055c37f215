package tui

import (
	"fmt"
	"strings"
)

// Broker table columns.
const (
	bcBroker = iota
	bcClients
	bcFindings
	bcRules
)

// brokersSpec: one row per broker, with the clients that used it and the
// broker rules it broke (accepting requests a conforming broker rejects,
// generating member IDs, ...), from the report's broker cases.
var brokersSpec = rollupSpec{
	noun: "brokers",
	cols: []column{
		bcBroker:   {title: "BROKER", min: 15, max: 40, prio: 0},
		bcClients:  {title: "CLIENTS", min: 9, prio: 1, right: true},
		bcFindings: {title: "FINDINGS", min: 10, prio: 1, right: true},
		bcRules:    {title: "RULES BROKEN", min: 12, max: 80, prio: 2},
	},
	numeric: func(c int) bool { return c == bcClients || c == bcFindings },
	sortCol: bcFindings,
	build:   buildBrokers,
	empty:   "no broker seen yet",
}

type brokerInfo struct {
	clients []string
	cases   []*CaseRow
}

func buildBrokers(d *Data) []rollupRow {
	brokers := map[string]*brokerInfo{}
	get := func(b string) *brokerInfo { return getOrMake(brokers, b, func() *brokerInfo { return &brokerInfo{} }) }
	for i := range d.Instances {
		in := &d.Instances[i]
		for _, b := range in.Brokers {
			bi := get(b)
			bi.clients = append(bi.clients, instanceLabel(in))
		}
	}
	for i := range d.Cases {
		if c := &d.Cases[i]; c.Broker != "" {
			bi := get(c.Broker)
			bi.cases = append(bi.cases, c)
		}
	}
	rows := make([]rollupRow, 0, len(brokers))
	for _, b := range sortedKeys(brokers) {
		bi := brokers[b]
		n := 0
		var rules []string
		var worst *Severity
		for _, c := range bi.cases {
			n += int(c.Count)
			rules = append(rules, c.Rule)
			if worst == nil || c.Severity > *worst {
				s := c.Severity
				worst = &s
			}
		}
		r := rollupRow{key: "broker " + b, sev: worst, nums: map[int]int{bcClients: len(bi.clients), bcFindings: n}}
		r.cells = []string{bcBroker: b, bcClients: count(len(bi.clients)), bcFindings: count(n), bcRules: list(rules, 3)}
		r.detail = func(st *Styles, width int) string { return brokerDetail(st, b, bi, width) }
		rows = append(rows, r)
	}
	return rows
}

// brokerDetail lists a broker's cases, then the clients that used it.
func brokerDetail(st *Styles, b string, bi *brokerInfo, width int) string {
	d := &doc{st: st, width: width}
	d.title("Broker " + b)
	d.title(fmt.Sprintf("Broker rules broken (%d)", len(bi.cases)))
	if len(bi.cases) == 0 {
		d.line("  none: it answered as a conforming broker would, where kwatch could tell", st.Dim)
	}
	for _, c := range bi.cases {
		d.line(fmt.Sprintf("  %-5s %8s  %s  %s", c.Severity, count(c.Count), c.Rule, frameSpan(c.FirstFrame, c.LastFrame)), st.sev(c.Severity))
	}
	d.title(fmt.Sprintf("Clients (%d)", len(bi.clients)))
	d.text(strings.Join(bi.clients, ", "), st.Value)
	return d.String()
}
