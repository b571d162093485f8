package console_test

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/console"
	"github.com/alertrouter/alertrouter/routing/journal"
)

// annotatedProbe is a firing page whose annotations hold what an audit
// tried: markup in the text, a javascript: dashboard link, a runbook and a
// long description.
func annotatedProbe(at time.Time, incident, fp string) journal.Entry {
	e := probe(at, incident, fp, "firing", alert.ActionPage)
	e.Alertname = "LedgerDown"
	e.GeneratorURL = "https://prometheus.example/graph?g0.expr=up%3D%3D0"
	e.Annotations = map[string]string{
		"summary":       `Ledger <script>alert(1)</script> is down in eu-1`,
		"description":   strings.Repeat("The ledger stopped answering. ", 400), // 11,600 runes
		"runbook_url":   "https://runbooks.example/ledger-down",
		"dashboard_url": "javascript:alert(2)",
		"grafana_url":   "data:text/html,<b>x</b>",
		"team":          "payments-core",
		"note":          "javascript:alert(3)",
	}
	return e
}

// The incident's page shows each alert's summary and description, escaped
// and bounded, and its runbook and generator links — http(s) only: the
// javascript: dashboard is dropped, not drawn, not even as text. The
// overview shows the summary line. Before, neither showed any annotation:
// the engineer following the console link from PagerDuty read no summary
// and found no runbook.
func TestTheConsoleShowsTheAlertsAnnotations(t *testing.T) {
	e := newEnv(t)
	e.writer.Write(annotatedProbe(e.now.Add(-time.Minute), "ledger/down", "00000000000000a1"))
	if err := e.writer.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(e.console)
	defer srv.Close()

	code, body := get(t, srv, console.IncidentPath("ledger/down"))
	if code != http.StatusOK {
		t.Fatalf("incident page: %d", code)
	}
	for _, want := range []string{
		`Ledger &lt;script&gt;alert(1)&lt;/script&gt; is down in eu-1`,
		`The ledger stopped answering.`,
		`href="https://runbooks.example/ledger-down"`,
		`href="https://prometheus.example/graph?g0.expr=up%3D%3D0"`,
		`team</bdi>: <bdi>payments-core`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the incident page lacks %q", want)
		}
	}
	for _, bad := range []string{"<script>alert", "javascript:", "data:text", "ZgotmplZ", `class="dashboard"`} {
		if strings.Contains(body, bad) {
			t.Errorf("the incident page holds %q", bad)
		}
	}
	desc := regexp.MustCompile(`(?s)<p class="description"><bdi>(.*?)</bdi></p>`).FindStringSubmatch(body)
	if desc == nil || len([]rune(desc[1])) > 4000 || !strings.HasSuffix(desc[1], "…") {
		t.Errorf("the description is not cut at 4,000 characters: %d", len(desc))
	}

	code, body = get(t, srv, "/")
	card := cards(body)["ledger/down"]
	if code != http.StatusOK || !strings.Contains(card, `<p class="summary-line" title="Ledger &lt;script&gt;alert(1)&lt;/script&gt; is down in eu-1"><bdi>Ledger &lt;script&gt;alert(1)&lt;/script&gt; is down in eu-1</bdi></p>`) {
		t.Errorf("the overview's card lacks the summary line:\n%s", card)
	}
	if strings.Contains(body, "<script>alert") {
		t.Error("the overview holds the annotation's markup unescaped")
	}
}

// triageEntry is a Slack action on incident at.
func triageEntry(at time.Time, incident string, tr journal.Triage) journal.Entry {
	return journal.Entry{Kind: journal.KindTriage, Time: at, Replica: "router-1", Incident: incident, Triage: &tr}
}

