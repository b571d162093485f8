package enrich

import (
	"strings"
	"testing"
)

// TestHintNumbersAsTemplatesPrintThem checks the specific hints on the
// numbers Prometheus' templates print: humanize's "510m" beside a plain
// number has no one reading (milli or minutes), so the hint stays generic
// and says why; two "m" values give the share, not seconds; implausible,
// exhausted or unknown values are not read as the ordinary case.
func TestHintNumbersAsTemplatesPrintThem(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	tests := []struct {
		name     string
		anns     map[string]string
		id       string
		specific bool
		contains []string
		absent   []string
	}{
		{"a humanize milli compute time beside plain seconds gives no split",
			kv("queue_time_seconds", "2.9", "compute_time_seconds", "510m"), HintQueueTime, false,
			[]string{"Compare queue time", `"510m" is milli to Prometheus' humanize but minutes as a duration`},
			[]string{"scaling out will not help", "30600"}},
		{"a humanize milli decode time beside plain seconds gives no split",
			kv("prefill_seconds", "2.5", "decode_seconds", "400m"), HintPrefillDecode, false,
			[]string{"Split latency into prefill and decode", `"400m" is milli`},
			[]string{"token generation is the bottleneck"}},
		{"two humanize milli times give the share and no seconds",
			kv("queue_time_seconds", "164m", "compute_time_seconds", "36m"), HintQueueTime, true,
			[]string{"queue time is 82% of latency (164m queued, 36m computing, as written: milli or minutes"},
			[]string{"9840", "s queued"}},
		{"two humanize milli times beside a latency give the share",
			kv("queue_time_seconds", "164m", "latency_seconds", "200m"), HintQueueTime, true,
			[]string{"queue time is 82% of latency (164m queued of 200m, as written"}, nil},
		{"two humanize milli prefill and decode times give the share",
			kv("prefill_seconds", "250m", "decode_seconds", "100m"), HintPrefillDecode, true,
			[]string{"prefill is 71% of request time (250m prefill vs 100m decode, as written"}, nil},
		{"humanize milli beside micro is humanize's on both sides",
			kv("queue_time_seconds", "510m", "compute_time_seconds", "90000u"), HintQueueTime, true,
			[]string{"queue time is 85% of latency (510ms queued of 600ms)"}, nil},
		{"a humanizeDuration pair still reads as seconds",
			kv("queue_time_seconds", "1.64s", "compute_time_seconds", "360ms"), HintQueueTime, true,
			[]string{"queue time is 82% of latency (1.64s queued of 2.00s)"}, nil},
		{"minutes beside a duration are minutes",
			kv("queue_time_seconds", "2m", "compute_time_seconds", "30s"), HintQueueTime, true,
			[]string{"queue time is 80% of latency (120.00s queued of 150.00s)"}, nil},
		{"a negative time gives no split",
			kv("queue_time_seconds", "-1", "compute_time_seconds", "2"), HintQueueTime, false,
			[]string{"Compare queue time", "a time is never negative"}, []string{"compute time is"}},
		{"a negative prefill gives no split",
			kv("prefill_seconds", "-0.5", "decode_seconds", "2"), HintPrefillDecode, false,
			[]string{"Split latency", "a time is never negative"}, nil},
		{"a NaN time gives no split",
			kv("queue_time_seconds", "NaN", "compute_time_seconds", "2"), HintQueueTime, false,
			[]string{"Compare queue time", `"NaN" is not a time`}, nil},
		{"a percentage is no time",
			kv("queue_time_seconds", "85%", "compute_time_seconds", "2"), HintQueueTime, false,
			[]string{"Compare queue time", "a percentage, not a time"}, nil},
		{"an OSNR margin in dB is read",
			kv("osnr_margin_db", "1.5 dB", "pre_fec_ber", "2.1e-03"), HintOpticalHealth, true,
			[]string{"OSNR margin is 1.5 dB (below 3 dB), pre-FEC BER 2.1e-03 (within a decade of the 3.8e-03 HD-FEC limit): the span is degrading before it fails"}, nil},
		{"an OSNR margin in dB without a space is read",
			kv("osnr_margin_db", "4dB"), HintOpticalHealth, true,
			[]string{"OSNR margin is 4.0 dB: watch the trend"}, nil},
		{"an OSNR margin at or below 0 is exhausted, failing now",
			kv("osnr_margin_db", "-0.5"), HintOpticalHealth, true,
			[]string{"OSNR margin is -0.5 dB (margin exhausted): the span is failing now"},
			[]string{"degrading before it fails", "plan maintenance"}},
		{"an OSNR margin that is not understood is said so",
			kv("osnr_margin_db", "low", "pre_fec_ber", "2.1e-03"), HintOpticalHealth, true,
			[]string{"pre-FEC BER 2.1e-03", `osnr_margin_db "low" not understood`}, nil},
		{"a microburst depth in MiB is read",
			kv("microburst_depth_bytes", "1.2MiB"), HintMicroburst, true,
			[]string{"microburst depth 1.2 MiB"}, nil},
		{"a microburst depth with a space before MiB is read",
			kv("microburst_depth_bytes", "1.2 MiB"), HintMicroburst, true,
			[]string{"microburst depth 1.2 MiB"}, nil},
		{"a microburst depth in MB is read as SI",
			kv("microburst_depth_bytes", "2MB"), HintMicroburst, true,
			[]string{"microburst depth 1.9 MiB"}, nil},
		{"a microburst depth in KB is read",
			kv("microburst_depth_bytes", "512 KiB"), HintMicroburst, true,
			[]string{"microburst depth 512.0 KiB"}, nil},
		{"a microburst depth not understood is said so",
			kv("microburst_depth_bytes", "1.2 Mbit"), HintMicroburst, false,
			[]string{"Look at microburst depth", `microburst_depth_bytes "1.2 Mbit" not understood`}, nil},
		{"a negative consumer lag is unknown, not backing up",
			kv("consumer_lag", "-1"), HintSpillLag, true,
			[]string{"consumer lag is unknown"}, []string{"backing up —", "-1 messages"}},
		{"a zero lag is not backing up",
			kv("consumer_lag", "0"), HintSpillLag, true,
			[]string{"no consumer lag", "not backing up"}, []string{"backing up —"}},
		{"zero lag and zero spill are not backing up",
			kv("consumer_lag", "0", "spill_bytes", "0"), HintSpillLag, true,
			[]string{"no consumer lag and nothing spilled to disk", "not backing up"}, nil},
		{"a lag with zero spill is backing up, the spill named as none",
			kv("consumer_lag", "1.2M", "spill_bytes", "0"), HintSpillLag, true,
			[]string{"consumer lag is 1.2M and nothing spilled to disk: the data path is backing up"}, []string{"0 B"}},
		{"spill in GiB is read",
			kv("spill_bytes", "3.4 GiB"), HintSpillLag, true,
			[]string{"3.4 GiB spilled to disk: the job's shuffle outgrows executor memory"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := c.Classify(newAlert(kv("alertname", "SomethingOdd"), tt.anns, ""))
			h := findHint(got.Hints, tt.id)
			if h == nil {
				t.Fatalf("hint %s missing; hints %+v", tt.id, got.Hints)
			}
			if h.Specific != tt.specific {
				t.Errorf("specific = %v, want %v: %q", h.Specific, tt.specific, h.Text)
			}
			for _, w := range tt.contains {
				if !strings.Contains(h.Text, w) {
					t.Errorf("hint %q lacks %q", h.Text, w)
				}
			}
			for _, w := range tt.absent {
				if strings.Contains(h.Text, w) {
					t.Errorf("hint %q has %q", h.Text, w)
				}
			}
		})
	}
}

