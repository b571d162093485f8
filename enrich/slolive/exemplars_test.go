package slolive

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/promtest"
)

// histogramTarget serves an OpenMetrics latency histogram with an exemplar
// on every bucket; each scrape adds 100 requests, 5 of them slower than
// 0.5 s.
func histogramTarget(t *testing.T) string {
	var scrapes atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := scrapes.Add(1)
		w.Header().Set("Content-Type", "application/openmetrics-text; version=1.0.0; charset=utf-8")
		var b strings.Builder
		b.WriteString("# TYPE http_request_duration_seconds histogram\n")
		for _, bk := range []struct {
			le, trace string
			per       int64
			ex        float64
		}{
			{"0.1", "0af7651916cd43dd8448eb211c80319c", 90, 0.05},
			{"0.5", "4bf92f3577b34da6a3ce929d0e0e4736", 95, 0.31},
			{"2.5", "b7ad6b7169203331b7ad6b7169203331", 99, 2.1},
			{"+Inf", "00f067aa0ba902b700f067aa0ba902b7", 100, 4.2},
		} {
			fmt.Fprintf(&b, "http_request_duration_seconds_bucket{job=\"api\",le=%q} %d # {trace_id=%q} %g\n", bk.le, n*bk.per, bk.trace, bk.ex)
		}
		fmt.Fprintf(&b, "http_request_duration_seconds_sum{job=\"api\"} %g\n", float64(n)*30)
		fmt.Fprintf(&b, "http_request_duration_seconds_count{job=\"api\"} %d\n# EOF\n", n*100)
		_, _ = w.Write([]byte(b.String()))
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// TestExemplarsOfAPyrraLatencySLO lets a real Prometheus with exemplar
// storage scrape a histogram with exemplars (a backfill does not carry
// exemplars), evaluate a Pyrra-style latency burnrate rule over it, and
// reads the traces of the slowest requests into the burn-exemplars hint.
func TestExemplarsOfAPyrraLatencySLO(t *testing.T) {
	s := promtest.Start(t, promtest.Options{
		Features:      []string{"exemplar-storage"},
		ScrapeTargets: []string{histogramTarget(t)},
		Rules: `
groups:
  - name: api-latency
    rules:
      - record: http_request_duration_seconds:burnrate5m
        expr: 1 - sum(rate(http_request_duration_seconds_bucket{job="api",le="0.5"}[5m])) / sum(rate(http_request_duration_seconds_count{job="api"}[5m]))
        labels: {slo: api-latency, job: api}
      - record: pyrra_objective
        expr: vector(0.95)
        labels: {slo: api-latency}
`,
	})
	s.WaitValue(t, `http_request_duration_seconds:burnrate5m{slo="api-latency"}`)
	cfg := config(s.URL())
	cfg.CacheTTL = 0
	cfg.TraceURLTemplate = "https://traces.example/trace/{{.TraceID}}"
	c := newClient(t, cfg, Options{})
	a := pyrraAlert("api-latency")
	a.StartsAt = time.Now().Add(-10 * time.Minute)

	var lc *Context
	deadline := time.Now().Add(30 * time.Second)
	for {
		var err error
		lc, err = c.Lookup(context.Background(), a)
		if err == nil && len(lc.Exemplars) == 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no exemplars after 30s: %+v, %v", lc, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// 5 % of requests slower than 0.5 s against a 5 % budget: burn 1.
	within1(t, "burn 5m", mustBurn(lc, 5*time.Minute), 1)
	want := []string{"00f067aa0ba902b700f067aa0ba902b7", "b7ad6b7169203331b7ad6b7169203331",
		"4bf92f3577b34da6a3ce929d0e0e4736", "0af7651916cd43dd8448eb211c80319c"}
	for i, e := range lc.Exemplars {
		if e.TraceID != want[i] {
			t.Errorf("exemplar %d: trace %s, want %s (slowest first)", i, e.TraceID, want[i])
		}
		if e.URL != "https://traces.example/trace/"+want[i] {
			t.Errorf("exemplar %d: link %q", i, e.URL)
		}
	}
	h, ok := lc.ExemplarHint()
	if !ok || h.ID != "burn-exemplars" || !strings.Contains(h.Text, "00f067aa0ba902b700f067aa0ba902b7 (4.2) https://traces.example/trace/00f067aa0ba902b700f067aa0ba902b7") {
		t.Errorf("hint %+v", h)
	}
}
