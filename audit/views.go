package audit

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// The report's views an operator asks for beside the clients: the groups
// (which client holds which member ID) and the brokers (how many clients,
// which broker rules they break). Both are computed from the report's rows
// and cases, so they cost nothing while packets flow.

// GroupView is one consumer, share or streams group: its member IDs and
// the clients that used each.
type GroupView struct {
	Group   string        `json:"group"`
	Members []GroupMember `json:"members"`
}

// GroupMember is one member ID of a group.
type GroupMember struct {
	MemberID string `json:"member_id"`
	// Clients names the report rows that used the ID: the instance ID, or
	// host and first client ID for a client without one.
	Clients []string `json:"clients"`
	// Shared: more than one client used the ID (member-id-collision says
	// when they did so at the same time).
	Shared bool `json:"shared"`
	// Epoch is the last member epoch a heartbeat carried with the ID
	// (0 join, -1 and -2 leave); when the ID is shared, that of one of its
	// clients.
	Epoch int32 `json:"epoch"`
}

// BrokerView is one broker: the clients seen talking to it and the
// findings of the broker rules (SPEC.md 3.5) against it.
type BrokerView struct {
	Broker   string            `json:"broker"`
	Clients  int               `json:"clients"`
	Findings map[string]uint64 `json:"findings"`
}

// rowName names a report row for a person.
func rowName(in *Instance) string {
	if !in.Legacy {
		return in.InstanceID
	}
	name := strings.Join(in.ClientHosts, ",")
	if len(in.ClientIDs) > 0 {
		name += " " + strconv.Quote(in.ClientIDs[0])
	}
	return name
}

// groupViews lists the groups of rows, by name, members by ID.
func groupViews(rows []Instance) []GroupView {
	holders := map[string]map[string][]string{} // group -> member ID -> rows
	epochs := map[string]int32{}                // group NUL member ID -> last epoch
	for i := range rows {
		for g, ids := range rows[i].MemberIDs {
			if holders[g] == nil {
				holders[g] = map[string][]string{}
			}
			es := rows[i].epochs[g]
			for j, m := range ids {
				holders[g][m] = append(holders[g][m], rowName(&rows[i]))
				if j < len(es) {
					epochs[g+"\x00"+m] = es[j]
				}
			}
		}
	}
	out := make([]GroupView, 0, len(holders))
	for g, members := range holders {
		v := GroupView{Group: g}
		for m, clients := range members {
			slices.Sort(clients)
			v.Members = append(v.Members, GroupMember{MemberID: m, Clients: clients, Shared: len(clients) > 1, Epoch: epochs[g+"\x00"+m]})
		}
		slices.SortFunc(v.Members, func(x, y GroupMember) int { return strings.Compare(x.MemberID, y.MemberID) })
		out = append(out, v)
	}
	slices.SortFunc(out, func(x, y GroupView) int { return strings.Compare(x.Group, y.Group) })
	return out
}

// brokerViews lists the brokers of rows, with the broker rules' findings of
// cases.
func brokerViews(rows []Instance, cases []Case) []BrokerView {
	idx := map[string]*BrokerView{}
	view := func(b string) *BrokerView {
		v := idx[b]
		if v == nil {
			v = &BrokerView{Broker: b, Findings: map[string]uint64{}}
			idx[b] = v
		}
		return v
	}
	for i := range rows {
		for _, b := range rows[i].Brokers {
			view(b).Clients++
		}
	}
	for i := range cases {
		if c := &cases[i]; c.Broker != "" {
			view(c.Broker).Findings[c.Rule] += c.Count
		}
	}
	out := make([]BrokerView, 0, len(idx))
	for _, v := range idx {
		out = append(out, *v)
	}
	slices.SortFunc(out, func(x, y BrokerView) int {
		if c := cmp.Compare(sum(y.Findings), sum(x.Findings)); c != 0 {
			return c
		}
		return strings.Compare(x.Broker, y.Broker)
	})
	return out
}
