package slack_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/pdtest"
	"github.com/alertrouter/alertrouter/internal/slacktest"
	"github.com/alertrouter/alertrouter/notify/pagerduty"
	"github.com/alertrouter/alertrouter/notify/slack"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/dedup"
	"github.com/alertrouter/alertrouter/store"
)

// A Resolve click records the hand resolve at the PagerDuty integration it
// resolved (the team's), not once per incident: one incident key holds the
// alerts of every team they were routed to, and the per-incident mark made
// the next PagerDuty trigger of any team consume it — another team got a
// needless page, and the resolving team's own re-page was lost (routing:
// TestAHandResolveRepagesOnlyTheTeamThatResolved).
func TestAResolveClickMarksItsOwnPagerDutyIntegration(t *testing.T) {
	const incident = "llm-inference-gpu/chat/TTFT"
	for _, tc := range []struct {
		name string
		// escalated: the message is a ticket escalated from Slack.
		escalated bool
	}{
		{"a page resolved", false},
		{"an escalated ticket resolved", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			action := alert.ActionPage
			if tc.escalated {
				action = alert.ActionTicket
			}
			e := newTriageEnv(t, action, nil)
			tr := slack.NewTriage(slack.TriageOptions{Store: e.store, Now: func() time.Time { return clock }, Logger: slog.New(slog.NewTextHandler(e.h.logs, nil))})
			// team-02's Slack receiver ("triage" here) pages through team-02-pd
			// (escalate_to).
			if err := tr.Add("triage", "slack/0", e.notifier(t, func(c *slack.Config) { c.EscalateTo = "team-02-pd" }), nil, e.pager(t)); err != nil {
				t.Fatal(err)
			}
			tr.PagedThrough("triage", "slack/0", "team-02-pd", "pagerduty/0")
			if !tc.escalated {
				e.openPage(t, incident, "team-02-pd/pagerduty/0")
			}
			m := e.parent
			if tc.escalated {
				e.click(t, tr, m, slacktest.Click{User: "U0TEAM02A", UserName: "ann", ActionID: "alertrouter:escalate", ActionTS: "1700003000.000001"}, signingSecret, e.now(), nil)
				m = e.current(t)
			}
			e.click(t, tr, m, slacktest.Click{User: "U0TEAM02A", UserName: "ann", ActionID: "alertrouter:resolve", ActionTS: "1700003000.000002"}, signingSecret, e.now(), nil)
			if n := e.pd.Count("resolve", pagerduty.DedupKey(incident)); n != 1 {
				t.Fatalf("PagerDuty got %d resolves, want 1 (answers %+v)", n, e.h.srv.Responses())
			}
			own := dedup.HandResolvedAtKey("", incident, "team-02-pd/pagerduty/0")
			legacy := dedup.HandResolvedKey("", incident)
			_, found, err := e.store.Get(context.Background(), []string{own, legacy})
			if err != nil {
				t.Fatal(err)
			}
			if !found[0] {
				t.Error("no hand-resolve mark at team-02-pd's PagerDuty integration")
			}
			if found[1] {
				t.Error("the hand resolve was marked once per incident: any team's next trigger would consume it")
			}
		})
	}
}

