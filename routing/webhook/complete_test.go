package webhook_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/webhook"
)

// truncated decodes a webhook of route {}/{team="a"} and group
// {alertname="Down"} that Alertmanager truncated, carrying alerts.
func truncated(t *testing.T, alerts string) *alert.Message {
	t.Helper()
	body := `{"version":"4","status":"firing","receiver":"router","groupKey":"{}/{team=\"a\"}:{alertname=\"Down\"}","truncatedAlerts":2,
		"groupLabels":{"alertname":"Down"},"alerts":[` + alerts + `]}`
	msg, err := webhook.Decode([]byte(body), time.Date(2026, 12, 6, 10, 6, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	return msg
}

func down(svc, team string) map[string]string {
	return map[string]string{"alertname": "Down", "service": svc, "team": team}
}

// A truncated webhook completed with its group as Alertmanager lists it:
// the alerts it lacks are added as firing, decoded as its own (the rule's
// title read as the summary, a start Alertmanager did not send flagged),
// the ones it carries are not added twice, and it says it is whole and
// firing. Alerts of another route's group with the same receiver and
// labels (team b's, muted there by a time interval) are not its own (a
// review: they were paged).
func TestCompleteAddsTheFiringAlertsATruncatedWebhookLeftOut(t *testing.T) {
	msg := truncated(t, `{"status":"resolved","labels":{"alertname":"Down","service":"a","team":"a"},"startsAt":"2026-12-06T10:00:00Z","endsAt":"2026-12-06T10:05:00Z","fingerprint":"fa"},
		{"status":"firing","labels":{"alertname":"Down","service":"x","team":"a"},"startsAt":"2026-12-06T10:00:00Z","fingerprint":"fx"}`)
	listing := []webhook.LeftOut{
		{Fingerprint: "fx", Labels: down("x", "a"), StartsAt: "2026-12-06T10:00:00Z"},
		{Fingerprint: "fb", Labels: down("b", "a"), Annotations: map[string]string{"title": "b is down"}, StartsAt: "2026-12-06T10:01:00Z"},
		{Fingerprint: "fc", Labels: down("c", "a")},
		{Fingerprint: "fm", Labels: down("m", "b")},
	}
	added, ok := webhook.Complete(msg, listing)
	if !ok || added != 2 || len(msg.Items) != 4 || msg.TruncatedAlerts != 0 || msg.Status != "firing" {
		t.Fatalf("completed %v, added %d, %d alerts, truncated %d, status %q; want 2 added, 4 alerts, whole and firing", ok, added, len(msg.Items), msg.TruncatedAlerts, msg.Status)
	}
	b, c := msg.Items[2], msg.Items[3]
	if msg.Items[0].Status != "resolved" || b.Status != "firing" || c.Status != "firing" || b.Labels["team"] != "a" || c.Labels["team"] != "a" {
		t.Errorf("alerts %+v; want the webhook's resolve kept, team a's left-out alerts firing, team b's not added", msg.Items)
	}
	if b.Annotations["summary"] != "b is down" || !b.StartsAt.Equal(time.Date(2026, 12, 6, 10, 1, 0, 0, time.UTC)) {
		t.Errorf("b decoded as %+v; want its title as summary and its start", b)
	}
	if c.Fingerprint != "fc" || !c.HasFlag(alert.FlagStartsAtMissing) {
		t.Errorf("c decoded as %+v; want its fingerprint and a missing start flagged", c)
	}
	if n, ok := webhook.Complete(msg, listing); !ok || n != 0 || len(msg.Items) != 4 {
		t.Errorf("a second Complete added %d (%d alerts)", n, len(msg.Items))
	}
}

// A listing that does not hold the webhook's firing alerts is not of its
// group (alertmanager.url naming another Alertmanager that holds a group
// of the same receiver and labels: a review saw its alerts paged): the
// webhook is left as it came. A webhook whose alerts all resolved, its
// group listed empty, is whole: nothing it left out fires. A group key not
// Alertmanager's is not completed.
func TestCompleteLeavesAWebhookItsListingDoesNotHold(t *testing.T) {
	msg := truncated(t, `{"status":"firing","labels":{"alertname":"Down","service":"y","team":"a"},"startsAt":"2026-12-06T10:00:00Z","fingerprint":"fy"}`)
	if n, ok := webhook.Complete(msg, []webhook.LeftOut{{Fingerprint: "fz", Labels: down("z", "a")}}); ok || n != 0 || len(msg.Items) != 1 || msg.TruncatedAlerts != 2 {
		t.Errorf("another Alertmanager's listing: completed %v, added %d, %d alerts, truncated %d; want the webhook as it came", ok, n, len(msg.Items), msg.TruncatedAlerts)
	}
	resolved := truncated(t, `{"status":"resolved","labels":{"alertname":"Down","service":"y","team":"a"},"startsAt":"2026-12-06T10:00:00Z","endsAt":"2026-12-06T10:05:00Z","fingerprint":"fy"}`)
	if n, ok := webhook.Complete(resolved, nil); !ok || n != 0 || resolved.TruncatedAlerts != 0 {
		t.Errorf("all resolved, nothing listed: completed %v, added %d, truncated %d; want it whole", ok, n, resolved.TruncatedAlerts)
	}
	foreign := truncated(t, `{"status":"resolved","labels":{"alertname":"Down","team":"a"},"fingerprint":"f1"}`)
	foreign.GroupKey = "grafana-group-7"
	if _, ok := webhook.Complete(foreign, nil); ok || foreign.TruncatedAlerts != 2 {
		t.Errorf("a group key not Alertmanager's was completed")
	}
}

// Alertmanager 0.28 and later write a route's matchers on UTF-8 label
// names into the groupKey as its UTF-8 parser reads them — dotted names
// bare, others quoted: the classic parser refused them, so a truncated
// webhook of such a route was never completed and the alerts it left out
// paged only at Alertmanager's next repeat (an audit, Alertmanager v0.35).
func TestCompleteReadsRoutesMatchingOnUTF8LabelNames(t *testing.T) {
	for _, route := range []string{`{k8s.namespace.name="shop"}`, `{"my label"="shop"}`, `{"service.name"=~"shop|cart"}`} {
		body := `{"version":"4","status":"firing","receiver":"router","groupKey":` + jsonString(`{}/`+route+`:{alertname="Down"}`) + `,"truncatedAlerts":1,
			"groupLabels":{"alertname":"Down"},"alerts":[{"status":"firing","labels":{"alertname":"Down","k8s.namespace.name":"shop","my label":"shop","service.name":"shop"},"startsAt":"2026-12-06T10:00:00Z","fingerprint":"f1"}]}`
		msg, err := webhook.Decode([]byte(body), time.Date(2026, 12, 6, 10, 6, 0, 0, time.UTC))
		if err != nil {
			t.Fatal(err)
		}
		own := map[string]string{"alertname": "Down", "k8s.namespace.name": "shop", "my label": "shop", "service.name": "shop", "pod": "p2"}
		other := map[string]string{"alertname": "Down", "k8s.namespace.name": "bank", "my label": "bank", "service.name": "bank", "pod": "p3"}
		n, ok := webhook.Complete(msg, []webhook.LeftOut{
			{Fingerprint: "f1", Labels: map[string]string{"alertname": "Down", "k8s.namespace.name": "shop", "my label": "shop", "service.name": "shop"}},
			{Fingerprint: "f2", Labels: own},
			{Fingerprint: "f3", Labels: other},
		})
		if !ok || n != 1 || len(msg.Items) != 2 || msg.Items[1].Fingerprint != "f2" {
			t.Errorf("route %s: completed %v, added %d, %d alerts; want the route's left-out alert added, the other route's not", route, ok, n, len(msg.Items))
		}
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
