package policies

import (
	"strings"
	"testing"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// TestRegressionOfABoundedKPIComparesShortfalls: a KPI that is a share of
// good events bounded by 1 (availability, success rate, apdex) regresses
// as its shortfall from 1 rises, (1 − value) ÷ (1 − baseline), higher is
// worse; value ÷ baseline would never reach 1/threshold.
func TestRegressionOfABoundedKPIComparesShortfalls(t *testing.T) {
	e := newEngine(t)
	cases := []struct {
		name   string
		labels map[string]string
		annot  map[string]string
		want   want
	}{
		{"0.95 against 0.9999 is 500x the unavailability and pages",
			map[string]string{"kpi": "AVAIL", "sensitivity": "high", "severity": "critical"},
			map[string]string{"value": "0.95", "baseline": "0.9999"},
			want{alert.ActionPage, PolicyRegression, "critical", "unavailability 5.0% ÷ baseline 0.01% = 500.00x the 7d baseline (value 0.95, baseline 0.9999), > 1.20 critical"}},
		{"99.1% against 99.99% is 90x the unavailability and pages",
			map[string]string{"kpi": "SLI-AV", "severity": "critical"},
			map[string]string{"value": "99.1%", "baseline": "99.99%"},
			want{alert.ActionPage, PolicyRegression, "critical", "unavailability 0.9% ÷ baseline 0.01% = 90.00x the 7d baseline (value 99.1%, baseline 99.99%), > 1.30 critical"}},
		{"the reason says how it compared",
			map[string]string{"kpi": "UP"}, map[string]string{"value": "0.99", "baseline": "0.999"},
			want{alert.ActionPage, PolicyRegression, "critical", `lower is worse (kpi label "UP"), compared as its unavailability, (1 − value) ÷ (1 − baseline)`}},
		{"a small rise of the failure rate tickets",
			map[string]string{"kpi": "success rate"}, map[string]string{"value": "0.9988", "baseline": "0.999"},
			want{alert.ActionTicket, PolicyRegression, "warn", "failure rate 0.12% ÷ baseline 0.1% = 1.20x"}},
		{"an apdex that rose is none",
			map[string]string{"kpi": "apdex"}, map[string]string{"value": "0.97", "baseline": "0.94"},
			want{alert.ActionNone, PolicyRegression, "below", "apdex shortfall 3.0% ÷ baseline 6.0% = 0.50x"}},
		{"any shortfall from a baseline of 100% is beyond every threshold",
			map[string]string{"kpi": "AVAIL"}, map[string]string{"value": "99.9%", "baseline": "100%"},
			want{alert.ActionPage, PolicyRegression, "critical", "unavailability 0.1% (value 99.9%) against none at baseline 100%: any shortfall from a baseline of 100% is beyond every threshold"}},
		{"no shortfall against a baseline of 100% is none",
			map[string]string{"kpi": "AVAIL"}, map[string]string{"value": "1", "baseline": "1.0"},
			want{alert.ActionNone, PolicyRegression, "below", "unavailability 0.0% (value 1) against none at baseline 1.0: no change"}},
		{"a cache hit ratio keeps value ÷ baseline",
			map[string]string{"kpi": "CHR"}, map[string]string{"value": "0.95", "baseline": "0.99"},
			want{alert.ActionNone, PolicyRegression, "below", "value 0.95 ÷ baseline 0.99 = 0.9596x"}},
		{"an availability given as bare percentages compares its shortfall too",
			map[string]string{"kpi": "AVAIL"}, map[string]string{"value": "95", "baseline": "99.99"},
			want{alert.ActionPage, PolicyRegression, "critical", "unavailability 5.0% ÷ baseline 0.01% = 500.00x"}},
		{"a warning alert's shortfall page is a ticket: its severity says less",
			map[string]string{"kpi": "AVAIL", "severity": "warning", "sensitivity": "high"},
			map[string]string{"value": "0.99985", "baseline": "0.9999"},
			want{alert.ActionTicket, PolicyRegression, "warn", "a shortfall comparison pages only when it does not say less"}},
		{"a critical alert's shortfall pages",
			map[string]string{"kpi": "AVAIL", "severity": "critical", "sensitivity": "high"},
			map[string]string{"value": "0.99985", "baseline": "0.9999"},
			want{alert.ActionPage, PolicyRegression, "critical", "unavailability"}},
		{"a baseline_ratio of an availability stays a ratio",
			map[string]string{"kpi": "AVAIL"}, map[string]string{"baseline_ratio": "0.95"},
			want{alert.ActionNone, PolicyRegression, "below", "baseline_ratio 0.95x"}},
	}
	runFiring(t, e, cases)
}

// TestLatencyAboveSLOReadsYesAndNoWords: latency_above_slo takes the yes
// and no words of the paging labels and YAML, and a value that is
// neither is named in the reasons.
func TestLatencyAboveSLOReadsYesAndNoWords(t *testing.T) {
	e := newEngine(t)
	for _, v := range []string{"on", "ON", "y", "yes", "True", "t", "1", "1.0", "enabled", " on "} {
		t.Run(v+" is yes", func(t *testing.T) {
			a := newAlert("firing", nil, map[string]string{"utilization": "0.85", "latency_above_slo": v})
			check(t, e.Decide(a, nil, testNow), want{alert.ActionPage, PolicyCapacity, "warn+latency", "latency is above SLO"})
		})
	}
	for _, v := range []string{"off", "n", "no", "false", "0", "0.0", "disabled", ""} {
		t.Run(v+" is no", func(t *testing.T) {
			a := newAlert("firing", nil, map[string]string{"utilization": "0.85", "latency_above_slo": v})
			d := e.Decide(a, nil, testNow)
			check(t, d, want{alert.ActionTicket, PolicyCapacity, "warn", "utilization 85.0% > 80.0% warn"})
			if len(d.Reasons) != 1 {
				t.Errorf("reasons %q, want one", d.Reasons)
			}
		})
	}
	for _, v := range []string{"maybe", "2", "NaN"} {
		t.Run(v+" is named", func(t *testing.T) {
			a := newAlert("firing", nil, map[string]string{"utilization": "0.85", "latency_above_slo": v})
			check(t, e.Decide(a, nil, testNow), want{alert.ActionTicket, PolicyCapacity, "warn",
				`latency_above_slo annotation "` + v + `" ignored: not a yes or no word`})
		})
	}
}

// TestSignedPlainBaselineRatioIsAChange: a ratio is never signed, so a
// signed plain number is a change relative to the baseline, as "+35%" is.
func TestSignedPlainBaselineRatioIsAChange(t *testing.T) {
	e := newEngine(t)
	lower := map[string]string{"regression_direction": "lower_is_worse"}
	cases := []struct {
		name   string
		labels map[string]string
		annot  map[string]string
		want   want
	}{
		{"+0.35 is 1.35x and pages a TTFT", map[string]string{"kpi": "TTFT"}, map[string]string{"baseline_ratio": "+0.35"},
			want{alert.ActionPage, PolicyRegression, "critical", `baseline_ratio "+0.35" read as a change: 1.35x the 7d baseline, > 1.30 critical`}},
		{"-0.2 is 0.80x", lower, map[string]string{"baseline_ratio": "-0.2"},
			want{alert.ActionTicket, PolicyRegression, "warn", `baseline_ratio "-0.2" read as a change: 0.80x`}},
		{"+0 is 1.0x", nil, map[string]string{"baseline_ratio": "+0"},
			want{alert.ActionNone, PolicyRegression, "below", `baseline_ratio "+0" read as a change: 1.00x`}},
		{"-1.5 is refused", nil, map[string]string{"baseline_ratio": "-1.5"},
			want{alert.ActionTicket, PolicyDefault, "default", `baseline_ratio annotation "-1.5" ignored: a change of -1.5 would make a negative ratio`}},
		{"0.35 without a sign stays the ratio", map[string]string{"kpi": "TTFT"}, map[string]string{"baseline_ratio": "0.35"},
			want{alert.ActionNone, PolicyRegression, "below", `baseline_ratio 0.35x`}},
	}
	runFiring(t, e, cases)
}

// TestPercentBesideABareNumberAboveOne: exactly one side of value +
// baseline a percentage and the other a bare number above 1 has no one
// reading and is refused; a bare number in [0, 1] is a ratio.
func TestPercentBesideABareNumberAboveOne(t *testing.T) {
	e := newEngine(t)
	cases := []struct {
		name  string
		annot map[string]string
		want  want
	}{
		{"85 beside 80% is refused", map[string]string{"value": "85", "baseline": "80%"},
			want{alert.ActionTicket, PolicyDefault, "default", `value annotation "85" and baseline annotation "80%" give no ratio: a percentage beside a bare number above 1: is "85" a ratio or a percentage?`}},
		{"85% beside 60 is refused", map[string]string{"value": "85%", "baseline": "60"},
			want{alert.ActionTicket, PolicyDefault, "default", `is "60" a ratio or a percentage?`}},
		{"1.5k beside 80% is refused", map[string]string{"value": "1.5k", "baseline": "80%"},
			want{alert.ActionTicket, PolicyDefault, "default", `is "1.5k" a ratio or a percentage?`}},
		{"0.85 beside 80% is a ratio", map[string]string{"value": "0.85", "baseline": "80%"},
			want{alert.ActionNone, PolicyRegression, "below", "value 0.85 ÷ baseline 0.8 = 1.0625x"}},
		{"85% beside 0.6 is a ratio", map[string]string{"value": "85%", "baseline": "0.6"},
			want{alert.ActionPage, PolicyRegression, "critical", "= 1.4167x"}},
		{"85% beside 1 is a ratio", map[string]string{"value": "85%", "baseline": "1"},
			want{alert.ActionNone, PolicyRegression, "below", "= 0.85x"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			check(t, e.Decide(newAlert("firing", nil, tc.annot), nil, testNow), tc.want)
		})
	}
}

// TestReadTimes: two times compared with each other are read by the rules
// of a value + baseline pair.
func TestReadTimes(t *testing.T) {
	cases := []struct {
		name, a, b string
		want       Times
		err        string
	}{
		{"plain numbers are seconds", "2.9", "0.51", Times{A: 2.9, B: 0.51}, ""},
		{"humanize milli beside micro", "510m", "90000u", Times{A: 0.51, B: 0.09}, ""},
		{"two milli are relative", "164m", "36m", Times{A: 0.164, B: 0.036, Relative: true}, ""},
		{"humanizeDuration", "1.64s", "360ms", Times{A: 1.64, B: 0.36}, ""},
		{"minutes beside a duration", "2m", "30s", Times{A: 120, B: 30}, ""},
		{"milli beside a plain number has no one reading", "2.9", "510m", Times{}, `"510m" is milli to Prometheus' humanize but minutes as a duration`},
		{"a percentage is no time", "85%", "2", Times{}, `"85%" is a percentage, not a time`},
		{"NaN is no time", "NaN", "2", Times{}, `"NaN" is not a time`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadTimes(tc.a, tc.b)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ReadTimes(%q, %q) = %+v, %v; want error with %q", tc.a, tc.b, got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ReadTimes(%q, %q) = %+v, %v; want %+v", tc.a, tc.b, got, err, tc.want)
			}
		})
	}
}
