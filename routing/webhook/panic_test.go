package webhook_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/alertrouter/alertrouter/notify/notifytest"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/webhook"
)

// panicking is a Processor with a bug some payload triggers.
type panicking struct{}

func (panicking) Process(context.Context, *alert.Message) (*alert.Summary, error) {
	var m map[string]int
	//lint:ignore SA5000 the panic is the point of this Processor
	m["boom"]++ // assignment to entry in nil map
	return nil, nil
}

type panicRuntime struct{}

func (panicRuntime) Current() webhook.Generation {
	return webhook.Generation{Processor: panicking{}, Options: webhook.EdgeOptions{MaxBodyBytes: 1 << 20}}
}
func (panicRuntime) Ready(context.Context) error { return nil }
func (panicRuntime) Reload() error               { return nil }

// A panic while handling a webhook is answered 500 with the error body —
// Alertmanager retries a 5xx, where a dropped connection tells it and the
// on-call nothing — logged with its stack and counted, and the server goes
// on serving.
func TestAPanicWhileHandlingAWebhookIs500AndTheServerGoesOn(t *testing.T) {
	reg := prometheus.NewRegistry()
	logs := &notifytest.SyncBuffer{}
	srv := httptest.NewServer(webhook.NewServer(panicRuntime{}, reg, webhook.NewMetrics(reg), slog.New(slog.NewTextHandler(logs, nil))))
	defer srv.Close()
	body, err := os.ReadFile("../../testdata/webhook/firing.json")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		resp, err := http.Post(srv.URL+"/webhook", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatalf("webhook %d: %v (the connection dropped instead of an answer)", i, err)
		}
		var e struct{ Error string }
		decErr := json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != http.StatusInternalServerError || decErr != nil || !strings.Contains(e.Error, "internal error") {
			t.Fatalf("webhook %d: %d %+v (%v), want 500 with a JSON error", i, resp.StatusCode, e, decErr)
		}
	}
	if _, m := get(t, srv.URL+"/metrics"); !strings.Contains(string(m), `alertrouter_webhooks_total{code="500",outcome="panic"} 2`) {
		t.Fatalf("metrics lack the two panics:\n%s", m)
	}
	if l := logs.String(); !strings.Contains(l, "assignment to entry in nil map") || !strings.Contains(l, "panic_test.go") {
		t.Fatalf("log lacks the panic and its stack:\n%s", l)
	}
	if code, _ := get(t, srv.URL+"/-/healthy"); code != http.StatusOK {
		t.Fatalf("healthy after the panics: %d", code)
	}
}
