package policies

import (
	"testing"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// The tests of this file pin boundaries that a mutation audit moved
// without a test noticing: each says what on-call would see go wrong.

// TestBurnRateShortWindowIsStrict: the 1h/5m tier is `1h/5m>14.4` over
// both windows (docs/policies.md, section 2). A short window of exactly
// 14.4 is no page, whatever the long window says: with `>=` on the short
// window the router would page on a burn that has already come back down
// to the factor.
func TestBurnRateShortWindowIsStrict(t *testing.T) {
	runFiring(t, newEngine(t), firingCases{
		{"14.4 over 5m is no page, even with 20 over 1h", map[string]string{"burn_rate_1h": "20", "burn_rate_5m": "14.4"}, nil,
			want{alert.ActionNone, PolicyBurnRate, "below", "burn rate 20.0 > 14.4 over 1h and 14.4 ≤ 14.4 over 5m: no page"}},
		{"14.5 over 5m with 20 over 1h pages", map[string]string{"burn_rate_1h": "20", "burn_rate_5m": "14.5"}, nil,
			want{alert.ActionPage, PolicyBurnRate, "1h/5m>14.4", "burn rate 20.0 > 14.4 over 1h and 14.5 > 14.4 over 5m"}},
	})
}

// TestRegressionLowerIsWorseAtOneOverCritical: lower is worse pages when
// value ÷ baseline falls strictly below 1/critical (docs/policies.md,
// section 4: `< 1/1.50 = 0.67` at low sensitivity). 2 against 3 is exactly
// 1/1.5 in float64, so it sits on the line: a ticket at warn, not a page.
func TestRegressionLowerIsWorseAtOneOverCritical(t *testing.T) {
	if v, b, c := 2.0, 3.0, 1.5; v/b != 1/c {
		t.Fatalf("2/3 = %v, 1/1.5 = %v: the case below is not on the line", v/b, 1/c)
	}
	lower := func(value string) map[string]string {
		return map[string]string{"value": value, "baseline": "3", "sensitivity": "low", "regression_direction": "lower_is_worse"}
	}
	runFiring(t, newEngine(t), firingCases{
		{"exactly 1/critical tickets", lower("2"), nil,
			want{alert.ActionTicket, PolicyRegression, "warn", "< 0.80 (1/1.25) warn for low sensitivity"}},
		{"just below 1/critical pages", lower("1.99"), nil,
			want{alert.ActionPage, PolicyRegression, "critical", "(1/1.50) critical for low sensitivity"}},
	})
}

// TestUnmarkedGrafanaTierOfEqualRank: an unmarked grafana_slo_severity
// takes over from severity only when it is louder. One of the same rank
// leaves the decision to severity; on-call must not read a reason
// "grafana_slo_severity=… louder than severity=…" that is false.
func TestUnmarkedGrafanaTierOfEqualRank(t *testing.T) {
	e := newEngine(t)
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   want
	}{
		{"the severity policy", map[string]string{"alertname": "X", "severity": "critical", "grafana_slo_severity": "page"},
			want{alert.ActionPage, PolicySeverity, "critical", `severity="critical" → page`}},
		{"a Pyrra alert", map[string]string{"alertname": "ErrorBudgetBurn", "slo": "api-errors", "long": "1h", "short": "5m",
			"severity": "critical", "grafana_slo_severity": "page"},
			want{alert.ActionPage, PolicyPyrra, "critical", `pyrra severity="critical" → page (window pair 1h/5m)`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := e.Decide(firing(tc.labels), nil, testNow)
			check(t, d, tc.want)
			if hasReason(d, "louder than") {
				t.Errorf("reasons %q say a tier of equal rank is louder", d.Reasons)
			}
		})
	}
}
