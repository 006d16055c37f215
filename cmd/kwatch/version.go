package main

import (
	"runtime/debug"
	"strings"
)

// version says which kwatch this is, from the build info: the module
// version (a tag, or "(devel)" for a build from a clone), the VCS revision
// and time, and whether the tree had changes.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "kwatch (no build info)"
	}
	parts := []string{"kwatch", bi.Main.Version}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	if rev := settings["vcs.revision"]; rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if settings["vcs.modified"] == "true" {
			rev += "+modified"
		}
		parts = append(parts, rev)
	}
	if t := settings["vcs.time"]; t != "" {
		parts = append(parts, t)
	}
	return strings.Join(parts, " ") + " (" + bi.GoVersion + ")"
}
