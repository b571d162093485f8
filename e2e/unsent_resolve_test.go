package e2e

import (
	"strconv"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/slacktest"
)

// A page delivered to PagerDuty while its Slack mirror failed (a revoked
// token): the webhook is answered 5xx, so Alertmanager never counts the
// firing notified — and when the alerts resolve it sends no resolve. The
// page stayed open in PagerDuty for good (an audit: 192 of 300 with one
// receiver's integration throttled). With alertmanager.url set, the router
// resolves it on Alertmanager's behalf once Alertmanager no longer holds
// the alerts; two replicas, one resolve.
func TestAPageWhoseWebhookFailedElsewhereIsResolvedWhenItsAlertsResolve(t *testing.T) {
	s := newStack(t)
	amAddr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	k := faultKnobs{Retrigger: 5 * time.Minute, AlertmanagerURL: "http://" + amAddr, ResolveUnsentAfter: 2 * time.Second}
	r1, r2 := s.startFaultRouterWith(t, "router-1", k), s.startFaultRouterWith(t, "router-2", k)
	proxy := newWebhookProxy(t, r1, r2)
	revoked := make([]slacktest.Fault, 2000)
	for i := range revoked {
		revoked[i] = slacktest.Fault{Error: "invalid_auth"}
	}
	s.slack.Fail(revoked...)
	am := startFaultAM(t, "alertmanager", proxy, 0, amOptions{addr: amAddr})
	alerts := pageAlerts("a", 3)
	postAlerts(t, alerts, am)
	eventually(t, 20*time.Second, "the page", s.wantPD(1, 0))
	time.Sleep(3 * time.Second) // Alertmanager retries the webhook Slack fails
	postAlerts(t, resolved(alerts), am)
	eventually(t, 40*time.Second, "the page resolved on Alertmanager's behalf", s.wantPD(1, 1))
	consistently(t, quietWindow, "one resolve", s.wantPD(1, 1))
	t.Logf("answers %v", proxy.answered())
}
