package policies

import (
	"strings"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/prometheus/alertmanager/template"
)

var testNow = time.Date(2026, 6, 20, 12, 0, 0, 0, time.UTC)

func newEngine(t testing.TB) *Engine {
	t.Helper()
	e, err := New(DefaultConfig())
	if err != nil {
		t.Fatalf("New(DefaultConfig()): %v", err)
	}
	return e
}

func newAlert(status string, labels, annotations map[string]string) *alert.Alert {
	if labels == nil {
		labels = map[string]string{}
	}
	if annotations == nil {
		annotations = map[string]string{}
	}
	return &alert.Alert{Alert: template.Alert{
		Status:      status,
		Labels:      labels,
		Annotations: annotations,
		StartsAt:    testNow.Add(-12 * time.Minute),
	}}
}

func firing(labels map[string]string) *alert.Alert { return newAlert("firing", labels, nil) }

type want struct {
	action alert.Action
	policy string
	tier   string
	// reason, when set, must be a substring of one of the reasons.
	reason string
}

// firingCases are decisions of firing alerts with the given labels and
// annotations, each checked against its want (runFiring).
type firingCases []struct {
	name   string
	labels map[string]string
	annot  map[string]string
	want   want
}

// runFiring decides each case's firing alert with e, as a subtest.
func runFiring(t *testing.T, e *Engine, cases firingCases) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			check(t, e.Decide(newAlert("firing", tc.labels, tc.annot), nil, testNow), tc.want)
		})
	}
}

func check(t *testing.T, got alert.Decision, w want) {
	t.Helper()
	if got.Action != w.action || got.Policy != w.policy {
		t.Fatalf("decision = %s by %s (tier %q, reasons %q), want %s by %s", got.Action, got.Policy, got.Tier, got.Reasons, w.action, w.policy)
	}
	if w.tier != "" && got.Tier != w.tier {
		t.Errorf("tier = %q, want %q (reasons %q)", got.Tier, w.tier, got.Reasons)
	}
	if len(got.Reasons) == 0 {
		t.Errorf("decision has no reasons")
	}
	if w.reason != "" && !hasReason(got, w.reason) {
		t.Errorf("no reason contains %q: %q", w.reason, got.Reasons)
	}
}

func hasReason(d alert.Decision, sub string) bool {
	for _, r := range d.Reasons {
		if strings.Contains(r, sub) {
			return true
		}
	}
	return false
}

