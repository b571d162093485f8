package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/config"
	"github.com/alertrouter/alertrouter/internal/redistest"
	"github.com/alertrouter/alertrouter/internal/slacktest"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/journal"
	"github.com/alertrouter/alertrouter/routing/webhook"
	"github.com/alertrouter/alertrouter/store"
)

// strictConfig raises every page threshold out of reach of the corpus:
// what "what changes if I ship this" is asked about.
const strictConfig = `
route: {receiver: log}
receivers: [{name: log, log_configs: [{}]}]
policies:
  sloth: {page: ticket}
  severity: {critical: ticket, page: ticket}
  capacity: {warn: 0.8, critical: 0.999}
  burn_rate:
    tiers:
      - {long: 1h, short: 5m, factor: 1000, action: page}
      - {long: 1d, short: 2h, factor: 3, action: ticket}
`

// journalFixture writes, into the Redis journal of a router configured on
// srv, what the default config decided for mixed.json plus one dead letter
// for the log receiver. It returns the config file, the decisions and the
// dead letter's id.
func journalFixture(t *testing.T, srv *redistest.Server) (cfgFile string, decisions []journal.Entry, deadID string) {
	t.Helper()
	return journalFixtureFor(t, srv, "log", "log/0", `receivers: [{name: log, log_configs: [{}]}]`)
}

