package enrich

import (
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