func TestBurnRateTiers(t *testing.T) {
	e := newEngine(t)
	cases := []struct {
		name   string
		labels map[string]string
		annot  map[string]string
		want   want
	}{
		{"14.4 over 1h and 5m is not a page", map[string]string{"burn_rate_1h": "14.4", "burn_rate_5m": "14.4"}, nil,
			want{alert.ActionNone, PolicyBurnRate, "below", "burn rate 14.4 ≤ 14.4 over 1h and 14.4 ≤ 14.4 over 5m: no page"}},
		{"14.41 over 1h and 5m pages", map[string]string{"burn_rate_1h": "14.41", "burn_rate_5m": "14.41"}, nil,
			want{alert.ActionPage, PolicyBurnRate, "1h/5m>14.4", "burn rate 14.41 > 14.4 over 1h and 14.41 > 14.4 over 5m"}},
		{"the spec's example quotes both numbers", map[string]string{"burn_rate_1h": "15.2", "burn_rate_5m": "16"}, nil,
			want{alert.ActionPage, PolicyBurnRate, "1h/5m>14.4", "burn rate 15.2 > 14.4 over 1h and 16.0 > 14.4 over 5m"}},
		{"a high long window with a calm short window is not a page", map[string]string{"burn_rate_1h": "20", "burn_rate_5m": "2"}, nil,
			want{alert.ActionNone, PolicyBurnRate, "below", "2.0 ≤ 14.4 over 5m"}},
		{"6 over 6h and 30m is not a page", map[string]string{"burn_rate_6h": "6", "burn_rate_30m": "6"}, nil,
			want{alert.ActionNone, PolicyBurnRate, "below", "6.0 ≤ 6.0 over 6h"}},
		{"6.01 over 6h and 30m pages", map[string]string{"burn_rate_6h": "6.01", "burn_rate_30m": "6.01"}, nil,
			want{alert.ActionPage, PolicyBurnRate, "6h/30m>6.0", "burn rate 6.01 > 6.0 over 6h and 6.01 > 6.0 over 30m"}},
		{"3 over 1d and 2h is not a ticket", map[string]string{"burn_rate_1d": "3", "burn_rate_2h": "3"}, nil,
			want{alert.ActionNone, PolicyBurnRate, "below", "3.0 ≤ 3.0 over 1d"}},
		{"3.01 over 1d and 2h tickets", map[string]string{"burn_rate_1d": "3.01", "burn_rate_2h": "3.01"}, nil,
			want{alert.ActionTicket, PolicyBurnRate, "1d/2h>3.0", "burn rate 3.01 > 3.0 over 1d and 3.01 > 3.0 over 2h"}},
		{"1 over 3d and 6h is not a ticket", map[string]string{"burn_rate_3d": "1", "burn_rate_6h": "1"}, nil,
			want{alert.ActionNone, PolicyBurnRate, "below", "1.0 ≤ 1.0 over 3d"}},
		{"1.01 over 3d and 6h tickets", map[string]string{"burn_rate_3d": "1.01", "burn_rate_6h": "1.01"}, nil,
			want{alert.ActionTicket, PolicyBurnRate, "3d/6h>1.0", "burn rate 1.01 > 1.0 over 3d and 1.01 > 1.0 over 6h"}},
		{"a page tier wins over a ticket tier that also matches", map[string]string{
			"burn_rate_3d": "8", "burn_rate_6h": "8", "burn_rate_30m": "8"}, nil,
			want{alert.ActionPage, PolicyBurnRate, "6h/30m>6.0", ""}},
		{"values from annotations count", nil, map[string]string{"burn_rate_1h": "1.52e+01", "burn_rate_5m": " 16 "},
			want{alert.ActionPage, PolicyBurnRate, "1h/5m>14.4", "15.2 > 14.4 over 1h"}},
		{"labels win over annotations", map[string]string{"burn_rate_1h": "1", "burn_rate_5m": "1"},
			map[string]string{"burn_rate_1h": "20", "burn_rate_5m": "20"},
			want{alert.ActionNone, PolicyBurnRate, "below", "1.0 ≤ 14.4 over 1h"}},
		{"window names are normalized: 60m is 1h and 24h is 1d", map[string]string{"burn_rate_60m": "15", "burn_rate_5m": "15"}, nil,
			want{alert.ActionPage, PolicyBurnRate, "1h/5m>14.4", "15.0 > 14.4 over 1h"}},
		{"24h feeds the 1d window", map[string]string{"burn_rate_24h": "3.5", "burn_rate_120m": "3.5"}, nil,
			want{alert.ActionTicket, PolicyBurnRate, "1d/2h>3.0", ""}},
		{"a garbage value is no input and falls through to severity", map[string]string{
			"burn_rate_1h": "NaN", "burn_rate_5m": "16", "severity": "warning"}, nil,
			want{alert.ActionTicket, PolicySeverity, "warning", `burn_rate_1h label "NaN" ignored: not finite`}},
		{"a single window is no input", map[string]string{"burn_rate_1h": "50", "severity": "info"}, nil,
			want{alert.ActionNone, PolicySeverity, "info", "no tier has both of its windows"}},
		{"a bad window name is no input", map[string]string{"burn_rate_fast": "50", "severity": "critical"}, nil,
			want{alert.ActionPage, PolicySeverity, "critical", `"fast" is not a Prometheus duration`}},
		{"a negative burn rate is no input", map[string]string{"burn_rate_1h": "-20", "burn_rate_5m": "20"}, nil,
			want{alert.ActionTicket, PolicyDefault, "default", "out of range"}},
	}
	runFiring(t, e, cases)
}

