package main

import (
	"flag"
	"fmt"
	"strings"
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
		fmt.Fprintln(tw, "\nCOVERAGE EVENT\t\t\tSUMMARY")
		for _, d := range audit.CoverageDocs() {
			fmt.Fprintf(tw, "%s\t\t\t%s\n", d.Event, d.Summary)
		}
		tw.Flush()
		fmt.Fprintln(e.stdout, "\n'kwatch rules RULE' explains one rule or coverage event.")
		return nil
	}
	// Every name is checked before any is explained: a mistake prints
	// its one line and nothing else.
	var texts []string
	for _, id := range ids {
		if r, ok := audit.LookupRule(id); ok {
			texts = append(texts, fmt.Sprintf("%s  (%s, %s, SPEC.md section %s)\n\n%s\n\n%s\n\nFix: %s\n",
				r.ID, r.Severity, r.KIP, r.Section, r.Summary, r.Explanation, r.Fix))
			continue
		}
		d, ok := audit.LookupCoverage(id)
		if !ok {
			return usageError{fmt.Sprintf("rules: unknown rule or coverage event %q ('kwatch rules' lists them)", id)}
		}
		texts = append(texts, fmt.Sprintf("%s  (coverage event, SPEC.md section 3.6: not a violation)\n\n%s\n\n%s\n", d.Event, d.Summary, d.Explanation))
	}
	_, err = fmt.Fprint(e.stdout, strings.Join(texts, "\n"))
	return err
}
