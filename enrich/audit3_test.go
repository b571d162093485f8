package enrich

import (
	"strings"
	"testing"
)

// Times that a rule renders with Prometheus' humanizeDuration ("1m 30s",
// "12.5s", "1d 2h 0m 0s") make their hints specific, as plain seconds and
// Go durations do.
func TestHintsReadHumanizedDurations(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	expr := `histogram_quantile(0.99, sum by (le) (rate(vllm:time_to_first_token_seconds_bucket[5m]))) > 30`
	cases := []struct {
		anns map[string]string
		hint string
		text string
	}{
		{kv("queue_time_seconds", "1m 30s", "compute_time_seconds", "12.5s"), "queue-time", "queue time is 88% of latency (90.00s queued of 102.50s)"},
		{kv("queue_time_seconds", "250ms", "latency_seconds", "1d 0h 0m 0s"), "queue-time", "compute time is 100% of latency"},
		{kv("prefill_seconds", "1m 0s", "decode_seconds", "20s"), "prefill-decode", "prefill is 75% of request time"},
	}
	for _, tc := range cases {
		cl := c.Classify(newAlert(kv("alertname", "VLLMTimeToFirstTokenHigh", "severity", "warning"), tc.anns, expr))
		found := false
		for _, h := range cl.Hints {
			if h.ID == tc.hint {
				found = true
				if !h.Specific || !strings.Contains(h.Text, tc.text) {
					t.Errorf("%v: hint %s = %q (specific %v), want it specific with %q", tc.anns, h.ID, h.Text, h.Specific, tc.text)
				}
			}
		}
		if !found {
			t.Errorf("%v: no %s hint: %s", tc.anns, tc.hint, describe(cl))
		}
	}
}