func TestSLOGenerators(t *testing.T) {
	e := newEngine(t)
	sloth := func(sev string) map[string]string {
		return map[string]string{
			"alertname": "MyServiceHighErrorRate", "sloth_id": "myservice-requests-availability",
			"sloth_service": "myservice", "sloth_slo": "requests-availability", "sloth_severity": sev,
			"sloth_window": "5m", "owner": "myteam",
		}
	}
	pyrra := func(long, short, sev string) map[string]string {
		return map[string]string{
			"alertname": "ErrorBudgetBurn", "slo": "api-errors", "job": "api", "namespace": "prod",
			"long": long, "short": short, "severity": sev, "exhaustion": "2d",
		}
	}
	cases := []struct {
		name   string
		labels map[string]string
		want   want
	}{
		{"a sloth page alert pages", sloth("page"),
			want{alert.ActionPage, PolicySloth, "page", `sloth_severity="page" → page (sloth SLO myservice-requests-availability)`}},
		{"a sloth ticket alert tickets", sloth("ticket"), want{alert.ActionTicket, PolicySloth, "ticket", ""}},
		{"sloth wins over a burn rate below every tier", func() map[string]string {
			l := sloth("page")
			l["burn_rate_1h"], l["burn_rate_5m"] = "1", "1"
			return l
		}(), want{alert.ActionPage, PolicySloth, "page", ""}},
		{"an unknown sloth severity falls through", func() map[string]string {
			l := sloth("urgent")
			l["severity"] = "critical"
			return l
		}(), want{alert.ActionPage, PolicySeverity, "critical", `sloth_severity label "urgent" ignored`}},
		{"pyrra 1h/5m critical pages", pyrra("1h", "5m", "critical"), want{alert.ActionPage, PolicyPyrra, "critical", `pyrra severity="critical" → page (window pair 1h/5m) (pyrra SLO api-errors)`}},
		{"pyrra 6h/30m critical pages", pyrra("6h", "30m", "critical"), want{alert.ActionPage, PolicyPyrra, "critical", ""}},
		{"pyrra 1d/2h warning tickets", pyrra("1d", "2h", "warning"), want{alert.ActionTicket, PolicyPyrra, "warning", ""}},
		{"pyrra 4d/6h warning tickets", pyrra("4d", "6h", "warning"), want{alert.ActionTicket, PolicyPyrra, "warning", ""}},
		{"the severity of a 7-day SLO's slow pair beats the 28-day table", pyrra("6h", "30m", "warning"),
			want{alert.ActionTicket, PolicyPyrra, "warning", `pyrra severity="warning" → ticket (window pair 6h/30m)`}},
		{"a 30-day pair is decided by its severity", pyrra("1h4m", "5m", "Critical"), want{alert.ActionPage, PolicyPyrra, "critical", ""}},
		{"without severity the 28-day table decides", pyrra("6h", "30m", ""),
			want{alert.ActionPage, PolicyPyrra, "6h/30m", "pyrra window pair 6h/30m → page (28-day table, no severity or period)"}},
		{"without severity 3d/6h tickets", pyrra("3d", "6h", ""), want{alert.ActionTicket, PolicyPyrra, "3d/6h", ""}},
		{"pyrra windows are normalized (24h is 1d)", pyrra("24h", "120m", ""), want{alert.ActionTicket, PolicyPyrra, "1d/2h", ""}},
		{"without severity a 7-day period makes 6h a ticket", withLabels(pyrra("6h", "30m", ""), "slo_period", "7d"),
			want{alert.ActionTicket, PolicyPyrra, "6h/30m", "long window 6h > 7d/112 = 1h30m (slo_period label 7d) → ticket"}},
		{"without severity a 7-day period makes 1h30m a page", withLabels(pyrra("1h30m", "8m", ""), "slo_period", "7d"),
			want{alert.ActionPage, PolicyPyrra, "1h30m/8m", "long window 1h30m ≤ 7d/112 = 1h30m"}},
		{"a custom severity the severity table knows is honoured", pyrra("1h4m", "5m", "sev1"),
			want{alert.ActionPage, PolicyPyrra, "sev1", `pyrra severity="sev1" → page by the severity table (not in the pyrra severity table; window pair 1h4m/5m)`}},
		{"a custom severity no table knows is ranked by its window", pyrra("1h4m", "5m", "team-sre"),
			want{alert.ActionPage, PolicyPyrra, "1h4m/5m", `pyrra severity="team-sre" names neither page nor ticket`}},
		{"an off-table slow pair without severity tickets", pyrra("2d", "4h", ""),
			want{alert.ActionTicket, PolicyPyrra, "2d/4h", "long window 2d > 30d/112 = 6h26m (default_period 30d) → ticket"}},
		{"pyrra windows that are not durations fall through", pyrra("fast", "5m", "critical"),
			want{alert.ActionPage, PolicySeverity, "critical", "not Prometheus durations"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			check(t, e.Decide(firing(tc.labels), nil, testNow), tc.want)
		})
	}
}

func withLabels(l map[string]string, kv ...string) map[string]string {
	for i := 0; i+1 < len(kv); i += 2 {
		l[kv[i]] = kv[i+1]
	}
	return l
}

