package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/alertrouter/alertrouter/config"
	"github.com/alertrouter/alertrouter/internal/pdtest"
	"github.com/alertrouter/alertrouter/internal/promtest"
	"github.com/alertrouter/alertrouter/internal/webhooktest"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/webhook"
)

// slothRules are Sloth-style recording rules for SLO api-availability
// (objective 99 %, so the error budget is 1 %); the budget left is a
// constant 37 % to keep the fixture small.
func slothRules() string {
	var b strings.Builder
	b.WriteString("groups:\n  - name: sloth-slo-sli-recordings-api-availability\n    rules:\n")
	lbl := `{sloth_id: api-availability, sloth_service: api, sloth_slo: availability}`
	for _, w := range []string{"5m", "30m", "1h", "2h", "6h"} {
		fmt.Fprintf(&b, `      - record: slo:sli_error:ratio_rate%s
        expr: sum(rate(http_requests_total{job="api",code=~"5.."}[%s])) / sum(rate(http_requests_total{job="api"}[%s]))
        labels: {sloth_id: api-availability, sloth_service: api, sloth_slo: availability, sloth_window: %s}
`, w, w, w, w)
	}
	fmt.Fprintf(&b, `      - record: slo:error_budget:ratio
        expr: vector(0.01)
        labels: %s
      - record: slo:period_error_budget_remaining:ratio
        expr: vector(0.37)
        labels: %s
`, lbl, lbl)
	return b.String()
}

// routerFor builds one generation of the router from yml (with PDURL and
// PROMURL replaced) and returns it with its metrics registry.
func routerFor(t *testing.T, yml string) (*built, *prometheus.Registry) {
	t.Helper()
	cfg, err := config.Parse([]byte(yml), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	d := newDeps(reg, slog.New(slog.DiscardHandler), io.Discard)
	return generation(t, d, cfg), reg
}

// generation builds d's generation of cfg on a store of its own.
func generation(t *testing.T, d *deps, cfg *config.Config) *built {
	t.Helper()
	st, err := d.openState(cfg.Store, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.close)
	b, err := d.build(cfg, st)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const liveConfig = `
prometheus: {url: "PROMURL", timeout: TIMEOUT}
route:
  receiver: tickets
  routes:
    - receiver: oncall
      matchers: ['decision="page"']
receivers:
  - name: oncall
    pagerduty_configs: [{routing_key: ` + pdtest.RoutingKey + `, url: "PDURL"}]
  - name: tickets
    log_configs: [{}]
`

func liveRouter(t *testing.T, promURL, timeout string, pd *pdtest.Server) (*built, *prometheus.Registry) {
	return routerFor(t, strings.NewReplacer("PROMURL", promURL, "TIMEOUT", timeout, "PDURL", pd.EnqueueURL()).Replace(liveConfig))
}

// sloPage is a webhook of one alert of the Sloth SLO api-availability
// without burn-rate values; with severity "page" its labels page.
func sloPage(t *testing.T, severity string) *alert.Message {
	t.Helper()
	labels := map[string]string{"alertname": "APIAvailabilityBurn", "sloth_id": "api-availability",
		"sloth_service": "api", "sloth_slo": "availability", "job": "api"}
	if severity != "" {
		labels["sloth_severity"] = severity
	}
	a := webhooktest.MkAlert("firing", labels, map[string]string{"summary": "API errors"}, `slo:sli_error:ratio_rate1h > 0.144`, time.Now().Add(-10*time.Minute))
	body, err := json.Marshal(webhooktest.Msg("firing", a))
	if err != nil {
		t.Fatal(err)
	}
	m, err := webhook.Decode(body, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func lookups(t *testing.T, reg *prometheus.Registry, result string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "alertrouter_slolive_lookups_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			if m.GetLabel()[0].GetValue() == result {
				return m.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("alertrouter_slolive_lookups_total{result=%q} not found", result)
	return 0
}

// liveSLODetails returns custom_details.live_slo of the only event pd got.
func liveSLODetails(t *testing.T, pd *pdtest.Server) (map[string]string, string) {
	t.Helper()
	evs := pd.Events()
	if len(evs) != 1 {
		t.Fatalf("pagerduty events = %d, want 1", len(evs))
	}
	var ev struct {
		Payload struct {
			CustomDetails struct {
				LiveSLO  map[string]string `json:"live_slo"`
				Decision struct {
					Action  string   `json:"action"`
					Policy  string   `json:"policy"`
					Reasons []string `json:"reasons"`
				} `json:"decision"`
			} `json:"custom_details"`
		} `json:"payload"`
	}
	if err := json.Unmarshal(evs[0].Raw, &ev); err != nil {
		t.Fatal(err)
	}
	d := ev.Payload.CustomDetails
	return d.LiveSLO, d.Decision.Action + " " + d.Decision.Policy + ": " + strings.Join(d.Decision.Reasons, "; ")
}

// TestLiveSLOThroughTheRouter runs the router's pipeline, built from a
// config with a prometheus section, against a real Prometheus evaluating
// Sloth-style rules over backfilled traffic (10 requests/s, 20 % errors:
// burn 20× over every window).
func TestLiveSLOThroughTheRouter(t *testing.T) {
	end := time.Now().Truncate(30 * time.Second)
	series := promtest.OpenMetrics(end.Add(-2*time.Hour-15*time.Minute), end, 30*time.Second,
		promtest.Counter{Name: "http_requests_total", Labels: map[string]string{"job": "api", "code": "500"}, Rate: func(time.Time) float64 { return 2 }},
		promtest.Counter{Name: "http_requests_total", Labels: map[string]string{"job": "api", "code": "200"}, Rate: func(time.Time) float64 { return 8 }},
	)
	s := promtest.Start(t, promtest.Options{Series: series, Rules: slothRules()})
	s.WaitValue(t, `slo:sli_error:ratio_rate6h{sloth_id="api-availability"}`)
	s.WaitValue(t, `slo:period_error_budget_remaining:ratio{sloth_id="api-availability"}`)

	t.Run("an SLO alert without burn rates pages on the live ones", func(t *testing.T) {
		pd := pdtest.NewServer()
		defer pd.Close()
		b, reg := liveRouter(t, s.URL(), "5s", pd) // generous: the machine is shared
		sum, err := b.pipeline.Process(context.Background(), sloPage(t, ""))
		if err != nil {
			t.Fatalf("Process: %v (%+v)", err, sum)
		}
		live, decision := liveSLODetails(t, pd)
		if want := `^budget 37 % left · burn 1h (19\.9|20\.0|20\.1)× · 6h (19\.9|20\.0|20\.1)×`; !regexp.MustCompile(want).MatchString(live["summary"]) {
			t.Errorf("live_slo.summary = %q, want %s", live["summary"], want)
		}
		t.Logf("live_slo.summary = %q; decision %q", live["summary"], decision)
		if live["source"] != "sloth" || live["budget_remaining"] != "0.37" {
			t.Errorf("live_slo = %v", live)
		}
		if !strings.HasPrefix(decision, "page burn-rate: ") || !strings.Contains(decision, "live from Prometheus") {
			t.Errorf("decision = %q, want a burn-rate page decided live from Prometheus", decision)
		}
		if n := lookups(t, reg, "ok"); n != 1 {
			t.Errorf("lookups ok = %v, want 1", n)
		}
	})

	t.Run("prometheus slow: the label decision, delivered, the lookup timed out", func(t *testing.T) {
		release := make(chan struct{})
		slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			case <-time.After(2 * time.Second):
			}
		}))
		defer slow.Close()
		defer close(release)
		pd := pdtest.NewServer()
		defer pd.Close()
		b, reg := liveRouter(t, slow.URL, "100ms", pd)
		if sum, err := b.pipeline.Process(context.Background(), sloPage(t, "page")); err != nil {
			t.Fatalf("Process: %v (%+v)", err, sum)
		}
		live, decision := liveSLODetails(t, pd)
		if live["unavailable"] != "Prometheus timed out" || !strings.HasPrefix(decision, "page sloth: ") {
			t.Errorf("live_slo = %v, decision %q; want the label page saying the live context timed out", live, decision)
		}
		if n := lookups(t, reg, "timeout"); n != 1 {
			t.Errorf("lookups timeout = %v, want 1", n)
		}
	})

	t.Run("prometheus down: the label decision, delivered", func(t *testing.T) {
		s.Kill()
		pd := pdtest.NewServer()
		defer pd.Close()
		b, reg := liveRouter(t, s.URL(), "5s", pd)
		if sum, err := b.pipeline.Process(context.Background(), sloPage(t, "page")); err != nil {
			t.Fatalf("Process: %v (%+v)", err, sum)
		}
		live, decision := liveSLODetails(t, pd)
		if live["unavailable"] != "Prometheus unreachable" || !strings.HasPrefix(decision, "page sloth: ") {
			t.Errorf("live_slo = %v, decision %q; want the label page saying Prometheus is unreachable", live, decision)
		}
		if n := lookups(t, reg, "error"); n != 1 {
			t.Errorf("lookups error = %v, want 1", n)
		}
	})
}

