package routing_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/routing"
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
	pd := p.Receivers["pagerduty"][0]
	pd.Notifier = silentSink{e.pd} // PagerDuty: the incident Slack's card names
	p.Receivers["pagerduty"] = []routing.Integration{pd}
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
	// Paged: the card keeps its PagerDuty line — the resolve's own routes,
	// decided ticket, reach no PagerDuty, the webhook's resolve there does
	// (a review).
	if last.Kind != alert.KindResolved || last.ShownAction() != alert.ActionPage || !last.Paged {
		t.Fatalf("Slack's resolve: kind %s, shown %s (notified tier %q), paged %v; want it drawn as the page it was", last.Kind, last.ShownAction(), last.NotifiedTier, last.Paged)
	}
	if last.Action != alert.ActionTicket || last.Results[0].Decision.Action != alert.ActionTicket {
		t.Errorf("the resolve's own action %s, decision %s; want them kept (ticket): what is sent where follows them", last.Action, last.Results[0].Decision.Action)
	}
}

// noMirror is Slack with mirror_pages off: it posts nothing for a page.
type noMirror struct{ *sink }

func (m noMirror) Notify(ctx context.Context, n *alert.Notification) error {
	if n.Action == alert.ActionPage {
		return nil
	}
	return m.sink.Notify(ctx, n)
}

// A ticket that escalated to a page (Slack with mirror_pages off posts the
// page nowhere, its marker says page) and resolved as a ticket again: its
// resolve must reach the ticket's card. Taking the notified tier for the
// resolve's action made it a page, which Slack dropped, and the ticket
// stayed firing (a review). The tier is what the card shows, nothing more.
func TestAnEscalatedTicketsResolveReachesItsCard(t *testing.T) {
	e := newEnv(t)
	e.routes = pageToBothRoutes
	p := e.pipeline()
	integ := p.Receivers["slack"][0]
	integ.Notifier = noMirror{e.slack}
	p.Receivers["slack"] = []routing.Integration{integ}
	fireAgainAndResolve(t, e, p, "GPUCapacityHigh", "ticket", "page")
	sl := e.slack.notifications()
	if len(sl) == 0 || sl[len(sl)-1].Kind != alert.KindResolved {
		var kinds []alert.Kind
		for _, n := range sl {
			kinds = append(kinds, n.Kind)
		}
		t.Fatalf("Slack got %v; want the ticket's resolve last", kinds)
	}
}

// A page re-decided ticket while it fired (its marker then says ticket)
// and resolving decided page again: the card said page at the session's
// start, and the notified tier alone made it ticket (a review). The card
// says the louder of the two.
func TestAPageDeEscalatedWhileFiringResolvesAsAPage(t *testing.T) {
	e := newEnv(t)
	e.routes = pageToBothRoutes
	p := e.pipeline()
	fireAgainAndResolve(t, e, p, "KVCacheFull", "page", "ticket")
	sl := e.slack.notifications()
	if last := sl[len(sl)-1]; last.Kind != alert.KindResolved || last.ShownAction() != alert.ActionPage {
		t.Fatalf("Slack's resolve: kind %s, shown %s (action %s, notified tier %q); want page", last.Kind, last.ShownAction(), last.Action, last.NotifiedTier)
	}
}

// fireAgainAndResolve fires alert name decided first, a minute later fires
// it again decided again (the annotation that overrides its label), and
// ten minutes later resolves it decided first.
func fireAgainAndResolve(t *testing.T, e *env, p *routing.Pipeline, name, first, again string) {
	t.Helper()
	mustProcess(t, p, tAlert(name, "firing", first))
	e.clock.Advance(time.Minute)
	refired := tAlert(name, "firing", first)
	refired.Annotations["test_action"] = again
	mustProcess(t, p, refired)
	e.clock.Advance(10 * time.Minute)
	resolved := tAlert(name, "resolved", first)
	resolved.EndsAt = e.clock.Now().Format(time.RFC3339Nano)
	mustProcess(t, p, resolved)
}