// TestPercentilesNotAveragesOnlyForAnAlertOnAnAverage checks that the
// hint is not given when the average is only the threshold, or averages a
// quantile already, and that it still is for an alert on an average.
func TestPercentilesNotAveragesOnlyForAnAlertOnAnAverage(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	tests := []struct {
		name, expr string
		want       string // "" for no hint
	}{
		{"an average on the threshold side of a percentile alert is no average",
			`histogram_quantile(0.95, sum by (le) (rate(http_request_duration_seconds_bucket[5m]))) > avg_over_time(api:p95:baseline[7d]) * 1.3`, ""},
		{"an average of a plain series as threshold is no average either",
			`histogram_quantile(0.99, sum by (le) (rate(http_request_duration_seconds_bucket[5m]))) > 1.3 * avg_over_time(http_request_duration_seconds:max[7d])`, ""},
		{"an average of a p99 series is a percentile",
			`avg_over_time(order_gateway_latency_p99_seconds[5m]) > 0.0001`, ""},
		{"an average of a quantile label is a percentile",
			`avg by (job) (http_request_duration_seconds{quantile="0.99"}) > 0.5`, ""},
		{"an average of buckets under histogram_quantile is a percentile",
			`histogram_quantile(0.99, avg by (le) (rate(http_request_duration_seconds_bucket[5m]))) > 0.5`, ""},
		{"an average on the alert side is an average",
			`avg_over_time(http_request_duration_seconds:mean[5m]) > avg_over_time(http_request_duration_seconds:mean[7d]) * 1.3`,
			"The expression averages (avg_over_time()): "},
		{"an average after a comparison in another operand is an average",
			`(histogram_quantile(0.99, sum by (le) (rate(x_bucket[5m]))) > 2) or avg(http_request_latency_seconds) > 1`,
			"The expression averages (avg()): "},
		{"a _sum/_count ratio on the alert side is an average",
			`rate(http_request_duration_seconds_sum[5m]) / rate(http_request_duration_seconds_count[5m]) > 0.5`,
			"The expression averages (_sum/_count): "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := c.Classify(newAlert(kv("alertname", "APILatencyHigh", "kpi", "P95 LAT"), nil, tt.expr))
			h := findHint(got.Hints, HintPercentiles)
			switch {
			case tt.want == "" && h != nil:
				t.Fatalf("hint given: %q", h.Text)
			case tt.want != "" && h == nil:
				t.Fatalf("hint missing; hints %+v", got.Hints)
			case tt.want != "" && !strings.HasPrefix(h.Text, tt.want):
				t.Errorf("hint %q, want it to start %q", h.Text, tt.want)
			}
		})
	}
}

// A storage bucket in a metric's name is no histogram bucket: averaging
// it still gets the percentiles hint (the quantile check took every
// "bucket" word).
func TestAStorageBucketIsNoHistogramBucket(t *testing.T) {
	for expr, want := range map[string]bool{
		`avg_over_time(gcs_bucket_request_latency_seconds[5m]) > 0.5`:             true,
		`avg(rate(http_request_duration_seconds_bucket[5m])) > 0.5`:               false,
		`avg_over_time(storage_bucket_request_latency_seconds{job="s3"}[5m]) > 1`: true,
	} {
		if got := quantileSeries(callArg(expr, strings.IndexByte(expr, '('))); got == want {
			t.Errorf("%s: quantileSeries %v, want %v", expr, got, !want)
		}
	}
}
