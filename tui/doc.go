// Package tui is kwatch's interactive terminal UI, built on Bubble Tea v2:
// an overview that leads with the compliance summary (per client its rule
// cases), then findings by rule, client software and the traffic
// counters; panes of client instances, findings, groups and brokers, each
// sortable and with a detail screen.
//
// Entry points: Run(ctx, Options) shows the UI until the user quits;
// Options.Feed supplies snapshots (AuditFeed reads a running
// audit.Auditor incrementally, ReportFeed and FromReport convert whole
// reports) and Options.Explain the rule texts (ExplainRule reads audit's
// rule table). A Recorder, in front of the auditor as its decode.Sink and
// behind it as its OnFinding, keeps what reports do not: the requests
// around each finding as it fires, and each instance's timeline. Meta
// carries what the caller knows: the packet loop's counters and, live,
// how long the capture has run.
//
// The UI never reads the audit state directly. It pulls a Data snapshot from
// the Feed on a tick that re-arms itself (at most ten times a second by
// default) and stops once a snapshot says Done, so the producer is never
// blocked by rendering: the only calls into the producer are Feed.Data (and,
// when the feed implements Detailer, one call per opened detail screen),
// each made from a Bubble Tea command goroutine, never from Update.
//
// Concurrency: a Model is owned by the Bubble Tea event loop; nothing in it
// is shared. Buffers: a Data value handed over by a Feed belongs to the UI
// from then on; the feed must not modify its slices or maps afterwards
// (FromReport copies everything out of the report).
//
// Time comes from the feed (capture time), never from the wall clock, so
// rates and screens are the same on every replay of a file.
package tui
