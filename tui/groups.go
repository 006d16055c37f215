package tui

import (
	"fmt"
	"strings"
)

// Group table columns.
const (
	gcGroup = iota
	gcMembers
	gcClients
	gcCollisions
	gcFindings
)

// groupsSpec: one row per consumer/share/streams group, from the member
// IDs the instances used in it: its members, which client holds which
// member ID, and the member IDs more than one client used (collisions).
var groupsSpec = rollupSpec{
	noun: "groups",
	cols: []column{
		gcGroup:      {title: "GROUP", min: 12, max: 40, prio: 0},
		gcMembers:    {title: "MEMBER IDS", min: 12, prio: 1, right: true},
		gcClients:    {title: "CLIENTS", min: 9, prio: 2, right: true},
		gcCollisions: {title: "COLLISIONS", min: 12, prio: 1, right: true},
		gcFindings:   {title: "FINDINGS", min: 10, prio: 3, right: true},
	},
	numeric: func(c int) bool { return c != gcGroup },
	sortCol: gcCollisions,
	build:   buildGroups,
	empty:   "no group seen yet (member IDs come from the group heartbeats)",
}

// groupInfo gathers one group.
type groupInfo struct {
	holders  map[string][]string // member ID -> clients using it
	clients  map[string]bool
	findings map[string]int // by rule
}

func buildGroups(d *Data) []rollupRow {
	groups := map[string]*groupInfo{}
	get := func(g string) *groupInfo {
		return getOrMake(groups, g, func() *groupInfo {
			return &groupInfo{holders: map[string][]string{}, clients: map[string]bool{}, findings: map[string]int{}}
		})
	}
	for i := range d.Instances {
		in := &d.Instances[i]
		for g, ids := range in.MemberIDs {
			gi := get(g)
			gi.clients[in.Key] = true
			for _, id := range ids {
				gi.holders[id] = append(gi.holders[id], instanceLabel(in))
			}
		}
	}
	for i := range d.Findings {
		if g := d.Findings[i].Group; g != "" {
			get(g).findings[d.Findings[i].Rule]++
		}
	}
	rows := make([]rollupRow, 0, len(groups))
	for _, g := range sortedKeys(groups) {
		gi := groups[g]
		collisions := 0
		for _, h := range gi.holders {
			if len(h) > 1 {
				collisions++
			}
		}
		r := rollupRow{key: "group " + g, nums: map[int]int{
			gcMembers: len(gi.holders), gcClients: len(gi.clients), gcCollisions: collisions, gcFindings: sumValues(gi.findings),
		}}
		r.cells = []string{gcGroup: g}
		for c := gcMembers; c <= gcFindings; c++ {
			r.cells = append(r.cells, count(r.nums[c]))
		}
		if collisions > 0 {
			warn := SeverityWarn
			r.sev = &warn
		}
		r.detail = func(st *Styles, width int) string { return groupDetail(st, g, gi, width) }
		rows = append(rows, r)
	}
	return rows
}

// getOrMake returns m[k], made with mk and stored when absent.
func getOrMake[V any](m map[string]*V, k string, mk func() *V) *V {
	v := m[k]
	if v == nil {
		v = mk()
		m[k] = v
	}
	return v
}

// groupDetail lists a group's member IDs with the clients that used each,
// collisions first.
func groupDetail(st *Styles, g string, gi *groupInfo, width int) string {
	d := &doc{st: st, width: width}
	d.title("Group " + g)
	d.field("Clients", count(len(gi.clients)))
	d.title(fmt.Sprintf("Member IDs (%d): which client holds which", len(gi.holders)))
	ids := sortedKeys(gi.holders)
	for _, collided := range []bool{true, false} {
		for _, id := range ids {
			h := gi.holders[id]
			if (len(h) > 1) != collided {
				continue
			}
			line := fmt.Sprintf("  %-36s  %s", id, strings.Join(h, ", "))
			style := st.Value
			if collided {
				line += "  (collision: one member ID, several clients)"
				style = st.Sev[SeverityWarn]
			}
			d.line(line, style)
		}
	}
	d.title("Findings of this group")
	if len(gi.findings) == 0 {
		d.line("  none", st.Dim)
	}
	for _, rule := range sortedKeys(gi.findings) {
		d.line(fmt.Sprintf("  %s × %d", rule, gi.findings[rule]), st.Value)
	}
	return d.String()
}
