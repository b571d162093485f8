package slolive

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/promtest"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// handRolledPerClusterRules record a hand-rolled SLO per cluster: us burns
// 1× with 90 % of its budget left, eu burns 20× and has overspent it by
// half.
const handRolledPerClusterRules = `groups:
  - name: hand-rolled-slo
    rules:
      - {record: slo:burn_rate1h, expr: vector(1), labels: {slo: checkout-availability, cluster: us}}
      - {record: slo:burn_rate1h, expr: vector(20), labels: {slo: checkout-availability, cluster: eu}}
      - {record: slo:burn_rate5m, expr: vector(1), labels: {slo: checkout-availability, cluster: us}}
      - {record: slo:burn_rate5m, expr: vector(20), labels: {slo: checkout-availability, cluster: eu}}
      - {record: slo:budget_remaining:ratio, expr: vector(0.9), labels: {slo: checkout-availability, cluster: us}}
      - {record: slo:budget_remaining:ratio, expr: vector(-0.5), labels: {slo: checkout-availability, cluster: eu}}
`

// TestHandRolledBudgetIsTheWorstSeries: a hand-rolled SLO recorded per
// cluster shows, as its budget, the lowest budget left — the series that is
// spending it, whose burn the summary shows — not the highest.
func TestHandRolledBudgetIsTheWorstSeries(t *testing.T) {
	s := promtest.Start(t, promtest.Options{Rules: handRolledPerClusterRules})
	s.WaitValue(t, `slo:budget_remaining:ratio{cluster="eu"}`)
	s.WaitValue(t, `slo:burn_rate1h{cluster="eu"}`)
	cfg := config(s.URL())
	cfg.Expr.BurnRate = `slo:burn_rate{{.Window}}{slo={{quote .SLO}}}`
	cfg.Expr.BudgetRemaining = `slo:budget_remaining:ratio{slo={{quote .SLO}}}`
	c := newClient(t, cfg, Options{})
	a := &alert.Alert{}
	a.Status = "firing"
	a.Labels = map[string]string{"alertname": "CheckoutAvailabilityBurn", "slo": "checkout-availability", "severity": "critical"}
	var lc *Context
	// The 5m series may lag the others by one evaluation.
	for deadline := time.Now().Add(30 * time.Second); ; {
		var err error
		lc, err = c.Lookup(context.Background(), a)
		if err == nil && len(lc.Burns) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("lookup: %v, %+v", err, lc)
		}
		c.mu.Lock()
		clear(c.cache) // read again
		c.mu.Unlock()
		time.Sleep(200 * time.Millisecond)
	}
	if !lc.HasBudget || lc.BudgetRemaining != -0.5 {
		t.Errorf("budget remaining %g (has %v), want eu's -0.5", lc.BudgetRemaining, lc.HasBudget)
	}
	if b, _ := lc.Burn(time.Hour); b != 20 {
		t.Errorf("burn 1h %g, want eu's 20", b)
	}
	if got, want := lc.Summary(), "budget overspent (-50 %) · burn 1h 20.0×"; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
}

// TestSlothBudgetOfNoAgreeingSeriesIsTheWorst: a Sloth alert that no series
// agrees with reads the SLO's worst series (its highest burn), and so the
// lowest budget left, whatever order Prometheus answers in.
func TestSlothBudgetOfNoAgreeingSeriesIsTheWorst(t *testing.T) {
	sloth := `"sloth_id":"api-availability","sloth_service":"api","sloth_slo":"availability"`
	type series struct {
		name         string
		ratio, budge float64
	}
	us, eu := series{"us", 0.001, 0.9}, series{"eu", 0.2, -0.5}
	for _, order := range [][]series{{us, eu}, {eu, us}} {
		srv := vectorServer(t, func(q string, now int64) (res []string) {
			for _, cl := range order {
				switch {
				case strings.Contains(q, slothSLIPrefix):
					res = append(res, fmt.Sprintf(`{"metric":{"__name__":"%s1h",%s,"sloth_window":"1h","cluster":%q},"value":[%d,"%g"]}`, slothSLIPrefix, sloth, cl.name, now, cl.ratio))
				case strings.Contains(q, slothErrorBudget):
					res = append(res,
						fmt.Sprintf(`{"metric":{"__name__":%q,%s,"cluster":%q},"value":[%d,"0.01"]}`, slothErrorBudget, sloth, cl.name, now),
						fmt.Sprintf(`{"metric":{"__name__":%q,%s,"cluster":%q},"value":[%d,"%g"]}`, slothBudgetRemaining, sloth, cl.name, now, cl.budge))
				}
			}
			return res
		})
		c := newClient(t, config(srv.URL), Options{})
		lc, err := c.Lookup(context.Background(), slothAlert()) // no cluster label: no series agrees
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := lc.Burn(time.Hour); b != 20 || !lc.HasBudget || lc.BudgetRemaining != -0.5 {
			t.Errorf("series answered %s first: burn 1h %g, budget remaining %g; want eu's 20 and -0.5", order[0].name, b, lc.BudgetRemaining)
		}
	}
}