func TestCapacity(t *testing.T) {
	e := newEngine(t)
	cases := []struct {
		name   string
		status string
		labels map[string]string
		annot  map[string]string
		want   want
	}{
		{"0.80 is not a warning", "firing", map[string]string{"utilization": "0.80"}, nil,
			want{alert.ActionNone, PolicyCapacity, "below", "utilization 80.0% ≤ 80.0% warn"}},
		{"0.81 tickets", "firing", map[string]string{"utilization": "0.81"}, nil,
			want{alert.ActionTicket, PolicyCapacity, "warn", "utilization 81.0% > 80.0% warn, firing for 12m0s"}},
		{"0.90 only tickets", "firing", map[string]string{"utilization": "0.90"}, nil,
			want{alert.ActionTicket, PolicyCapacity, "warn", ""}},
		{"0.91 pages", "firing", map[string]string{"utilization": "0.91"}, nil,
			want{alert.ActionPage, PolicyCapacity, "critical", "utilization 91.0% > 90.0% critical"}},
		{"a percentage with a sign is read", "firing", nil, map[string]string{"utilization": "85%"},
			want{alert.ActionTicket, PolicyCapacity, "warn", "utilization 85.0%"}},
		{"a bare number above 1 is a percentage", "firing", nil, map[string]string{"utilization": "95"},
			want{alert.ActionPage, PolicyCapacity, "critical", "utilization 95.0%"}},
		{"warn with latency above SLO pages", "firing", map[string]string{"utilization": "0.85", "latency_above_slo": "true"}, nil,
			want{alert.ActionPage, PolicyCapacity, "warn+latency", "latency is above SLO"}},
		{"latency above SLO alone does not page below warn", "firing", map[string]string{"utilization": "0.5", "latency_above_slo": "true"}, nil,
			want{alert.ActionNone, PolicyCapacity, "below", ""}},
		{"latency_above_slo=false is a plain warning", "firing", map[string]string{"utilization": "0.85", "latency_above_slo": "false"}, nil,
			want{alert.ActionTicket, PolicyCapacity, "warn", ""}},
		{"a resolved capacity alert is judged as if firing, not by its severity", "resolved", map[string]string{"utilization": "0.95", "severity": "warning"}, nil,
			want{alert.ActionPage, PolicyCapacity, "critical", "utilization 95.0% > 90.0% critical"}},
		{"a bare number above 100 is no input", "firing", map[string]string{"utilization": "150"}, nil,
			want{alert.ActionTicket, PolicyDefault, "default", `utilization label "150" ignored: out of range`}},
		{"garbage utilization is no input", "firing", map[string]string{"utilization": "high", "severity": "warning"}, nil,
			want{alert.ActionTicket, PolicySeverity, "warning", `utilization label "high" ignored: not a number`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			check(t, e.Decide(newAlert(tc.status, tc.labels, tc.annot), nil, testNow), tc.want)
		})
	}
}

