package routing_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/webhooktest"
	"github.com/alertrouter/alertrouter/routing"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/webhook"
)

// groupMessage is alerts decoded as one webhook of an Alertmanager group
// whose status is status and that left truncated alerts out (max_alerts).
func groupMessage(t *testing.T, status string, truncated uint64, alerts ...webhooktest.Alert) *alert.Message {
	t.Helper()
	m := webhooktest.Msg(status, alerts...)
	m.TruncatedAlerts = truncated
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := webhook.Decode(b, receivedAt)
	if err != nil {
		t.Fatal(err)
	}
	return msg
}

// processGroup sends alerts as one webhook of an Alertmanager group whose
// status is status and that left truncated alerts out (max_alerts).
func processGroup(t *testing.T, p *routing.Pipeline, status string, truncated uint64, alerts ...webhooktest.Alert) {
	t.Helper()
	if sum, err := p.Process(context.Background(), groupMessage(t, status, truncated, alerts...)); err != nil {
		t.Fatalf("Process: %v (summary %+v)", err, sum)
	}
}

// Alertmanager's max_alerts sends a group's first alerts (in its label
// order) and counts the rest in truncatedAlerts; the webhook's status
// counts them all. When the alerts the router saw resolve while the group
// still fires, alerts it never saw may fire on in their incident (and
// Alertmanager, which counts them as notified, sends them again only at
// its repeat_interval): PagerDuty's incident must not be resolved. Before,
// it was, with those alerts firing.
func TestATruncatedWebhookOfAFiringGroupClosesNoIncident(t *testing.T) {
	e := unseenEnv(t)
	s := newStandIns(t)
	p := s.replica(e)
	i1 := tAlert("TTFTHigh", "firing", "page", "instance", "i1")
	i2 := tAlert("TTFTHigh", "firing", "page", "instance", "i2")
	i3 := tAlert("TTFTHigh", "firing", "page", "instance", "i3")
	processGroup(t, p, "firing", 2, i1, i2) // i3 and i4 left out
	if got := s.pd.Triggers(ttftIncident); got != 1 {
		t.Fatalf("PagerDuty triggers = %d, want 1", got)
	}
	r1, r2 := tAlert("TTFTHigh", "resolved", "page", "instance", "i1"), tAlert("TTFTHigh", "resolved", "page", "instance", "i2")
	processGroup(t, p, "firing", 2, r1, r2)
	if got := s.pd.Resolves(ttftIncident); got != 0 {
		t.Fatalf("PagerDuty resolves = %d while alerts the webhook left out fire, want 0", got)
	}
	// At Alertmanager's repeat_interval the alerts left out arrive; they
	// join the incident PagerDuty still holds open: no second trigger.
	processGroup(t, p, "firing", 0, i3)
	if got := s.pd.Triggers(ttftIncident); got != 1 {
		t.Errorf("PagerDuty triggers = %d after the left-out alert arrived, want still 1", got)
	}
	// They resolve, the group with them: the incident resolves.
	processGroup(t, p, "resolved", 0, tAlert("TTFTHigh", "resolved", "page", "instance", "i3"))
	if got := s.pd.Resolves(ttftIncident); got != 1 {
		t.Errorf("PagerDuty resolves = %d once the whole group resolved, want 1", got)
	}
}

// Alertmanager computes a webhook's status from the alerts it sends, after
// max_alerts truncated them: a truncated webhook whose alerts all resolved
// says "resolved" while the alerts it left out may fire. Its resolves close
// no incident (before, they resolved PagerDuty while those alerts fired);
// the alerts left out, once they resolve, arrive in a webhook that is not
// truncated, and their resolves — never notified firing — close the
// incident at PagerDuty.
func TestATruncatedWebhookSayingResolvedClosesNoIncident(t *testing.T) {
	e := unseenEnv(t)
	s := newStandIns(t)
	p := s.replica(e)
	processGroup(t, p, "firing", 2, tAlert("TTFTHigh", "firing", "page", "instance", "i1"), tAlert("TTFTHigh", "firing", "page", "instance", "i2"))
	processGroup(t, p, "resolved", 2, tAlert("TTFTHigh", "resolved", "page", "instance", "i1"), tAlert("TTFTHigh", "resolved", "page", "instance", "i2"))
	if got := s.pd.Resolves(ttftIncident); got != 0 {
		t.Fatalf("PagerDuty resolves = %d while the alerts the webhook left out may fire, want 0", got)
	}
	processGroup(t, p, "resolved", 0, tAlert("TTFTHigh", "resolved", "page", "instance", "i3"), tAlert("TTFTHigh", "resolved", "page", "instance", "i4"))
	if got := s.pd.Resolves(ttftIncident); got != 1 {
		t.Errorf("PagerDuty resolves = %d once the alerts left out resolved, want 1", got)
	}
}

