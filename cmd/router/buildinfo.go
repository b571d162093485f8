package main

import (
	"runtime/debug"
	"time"

	"github.com/prometheus/common/version"
)

// buildDateLayout is the layout of version.BuildDate, as the Makefile and
// scripts/release.sh stamp it.
const buildDateLayout = "20060102-15:04:05"

// fillVersion fills the fields of github.com/prometheus/common/version that
// -ldflags -X left empty from the build information the go command embeds
// in every binary: the main module's version, vcs.revision (with
// "-modified" for a dirty tree) and vcs.time (the commit time, as the build
// date). So a plain `go build` or `go install` reports where it came from,
// in `router version` and in alertrouter_build_info. Stamped values win.
func fillVersion(info *debug.BuildInfo, ok bool) {
	if !ok || info == nil {
		return
	}
	if version.Version == "" && info.Main.Version != "" {
		version.Version = info.Main.Version
	}
	var revision, vcsTime string
	modified := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.time":
			vcsTime = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if version.Revision == "" && revision != "" {
		version.Revision = revision
		if modified {
			version.Revision += "-modified"
		}
	}
	if version.BuildDate == "" && vcsTime != "" {
		if t, err := time.Parse(time.RFC3339, vcsTime); err == nil {
			version.BuildDate = t.UTC().Format(buildDateLayout)
		}
	}
}
