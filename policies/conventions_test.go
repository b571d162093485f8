package policies

import (
	"testing"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// Tests of the alerting conventions of other tools: severity scales,
// Grafana SLO, Pyrra's windows for 28- and 30-day SLOs, KPIs where lower is
// worse, and utilization values that may be a ratio above 100%.

func TestSeverityScaleWords(t *testing.T) {
	e := newEngine(t)
	cases := []struct {
		name   string
		labels map[string]string
		want   want
	}{
		// PagerDuty: high urgency notifies and escalates (a page), low
		// urgency notifies without paging (a ticket).
		{"urgency high pages", map[string]string{"urgency": "high"}, want{alert.ActionPage, PolicySeverity, "high", `urgency="high" → page`}},
		{"urgency low tickets", map[string]string{"urgency": "low"}, want{alert.ActionTicket, PolicySeverity, "low", `urgency="low" → ticket`}},
		// Nobl9 and many shops: high/medium/low, high the most severe.
		{"severity High pages", map[string]string{"severity": "High"}, want{alert.ActionPage, PolicySeverity, "high", `severity="High" → page`}},
		{"severity medium tickets", map[string]string{"severity": "medium"}, want{alert.ActionTicket, PolicySeverity, "medium", ""}},
		{"severity LOW tickets: a firing alert named low is still seen", map[string]string{"severity": "LOW"}, want{alert.ActionTicket, PolicySeverity, "low", ""}},
		{"priority low tickets", map[string]string{"priority": "low"}, want{alert.ActionTicket, PolicySeverity, "low", ""}},
		{"info stays none", map[string]string{"severity": "info"}, want{alert.ActionNone, PolicySeverity, "info", ""}},
		{"debug stays none", map[string]string{"urgency": "debug"}, want{alert.ActionNone, PolicySeverity, "debug", ""}},
		{"notice stays none", map[string]string{"severity": "notice"}, want{alert.ActionNone, PolicySeverity, "notice", ""}},
		{"P5 stays none", map[string]string{"priority": "P5"}, want{alert.ActionNone, PolicySeverity, "p5", ""}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			check(t, e.Decide(firing(tc.labels), nil, testNow), tc.want)
		})
	}
}

func TestGrafanaSLOSeverity(t *testing.T) {
	e := newEngine(t)
	slo := func(kv ...string) map[string]string {
		return withLabels(map[string]string{
			"alertname": "SLO Burn Rate Very High", "grafana_slo_uuid": "h3k8bq1", "grafana_folder": "SLOs",
		}, kv...)
	}
	cases := []struct {
		name   string
		labels map[string]string
		want   want
	}{
		{"fast burn (critical) pages", slo("grafana_slo_severity", "critical"),
			want{alert.ActionPage, PolicySeverity, "critical", `grafana_slo_severity="critical" → page`}},
		{"slow burn (warning) tickets", slo("grafana_slo_severity", "warning"),
			want{alert.ActionTicket, PolicySeverity, "warning", `grafana_slo_severity="warning" → ticket`}},
		// Grafana SLO's tier label beats a team-wide severity, as
		// sloth_severity does (grafana_slo_uuid says Grafana SLO made it).
		{"Grafana SLO's tier label beats an explicit severity", slo("grafana_slo_severity", "critical", "severity", "warning"),
			want{alert.ActionPage, PolicySeverity, "critical", `it beats severity="warning" → ticket`}},
		{"Grafana SLO's tier label decides over an unrecognised severity", slo("grafana_slo_severity", "critical", "severity", "slo"),
			want{alert.ActionPage, PolicySeverity, "critical", `grafana_slo_severity="critical" → page (Grafana SLO's tier label, grafana_slo_uuid present)`}},
		{"without a marker an unrecognised severity gives way to grafana_slo_severity", map[string]string{"grafana_slo_severity": "critical", "severity": "slo"},
			want{alert.ActionPage, PolicySeverity, "critical", `severity label "slo" is not a recognised severity`}},
		{"grafana_slo_severity comes before the other aliases", slo("grafana_slo_severity", "warning", "priority", "P1"),
			want{alert.ActionTicket, PolicySeverity, "warning", `grafana_slo_severity="warning" → ticket`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			check(t, e.Decide(firing(tc.labels), nil, testNow), tc.want)
		})
	}
}

