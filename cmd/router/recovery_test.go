package main

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/alertrouter/alertrouter/config"
	"github.com/alertrouter/alertrouter/internal/pdtest"
	"github.com/alertrouter/alertrouter/notify/notifytest"
	"github.com/alertrouter/alertrouter/routing/webhook"
)

// A failing integration is often fixed by a reload (a rotated routing key
// or token): each reload builds a new pipeline, and the recovery of the
// integration the old one saw failing was never logged (a review). The
// runs of failures are the process's, kept across generations.
func TestARecoveryAfterAReloadIsLogged(t *testing.T) {
	pd := pdtest.NewServer()
	defer pd.Close()
	cfg, err := config.Parse([]byte(`
route: {receiver: oncall}
receivers:
  - name: oncall
    pagerduty_configs: [{routing_key: `+pdtest.RoutingKey+`, url: "`+pd.EnqueueURL()+`"}]
`), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var logs notifytest.SyncBuffer
	d := newDeps(prometheus.NewRegistry(), slog.New(slog.NewTextHandler(&logs, nil)), io.Discard)
	now := time.Now()
	page := func(b *built, alertname string) error {
		t.Helper()
		msg, err := webhook.Decode([]byte(`{"version":"4","status":"firing","receiver":"r","alerts":[{"status":"firing","labels":{"alertname":"`+alertname+`","severity":"critical"},"startsAt":"2026-12-01T10:00:00Z"}]}`), now)
		if err != nil {
			t.Fatal(err)
		}
		_, err = b.pipeline.Process(context.Background(), msg)
		return err
	}
	old := generation(t, d, cfg)
	old.pipeline.Now = func() time.Time { return now }
	pd.FailN(2, pdtest.Fault{Status: 400}) // the event, and the minimal event sent after a 400
	if err := page(old, "Down"); err == nil {
		t.Fatal("answered success while PagerDuty refused the event")
	}
	reloaded := generation(t, d, cfg)
	reloaded.pipeline.Now = func() time.Time { return now.Add(time.Minute) }
	if err := page(reloaded, "Up"); err != nil {
		t.Fatalf("after the reload: %v", err)
	}
	if out := logs.String(); !strings.Contains(out, `msg="integration delivers again" receiver=oncall integration=pagerduty/0 failed_notifications=1`) {
		t.Errorf("the recovery seen by the reloaded pipeline is not logged:\n%s", out)
	}
}
