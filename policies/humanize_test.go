package policies

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// Values as Prometheus' humanize, humanize1024 and humanizePercentage
// template functions print them ("%.4g" of the scaled value, then the
// prefix): humanize(0.932) = "932m", humanize(1234567) = "1.235M",
// humanize1024(1048576) = "1Mi", humanizePercentage(0.932) = "93.2%".
func TestParseValueHumanize(t *testing.T) {
	cases := []struct {
		in     string
		want   float64
		prefix string
	}{
		{"932m", 0.932, "m"},
		{"500m", 0.5, "m"},
		{"750m", 0.75, "m"},
		{"900m", 0.9, "m"}, // exactly 0.9: "> 0.90" is false, as for "0.9"
		{"-500m", -0.5, "m"},
		{"1m", 0.001, "m"},
		{"1.2k", 1200, "k"},
		{"1.5k", 1500, "k"},
		{"1k", 1000, "k"},
		{"14.4k", 14400, "k"},
		{"1.235M", 1.235e6, "M"},
		{"2G", 2e9, "G"},
		{"3T", 3e12, "T"},
		{"4P", 4e15, "P"},
		{"5E", 5e18, "E"},
		{"6Z", 6e21, "Z"},
		{"7Y", 7e24, "Y"},
		{"1e+06Y", 1e30, "Y"}, // %.4g of a value beyond the last prefix
		{"5u", 5e-6, "u"},
		{"5µ", 5e-6, "µ"}, // micro sign
		{"5μ", 5e-6, "μ"}, // Greek mu
		{"5n", 5e-9, "n"},
		{"5p", 5e-12, "p"},
		{"5f", 5e-15, "f"},
		{"5a", 5e-18, "a"},
		{"5z", 5e-21, "z"},
		{"5y", 5e-24, "y"},
		{"1e-06y", 1e-30, "y"},
		{" 932m ", 0.932, "m"},
		{"1ki", 1024, "ki"}, // humanize1024 prints ki
		{"1Ki", 1024, "Ki"}, // the IEC spelling
		{"1Mi", 1 << 20, "Mi"},
		{"1.5Gi", 1.5 * (1 << 30), "Gi"},
		{"2Ti", 2 * (1 << 40), "Ti"},
		{"1Pi", 1 << 50, "Pi"},
		{"1Ei", 1 << 60, "Ei"},
		{"1Zi", 1 << 70, "Zi"},
		{"1Yi", 1 << 80, "Yi"},
		// humanizePercentage ("%.4g%%" of v×100): worked before, still does.
		{"93.2%", 0.932, ""},
		{"12.35%", 0.1235, ""},
		// humanize of 0 and of values in [1, 1000) has no prefix.
		{"0", 0, ""},
		{"14.4", 14.4, ""},
		{"1e+06", 1e6, ""},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseValue(tc.in)
			if err != nil {
				t.Fatalf("parseValue(%q): %v", tc.in, err)
			}
			if got.v != tc.want && math.Abs(got.v-tc.want) > 1e-12*math.Abs(tc.want) {
				t.Errorf("parseValue(%q) = %v, want %v", tc.in, got.v, tc.want)
			}
			if got.prefix() != tc.prefix {
				t.Errorf("parseValue(%q) prefix = %q, want %q", tc.in, got.prefix(), tc.prefix)
			}
		})
	}
}

// TestParseValueHumanizeRoundTrip reads back what "%.4g" followed by each
// prefix prints, for values over the whole range of each prefix.
func TestParseValueHumanizeRoundTrip(t *testing.T) {
	scales := map[string]float64{
		"k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18, "Z": 1e21, "Y": 1e24,
		"m": 1e-3, "u": 1e-6, "n": 1e-9, "p": 1e-12, "f": 1e-15, "a": 1e-18, "z": 1e-21, "y": 1e-24,
		"ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40, "Pi": 1 << 50, "Ei": 1 << 60, "Zi": 1 << 70, "Yi": 1 << 80,
	}
	for prefix, scale := range scales {
		for _, x := range []float64{1, 1.5, 9.999, 14.4, 100, 932, 999.9, -2.5, 1e6} {
			text := fmt.Sprintf("%.4g%s", x, prefix)
			got, err := parseValue(text)
			if err != nil {
				t.Errorf("parseValue(%q): %v", text, err)
				continue
			}
			want := x * scale
			if math.Abs(got.v-want) > 1e-9*math.Abs(want) {
				t.Errorf("parseValue(%q) = %v, want %v", text, got.v, want)
			}
		}
	}
}