func TestRegression(t *testing.T) {
	e := newEngine(t)
	sector := func(sens string) *alert.Classification {
		return &alert.Classification{Sector: "x-" + sens, Sensitivity: sens}
	}
	type tcase struct {
		name   string
		c      *alert.Classification
		labels map[string]string
		annot  map[string]string
		want   want
	}
	var cases []tcase
	// Each level of each sensitivity, at and just above its thresholds.
	levels := []struct {
		sens           string
		warn, crit     string
		aboveWarn, top string
	}{
		{"high", "1.10", "1.20", "1.11", "1.21"},
		{"medium", "1.15", "1.30", "1.16", "1.31"},
		{"low", "1.25", "1.50", "1.26", "1.51"},
	}
	for _, l := range levels {
		cases = append(cases,
			tcase{l.sens + " at warn is nothing", sector(l.sens), map[string]string{"baseline_ratio": l.warn}, nil,
				want{alert.ActionNone, PolicyRegression, "below", "for " + l.sens + " sensitivity"}},
			tcase{l.sens + " above warn tickets", sector(l.sens), map[string]string{"baseline_ratio": l.aboveWarn}, nil,
				want{alert.ActionTicket, PolicyRegression, "warn", "baseline_ratio " + l.aboveWarn + "x the 7d baseline, > " + l.warn + " warn for " + l.sens}},
			tcase{l.sens + " at critical only tickets", sector(l.sens), map[string]string{"baseline_ratio": l.crit}, nil,
				want{alert.ActionTicket, PolicyRegression, "warn", ""}},
			tcase{l.sens + " above critical pages", sector(l.sens), map[string]string{"baseline_ratio": l.top}, nil,
				want{alert.ActionPage, PolicyRegression, "critical", "> " + l.crit + " critical for " + l.sens}},
		)
	}
	cases = append(cases,
		tcase{"a sensitivity label overrides the sector", sector("low"), map[string]string{"baseline_ratio": "1.21", "sensitivity": "high"}, nil,
			want{alert.ActionPage, PolicyRegression, "critical", "for high sensitivity (sensitivity label)"}},
		tcase{"a bad sensitivity label falls back to the sector", sector("low"), map[string]string{"baseline_ratio": "1.21", "sensitivity": "extreme"}, nil,
			want{alert.ActionNone, PolicyRegression, "below", `sensitivity label "extreme" ignored`}},
		tcase{"an unknown sector is medium", &alert.Classification{Sector: alert.Unknown}, map[string]string{"baseline_ratio": "1.16"}, nil,
			want{alert.ActionTicket, PolicyRegression, "warn", "for medium sensitivity (default, sector unknown)"}},
		tcase{"no classification is medium", nil, map[string]string{"baseline_ratio": "1.31"}, nil,
			want{alert.ActionPage, PolicyRegression, "critical", "medium"}},
		tcase{"value and baseline annotations give the ratio", sector("high"), nil, map[string]string{"value": "125", "baseline": "100"},
			want{alert.ActionPage, PolicyRegression, "critical", "value 125.0 ÷ baseline 100.0 = 1.25x the 7d baseline"}},
		tcase{"a zero baseline is no input", sector("high"), map[string]string{"severity": "warning"}, map[string]string{"value": "125", "baseline": "0"},
			want{alert.ActionTicket, PolicySeverity, "warning", `baseline annotation "0" gives no ratio`}},
		tcase{"a lone value annotation is no input", sector("high"), nil, map[string]string{"value": "125"},
			want{alert.ActionTicket, PolicyDefault, "default", ""}},
		tcase{"a garbage ratio is no input", sector("high"), map[string]string{"baseline_ratio": "+Inf"}, nil,
			want{alert.ActionTicket, PolicyDefault, "default", `baseline_ratio label "+Inf" ignored: not finite`}},
	)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			check(t, e.Decide(newAlert("firing", tc.labels, tc.annot), tc.c, testNow), tc.want)
		})
	}
}

func TestRegressionQuotesTheConfiguredBaselineWindow(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Regression.BaselineWindow = mustDuration("14d")
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	d := e.Decide(firing(map[string]string{"baseline_ratio": "2"}), nil, testNow)
	check(t, d, want{alert.ActionPage, PolicyRegression, "critical", "the 14d baseline"})
}

func TestSeverityFallback(t *testing.T) {
	e := newEngine(t)
	cases := []struct {
		sev  string
		want alert.Action
		tier string
	}{
		{"critical", alert.ActionPage, "critical"},
		{"page", alert.ActionPage, "page"},
		{"Critical", alert.ActionPage, "critical"},
		{"warning", alert.ActionTicket, "warning"},
		{"ticket", alert.ActionTicket, "ticket"},
		{"error", alert.ActionTicket, "error"},
		{"info", alert.ActionNone, "info"},
		{"none", alert.ActionNone, "none"},
		{"major", alert.ActionTicket, "major"},
	}
	for _, tc := range cases {
		t.Run("severity "+tc.sev+" is "+string(tc.want), func(t *testing.T) {
			d := e.Decide(firing(map[string]string{"alertname": "X", "severity": tc.sev}), nil, testNow)
			check(t, d, want{tc.want, PolicySeverity, tc.tier, "severity=\"" + tc.sev + "\""})
		})
	}
	t.Run("no input at all is none by policy none", func(t *testing.T) {
		d := e.Decide(firing(map[string]string{"alertname": "X"}), nil, testNow)
		check(t, d, want{alert.ActionTicket, PolicyDefault, "default", "no policy input"})
		if d.SLO != "" || d.Budget != "" {
			t.Errorf("SLO %q budget %q, want both empty", d.SLO, d.Budget)
		}
	})
	t.Run("an empty severity is no input", func(t *testing.T) {
		d := e.Decide(firing(map[string]string{"severity": " "}), nil, testNow)
		check(t, d, want{alert.ActionTicket, PolicyDefault, "default", ""})
	})
}

