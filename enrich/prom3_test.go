package enrich

import (
	"fmt"
	"strings"
	"testing"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// readAs is what a classification tells on-call and routes: sector, KPIs,
// hints, class, and its signals but for the metric names they saw (the
// spellings differ).
func readAs(cl alert.Classification) string {
	sigs := make([]string, 0, len(cl.Signals))
	for _, s := range cl.Signals {
		v := s.Value
		if s.Kind == "metric" {
			v = "(metric)"
		}
		sigs = append(sigs, fmt.Sprintf("%s:%s→%s/%s@%.2f", s.Kind, v, s.Sector, s.KPI, s.Weight))
	}
	return fmt.Sprintf("%s kpis=%v hints=%v class=%s signals %s", cl.Sector, kpiIDs(cl), hintIDs(cl), cl.IncidentClass, strings.Join(sigs, " "))
}

// Prometheus 3 names a metric inside the braces — quoted ({"name"}), or by
// its __name__ matcher, which is also how a UTF-8 name is selected — and
// OpenTelemetry's names keep their dots with the unit's suffix added
// (NoUTF8EscapingWithSuffixes). Each reads as its classic spelling does
// (an audit: these read unknown, lost the job of up{…}, or lost the KPI).
func TestPrometheus3SpellingsReadAsTheirClassicOnes(t *testing.T) {
	c := newClassifier(t, Config{})
	for _, tc := range []struct{ name, classic, prom3 string }{
		{"__name__ equality",
			`histogram_quantile(0.99, sum by (le)(rate(vllm:time_to_first_token_seconds_bucket{job="vllm"}[5m]))) > 2`,
			`histogram_quantile(0.99, sum by (le)(rate({__name__="vllm:time_to_first_token_seconds_bucket", job="vllm"}[5m]))) > 2`},
		{"quoted __name__ equality",
			`histogram_quantile(0.99, sum by (le)(rate(vllm:time_to_first_token_seconds_bucket{job="vllm"}[5m]))) > 2`,
			`histogram_quantile(0.99, sum by (le)(rate({"__name__" = "vllm:time_to_first_token_seconds_bucket", job="vllm"}[5m]))) > 2`},
		{"__name__ regex of literal names",
			`rate(vllm:num_preemptions_total[5m]) + rate(vllm:request_failure_total[5m]) > 1`,
			`rate({__name__=~"vllm:num_preemptions_total|vllm:request_failure_total"}[5m]) > 1`},
		{"up with its job, the name quoted",
			`up{job="redis"} == 0`,
			`{"up", job="redis"} == 0`},
		{"absent up with its job, by __name__",
			`absent(up{job="kafka"})`,
			`absent({__name__="up", job="kafka"})`},
		{"an average of quoted _sum and _count",
			`rate(vllm:e2e_request_latency_seconds_sum[5m]) / rate(vllm:e2e_request_latency_seconds_count[5m]) > 5`,
			`rate({"vllm:e2e_request_latency_seconds_sum"}[5m]) / rate({"vllm:e2e_request_latency_seconds_count"}[5m]) > 5`},
		{"an average of a GenAI duration, dots",
			`rate(gen_ai_server_request_duration_seconds_sum[5m]) / rate(gen_ai_server_request_duration_seconds_count[5m]) > 5`,
			`rate({"gen_ai.server.request.duration_seconds_sum"}[5m]) / rate({"gen_ai.server.request.duration_seconds_count"}[5m]) > 5`},
		{"Triton's duration counter over its request count, quoted",
			`rate(nv_inference_request_duration_us[5m]) / rate(nv_inference_request_success[5m]) > 500000`,
			`rate({"nv_inference_request_duration_us"}[5m]) / rate({__name__="nv_inference_request_success"}[5m]) > 500000`},
		{"a quoted label name holding a parenthesis",
			`histogram_quantile(0.99, sum by (le) (rate(vllm:time_to_first_token_seconds_bucket[5m]))) > 2`,
			`histogram_quantile(0.99, sum by ("weird)name", le) (rate(vllm:time_to_first_token_seconds_bucket[5m]))) > 2`},
		{"GenAI time to first token, dots and the unit's suffix",
			`histogram_quantile(0.95, sum by (le) (rate(gen_ai_server_time_to_first_token_seconds_bucket[5m]))) > 2`,
			`histogram_quantile(0.95, sum by (le) (rate({"gen_ai.server.time_to_first_token_seconds_bucket"}[5m]))) > 2`},
		{"GenAI client operation duration, dots and the unit's suffix",
			`histogram_quantile(0.95, sum by (le) (rate(gen_ai_client_operation_duration_seconds_bucket[5m]))) > 20`,
			`histogram_quantile(0.95, sum by (le) (rate({"gen_ai.client.operation.duration_seconds_bucket"}[5m]))) > 20`},
	} {
		want := readAs(c.Classify(newAlert(kv("alertname", "Alert", "severity", "critical"), nil, tc.classic)))
		got := readAs(c.Classify(newAlert(kv("alertname", "Alert", "severity", "critical"), nil, tc.prom3)))
		if got != want {
			t.Errorf("%s: %s reads\n  %s\nwhere %s reads\n  %s", tc.name, tc.prom3, got, tc.classic, want)
		}
	}
	// A label's value equal to a metric's name is not that metric's
	// selector, and a negative name matcher names no metric.
	cl := c.Classify(newAlert(kv("alertname", "Alert"), nil, `up{job="kafka"} == 0 and on() sum(rate(http_requests_total{handler="up", job="redis"}[5m])) > 1 and {__name__!="vllm:num_requests_running"} > 0`))
	for _, s := range cl.Signals {
		if s.Value == "vllm:num_requests_running" {
			t.Errorf("a negative __name__ matcher named its metric: %s", describe(cl))
		}
		if s.Kind == "job" && s.Value == "redis" {
			t.Errorf("the job of a selector whose label value is \"up\" was read as up's: %s", describe(cl))
		}
	}
	if !strings.Contains(describe(cl), "job:kafka") {
		t.Errorf("up{job=\"kafka\"}'s job was not read: %s", describe(cl))
	}
}
