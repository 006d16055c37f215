package tui

import (
	"fmt"
	"strings"

	"github.com/kwatch/kwatch/audit"
)

// Group table columns.
const (
	gcGroup = iota
	gcMembers
	gcClients
	gcShared
	gcFindings
)

// groupsSpec: one row per consumer/share/streams group, from the report's
// group view: its member IDs, which client holds which, and the member IDs
// more than one client used.
var groupsSpec = rollupSpec{
	noun: "groups",
	cols: []column{
		gcGroup:    {title: "GROUP", min: 12, max: 40, prio: 0},
		gcMembers:  {title: "MEMBER IDS", min: 12, prio: 1, right: true, num: true},
		gcClients:  {title: "CLIENTS", min: 9, prio: 2, right: true, num: true},
		gcShared:   {title: "SHARED IDS", min: 12, prio: 1, right: true, num: true},
		gcFindings: {title: "FINDINGS", min: 10, prio: 3, right: true, num: true},
	},
	sortCol: gcShared,
	build:   buildGroups,
	empty:   "no group seen yet (member IDs come from the group heartbeats)",
}

func buildGroups(d *Data) []rollupRow {
	findings := map[string]map[string]int{} // group -> rule -> kept findings
	for i := range d.Findings {
		if g := d.Findings[i].Group; g != "" {
			getOrMake(findings, g, func() map[string]int { return map[string]int{} })[d.Findings[i].Rule]++
		}
	}
	rows := make([]rollupRow, 0, len(d.Groups))
	for i := range d.Groups {
		g := &d.Groups[i]
		clients := map[string]bool{}
		shared := 0
		for _, m := range g.Members {
			for _, c := range m.Clients {
				clients[c] = true
			}
			if m.Shared {
				shared++
			}
		}
		byRule := findings[g.Group]
		r := rollupRow{key: "group " + g.Group, nums: map[int]int{
			gcMembers: len(g.Members), gcClients: len(clients), gcShared: shared, gcFindings: sumValues(byRule),
		}}
		r.cells = []string{gcGroup: g.Group}
		for c := gcMembers; c <= gcFindings; c++ {
			r.cells = append(r.cells, count(r.nums[c]))
		}
		if shared > 0 {
			warn := audit.SeverityWarn
			r.sev = &warn
		}
		r.detail = func(st *Styles, width int) string { return groupDetail(st, g, len(clients), byRule, width) }
		rows = append(rows, r)
	}
	return rows
}

// getOrMake returns m[k], made with mk and stored when absent.
func getOrMake[V any](m map[string]V, k string, mk func() V) V {
	v, ok := m[k]
	if !ok {
		v = mk()
		m[k] = v
	}
	return v
}

// groupDetail lists a group's member IDs with the clients that used each,
// shared ones first, then the group's findings.
func groupDetail(st *Styles, g *GroupRow, clients int, findings map[string]int, width int) string {
	d := &doc{st: st, width: width}
	d.title("Group " + g.Group)
	d.field("Clients", count(clients))
	d.title(fmt.Sprintf("Member IDs (%d): which client holds which", len(g.Members)))
	for _, shared := range []bool{true, false} {
		for _, m := range g.Members {
			if m.Shared != shared {
				continue
			}
			line := fmt.Sprintf("  %-36s  epoch %-4d %s", m.MemberID, m.Epoch, strings.Join(m.Clients, ", "))
			style := st.Value
			if shared {
				line += "  (shared: one member ID, several clients)"
				style = st.Sev[audit.SeverityWarn]
			}
			d.hanging(line, style, 4)
		}
	}
	d.title("Findings of this group")
	if len(findings) == 0 {
		d.line("  none", st.Dim)
	}
	for _, rule := range sortedKeys(findings) {
		d.line(fmt.Sprintf("  %s × %d", rule, findings[rule]), st.Value)
	}
	return d.String()
}
