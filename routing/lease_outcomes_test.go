package routing_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/redistest"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/store"
)

// With the store down, a truncated webhook (max_alerts) carrying only the
// resolve of a notified page closes nothing — alerts it left out may fire
// on — so it needs no store answer: it goes out at once as an update, the
// page left open. Held as a closing instead, Alertmanager retried it for the
// whole outage and on-call saw no trace of the resolve.
func TestAnOutagesTruncatedResolveGoesOutAsAnUpdate(t *testing.T) {
	e, p, f := outageEnv(t)
	mustProcess(t, p, tAlert("TTFTHigh", "firing", "page", "instance", "a"))
	f.setDown(true)
	msg := groupMessage(t, "firing", 2, tAlert("TTFTHigh", "resolved", "page", "instance", "a"))
	if sum, err := p.Process(t.Context(), msg); err != nil || sum.Failed != 0 {
		t.Fatalf("truncated resolve with the store down: %v, summary %+v; want it delivered, not held", err, sum)
	}
	sent := e.pd.notifications()
	if len(sent) != 2 {
		t.Fatalf("PagerDuty got %d notifications, want the trigger and the resolve's update", len(sent))
	}
	if last := sent[1]; last.Kind != alert.KindResolved || last.IncidentResolved {
		t.Errorf("the truncated resolve: kind %s, incident resolved %v; want an update leaving the page open", last.Kind, last.IncidentResolved)
	}
}

// The incident's state lost (its keys evicted) while its alert's marker
// survives: a webhook bringing a new alert beside the old one's reminder
// opens the incident again — once. Each batch announcing the opening drew
// two "new incident" messages (two triggers) for one incident.
func TestAReopeningWithAReminderOpensOnce(t *testing.T) {
	srv := redistest.Start(t)
	e := redisEnv(t, []string{srv.Addr()}, false)
	e.routes = pagesToBothRoutes
	p := e.pipeline()
	a := tAlert("TTFTHigh", "firing", "page", "instance", "a")
	mustProcess(t, p, a)
	for integ, s := range map[string]*sink{"pagerduty/pagerduty/0": e.pd, "slack/slack/0": e.slack} {
		state := store.IncidentKey("test:", s.notifications()[0].Incident, integ)
		for _, k := range []string{state, state + ":m"} {
			if n, err := redistest.Do(srv.Addr(), "DEL", k); err != nil || n != "1" {
				t.Fatalf("DEL %s = %s, %v: the test's idea of the incident's keys is wrong", k, n, err)
			}
		}
	}
	e.clock.Advance(e.dedup.RepeatInterval + time.Minute)
	mustProcess(t, p, a, tAlert("TTFTHigh", "firing", "page", "instance", "b"))
	for name, s := range map[string]*sink{"pagerduty": e.pd, "slack": e.slack} {
		sent := s.notifications()[1:]
		openings, reminders := 0, 0
		for _, n := range sent {
			if n.Opening {
				openings++
			}
			if n.Kind == alert.KindReminder {
				reminders++
			}
		}
		if openings != 1 || reminders != 1 {
			t.Errorf("%s: %d notifications, %d openings, %d reminders; want one opening and a reminder", name, len(sent), openings, reminders)
		}
	}
}

// The incident's members lost (its member set evicted) while its state —
// its parent — survives: the resolve closing it is drawn in the parent's
// thread as any closing, even when an earlier episode's resolve was drawn
// within the hour. Taken for a resolve of an incident the store no longer
// holds, it was suppressed, and the ticket's parent said firing for good.
func TestAClosingWhoseMembersWereLostIsStillDrawn(t *testing.T) {
	srv := redistest.Start(t)
	e := redisEnv(t, []string{srv.Addr()}, false)
	p := e.pipeline()
	var parents atomic.Int32
	p.Receivers["slack"][0].Notifier = parentSink{e.slack, &parents}
	a := tAlert("TTFTHigh", "firing", "ticket", "instance", "a")
	ra := tAlert("TTFTHigh", "resolved", "ticket", "instance", "a")
	mustProcess(t, p, a)
	mustProcess(t, p, ra) // the first episode's resolve, drawn
	e.clock.Advance(time.Minute)
	a.StartsAt = e.clock.Now().Format(time.RFC3339Nano)
	mustProcess(t, p, a) // P2
	sent := e.slack.notifications()
	state := store.IncidentKey("test:", sent[0].Incident, "slack/slack/0")
	if n, err := redistest.Do(srv.Addr(), "DEL", state+":m"); err != nil || n != "1" {
		t.Fatalf("DEL %s:m = %s, %v: the test's idea of the incident's keys is wrong", state, n, err)
	}
	ra.StartsAt = a.StartsAt
	mustProcess(t, p, ra)
	sent = e.slack.notifications()
	if len(sent) != 4 {
		t.Fatalf("Slack got %d notifications, want 4 (two openings, two resolves)", len(sent))
	}
	if last := sent[3]; !last.IncidentResolved || last.Ref != "P2" {
		t.Errorf("the second episode's resolve: incident resolved %v, ref %q; want the closing drawn under P2", last.IncidentResolved, last.Ref)
	}
}
