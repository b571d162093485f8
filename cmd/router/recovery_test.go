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
	"github.com/alertrouter/alertrouter/internal/redistest"
	"github.com/alertrouter/alertrouter/internal/slacktest"
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

// A reload builds a new pipeline: during a store outage it forgot the
// incidents' Slack parents the router remembers for one, and every open
// incident's next alert posted a second parent, the first left drawn as it
// was (an audit reloading under load). What a pipeline remembers is the
// process's, kept across generations.
func TestAReloadDuringAStoreOutageKeepsTheIncidentsParents(t *testing.T) {
	sl := slacktest.NewServer("xoxb-test", "alerts")
	defer sl.Close()
	srv := redistest.Start(t)
	cfg, err := config.Parse([]byte(`
store: {redis: {addrs: [`+srv.Addr()+`], read_timeout: 200ms, max_retries: -1}}
route: {receiver: triage}
receivers:
  - name: triage
    slack_configs: [{api_url: "`+sl.APIURL()+`", token: xoxb-test, channel: "#alerts"}]
`), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	d := newDeps(prometheus.NewRegistry(), slog.New(slog.DiscardHandler), io.Discard)
	ticket := func(b *built, instance string) {
		t.Helper()
		msg, err := webhook.Decode([]byte(`{"version":"4","status":"firing","receiver":"r","alerts":[{"status":"firing","labels":{"alertname":"QueueBacklog","severity":"warning","service":"shop","instance":"`+instance+`"},"startsAt":"2026-12-01T10:00:00Z"}]}`), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.pipeline.Process(context.Background(), msg); err != nil {
			t.Fatalf("ticket of %s: %v", instance, err)
		}
	}
	ticket(generation(t, d, cfg), "a")
	if n := len(sl.Parents()); n != 1 {
		t.Fatalf("%d parents after the incident opened, want 1", n)
	}
	srv.Kill()
	ticket(generation(t, d, cfg), "b") // reloaded while Redis is down: fail open
	if ps := sl.Parents(); len(ps) != 1 || len(sl.Thread(ps[0].TS)) != 1 {
		t.Errorf("a new alert after a reload during the outage: %d parents (want 1), the update not in the first parent's thread", len(ps))
	}
}
