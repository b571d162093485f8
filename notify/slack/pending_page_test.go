package slack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/pdtest"
	"github.com/alertrouter/alertrouter/internal/redistest"
	"github.com/alertrouter/alertrouter/internal/slacktest"
	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/notify/pagerduty"
	"github.com/alertrouter/alertrouter/notify/slack"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/dedup"
	"github.com/alertrouter/alertrouter/routing/journal"
	"github.com/alertrouter/alertrouter/store"
)

// The Slack parent of a page is posted beside the PagerDuty trigger, which
// may still be retried when someone clicks Acknowledge or Resolve: PagerDuty
// dropped the acknowledge or resolve of a dedup_key it did not hold yet,
// and the trigger then landed and paged while Slack said it was handled.
// While the dispatch core holds the page's opening lease (its incident
// state at the PagerDuty integration is "opening"), the click waits for it
// and, still unconfirmed, does nothing and says so; once the page is open,
// the buttons act.
func TestAClickBeforePagerDutyHasThePageDoesNothingAndSaysSo(t *testing.T) {
	incident := "llm-inference-gpu/chat/TTFT"
	dk := pagerduty.DedupKey(incident)
	for _, action := range []string{slack.ActionAck, slack.ActionResolve} {
		t.Run(action, func(t *testing.T) {
			e := newTriageEnv(t, alert.ActionPage, nil)
			tr := e.pagedTriage(t, slack.NewTriageMetrics(e.reg))
			// The dispatch core's trigger of the page, in flight.
			page := store.Key("", "inc", incident, "pagerduty/pagerduty/0")
			op := store.IncidentOp{Key: page, Step: store.StepJoin, Token: "sender", Members: []store.Member{{Fingerprint: "aaa", StartsAt: "1000"}}, Lease: time.Hour, TTL: time.Hour}
			e.shift.Store(int64(-time.Minute)) // long before any click
			if res, err := e.store.Incidents(context.Background(), []store.IncidentOp{op}); err != nil || res[0].Outcome != store.OutcomeOpening {
				t.Fatalf("open the page: %+v, %v", res, err)
			}
			e.shift.Store(0)

			e.click(t, tr, e.parent, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:" + action, ActionTS: "1700002000.000001"}, signingSecret, e.now(), nil)
			if n := len(e.pd.Events()); n != 0 {
				t.Fatalf("PagerDuty got %d events while the page's trigger was in flight", n)
			}
			r := e.h.srv.Responses()
			if len(r) != 1 || !strings.Contains(r[0].Text, "PagerDuty has not confirmed the page") || !strings.Contains(r[0].Text, "nothing was done") {
				t.Fatalf("answers %+v, want one saying PagerDuty has not confirmed the page yet", r)
			}
			if e.current(t).Updates != 0 {
				t.Fatal("the parent was redrawn")
			}

			// The trigger lands: the page is open, the button acts.
			op.Step = store.StepOpened
			if _, err := e.store.Incidents(context.Background(), []store.IncidentOp{op}); err != nil {
				t.Fatal(err)
			}
			e.click(t, tr, e.parent, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:" + action, ActionTS: "1700002000.000002"}, signingSecret, e.now(), nil)
			event := map[string]string{slack.ActionAck: "acknowledge", slack.ActionResolve: "resolve"}[action]
			if got := e.pd.Count(event, dk); got != 1 {
				t.Fatalf("PagerDuty got %d %s events once the page was open, want 1 (answers %+v)", got, event, e.h.srv.Responses())
			}
		})
	}
}

// openPage opens incident's page at the PagerDuty integration through
// ("receiver/integration") in the store, as the dispatch core does once
// PagerDuty took its trigger.
func (e *triageEnv) openPage(t *testing.T, incident, through string) {
	t.Helper()
	e.pageSteps(t, incident, through, store.StepJoin, store.StepOpened)
}

// pageSteps runs steps on incident's page at through in the store, as the
// dispatch core does: Join then Opened once PagerDuty took its trigger,
// Join then Abort when it refused it.
func (e *triageEnv) pageSteps(t *testing.T, incident, through string, steps ...store.IncidentStep) {
	t.Helper()
	if e.shift != nil {
		e.shift.Store(int64(-time.Minute)) // long before any click
		defer e.shift.Store(0)
	}
	op := store.IncidentOp{Key: store.Key("", "inc", incident, through), Token: "sender", Members: []store.Member{{Fingerprint: "aaa", StartsAt: "1000"}}, Lease: time.Hour, TTL: time.Hour}
	for _, step := range steps {
		op.Step = step
		if _, err := e.store.Incidents(context.Background(), []store.IncidentOp{op}); err != nil {
			t.Fatal(err)
		}
	}
}

// A page whose PagerDuty trigger failed — a routing key PagerDuty refuses:
// the opening aborted, a dead letter written — has its Slack parent all the
// same. Acknowledge and Resolve said "acknowledged the incident in
// PagerDuty" for a page PagerDuty never held (it drops the event), and a
// replay of the dead letter then paged on-call for an incident Slack showed
// as handled. The click does nothing and says why; once the page is open
// (a replay, Alertmanager's retry), the button acts. A store whose state
// began after the message was posted (restarted empty) may have lost the
// page's: the button acts, as before.
func TestAClickOnAPageWhoseTriggerFailedDoesNothingAndSaysSo(t *testing.T) {
	incident := "llm-inference-gpu/chat/TTFT"
	dk := pagerduty.DedupKey(incident)
	for _, action := range []string{slack.ActionAck, slack.ActionResolve} {
		t.Run(action, func(t *testing.T) {
			e := newTriageEnv(t, alert.ActionPage, nil)
			tr := e.pagedTriage(t, slack.NewTriageMetrics(e.reg))
			// The store's state began before the message was posted.
			if err := dedup.MarkEpoch(context.Background(), e.store, "", time.Unix(1699990000, 0)); err != nil {
				t.Fatal(err)
			}
			// The dispatch core's trigger was refused: its opening aborted.
			e.pageSteps(t, incident, "pagerduty/pagerduty/0", store.StepJoin, store.StepAbort)

			e.click(t, tr, e.parent, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:" + action, ActionTS: "1700002000.000001"}, signingSecret, e.now(), nil)
			if n := len(e.pd.Events()); n != 0 {
				t.Fatalf("PagerDuty got %d events for a page it never held", n)
			}
			r := e.h.srv.Responses()
			if len(r) != 1 || !strings.Contains(r[0].Text, "no open PagerDuty page") || !strings.Contains(r[0].Text, "dead letters") || !strings.Contains(r[0].Text, "Nothing was done") {
				t.Fatalf("answers %+v, want one saying PagerDuty holds no page and nothing was done", r)
			}
			if m := e.current(t); m.Updates != 0 || len(e.h.srv.Thread(m.TS)) != 0 {
				t.Fatal("the parent was redrawn or the thread told it was handled")
			}

			// Alertmanager's retry opens the page: the button acts.
			e.openPage(t, incident, "pagerduty/pagerduty/0")
			e.click(t, tr, e.parent, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:" + action, ActionTS: "1700002000.000002"}, signingSecret, e.now(), nil)
			event := map[string]string{slack.ActionAck: "acknowledge", slack.ActionResolve: "resolve"}[action]
			if got := e.pd.Count(event, dk); got != 1 {
				t.Fatalf("PagerDuty got %d %s events once the page was open, want 1 (answers %+v)", got, event, e.h.srv.Responses())
			}
		})
	}
}

// A store restarted empty after the page was posted holds no state of the
// page PagerDuty holds open: Acknowledge acts, as before the router read
// the page's state.
func TestAClickAfterTheStoreLostItsStateActs(t *testing.T) {
	incident := "llm-inference-gpu/chat/TTFT"
	e := newTriageEnv(t, alert.ActionPage, nil)
	tr := e.pagedTriage(t, nil)
	// No page state, and the store's epoch (marked by the click's read:
	// now) after the message's ts.
	e.click(t, tr, e.parent, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:ack", ActionTS: "1700002000.000001"}, signingSecret, e.now(), nil)
	if got := e.pd.Count("acknowledge", pagerduty.DedupKey(incident)); got != 1 {
		t.Fatalf("PagerDuty got %d acknowledges after the store lost its state, want 1 (answers %+v)", got, e.h.srv.Responses())
	}
}

// pagedTriage is a triage handler whose parent pages through PagerDuty's
// pagerduty/0 (PagedThrough), waiting at most 50ms for its trigger.
func (e *triageEnv) pagedTriage(t *testing.T, metrics *slack.TriageMetrics) *slack.Triage {
	t.Helper()
	tr := slack.NewTriage(slack.TriageOptions{Store: e.store, PageWait: 50 * time.Millisecond, Metrics: metrics})
	if err := tr.Add("triage", "slack/0", e.notifier(t, nil), e.pager(t), nil); err != nil {
		t.Fatal(err)
	}
	tr.PagedThrough("triage", "slack/0", "pagerduty", "pagerduty/0")
	return tr
}

// A page whose trigger failed (a dead letter) and was then replayed from the
// console or the CLI is open in PagerDuty, while the dispatch core's state
// learns so only at the alert's next webhook: Acknowledge was refused until
// then (an audit). The journal's replay entry lets it act; a replay that
// failed, or a resolve sent through the integration since, does not.
func TestAClickAfterTheFailedTriggerWasReplayedActs(t *testing.T) {
	incident := "llm-inference-gpu/chat/TTFT"
	dk := pagerduty.DedupKey(incident)
	replay := func(outcome string, kind alert.Kind, closed bool) journal.Entry {
		return journal.Entry{Kind: journal.KindReplay, Time: time.Now(), Incident: incident, Status: string(kind),
			Deliveries: []journal.Delivery{{Receiver: "pagerduty", Integration: "pagerduty/0", Outcome: outcome, Closed: closed}},
			Replay:     &journal.Replay{DeadLetter: "1-0", Via: "console", Kind: kind, Action: alert.ActionPage}}
	}
	for _, tc := range []struct {
		name    string
		entries []journal.Entry
		acts    bool
	}{
		{"replayed", []journal.Entry{replay(journal.OutcomeSent, alert.KindFiring, false)}, true},
		{"replay failed", []journal.Entry{replay(journal.OutcomeFailed, alert.KindFiring, false)}, false},
		{"resolve replayed since", []journal.Entry{replay(journal.OutcomeSent, alert.KindFiring, false), replay(journal.OutcomeSent, alert.KindResolved, true)}, false},
		{"another integration's replay", []journal.Entry{func() journal.Entry {
			e := replay(journal.OutcomeSent, alert.KindFiring, false)
			e.Deliveries[0].Integration = "pagerduty/1"
			return e
		}()}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newTriageEnv(t, alert.ActionPage, nil)
			if err := dedup.MarkEpoch(context.Background(), e.store, "", time.Unix(1699990000, 0)); err != nil {
				t.Fatal(err)
			}
			e.pageSteps(t, incident, "pagerduty/pagerduty/0", store.StepJoin, store.StepAbort)
			tr := e.journaledTriage(t, tc.entries...)

			e.click(t, tr, e.parent, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:ack", ActionTS: "1700002000.000001"}, signingSecret, e.now(), nil)
			got := e.pd.Count("acknowledge", dk)
			if tc.acts && got != 1 {
				t.Fatalf("PagerDuty got %d acknowledges after the page was replayed, want 1 (answers %+v)", got, e.h.srv.Responses())
			}
			if !tc.acts && (got != 0 || len(e.h.srv.Responses()) != 1 || !strings.Contains(e.h.srv.Responses()[0].Text, "no open PagerDuty page")) {
				t.Fatalf("PagerDuty got %d acknowledges (answers %+v), want none and the answer that it holds no open page", got, e.h.srv.Responses())
			}
		})
	}
}

// A reload that rotated the PagerDuty routing key sent Slack's Acknowledge
// and Resolve to the new key, where PagerDuty dropped them: the page
// triggered at the old key went on while Slack said it was handled (an
// audit). They go to the key the incident's Ref (kept by the dispatch core
// with its state at the integration) names.
func TestAckAndResolveReachTheKeyThePageWasTriggeredAt(t *testing.T) {
	incident := "llm-inference-gpu/chat/TTFT"
	const newKey = "fedcba9876543210fedcba9876543210"
	for _, action := range []string{slack.ActionAck, slack.ActionResolve} {
		t.Run(action, func(t *testing.T) {
			e := newTriageEnv(t, alert.ActionPage, nil)
			// The page's trigger, through the key in force then: its Ref.
			open := &alert.Notification{Receiver: "pagerduty", Integration: "pagerduty/0", Incident: incident, Kind: alert.KindFiring, Action: alert.ActionPage, Opening: true,
				Results: []*alert.Result{{Alert: &alert.Alert{}, Decision: alert.Decision{Action: alert.ActionPage}}}}
			if err := e.pager(t).Notify(context.Background(), open); err != nil || open.Ref == "" {
				t.Fatalf("trigger: %v, Ref %q", err, open.Ref)
			}
			op := store.IncidentOp{Key: store.Key("", "inc", incident, "pagerduty/pagerduty/0"), Token: "sender", Members: []store.Member{{Fingerprint: "aaa", StartsAt: "1000"}}, Lease: time.Hour, TTL: time.Hour}
			e.shift.Store(int64(-time.Minute)) // long before any click
			for _, step := range []store.IncidentStep{store.StepJoin, store.StepOpened} {
				op.Step, op.Ref = step, open.Ref
				if _, err := e.store.Incidents(context.Background(), []store.IncidentOp{op}); err != nil {
					t.Fatal(err)
				}
			}
			e.shift.Store(0)
			// A reload rotated the key: the triage's pager sends with the new one.
			pcfg := pagerduty.DefaultConfig()
			pcfg.RoutingKey, pcfg.URL = newKey, e.pd.EnqueueURL()
			rotated, err := pagerduty.New(&pcfg, "triage", notify.Deps{Retry: notify.RetryPolicy{MaxAttempts: 1}})
			if err != nil {
				t.Fatal(err)
			}
			tr := slack.NewTriage(slack.TriageOptions{Store: e.store, PageWait: 50 * time.Millisecond})
			if err := tr.Add("triage", "slack/0", e.notifier(t, nil), rotated, nil); err != nil {
				t.Fatal(err)
			}
			tr.PagedThrough("triage", "slack/0", "pagerduty", "pagerduty/0")
			e.click(t, tr, e.parent, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:" + action, ActionTS: "1700002000.000001"}, signingSecret, e.now(), nil)
			event := map[string]string{slack.ActionAck: "acknowledge", slack.ActionResolve: "resolve"}[action]
			var keys []string
			for _, ev := range e.pd.Events() {
				if ev.EventAction == event {
					keys = append(keys, ev.RoutingKey)
				}
			}
			if len(keys) != 1 || keys[0] != pdtest.RoutingKey {
				t.Fatalf("%s went to %q (answers %+v), want the key the page was triggered at", event, keys, e.h.srv.Responses())
			}
		})
	}
}

// A Redis that evicts keys when full (maxmemory-policy other than
// noeviction: deploy/README.md says not to run one, the router warns) may
// have deleted the page's state while PagerDuty holds the page: a click then
// did nothing and said the trigger failed or the incident closed (an audit:
// half the incidents' state evicted). Once it has evicted keys, it acts, as
// after a restart — unless the journal says the trigger failed (a review:
// the click acknowledged a page PagerDuty never held, and the dead letter's
// replay later paged an incident Slack showed as handled). On a Redis that
// refuses writes instead, or that evicted nothing yet, no state still means
// no page held.
func TestAClickOnAnEvictingRedisWithoutThePagesStateActs(t *testing.T) {
	incident := "llm-inference-gpu/chat/TTFT"
	for _, tc := range []struct {
		name    string
		policy  string
		evicted bool // keys were evicted before the click
		failed  bool // the journal has the trigger's dead letter
		acts    bool
	}{
		{"allkeys-lru, evicted", "allkeys-lru", true, false, true},
		{"volatile-lru, evicted", "volatile-lru", true, false, true},
		{"allkeys-lru, nothing evicted yet", "allkeys-lru", false, false, false},
		{"allkeys-lru, evicted, the trigger failed", "allkeys-lru", true, true, false},
		{"noeviction", "noeviction", false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := redistest.Start(t, "--maxmemory", "2mb", "--maxmemory-policy", tc.policy)
			if tc.evicted {
				// Fill it past maxmemory (keys with a TTL, which every
				// policy may evict), then empty it: evicted_keys stays.
				for i := range 4000 {
					if _, err := redistest.Do(srv.Addr(), "SET", fmt.Sprintf("filler:%d", i), strings.Repeat("x", 1024), "PX", "600000"); err != nil {
						t.Fatal(err)
					}
				}
				if _, err := redistest.Do(srv.Addr(), "FLUSHALL"); err != nil {
					t.Fatal(err)
				}
			}
			e := newTriageEnv(t, alert.ActionPage, redisOn(t, srv.Addr()))
			// The store began before the message: no restart to explain
			// the missing state.
			if err := dedup.MarkEpoch(context.Background(), e.store, "", time.Unix(1699990000, 0)); err != nil {
				t.Fatal(err)
			}
			var entries []journal.Entry
			if tc.failed {
				entries = append(entries, journal.Entry{Kind: journal.KindDecision, Time: time.Now(), Incident: incident, Status: "firing",
					Deliveries: []journal.Delivery{{Receiver: "pagerduty", Integration: "pagerduty/0", Outcome: journal.OutcomeDeadLetter, Error: "400 Bad Request"}}})
			}
			tr := e.journaledTriage(t, entries...)
			e.click(t, tr, e.parent, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:resolve", ActionTS: "1700002000.000001"}, signingSecret, e.now(), nil)
			if got := e.pd.Count("resolve", pagerduty.DedupKey(incident)); (got == 1) != tc.acts {
				t.Fatalf("PagerDuty got %d resolves with no page state, want acted %v (answers %+v)", got, tc.acts, e.h.srv.Responses())
			}
		})
	}
}

// journaledTriage is pagedTriage reading a journal that holds entries.
func (e *triageEnv) journaledTriage(t *testing.T, entries ...journal.Entry) *slack.Triage {
	t.Helper()
	j := store.OpenJournal(e.store, "journal", store.DefaultJournalRetention)
	for _, en := range entries {
		b, _ := json.Marshal(en)
		if _, err := j.AppendJournal(context.Background(), []store.JournalRecord{{Kind: string(en.Kind), Data: b}}); err != nil {
			t.Fatal(err)
		}
	}
	tr := slack.NewTriage(slack.TriageOptions{Store: e.store, PageWait: 50 * time.Millisecond, Journal: j})
	if err := tr.Add("triage", "slack/0", e.notifier(t, nil), e.pager(t), nil); err != nil {
		t.Fatal(err)
	}
	tr.PagedThrough("triage", "slack/0", "pagerduty", "pagerduty/0")
	return tr
}