// A Resolve click marks the incident "resolving" before it sends the
// resolve to PagerDuty, and resolved once PagerDuty took it: an alert
// joining meanwhile (at another replica) fails its webhook and pages on
// Alertmanager's retry, instead of being folded into the page the resolve
// closes (routing: TestAnAlertJoiningWhileAResolveIsOnItsWayPagesOnceItIsDone).
// A resolve whose outcome is unknown (no answer in time) leaves the mark
// saying resolved: it may have reached PagerDuty, and an alert joining
// after it must page (a review: the mark deleted, it never did). One
// PagerDuty refused leaves none: nothing changed there (a review: a 400
// left Slack saying the incident was paged again).
func TestAResolveClickMarksTheIncidentResolvingFirst(t *testing.T) {
	const incident = "llm-inference-gpu/chat/TTFT"
	for _, tc := range []struct {
		name string
		fail bool
		lost bool
	}{
		{"PagerDuty takes the resolve", false, false},
		{"PagerDuty does not answer in time", false, true},
		{"PagerDuty refuses the resolve", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newTriageEnv(t, alert.ActionPage, nil)
			tr := slack.NewTriage(slack.TriageOptions{Store: e.store, Now: func() time.Time { return clock }, Logger: slog.New(slog.NewTextHandler(e.h.logs, nil))})
			if err := tr.Add("triage", "slack/0", e.notifier(t, func(c *slack.Config) { c.EscalateTo = "team-02-pd" }), nil, e.pager(t)); err != nil {
				t.Fatal(err)
			}
			tr.PagedThrough("triage", "slack/0", "team-02-pd", "pagerduty/0")
			e.openPage(t, incident, "team-02-pd/pagerduty/0")
			own := dedup.HandResolvedAtKey("", incident, "team-02-pd/pagerduty/0")
			switch {
			case tc.fail:
				e.pd.FailN(20, pdtest.Fault{Status: 400, Delay: 300 * time.Millisecond})
			case tc.lost:
				e.pd.FailN(20, pdtest.Fault{Hang: true})
			default:
				e.pd.Fail(pdtest.Fault{Delay: 300 * time.Millisecond})
			}
			// What the mark reads while the resolve is on its way.
			var sawResolving atomic.Bool
			stop := make(chan struct{})
			polled := make(chan struct{})
			go func() {
				defer close(polled)
				for {
					select {
					case <-stop:
						return
					case <-time.After(5 * time.Millisecond):
					}
					if v, found, err := e.store.Get(context.Background(), []string{own}); err == nil && found[0] && dedup.IsHandResolving(v[0]) {
						sawResolving.Store(true)
					}
				}
			}()
			e.click(t, tr, e.parent, slacktest.Click{User: "U0TEAM02A", UserName: "ann", ActionID: "alertrouter:resolve", ActionTS: "1700003000.000002"}, signingSecret, e.now(), nil)
			close(stop)
			<-polled
			if !sawResolving.Load() {
				t.Error("the mark never read resolving while PagerDuty held the resolve")
			}
			v, found, err := e.store.Get(context.Background(), []string{own})
			if err != nil {
				t.Fatal(err)
			}
			if tc.fail {
				if found[0] {
					t.Errorf("after PagerDuty refused the resolve the mark is %q, want none", v[0])
				}
				return
			}
			if who, at := dedup.ParseHandResolved(v[0]); !found[0] || dedup.IsHandResolving(v[0]) || !strings.Contains(who, "U0TEAM02A") || at.IsZero() {
				t.Errorf("after the resolve the mark is %q (found %v), want the hand resolve", v[0], found[0])
			}
		})
	}
}

// joiningStore has an alert join the incident at key once, as a click
// is handled: at its first claim (the click just arrived: before it read
// anything) or just before its first "resolving" mark is written (a Join
// that read no mark: routing reads them again with its Join).
type joiningStore struct {
	store.Store
	key     string
	atClaim bool
	// repeat: the join repeats the page's own alert (Alertmanager sending
	// it again, the same start), no new alert.
	repeat bool
	once   sync.Once
}

func (s *joiningStore) join(ctx context.Context) {
	s.once.Do(func() {
		m := store.Member{Fingerprint: "bbb", StartsAt: "2000"}
		if s.repeat {
			m = store.Member{Fingerprint: "aaa", StartsAt: "1000"}
		}
		_, err := s.Store.Incidents(ctx, []store.IncidentOp{{Key: s.key, Step: store.StepJoin, Token: "other-replica",
			Members: []store.Member{m}, Lease: time.Hour, TTL: time.Hour}})
		if err != nil {
			panic(err)
		}
	})
}

func (s *joiningStore) SetNX(ctx context.Context, entries []store.Entry) ([]bool, error) {
	if s.key != "" && s.atClaim {
		s.join(ctx)
	}
	return s.Store.SetNX(ctx, entries)
}

func (s *joiningStore) Set(ctx context.Context, entries []store.Entry) error {
	for _, e := range entries {
		if dedup.IsHandResolving(e.Value) && s.key != "" && !s.atClaim {
			s.join(ctx)
		}
	}
	return s.Store.Set(ctx, entries)
}

func (s *joiningStore) IncidentJoins(ctx context.Context, keys []string) ([]map[string]time.Time, error) {
	return s.Store.(store.IncidentJoinsReader).IncidentJoins(ctx, keys)
}

func (s *joiningStore) TimeAt(ctx context.Context, key string) (time.Time, error) {
	return s.Store.(store.IncidentJoinsReader).TimeAt(ctx, key)
}

func (s *joiningStore) IncidentRef(ctx context.Context, key string) (string, error) {
	return s.Store.(store.IncidentRefReader).IncidentRef(ctx, key)
}