// journalFixtureFor is journalFixture with the dead letter's receiver and
// the receivers section of the config.
func journalFixtureFor(t *testing.T, srv *redistest.Server, receiver, integration, receivers string) (cfgFile string, decisions []journal.Entry, deadID string) {
	t.Helper()
	cfgFile = writeFile(t, "router.yml", routerConfig(srv, receiver, receivers))
	rc := store.DefaultRedisConfig()
	rc.Addrs = []string{srv.Addr()}
	r, err := store.NewRedis(rc, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	j := r.Journal(journal.StreamKey(store.DefaultKeyPrefix), store.DefaultJournalRetention, nil)
	m, _ := journal.NewMetrics(nil)
	w := journal.NewWriter(j, m, journal.WriterOptions{Replica: "router-0"})

	p, err := evaluator(config.LoadDefault())
	if err != nil {
		t.Fatal(err)
	}
	body, err := os.ReadFile(filepath.Join("..", "..", "testdata", "webhook", "mixed.json"))
	if err != nil {
		t.Fatal(err)
	}
	msg, err := webhook.Decode(body, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var page *alert.Result
	for _, r := range p.Evaluate(msg) {
		e := journal.FromResult(msg, r)
		decisions = append(decisions, e)
		w.Write(e)
		if page == nil && r.Decision.Action == alert.ActionPage {
			page = r
		}
	}
	dl, err := journal.NewDeadLetter(&alert.Notification{Receiver: receiver, Integration: integration, Incident: page.Incident, Kind: alert.KindFiring,
		Action: alert.ActionPage, Opening: true, Results: []*alert.Result{page}, Data: &msg.Data}, errors.New("410 Gone"), 1, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	w.Write(dl)
	if err := w.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	dead, err := journal.Read(t.Context(), j, journal.Query{Kind: journal.KindDeadLetter})
	if err != nil || len(dead) != 1 {
		t.Fatalf("dead letters in redis: %v, %v", dead, err)
	}
	return cfgFile, decisions, dead[0].ID
}

func routerConfig(srv *redistest.Server, receiver, receivers string) string {
	return fmt.Sprintf("store: {redis: {addrs: [%q]}}\nroute: {receiver: %s}\n%s\n", srv.Addr(), receiver, receivers)
}

func TestRevokedSlackTokenDeadLetterReplaysOnceAfterTheFix(t *testing.T) {
	srv := redistest.Start(t)
	slack := slacktest.NewServer("xoxb-fixed", "alerts")
	defer slack.Close()
	receivers := func(token string) string {
		return fmt.Sprintf("receivers: [{name: slack, slack_configs: [{api_url: %q, token: %q, channel: alerts}]}]", slack.APIURL(), token)
	}
	cfgFile, _, id := journalFixtureFor(t, srv, "slack", "slack/0", receivers("xoxb-revoked"))

	code, _, errs := runMain(t, "--config.file="+cfgFile, "dead-letters", "replay", id)
	if code != 1 || !strings.Contains(errs, "invalid_auth") || len(slack.Messages()) != 0 {
		t.Fatalf("replay with the revoked token: exit %d, %q, %d messages", code, errs, len(slack.Messages()))
	}
	// The token is fixed in the config (what a reload would load).
	if err := os.WriteFile(cfgFile, []byte(routerConfig(srv, "slack", receivers("xoxb-fixed"))), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runMain(t, "--config.file="+cfgFile, "dead-letters", "replay", id)
	if code != 0 || !strings.Contains(out, id+" sent") || len(slack.Messages()) != 1 {
		t.Fatalf("replay after the fix: exit %d, %q, %q, %d messages", code, out, errs, len(slack.Messages()))
	}
	code, out, _ = runMain(t, "--config.file="+cfgFile, "dead-letters", "replay", id)
	if code != 0 || !strings.Contains(out, "nothing sent") || len(slack.Messages()) != 1 {
		t.Fatalf("second replay: exit %d, %q, %d messages", code, out, len(slack.Messages()))
	}
	// Both replays that tried are journaled — the revoked token's failed,
	// the fixed one's sent —, and exported by their kind (the flag refused
	// `replay` and `triage`).
	code, out, errs = runMain(t, "--config.file="+cfgFile, "journal", "export", "--since", "1h", "--kind", "replay")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var outcomes []string
	for _, l := range lines {
		var replay journal.Entry
		if json.Unmarshal([]byte(l), &replay) != nil || replay.Kind != journal.KindReplay || replay.Replay == nil || replay.Replay.DeadLetter != id || len(replay.Deliveries) != 1 {
			t.Fatalf("journal export --kind replay: %q is no replay of %s", l, id)
		}
		outcomes = append(outcomes, replay.Deliveries[0].Outcome)
	}
	if code != 0 || strings.Join(outcomes, ",") != journal.OutcomeFailed+","+journal.OutcomeSent {
		t.Fatalf("journal export --kind replay: exit %d, outcomes %v, %q; want failed then sent", code, outcomes, errs)
	}
}

func TestJournalCommandsOnTheSharedRedisJournal(t *testing.T) {
	srv := redistest.Start(t)
	cfgFile, decisions, deadID := journalFixture(t, srv)

	code, out, errs := runMain(t, "--config.file="+cfgFile, "journal", "export", "--since", "1h", "--kind", "decision")
	if code != 0 {
		t.Fatalf("journal export: exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(decisions) {
		t.Fatalf("journal export printed %d lines, want %d decisions", len(lines), len(decisions))
	}
	export := writeFile(t, "journal.jsonl", out)

	code, out, errs = runMain(t, "--config.file="+cfgFile, "dead-letters", "list")
	if code != 0 || !strings.Contains(out, deadID) || !strings.Contains(out, "410 Gone") || !strings.Contains(out, "false") {
		t.Fatalf("dead-letters list: exit %d, %q, %q", code, out, errs)
	}
	code, out, _ = runMain(t, "--config.file="+cfgFile, "dead-letters", "show", deadID)
	var shown journal.Entry
	if code != 0 || json.Unmarshal([]byte(out), &shown) != nil || shown.DeadLetter == nil || shown.DeadLetter.Receiver != "log" || !strings.Contains(out, `"replayed": false`) {
		t.Fatalf("dead-letters show: exit %d, %q", code, out)
	}
	if code, _, errs := runMain(t, "--config.file="+cfgFile, "dead-letters", "show", "nonsense"); code != 1 || !strings.Contains(errs, "not a dead letter id") {
		t.Fatalf("show of a bad id: exit %d, %q", code, errs)
	}
	if code, _, errs := runMain(t, "--config.file="+cfgFile, "dead-letters", "replay", "nonsense"); code != 1 || !strings.Contains(errs, "not a dead letter id") {
		t.Fatalf("replay of a bad id: exit %d, %q; want it named as show names it", code, errs)
	}

	// The log receiver prints what it sends: replay sends once.
	code, out, errs = runMain(t, "--config.file="+cfgFile, "dead-letters", "replay", deadID)
	if code != 0 || !strings.Contains(out, deadID+" sent") || !strings.Contains(out, shown.DeadLetter.Incident) {
		t.Fatalf("first replay: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, out, _ = runMain(t, "--config.file="+cfgFile, "dead-letters", "replay", deadID)
	if code != 0 || !strings.Contains(out, "nothing sent") || strings.Contains(out, shown.DeadLetter.Incident) {
		t.Fatalf("second replay: exit %d, stdout %q", code, out)
	}
	// show says what list says: replayed now, not before.
	code, out, _ = runMain(t, "--config.file="+cfgFile, "dead-letters", "show", deadID)
	var after struct {
		journal.Entry
		Replayed bool `json:"replayed"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &after) != nil || !after.Replayed || after.DeadLetter == nil || after.ID != deadID {
		t.Fatalf("dead-letters show after the replay: exit %d, %q", code, out)
	}
	code, out, _ = runMain(t, "--config.file="+cfgFile, "dead-letters", "replay", "--all")
	if code != 0 || !strings.Contains(out, "sent 0, already replayed 1, delivered since 0, resolved since 0, fired again since 0, being replayed 0, repeated by a later one 0, failed 0") {
		t.Fatalf("replay --all: exit %d, stdout %q", code, out)
	}
	if code, _, _ := runMain(t, "--config.file="+cfgFile, "dead-letters", "replay"); code != 2 {
		t.Fatalf("replay without an id or --all: exit %d, want 2", code)
	}

	// simulate: from the shared journal and from the export, same report.
	pages := 0
	for _, d := range decisions {
		if d.Decision.Action == alert.ActionPage {
			pages++
		}
	}
	candidate := writeFile(t, "new.yml", strictConfig)
	for _, src := range [][]string{{"--since", "1h"}, {"--from", export}} {
		args := append([]string{"--config.file=" + cfgFile, "simulate", "--config", candidate, "--format", "json"}, src...)
		code, out, errs = runMain(t, args...)
		var rep journal.Report
		if code != 0 || json.Unmarshal([]byte(out), &rep) != nil {
			t.Fatalf("simulate %v: exit %d, %q, %q", src, code, out, errs)
		}
		if rep.Alerts != len(decisions) || rep.Counts["page→ticket"] != pages || pages == 0 {
			t.Fatalf("simulate %v: %d alerts, counts %v; want %d alerts and %d page→ticket", src, rep.Alerts, rep.Counts, len(decisions), pages)
		}
	}
	code, out, _ = runMain(t, "--config.file="+cfgFile, "simulate", "--config", candidate, "--from", export)
	if code != 0 || !strings.Contains(out, fmt.Sprintf("| page→ticket | %d |", pages)) {
		t.Fatalf("simulate markdown: exit %d:\n%s", code, out)
	}
}

func TestJournalCommandsExplainAMemoryStore(t *testing.T) {
	code, _, errs := runMain(t, "journal", "export")
	if code != 1 || !strings.Contains(errs, "store.redis is not configured") {
		t.Fatalf("export without redis: exit %d, %q", code, errs)
	}
}
