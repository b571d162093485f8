package policies

import (
	"testing"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// The tests of this file hold the fixes of an audit against real alerting
// rules (docs/policies.md, sections 4 and 5).

// TestTopTierSeverityWords: syslog's emerg, panic, fatal, catastrophic and
// "very high" page; "very low" tickets like lowest. Negations and parts
// that disagree stay unrecognised.
func TestTopTierSeverityWords(t *testing.T) {
	e := newEngine(t)
	const unrecognised = alert.Action("not recognised")
	cases := []struct {
		in   string
		want alert.Action
	}{
		{"emerg", alert.ActionPage},
		{"EMERG", alert.ActionPage},
		{"panic", alert.ActionPage},
		{"Panic", alert.ActionPage},
		{"fatal", alert.ActionPage},
		{"catastrophic", alert.ActionPage},
		{"Catastrophic", alert.ActionPage},
		{"very high", alert.ActionPage},
		{"Very High", alert.ActionPage},
		{"very-high", alert.ActionPage},
		{"very_high", alert.ActionPage},
		{"veryhigh", alert.ActionPage},
		{"VERYHIGH", alert.ActionPage},
		{"highest", alert.ActionPage},
		{"very low", alert.ActionTicket},
		{"very-low", alert.ActionTicket},
		{"verylow", alert.ActionTicket},
		{"lowest", alert.ActionTicket},
		// Compounds that agree.
		{"P1 - very high", alert.ActionPage},
		{"emerg/critical", alert.ActionPage},
		{"[P4] very low", alert.ActionTicket},
		// Negations and disagreeing parts are not recognised.
		{"non-emerg", unrecognised},
		{"not panic", unrecognised},
		{"not very high", unrecognised},
		{"non-catastrophic", unrecognised},
		{"P3 - very high", unrecognised},
		{"very low / critical", unrecognised},
		{"emerg-warning", unrecognised},
		{"very", unrecognised},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, known := e.severityAction(tc.in)
			if !known {
				got = unrecognised
			}
			if got != tc.want {
				t.Errorf("severityAction(%q) = %s, want %s", tc.in, got, tc.want)
			}
		})
	}
	// As the audit sent them: a page by the severity policy, not the
	// default ticket.
	for _, v := range []string{"emerg", "panic", "catastrophic", "very high"} {
		t.Run("decides "+v, func(t *testing.T) {
			check(t, e.Decide(firing(map[string]string{"alertname": "VLLMPodDown", "slo": "availability", "severity": v}), nil, testNow),
				want{alert.ActionPage, PolicySeverity, v, `severity="` + v + `" → page`})
		})
	}
	t.Run("very low tickets", func(t *testing.T) {
		check(t, e.Decide(firing(map[string]string{"priority": "Very Low"}), nil, testNow),
			want{alert.ActionTicket, PolicySeverity, "very low", `priority="Very Low" → ticket`})
	})
	t.Run("a Pyrra custom severity emerg pages by the severity table", func(t *testing.T) {
		check(t, e.Decide(firing(map[string]string{"slo": "api", "long": "1d", "short": "2h", "severity": "emerg"}), nil, testNow),
			want{alert.ActionPage, PolicyPyrra, "emerg", "by the severity table"})
	})
}

