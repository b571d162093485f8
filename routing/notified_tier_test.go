package routing_test

import (
	"slices"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// A resolve is decided again from its own labels and annotations: a
// capacity page resolving at a lower utilization than it paged at (85 %
// where it paged at 95 %: Alertmanager sends no new notification for an
// annotation's change) read ticket, and the incident's Slack card — redrawn
// on the resolve — said ticket and lost its PagerDuty line (a review). The
// resolve's notification carries the tier its firing was notified with at
// each integration, and its action is that one.
func TestAResolveIsDrawnAsItsFiringWasNotified(t *testing.T) {
	e := newEnv(t)
	e.routes = pageToBothRoutes
	p := e.pipeline()
	mustProcess(t, p, tAlert("KVCacheFull", "firing", "page"))
	e.clock.Advance(10 * time.Minute)
	resolved := tAlert("KVCacheFull", "resolved", "page")
	resolved.Annotations["test_action"] = "ticket" // decided again: ticket
	resolved.EndsAt = e.clock.Now().Format(time.RFC3339Nano)
	mustProcess(t, p, resolved)
	if got := e.pd.events(); !slices.Contains(got, "resolve "+e.pd.notifications()[0].Incident) {
		t.Fatalf("PagerDuty %v; want the page resolved", got)
	}
	sl := e.slack.notifications()
	last := sl[len(sl)-1]
	if last.Kind != alert.KindResolved || last.Action != alert.ActionPage || last.NotifiedTier == "" || tierOf(last.NotifiedTier) != "page" {
		t.Fatalf("Slack's resolve: kind %s, action %s, notified tier %q; want the resolve drawn as the page it was", last.Kind, last.Action, last.NotifiedTier)
	}
	if last.Results[0].Decision.Action != alert.ActionTicket {
		t.Errorf("the resolve's own decision = %s; want it kept (ticket)", last.Results[0].Decision.Action)
	}
}

func tierOf(tier string) string {
	for i := range tier {
		if tier[i] == ':' {
			return tier[:i]
		}
	}
	return tier
}