func TestParseValueRefusals(t *testing.T) {
	cases := []struct {
		in string
		is error
		// msg, when set, must be in the error's text (it ends up in the
		// decision's reasons).
		msg string
	}{
		{"15.2x", errNotNumber, `"x" is not a unit prefix that Prometheus' humanize or humanize1024 prints`},
		{"16x", errNotNumber, `"x" is not a unit prefix`},
		{"1.2K", errNotNumber, `"K" is not a unit prefix`}, // humanize writes k
		{"5ms", errNotNumber, `"ms" is not a unit prefix`}, // a duration, not a number
		{"2h", errNotNumber, `"h" is not a unit prefix`},
		{"1MI", errNotNumber, `"MI" is not a unit prefix`},
		{"15,2", errNotNumber, "a decimal comma or a thousands separator?"},
		{"1,500", errNotNumber, "a decimal comma or a thousands separator?"},
		{"16,0", errNotNumber, "a decimal comma or a thousands separator?"},
		{"932 m", errNotNumber, ""}, // humanize prints no space
		{"93.2m%", errNotNumber, ""},
		{"k", errNotNumber, ""},
		{"m", errNotNumber, ""},
		{"e", errNotNumber, ""},
		{"2e", errNotNumber, ""},
		{"2ek", errNotNumber, ""},
		{"1.2.3k", errNotNumber, ""},
		{"0x10k", errNotNumber, ""},
		{"1_000k", errNotNumber, ""},
		{"Infk", errNotNumber, ""},
		{"NaNm", errNotNumber, ""},
		{"１２k", errNotNumber, ""},
		{"1e400k", errNotFinite, ""},
		{"1e300Y", errNotFinite, ""},
		{"+Inf", errNotFinite, ""},
		{"NaN", errNotFinite, ""},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseValue(tc.in)
			if !errors.Is(err, tc.is) {
				t.Fatalf("parseValue(%q) = %+v, %v; want error %v", tc.in, got, err, tc.is)
			}
			if tc.msg != "" && !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("parseValue(%q) error %q does not say %q", tc.in, err, tc.msg)
			}
		})
	}
}

func TestParseValueAllocatesNothing(t *testing.T) {
	for _, in := range []string{"15.2", "85%", "932m", "1.5k", "2Gi", "5µ"} {
		if n := testing.AllocsPerRun(100, func() { sinkValue, _ = parseValue(in) }); n != 0 {
			t.Errorf("parseValue(%q) allocates %v times", in, n)
		}
	}
}