// pyrraPairs are the window pairs Pyrra generates for 28- and 30-day SLOs
// (slo/rules.go: period ÷ 672, ÷ 112, ÷ 28 and ÷ 7 for the long windows,
// rounded to the minute), with the action of their tier.
var pyrraPairs = []struct {
	period, long, short string
	action              alert.Action
}{
	{"28d", "1h", "5m", alert.ActionPage},
	{"28d", "6h", "30m", alert.ActionPage},
	{"28d", "1d", "2h", alert.ActionTicket},
	{"28d", "4d", "6h", alert.ActionTicket},
	{"30d", "1h4m", "5m", alert.ActionPage},
	{"30d", "6h26m", "32m", alert.ActionPage},
	{"30d", "1d1h43m", "2h9m", alert.ActionTicket},
	{"30d", "4d6h51m", "6h26m", alert.ActionTicket},
}

func TestPyrraWindowsOf28And30DaySLOs(t *testing.T) {
	noTable := DefaultConfig()
	noTable.Pyrra.Windows = nil
	engines := map[string]*Engine{"default": newEngine(t)}
	var err error
	if engines["no 28-day table"], err = New(noTable); err != nil {
		t.Fatal(err)
	}
	pyrra := func(long, short string, kv ...string) map[string]string {
		return withLabels(map[string]string{
			"alertname": "ErrorBudgetBurn", "slo": "api-errors", "job": "api", "long": long, "short": short,
		}, kv...)
	}
	for _, p := range pyrraPairs {
		pair := p.long + "/" + p.short
		for name, e := range engines {
			t.Run(p.period+" "+pair+" without severity or period, "+name, func(t *testing.T) {
				check(t, e.Decide(firing(pyrra(p.long, p.short)), nil, testNow), want{p.action, PolicyPyrra, "", ""})
			})
			t.Run(p.period+" "+pair+" with a severity no table knows, "+name, func(t *testing.T) {
				check(t, e.Decide(firing(pyrra(p.long, p.short, "severity", "team-sre")), nil, testNow),
					want{p.action, PolicyPyrra, "", "names neither page nor ticket"})
			})
			t.Run(p.period+" "+pair+" with its slo_period, "+name, func(t *testing.T) {
				check(t, e.Decide(firing(pyrra(p.long, p.short, "slo_period", p.period)), nil, testNow),
					want{p.action, PolicyPyrra, "", "slo_period label " + p.period})
			})
		}
	}
	e := engines["default"]
	t.Run("the reason of a 30-day page pair", func(t *testing.T) {
		check(t, e.Decide(firing(pyrra("6h26m", "32m")), nil, testNow),
			want{alert.ActionPage, PolicyPyrra, "6h26m/32m", "long window 6h26m ≤ 30d/112 = 6h26m (default_period 30d) → page"})
	})
	// Custom severities that the general table maps to page or ticket are
	// honoured, whatever the pair.
	custom := []struct {
		sev, long, short string
		want             alert.Action
	}{
		{"P1", "6h26m", "32m", alert.ActionPage},
		{"page", "6h26m", "32m", alert.ActionPage},
		{"High", "1h4m", "5m", alert.ActionPage},
		{"SEV-1", "4d6h51m", "6h26m", alert.ActionPage},
		{"sev3", "1h", "5m", alert.ActionTicket},
		{"ticket", "6h", "30m", alert.ActionTicket},
	}
	for _, c := range custom {
		t.Run("custom severity "+c.sev+" on "+c.long+"/"+c.short, func(t *testing.T) {
			check(t, e.Decide(firing(pyrra(c.long, c.short, "severity", c.sev)), nil, testNow),
				want{c.want, PolicyPyrra, "", "pyrra severity=\"" + c.sev + "\" → " + string(c.want) + " by the severity table"})
		})
	}
	// A none word names no action: the pair decides.
	t.Run("severity info on a page pair is ranked by its window", func(t *testing.T) {
		check(t, e.Decide(firing(pyrra("6h26m", "32m", "severity", "info")), nil, testNow),
			want{alert.ActionPage, PolicyPyrra, "6h26m/32m", `pyrra severity="info" names neither page nor ticket`})
	})
}