// What was done in Slack shows on the console: the incident's page lists
// it, the overview marks the incident acknowledged, silenced (until when)
// or resolved by hand, and a ticket escalated to a page is listed with the
// pages, above the tickets, while PagerDuty pages for it. Before, nothing
// of it reached the console: a second engineer could not tell.
func TestWhatWasDoneInSlackShowsOnTheConsole(t *testing.T) {
	e := newEnv(t)
	now := e.now
	e.writer.Write(
		probe(now.Add(-50*time.Minute), "payments/page", "00000000000000b1", "firing", alert.ActionPage),
		probe(now.Add(-40*time.Minute), "search/ticket", "00000000000000b2", "firing", alert.ActionTicket),
		probe(now.Add(-30*time.Minute), "ledger/ticket", "00000000000000b3", "firing", alert.ActionTicket),
	)
	e.writer.Write(
		triageEntry(now.Add(-20*time.Minute), "ledger/ticket", journal.Triage{Action: journal.TriageEscalate, UserID: "U1", UserName: "alice", Receiver: "team", Integration: "slack/0", EscalatedTo: "oncall"}),
		triageEntry(now.Add(-15*time.Minute), "payments/page", journal.Triage{Action: journal.TriageSilence, UserID: "U2", UserName: "bob<b>", Silence: "s-1", Until: now.Add(3 * time.Hour)}),
		triageEntry(now.Add(-12*time.Minute), "payments/page", journal.Triage{Action: journal.TriageAck, UserID: "U2", UserName: "bob<b>"}),
		triageEntry(now.Add(-10*time.Minute), "payments/page", journal.Triage{Action: journal.TriageResolve, UserID: "U3"}),
		// A silence unsilenced since, and one that ended: neither holds.
		triageEntry(now.Add(-9*time.Minute), "search/ticket", journal.Triage{Action: journal.TriageSilence, UserID: "U4", Until: now.Add(time.Hour)}),
		triageEntry(now.Add(-8*time.Minute), "search/ticket", journal.Triage{Action: journal.TriageUnsilence, UserID: "U4"}),
		triageEntry(now.Add(-7*time.Minute), "ledger/ticket", journal.Triage{Action: journal.TriageSilence, UserID: "U5", Until: now.Add(-time.Minute)}),
	)
	srv, body := flushedOverview(t, e)
	order := regexp.MustCompile(`<article class="incident (\w+)" data-incident="([^"]+)">`).FindAllStringSubmatch(body, -1)
	var got []string
	for _, m := range order {
		got = append(got, m[1]+" "+m[2])
	}
	if want := "page ledger/ticket,page payments/page,ticket search/ticket"; strings.Join(got, ",") != want {
		t.Errorf("the overview lists %v, want %s: the escalated ticket with the pages", got, want)
	}
	c := cards(body)
	for key, wants := range map[string][]string{
		"ledger/ticket": {`escalated to a page by <bdi>alice</bdi>`},
		"payments/page": {`acknowledged by <bdi>bob&lt;b&gt;</bdi>`, `silenced by <bdi>bob&lt;b&gt;</bdi> until ` + clock(now.Add(3*time.Hour)), `resolved by hand by <bdi>U3</bdi>`},
	} {
		for _, want := range wants {
			if !strings.Contains(c[key], want) {
				t.Errorf("the card of %s lacks %q:\n%s", key, want, c[key])
			}
		}
	}
	if strings.Contains(c["search/ticket"], "silenced") || strings.Contains(c["ledger/ticket"], "silenced") {
		t.Error("a silence unsilenced since, or ended, is shown")
	}

	code, body := get(t, srv, console.IncidentPath("payments/page"))
	rows := regexp.MustCompile(`<tr data-action="(\w+)">`).FindAllStringSubmatch(body, -1)
	if code != http.StatusOK || len(rows) != 3 || rows[0][1] != "resolve" || rows[1][1] != "ack" || rows[2][1] != "silence" {
		t.Fatalf("the incident page lists the Slack actions %v (%d)", rows, code)
	}
	for _, want := range []string{"resolved in PagerDuty by hand", "acknowledged in PagerDuty", "silenced in Alertmanager", "until " + clock(now.Add(3*time.Hour)), "silence <code>s-1</code>", "replica router-1"} {
		if !strings.Contains(body, want) {
			t.Errorf("the incident page lacks %q", want)
		}
	}
}

