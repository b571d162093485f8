package slolive

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/promtest"
	"github.com/alertrouter/alertrouter/policies"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// pyrraNamespacedRules are a Pyrra ratio SLO named api-errors deployed in
// two namespaces, as Pyrra's Kubernetes backend writes them into
// PrometheusRules and the Prometheus Operator (enforcedNamespaceLabel)
// loads them: the same rule names and slo label, told apart only by the
// namespace label. Pyrra records pyrra_objective as a bare number (a
// scalar), labelled with slo only (plus the enforced namespace); its burn
// rates also carry the SLI's equality matchers (job). team-a's objective
// is 99 %, team-b's 99.9 %, over the same traffic.
func pyrraNamespacedRules() string {
	var b strings.Builder
	b.WriteString("groups:\n")
	for _, ns := range []struct{ name, target string }{{"team-a", "0.99"}, {"team-b", "0.999"}} {
		fmt.Fprintf(&b, "  - name: api-errors-%s\n    interval: 30s\n    rules:\n", ns.name)
		for _, w := range []string{"5m", "30m", "1h", "2h", "6h", "1d", "4d"} {
			fmt.Fprintf(&b, `      - record: http_requests:burnrate%s
        expr: sum(rate(http_requests_total{code=~"5..",job="api"}[%s])) / sum(rate(http_requests_total{job="api"}[%s]))
        labels: {job: api, slo: api-errors, namespace: %s}
`, w, w, w, ns.name)
		}
		fmt.Fprintf(&b, `  - name: api-errors-increase-%[1]s
    rules:
      - record: http_requests:increase7d
        expr: sum by (code) (increase(http_requests_total{job="api"}[7d]))
        labels: {job: api, slo: api-errors, namespace: %[1]s}
  - name: api-errors-generic-%[1]s
    rules:
      - record: pyrra_objective
        expr: %[2]s
        labels: {slo: api-errors, namespace: %[1]s}
      - record: pyrra_window
        expr: 604800
        labels: {slo: api-errors, namespace: %[1]s}
      - record: pyrra_availability
        expr: 1 - sum(http_requests:increase7d{code=~"5..",job="api",slo="api-errors",namespace="%[1]s"} or vector(0)) / sum(http_requests:increase7d{job="api",slo="api-errors",namespace="%[1]s"})
        labels: {slo: api-errors, namespace: %[1]s}
`, ns.name, ns.target)
	}
	return b.String()
}

// TestPyrraSLOsSharingANameReadTheirOwnObjective: two Pyrra SLOs of one
// name in two namespaces, evaluated by a real Prometheus. The alert of
// team-b (99.9 %) must divide its error ratios by its own error budget
// (0.1 %) and show its own budget (overspent), not those of team-a (99 %),
// whose series Prometheus lists first: the objective and availability were
// read from the first series of the name, whatever its labels.
func TestPyrraSLOsSharingANameReadTheirOwnObjective(t *testing.T) {
	end := time.Now().Truncate(step)
	from := end.Add(-7*24*time.Hour - 15*time.Minute)
	er := errorRate(end)
	series := promtest.OpenMetrics(from, end, step,
		promtest.Counter{Name: "http_requests_total", Labels: map[string]string{"job": "api", "code": "500"}, Rate: er},
		promtest.Counter{Name: "http_requests_total", Labels: map[string]string{"job": "api", "code": "200"},
			Rate: func(t time.Time) float64 { return totalRate - er(t) }},
	)
	s := promtest.Start(t, promtest.Options{Series: series, Rules: pyrraNamespacedRules()})
	for _, ns := range []string{"team-a", "team-b"} {
		s.WaitValue(t, `pyrra_availability{slo="api-errors",namespace="`+ns+`"}`)
		s.WaitValue(t, `pyrra_objective{slo="api-errors",namespace="`+ns+`"}`)
		s.WaitValue(t, `http_requests:burnrate4d{slo="api-errors",namespace="`+ns+`"}`)
	}
	c := newClient(t, config(s.URL()), Options{})
	for _, ns := range []string{"team-a", "team-b"} {
		t.Run(ns, func(t *testing.T) {
			a := pyrraAlert("api-errors")
			a.Labels["namespace"] = ns
			lc, err := c.Lookup(context.Background(), a)
			if err != nil {
				t.Fatal(err)
			}
			sel := `{slo="api-errors",namespace="` + ns + `"}`
			// What the on-call would compute in PromQL.
			want1h := s.WaitValue(t, `http_requests:burnrate1h`+sel+` / scalar(1 - pyrra_objective`+sel+`)`)
			within1(t, "burn 1h", mustBurn(lc, time.Hour), want1h)
			wantBudget := s.WaitValue(t, `(pyrra_availability`+sel+` - scalar(pyrra_objective`+sel+`)) / scalar(1 - pyrra_objective`+sel+`)`)
			if !lc.HasBudget {
				t.Fatal("no budget")
			}
			within1(t, "budget remaining", lc.BudgetRemaining, wantBudget)
			t.Logf("summary of %s: %s", ns, lc.Summary())
		})
	}
	// A namespace with no SLO of that name reads no data, and says that no
	// objective agrees with the alert — not that pyrra_objective is
	// missing (written with --generic-rules), which sent the operator to a
	// flag already on.
	a := pyrraAlert("api-errors")
	a.Labels["namespace"] = "team-c"
	_, err := c.Lookup(context.Background(), a)
	if !errors.Is(err, ErrNoData) || errors.Is(err, errNoObjective) || !strings.Contains(err.Error(), "agrees with the alert's labels") {
		t.Errorf("team-c: %v, want no data: no objective agrees with the alert's labels", err)
	}
}