func TestRegressionDirection(t *testing.T) {
	e := newEngine(t)
	kpi := func(id, name string) *alert.Classification {
		return &alert.Classification{Sector: "x", Sensitivity: "medium", KPIs: []alert.KPI{{ID: id, Name: name}}}
	}
	medium := &alert.Classification{Sector: "x", Sensitivity: "medium"}
	type tcase struct {
		name   string
		c      *alert.Classification
		labels map[string]string
		annot  map[string]string
		want   want
	}
	throughputDrop := map[string]string{"value": "700", "baseline": "1000"}
	cases := []tcase{
		{"a throughput drop pages (kpi label)", medium, map[string]string{"kpi": "throughput", "severity": "critical"}, throughputDrop,
			want{alert.ActionPage, PolicyRegression, "critical",
				`value 700.0 ÷ baseline 1000.0 = 0.70x the 7d baseline, < 0.7692 (1/1.30) critical for medium sensitivity (sector x); lower is worse (kpi label "throughput")`}},
		{"a prefix-cache hit rate that halved pages (classification)", kpi("PCHR", "prefix-cache hit rate"), nil, map[string]string{"baseline_ratio": "0.5"},
			want{alert.ActionPage, PolicyRegression, "critical", "lower is worse (KPI PCHR, as classified)"}},
		{"the KPI's name is known too", kpi("XYZ", "goodput"), nil, map[string]string{"baseline_ratio": "0.5"},
			want{alert.ActionPage, PolicyRegression, "critical", "lower is worse (KPI XYZ, as classified)"}},
		{"tokens/s as a kpi annotation", medium, nil, map[string]string{"kpi": "tokens/s", "baseline_ratio": "0.8"},
			want{alert.ActionTicket, PolicyRegression, "warn", "< 0.8696 (1/1.15) warn"}},
		{"regression_direction annotation says lower is worse", medium, nil,
			map[string]string{"regression_direction": "lower_is_worse", "value": "700", "baseline": "1000"},
			want{alert.ActionPage, PolicyRegression, "critical", "lower is worse (regression_direction annotation)"}},
		{"regression_direction is read case- and separator-insensitively", medium,
			map[string]string{"regression_direction": "Lower-Is-Worse"}, map[string]string{"baseline_ratio": "0.8"},
			want{alert.ActionTicket, PolicyRegression, "warn", "lower is worse (regression_direction label)"}},
		{"regression_direction beats the KPI", kpi("TPS", "tokens/s"), map[string]string{"regression_direction": "higher_is_worse", "severity": "critical"},
			map[string]string{"baseline_ratio": "0.5"},
			want{alert.ActionNone, PolicyRegression, "below", "higher is worse (regression_direction label)"}},
		{"a bad regression_direction falls back to the KPI", kpi("MFU", "model FLOPs utilization"), map[string]string{"regression_direction": "sideways"},
			map[string]string{"baseline_ratio": "0.5"},
			want{alert.ActionPage, PolicyRegression, "critical", `regression_direction label "sideways" ignored`}},
		// Lower is worse, at and around 1/threshold (medium: 1/1.15, 1/1.30).
		{"lower is worse at 0.87 is nothing", kpi("CHR", ""), nil, map[string]string{"baseline_ratio": "0.87"},
			want{alert.ActionNone, PolicyRegression, "below", "≥ 0.8696 (1/1.15) warn"}},
		{"lower is worse at 0.86 tickets", kpi("CHR", ""), nil, map[string]string{"baseline_ratio": "0.86"},
			want{alert.ActionTicket, PolicyRegression, "warn", ""}},
		{"lower is worse at 0.77 tickets", kpi("CHR", ""), nil, map[string]string{"baseline_ratio": "0.77"},
			want{alert.ActionTicket, PolicyRegression, "warn", ""}},
		{"lower is worse at 0.76 pages", kpi("CHR", ""), nil, map[string]string{"baseline_ratio": "0.76"},
			want{alert.ActionPage, PolicyRegression, "critical", ""}},
		{"lower is worse follows the sensitivity", &alert.Classification{Sector: "y", Sensitivity: "low", KPIs: []alert.KPI{{ID: "MFU"}}},
			nil, map[string]string{"baseline_ratio": "0.7"},
			want{alert.ActionTicket, PolicyRegression, "warn", "< 0.80 (1/1.25) warn for low sensitivity"}},
		// The harmless direction, said by the alert: today's none, even
		// with a critical severity.
		{"a hit rate that rose is no regression", kpi("PCHR", ""), map[string]string{"kpi": "PCHR", "severity": "critical"}, map[string]string{"baseline_ratio": "1.5"},
			want{alert.ActionNone, PolicyRegression, "below", `lower is worse (kpi label "PCHR")`}},
		{"a latency that fell is no regression", kpi("TTFT", ""), map[string]string{"kpi": "TTFT", "severity": "critical"}, map[string]string{"baseline_ratio": "0.5"},
			want{alert.ActionNone, PolicyRegression, "below", `higher is worse (kpi label "TTFT")`}},
		// The direction only classified is a guess: it adds a regression,
		// never drops one. A latency regression whose expression is gated
		// by `and on(instance) up == 1` classifies as KPI UP (lower is
		// worse); it still pages at 1.60x.
		{"a latency regression classified as UP still pages", kpi("UP", "target up / scrape health"), map[string]string{"severity": "critical"}, map[string]string{"baseline_ratio": "1.60"},
			want{alert.ActionPage, PolicyRegression, "critical", "the classified KPI is a guess"}},
		{"a classified hit rate that rose is read as it fired", kpi("PCHR", ""), nil, map[string]string{"baseline_ratio": "1.5"},
			want{alert.ActionPage, PolicyRegression, "critical", "> 1.30 critical"}},
		{"a classified latency that fell gives way to its severity", kpi("TTFT", ""), map[string]string{"severity": "critical"}, map[string]string{"baseline_ratio": "0.5"},
			want{alert.ActionPage, PolicySeverity, "critical", "the severity label decides"}},
		// Direction unknown: a drop below 1/warn is a regression if lower is
		// worse, so a severity that pages or tickets decides.
		{"unknown direction: a critical drop pages on its severity", medium, map[string]string{"severity": "critical"}, throughputDrop,
			want{alert.ActionPage, PolicySeverity, "critical", "if lower is worse for this KPI, 0.70x is a regression (< 0.7692 (1/1.30) critical)"}},
		// The guess names the tier the ratio reaches: 0.70x is below the
		// critical line, 0.80x only below the warn line (an audit: 0.70x
		// read "< 0.8696 (1/1.15) warn").
		{"unknown direction: a drop between the lines names warn", medium, map[string]string{"severity": "critical"}, map[string]string{"value": "800", "baseline": "1000"},
			want{alert.ActionPage, PolicySeverity, "critical", "if lower is worse for this KPI, 0.80x is a regression (< 0.8696 (1/1.15) warn)"}},
		{"unknown direction: a warning drop tickets on its severity", medium, map[string]string{"severity": "warning"}, throughputDrop,
			want{alert.ActionTicket, PolicySeverity, "warning", "the severity label decides"}},
		{"unknown direction without severity is none, said so", medium, nil, throughputDrop,
			want{alert.ActionNone, PolicyRegression, "below", "say so with regression_direction: lower_is_worse"}},
		{"unknown direction with an info severity is none", medium, map[string]string{"severity": "info"}, throughputDrop,
			want{alert.ActionNone, PolicyRegression, "below", "higher is worse by default (direction unknown)"}},
		{"unknown direction: a small drop is none whatever the severity", medium, map[string]string{"severity": "critical"},
			map[string]string{"baseline_ratio": "0.95"},
			want{alert.ActionNone, PolicyRegression, "below", "≤ 1.15 warn"}},
		{"unknown direction: a rise is judged as today", medium, map[string]string{"severity": "info"}, map[string]string{"baseline_ratio": "1.31"},
			want{alert.ActionPage, PolicyRegression, "critical", "> 1.30 critical for medium sensitivity (sector x); higher is worse by default"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			check(t, e.Decide(newAlert("firing", tc.labels, tc.annot), tc.c, testNow), tc.want)
		})
	}
}

