package main

import (
	"flag"
	"fmt"
	"text/tabwriter"

	"github.com/kwatch/kwatch/audit"
)

func (e *env) rules(args []string) error {
	fs := flag.NewFlagSet("rules", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: kwatch rules [RULE]")
	}
	ids, err := parse(fs, args, e.stderr)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "RULE\tSEVERITY\tKIP\tSUMMARY")
		for _, r := range audit.Rules() {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.ID, r.Severity, r.KIP, r.Summary)
		}
		tw.Flush()
		fmt.Fprintln(e.stdout, "\n'kwatch rules RULE' explains one rule.")
		return nil
	}
	// Every name is checked before any is explained: a mistake prints
	// its one line and nothing else.
	var rules []audit.Rule
	for _, id := range ids {
		r, ok := audit.LookupRule(id)
		if !ok {
			return usageError{fmt.Sprintf("rules: unknown rule %q ('kwatch rules' lists them)", id)}
		}
		rules = append(rules, r)
	}
	for i, r := range rules {
		if i > 0 {
			fmt.Fprintln(e.stdout)
		}
		fmt.Fprintf(e.stdout, "%s  (%s, %s, SPEC.md section %s)\n\n%s\n\n%s\n", r.ID, r.Severity, r.KIP, r.Section, r.Summary, r.Explanation)
	}
	return nil
}
