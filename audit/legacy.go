package audit

import (
	"slices"

	"github.com/kwatch/kwatch/decode"
	"github.com/kwatch/kwatch/flow"
)

// Clients without a header instance ID are grouped per (host, first client
// ID): one row for every process on a host that names itself alike. Two
// processes there (two consumer handles in one JVM, two replicas with one
// client ID) show themselves by their telemetry IDs: each gets its own from
// the broker. A connection whose telemetry ID differs from the one its row
// learned from another connection that is still open belongs to another
// process, and moves to a row of its own: (host, client ID, process n).

// maxProcesses bounds the rows one (host, client ID) splits into; past it
// the connection stays where it is (counted in state_limited).
const maxProcesses = 16

// telemetryOwner returns the row whose telemetry ID c's telemetry ID id
// is: r itself, unless r is a legacy row that learned another telemetry ID
// from a connection still open, when c moves to the row of its own process.
func (a *InstanceAuditor) telemetryOwner(c *connBook, o *Observation, r *row, id decode.UUID) *row {
	o.Complete()
	if t := r.tel; !r.legacy || t == nil || t.id.IsZero() || t.id == id || t.by == o.Conn || !a.open(t.by) {
		r.telemetry().by = o.Conn
		return r
	}
	for p := uint16(1); p < maxProcesses; p++ {
		k := r.lkey
		k.process = p
		other := a.legacy[k]
		if other == nil {
			other = &row{legacy: true, lkey: k, firstFrame: o.Conn.StartFrame, firstSeen: r.firstSeen, lastSeen: r.lastSeen}
			a.legacy[k] = other
			a.addRow(other)
		} else if t := other.telemetryID(); !t.IsZero() && t != id {
			continue
		}
		c.leave(r)
		c.row = other
		a.register(c, o, other)
		other.telemetry().by = o.Conn
		return other
	}
	a.t.stateLimited++
	return r
}

// leave takes c off r's books: r no longer counts it among its
// connections (what c's requests already added to r stays).
func (c *connBook) leave(r *row) {
	for i := range int(c.nTouched) {
		if c.touched[i] != r {
			continue
		}
		if !c.closed {
			r.open--
		}
		c.nTouched--
		c.touched[i], c.touched[c.nTouched] = c.touched[c.nTouched], nil
		break
	}
	r.conns--
	r.connList = slices.DeleteFunc(r.connList, func(id flow.ConnID) bool { return id == *c.id })
}

// open reports whether the connection id is known and not ended.
func (a *InstanceAuditor) open(id flow.ConnID) bool {
	b := a.books.book(id)
	return b != nil && !b.closed
}
