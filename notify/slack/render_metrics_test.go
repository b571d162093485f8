package slack_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/notify/notifytest"
	"github.com/alertrouter/alertrouter/notify/slack"
)

// A Slack receiver's rendered fields have their render-failure series at
// zero from the start, both reasons (AlertrouterTemplatesFailing reads
// the increase of reason="error", which a series born at 1 never shows),
// and a title that does not execute is counted as an error, not as an
// empty render.
func TestSlackRenderFailuresArePrecreatedAndCounted(t *testing.T) {
	h := newHarness(t)
	reg := prometheus.NewPedanticRegistry()
	cfg := slack.DefaultConfig()
	cfg.Token = token
	cfg.Channel = "#triage"
	cfg.APIURL = h.srv.APIURL()
	cfg.Title = "{{ .Nope.Deeper }}"
	cfg.Compat.Username = "{{ .CommonLabels.team }}-bot"
	cfg.Compat.IconEmoji = ":fire:" // literal: never rendered, no series
	n, err := slack.New(&cfg, "triage", notify.Deps{
		Metrics: notify.NewMetrics(reg),
		Logger:  slog.New(slog.NewTextHandler(h.logs, nil)),
		Retry:   notify.RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond, Wait: h.waits.Wait},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{
		"triage/text/empty": 0, "triage/text/error": 0,
		"triage/title/empty": 0, "triage/title/error": 0,
		"triage/username/empty": 0, "triage/username/error": 0,
	}
	if got := notifytest.RenderFailuresByReason(t, reg); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("series at start = %v, want %v", got, want)
	}
	if err := n.Notify(context.Background(), opening("aaa")); err != nil {
		t.Fatal(err)
	}
	if got := notifytest.RenderFailuresByReason(t, reg); got["triage/title/error"] != 1 || got["triage/title/empty"] != 0 {
		t.Errorf("render failures = %v, want triage/title/error 1", got)
	}
}
