package slolive

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/model"
)

// slothVectors answers a Sloth SLO's queries: its error ratios per window
// (ratios) and its error budget (budget).
func slothVectors(ratios map[string]string, budget string) func(q string, now int64) []string {
	const sloth = `"sloth_id":"api-availability","sloth_service":"api","sloth_slo":"availability"`
	return func(q string, now int64) (res []string) {
		switch {
		case strings.Contains(q, slothSLIPrefix):
			for win, v := range ratios {
				res = append(res, fmt.Sprintf(`{"metric":{"__name__":"%s%s",%s,"sloth_window":%q},"value":[%d,%q]}`, slothSLIPrefix, win, sloth, win, now, v))
			}
		case strings.Contains(q, slothErrorBudget):
			res = append(res, fmt.Sprintf(`{"metric":{"__name__":%q,%s},"value":[%d,%q]}`, slothErrorBudget, sloth, now, budget))
		}
		return res
	}
}

// An error ratio below 0 is a broken recording rule, not a burn: it was
// used as it came ("burn 1h -500.0×") and fed the policy's tiers.
func TestNegativeErrorRatiosAreNoBurn(t *testing.T) {
	srv := vectorServer(t, slothVectors(map[string]string{"5m": "-5", "1h": "-5", "6h": "0.01"}, "0.001"))
	c := newClient(t, config(srv.URL), Options{})
	lc, err := c.Lookup(context.Background(), slothAlert())
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range lc.Burns {
		if b.Rate < 0 {
			t.Errorf("burn over %s = %g: a negative error ratio was used", b.Window, b.Rate)
		}
	}
	if len(lc.Burns) != 1 || lc.Burns[0].Rate < 9.9 {
		t.Errorf("burns %+v: want only the 6h window's, 10×", lc.Burns)
	}
}

// An SLO whose objective is 100 % has no error budget: its series are
// there, and the reason said Prometheus had "no recording rules or
// samples for this SLO". It says so now.
func TestAHundredPercentObjectiveSaysItHasNoBudget(t *testing.T) {
	srv := vectorServer(t, slothVectors(map[string]string{"5m": "0.01", "1h": "0.01"}, "0"))
	c := newClient(t, config(srv.URL), Options{})
	_, err := c.Lookup(context.Background(), slothAlert())
	var le *LookupError
	if !errors.As(err, &le) || le.LiveUnavailable() != ReasonNoBudget {
		t.Fatalf("Lookup error %v: want the reason %q", err, ReasonNoBudget)
	}
	if !errors.Is(err, ErrNoData) {
		t.Errorf("Lookup error %v: still ErrNoData for callers", err)
	}
}

// The same for a Pyrra SLO: an objective of 1 leaves no error budget.
func TestAHundredPercentPyrraObjectiveSaysItHasNoBudget(t *testing.T) {
	srv := vectorServer(t, func(q string, now int64) (res []string) {
		if strings.Contains(q, pyrraObjective) {
			res = append(res, fmt.Sprintf(`{"metric":{"__name__":%q,"slo":"api-errors"},"value":[%d,"1"]}`, pyrraObjective, now))
		}
		return res
	})
	c := newClient(t, config(srv.URL), Options{})
	_, err := c.Lookup(context.Background(), pyrraAlert("api-errors"))
	var le *LookupError
	if !errors.As(err, &le) || le.LiveUnavailable() != ReasonNoBudget {
		t.Fatalf("Lookup error %v: want the reason %q", err, ReasonNoBudget)
	}
}

// Pyrra's series carrying a label the alert lacks — an undeduplicated
// Prometheus HA pair's replica, a federated tenant's id — agreed with no
// alert, and the live context read "no recording rules" although they
// were there. The worst of them is read, as for Sloth.
func TestPyrraSeriesWithALabelTheAlertLacksAreRead(t *testing.T) {
	srv := vectorServer(t, func(q string, now int64) (res []string) {
		for _, replica := range []string{"a", "b"} {
			switch {
			case strings.Contains(q, pyrraObjective):
				res = append(res, fmt.Sprintf(`{"metric":{"__name__":%q,"slo":"api-errors","replica":%q},"value":[%d,"0.99"]}`, pyrraObjective, replica, now))
			case strings.Contains(q, pyrraBurnInfix):
				for _, win := range []string{"5m", "1h"} {
					res = append(res, fmt.Sprintf(`{"metric":{"__name__":"http_requests%s%s","slo":"api-errors","job":"api","replica":%q},"value":[%d,"0.2"]}`, pyrraBurnInfix, win, replica, now))
				}
			}
		}
		return res
	})
	c := newClient(t, config(srv.URL), Options{})
	lc, err := c.Lookup(context.Background(), pyrraAlert("api-errors"))
	if err != nil {
		t.Fatalf("Lookup: %v, want the replicas' burn", err)
	}
	if len(lc.Burns) != 2 || lc.Burns[0].Rate < 19.9 {
		t.Errorf("burns %+v, want 5m and 1h at 20×", lc.Burns)
	}
}