// TestHumanizedInputsDecide are the audit's cases: values printed by
// humanize were ignored ("not a number") and the policy lost its input.
func TestHumanizedInputsDecide(t *testing.T) {
	e := newEngine(t)
	cases := []struct {
		name   string
		labels map[string]string
		annot  map[string]string
		want   want
	}{
		{"utilization 932m (humanize of 0.932) pages on capacity, not on severity=warning",
			map[string]string{"severity": "warning"}, map[string]string{"utilization": "932m"},
			want{alert.ActionPage, PolicyCapacity, "critical", "utilization 93.2% > 90.0% critical"}},
		{"utilization 850m with latency above SLO pages",
			map[string]string{"severity": "info", "latency_above_slo": "true"}, map[string]string{"utilization": "850m"},
			want{alert.ActionPage, PolicyCapacity, "warn+latency", "utilization 85.0% > 80.0% warn"}},
		{"utilization 900m is not above 90%",
			nil, map[string]string{"utilization": "900m"},
			want{alert.ActionTicket, PolicyCapacity, "warn", "utilization 90.0% > 80.0% warn"}},
		{"utilization 93.2% (humanizePercentage) pages",
			map[string]string{"severity": "warning"}, map[string]string{"utilization": "93.2%"},
			want{alert.ActionPage, PolicyCapacity, "critical", "utilization 93.2% > 90.0% critical"}},
		{"burn rates 500m and 750m are below every tier: none, not a page by severity=critical",
			map[string]string{"severity": "critical"}, map[string]string{"burn_rate_1h": "500m", "burn_rate_5m": "750m"},
			want{alert.ActionNone, PolicyBurnRate, "below", "burn rate 0.5 ≤ 14.4 over 1h and 0.75 ≤ 14.4 over 5m: no page"}},
		{"burn rates 1.2k and 1.5k page",
			map[string]string{"severity": "warning"}, map[string]string{"burn_rate_1h": "1.2k", "burn_rate_5m": "1.5k"},
			want{alert.ActionPage, PolicyBurnRate, "1h/5m>14.4", "burn rate 1200.0 > 14.4 over 1h and 1500.0 > 14.4 over 5m"}},
		{"burn rate 15.2x is refused, saying why",
			map[string]string{"severity": "warning"}, map[string]string{"burn_rate_1h": "15.2x", "burn_rate_5m": "16x"},
			want{alert.ActionTicket, PolicySeverity, "warning", `burn_rate_1h annotation "15.2x" ignored: not a number: "x" is not a unit prefix`}},
		{"burn rate 15,2 is refused, saying why",
			map[string]string{"severity": "warning"}, map[string]string{"burn_rate_1h": "15,2", "burn_rate_5m": "16,0"},
			want{alert.ActionTicket, PolicySeverity, "warning", `burn_rate_1h annotation "15,2" ignored: not a number: a decimal comma or a thousands separator?`}},
		{"baseline_ratio 1.5 as 1500m pages",
			nil, map[string]string{"baseline_ratio": "1500m"},
			want{alert.ActionPage, PolicyRegression, "critical", "baseline_ratio 1.50x"}},
		{"value 1.5k ÷ baseline 1k pages, quoted as written",
			map[string]string{"severity": "info"}, map[string]string{"value": "1.5k", "baseline": "1k"},
			want{alert.ActionPage, PolicyRegression, "critical", "value 1.5k ÷ baseline 1k = 1.50x"}},
		{"value 1.5Gi ÷ baseline 1Gi pages (humanize1024)",
			nil, map[string]string{"value": "1.5Gi", "baseline": "1Gi"},
			want{alert.ActionPage, PolicyRegression, "critical", "value 1.5Gi ÷ baseline 1Gi = 1.50x"}},
		{"value 1.2k ÷ baseline 1000 tickets",
			nil, map[string]string{"value": "1.2k", "baseline": "1000"},
			want{alert.ActionTicket, PolicyRegression, "warn", "value 1.2k ÷ baseline 1000.0 = 1.20x"}},
		{"value 300n ÷ baseline 200n: the ratio of nano values",
			nil, map[string]string{"value": "300n", "baseline": "200n"},
			want{alert.ActionPage, PolicyRegression, "critical", "value 300n ÷ baseline 200n = 1.50x"}},
		// m is milli to humanize and minutes to a duration: alike on both
		// sides the ratio is the same either way.
		{"value 5m ÷ baseline 3m: the same ratio whether milli or minutes",
			nil, map[string]string{"value": "5m", "baseline": "3m"},
			want{alert.ActionPage, PolicyRegression, "critical", "value 5m ÷ baseline 3m = 1.6667x"}},
		{"value 500m ÷ baseline 400u: u is no duration unit, both are humanize's",
			nil, map[string]string{"value": "500m", "baseline": "400u"},
			want{alert.ActionPage, PolicyRegression, "critical", "value 500m ÷ baseline 400u = 1250.00x"}},
		{"value 5m ÷ baseline 120 is ambiguous: 0.005 or 300 seconds? The severity decides",
			map[string]string{"severity": "warning"}, map[string]string{"value": "5m", "baseline": "120"},
			want{alert.ActionTicket, PolicySeverity, "warning",
				`value annotation "5m" and baseline annotation "120" give no ratio: "5m" is milli to Prometheus' humanize but minutes as a duration, and the ratio differs between the two readings; write value and baseline alike`}},
		{"value 300 ÷ baseline 2m is ambiguous too",
			nil, map[string]string{"value": "300", "baseline": "2m"},
			want{alert.ActionTicket, PolicyDefault, "default", `"2m" is milli to Prometheus' humanize but minutes as a duration`}},
		{"value 1y ÷ baseline 2 is ambiguous: yocto or a year",
			nil, map[string]string{"value": "1y", "baseline": "2"},
			want{alert.ActionTicket, PolicyDefault, "default", `"1y" is yocto to Prometheus' humanize but years as a duration`}},
		{"value 5m ÷ baseline 1y is ambiguous",
			nil, map[string]string{"value": "5m", "baseline": "1y"},
			want{alert.ActionTicket, PolicyDefault, "default", `"5m" is milli to Prometheus' humanize but minutes as a duration`}},
		{"value 300ms ÷ baseline 200ms are durations (not humanize's numbers)",
			nil, map[string]string{"value": "300ms", "baseline": "200ms"},
			want{alert.ActionPage, PolicyRegression, "critical", `value 300ms ÷ baseline 200ms = 1.50x`}},
		{"value 300ms beside a humanize number is not read",
			nil, map[string]string{"value": "300ms", "baseline": "1.5k"},
			want{alert.ActionTicket, PolicyDefault, "default", `baseline annotation "1.5k" ignored: value "300ms" is a duration, the baseline a number with a unit prefix`}},
		{"budget_remaining 410m is 41%",
			map[string]string{"severity": "critical"}, map[string]string{"budget_remaining": "410m"},
			want{alert.ActionPage, PolicySeverity, "critical", "budget: error budget remaining 41.0%"}},
	}
	runFiring(t, e, cases)
}
