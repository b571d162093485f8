package routing_test

// Boundaries of the pending-resolve decisions (pending.go, flap.go) that
// no other test pins: the exact-equality cases and the guards a mutation
// audit found unexercised.

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/webhooktest"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/dedup"
	"github.com/alertrouter/alertrouter/store"
)

// A resolve sent without a startsAt, no marker found, the store's epoch
// set: its start is unknown, so nothing says it fired before the store's
// state began. Only the PagerDuty-side unseen path sends it; Slack, which
// never posted it, must not get a resolved message for something it never
// showed on-call.
func TestAnUnseenResolveWithoutAStartGetsNoSlackMessage(t *testing.T) {
	e := unseenEnv(t)
	s := newStandIns(t)
	p := s.replica(e)
	x := tAlert("TTFTHigh", "resolved", "page")
	x.StartsAt = ""
	processGroup(t, p, "resolved", 0, x)
	if ms := s.slack.Messages(); len(ms) != 0 {
		t.Errorf("%d Slack messages (first %q) for a resolve of something never posted, want none", len(ms), ms[0].Text)
	}
}

// A late resolve of an earlier instance, never notified here, whose endsAt
// is exactly the start of the firing that paged since. It ended as that
// firing began: it is not that firing's resolve (earlierFirings takes only
// a firing that started before the resolve ended), so Slack's parent of
// the live firing must not be marked resolved. What PagerDuty gets at this
// exact equality is not pinned: firedSince and the Leave (store.Member)
// both read "after" strictly, so it gets the resolve as an unseen one —
// Prometheus cannot produce the case (a firing becomes active at an
// evaluation after the one that found it inactive), and whether equality
// should keep the page open is left open.
func TestALateResolveEndingExactlyAtTheLiveStart(t *testing.T) {
	for _, tc := range []struct {
		name  string
		start time.Duration // of the live firing, after t0-5m
	}{
		{"at the millisecond", 321 * time.Millisecond},
		{"at the whole second", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.routes = pageToBothRoutes
			p := dampingPipeline(e)
			t0 := e.clock.Now()
			if err := dedup.MarkEpoch(context.Background(), e.store, e.dedup.KeyPrefix, t0.Add(-2*time.Hour)); err != nil {
				t.Fatal(err)
			}
			mk := stampedAlert
			live := t0.Add(-5*time.Minute + tc.start)
			mustProcess(t, p, mk("firing", live, time.Time{})) // pages
			e.clock.Advance(time.Minute)
			mustProcess(t, p, mk("resolved", t0.Add(-20*time.Minute), live))
			for _, n := range e.slack.notifications() {
				if n.Kind == alert.KindResolved {
					t.Fatalf("Slack got a resolve of the live firing from a resolve that ended as it began")
				}
			}
		})
	}
}

// A page resolved by hand at the very instant its alert's next start
// begins: that start is not after the hand resolve, so it is a copy of the
// firing that was resolved (handResolvedEpisode), not a new episode — no
// second trigger, no "paged again" in Slack.
func TestALaterStartAtTheHandResolveItselfIsTheSameFiring(t *testing.T) {
	e, p := handResolvableEnv(t)
	p.RetriggerInterval = 5 * time.Minute
	base := tAlert("TTFTHigh", "firing", "page")
	mustProcess(t, p, base)
	sent := e.pd.notifications()
	if len(sent) != 1 || !sent[0].Opening {
		t.Fatalf("PagerDuty got %d notifications, want the opening", len(sent))
	}
	at := webhooktest.Start.Add(10 * time.Minute)
	key := dedup.HandResolvedAtKey(e.dedup.KeyPrefix, sent[0].Incident, "pagerduty/"+p.Receivers["pagerduty"][0].Name)
	if err := e.store.Set(context.Background(), []store.Entry{{Key: key, Value: dedup.HandResolved("jdoe (U123) via Slack", at), TTL: 24 * time.Hour}}); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(20 * time.Minute)
	again := webhooktest.MkAlert("firing", base.Labels, base.Annotations, `vllm:time_to_first_token_seconds_bucket > 2`, at)
	mustProcess(t, p, again)
	if pd, sl := e.pd.notifications(), e.slack.notifications(); len(pd) != 1 || len(sl) != 1 {
		t.Fatalf("a start equal to the hand resolve: PagerDuty %d, Slack %d notifications; want the opening's alone", len(pd), len(sl))
	}
}

// A firing damping held as a ticket whose resolve is itself decided
// ticket: nothing was downgraded, so its reasons are its own — Slack's
// resolved message must not claim damping turned it into a ticket.
func TestATicketResolveOfAHeldFiringKeepsItsReasons(t *testing.T) {
	e := newEnv(t)
	p := dampingPipeline(e)
	t0 := e.clock.Now()
	var start time.Time
	step := func(min float64, status, action string) {
		t.Helper()
		e.clock.Advance(t0.Add(time.Duration(min * float64(time.Minute))).Sub(e.clock.Now()))
		if status == "firing" {
			start = e.clock.Now()
		}
		a := tAlert("TTFTHigh", status, "page")
		a.Annotations["test_action"] = action // the same alert, decided action
		a.StartsAt = start.Format(time.RFC3339Nano)
		if status == "resolved" {
			a.EndsAt = e.clock.Now().Format(time.RFC3339Nano)
		}
		mustProcess(t, p, a)
	}
	step(0, "firing", "page")
	step(1, "resolved", "page")
	step(2, "firing", "page")     // within cool_down of its page's resolve: held as a ticket
	step(3, "resolved", "ticket") // its resolve, decided ticket
	if r := slackTicketResolve(t, e); strings.Contains(strings.Join(r.Decision.Reasons, "; "), "went out as a ticket") {
		t.Errorf("the ticket resolve's reasons %q claim damping made it a ticket", r.Decision.Reasons)
	}
}
