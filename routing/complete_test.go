package routing_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/notify/notifytest"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/webhook"
)

// A webhook Alertmanager truncated is completed before it is evaluated:
// the alert it left out (another service's page) is paged with it, the
// answer counts it, and the metric still counts what Alertmanager left out
// (raise max_alerts). When reading the group fails, the webhook is
// processed as it came, and the failure logged once per cause.
func TestATruncatedWebhookIsCompletedBeforeItIsEvaluated(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	var logs notifytest.SyncBuffer
	p.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	leftOut := tAlert("Down", "firing", "page", "service", "b", "severity", "critical")
	sent := tAlert("Down", "firing", "page", "service", "a", "severity", "critical") // the route's matcher (webhooktest.Msg's group key)
	p.CompleteTruncated = func(_ context.Context, msg *alert.Message) (int, error) {
		n, _ := webhook.Complete(msg, []webhook.LeftOut{{Fingerprint: msg.Items[0].Fingerprint, Labels: sent.Labels},
			{Fingerprint: "fp-b", Labels: leftOut.Labels, Annotations: leftOut.Annotations, StartsAt: leftOut.StartsAt}})
		return n, nil
	}
	msg := payload(t, sent)
	msg.TruncatedAlerts = 1
	sum, err := p.Process(context.Background(), msg)
	if err != nil {
		t.Fatal(err)
	}
	if got := e.pd.events(); len(got) != 2 || sum.Completed != 1 || sum.Truncated != 1 || sum.Alerts != 2 {
		t.Fatalf("PagerDuty %v, answer %+v; want both services paged, 1 completed of 1 truncated, 2 alerts", got, sum)
	}
	if !strings.Contains(logs.String(), "truncated webhook completed from Alertmanager") {
		t.Errorf("the completion is not logged:\n%s", logs.String())
	}

	p.CompleteTruncated = func(context.Context, *alert.Message) (int, error) {
		return 0, errors.New("dial tcp 127.0.0.1:9093: connect: connection refused")
	}
	for _, svc := range []string{"c", "d"} {
		msg := payload(t, tAlert("Down", "firing", "page", "service", svc))
		msg.TruncatedAlerts = 4
		if sum, err := p.Process(context.Background(), msg); err != nil || sum.Completed != 0 || sum.Truncated != 4 {
			t.Fatalf("Alertmanager down: %+v, %v; want the webhook processed as it came", sum, err)
		}
	}
	if got := e.pd.events(); len(got) != 4 {
		t.Errorf("PagerDuty %v; want c and d paged too", got)
	}
	if n := strings.Count(logs.String(), "reading the rest of a truncated webhook's group from Alertmanager failed"); n != 1 {
		t.Errorf("the failure logged %d times, want once:\n%s", n, logs.String())
	}
}

// A slow Alertmanager and a short webhook.timeout: the read of the group
// took the whole deadline and nothing paged, not even the alert the
// webhook carried (a review). The read gets a quarter of the time left;
// past it the webhook is processed as it came.
func TestASlowGroupReadLeavesTimeToDeliver(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	p.CompleteTruncated = func(ctx context.Context, _ *alert.Message) (int, error) {
		<-ctx.Done() // Alertmanager answers later than anyone waits
		return 0, ctx.Err()
	}
	msg := payload(t, tAlert("Down", "firing", "page", "service", "a", "severity", "critical"))
	msg.TruncatedAlerts = 2
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	sum, err := p.Process(ctx, msg)
	if err != nil || sum.Notified == 0 || len(e.pd.events()) != 1 {
		t.Fatalf("answer %+v, %v, PagerDuty %v; want the webhook's own page delivered", sum, err, e.pd.events())
	}
}