// An alert of one replica of an HA pair (its prometheus_replica) reads the
// SLO's series recorded by the other replicas, as a querier that does not
// deduplicate answers them: a review found replica 2's alert reading "no
// data" when replicas 0 and 1 answered, once series contradicting an
// alert's label were no longer read.
func TestAnAlertOfAnotherReplicaReadsTheReplicasSeries(t *testing.T) {
	sloth := `"sloth_id":"api-availability","sloth_service":"api","sloth_slo":"availability"`
	srv := vectorServer(t, func(q string, now int64) (res []string) {
		for _, replica := range []string{"prometheus-k8s-0", "prometheus-k8s-1"} {
			switch {
			case strings.Contains(q, slothSLIPrefix):
				res = append(res, fmt.Sprintf(`{"metric":{"__name__":"%s1h",%s,"sloth_window":"1h","prometheus_replica":%q},"value":[%d,"0.2"]}`, slothSLIPrefix, sloth, replica, now))
			case strings.Contains(q, slothErrorBudget):
				res = append(res, fmt.Sprintf(`{"metric":{"__name__":%q,%s,"prometheus_replica":%q},"value":[%d,"0.01"]}`, slothErrorBudget, sloth, replica, now))
			}
		}
		return res
	})
	a := slothAlert()
	a.Labels["prometheus_replica"] = "prometheus-k8s-2"
	lc, err := newClient(t, config(srv.URL), Options{}).Lookup(context.Background(), a)
	if err != nil {
		t.Fatalf("Lookup: %v, want the replicas' burn", err)
	}
	if b, _ := lc.Burn(time.Hour); b < 19.9 {
		t.Errorf("burn 1h %g, want 20", b)
	}
}

// A hand-rolled SLO's burn below 0 (a recording rule's defect) was shown
// as "-0.5×" and claimed the burn below every tier.
func TestNegativeHandRolledBurnsAreNoBurn(t *testing.T) {
	srv := vectorServer(t, func(q string, now int64) (res []string) {
		if strings.Contains(q, "slo:burn_rate") {
			res = append(res, fmt.Sprintf(`{"metric":{"__name__":"slo:burn_rate","slo":"payments"},"value":[%d,"-0.5"]}`, now))
		}
		return res
	})
	cfg := config(srv.URL)
	cfg.Expr.BurnRate = `slo:burn_rate{slo={{quote .Labels.slo}},window="{{.Window}}"}`
	c := newClient(t, cfg, Options{})
	a := &alert.Alert{}
	a.Status = "firing"
	a.Labels = map[string]string{"alertname": "PaymentsErrors", "slo": "payments"}
	lc, err := c.Lookup(context.Background(), a)
	if err == nil {
		for _, b := range lc.Burns {
			if b.Rate < 0 {
				t.Errorf("burn over %s = %g: a negative burn was used", b.Window, b.Rate)
			}
		}
	} else if !errors.Is(err, ErrNoData) {
		t.Errorf("Lookup: %v, want no data (no burn that is one)", err)
	}
}

