package webhook_test

import (
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/webhook"
)

// A truncated webhook completed with its group as Alertmanager lists it:
// the alerts it lacks are added as firing, decoded as its own (the rule's
// title read as the summary, a start Alertmanager did not send flagged),
// the ones it carries are not added twice, and it says it is whole and
// firing.
func TestCompleteAddsTheFiringAlertsATruncatedWebhookLeftOut(t *testing.T) {
	body := `{"version":"4","status":"resolved","receiver":"router","groupKey":"{}:{alertname=\"Down\"}","truncatedAlerts":2,
		"groupLabels":{"alertname":"Down"},
		"alerts":[{"status":"resolved","labels":{"alertname":"Down","service":"a"},"startsAt":"2026-12-06T10:00:00Z","endsAt":"2026-12-06T10:05:00Z","fingerprint":"fa"}]}`
	msg, err := webhook.Decode([]byte(body), time.Date(2026, 12, 6, 10, 6, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	added := webhook.Complete(msg, []webhook.LeftOut{
		{Fingerprint: "fa", Labels: map[string]string{"alertname": "Down", "service": "a"}, StartsAt: "2026-12-06T10:00:00Z"},
		{Fingerprint: "fb", Labels: map[string]string{"alertname": "Down", "service": "b"}, Annotations: map[string]string{"title": "b is down"}, StartsAt: "2026-12-06T10:01:00Z"},
		{Labels: map[string]string{"alertname": "Down", "service": "c"}},
	})
	if added != 2 || len(msg.Items) != 3 || msg.TruncatedAlerts != 0 || msg.Status != "firing" {
		t.Fatalf("added %d, %d alerts, truncated %d, status %q; want 2 added, 3 alerts, whole and firing", added, len(msg.Items), msg.TruncatedAlerts, msg.Status)
	}
	a, b, c := msg.Items[0], msg.Items[1], msg.Items[2]
	if a.Status != "resolved" || b.Status != "firing" || c.Status != "firing" {
		t.Errorf("statuses %q %q %q; want the webhook's resolve kept, the left-out alerts firing", a.Status, b.Status, c.Status)
	}
	if b.Annotations["summary"] != "b is down" || !b.StartsAt.Equal(time.Date(2026, 12, 6, 10, 1, 0, 0, time.UTC)) {
		t.Errorf("b decoded as %+v; want its title as summary and its start", b)
	}
	if c.Fingerprint == "" || !c.HasFlag(alert.FlagFingerprint) || !c.HasFlag(alert.FlagStartsAtMissing) {
		t.Errorf("c decoded as %+v; want a computed fingerprint and a missing start flagged", c)
	}
	// Completing again adds nothing.
	if n := webhook.Complete(msg, []webhook.LeftOut{{Fingerprint: "fb", Labels: map[string]string{"alertname": "Down", "service": "b"}}}); n != 0 || len(msg.Items) != 3 {
		t.Errorf("a second Complete added %d (%d alerts)", n, len(msg.Items))
	}
}