// TestNoneNeverSilencesAnotherSeverity: a none read from one severity
// label never overrides the page or ticket another gives; between page and
// ticket the louder decides (a later label's page beats an earlier one's
// ticket: a page is never lost to the order of the labels); when no label
// says more, none stands.
func TestNoneNeverSilencesAnotherSeverity(t *testing.T) {
	e := newEngine(t)
	const gives = " gives way: a none never silences another severity label's page or ticket"
	grafana := func(kv ...string) map[string]string {
		return withLabels(map[string]string{"alertname": "SLO Burn Rate Very High", "grafana_slo_uuid": "h3k8bq1"}, kv...)
	}
	cases := []struct {
		name   string
		labels map[string]string
		annot  map[string]string
		want   want
	}{
		{"severity none and priority P1 pages", map[string]string{"severity": "none", "priority": "P1"}, nil,
			want{alert.ActionPage, PolicySeverity, "p1", `priority="P1" → page (severity="none" → none` + gives + `)`}},
		{"severity info and severity_level 4 tickets", map[string]string{"severity": "info", "severity_level": "4"}, nil,
			want{alert.ActionTicket, PolicySeverity, "4", `severity_level="4" → ticket (severity="info" → none` + gives}},
		{"severity_level 7 and urgency high pages", map[string]string{"severity_level": "7", "urgency": "high"}, nil,
			want{alert.ActionPage, PolicySeverity, "high", `severity_level="7" → none` + gives}},
		{"the first none is named", map[string]string{"severity": "debug", "priority": "P5", "urgency": "high"}, nil,
			want{alert.ActionPage, PolicySeverity, "high", `severity="debug" → none` + gives}},
		// level, as often a log level, overrules no none either.
		{"a log level overrules no none", map[string]string{"severity": "info", "level": "fatal"}, nil,
			want{alert.ActionNone, PolicySeverity, "info", `severity="info" → none`}},
		{"level alone decides", map[string]string{"level": "critical"}, nil,
			want{alert.ActionPage, PolicySeverity, "critical", `level="critical" → page`}},
		{"between ticket and page the louder decides", map[string]string{"severity": "none", "priority": "P3", "urgency": "high"}, nil,
			want{alert.ActionPage, PolicySeverity, "high", `urgency="high" → page, louder than priority="P3" → ticket (of two severity labels the louder decides; severity="none" → none` + gives + `)`}},
		{"a later label's page beats an earlier label's ticket", map[string]string{"severity": "warning", "priority": "P1"}, nil,
			want{alert.ActionPage, PolicySeverity, "p1", `priority="P1" → page, louder than severity="warning" → ticket (of two severity labels the louder decides)`}},
		{"a later label's ticket leaves an earlier label's ticket", map[string]string{"severity": "warning", "priority": "P3"}, nil,
			want{alert.ActionTicket, PolicySeverity, "warning", `severity="warning" → ticket`}},
		// The author's own action word is not overruled, and level, as
		// often a log level, overrules nothing.
		{"the word ticket is not overruled", map[string]string{"severity": "ticket", "priority": "sev2"}, nil,
			want{alert.ActionTicket, PolicySeverity, "ticket", `severity="ticket" → ticket`}},
		{"a log level overrules no ticket", map[string]string{"severity": "warning", "level": "fatal"}, nil,
			want{alert.ActionTicket, PolicySeverity, "warning", `severity="warning" → ticket`}},
		{"a later label past level still does", map[string]string{"severity": "warning", "level": "fatal", "urgency": "high"}, nil,
			want{alert.ActionPage, PolicySeverity, "high", `urgency="high" → page, louder than severity="warning" → ticket`}},
		{"a none after the deciding label changes nothing", map[string]string{"severity": "warning", "priority": "none"}, nil,
			want{alert.ActionTicket, PolicySeverity, "warning", `severity="warning" → ticket`}},
		{"none stands when no label says more", map[string]string{"severity": "none", "priority": "P5"}, nil,
			want{alert.ActionNone, PolicySeverity, "none", `severity="none" → none`}},
		{"none stands beside an unrecognised value", map[string]string{"severity": "none", "priority": "S9"}, nil,
			want{alert.ActionNone, PolicySeverity, "none", `priority label "S9" is not a recognised severity`}},
		{"a label in another case may say more than none", map[string]string{"severity": "none", "Priority": "P1"}, nil,
			want{alert.ActionPage, PolicySeverity, "p1", `(label Priority read as priority: label names are case-sensitive, so Alertmanager routes on priority do not match it; severity="none" → none` + gives + `)`}},
		{"a configured none comes before one in another case", map[string]string{"severity": "none", "Priority": "P5"}, nil,
			want{alert.ActionNone, PolicySeverity, "none", `severity="none" → none`}},
		{"a none in another case gives way too", map[string]string{"Severity": "info", "Priority": "P2"}, nil,
			want{alert.ActionPage, PolicySeverity, "p2", `Severity="info" → none` + gives}},
		{"an explicit paging label names the louder label", map[string]string{"pager": "pagerduty", "severity": "none", "priority": "P3"}, nil,
			want{alert.ActionPage, PolicySeverity, "pager=pagerduty", `without it priority="P3" → ticket`}},
		{"an ambiguous utilization gives way to the P1", map[string]string{"severity": "none", "priority": "P1"}, map[string]string{"utilization": "1.2"},
			want{alert.ActionPage, PolicySeverity, "p1", "the severity label decides"}},
		// Grafana SLO: the marker's page or ticket still decides; its none
		// gives way like any other.
		{"Grafana SLO's tier beats a none", grafana("grafana_slo_severity", "warning", "severity", "none"), nil,
			want{alert.ActionTicket, PolicySeverity, "warning", `grafana_slo_severity="warning" → ticket (Grafana SLO's tier label, grafana_slo_uuid present; it beats severity="none" → none)`}},
		{"Grafana SLO's tier names the louder label it beats", grafana("grafana_slo_severity", "warning", "severity", "none", "priority", "P1"), nil,
			want{alert.ActionTicket, PolicySeverity, "warning", `it beats priority="P1" → page`}},
		{"a none as Grafana SLO's tier gives way", grafana("grafana_slo_severity", "info", "severity", "critical"), nil,
			want{alert.ActionPage, PolicySeverity, "critical", `severity="critical" → page (grafana_slo_severity="info" → none` + gives}},
		{"a none as Grafana SLO's tier stands alone", grafana("grafana_slo_severity", "info"), nil,
			want{alert.ActionNone, PolicySeverity, "info", `grafana_slo_severity="info" → none (Grafana SLO's tier label, grafana_slo_uuid present)`}},
		{"without a marker grafana_slo_severity beats a none", map[string]string{"severity": "none", "grafana_slo_severity": "critical"}, nil,
			want{alert.ActionPage, PolicySeverity, "critical", `grafana_slo_severity="critical" → page (severity="none" → none` + gives}},
		{"without a marker the louder of the rest still decides", map[string]string{"severity_level": "8", "grafana_slo_severity": "critical", "priority": "P3"}, nil,
			want{alert.ActionPage, PolicySeverity, "critical", `grafana_slo_severity="critical" → page`}},
		// A long/short alert reads the severity labels as the severity
		// policy does (audit A, F3): Pyrra's none gives way too; only
		// nones leave it to the window pair.
		{"Pyrra's none gives way to priority P1", map[string]string{"slo": "api", "long": "1d", "short": "2h", "severity": "none", "priority": "P1"}, nil,
			want{alert.ActionPage, PolicyPyrra, "p1", `priority="P1" → page (severity="none" → none` + gives + `) (window pair 1d/2h) (pyrra SLO api)`}},
		{"Pyrra's none and P5 leave it to the window pair", map[string]string{"slo": "api", "long": "1d", "short": "2h", "severity": "none", "priority": "P5"}, nil,
			want{alert.ActionTicket, PolicyPyrra, "1d/2h", "the window pair decides"}},
	}
	runFiring(t, e, cases)
	t.Run("the configured maps", func(t *testing.T) {
		cfg := DefaultConfig()
		cfg.Severity["critical"] = alert.ActionNone // silenced on purpose
		cfg.Severity["s9"] = alert.ActionPage
		cfg.SeverityNumbers = SeverityNumbers{Page: 1, Ticket: 2}
		e, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		check(t, e.Decide(firing(map[string]string{"severity": "critical"}), nil, testNow),
			want{alert.ActionNone, PolicySeverity, "critical", `severity="critical" → none`})
		check(t, e.Decide(firing(map[string]string{"severity": "critical", "priority": "S9"}), nil, testNow),
			want{alert.ActionPage, PolicySeverity, "s9", `priority="S9" → page (severity="critical" → none` + gives})
		check(t, e.Decide(firing(map[string]string{"severity_level": "3", "priority": "2"}), nil, testNow),
			want{alert.ActionTicket, PolicySeverity, "2", `priority="2" → ticket (severity_level="3" → none` + gives})
		check(t, e.Decide(firing(map[string]string{"severity_level": "3", "priority": "4"}), nil, testNow),
			want{alert.ActionNone, PolicySeverity, "3", `severity_level="3" → none`})
	})
}

