package routing_test

import (
	"errors"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/webhooktest"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/store"
)

// A partial resolve whose Slack send failed (rate limited) had already
// left the store's incident; another webhook closed the incident, and
// Alertmanager's retry of the failed one closed it again — a second
// resolve with no parent, which Slack posts as a message of its own, on
// every retry (an audit: 97 "[RESOLVED]" messages in a channel). The retry
// resolves nothing more in Slack.
func TestARetriedPartialResolveAfterTheCloseIsNoSecondResolve(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	p.Receivers["slack"][0].Notifier = drawingSink{e.slack}
	a, b := tAlert("TTFTHigh", "firing", "ticket", "instance", "a"), tAlert("TTFTHigh", "firing", "ticket", "instance", "b")
	mustProcess(t, p, a, b)
	ar, br := tAlert("TTFTHigh", "resolved", "ticket", "instance", "a"), tAlert("TTFTHigh", "resolved", "ticket", "instance", "b")
	e.slack.setFail(func(n *alert.Notification) error {
		if !n.IncidentResolved {
			return errors.New("slack rate limit exceeded, retry after 1s")
		}
		return nil
	})
	if _, err := process(t, p, ar); err == nil {
		t.Fatal("the partial resolve's failed update answered success")
	}
	e.slack.setFail(nil)
	mustProcess(t, p, br)
	sum := mustProcess(t, p, ar) // Alertmanager's retry
	resolves := 0
	for _, n := range e.slack.notifications() {
		if n.IncidentResolved {
			resolves++
		}
	}
	if resolves != 1 || sum.Failed != 0 {
		t.Errorf("Slack got %d incident resolves, retry answered %+v; want 1 resolve and the retry answered", resolves, sum)
	}
}

// drawingSink is a sink that draws incidents in messages it keeps, as
// Slack's parents (alert.DrawsIncidents).
type drawingSink struct{ *sink }

func (drawingSink) DrawsIncidents() bool { return true }

// After the store lost an incident's state, each of its alerts' resolves
// closed it anew: Slack drew one "[RESOLVED]" message of its own per alert
// (200 for a ticket of 200 alerts), and then, suppressed, none at all — a
// ticket left drawn firing with no trace of its resolve (a review). One is
// drawn per incident; the others are not.
func TestResolvesOfAnIncidentTheStoreLostAreDrawnOnce(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	p.Receivers["slack"][0].Notifier = drawingSink{e.slack}
	var alerts []webhooktest.Alert
	for _, i := range []string{"a", "b", "c"} {
		alerts = append(alerts, tAlert("TTFTHigh", "firing", "ticket", "instance", i))
	}
	mustProcess(t, p, alerts...)
	e.clock.Advance(10 * time.Minute)
	e.store = store.NewMemory(store.WithClock(e.clock.Now)) // restarted empty
	p = e.pipeline()
	p.Receivers["slack"][0].Notifier = drawingSink{e.slack}
	for _, i := range []string{"a", "b", "c"} {
		mustProcess(t, p, tAlert("TTFTHigh", "resolved", "ticket", "instance", i))
	}
	resolves := 0
	for _, n := range e.slack.notifications() {
		if n.IncidentResolved {
			resolves++
		}
	}
	if resolves != 1 {
		t.Errorf("Slack drew %d resolves of the incident the store lost, want 1", resolves)
	}
}
