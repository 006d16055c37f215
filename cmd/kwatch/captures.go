package main

import (
	"flag"

	"github.com/kwatch/kwatch/capture"
)

// inputFlags are the flags of the commands that read capture files.
type inputFlags struct {
	concat bool
}

func (f *inputFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&f.concat, "concat", false, "read several files one after another in the order given (files rotated by tcpdump -C) instead of merging them by packet time")
}

// captureNames names the captures of a run that reads several files as one
// (SPEC.md 2.1): a finding's "capture" is the file as given on the command
// line, and its frame the packet's number in that file.
type captureNames []string

// name splits a pipeline frame into its capture's name and its number in
// that capture; with one capture the name is "" and the frame unchanged.
func (c captureNames) name(frame uint64) (string, uint64) {
	if len(c) < 2 {
		return "", frame
	}
	i, n := capture.SplitFrame(frame)
	if i >= len(c) {
		return "", frame
	}
	return c[i], n
}

// namer is name as the auditor takes it, nil when there is one capture.
func (c captureNames) namer() func(uint64) (string, uint64) {
	if len(c) < 2 {
		return nil
	}
	return c.name
}