// After a dead letter is replayed, the incident's page shows the replay's
// outcome beside it: sent, when, from which replica and how. Before, the
// delivery stayed "dead_letter" with nothing beside it while the dead
// letters page said "replayed".
func TestAReplayedDeadLetterShowsTheReplayBesideIt(t *testing.T) {
	e := newEnv(t)
	e.write(t)
	letters, err := journal.Read(t.Context(), e.journal, journal.Query{Kind: journal.KindDeadLetter})
	if err != nil || len(letters) != 1 {
		t.Fatalf("dead letters: %v, %v", letters, err)
	}
	dl := letters[0]
	// The decision that failed for good, as the dispatch core journals it.
	failed := probe(e.now.Add(-2*time.Hour), dl.DeadLetter.Incident, dl.Fingerprint, "firing", alert.ActionPage)
	failed.Deliveries = []journal.Delivery{{Receiver: dl.DeadLetter.Receiver, Integration: "pagerduty/0", Outcome: journal.OutcomeDeadLetter, Attempts: 1, Error: dl.DeadLetter.Error}}
	e.writer.Write(failed)
	if err := e.writer.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if sent, err := e.replayer.Replay(t.Context(), dl.ID); !sent || err != nil {
		t.Fatalf("replay: %v, %v", sent, err)
	}
	srv := httptest.NewServer(e.console)
	defer srv.Close()
	pd := regexp.MustCompile(`<div class="delivery (\w+)" data-integration="` + regexp.QuoteMeta(dl.DeadLetter.Receiver) + `/pagerduty/0">(.*?)</div>`)
	for _, path := range []string{console.IncidentPath(dl.DeadLetter.Incident), "/"} {
		code, body := get(t, srv, path)
		m := pd.FindStringSubmatch(body)
		if code != http.StatusOK || m == nil {
			t.Fatalf("GET %s: %d, no PagerDuty delivery", path, code)
		}
		if m[1] != journal.OutcomeDeadLetter || !strings.Contains(m[2], `replayed (firing): <span class="badge sent">sent</span>`) || !strings.Contains(m[2], "by router-0") {
			t.Errorf("GET %s: the dead letter shows %s, %s; want the replay sent beside it", path, m[1], m[2])
		}
	}
	// A later firing failed for good too (review R12a): the replay sent
	// the earlier dead letter, not this one, and is not shown beside it.
	later := failed
	later.Time = e.now.Add(time.Minute)
	e.writer.Write(later)
	if err := e.writer.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	code, body := get(t, srv, console.IncidentPath(dl.DeadLetter.Incident))
	if m := pd.FindStringSubmatch(body); code != http.StatusOK || m == nil || m[1] != journal.OutcomeDeadLetter || strings.Contains(m[2], "replayed") {
		t.Errorf("a dead letter newer than the replay: %d %q, want it shown without the replay", code, m)
	}
}

// closing gives e the PagerDuty delivery that closed its incident.
func closing(e journal.Entry) journal.Entry {
	e.Deliveries = []journal.Delivery{{Receiver: "oncall", Integration: "pagerduty/0", Outcome: journal.OutcomeSent, Closed: true}}
	return e
}

// delivered gives e the deliveries ds.
func delivered(e journal.Entry, ds ...journal.Delivery) journal.Entry {
	e.Deliveries = ds
	return e
}

// suppressedAtPagerDuty gives e a resolve that closed the incident but
// was not sent to PagerDuty (send_resolved: false), and Slack's that was.
func suppressedAtPagerDuty(e journal.Entry) journal.Entry {
	e.Deliveries = []journal.Delivery{
		{Receiver: "oncall", Integration: "pagerduty/0", Outcome: alert.DeliverySuppressed, Closed: true},
		{Receiver: "oncall", Integration: "slack/0", Outcome: journal.OutcomeSent, Closed: true},
	}
	return e
}

// repaging gives e the PagerDuty delivery that paged again after a
// resolve by hand.
func repaging(e journal.Entry) journal.Entry {
	e.Deliveries = []journal.Delivery{{Receiver: "oncall", Integration: "pagerduty/0", Outcome: journal.OutcomeSent, Repaged: true}}
	return e
}

// started is probe firing since start, journaled at at.
func started(at, start time.Time, incident, fp string) journal.Entry {
	e := probe(at, incident, fp, "firing", alert.ActionPage)
	e.StartsAt = start
	return e
}

