package slolive

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/model"

	"github.com/alertrouter/alertrouter/internal/promtest"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// The generated traffic: 10 requests/s throughout; errors at 0.1 % until
// 6h before the end, 3 % until 45m before the end, 15 % in the last 45m.
// The SLO objective is 99 % (error budget 1 %), its period 7d.
const (
	totalRate = 10.0
	objective = 0.99
	step      = 30 * time.Second
)

func errorRate(end time.Time) func(time.Time) float64 {
	return func(t time.Time) float64 {
		switch {
		case t.Before(end.Add(-6 * time.Hour)):
			return 0.001 * totalRate
		case t.Before(end.Add(-45 * time.Minute)):
			return 0.03 * totalRate
		}
		return 0.15 * totalRate
	}
}

// handBurn computes the burn rate over window w at time at by integrating
// the generated rates second by second over [at-w, at], which has data up
// to end: errors ÷ requests ÷ error budget.
func handBurn(end, at time.Time, w time.Duration) float64 {
	rate := errorRate(end)
	var errs, total float64
	stop := end
	if at.Before(end) {
		stop = at
	}
	for t := at.Add(-w); t.Before(stop); t = t.Add(time.Second) {
		errs += rate(t)
		total += totalRate
	}
	return errs / total / (1 - objective)
}

var testWindows = []string{"5m", "30m", "1h", "2h", "6h", "1d", "3d"}

// slothRules are recording rules named and labelled as Sloth generates
// them (the period ratio computed directly rather than from 5m averages,
// since Prometheus evaluates them only from its start).
func slothRules() string {
	var b strings.Builder
	b.WriteString("groups:\n  - name: sloth-slo-sli-recordings-api-availability\n    rules:\n")
	lbl := `{sloth_id: api-availability, sloth_service: api, sloth_slo: availability, sloth_window: %s}`
	for _, w := range append(testWindows, "7d") {
		fmt.Fprintf(&b, `      - record: slo:sli_error:ratio_rate%s
        expr: sum(rate(http_requests_total{job="api",code=~"5.."}[%s])) / sum(rate(http_requests_total{job="api"}[%s]))
        labels: `+lbl+"\n", w, w, w, w)
	}
	meta := `{sloth_id: api-availability, sloth_service: api, sloth_slo: availability}`
	fmt.Fprintf(&b, `      - record: slo:objective:ratio
        expr: vector(%g)
        labels: %s
      - record: slo:error_budget:ratio
        expr: vector(1 - %g)
        labels: %s
      - record: slo:period_burn_rate:ratio
        expr: slo:sli_error:ratio_rate7d{sloth_id="api-availability"} / on(sloth_id, sloth_slo, sloth_service) group_left slo:error_budget:ratio{sloth_id="api-availability"}
      - record: slo:period_error_budget_remaining:ratio
        expr: 1 - slo:period_burn_rate:ratio{sloth_id="api-availability"}
`, objective, meta, objective, meta)
	return b.String()
}

// pyrraRules are recording rules named and labelled as Pyrra generates
// them for a ratio SLO over http_requests_total (windows of a 28d SLO).
func pyrraRules() string {
	var b strings.Builder
	b.WriteString("  - name: api-errors\n    rules:\n")
	for _, w := range []string{"5m", "30m", "1h", "2h", "6h", "1d", "4d"} {
		fmt.Fprintf(&b, `      - record: http_requests:burnrate%s
        expr: sum(rate(http_requests_total{job="api",code=~"5.."}[%s])) / sum(rate(http_requests_total{job="api"}[%s]))
        labels: {slo: api-errors, job: api}
`, w, w, w)
	}
	fmt.Fprintf(&b, `  - name: api-errors-generic
    rules:
      - record: http_requests:increase7d
        expr: sum by (code) (increase(http_requests_total{job="api"}[7d]))
        labels: {slo: api-errors, job: api}
      - record: pyrra_objective
        expr: vector(%g)
        labels: {slo: api-errors}
      - record: pyrra_availability
        expr: 1 - sum(http_requests:increase7d{slo="api-errors",code=~"5.."}) / sum(http_requests:increase7d{slo="api-errors"})
        labels: {slo: api-errors}
`, objective)
	return b.String()
}

// startSLOPrometheus backfills 7 days and 15 minutes of traffic ending now
// and starts Prometheus with Sloth- and Pyrra-style rules; it returns when
// every rule has a value.
func startSLOPrometheus(t *testing.T) (*promtest.Server, time.Time) {
	t.Helper()
	end := time.Now().Truncate(step)
	from := end.Add(-7*24*time.Hour - 15*time.Minute)
	er := errorRate(end)
	series := promtest.OpenMetrics(from, end, step,
		promtest.Counter{Name: "http_requests_total", Labels: map[string]string{"job": "api", "code": "500"}, Rate: er},
		promtest.Counter{Name: "http_requests_total", Labels: map[string]string{"job": "api", "code": "200"},
			Rate: func(t time.Time) float64 { return totalRate - er(t) }},
	)
	s := promtest.Start(t, promtest.Options{Series: series, Rules: slothRules() + pyrraRules()})
	s.WaitValue(t, `slo:period_error_budget_remaining:ratio{sloth_id="api-availability"}`)
	s.WaitValue(t, `pyrra_availability{slo="api-errors"}`)
	s.WaitValue(t, `http_requests:burnrate4d{slo="api-errors"}`)
	return s, end
}

