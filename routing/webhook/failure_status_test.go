package webhook_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/alertrouter/alertrouter/internal/webhooktest"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/dedup"
	"github.com/alertrouter/alertrouter/routing/webhook"
	"github.com/alertrouter/alertrouter/store"
)

// failing is a Processor whose delivery ends in err (nil: delivered).
type failing struct{ err error }

func (p failing) Process(_ context.Context, msg *alert.Message) (*alert.Summary, error) {
	if p.err != nil {
		return &alert.Summary{Alerts: len(msg.Items), Failed: len(msg.Items), Errors: []string{p.err.Error()}}, p.err
	}
	return &alert.Summary{Alerts: len(msg.Items), Notified: len(msg.Items)}, nil
}

type failingRuntime struct {
	p    failing
	opts webhook.EdgeOptions
}

func (r failingRuntime) Current() webhook.Generation {
	return webhook.Generation{Processor: r.p, Options: r.opts}
}
func (failingRuntime) Ready(context.Context) error { return nil }
func (failingRuntime) Reload() error               { return nil }

// postFiring posts a firing webhook to an edge whose Processor ends in err,
// and returns the answer's status and the edge's /metrics.
func postFiring(t *testing.T, err error, opts webhook.EdgeOptions) (int, string) {
	t.Helper()
	reg := prometheus.NewRegistry()
	opts.MaxBodyBytes = 1 << 20
	srv := httptest.NewServer(webhook.NewServer(failingRuntime{p: failing{err: err}, opts: opts}, reg, webhook.NewMetrics(reg), slog.New(slog.DiscardHandler)))
	defer srv.Close()
	body := webhooktest.MustJSON(t, webhooktest.Msg("firing", webhooktest.TTFTAlert("firing", "gpu-a")))
	resp, postErr := http.Post(srv.URL+"/webhook", "application/json", bytes.NewReader(body))
	if postErr != nil {
		t.Fatal(postErr)
	}
	resp.Body.Close()
	_, m := get(t, srv.URL+"/metrics")
	return resp.StatusCode, string(m)
}

// The webhook's status is what Alertmanager acts on: a 2xx for a failed
// delivery counts the page notified and it is never retried (on-call is not
// paged); a 502 for a retryable failure (a throttled or down integration)
// tells the operator retrying will not help, while Alertmanager's retry is
// what delivers it. README: 503 for a retryable failure, 502 only for
// permanent ones.
func TestAFailedDeliveryIsAnswered5xxByItsKind(t *testing.T) {
	tests := []struct {
		name    string
		err     error
		want    int
		outcome string
	}{
		{"delivered", nil, http.StatusOK, "ok"},
		{"a retryable delivery failure", &alert.DeliveryError{Retryable: true, Errs: []error{errors.New("PagerDuty: HTTP 503")}}, http.StatusServiceUnavailable, "failed"},
		{"a permanent delivery failure", &alert.DeliveryError{Errs: []error{errors.New("PagerDuty: invalid routing key")}}, http.StatusBadGateway, "failed"},
		{"an error of another kind", errors.New("context deadline exceeded"), http.StatusServiceUnavailable, "failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, m := postFiring(t, tt.err, webhook.EdgeOptions{})
			if code != tt.want {
				t.Fatalf("answered %d, want %d", code, tt.want)
			}
			series := `alertrouter_webhooks_total{code="` + strconv.Itoa(tt.want) + `",outcome="` + tt.outcome + `"} 1`
			if !strings.Contains(m, series) {
				t.Fatalf("metrics lack %s:\n%s", series, m)
			}
		})
	}
}

// A webhook answered 5xx that carried a firing alert is kept for a resolve
// on Alertmanager's behalf; one answered 2xx takes its group out of the
// kept ones. Inverted, the failed webhook's delivered page would never be
// resolved (Alertmanager sends no resolve for a firing it never counted
// notified), and a delivered group would be resolved by the sweep while it
// still fires.
func TestOnlyAWebhookAnswered5xxIsKeptForItsResolve(t *testing.T) {
	ctx := context.Background()
	st := store.NewMemory()
	o := &webhook.Orphans{Store: st, Prefix: "t:", Logger: slog.New(slog.DiscardHandler)}
	kept := func() []string {
		t.Helper()
		m, err := st.Members(ctx, dedup.UnsentKey("t:"))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	if code, _ := postFiring(t, &alert.DeliveryError{Retryable: true, Errs: []error{errors.New("Slack: 503")}}, webhook.EdgeOptions{Orphans: o}); code != http.StatusServiceUnavailable || len(kept()) != 1 {
		t.Fatalf("answered %d, kept groups %v; want 503 and the webhook kept", code, kept())
	}
	o.Refresh(ctx) // as every replica does once a sweep interval
	if code, _ := postFiring(t, nil, webhook.EdgeOptions{Orphans: o}); code != http.StatusOK || len(kept()) != 0 {
		t.Fatalf("answered %d, kept groups %v; want 200 and the group forgotten", code, kept())
	}
}
