package slolive

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
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