func newClient(t *testing.T, cfg Config, o Options) *Client {
	t.Helper()
	c, err := New(cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func config(url string) Config {
	c := DefaultConfig()
	c.URL = url
	c.Timeout = model.Duration(5 * time.Second) // generous: the machine is shared; bounds are tested with stand-ins
	return c
}

func within1(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 0.01*math.Abs(want) {
		t.Errorf("%s = %.5g, want %.5g within 1 %%", what, got, want)
	} else {
		t.Logf("%s = %.5g (hand-computed %.5g)", what, got, want)
	}
}

func slothAlert() *alert.Alert {
	a := &alert.Alert{}
	a.Status = "firing"
	a.Labels = map[string]string{"alertname": "AvailabilityHighErrorRate", "sloth_id": "api-availability",
		"sloth_service": "api", "sloth_slo": "availability", "sloth_severity": "page"}
	a.StartsAt = time.Now().Add(-10 * time.Minute)
	return a
}

func pyrraAlert(slo string) *alert.Alert {
	a := &alert.Alert{}
	a.Status = "firing"
	a.Labels = map[string]string{"alertname": "ErrorBudgetBurn", "slo": slo, "job": "api",
		"long": "1h", "short": "5m", "severity": "critical", "exhaustion": "2d"}
	a.StartsAt = time.Now().Add(-10 * time.Minute)
	return a
}

// TestLiveContextFromRealPrometheus reads Sloth's and Pyrra's recording
// rules, evaluated by a real Prometheus over backfilled traffic, and
// compares them with the burn rates and budget computed by hand.
func TestLiveContextFromRealPrometheus(t *testing.T) {
	s, end := startSLOPrometheus(t)
	c := newClient(t, config(s.URL()), Options{})
	remaining := 1 - handBurn(end, end, 7*24*time.Hour)

	t.Run("sloth", func(t *testing.T) {
		lc, err := c.Lookup(context.Background(), slothAlert())
		if err != nil {
			t.Fatal(err)
		}
		if lc.Kind != KindSloth || lc.SLO != "api-availability" {
			t.Errorf("kind %s slo %q", lc.Kind, lc.SLO)
		}
		checkBurns(t, lc, end, testWindows)
		if !lc.HasBudget {
			t.Fatal("no budget")
		}
		within1(t, "budget remaining", lc.BudgetRemaining, remaining)
		if got, want := lc.Summary(), `^budget 74 % left · burn 1h 12\.[0-2]× · 6h 4\.5×( · \w+)?$`; !regexp.MustCompile(want).MatchString(got) {
			t.Errorf("summary %q, want %s", got, want)
		}
	})
	t.Run("pyrra", func(t *testing.T) {
		lc, err := c.Lookup(context.Background(), pyrraAlert("api-errors"))
		if err != nil {
			t.Fatal(err)
		}
		checkBurns(t, lc, end, []string{"5m", "30m", "1h", "2h", "6h", "1d", "4d"})
		within1(t, "budget remaining", lc.BudgetRemaining, remaining)
	})
	t.Run("custom expressions, with the trend", func(t *testing.T) {
		cfg := config(s.URL())
		cfg.Expr.BurnRate = `sum(rate(http_requests_total{job={{quote .Labels.job}},code=~"5.."}[{{.Window}}])) / sum(rate(http_requests_total{job={{quote .Labels.job}}}[{{.Window}}])) / 0.01`
		cfg.Expr.BudgetRemaining = `1 - sum(increase(http_requests_total{job={{quote .Labels.job}},code=~"5.."}[7d])) / sum(increase(http_requests_total{job={{quote .Labels.job}}}[7d])) / 0.01`
		c := newClient(t, cfg, Options{})
		a := &alert.Alert{}
		a.Labels = map[string]string{"alertname": "APIErrors", "slo": "api-custom", "job": "api"}
		lc, err := c.Lookup(context.Background(), a)
		if err != nil {
			t.Fatal(err)
		}
		checkBurns(t, lc, end, testWindows)
		within1(t, "budget remaining", lc.BudgetRemaining, remaining)
		// 15 minutes ago the last hour held 30m at 15 % and 30m at 3 %.
		within1(t, "burn 1h 15m ago", lc.BurnBefore, handBurn(end, lc.At.Add(-TrendLookback), time.Hour))
		if lc.Trend != TrendRising {
			t.Errorf("trend %q, want rising (1h burn %.3g now, %.3g before)", lc.Trend, mustBurn(lc, time.Hour), lc.BurnBefore)
		}
		if got, want := lc.Summary(), `^budget 74 % left · burn 1h 12\.[0-2]× · 6h 4\.5× · rising$`; !regexp.MustCompile(want).MatchString(got) {
			t.Errorf("summary %q, want %s", got, want)
		}
	})
	t.Run("a storm of 1000 alerts of one SLO costs one query set", func(t *testing.T) {
		storm(t, s.URL(), 1000, slothAlert)
	})
	t.Run("prometheus stopped: unavailable, fast", func(t *testing.T) {
		cfg := config(s.URL())
		cfg.CacheTTL = 0
		reg := prometheus.NewRegistry()
		c := newClient(t, cfg, Options{Registerer: reg})
		s.Kill()
		_, err := c.Lookup(context.Background(), slothAlert())
		if !errors.Is(err, ErrUnavailable) {
			t.Fatalf("err %v, want ErrUnavailable", err)
		}
		if n := testutil.ToFloat64(c.metrics.lookups.WithLabelValues(resultError)); n != 1 {
			t.Errorf("lookups{result=error} = %g, want 1", n)
		}
	})
}

func mustBurn(lc *Context, w time.Duration) float64 { v, _ := lc.Burn(w); return v }

func checkBurns(t *testing.T, lc *Context, end time.Time, windows []string) {
	t.Helper()
	for _, name := range windows {
		d, _ := model.ParseDuration(name)
		got, ok := lc.Burn(time.Duration(d))
		if !ok {
			t.Errorf("no burn over %s in %+v", name, lc.Burns)
			continue
		}
		within1(t, "burn "+name, got, handBurn(end, lc.At, time.Duration(d)))
	}
}