func TestSeverityAliasesAndNumbers(t *testing.T) {
	e := newEngine(t)
	cases := []struct {
		name   string
		labels map[string]string
		want   want
	}{
		{"deckhouse severity_level 4 without severity tickets", map[string]string{"alertname": "NodeConntrackTableFull", "severity_level": "4"},
			want{alert.ActionTicket, PolicySeverity, "4", `severity_level="4" → ticket`}},
		{"severity_level 3 pages", map[string]string{"severity_level": "3"}, want{alert.ActionPage, PolicySeverity, "3", ""}},
		{"severity_level 1 pages", map[string]string{"severity_level": "1"}, want{alert.ActionPage, PolicySeverity, "1", ""}},
		{"severity_level 6 tickets", map[string]string{"severity_level": "6"}, want{alert.ActionTicket, PolicySeverity, "6", ""}},
		{"severity_level 7 is none, said so", map[string]string{"severity_level": "7"}, want{alert.ActionNone, PolicySeverity, "7", `severity_level="7" → none`}},
		{"priority P1 pages", map[string]string{"priority": "P1"}, want{alert.ActionPage, PolicySeverity, "p1", `priority="P1" → page`}},
		{"priority P3 tickets", map[string]string{"priority": "P3"}, want{alert.ActionTicket, PolicySeverity, "p3", ""}},
		{"priority P5 is none", map[string]string{"priority": "P5"}, want{alert.ActionNone, PolicySeverity, "p5", ""}},
		{"level emergency pages", map[string]string{"level": "EMERGENCY"}, want{alert.ActionPage, PolicySeverity, "emergency", ""}},
		// The most severe spellings of incident tooling must not be tickets.
		{"priority P0 pages", map[string]string{"priority": "P0"}, want{alert.ActionPage, PolicySeverity, "p0", `priority="P0" → page`}},
		{"severity SEV-1 pages (separators ignored)", map[string]string{"severity": "SEV-1"}, want{alert.ActionPage, PolicySeverity, "sev-1", `severity="SEV-1" → page`}},
		{"severity sev0 pages", map[string]string{"severity": "sev0"}, want{alert.ActionPage, PolicySeverity, "sev0", ""}},
		{"severity crit pages", map[string]string{"severity": "crit"}, want{alert.ActionPage, PolicySeverity, "crit", ""}},
		{"severity disaster (Zabbix) pages", map[string]string{"severity": "Disaster"}, want{alert.ActionPage, PolicySeverity, "disaster", ""}},
		{"priority blocker pages", map[string]string{"priority": "Blocker"}, want{alert.ActionPage, PolicySeverity, "blocker", ""}},
		{"severity S1 pages", map[string]string{"severity": "S1"}, want{alert.ActionPage, PolicySeverity, "s1", ""}},
		{"severity 'sev 4' tickets", map[string]string{"severity": "sev 4"}, want{alert.ActionTicket, PolicySeverity, "sev 4", ""}},
		{"urgency high pages (PagerDuty: high urgency notifies and escalates)", map[string]string{"urgency": "high"}, want{alert.ActionPage, PolicySeverity, "high", ""}},
		{"severity comes before severity_level", map[string]string{"severity": "critical", "severity_level": "5"},
			want{alert.ActionPage, PolicySeverity, "critical", ""}},
		{"a louder severity_level beats a ticket of severity", map[string]string{"severity": "warning", "severity_level": "1"},
			want{alert.ActionPage, PolicySeverity, "1", `severity_level="1" → page, louder than severity="warning" → ticket`}},
		{"an unrecognised severity gives way to a recognised alias", map[string]string{"severity": "S9", "severity_level": "2"},
			want{alert.ActionPage, PolicySeverity, "2", `severity label "S9" is not a recognised severity`}},
		{"an unrecognised severity alone is a ticket by default", map[string]string{"severity": "purple"},
			want{alert.ActionTicket, PolicyDefault, "default", ReasonDefault}},
		{"a negative level is not recognised", map[string]string{"level": "-1"},
			want{alert.ActionTicket, PolicyDefault, "default", `level label "-1" is not a recognised severity`}},
		{"informational is none", map[string]string{"severity": "Informational"}, want{alert.ActionNone, PolicySeverity, "informational", ""}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			check(t, e.Decide(firing(tc.labels), nil, testNow), tc.want)
		})
	}
	t.Run("the label order and the maps are configurable", func(t *testing.T) {
		cfg := DefaultConfig()
		cfg.SeverityLabels = []string{"urgency", "severity"}
		cfg.Severity["s9"] = alert.ActionPage
		cfg.SeverityNumbers = SeverityNumbers{Page: 1, Ticket: 2}
		e, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		check(t, e.Decide(firing(map[string]string{"severity": "info", "urgency": "s9"}), nil, testNow),
			want{alert.ActionPage, PolicySeverity, "s9", `urgency="s9" → page`})
		check(t, e.Decide(firing(map[string]string{"urgency": "3"}), nil, testNow),
			want{alert.ActionNone, PolicySeverity, "3", ""})
		check(t, e.Decide(firing(map[string]string{"severity_level": "1"}), nil, testNow),
			want{alert.ActionTicket, PolicyDefault, "default", ReasonDefault})
	})
}

