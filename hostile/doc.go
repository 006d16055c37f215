// Package hostile holds issue 12's hostile scenarios as one test,
// TestHostile: each scenario writes its capture (internal/hostilegen) and
// runs the real kwatch binary on it, and the test prints a table of the
// capture's size, the time (as a ratio against a reference measured in the
// same run, alternately), the child's peak RSS (its rusage ru_maxrss) and
// the target, and fails when a target is missed.
//
// It takes minutes and about 300 MB of temporary disk at a time, so it runs
// only when KWATCH_HOSTILE=1 (`make hostile`), or names the scenarios to
// run (KWATCH_HOSTILE=tags,holes); `go test ./...` skips it.
// KWATCH_BIN names a kwatch binary to measure instead of building this
// tree's (to measure an older commit with the same scenarios).
package hostile
