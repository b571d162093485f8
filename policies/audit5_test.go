package policies

import (
	"strings"
	"testing"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// The tests of this file hold the fixes of audit A (page/ticket/none on
// SLO alerts): Pyrra's severity annotation, two spellings of one burn-rate
// window, the page signals of a long/short alert, and reasons that say
// which rule decided.

// F1: Pyrra v0.1.0 to v0.3.1 wrote its severity as an annotation; every
// other input is read from the labels, then the annotations.
func TestPyrraSeverityAnnotation(t *testing.T) {
	e := newEngine(t)
	pyrraAnn := func(slo, long, short string, ann map[string]string) *alert.Alert {
		return newAlert("firing", map[string]string{"alertname": "ErrorBudgetBurn", "job": "api", "slo": slo, "long": long, "short": short}, ann)
	}
	// A 7-day SLO's slow pair, warning: a ticket, not the 28-day table's page.
	check(t, e.Decide(pyrraAnn("api-errors", "6h", "30m", map[string]string{"severity": "warning"}), nil, testNow),
		want{alert.ActionTicket, PolicyPyrra, "warning", `pyrra severity annotation "warning" → ticket (window pair 6h/30m) (pyrra SLO api-errors)`})
	// A 90-day SLO's second fast pair, critical: a page, not a ticket
	// against the 30-day default period.
	check(t, e.Decide(pyrraAnn("api-availability", "19h17m", "1h36m", map[string]string{"severity": "critical"}), nil, testNow),
		want{alert.ActionPage, PolicyPyrra, "critical", `pyrra severity annotation "critical" → page`})
	// A custom value in the annotation, by the severity table.
	check(t, e.Decide(pyrraAnn("api", "19h17m", "1h36m", map[string]string{"severity": "P1"}), nil, testNow),
		want{alert.ActionPage, PolicyPyrra, "p1", `pyrra severity annotation "P1" → page by the severity table`})
	// The label comes first.
	a := pyrraAnn("api", "1h", "5m", map[string]string{"severity": "critical"})
	a.Labels["severity"] = "warning"
	check(t, e.Decide(a, nil, testNow), want{alert.ActionTicket, PolicyPyrra, "warning", `pyrra severity="warning" → ticket`})
	// A hand-written multi-window alert reads it too.
	h := newAlert("firing", map[string]string{"alertname": "APIErrorBudgetBurn", "long": "1d", "short": "2h"}, map[string]string{"severity": "critical"})
	check(t, e.Decide(h, nil, testNow), want{alert.ActionPage, PolicyPyrra, "critical", `severity annotation "critical" → page (burn-rate window pair 1d/2h)`})
}

// F2: two spellings of one window (burn_rate_1h and burn_rate_60m) give
// the same decision every time: the label's beats the annotation's, then
// the higher burn rate; the value not used is named.
func TestBurnRateTwoSpellingsOfOneWindow(t *testing.T) {
	e := newEngine(t)
	decide := func(labels, ann map[string]string) alert.Decision {
		return e.Decide(newAlert("firing", labels, ann), nil, testNow)
	}
	first := decide(map[string]string{"alertname": "B"}, map[string]string{"burn_rate_1h": "20", "burn_rate_60m": "1", "burn_rate_5m": "20"})
	check(t, first, want{alert.ActionPage, PolicyBurnRate, "1h/5m>14.4", `burn_rate_60m annotation "1" ignored: burn_rate_1h annotation "20" gives the 1h window`})
	for i := 0; i < 200; i++ {
		d := decide(map[string]string{"alertname": "B"}, map[string]string{"burn_rate_1h": "20", "burn_rate_60m": "1", "burn_rate_5m": "20"})
		if d.Action != first.Action || strings.Join(d.Reasons, "|") != strings.Join(first.Reasons, "|") {
			t.Fatalf("run %d: %s %q, first %s %q", i, d.Action, d.Reasons, first.Action, first.Reasons)
		}
	}
	// The higher of the two, whichever spelling carries it.
	check(t, decide(nil, map[string]string{"burn_rate_1h": "1", "burn_rate_60m": "20", "burn_rate_5m": "20"}),
		want{alert.ActionPage, PolicyBurnRate, "1h/5m>14.4", `burn_rate_1h annotation "1" ignored: burn_rate_60m annotation "20" gives the 1h window`})
	// The label beats the annotation, even when lower.
	check(t, decide(map[string]string{"burn_rate_1h": "1"}, map[string]string{"burn_rate_60m": "20", "burn_rate_5m": "20"}),
		want{alert.ActionNone, PolicyBurnRate, "below", `burn_rate_60m annotation "20" ignored: burn_rate_1h label "1" gives the 1h window`})
	// The same name as label and annotation, different values: named too.
	check(t, decide(map[string]string{"burn_rate_1h": "20", "burn_rate_5m": "20"}, map[string]string{"burn_rate_1h": "1"}),
		want{alert.ActionPage, PolicyBurnRate, "1h/5m>14.4", `burn_rate_1h annotation "1" ignored: burn_rate_1h label "20" gives the 1h window`})
	// Equal values are nothing lost: no note.
	d := decide(nil, map[string]string{"burn_rate_1h": "20", "burn_rate_60m": "20.0", "burn_rate_5m": "20"})
	if len(d.Reasons) != 1 {
		t.Errorf("equal spellings: reasons %q, want the deciding one only", d.Reasons)
	}
	// A spelling that is not a number is named whatever the map order.
	for i := 0; i < 50; i++ {
		d := decide(nil, map[string]string{"burn_rate_1h": "NaN", "burn_rate_60m": "20", "burn_rate_5m": "20"})
		check(t, d, want{alert.ActionPage, PolicyBurnRate, "1h/5m>14.4", `burn_rate_1h annotation "NaN" ignored`})
	}
}

// F3: a long/short alert honours the page signals of the severity policy:
// a paging label, the other severity labels (a none gives way), Grafana
// SLO's tier label and a label name in another case.
func TestLongShortHonoursPageSignals(t *testing.T) {
	e := newEngine(t)
	cases := []struct {
		name   string
		labels map[string]string
		want   want
	}{
		{"GitLab's pager beside s2", map[string]string{"alertname": "ApdexSLOViolation", "long": "6h", "short": "30m", "pager": "pagerduty", "severity": "s2"},
			want{alert.ActionPage, PolicyPyrra, "pager=pagerduty", `pager="pagerduty" → page (an explicit paging label; without it severity="s2" → ticket) (burn-rate window pair 6h/30m)`}},
		{"a none severity gives way to priority P1", map[string]string{"alertname": "APIErrorBudgetBurn", "long": "1d", "short": "2h", "severity": "none", "priority": "P1"},
			want{alert.ActionPage, PolicyPyrra, "p1", `priority="P1" → page (severity="none" → none gives way`}},
		{"Grafana SLO's tier label", map[string]string{"alertname": "SLOBurn", "long": "1d", "short": "2h", "grafana_slo_uuid": "abc", "grafana_slo_severity": "critical"},
			want{alert.ActionPage, PolicyPyrra, "critical", `grafana_slo_severity="critical" → page (Grafana SLO's tier label, grafana_slo_uuid present) (burn-rate window pair 1d/2h)`}},
		{"a severity label in another case", map[string]string{"alertname": "APIErrorBudgetBurn", "long": "1h", "short": "5m", "Severity": "warning"},
			want{alert.ActionTicket, PolicyPyrra, "warning", `Severity="warning" → ticket (label Severity read as severity`}},
		{"an unknown severity gives way to priority", map[string]string{"alertname": "ErrorBudgetBurn", "slo": "api", "long": "1h", "short": "5m", "severity": "S9", "priority": "P4"},
			want{alert.ActionTicket, PolicyPyrra, "p4", `pyrra severity="S9" names neither page nor ticket`}},
		// The order of the severity labels holds: severity first.
		{"severity warning beside priority P1", map[string]string{"alertname": "APIErrorBudgetBurn", "long": "1h", "short": "5m", "severity": "warning", "priority": "P1"},
			want{alert.ActionTicket, PolicyPyrra, "warning", `severity="warning" → ticket (burn-rate window pair 1h/5m)`}},
		// Only nones: the window pair decides, and says which none.
		{"only nones leave it to the pair", map[string]string{"alertname": "ErrorBudgetBurn", "slo": "api", "long": "1d", "short": "2h", "priority": "P5"},
			want{alert.ActionTicket, PolicyPyrra, "1d/2h", `pyrra window pair 1d/2h → ticket (28-day table; priority="P5" names no action, no period)`}},
		// A page value that is not a request is ignored, as in the severity policy.
		{"a page label that is a path", map[string]string{"alertname": "ErrorBudgetBurn", "slo": "api", "long": "1d", "short": "2h", "page": "/index.html", "severity": "warning"},
			want{alert.ActionTicket, PolicyPyrra, "warning", `pyrra severity="warning" → ticket`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			check(t, e.Decide(firing(tc.labels), nil, testNow), tc.want)
		})
	}
}

// F4: the window table's reason says what the severity was and which
// table decided.
func TestPyrraWindowTableReason(t *testing.T) {
	e := newEngine(t)
	info := firing(map[string]string{"alertname": "ErrorBudgetBurn", "slo": "api", "long": "6h", "short": "30m", "severity": "info", "exhaustion": "1d4h"})
	d := e.Decide(info, nil, testNow)
	check(t, d, want{alert.ActionPage, PolicyPyrra, "6h/30m", `pyrra window pair 6h/30m → page (28-day table; severity="info" names no action, no period) (pyrra SLO api)`})
	if hasReason(d, "no severity") {
		t.Errorf("the alert has a severity: %q", d.Reasons)
	}
	unknown := firing(map[string]string{"alertname": "APIErrorBudgetBurn", "long": "1d", "short": "2h", "severity": "team-sre"})
	check(t, e.Decide(unknown, nil, testNow),
		want{alert.ActionTicket, PolicyPyrra, "1d/2h", `burn-rate window pair 1d/2h → ticket (28-day table; severity="team-sre" names no action, no period)`})

	cfg := DefaultConfig()
	cfg.Pyrra.Windows = append(cfg.Pyrra.Windows, WindowAction{Long: mustDuration("1h4m"), Short: mustDuration("5m"), Action: alert.ActionPage})
	ce, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	check(t, ce.Decide(firing(map[string]string{"slo": "api", "long": "1h4m", "short": "5m"}), nil, testNow),
		want{alert.ActionPage, PolicyPyrra, "1h4m/5m", `pyrra window pair 1h4m/5m → page (configured window table, no severity or period)`})
	check(t, ce.Decide(firing(map[string]string{"slo": "api", "long": "6h", "short": "30m"}), nil, testNow),
		want{alert.ActionPage, PolicyPyrra, "6h/30m", `(configured window table, no severity or period)`})
}

// F5: burn rates over windows no tier has: the reasons name the windows
// found and the tiers' pairs.
func TestBurnRateNoTierNamesWindows(t *testing.T) {
	e := newEngine(t)
	d := e.Decide(newAlert("firing", map[string]string{"alertname": "B"}, map[string]string{"burn_rate_1h4m": "20", "burn_rate_5m": "20"}), nil, testNow)
	check(t, d, want{alert.ActionTicket, PolicyDefault, "default",
		"burn_rate_<window> for 5m, 1h4m: no tier has both of its windows (tiers 1h/5m, 6h/30m, 1d/2h, 3d/6h)"})
	if !hasReason(d, "burn_rate_<window> for no tier's pair") || hasReason(d, "no sloth_severity, long/short window labels, burn_rate_<window>, ") {
		t.Errorf("the default reason must not deny the burn rates: %q", d.Reasons)
	}
}

// F6: a budget_remaining that is not used is named; a bare negative
// percentage is read like a bare positive one.
func TestBudgetRemainingNamed(t *testing.T) {
	e := newEngine(t)
	cases := []struct {
		raw, budget, reason string
	}{
		{"NaN", "", `budget_remaining annotation "NaN" ignored: not finite`},
		{"abc", "", `budget_remaining annotation "abc" ignored`},
		{"150", "", `budget_remaining annotation "150" ignored: a bare number beyond ±100 is neither a ratio nor a percentage`},
		{"-50", "error budget remaining -50.0%", `budget_remaining annotation "-50" read as a percentage, -50.0%, as a bare number beyond ±1 is; write "-5000%" if it is the ratio -50`},
		{"41", "error budget remaining 41.0%", ""},
		{"-0.2", "error budget remaining -20.0%", ""},
		{"-150%", "error budget remaining -150.0%", ""},
	}
	for _, tc := range cases {
		t.Run(tc.raw, func(t *testing.T) {
			d := e.Decide(newAlert("firing", map[string]string{"sloth_severity": "page"}, map[string]string{"budget_remaining": tc.raw}), nil, testNow)
			if d.Budget != tc.budget {
				t.Errorf("Budget = %q, want %q (reasons %q)", d.Budget, tc.budget, d.Reasons)
			}
			if tc.reason != "" && !hasReason(d, tc.reason) {
				t.Errorf("no reason %q: %q", tc.reason, d.Reasons)
			}
			if tc.reason == "" && len(d.Reasons) != 2 {
				t.Errorf("reasons %q, want the decision's and the budget's", d.Reasons)
			}
		})
	}
}

// F7: tiers and messages.
func TestAuditACosmetics(t *testing.T) {
	e := newEngine(t)
	check(t, e.Decide(firing(map[string]string{"sloth_severity": " Ticket "}), nil, testNow), want{alert.ActionTicket, PolicySloth, "ticket", ""})
	check(t, e.Decide(firing(map[string]string{"slo": "a", "long": "6h", "short": "30m", "slo_period": "0s"}), nil, testNow),
		want{alert.ActionPage, PolicyPyrra, "6h/30m", `pyrra period slo_period label "0s" ignored: not positive`})
	check(t, e.Decide(firing(map[string]string{"slo": "a", "long": "2d", "short": "4h"}), nil, testNow),
		want{alert.ActionTicket, PolicyPyrra, "2d/4h", "long window 2d > 30d/112 = 6h26m (default_period 30d) → ticket"})
}

// Review R1 (B2): three spellings of one window give one reason list
// whatever the map order: each value not used is named against the value
// finally used, not against whichever was kept when it was read.
func TestBurnRateThreeSpellingsReasonsStable(t *testing.T) {
	e := newEngine(t)
	for _, tc := range []struct {
		labels, ann map[string]string
		want        []string
	}{
		{map[string]string{"alertname": "B"}, map[string]string{"burn_rate_1h": "1", "burn_rate_60m": "20", "burn_rate_3600s": "5", "burn_rate_5m": "20"},
			[]string{"burn rate 20.0 > 14.4 over 1h and 20.0 > 14.4 over 5m",
				`burn_rate_1h annotation "1" ignored: burn_rate_60m annotation "20" gives the 1h window`,
				`burn_rate_3600s annotation "5" ignored: burn_rate_60m annotation "20" gives the 1h window`}},
		// The label's, lowest, beats both annotations.
		{map[string]string{"alertname": "B", "burn_rate_1h": "1"}, map[string]string{"burn_rate_60m": "20", "burn_rate_3600s": "5", "burn_rate_5m": "20"},
			[]string{"burn rate 1.0 ≤ 14.4 over 1h and 20.0 > 14.4 over 5m: no page",
				`burn_rate_3600s annotation "5" ignored: burn_rate_1h label "1" gives the 1h window`,
				`burn_rate_60m annotation "20" ignored: burn_rate_1h label "1" gives the 1h window`}},
	} {
		for i := 0; i < 300; i++ {
			d := e.Decide(newAlert("firing", tc.labels, tc.ann), nil, testNow)
			if got := strings.Join(d.Reasons, "|"); !strings.HasPrefix(got, tc.want[0]) || !strings.HasSuffix(got, strings.Join(tc.want[1:], "|")) {
				t.Fatalf("run %d: %s %q, want reasons %q", i, d.Action, d.Reasons, tc.want)
			}
		}
	}
}

// Review R1 (B3): a long/short alert reads Grafana SLO's tier label as the
// severity policy does: a marked tier beats severity either way, and an
// unmarked one louder than severity wins.
func TestLongShortGrafanaTierAsSeverityPolicy(t *testing.T) {
	e := newEngine(t)
	for _, tc := range []struct {
		labels map[string]string
		want   want
	}{
		{map[string]string{"alertname": "X", "severity": "warning", "grafana_slo_severity": "critical"},
			want{alert.ActionPage, PolicyPyrra, "critical", `grafana_slo_severity="critical" → page, louder than severity="warning" → ticket (no Grafana SLO marker label such as grafana_slo_uuid says which is the generator's tier: the louder decides) (burn-rate window pair 1d/2h)`}},
		{map[string]string{"alertname": "X", "severity": "warning", "grafana_slo_severity": "critical", "grafana_slo_uuid": "abc"},
			want{alert.ActionPage, PolicyPyrra, "critical", `grafana_slo_severity="critical" → page (Grafana SLO's tier label, grafana_slo_uuid present; it beats severity="warning" → ticket) (burn-rate window pair 1d/2h)`}},
		// A severity the severity table knows but the pyrra table does not.
		{map[string]string{"alertname": "X", "severity": "P3", "grafana_slo_severity": "critical"},
			want{alert.ActionPage, PolicyPyrra, "critical", `louder than severity="P3" → ticket`}},
		// Either way: the generator's marked ticket beats severity's page.
		{map[string]string{"alertname": "X", "severity": "critical", "grafana_slo_severity": "warning", "grafana_slo_window": "5m"},
			want{alert.ActionTicket, PolicyPyrra, "warning", `grafana_slo_severity="warning" → ticket (Grafana SLO's tier label, grafana_slo_window present; it beats severity="critical" → page)`}},
		// Unmarked and quieter: severity decides.
		{map[string]string{"alertname": "X", "severity": "critical", "grafana_slo_severity": "warning"},
			want{alert.ActionPage, PolicyPyrra, "critical", `severity="critical" → page (burn-rate window pair 1d/2h)`}},
		// A marked none gives way, and is the none named.
		{map[string]string{"alertname": "X", "severity": "info", "grafana_slo_severity": "info", "grafana_slo_uuid": "abc", "priority": "P1"},
			want{alert.ActionPage, PolicyPyrra, "p1", `priority="P1" → page (grafana_slo_severity="info" → none gives way`}},
	} {
		plain := e.Decide(firing(tc.labels), nil, testNow)
		ls := map[string]string{"long": "1d", "short": "2h"}
		for k, v := range tc.labels {
			ls[k] = v
		}
		pair := e.Decide(firing(ls), nil, testNow)
		if plain.Action != pair.Action || plain.Tier != pair.Tier {
			t.Errorf("%v: severity policy %s %s (%q), long/short %s %s (%q)", tc.labels, plain.Action, plain.Tier, plain.Reasons, pair.Action, pair.Tier, pair.Reasons)
		}
		check(t, pair, tc.want)
	}
}

// Review R1 (B4): a none read from a label in another case or from a
// marked Grafana SLO tier is named by its label and value in the window
// pair's reason, without its parenthetical.
func TestLongShortNoneReasonText(t *testing.T) {
	e := newEngine(t)
	for _, tc := range []struct {
		labels       map[string]string
		reason, note string
	}{
		{map[string]string{"alertname": "X", "slo": "api", "long": "1d", "short": "2h", "Severity": "info"},
			`pyrra window pair 1d/2h → ticket (28-day table; Severity="info" names no action, no period) (pyrra SLO api)`,
			`Severity="info" names neither page nor ticket: the window pair decides`},
		{map[string]string{"alertname": "X", "slo": "api", "long": "1d", "short": "2h", "grafana_slo_severity": "info", "grafana_slo_uuid": "u"},
			`pyrra window pair 1d/2h → ticket (28-day table; grafana_slo_severity="info" names no action, no period) (pyrra SLO api)`,
			`grafana_slo_severity="info" names neither page nor ticket: the window pair decides`},
	} {
		d := e.Decide(firing(tc.labels), nil, testNow)
		if len(d.Reasons) < 2 || d.Reasons[0] != tc.reason || d.Reasons[1] != tc.note {
			t.Errorf("%v: reasons %q, want %q then %q", tc.labels, d.Reasons, tc.reason, tc.note)
		}
	}
}

// Review R1 (C1): a paging label is read by the long/short and severity
// policies only (docs/policies.md: "as the severity policy does"): a Sloth
// ticket or a burn rate below every tier does not page for it.
func TestPagingLabelOnlyWhereSeverityIsRead(t *testing.T) {
	e := newEngine(t)
	check(t, e.Decide(firing(map[string]string{"alertname": "X", "sloth_severity": "ticket", "pager": "pagerduty"}), nil, testNow),
		want{alert.ActionTicket, PolicySloth, "ticket", `sloth_severity="ticket" → ticket`})
	check(t, e.Decide(firing(map[string]string{"alertname": "X", "burn_rate_1h": "1", "burn_rate_5m": "1", "pager": "pagerduty"}), nil, testNow),
		want{alert.ActionNone, PolicyBurnRate, "below", ""})
	check(t, e.Decide(firing(map[string]string{"alertname": "X", "long": "1d", "short": "2h", "pager": "pagerduty"}), nil, testNow),
		want{alert.ActionPage, PolicyPyrra, "pager=pagerduty", `pager="pagerduty" → page (an explicit paging label) (burn-rate window pair 1d/2h)`})
}

// Review R1 (H1): a label name in another case is found with the one-pass
// check in front of the per-label scan: upper-case ASCII, a non-ASCII
// letter that folds to ASCII (the long s), and a configured severity
// label that is not lower-case.
func TestFoldedSeverityCheapCheck(t *testing.T) {
	e := newEngine(t)
	for _, l := range []map[string]string{
		{"alertname": "X", "SEVERITY": "critical"},
		{"alertname": "X", "ſeverity": "critical"},
		{"alertname": "X", "long": "1d", "short": "2h", "Priority": "P1"},
	} {
		if d := e.Decide(firing(l), nil, testNow); d.Action != alert.ActionPage || !hasReason(d, "label names are case-sensitive") {
			t.Errorf("%v: %s %q, want a page by the label in another case", l, d.Action, d.Reasons)
		}
	}
	if d := e.Decide(firing(map[string]string{"alertname": "X", "job": "api", "severity_levels": "1"}), nil, testNow); d.Policy != PolicyDefault {
		t.Errorf("a lower-case name that is no severity label: %s %s %q", d.Action, d.Policy, d.Reasons)
	}
	cfg := DefaultConfig()
	cfg.SeverityLabels = []string{"Severity"}
	ue, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if d := ue.Decide(firing(map[string]string{"alertname": "X", "severity": "critical"}), nil, testNow); d.Action != alert.ActionPage || !hasReason(d, "label severity read as Severity") {
		t.Errorf("severity_labels [Severity], label severity: %s %q, want a page", d.Action, d.Reasons)
	}
}

// BenchmarkDecidePyrra measures the long/short path, which now reads the
// paging and severity labels.
func BenchmarkDecidePyrra(b *testing.B) {
	e := newEngine(b)
	alerts := map[string]*alert.Alert{
		"severity":    firing(map[string]string{"alertname": "ErrorBudgetBurn", "slo": "api", "job": "api", "long": "1h", "short": "5m", "severity": "critical"}),
		"no-severity": firing(map[string]string{"alertname": "KubeAPIErrorBudgetBurn", "long": "6h", "short": "30m"}),
	}
	for name, a := range alerts {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = e.Decide(a, nil, testNow)
			}
		})
	}
}
