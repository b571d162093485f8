package main

import (
	"runtime/debug"
	"testing"

	"github.com/prometheus/common/version"
)

// withVersion sets the version fields for one test and restores them.
func withVersion(t *testing.T, v, rev, date string) {
	t.Helper()
	old := [3]string{version.Version, version.Revision, version.BuildDate}
	version.Version, version.Revision, version.BuildDate = v, rev, date
	t.Cleanup(func() { version.Version, version.Revision, version.BuildDate = old[0], old[1], old[2] })
}

func buildInfo(mainVersion string, settings ...string) *debug.BuildInfo {
	bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/alertrouter/alertrouter", Version: mainVersion}}
	for i := 0; i+1 < len(settings); i += 2 {
		bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
	}
	return bi
}

func TestFillVersionFromBuildInfoWhenLdflagsLeftItEmpty(t *testing.T) {
	withVersion(t, "", "", "")
	fillVersion(buildInfo("v0.3.1-0.20261202101500-0123456789ab+dirty",
		"vcs", "git", "vcs.revision", "0123456789abcdef0123456789abcdef01234567", "vcs.time", "2026-12-02T10:15:00Z", "vcs.modified", "true"), true)
	if want := "v0.3.1-0.20261202101500-0123456789ab+dirty"; version.Version != want {
		t.Errorf("Version = %q, want the main module's %q", version.Version, want)
	}
	if want := "0123456789abcdef0123456789abcdef01234567-modified"; version.Revision != want {
		t.Errorf("Revision = %q, want %q", version.Revision, want)
	}
	if want := "20261202-10:15:00"; version.BuildDate != want {
		t.Errorf("BuildDate = %q, want the commit time %q", version.BuildDate, want)
	}
}

func TestFillVersionKeepsLdflagsValues(t *testing.T) {
	withVersion(t, "v1.2.3", "abc1234", "20260101-00:00:00")
	fillVersion(buildInfo("(devel)", "vcs.revision", "ffff", "vcs.time", "2026-12-02T10:15:00Z"), true)
	if version.Version != "v1.2.3" || version.Revision != "abc1234" || version.BuildDate != "20260101-00:00:00" {
		t.Errorf("stamped values overwritten: %q %q %q", version.Version, version.Revision, version.BuildDate)
	}
}

func TestFillVersionWithoutBuildInfoOrVCS(t *testing.T) {
	withVersion(t, "", "", "")
	fillVersion(nil, false)
	if version.Version != "" || version.Revision != "" || version.BuildDate != "" {
		t.Errorf("no build info filled %q %q %q", version.Version, version.Revision, version.BuildDate)
	}
	// No VCS (e.g. -buildvcs=false): the module version only; a bad time
	// is ignored.
	fillVersion(buildInfo("(devel)", "vcs.time", "yesterday"), true)
	if version.Version != "(devel)" || version.Revision != "" || version.BuildDate != "" {
		t.Errorf("got %q %q %q, want (devel) and nothing else", version.Version, version.Revision, version.BuildDate)
	}
}
