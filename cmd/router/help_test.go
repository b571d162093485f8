package main

import (
	"strings"
	"testing"
)

// Every subcommand's --help prints its help and exits 0 with no error
// line: import-alertmanager, simulate, journal and dead-letters printed it,
// then "required argument 'file' not provided" or "must select a
// subcommand", and exited 2.
func TestEverySubcommandHelpExitsZeroWithoutAnError(t *testing.T) {
	for _, args := range [][]string{
		{"--help"}, {"serve", "--help"}, {"check-config", "--help"}, {"explain", "--help"}, {"version", "--help"},
		{"import-alertmanager", "--help"}, {"simulate", "--help"}, {"journal", "--help"}, {"journal", "export", "--help"},
		{"dead-letters", "--help"}, {"dead-letters", "list", "--help"}, {"dead-letters", "replay", "--help"}, {"import-alertmanager", "-h"},
	} {
		code, _, errs := runMain(t, args...)
		if code != 0 || strings.Contains(errs, "router: ") || !strings.Contains(errs, "usage: router") {
			t.Errorf("router %s: exit %d, stderr ends %q; want 0, the help and no error", strings.Join(args, " "), code, lastLine(errs))
		}
	}
	// Help asked for does not hide a usage error without it.
	if code, _, errs := runMain(t, "import-alertmanager"); code != 2 || !strings.Contains(errs, "required argument 'file'") {
		t.Errorf("import-alertmanager without a file: exit %d, %s; want 2", code, errs)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