// The route labels Alertmanager (v0.35) rendered for the route that sent
// the webhook reach the notifications' template data, as the README says
// ({{ routeLabels "team" }}, .RouteLabels); they were left out.
func TestNotificationsCarryTheWebhooksRouteLabels(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	m := webhooktest.Msg("firing", tAlert("TTFTHigh", "firing", "page"))
	m.RouteLabels = map[string]string{"team": "inference"}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := webhook.Decode(b, receivedAt)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Process(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
	ns := e.pd.notifications()
	if len(ns) != 1 || ns[0].Data == nil || ns[0].Data.RouteLabels["team"] != "inference" {
		t.Fatalf("notifications %+v: want the route label team=inference in their data", ns)
	}
}

// A truncated webhook of a firing group carrying the late resolve of an
// earlier instance (a lagging Alertmanager peer, an old webhook retried)
// of an alert that fires again since: its Unjoin follows the Leave's rule
// and keeps the live instance, which started after that resolve ended.
// Before, it removed the alert by fingerprint, and the next resolve of
// another alert of the incident resolved PagerDuty while the live instance
// fired.
func TestATruncatedLateResolveOfAnEarlierInstanceKeepsTheLiveOne(t *testing.T) {
	e := unseenEnv(t)
	s := newStandIns(t)
	p := s.replica(e)
	first := tAlert("TTFTHigh", "firing", "page")
	b := tAlert("TTFTHigh", "firing", "page", "instance", "b")
	processGroup(t, p, "firing", 0, first, b)
	second := webhooktest.MkAlert("firing", first.Labels, first.Annotations, `vllm:time_to_first_token_seconds_bucket > 2`, webhooktest.Start.Add(2*time.Hour))
	processGroup(t, p, "firing", 0, second, b)
	if got := s.pd.Triggers(ttftIncident); got != 2 {
		t.Fatalf("PagerDuty triggers = %d, want the first instance's and the new one's", got)
	}
	processGroup(t, p, "firing", 1, tAlert("TTFTHigh", "resolved", "page")) // the first instance's resolve, ended 17 minutes after it started
	processGroup(t, p, "firing", 0, second, tAlert("TTFTHigh", "resolved", "page", "instance", "b"))
	if got := s.pd.Resolves(ttftIncident); got != 0 {
		t.Fatalf("PagerDuty resolves = %d while the live instance fires, want 0", got)
	}
	resolved := second
	resolved.Status, resolved.EndsAt = "resolved", webhooktest.Start.Add(3*time.Hour).Format(time.RFC3339Nano)
	processGroup(t, p, "resolved", 0, resolved)
	if got := s.pd.Resolves(ttftIncident); got != 1 {
		t.Errorf("PagerDuty resolves = %d once the live instance resolved, want 1", got)
	}
}

// The resolves of a truncated webhook close nothing, and the incident they
// empty stays open, possibly for good (Alertmanager, which resolved the
// alerts it left out in the same notification, never sends them): Slack's
// reply says so and what to do, so the incident left open explains itself.
// A webhook carrying its whole group says nothing of it.
func TestATruncatedWebhooksResolvesSayWhyTheIncidentStaysOpen(t *testing.T) {
	e := unseenEnv(t)
	s := newStandIns(t)
	p := s.replica(e)
	i1 := tAlert("TTFTHigh", "firing", "page", "instance", "i1")
	i2 := tAlert("TTFTHigh", "firing", "page", "instance", "i2")
	i3 := tAlert("TTFTHigh", "firing", "page", "instance", "i3")
	processGroup(t, p, "firing", 1, i1, i2)
	processGroup(t, p, "firing", 0, i3)
	processGroup(t, p, "firing", 0, tAlert("TTFTHigh", "resolved", "page", "instance", "i3"))
	processGroup(t, p, "resolved", 1, tAlert("TTFTHigh", "resolved", "page", "instance", "i1"), tAlert("TTFTHigh", "resolved", "page", "instance", "i2"))
	if got := s.pd.Resolves(ttftIncident); got != 0 {
		t.Fatalf("PagerDuty resolves = %d, want 0", got)
	}
	var held, plain int
	for _, m := range s.slack.Messages() {
		if m.ThreadTS == "" {
			continue
		}
		b := string(m.Blocks)
		switch {
		case strings.Contains(b, "max_alerts") && strings.Contains(b, "2 resolved"):
			held++
		case strings.Contains(b, "max_alerts"):
			t.Errorf("reply %s explains a truncation it does not come from", b)
		case strings.Contains(b, "1 resolved"):
			plain++
		}
	}
	if held != 1 || plain != 1 {
		t.Errorf("thread replies: %d explaining the truncated resolves (want 1), %d plain resolves (want 1)", held, plain)
	}
}
