package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/redistest"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/journal"
)

// `dead-letters replay --all --since D` replays the dead letters of the
// last D only (7d by default); --since belongs to --all.
func TestReplayAllSince(t *testing.T) {
	srv := redistest.Start(t)
	cfgFile, _, deadID := journalFixture(t, srv)
	time.Sleep(50 * time.Millisecond) // the dead letter is older than 10ms

	code, out, errs := runMain(t, "--config.file="+cfgFile, "dead-letters", "replay", "--all", "--since", "10ms")
	if code != 0 || !strings.Contains(out, "sent 0, already replayed 0, delivered since 0, resolved since 0, fired again since 0, being replayed 0, repeated by a later one 0, failed 0") {
		t.Fatalf("replay --all --since 10ms: exit %d, stdout %q, stderr %q; want nothing replayed", code, out, errs)
	}
	if code, _, errs := runMain(t, "--config.file="+cfgFile, "dead-letters", "replay", deadID, "--since", "30d"); code != 2 || !strings.Contains(errs, "--since applies to --all only") {
		t.Fatalf("replay ID --since: exit %d, stderr %q; want 2 saying --since is for --all", code, errs)
	}
	code, out, errs = runMain(t, "--config.file="+cfgFile, "dead-letters", "replay", "--all", "--since", "30d")
	if code != 0 || !strings.Contains(out, "sent 1, already replayed 0, delivered since 0, resolved since 0, fired again since 0, being replayed 0, repeated by a later one 0, failed 0") {
		t.Fatalf("replay --all --since 30d: exit %d, stdout %q, stderr %q; want the dead letter sent", code, out, errs)
	}
	code, out, _ = runMain(t, "--config.file="+cfgFile, "dead-letters", "list", "--since", "30d")
	if code != 0 || !strings.Contains(out, deadID) || !strings.Contains(out, "true") {
		t.Fatalf("list --since 30d after the replay: exit %d, %q; want %s replayed", code, out, deadID)
	}
}

// simulate --from with --since keeps the file's entries of that period:
// --since was silently ignored beside --from.
func TestSimulateFromAFileHonoursSince(t *testing.T) {
	now := time.Now().UTC()
	var lines []string
	for i, age := range []time.Duration{3 * time.Hour, 2 * time.Hour, 10 * time.Minute} {
		e := journal.Entry{Kind: journal.KindDecision, Time: now.Add(-age), ReceivedAt: now.Add(-age), GroupKey: fmt.Sprintf("g%d", i),
			Fingerprint: fmt.Sprintf("%016x", i+1), Alertname: "DiskFull", Status: "firing",
			Labels:   map[string]string{"alertname": "DiskFull", "severity": "critical", "instance": fmt.Sprint(i)},
			StartsAt: now.Add(-age), Decision: alert.Decision{Action: alert.ActionPage, Policy: "severity"}}
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	export := writeFile(t, "journal.jsonl", strings.Join(lines, "\n")+"\n")
	candidate := writeFile(t, "new.yml", "policies: {severity: {critical: ticket}}\nroute: {receiver: log}\nreceivers: [{name: log, log_configs: [{}]}]\n")
	for args, want := range map[string]int{"": 3, "1h": 1, "150m": 2} {
		cmd := []string{"simulate", "--config", candidate, "--from", export, "--format", "json"}
		if args != "" {
			cmd = append(cmd, "--since", args)
		}
		code, out, errs := runMain(t, cmd...)
		var rep journal.Report
		if code != 0 || json.Unmarshal([]byte(out), &rep) != nil {
			t.Fatalf("simulate --since %q: exit %d, %q, %q", args, code, out, errs)
		}
		if rep.Alerts != want {
			t.Errorf("simulate --from with --since %q: %d alerts decided again, want %d", args, rep.Alerts, want)
		}
	}
}

// simulate --from refuses what is no journal export (a webhook payload, an
// empty file): it decoded any JSON into empty entries and said nothing
// would change (an audit). A byte-order mark before the first entry is
// skipped, and a lone "-" reads standard input (kingpin hands it over as
// "": the store was read instead, silently).
func TestSimulateFromReadsOnlyAJournalExport(t *testing.T) {
	candidate := writeFile(t, "new.yml", "route: {receiver: log}\nreceivers: [{name: log, log_configs: [{}]}]\n")
	for name, body := range map[string]string{
		"a webhook payload": `{"version":"4","status":"firing","alerts":[{"status":"firing","labels":{"alertname":"X"}}]}`,
		"an empty file":     "",
	} {
		code, out, errs := runMain(t, "simulate", "--config", candidate, "--from", writeFile(t, "in.jsonl", body))
		if code != 1 || out != "" || !strings.Contains(errs, "journal") {
			t.Errorf("simulate --from %s: exit %d, stdout %q, stderr %q; want exit 1 saying it holds no journal entry", name, code, out, errs)
		}
	}
	now := time.Now().UTC()
	e := journal.Entry{Kind: journal.KindDecision, Time: now, ReceivedAt: now, GroupKey: "g", Fingerprint: "0000000000000001", Alertname: "DiskFull", Status: "firing",
		Labels: map[string]string{"alertname": "DiskFull", "severity": "critical"}, StartsAt: now, Decision: alert.Decision{Action: alert.ActionPage, Policy: "severity"}}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs := runMain(t, "simulate", "--config", candidate, "--format", "json", "--from", writeFile(t, "bom.jsonl", "\xef\xbb\xbf"+string(b)+"\n"))
	var rep journal.Report
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || rep.Alerts != 1 {
		t.Errorf("simulate --from an export with a byte-order mark: exit %d, %q, %q; want its one alert decided again", code, out, errs)
	}
	var stdout, stderr syncBuffer
	m := &Main{Stdin: strings.NewReader(string(b) + "\n"), Stdout: &stdout, Stderr: &stderr}
	// No store is configured: a read of it would fail, not stdin's.
	if code := m.Run(context.Background(), []string{"simulate", "--config", candidate, "--format", "json", "--from", "-"}); code != 0 || json.Unmarshal([]byte(stdout.String()), &rep) != nil || rep.Alerts != 1 {
		t.Errorf("simulate --from -: exit %d, %q, %q; want standard input's one alert decided again", code, stdout.String(), stderr.String())
	}
}
