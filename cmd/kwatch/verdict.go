package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/kwatch/kwatch/audit"
	"github.com/kwatch/kwatch/decode"
	"github.com/kwatch/kwatch/pipeline"
)

// exitIncomplete is SPEC.md section 5's status for an audit that could
// not see what it was given, when no finding reaches --fail-on.
const exitIncomplete = 3

// inputResult decides what a source error means once the pipeline has run:
// a file that yielded no packet at all is an input error (exit 2); a file
// that broke after some packets is reported on stderr, what was read
// stands, and the audit is incomplete (incompleteReasons).
func inputResult(st pipeline.Stats, runErr error, e *env) error {
	if runErr == nil {
		return nil
	}
	if st.Packets == 0 {
		return runErr
	}
	for _, err := range joinedErrors(runErr) {
		fmt.Fprintf(e.stderr, "kwatch: %v (what was read before it stands; %d packets analyzed in all)\n", err, st.Packets)
	}
	return nil
}

// joinedErrors splits an errors.Join (one error per broken file).
func joinedErrors(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// incompleteReasons says why an offline audit is incomplete (SPEC.md
// section 5), one sentence each: the input broke off, the run was
// interrupted, or no connection was recognised as Kafka. None: complete.
func incompleteReasons(ctx context.Context, st pipeline.Stats, runErr error, t *audit.Totals) []string {
	var why []string
	interrupted := ctx.Err() != nil
	if runErr != nil && !(interrupted && errors.Is(runErr, os.ErrDeadlineExceeded)) {
		for _, err := range joinedErrors(runErr) {
			why = append(why, fmt.Sprintf("the input broke off (%v): the audit covers the %d packets read before it", err, st.Packets))
		}
	}
	if interrupted {
		why = append(why, fmt.Sprintf("the run was interrupted: the audit covers the %d packets read before it", st.Packets))
	}
	if t.KafkaConnections == 0 {
		why = append(why, noKafkaReason(st, t))
	}
	return why
}

// noKafkaReason names the likeliest cause of a capture without Kafka.
func noKafkaReason(st pipeline.Stats, t *audit.Totals) string {
	const none = "no connection in the capture was recognised as Kafka"
	tls := t.Coverage[decode.TLSConnection.String()]
	switch {
	case st.Packets == 0:
		return none + ": the capture holds no packets"
	case t.Connections == 0:
		return fmt.Sprintf("%s: its %d packets hold no TCP connection", none, st.Packets)
	case tls > 0 && tls >= t.Connections:
		return fmt.Sprintf("%s: its %d TCP connections are TLS and their secrets are not known", none, t.Connections)
	}
	return fmt.Sprintf("%s among its %d TCP connections (a wrong --port, or not a Kafka capture)", none, t.Connections)
}

// verdict marks rep incomplete where it is and returns the exit status of
// an offline run as an error (nil: 0): 1 when a finding reaches failOn, else
// 3 when the audit is incomplete; --fail-on never (failOn 0) is always 0.
func verdict(rep *audit.Report, failOn audit.Severity) error {
	if failOn == 0 {
		return nil
	}
	if max, ok := rep.MaxSeverity(); ok && max >= failOn {
		return exitError{exitFindings}
	}
	if !rep.Complete {
		return exitError{exitIncomplete}
	}
	return nil
}
