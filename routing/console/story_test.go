package console_test

import (
	"context"
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

// story is one incident as an audit followed it across two replicas: alert
// A pages (PagerDuty and Slack sent; the other replica waits on the send),
// alert B joins (the update PagerDuty's open incident folds: suppressed),
// then, when resolved, A resolves (endsAt set) and B resolves without an
// endsAt.
type story struct {
	incident                  string
	aStart, bStart            time.Time
	aEnds, bResolvedInJournal time.Time
}

func writeStory(t *testing.T, e *env, resolved bool) story {
	t.Helper()
	now := e.now
	s := story{incident: "checkout/latency", aStart: now.Add(-10 * time.Minute), bStart: now.Add(-8*time.Minute - 30*time.Second),
		aEnds: now.Add(-3*time.Minute - 10*time.Second), bResolvedInJournal: now.Add(-2 * time.Minute)}
	entry := func(at time.Time, replica, name, fp, status string, start time.Time, pd, slack string) journal.Entry {
		return journal.Entry{Kind: journal.KindDecision, Time: at, Replica: replica, Fingerprint: fp, Alertname: name,
			Status: status, StartsAt: start, Sector: "payments", Incident: s.incident, Receivers: []string{"oncall"},
			Decision: alert.Decision{Action: alert.ActionPage, Policy: "burn-rate"},
			Deliveries: []journal.Delivery{
				{Receiver: "oncall", Integration: "pagerduty/0", Outcome: pd, Attempts: attempts(pd)},
				{Receiver: "oncall", Integration: "slack/0", Outcome: slack, Attempts: attempts(slack)},
			}}
	}
	tA, tB := now.Add(-9*time.Minute), now.Add(-8*time.Minute)
	e.writer.Write(
		entry(tA, "router-0", "CheckoutLatencyHigh", "00000000000000aa", "firing", s.aStart, journal.OutcomeSent, journal.OutcomeSent),
		entry(tA, "router-1", "CheckoutLatencyHigh", "00000000000000aa", "firing", s.aStart, alert.DeliveryInFlight, alert.DeliveryInFlight),
		entry(tB, "router-0", "CheckoutErrorsHigh", "00000000000000bb", "firing", s.bStart, alert.DeliverySuppressed, journal.OutcomeSent),
	)
	if resolved {
		ra := entry(now.Add(-3*time.Minute), "router-0", "CheckoutLatencyHigh", "00000000000000aa", "resolved", s.aStart, alert.DeliverySuppressed, journal.OutcomeSent)
		ra.EndsAt = s.aEnds
		rb := entry(s.bResolvedInJournal, "router-0", "CheckoutErrorsHigh", "00000000000000bb", "resolved", s.bStart, journal.OutcomeSent, journal.OutcomeSent)
		e.writer.Write(ra, rb)
	}
	if err := e.writer.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	return s
}

func attempts(outcome string) int {
	if outcome == journal.OutcomeSent {
		return 1
	}
	return 0
}

func clock(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") }

var pagerDutyRE = regexp.MustCompile(`<div class="delivery (\w+)" data-integration="oncall/pagerduty/0">(.*?)</div>`)

// After a second alert joined an incident that paged, the incident's
// delivery to PagerDuty still says the page was sent, the folded update
// beside it as the latest: the newest outcome alone ("suppressed") hid
// the page.
func TestTheDeliveryShownIsThePageNotTheLatestUpdate(t *testing.T) {
	e := newEnv(t)
	writeStory(t, e, false)
	srv := httptest.NewServer(e.console)
	defer srv.Close()
	for _, path := range []string{"/", console.IncidentPath("checkout/latency")} {
		code, body := get(t, srv, path)
		m := pagerDutyRE.FindAllStringSubmatch(body, -1)
		if code != http.StatusOK || len(m) != 1 {
			t.Fatalf("GET %s: %d, %d PagerDuty deliveries shown, want 1:\n%s", path, code, len(m), body)
		}
		if m[0][1] != journal.OutcomeSent || !strings.Contains(m[0][2], `latest: <span class="badge suppressed">suppressed</span>`) {
			t.Errorf("GET %s: PagerDuty shows %s (%s), want the page sent and the latest update suppressed beside it", path, m[0][1], m[0][2])
		}
	}
}

// A resolved alert says when it resolved (its endsAt, or when the router
// journaled the resolve if it has none) and when it fired, not "since" its
// start.
func TestAResolvedAlertSaysWhenItResolvedAndFired(t *testing.T) {
	e := newEnv(t)
	s := writeStory(t, e, true)
	srv := httptest.NewServer(e.console)
	defer srv.Close()
	code, body := get(t, srv, console.IncidentPath(s.incident))
	if code != http.StatusOK {
		t.Fatalf("incident page: %d", code)
	}
	for name, want := range map[string]string{
		"resolved with an endsAt":    "at " + clock(s.aEnds) + "<br>fired " + clock(s.aStart),
		"resolved without an endsAt": "at " + clock(s.bResolvedInJournal) + "<br>fired " + clock(s.bStart),
	} {
		if !strings.Contains(body, want) {
			t.Errorf("%s: the page lacks %q", name, want)
		}
	}
	for _, start := range []time.Time{s.aStart, s.bStart} {
		if strings.Contains(body, "since "+clock(start)) {
			t.Errorf("a resolved alert reads \"since %s\", its start", clock(start))
		}
	}
}

// With no open incident the overview speaks of what is firing now, and
// counts the incidents that paged or ticketed in the window: "nothing
// deserved a page in the last 24h" right after a page was false.
func TestNoOpenIncidentSaysWhatIsFiringNow(t *testing.T) {
	e := newEnv(t)
	srv := httptest.NewServer(e.console)
	defer srv.Close()
	empty := regexp.MustCompile(`<p class="empty" id="no-open">([^<]*)</p>`)
	_, body := get(t, srv, "/")
	if m := empty.FindStringSubmatch(body); m == nil || m[1] != "No open incident: nothing firing now deserves a page or a ticket. None paged or ticketed in the last 24h." {
		t.Errorf("empty journal: the overview says %q", m)
	}
	writeStory(t, e, true)
	_, body = get(t, srv, "/")
	if m := empty.FindStringSubmatch(body); m == nil || m[1] != "No open incident: nothing firing now deserves a page or a ticket. In the last 24h, 1 incident paged and 0 ticketed, all closed since." {
		t.Errorf("an incident paged and resolved: the overview says %q", m)
	}
}

// A journal that begins inside the overview's window is said, with the
// time elapsed to the second under a minute, and without claiming a
// restart: a new store looks the same. "No open incident" alone would
// mislead on-call after a Redis restart lost the open incidents'
// decisions.
func TestOverviewSaysWhenTheJournalBegan(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		ago  time.Duration
		says string // "": not said
	}{{24*time.Second + 300*time.Millisecond, "24s ago"}, {90*time.Minute + 20*time.Second, "1h30m ago"}, {48 * time.Hour, ""}} {
		began := e.now.Add(-tc.ago)
		c := console.New(console.Options{Journal: e.journal, Now: func() time.Time { return e.now }, CacheTTL: -1,
			Began: func(context.Context) (time.Time, error) { return began, nil }})
		srv := httptest.NewServer(c)
		code, body := get(t, srv, "/")
		srv.Close()
		said := strings.Contains(body, "The journal begins at")
		if code != http.StatusOK || said != (tc.says != "") {
			t.Errorf("journal begun %s ago: %d, says so %v, want %v:\n%s", tc.ago, code, said, tc.says != "", body)
		}
		if tc.says == "" {
			continue
		}
		if want := "The journal begins at " + began.UTC().Format("2006-01-02 15:04:05") + " UTC, " + tc.says; !strings.Contains(body, want) {
			t.Errorf("journal begun %s ago: the notice does not say %q:\n%s", tc.ago, want, body)
		}
		if !strings.Contains(body, "a new store") || strings.Contains(body, "(Redis restarted empty, or") {
			t.Errorf("journal begun %s ago: the notice asserts a restart rather than offering a new store:\n%s", tc.ago, body)
		}
	}
}

// After the store lost its state (FLUSHALL, a Redis restarted empty), the
// overview's empty list does not say none was paged in the window, and the
// incident page notifications link to, the decisions and the dead letters
// say the journal begins then (audit CONSOLE: "None paged or ticketed in the
// last 24h" minutes after 25 pages, and a bare 404 on the incident's page).
func TestEveryPageSaysTheJournalBeganAfterTheStoreLostItsState(t *testing.T) {
	e := newEnv(t)
	began := e.now.Add(-3 * time.Minute)
	c := console.New(console.Options{Journal: e.journal, Now: func() time.Time { return e.now }, CacheTTL: -1,
		Began: func(context.Context) (time.Time, error) { return began, nil }})
	srv := httptest.NewServer(c)
	defer srv.Close()
	when := began.UTC().Format("2006-01-02 15:04:05")
	_, body := get(t, srv, "/")
	empty := regexp.MustCompile(`<p class="empty" id="no-open">([^<]*)</p>`)
	if m := empty.FindStringSubmatch(body); m == nil || strings.Contains(m[1], "None paged") || strings.Contains(m[1], "nothing firing now") ||
		!strings.Contains(m[1], "which begins at "+when) || !strings.Contains(m[1], "check PagerDuty and Slack") {
		t.Errorf("the overview's empty list says %q", m)
	}
	for _, path := range []string{"/decisions", "/dead-letters", console.IncidentPath("payments/checkout")} {
		code, body := get(t, srv, path)
		if !strings.Contains(body, "The journal begins at "+when) {
			t.Errorf("GET %s (%d) does not say when the journal begins:\n%s", path, code, body)
		}
	}
}