// Reviews R12a and R13a: the marks are of the incident's current episode,
// as the notifications that closed it and paged again after a resolve by
// hand say — not alerts' starts (an alert released from a silence fires
// with an old start; one joining a page PagerDuty keeps acknowledged moves
// nothing). An
// acknowledgement before a resolve and a re-fire was shown on a page nobody
// acknowledged; after a resolve by hand, an alert joining re-paged while the
// console still said acknowledged and resolved; an Unsilence of the
// message's silence hid the slash command's, still muting the alerts.
func TestSlackMarksSayWhatHoldsNow(t *testing.T) {
	e := newEnv(t)
	now := e.now
	e.writer.Write(
		// api: acknowledged, resolved, firing again since -10m.
		started(now.Add(-60*time.Minute), now.Add(-60*time.Minute), "api/page", "00000000000000c1"),
		triageEntry(now.Add(-50*time.Minute), "api/page", journal.Triage{Action: journal.TriageAck, UserID: "U1", UserName: "alice"}),
		closing(probe(now.Add(-40*time.Minute), "api/page", "00000000000000c1", "resolved", alert.ActionPage)),
		started(now.Add(-10*time.Minute), now.Add(-10*time.Minute), "api/page", "00000000000000c1"),
		// vault: acknowledged and resolved by hand; another alert joined.
		started(now.Add(-60*time.Minute), now.Add(-60*time.Minute), "vault/page", "00000000000000c2"),
		triageEntry(now.Add(-40*time.Minute), "vault/page", journal.Triage{Action: journal.TriageAck, UserID: "U1", UserName: "alice"}),
		triageEntry(now.Add(-30*time.Minute), "vault/page", journal.Triage{Action: journal.TriageResolve, UserID: "U2", UserName: "bob"}),
		repaging(started(now.Add(-20*time.Minute), now.Add(-20*time.Minute), "vault/page", "00000000000000c3")),
		// pay: acknowledged; another alert joined (PagerDuty keeps it
		// acknowledged), the first resolved: still acknowledged.
		started(now.Add(-60*time.Minute), now.Add(-60*time.Minute), "pay/page", "00000000000000c5"),
		triageEntry(now.Add(-40*time.Minute), "pay/page", journal.Triage{Action: journal.TriageAck, UserID: "U1", UserName: "alice"}),
		started(now.Add(-30*time.Minute), now.Add(-30*time.Minute), "pay/page", "00000000000000c6"),
		probe(now.Add(-20*time.Minute), "pay/page", "00000000000000c5", "resolved", alert.ActionPage),
		// mq: an alert released from a silence joins with an old start
		// after the incident closed: the acknowledgement was of the
		// closed episode.
		started(now.Add(-60*time.Minute), now.Add(-60*time.Minute), "mq/page", "00000000000000c7"),
		triageEntry(now.Add(-50*time.Minute), "mq/page", journal.Triage{Action: journal.TriageAck, UserID: "U1", UserName: "alice"}),
		closing(probe(now.Add(-40*time.Minute), "mq/page", "00000000000000c7", "resolved", alert.ActionPage)),
		started(now.Add(-5*time.Minute), now.Add(-55*time.Minute), "mq/page", "00000000000000c8"),
		// nores: PagerDuty with send_resolved: false — its resolve was
		// suppressed, Slack's closed the thread: PagerDuty's incident stays
		// open and acknowledged when the alert fires again (review R14).
		started(now.Add(-60*time.Minute), now.Add(-60*time.Minute), "nores/page", "00000000000000c9"),
		triageEntry(now.Add(-50*time.Minute), "nores/page", journal.Triage{Action: journal.TriageAck, UserID: "U1", UserName: "alice"}),
		suppressedAtPagerDuty(probe(now.Add(-40*time.Minute), "nores/page", "00000000000000c9", "resolved", alert.ActionPage)),
		started(now.Add(-5*time.Minute), now.Add(-5*time.Minute), "nores/page", "00000000000000c9"),
		// two: two teams' PagerDuty, one with send_resolved: false — its
		// incident stays open and acknowledged (review R15).
		delivered(started(now.Add(-60*time.Minute), now.Add(-60*time.Minute), "two/page", "00000000000000ca"),
			journal.Delivery{Receiver: "team-a", Integration: "pagerduty/0", Outcome: journal.OutcomeSent},
			journal.Delivery{Receiver: "team-b", Integration: "pagerduty/0", Outcome: journal.OutcomeSent}),
		triageEntry(now.Add(-50*time.Minute), "two/page", journal.Triage{Action: journal.TriageAck, UserID: "U1", UserName: "alice"}),
		delivered(probe(now.Add(-40*time.Minute), "two/page", "00000000000000ca", "resolved", alert.ActionPage),
			journal.Delivery{Receiver: "team-a", Integration: "pagerduty/0", Outcome: journal.OutcomeSent, Closed: true},
			journal.Delivery{Receiver: "team-b", Integration: "pagerduty/0", Outcome: alert.DeliverySuppressed, Closed: true}),
		started(now.Add(-5*time.Minute), now.Add(-5*time.Minute), "two/page", "00000000000000ca"),
		// dlq: the resolve PagerDuty refused, replayed: PagerDuty closed
		// the incident the acknowledgement was of (review R15).
		started(now.Add(-60*time.Minute), now.Add(-60*time.Minute), "dlq/page", "00000000000000cb"),
		triageEntry(now.Add(-50*time.Minute), "dlq/page", journal.Triage{Action: journal.TriageAck, UserID: "U1", UserName: "alice"}),
		delivered(probe(now.Add(-40*time.Minute), "dlq/page", "00000000000000cb", "resolved", alert.ActionPage),
			journal.Delivery{Receiver: "oncall", Integration: "pagerduty/0", Outcome: journal.OutcomeDeadLetter, Closed: true}),
		journal.Entry{Kind: journal.KindReplay, Time: now.Add(-30 * time.Minute), Incident: "dlq/page", Replay: &journal.Replay{DeadLetter: "1-0"},
			Deliveries: []journal.Delivery{{Receiver: "oncall", Integration: "pagerduty/0", Outcome: journal.OutcomeSent, Closed: true}}},
		started(now.Add(-5*time.Minute), now.Add(-5*time.Minute), "dlq/page", "00000000000000cb"),
		// db: the message's silence unsilenced, the slash command's lasts.
		started(now.Add(-60*time.Minute), now.Add(-60*time.Minute), "db/page", "00000000000000c4"),
		triageEntry(now.Add(-30*time.Minute), "db/page", journal.Triage{Action: journal.TriageSilence, UserID: "U1", UserName: "alice", Silence: "s-1", Until: now.Add(time.Hour)}),
		triageEntry(now.Add(-25*time.Minute), "db/page", journal.Triage{Action: journal.TriageSilence, UserID: "U2", UserName: "bob", Silence: "s-2", Until: now.Add(2 * time.Hour), Command: true}),
		triageEntry(now.Add(-20*time.Minute), "db/page", journal.Triage{Action: journal.TriageUnsilence, UserID: "U1", UserName: "alice", Silence: "s-1"}),
	)
	_, body := flushedOverview(t, e)
	c := cards(body)
	if !strings.Contains(c["two/page"], "acknowledged by") {
		t.Errorf("the card of two/page lost its acknowledgement (team-b's incident never closed):\n%s", c["two/page"])
	}
	if strings.Contains(c["dlq/page"], "acknowledged by") {
		t.Errorf("the card of dlq/page keeps an acknowledgement of the incident the replayed resolve closed:\n%s", c["dlq/page"])
	}
	if !strings.Contains(c["nores/page"], "acknowledged by") {
		t.Errorf("the card of nores/page lost its acknowledgement (PagerDuty's incident never closed):\n%s", c["nores/page"])
	}
	if !strings.Contains(c["pay/page"], "acknowledged by") {
		t.Errorf("the card of pay/page lost its acknowledgement (PagerDuty keeps it):\n%s", c["pay/page"])
	}
	for key, bad := range map[string]string{"api/page": "acknowledged", "vault/page": "by hand", "mq/page": "acknowledged"} {
		if strings.Contains(c[key], bad) || key == "vault/page" && strings.Contains(c[key], "acknowledged") {
			t.Errorf("the card of %s shows a mark of an earlier episode:\n%s", key, c[key])
		}
	}
	if want := `silenced by <bdi>bob</bdi> until ` + clock(now.Add(2*time.Hour)); !strings.Contains(c["db/page"], want) {
		t.Errorf("the card of db/page lacks %q (the slash command's silence lasts):\n%s", want, c["db/page"])
	}
}

// flushedOverview flushes e's journal writer and serves its console; it
// returns the server and the overview's page.
func flushedOverview(t *testing.T, e *env) (*httptest.Server, string) {
	t.Helper()
	if err := e.writer.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(e.console)
	t.Cleanup(srv.Close)
	code, body := get(t, srv, "/")
	if code != http.StatusOK {
		t.Fatalf("overview: %d", code)
	}
	return srv, body
}