// TestLiveClientIsBuiltOncePerPrometheusSection: a reload with the same
// prometheus section keeps the client (its cache and breaker); a changed
// one builds a new client whose metrics replace the old one's.
func TestLiveClientIsBuiltOncePerPrometheusSection(t *testing.T) {
	reg := prometheus.NewRegistry()
	d := newDeps(reg, slog.New(slog.DiscardHandler), io.Discard)
	load := func(url string) *config.Config {
		cfg, err := config.Parse([]byte("prometheus: {url: \""+url+"\"}\nroute: {receiver: log}\nreceivers: [{name: log, log_configs: [{}]}]\n"), t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	if _, err := d.liveLookup(load("http://prometheus-a:9090")); err != nil {
		t.Fatal(err)
	}
	first := d.live.client
	if _, err := d.liveLookup(load("http://prometheus-a:9090")); err != nil || d.live.client != first {
		t.Fatalf("same section: err %v, client rebuilt %v", err, d.live.client != first)
	}
	if _, err := d.liveLookup(load("http://prometheus-b:9090")); err != nil || d.live.client == first {
		t.Fatalf("changed section: err %v, client kept %v", err, d.live.client == first)
	}
	if l, err := d.liveLookup(config.LoadDefault()); l != nil || err != nil {
		t.Errorf("no prometheus section: lookup %v, err %v; want none", l, err)
	}
	if _, err := reg.Gather(); err != nil {
		t.Errorf("gather after the replacement: %v", err)
	}
}
