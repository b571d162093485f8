package webhook_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/alertrouter/alertrouter/internal/webhooktest"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/webhook"
)

// slowProcessor delivers after a while (a slow PagerDuty), within the
// webhook's timeout.
type slowProcessor struct{ took time.Duration }

func (p slowProcessor) Process(ctx context.Context, msg *alert.Message) (*alert.Summary, error) {
	select {
	case <-time.After(p.took):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return &alert.Summary{Alerts: len(msg.Items), Notified: len(msg.Items)}, nil
}

type slowRuntime struct{ opts webhook.EdgeOptions }

func (r slowRuntime) Current() webhook.Generation {
	return webhook.Generation{Processor: slowProcessor{took: 800 * time.Millisecond}, Options: r.opts}
}
func (slowRuntime) Ready(context.Context) error { return nil }
func (slowRuntime) Reload() error               { return nil }

// The server's timeouts are taken from webhook.timeout at start; a reload
// that raised it left the old write deadline, and a webhook delivered
// within the new timeout but after the old deadline got an empty reply
// (Alertmanager logged an error and retried), though counted as answered.
// The edge sets each webhook's deadlines from the configuration it runs
// with.
func TestAReloadedTimeoutGovernsTheAnswersDeadline(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := webhook.NewServer(slowRuntime{opts: webhook.EdgeOptions{Timeout: 3 * time.Second, MaxBodyBytes: 1 << 20}}, reg, webhook.NewMetrics(reg), slog.New(slog.DiscardHandler))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// As started with a 300ms webhook.timeout, before the reload to 3s.
	srv := &http.Server{Handler: h, ReadTimeout: 300 * time.Millisecond, WriteTimeout: 300 * time.Millisecond}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	body, err := json.Marshal(webhooktest.Msg("firing", webhooktest.MkAlert("firing", map[string]string{"alertname": "A"}, nil, "up == 0", webhooktest.Start)))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post("http://"+ln.Addr().String()+"/webhook", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("no answer (%v), want 200: delivered within the reloaded timeout", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("answer %d, want 200", resp.StatusCode)
	}
}
