package policies

import (
	"fmt"
	"math"
	"testing"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// humanizeDuration is Prometheus' template function of that name
// (template/template.go), the reference for what alerts carry when a
// rule writes `{{ $value | humanizeDuration }}`.
func humanizeDuration(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Sprintf("%.4g", v)
	}
	if v == 0 {
		return fmt.Sprintf("%.4gs", v)
	}
	if math.Abs(v) >= 1 {
		sign := ""
		if v < 0 {
			sign, v = "-", -v
		}
		d := int64(v)
		seconds, minutes, hours, days := d%60, (d/60)%60, (d/60/60)%24, d/60/60/24
		switch {
		case days != 0:
			return fmt.Sprintf("%s%dd %dh %dm %ds", sign, days, hours, minutes, seconds)
		case hours != 0:
			return fmt.Sprintf("%s%dh %dm %ds", sign, hours, minutes, seconds)
		case minutes != 0:
			return fmt.Sprintf("%s%dm %ds", sign, minutes, seconds)
		}
		return fmt.Sprintf("%s%.4gs", sign, v)
	}
	prefix := ""
	for _, p := range []string{"m", "u", "n", "p", "f", "a", "z", "y"} {
		if math.Abs(v) >= 1 {
			break
		}
		prefix = p
		v *= 1000
	}
	return fmt.Sprintf("%.4g%ss", v, prefix)
}

// ParseDuration reads back what humanizeDuration prints, over its whole
// range, to its precision (whole seconds from a minute on, four
// significant digits below).
func TestParseDurationReadsHumanizeDuration(t *testing.T) {
	for _, v := range []float64{0, 0.00042, 0.25, 0.999, 1, 1.5, 59.99, 60, 90, 3599, 3600, 3725, 86399, 86400, 93784, 1e7, -90, 2.5e-10} {
		text := humanizeDuration(v)
		got, err := ParseDuration(text)
		if err != nil {
			t.Errorf("ParseDuration(%q): %v", text, err)
			continue
		}
		want := v
		if math.Abs(v) >= 60 {
			want = math.Trunc(v)
		}
		if math.Abs(got-want) > 1e-3*math.Abs(want) {
			t.Errorf("ParseDuration(%q) = %v, want %v", text, got, want)
		}
	}
	for text, want := range map[string]float64{"1h30m": 5400, "1h0m0s": 3600, "5m": 300, "2w": 14 * 86400, "1.5h": 5400, "300ms": 0.3, "1µs": 1e-6} {
		if got, err := ParseDuration(text); err != nil || math.Abs(got-want) > 1e-9*want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", text, got, err, want)
		}
	}
	for _, bad := range []string{"", "15", "1.5k", "5x", "NaN", "+Inf", "1m 30", "m", "1..5s", "1e3s", "1 m"} {
		if got, err := ParseDuration(bad); err == nil {
			t.Errorf("ParseDuration(%q) = %v, want an error", bad, got)
		}
	}
}

// A regression rule that renders its value and baseline with
// humanizeDuration (a latency, a lag, a job's duration) is a regression
// input, not a value "not a number" that leaves the alert to the default
// ticket.
func TestRegressionReadsHumanizedDurations(t *testing.T) {
	e := newEngine(t)
	cases := []struct {
		value, baseline string
		w               want
	}{
		{"1m 30s", "1m 0s", want{alert.ActionPage, PolicyRegression, "critical", "value 1m 30s ÷ baseline 1m 0s = 1.50x"}},
		{"250ms", "200ms", want{alert.ActionTicket, PolicyRegression, "warn", "= 1.25x"}},
		{"1.5s", "1", want{alert.ActionPage, PolicyRegression, "critical", "value 1.5s ÷ baseline 1 = 1.50x"}},
		{"1h 2m 0s", "50m", want{alert.ActionTicket, PolicyRegression, "warn", "= 1.24x"}},
		{"1d 0h 0m 0s", "20h 0m 0s", want{alert.ActionTicket, PolicyRegression, "warn", "= 1.20x"}},
		{"950ms", "1s", want{alert.ActionNone, PolicyRegression, "below", "= 0.95x"}},
		{"1m 30s", "0s", want{alert.ActionTicket, PolicyDefault, "", "must be positive"}},
		{"1m 30s", "1.5k", want{alert.ActionTicket, PolicyDefault, "", `baseline annotation "1.5k" ignored: value "1m 30s" is a duration`}},
		{"1m 30s", "fast", want{alert.ActionTicket, PolicyDefault, "", `baseline annotation "fast" ignored: value "1m 30s" is a duration, the baseline not a duration and not a number`}},
	}
	for _, tc := range cases {
		a := newAlert("firing", map[string]string{"alertname": "JobDurationRegression"},
			map[string]string{"value": tc.value, "baseline": tc.baseline})
		t.Run(tc.value+"/"+tc.baseline, func(t *testing.T) { check(t, e.Decide(a, nil, testNow), tc.w) })
	}
}

// A severity label spelled in another case is read when no severity label
// as configured is recognised: `Severity="CRITICAL"` pages rather than
// falling to the default ticket; the configured spelling still comes first.
func TestSeverityLabelNameCase(t *testing.T) {
	e := newEngine(t)
	cases := []struct {
		labels map[string]string
		w      want
	}{
		{map[string]string{"Severity": "CRITICAL"}, want{alert.ActionPage, PolicySeverity, "critical", "label Severity read as severity"}},
		{map[string]string{"SEVERITY": "warning"}, want{alert.ActionTicket, PolicySeverity, "warning", ""}},
		{map[string]string{"Severity": "info"}, want{alert.ActionNone, PolicySeverity, "info", ""}},
		{map[string]string{"Priority": "P1"}, want{alert.ActionPage, PolicySeverity, "p1", "label Priority read as priority"}},
		{map[string]string{"severity": "warning", "Severity": "critical"}, want{alert.ActionTicket, PolicySeverity, "warning", `severity="warning" → ticket`}},
		{map[string]string{"Severity": "S9"}, want{alert.ActionTicket, PolicyDefault, "default", `label Severity "S9" is not a recognised severity`}},
		{map[string]string{"Severity": "critical", "SEVERITY": "info"}, want{alert.ActionNone, PolicySeverity, "info", "SEVERITY"}},
	}
	for _, tc := range cases {
		tc.labels["alertname"] = "X"
		t.Run(fmt.Sprint(tc.labels), func(t *testing.T) { check(t, e.Decide(firing(tc.labels), nil, testNow), tc.w) })
	}
}