// TestABadQueryOfOneSLODoesNotOpenTheBreaker: a hand-rolled template that
// renders a query a real Prometheus refuses for some alerts (here a regex
// matcher over a label value that is no regex) is that SLO's problem, not
// a failing Prometheus: it must not open the circuit breaker and take the
// live context away from every other SLO's pages for 30s.
func TestABadQueryOfOneSLODoesNotOpenTheBreaker(t *testing.T) {
	s := promtest.Start(t, promtest.Options{Rules: slothRules()})
	cfg := config(s.URL())
	cfg.CacheTTL = 0
	cfg.Expr.BurnRate = `sum(rate(http_requests_total{job=~{{quote .Labels.job}},code=~"5.."}[{{.Window}}])) / sum(rate(http_requests_total{job=~{{quote .Labels.job}}}[{{.Window}}])) / 0.01`
	c := newClient(t, cfg, Options{})
	bad := &alert.Alert{}
	bad.Status = "firing"
	bad.Labels = map[string]string{"alertname": "PaymentsErrors", "slo": "payments", "job": "payments[eu"}
	for i := range 4 {
		_, err := c.Lookup(context.Background(), bad)
		var le *LookupError
		if !errors.As(err, &le) || errors.Is(err, ErrBreakerOpen) {
			t.Fatalf("lookup %d of the bad query: %v, want Prometheus' refusal", i, err)
		}
		if want := "Prometheus refused the query (bad_data)"; le.Reason != want {
			t.Errorf("reason %q, want %q", le.Reason, want)
		}
	}
	// Another SLO's lookup still queries Prometheus.
	good := &alert.Alert{}
	good.Status = "firing"
	good.Labels = map[string]string{"alertname": "APIErrors", "slo": "api", "job": "api"}
	if _, err := c.Lookup(context.Background(), good); errors.Is(err, ErrBreakerOpen) {
		t.Fatalf("after 4 refused queries of one SLO, another SLO's lookup: %v", err)
	}
}

// TestPartialAnswerIsSaidAndClaimsNoFall: a Thanos querier whose store of
// one cluster did not answer answers the rest with a warning. The burn it
// reads is that of the clusters that answered: the page must say the
// answer is partial, and must not claim that the burn fell below every
// tier (the missing cluster may be the one burning); the warning was
// dropped.
func TestPartialAnswerIsSaidAndClaimsNoFall(t *testing.T) {
	const warning = `partial response: store eu-1 (10.0.0.7:10901): rpc error: code = Unavailable`
	partialAnswer(t, `"warnings":[`+strconv.Quote(warning)+`]`, warning)
}

// VictoriaMetrics marks an answer some vmstorage nodes did not contribute
// to with a top-level "isPartial": true and no warning: it was read as a
// whole answer — its low burn shown as the SLO's, "below every tier"
// claimed.
func TestVictoriaMetricsPartialAnswerIsSaid(t *testing.T) {
	partialAnswer(t, `"isPartial":true`, partialWarning)
	// Spaces around the colon, as a proxy re-encoding the JSON writes it.
	partialAnswer(t, `"isPartial" :  true`, partialWarning)
}

// partialAnswer looks up a Sloth SLO whose every answer carries field (a
// top-level JSON field) and checks that the live context says warning and
// claims no fall.
func partialAnswer(t *testing.T, field, warning string) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		q, now := r.Form.Get("query"), time.Now().Unix()
		var res []string
		switch {
		case strings.Contains(q, slothSLIPrefix):
			for _, win := range testWindows {
				res = append(res, fmt.Sprintf(`{"metric":{"__name__":"%s%s","sloth_id":"svc","sloth_window":%q,"cluster":"us-1"},"value":[%d,"0.001"]}`, slothSLIPrefix, win, win, now))
			}
		case strings.Contains(q, slothErrorBudget):
			res = append(res, fmt.Sprintf(`{"metric":{"__name__":%q,"sloth_id":"svc","cluster":"us-1"},"value":[%d,"0.01"]}`, slothErrorBudget, now))
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"status":"success",%s,"data":{"resultType":"vector","result":[%s]}}`, field, strings.Join(res, ","))
	}))
	t.Cleanup(srv.Close)
	c := newClient(t, config(srv.URL), Options{})
	a := slothAlertID("svc")
	lc, err := c.Lookup(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	if below, note := lc.BelowEveryTier(policies.DefaultConfig().BurnRate.Tiers); below {
		t.Errorf("a partial answer claimed the burn fell: %s", note)
	}
	if got, want := lc.Summary(), "budget unknown · burn 1h 0.1× · 6h 0.1× · steady · partial answer, Prometheus warned: "+warning; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
	if got := lc.Details()["warnings"]; got != warning {
		t.Errorf("details warnings %q, want %q", got, warning)
	}
}
