package slack_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/alertrouter/alertrouter/internal/slacktest"
	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/notify/notifytest"
	"github.com/alertrouter/alertrouter/notify/slack"
	"github.com/alertrouter/alertrouter/routing/alert"
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

// A triage click posts with what it knows — no alerts — so a poster
// template reading .Alerts (a team's redefined __alertmanager, which the
// router follows for an unset username) fails there by design and the
// key is left out, as documented: not counted as a render failure, or
// AlertrouterTemplatesFailing would fire on every click.
func TestAClickRendersPosterTemplatesUncounted(t *testing.T) {
	e := newTriageEnv(t, alert.ActionTicket, nil)
	reg := prometheus.NewPedanticRegistry()
	cfg := slack.DefaultConfig()
	cfg.Token, cfg.Channel, cfg.APIURL, cfg.SigningSecret = token, "#triage", e.h.srv.APIURL(), signingSecret
	cfg.Actions = slack.TriageActions{Names: []string{slack.ActionEscalate}}
	cfg.Compat.Username = "{{ (index .Alerts 0).Labels.job }}-bot"
	n, err := slack.New(&cfg, "triage", notify.Deps{Metrics: notify.NewMetrics(reg), Logger: slog.New(slog.NewTextHandler(e.h.logs, nil)),
		Retry: notify.RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond, Wait: e.h.waits.Wait}})
	if err != nil {
		t.Fatal(err)
	}
	tr := e.tickingTriage(t, n, e.pager(t), e.pager(t), slack.NewTriageMetrics(prometheus.NewRegistry()))
	e.click(t, tr, e.parent, slacktest.Click{User: "U0CAROL", UserName: "carol", ActionID: "alertrouter:escalate", ActionTS: "1700001000.000001"}, signingSecret, e.now(), nil)
	if len(e.h.srv.Thread(e.parent.TS)) == 0 {
		t.Fatalf("the click posted nothing in the thread (answers %+v)", e.h.srv.Responses())
	}
	if got := notifytest.RenderFailuresByReason(t, reg); got["triage/username/error"] != 0 {
		t.Errorf("render failures = %v: a click's poster render was counted", got)
	}
}