func TestResolvedAlertsAreDecidedLikeFiringOnes(t *testing.T) {
	e := newEngine(t)
	for _, labels := range []map[string]string{
		{"sloth_id": "svc-slo", "sloth_severity": "page"},
		{"slo": "api", "long": "1h", "short": "5m", "severity": "critical"},
		{"burn_rate_1h": "20", "burn_rate_5m": "20"},
		{"baseline_ratio": "2"},
		{"severity": "critical"},
	} {
		fired := e.Decide(newAlert("firing", labels, nil), nil, testNow)
		resolved := e.Decide(newAlert("resolved", labels, nil), nil, testNow)
		if fired.Action != resolved.Action || fired.Policy != resolved.Policy || fired.Tier != resolved.Tier {
			t.Errorf("%v: resolved %s/%s/%s, firing %s/%s/%s", labels, resolved.Action, resolved.Policy, resolved.Tier,
				fired.Action, fired.Policy, fired.Tier)
		}
		if !hasReason(resolved, "decided as if firing") {
			t.Errorf("%v: resolved decision does not say it was decided as if firing: %q", labels, resolved.Reasons)
		}
	}
}

func TestSLOIdentity(t *testing.T) {
	cases := []struct {
		name   string
		labels map[string]string
		want   string
	}{
		{"sloth uses sloth_id", map[string]string{"sloth_id": "svc-avail", "sloth_slo": "avail", "slo": "other"}, "svc-avail"},
		{"pyrra uses slo and its identifying labels", map[string]string{
			"alertname": "ErrorBudgetBurn", "slo": "api-errors", "namespace": "prod", "job": "api",
			"long": "1h", "short": "5m", "severity": "critical", "exhaustion": "2d", "burn_rate_1h": "15",
		}, `api-errors{job="api",namespace="prod"}`},
		{"pyrra alerts of one SLO share the identity whatever their windows", map[string]string{
			"alertname": "ErrorBudgetBurn", "slo": "api-errors", "namespace": "prod", "job": "api",
			"long": "4d", "short": "6h", "severity": "warning", "exhaustion": "4w",
		}, `api-errors{job="api",namespace="prod"}`},
		{"pyrra without other labels is the slo name", map[string]string{"slo": "api", "long": "1h", "short": "5m"}, "api"},
		{"a plain slo label is its value", map[string]string{"slo": "checkout-latency", "job": "x"}, "checkout-latency"},
		// A hand-written slo label is often a category several services
		// share: their pages are separate incidents.
		{"a plain slo label with its scope", map[string]string{"slo": "availability", "service": "checkout", "namespace": "shop", "job": "x"}, "availability/namespace=shop/service=checkout"},
		{"another service's SLO of the same name is another SLO", map[string]string{"slo": "availability", "service": "payments", "namespace": "shop"}, "availability/namespace=shop/service=payments"},
		// Several Alertmanagers feeding the router: another region's SLO
		// of one service is another SLO (its ticket was suppressed by
		// the first region's page).
		{"another region's SLO is another SLO", map[string]string{"slo": "availability", "service": "shop", "region": "eu"}, "availability/region=eu/service=shop"},
		// Sloth keeps the SLI's labels on its alerts: one SLO, one page
		// per service (autometrics' sum by (service_name) …).
		{"sloth adds the labels that tell its alerts apart", map[string]string{
			"alertname": "High Error Rate SLO - 99%", "sloth_id": "svc-avail", "sloth_service": "svc", "sloth_slo": "avail",
			"sloth_window": "5m", "sloth_severity": "page", "severity": "critical", "service_name": "search",
			"routing_key": "myteam", "pager": "pagerduty", "burn_rate_1h": "15",
		}, "svc-avail/service_name=search"},
		{"braces are written _", map[string]string{"sloth_id": "svc-{avail}", "route": "/v1/{id}"}, "svc-_avail_/route=/v1/_id_"},
		{"a hand-written multi-window alert is its alertname and labels", map[string]string{
			"alertname": "KubeAPIErrorBudgetBurn", "cluster": "prod-eu1", "long": "1h", "short": "5m", "severity": "critical", "window": "1h",
		}, "KubeAPIErrorBudgetBurn/cluster=prod-eu1"},
		{"window labels without alertname or slo are no SLO", map[string]string{"long": "1h", "short": "5m"}, ""},
		{"no SLO is empty", map[string]string{"alertname": "HighCPU"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := firing(tc.labels)
			if got := SLOIdentity(a); got != tc.want {
				t.Errorf("SLOIdentity = %q, want %q", got, tc.want)
			}
			if got := newEngine(t).Decide(a, nil, testNow).SLO; got != tc.want {
				t.Errorf("Decision.SLO = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestBudgetFacts(t *testing.T) {
	e := newEngine(t)
	cases := []struct {
		name   string
		labels map[string]string
		annot  map[string]string
		want   string
	}{
		{"pyrra exhaustion", map[string]string{"slo": "a", "long": "1h", "short": "5m", "severity": "critical", "exhaustion": "2d"}, nil,
			"budget exhausted in 2d at this burn rate"},
		{"remaining as a ratio annotation", map[string]string{"sloth_id": "a", "sloth_severity": "page"}, map[string]string{"budget_remaining": "0.35"},
			"error budget remaining 35.0%"},
		{"remaining overspent", nil, map[string]string{"error_budget_remaining": "-0.2", "severity": "warning"},
			"error budget remaining -20.0%"},
		{"both", map[string]string{"exhaustion": "1w"}, map[string]string{"budget_remaining": "12%"},
			"error budget remaining 12.0%; budget exhausted in 1w at this burn rate"},
		{"garbage remaining is left out", nil, map[string]string{"budget_remaining": "lots"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := e.Decide(newAlert("firing", tc.labels, tc.annot), nil, testNow)
			if d.Budget != tc.want {
				t.Fatalf("Budget = %q, want %q", d.Budget, tc.want)
			}
			if tc.want != "" && !hasReason(d, "budget: "+tc.want) {
				t.Errorf("no budget reason: %q", d.Reasons)
			}
		})
	}
}

func TestDecideIsPure(t *testing.T) {
	e := newEngine(t)
	a := firing(map[string]string{"burn_rate_1h": "x", "burn_rate_5m": "y", "burn_rate_6h": "7", "burn_rate_30m": "7", "burn_rate_2h": "z"})
	first := e.Decide(a, nil, testNow)
	for i := 0; i < 20; i++ {
		got := e.Decide(a, nil, testNow)
		if strings.Join(got.Reasons, "|") != strings.Join(first.Reasons, "|") || got.Action != first.Action {
			t.Fatalf("decision %d differs: %q vs %q", i, got.Reasons, first.Reasons)
		}
	}
	if len(a.Labels) != 5 || a.Annotations == nil {
		t.Errorf("Decide changed the alert: %v", a.Labels)
	}
}

func TestCustomTiers(t *testing.T) {
	cfg := DefaultConfig()
	cfg.BurnRate.Tiers = []Tier{{Long: mustDuration("2h"), Short: mustDuration("10m"), Factor: 10, Action: alert.ActionPage}}
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	d := e.Decide(firing(map[string]string{"burn_rate_2h": "11", "burn_rate_10m": "12"}), nil, testNow)
	check(t, d, want{alert.ActionPage, PolicyBurnRate, "2h/10m>10.0", "burn rate 11.0 > 10.0 over 2h and 12.0 > 10.0 over 10m"})
	// The default 1h/5m tier is gone.
	d = e.Decide(firing(map[string]string{"burn_rate_1h": "20", "burn_rate_5m": "20"}), nil, testNow)
	check(t, d, want{alert.ActionTicket, PolicyDefault, "default", "no tier has both of its windows"})
}

func BenchmarkDecide(b *testing.B) {
	e := newEngine(b)
	alerts := map[string]*alert.Alert{
		"sloth": firing(map[string]string{"alertname": "HighErrorRate", "sloth_id": "svc-avail", "sloth_service": "svc",
			"sloth_slo": "avail", "sloth_severity": "page", "sloth_window": "5m"}),
		"burn-rate": firing(map[string]string{"alertname": "Burn", "job": "api", "burn_rate_1h": "15.2", "burn_rate_5m": "16",
			"burn_rate_6h": "3", "burn_rate_30m": "4"}),
		"capacity": firing(map[string]string{"alertname": "GPUSaturated", "utilization": "0.93"}),
		"severity": firing(map[string]string{"alertname": "Down", "severity": "critical", "job": "x", "instance": "y"}),
	}
	c := &alert.Classification{Sector: "llm-inference-api", Sensitivity: "medium"}
	for name, a := range alerts {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = e.Decide(a, c, testNow)
			}
		})
	}
}
