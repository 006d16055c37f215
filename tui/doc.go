// Package tui is kwatch's interactive terminal UI: an overview of the
// capture, a table of client instances and a list of findings, each with a
// detail screen, built on Bubble Tea v2.
//
// Entry points: Run(ctx, Options) shows the UI until the user quits;
// Options.Feed supplies snapshots (ReportFeed adapts an audit.Auditor's
// Snapshot, FromReport converts one report) and Options.Explain the rule
// texts (ExplainRule reads audit's rule table).
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
