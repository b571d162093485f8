package main

import (
	"strings"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/redistest"
)

// `dead-letters replay --all --since D` replays the dead letters of the
// last D only (7d by default); --since belongs to --all.
func TestReplayAllSince(t *testing.T) {
	srv := redistest.Start(t)
	cfgFile, _, deadID := journalFixture(t, srv)
	time.Sleep(50 * time.Millisecond) // the dead letter is older than 10ms

	code, out, errs := runMain(t, "--config.file="+cfgFile, "dead-letters", "replay", "--all", "--since", "10ms")
	if code != 0 || !strings.Contains(out, "sent 0, already replayed 0, delivered since 0, failed 0") {
		t.Fatalf("replay --all --since 10ms: exit %d, stdout %q, stderr %q; want nothing replayed", code, out, errs)
	}
	if code, _, errs := runMain(t, "--config.file="+cfgFile, "dead-letters", "replay", deadID, "--since", "30d"); code != 2 || !strings.Contains(errs, "--since applies to --all only") {
		t.Fatalf("replay ID --since: exit %d, stderr %q; want 2 saying --since is for --all", code, errs)
	}
	code, out, errs = runMain(t, "--config.file="+cfgFile, "dead-letters", "replay", "--all", "--since", "30d")
	if code != 0 || !strings.Contains(out, "sent 1, already replayed 0, delivered since 0, failed 0") {
		t.Fatalf("replay --all --since 30d: exit %d, stdout %q, stderr %q; want the dead letter sent", code, out, errs)
	}
	code, out, _ = runMain(t, "--config.file="+cfgFile, "dead-letters", "list", "--since", "30d")
	if code != 0 || !strings.Contains(out, deadID) || !strings.Contains(out, "true") {
		t.Fatalf("list --since 30d after the replay: exit %d, %q; want %s replayed", code, out, deadID)
	}
}