func TestKnownKPIDirectionsAgree(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range knownKPIDirections {
		for _, s := range []string{k.id, k.name} {
			if s == "" {
				continue
			}
			key := kpiKey(s)
			if lower, dup := seen[key]; dup && lower != k.lower {
				t.Errorf("%q is listed as both lower- and higher-is-worse", s)
			}
			seen[key] = k.lower
		}
	}
}

func TestCapacityAmbiguousValue(t *testing.T) {
	e := newEngine(t)
	cases := []struct {
		name   string
		labels map[string]string
		annot  map[string]string
		want   want
	}{
		{"1.2 on a critical alert pages on its severity", map[string]string{"severity": "critical"}, map[string]string{"utilization": "1.2"},
			want{alert.ActionPage, PolicySeverity, "critical",
				`utilization annotation "1.2" is ambiguous: 1.2% or 120.0%? Read as a percentage: utilization 1.2% ≤ 80.0% warn → none; read as a ratio: utilization 120.0% > 90.0% critical → page; the severity label decides`}},
		{"2 is still ambiguous", map[string]string{"severity": "critical", "utilization": "2"}, nil,
			want{alert.ActionPage, PolicySeverity, "critical", "is ambiguous: 2.0% or 200.0%?"}},
		{"1.5 on a warning alert tickets on its severity", map[string]string{"severity": "warning"}, map[string]string{"utilization": "1.5"},
			want{alert.ActionTicket, PolicySeverity, "warning", "is ambiguous"}},
		{"1.2 without severity is none, said so", nil, map[string]string{"utilization": "1.2"},
			want{alert.ActionNone, PolicyCapacity, "below", `write a ratio above 100% as "120.0%"`}},
		{"1.2 with an info severity is none", map[string]string{"severity": "info"}, map[string]string{"utilization": "1.2"},
			want{alert.ActionNone, PolicyCapacity, "below", "is ambiguous"}},
		{"1.2% is not ambiguous", map[string]string{"severity": "critical"}, map[string]string{"utilization": "1.2%"},
			want{alert.ActionNone, PolicyCapacity, "below", "utilization 1.2% ≤ 80.0% warn"}},
		{"2.5 is a percentage", map[string]string{"severity": "critical"}, map[string]string{"utilization": "2.5"},
			want{alert.ActionNone, PolicyCapacity, "below", "utilization 2.5% ≤ 80.0% warn"}},
		{"1 is a ratio: 100%", map[string]string{"severity": "warning"}, map[string]string{"utilization": "1"},
			want{alert.ActionPage, PolicyCapacity, "critical", "utilization 100.0% > 90.0% critical"}},
	}
	runFiring(t, e, cases)
}

func TestReadRatioAmbiguity(t *testing.T) {
	cases := map[string]bool{"0.85": false, "1": false, "1.01": true, "1.2": true, "2": true, "2.01": false, "85": false, "120%": false, "1.5%": false}
	for in, want := range cases {
		if _, got, err := readRatio(in); err != nil || got != want {
			t.Errorf("readRatio(%q) ambiguous = %v, %v; want %v", in, got, err, want)
		}
	}
}
