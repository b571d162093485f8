package enrich

import (
	"strings"
	"testing"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// GitLab's generated service-level alerts (its metrics catalog: one
// multi-window burn-rate alert per service and component) are burn-rate
// SLO alerts: an audit found the load balancer's read as the LLM prompt
// cache's load balancer (the alertname's "Loadbalancer") and its Redis
// services' as the prompt cache's storage. The expression's ratios name
// them.
func TestGitLabServiceLevelAlertsAreBurnRateSLOs(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	gitlab := func(name, service, component, sli, ratio string) alert.Classification {
		return c.Classify(newAlert(kv("alertname", name, "alert_class", "slo_violation", "slo_alert", "yes", "sli_type", sli,
			"window", "1h", "severity", "s2", "type", service, "component", component, "env", "gprd", "tier", "sv", "stage", "main"),
			kv("title", "The "+component+" SLI of the "+service+" service has an error-rate violating SLO"),
			`(((gitlab_component_`+ratio+`:ratio_1h{component="`+component+`",env="gprd",monitor="global",type="`+service+`"} > (14.4 * 0.200000)) and on (env,environment,tier,type,stage,component) (gitlab_component_`+ratio+`:ratio_5m{component="`+component+`",env="gprd",monitor="global",type="`+service+`"} > (14.4 * 0.200000))))`))
	}
	for _, tc := range []struct{ name, service, component, sli, ratio string }{
		{"CamoproxyServiceLoadbalancerErrorSLOViolation", "camoproxy", "loadbalancer", "error", "errors"},
		{"RedisCacheServicePrimaryServerApdexSLOViolation", "redis-cache", "primary_server", "apdex", "apdex"},
		{"WebServiceRailsRequestsErrorSLOViolation", "web", "rails_requests", "error", "errors"},
	} {
		cl := gitlab(tc.name, tc.service, tc.component, tc.sli, tc.ratio)
		if cl.Sector != "slo-monitoring" || len(cl.KPIs) == 0 || cl.KPIs[0].ID != "EBR" {
			t.Errorf("%s: %s, want slo-monitoring, EBR", tc.name, describe(cl))
		}
	}
}

// A Pyrra burn-rate recording rule over a metric the catalog knows
// (<metric>:burnrate<window>) is the SLO's error-budget burn: Open Data
// Hub's route burn-rate alerts over haproxy_backend_http_responses_total
// read as the LLM API's errors, and one over vLLM's end-to-end latency
// brought the queue-time and prefill/decode hints with no burn hint.
func TestAPyrraBurnRateOverACatalogMetricIsErrorBudgetBurn(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	for _, metric := range []string{
		"haproxy_backend_http_responses_total:burnrate5m",
		"nginx_ingress_controller_requests:burnrate1h",
		"envoy_cluster_upstream_rq:burnrate30m",
		"vllm:e2e_request_latency_seconds:burnrate5m",
		"http_requests_total:burnrate5m",
	} {
		cl := c.Classify(newAlert(kv("alertname", "RouteErrorBurnRate", "slo", "dashboard-route", "long", "1h", "short", "5m", "severity", "critical"),
			kv("summary", "High error budget burn"),
			metric+`{slo="dashboard-route"} > (14.40 * (1-0.99000)) and `+strings.Replace(metric, ":burnrate5m", ":burnrate1h", 1)+` > (14.40 * (1-0.99000))`))
		if cl.Sector != "slo-monitoring" || len(cl.KPIs) == 0 || cl.KPIs[0].ID != "EBR" {
			t.Errorf("%s: %s, want slo-monitoring, EBR", metric, describe(cl))
		}
		for _, h := range cl.Hints {
			if h.ID == HintQueueTime || h.ID == HintPrefillDecode {
				t.Errorf("%s: hint %s on an error-budget burn", metric, h.ID)
			}
		}
	}
	// The metric a plain recording rule aggregates still decides.
	if cl := c.Classify(newAlert(kv("alertname", "TTFTHigh"), nil, `model:vllm:time_to_first_token_seconds:p99 > 2`)); len(cl.KPIs) == 0 || cl.KPIs[0].ID != "TTFT" {
		t.Errorf("model:vllm:time_to_first_token_seconds:p99: %s, want TTFT", describe(cl))
	}
}