// A prometheus.expr template that does not render for an SLO's alert (a
// dotted OpenTelemetry label read as .Labels.service.name, which needs
// index) was counted as an alert of no SLO, logged nowhere, and its
// reason blamed a missing label the alert had. It is counted as
// result="template" now, logged (throttled), and the reason carries the
// template's error.
func TestATemplateThatDoesNotRenderIsAnError(t *testing.T) {
	srv := vectorServer(t, func(q string, now int64) []string { return nil })
	cfg := config(srv.URL)
	cfg.Expr.BurnRate = `slo:burn_rate{{.Window}}{"service.name"={{quote .Labels.service.name}}}`
	var logs strings.Builder
	c := newClient(t, cfg, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	a := &alert.Alert{}
	a.Status = "firing"
	a.Labels = map[string]string{"alertname": "PayErrors", "slo": "pay", "service.name": "pay"}
	for range 3 {
		_, err := c.Lookup(context.Background(), a)
		var le *LookupError
		if !errors.As(err, &le) || !strings.Contains(le.Reason, "does not render") || !strings.Contains(le.Reason, "service") {
			t.Fatalf("Lookup: %v, want the template's failure as the reason", err)
		}
	}
	if got := testutil.ToFloat64(c.metrics.lookups.WithLabelValues(resultTemplate)); got != 3 {
		t.Errorf("lookups{result=template} = %v, want 3", got)
	}
	if got := testutil.ToFloat64(c.metrics.lookups.WithLabelValues(resultError)); got != 0 {
		t.Errorf("lookups{result=error} = %v, want 0: Prometheus is not failing", got)
	}
	if got := testutil.ToFloat64(c.metrics.lookups.WithLabelValues(resultNotSLO)); got != 0 {
		t.Errorf("lookups{result=not_slo} = %v, want 0", got)
	}
	if n := strings.Count(logs.String(), "does not render"); n != 1 {
		t.Errorf("logged %d times, want once (throttled):\n%s", n, logs.String())
	}
}

// A Pyrra SLO over an OpenTelemetry metric (Prometheus 3: UTF-8 names,
// service.name): the exemplar selector wrote the label name bare, which
// Prometheus 3 refuses (bad_data: unexpected character inside braces) —
// the traces were dropped — and the metric's dots went into the regex as
// wildcards.
func TestPyrraExemplarSelectorQuotesUTF8Names(t *testing.T) {
	v := model.Vector{&model.Sample{Metric: model.Metric{
		model.MetricNameLabel: "http.server.requests:burnrate5m", "slo": "checkout", "service.name": "checkout", "job": "api",
	}}}
	got := pyrraExemplarSelector(v, matcher{})
	want := `{__name__=~"http\\.server\\.requests_bucket|http\\.server\\.requests_total|http\\.server\\.requests_count|http\\.server\\.requests",job="api","service.name"="checkout"}`
	if got != want {
		t.Errorf("selector\n%s\nwant\n%s", got, want)
	}
}

// label reads a dotted label for the templates and fails when the alert
// lacks it: index gave "", and `svc=""` matched the series without the
// label (an all-services aggregate) — the alert decided on another SLO's
// burn.
func TestTheLabelFunctionFailsWithoutTheLabel(t *testing.T) {
	var mu sync.Mutex // the lookup's queries run in parallel
	var queries []string
	srv := vectorServer(t, func(q string, now int64) []string {
		mu.Lock()
		defer mu.Unlock()
		queries = append(queries, q)
		return []string{fmt.Sprintf(`{"metric":{"__name__":"slo:burn_rate"},"value":[%d,"20"]}`, now)}
	})
	cfg := config(srv.URL)
	cfg.Expr.BurnRate = `slo:burn_rate{{.Window}}{slo={{quote .SLO}},svc={{quote (label .Labels "service.name")}}}`
	c := newClient(t, cfg, Options{})
	a := &alert.Alert{}
	a.Status = "firing"
	a.Labels = map[string]string{"alertname": "SLOBurn", "slo": "pay"}
	_, err := c.Lookup(context.Background(), a)
	var le *LookupError
	mu.Lock()
	n := len(queries)
	mu.Unlock()
	if !errors.As(err, &le) || !strings.Contains(le.Reason, `the alert has no label "service.name"`) || n != 0 {
		t.Fatalf("without the label: %v, %d queries; want no lookup, the label named", err, n)
	}
	a.Labels["service.name"] = "pay"
	_, err = c.Lookup(context.Background(), a)
	mu.Lock()
	defer mu.Unlock()
	if err != nil || len(queries) == 0 || !strings.Contains(queries[0], `svc="pay"`) {
		t.Errorf("with the label: %v, queries %q", err, queries)
	}
}

// An exemplar_query that does not render for an alert (a label it lacks,
// read with label) failed the whole lookup: a hand-rolled SLO paging on
// its live burn was decided from its labels, a ticket. The burn is read;
// only the traces are left out.
func TestAnExemplarQueryThatDoesNotRenderKeepsTheBurn(t *testing.T) {
	srv := vectorServer(t, func(q string, now int64) []string {
		if strings.Contains(q, "slo:burn_rate") {
			return []string{fmt.Sprintf(`{"metric":{"__name__":"slo:burn_rate","slo":"availability"},"value":[%d,"20"]}`, now)}
		}
		return nil
	})
	cfg := config(srv.URL)
	cfg.Expr.BurnRate = `max(slo:burn_rate{slo={{quote .SLO}}})`
	cfg.ExemplarQuery = `http_request_duration_seconds_bucket{service_name={{quote (label .Labels "service.name")}}}`
	c := newClient(t, cfg, Options{})
	a := &alert.Alert{}
	a.Status = "firing"
	a.Labels = map[string]string{"alertname": "APIBurn", "slo": "availability", "service": "api"}
	lc, err := c.Lookup(context.Background(), a)
	if err != nil || len(lc.Burns) == 0 || lc.Burns[0].Rate != 20 {
		t.Fatalf("Lookup: %+v, %v; want the burn of 20× without exemplars", lc, err)
	}
}