// An alert that joins the page as Resolve is clicked — its Join before the
// click's "resolving" mark, so the Join read no mark — was folded into the
// page the resolve closed, never paged nor seen by the user who clicked (a
// review: joins 0–10 ms after the click; another, joins in the hundreds of
// ms the click spends claiming, authorizing and reading the page before it
// acts). Once its mark is written, the click reads when the incident's
// members became ones: one since the click reached the router (both on the
// store's clock, whatever the hosts' and Slack's say) stops
// it — nothing resolved, the mark put back as it was (an earlier Resolve's
// stays: deleted, later alerts joining went unpaged), and the user told to
// read the new alert first. With no join since, the resolve goes.
func TestAnAlertJoiningAsResolveIsClickedStopsTheResolve(t *testing.T) {
	const incident = "llm-inference-gpu/chat/TTFT"
	earlier := dedup.HandResolved("bob (U0BOB) via Slack", clock.Add(-time.Hour))
	for _, backend := range []string{"memory", "redis"} {
		for _, tc := range []struct {
			name    string
			joins   bool
			atClaim bool
			prior   bool // an earlier Resolve's mark at the integration
			repeat  bool // the join repeats the page's alert: no new alert
			behind  bool // the store's clock 5 s behind the hosts' and Slack's
			early   bool // the join lands just before the click reaches the router
		}{
			{name: "no join"},
			{name: "a join before the mark", joins: true},
			{name: "a join as the click arrives", joins: true, atClaim: true},
			{name: "a join, over an earlier resolve", joins: true, prior: true},
			{name: "a join, the store's clock behind", joins: true, atClaim: true, behind: true},
			{name: "Alertmanager repeating the page's alert", atClaim: true, repeat: true},
			{name: "a join as Slack delivers the click", joins: true, early: true},
		} {
			t.Run(backend+"/"+tc.name, func(t *testing.T) {
				t.Parallel() // the redis cases wait out the margin
				// The memory store's clock: a minute back while the page
				// opens (long before the click), then now, or 5 s behind.
				var shift atomic.Int64
				shift.Store(int64(-time.Minute))
				var base store.Store = store.NewMemory(store.WithClock(func() time.Time { return time.Now().Add(time.Duration(shift.Load())) }))
				if backend == "redis" {
					if tc.behind || tc.prior || tc.name == "a join before the mark" {
						t.Skip("covered on the memory store; redis-server's clock is the host's")
					}
					base = redisStore(t)
				}
				e := newTriageEnv(t, alert.ActionPage, base)
				js := &joiningStore{Store: e.store, atClaim: tc.atClaim, repeat: tc.repeat}
				if tc.joins || tc.repeat {
					js.key = store.IncidentKey("", incident, "team-02-pd/pagerduty/0")
				}
				tr := slack.NewTriage(slack.TriageOptions{Store: js, Logger: slog.New(slog.NewTextHandler(e.h.logs, nil))})
				if err := tr.Add("triage", "slack/0", e.notifier(t, func(c *slack.Config) { c.EscalateTo = "team-02-pd" }), nil, e.pager(t)); err != nil {
					t.Fatal(err)
				}
				tr.PagedThrough("triage", "slack/0", "team-02-pd", "pagerduty/0")
				e.openPage(t, incident, "team-02-pd/pagerduty/0")
				own := dedup.HandResolvedAtKey("", incident, "team-02-pd/pagerduty/0")
				if tc.prior {
					if err := e.store.Set(context.Background(), []store.Entry{{Key: own, Value: earlier, TTL: time.Hour}}); err != nil {
						t.Fatal(err)
					}
				}
				if backend == "redis" {
					// The page opened before the click by more than the
					// margin Slack's delivery of a click is given.
					time.Sleep(2100 * time.Millisecond)
				}
				shift.Store(0)
				if tc.behind {
					shift.Store(int64(-5 * time.Second))
				}
				if tc.early {
					js.join(context.Background()) // pressed, and on its way
				}
				clicked := fmt.Sprintf("%.6f", float64(time.Now().UnixMicro())/1e6) // as Slack writes action_ts
				e.click(t, tr, e.parent, slacktest.Click{User: "U0TEAM02A", UserName: "ann", ActionID: "alertrouter:resolve", ActionTS: clicked}, signingSecret, e.now(), nil)
				resolves := e.pd.Count("resolve", pagerduty.DedupKey(incident))
				v, found, err := e.store.Get(context.Background(), []string{own})
				if err != nil {
					t.Fatal(err)
				}
				if !tc.joins { // no new alert: a repeat is none
					if resolves != 1 || !found[0] || dedup.IsHandResolving(v[0]) {
						t.Fatalf("no alert joined: %d resolves, mark %q (found %v); want the resolve sent and marked done (answers %+v)", resolves, v[0], found[0], e.h.srv.Responses())
					}
					return
				}
				if resolves != 0 {
					t.Fatalf("PagerDuty got %d resolves though an alert joined as Resolve was clicked, want none", resolves)
				}
				switch {
				case tc.prior && (!found[0] || v[0] != earlier):
					t.Errorf("the earlier Resolve's mark reads %q (found %v) after the click was stopped, want it as it was", v[0], found[0])
				case !tc.prior && found[0]:
					t.Errorf("the resolve was not sent, but the mark %q stays: later alerts would wait or re-page", v[0])
				}
				rs := e.h.srv.Responses()
				if len(rs) == 0 || !strings.Contains(rs[len(rs)-1].Text, "A new alert joined incident") || !strings.Contains(rs[len(rs)-1].Text, "nothing was resolved") {
					t.Fatalf("the user was told %+v, want that a new alert joined and nothing was resolved", rs)
				}
			})
		}
	}
}
