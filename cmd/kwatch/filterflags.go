package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/kwatch/kwatch/audit"
)

// stringList is a repeatable flag that also takes comma-separated lists.
type stringList []string

func (s *stringList) String() string { return strings.Join(*s, ",") }

func (s *stringList) Set(v string) error {
	for _, f := range strings.Split(v, ",") {
		if f = strings.TrimSpace(f); f != "" {
			*s = append(*s, f)
		}
	}
	return nil
}

// filterFlags narrow what a report shows (audit.Filter).
type filterFlags struct {
	rules          stringList
	minSeverity    string
	client         string
	baseline       string
	showSuppressed bool
}

func (f *filterFlags) register(fs *flag.FlagSet) {
	fs.Var(&f.rules, "rule", "report only this `rule` (repeatable, or comma-separated)")
	fs.StringVar(&f.minSeverity, "min-severity", "info", "report only findings of at least this `severity`: info, warn or error")
	fs.StringVar(&f.client, "client", "", "report only the findings of one client: its instance `ID` (Java or hex form), first client ID or host")
	fs.StringVar(&f.baseline, "baseline", "", "suppress the known cases listed in `FILE` (written by kwatch baseline); they are counted, not reported")
	fs.BoolVar(&f.showSuppressed, "show-suppressed", false, "list the cases the baseline suppressed")
}

// filter checks the flags and returns the auditor's filter, nil when it
// selects everything.
func (f *filterFlags) filter() (*audit.Filter, error) {
	out := &audit.Filter{Client: f.client, ShowSuppressed: f.showSuppressed}
	for _, r := range f.rules {
		if _, ok := audit.LookupRule(r); !ok {
			return nil, usageError{fmt.Sprintf("--rule %q: no such rule ('kwatch rules' lists them)", r)}
		}
		out.Rules = append(out.Rules, r)
	}
	sev, err := audit.ParseSeverity(f.minSeverity)
	if err != nil {
		return nil, usageError{fmt.Sprintf("--min-severity %q: want info, warn or error", f.minSeverity)}
	}
	out.MinSeverity = sev
	if f.baseline != "" {
		file, err := os.Open(f.baseline)
		if err != nil {
			return nil, fmt.Errorf("--baseline: %w", err)
		}
		defer file.Close()
		if out.Baseline, err = audit.ReadBaseline(file); err != nil {
			return nil, fmt.Errorf("--baseline %s: %w", f.baseline, err)
		}
	}
	if len(out.Rules) == 0 && sev <= audit.SeverityInfo && out.Client == "" && out.Baseline == nil {
		return nil, nil
	}
	return out, nil
}