// TestBaselineRatioChange: a baseline_ratio written with an explicit sign
// is a change relative to the baseline ("+35%" and "+0.35" are 1.35x);
// without the sign a percentage is the ratio itself; a value is never a
// change.
func TestBaselineRatioChange(t *testing.T) {
	e := newEngine(t)
	lower := map[string]string{"regression_direction": "lower_is_worse"}
	cases := []struct {
		name   string
		labels map[string]string
		annot  map[string]string
		want   want
	}{
		{"+35% is 1.35x and pages", nil, map[string]string{"baseline_ratio": "+35%"},
			want{alert.ActionPage, PolicyRegression, "critical", `baseline_ratio "+35%" read as a change: 1.35x the 7d baseline, > 1.30 critical`}},
		{"+20% is 1.20x and tickets", nil, map[string]string{"baseline_ratio": "+20%"},
			want{alert.ActionTicket, PolicyRegression, "warn", `baseline_ratio "+20%" read as a change: 1.20x the 7d baseline, > 1.15 warn`}},
		{"spaces around it", nil, map[string]string{"baseline_ratio": " +35 % "},
			want{alert.ActionPage, PolicyRegression, "critical", `baseline_ratio "+35 %" read as a change: 1.35x`}},
		{"+0% is 1.0x", nil, map[string]string{"baseline_ratio": "+0%"},
			want{alert.ActionNone, PolicyRegression, "below", `baseline_ratio "+0%" read as a change: 1.00x the 7d baseline, ≤ 1.15 warn`}},
		{"-0% is 1.0x", nil, map[string]string{"baseline_ratio": "-0%"},
			want{alert.ActionNone, PolicyRegression, "below", `read as a change: 1.00x`}},
		{"-20% is 0.80x, a ticket when lower is worse", lower, map[string]string{"baseline_ratio": "-20%"},
			want{alert.ActionTicket, PolicyRegression, "warn", `baseline_ratio "-20%" read as a change: 0.80x the 7d baseline, < 0.8696 (1/1.15) warn`}},
		{"-25% is 0.75x, a page when lower is worse", lower, map[string]string{"baseline_ratio": "-25%"},
			want{alert.ActionPage, PolicyRegression, "critical", `read as a change: 0.75x`}},
		{"-20% is no regression when higher is worse", map[string]string{"regression_direction": "higher_is_worse"}, map[string]string{"baseline_ratio": "-20%"},
			want{alert.ActionNone, PolicyRegression, "below", `read as a change: 0.80x`}},
		{"-150% is no ratio", nil, map[string]string{"baseline_ratio": "-150%"},
			want{alert.ActionTicket, PolicyDefault, "default", `baseline_ratio annotation "-150%" ignored: a change of -150% would make a negative ratio`}},
		// Unchanged: no sign, or no percent sign.
		{"135% is the ratio 1.35x", nil, map[string]string{"baseline_ratio": "135%"},
			want{alert.ActionPage, PolicyRegression, "critical", `baseline_ratio 1.35x the 7d baseline`}},
		{"35% is the ratio 0.35x", nil, map[string]string{"baseline_ratio": "35%"},
			want{alert.ActionNone, PolicyRegression, "below", `baseline_ratio 0.35x the 7d baseline`}},
		// A signed plain number is a change too (fixer M, F5): a ratio is
		// never signed.
		{"+1.35 is a change of +135%: 2.35x", nil, map[string]string{"baseline_ratio": "+1.35"},
			want{alert.ActionPage, PolicyRegression, "critical", `baseline_ratio "+1.35" read as a change: 2.35x the 7d baseline`}},
		{"-1.35 is still refused", nil, map[string]string{"baseline_ratio": "-1.35"},
			want{alert.ActionTicket, PolicyDefault, "default", `baseline_ratio annotation "-1.35" ignored: a change of -1.35 would make a negative ratio`}},
		// A value is not a change.
		{"value +35% is 0.35 of its baseline", nil, map[string]string{"value": "+35%", "baseline": "1"},
			want{alert.ActionNone, PolicyRegression, "below", `value 0.35 ÷ baseline 1.0 = 0.35x`}},
		{"value +135% against 100%", nil, map[string]string{"value": "+135%", "baseline": "100%"},
			want{alert.ActionPage, PolicyRegression, "critical", `value 1.35 ÷ baseline 1.0 = 1.35x`}},
	}
	runFiring(t, e, cases)
}
