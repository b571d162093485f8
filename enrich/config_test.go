package enrich

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v2"
)

func TestConfigDecodesStrictlyWithDefaults(t *testing.T) {
	const doc = `
rules:
  - matchers: ['job=~"vllm.*"']
    sector: llm-inference-gpu
    kpi: TTFT
metric_families:
  - prefix: acme_kv_
    kpi: CHR
    sector: llm-prompt-cache-storage
hints:
  queue-time: "See the runbook."
`
	var cfg Config
	if err := yaml.UnmarshalStrict([]byte(doc), &cfg); err != nil {
		t.Fatalf("UnmarshalStrict: %v", err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if len(cfg.Rules) != 1 || cfg.Rules[0].KPI != "TTFT" || cfg.MetricFamilies[0].Prefix != "acme_kv_" || cfg.Hints["queue-time"] != "See the runbook." {
		t.Errorf("decoded %+v", cfg)
	}
	if err := yaml.UnmarshalStrict([]byte("rulez: []\n"), &cfg); err == nil {
		t.Error("an unknown key was accepted")
	}
}

func TestConfigValidateNamesEveryProblemByPath(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want []string
	}{
		{"an unknown sector is named by its path",
			Config{Rules: []RuleConfig{{Matchers: []string{`job="x"`}, Sector: "payments"}}},
			[]string{`rules[0].sector: unknown sector "payments"`}},
		{"a bad matcher is named by its path",
			Config{Rules: []RuleConfig{{Matchers: []string{`job="x"`, `job=~"(`}, Sector: "hft-cdn"}}},
			[]string{`rules[0].matchers[1]: parse "job=~\"(":`}},
		{"a rule without matchers or sector is rejected",
			Config{Rules: []RuleConfig{{}}},
			[]string{"rules[0].matchers: at least one matcher is required", "rules[0].sector: required"}},
		{"an unknown KPI is named by its path",
			Config{Rules: []RuleConfig{{Matchers: []string{`a="b"`}, Sector: "hft-cdn", KPI: "XYZ"}}},
			[]string{`rules[0].kpi: unknown KPI "XYZ"`}},
		{"a KPI of another sector is rejected",
			Config{Rules: []RuleConfig{{Matchers: []string{`a="b"`}, Sector: "hft-cdn", KPI: "TTFT"}}},
			[]string{`rules[0].kpi: KPI "TTFT" is not a KPI of sector "hft-cdn"`}},
		{"a family needs exactly one of name, prefix and contains",
			Config{MetricFamilies: []FamilyConfig{{KPI: "CHR"}, {Name: "a", Prefix: "b", KPI: "CHR"}}},
			[]string{"metric_families[0]: exactly one of", "metric_families[1]: exactly one of"}},
		{"a family needs a KPI or a sector",
			Config{MetricFamilies: []FamilyConfig{{Name: "x"}}},
			[]string{"metric_families[0]: kpi or sector is required"}},
		{"an unknown hint id is rejected",
			Config{Hints: map[string]string{"queue_time": "x"}},
			[]string{"hints.queue_time: unknown hint id"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if err == nil {
				t.Fatal("Validate() = nil")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if _, nerr := New(tt.cfg); nerr == nil {
				t.Error("New accepted an invalid config")
			}
		})
	}
}

func TestConfigValidAcceptsCaseInsensitiveKPIs(t *testing.T) {
	cfg := Config{
		Rules:          []RuleConfig{{Matchers: []string{`{job="hv", env="prod"}`}, Sector: "hft-vm-clusters", KPI: "numa miss"}},
		MetricFamilies: []FamilyConfig{{Contains: "_owd_", KPI: "OWD"}},
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("Validate() = %v", err)
	}
}

// A user's families are consulted before the built-in catalog, so they can
// override it (docs/classification.md): a `prefix:` or `contains:` of yours
// covers the built-in exact names it matches too. The built-in exact names
// won (an audit: `prefix: redis_` moved redis_connected_clients, not
// redis_keyspace_hits_total; vLLM's TTFT kept its built-in reading).
func TestUserFamiliesOverrideBuiltInExactNames(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MetricFamilies = []FamilyConfig{
		{Prefix: "redis_", KPI: "CHR", Sector: "hft-cdn"},
		{Contains: "time_to_first", KPI: "T2D", Sector: "hft-vm-clusters"},
	}
	c := newClassifier(t, cfg)
	for _, tc := range []struct{ expr, sector, kpi string }{
		{`rate(redis_keyspace_hits_total[5m]) / rate(redis_keyspace_misses_total[5m]) < 0.5`, "hft-cdn", "CHR"},
		{`redis_connected_clients > 1000`, "hft-cdn", "CHR"},
		{`histogram_quantile(0.99, rate(vllm:time_to_first_token_seconds_bucket[5m])) > 1`, "hft-vm-clusters", "T2D"},
		// What no family of yours matches keeps the built-in reading.
		{`histogram_quantile(0.99, rate(vllm:e2e_request_latency_seconds_bucket[5m])) > 10`, "llm-inference-gpu", "E2E"},
	} {
		cl := c.Classify(newAlert(kv("alertname", "X", "severity", "warning"), nil, tc.expr))
		if cl.Sector != tc.sector || kpiOf(cl) != tc.kpi {
			t.Errorf("%s: %s, want %s %s", tc.expr, describe(cl), tc.sector, tc.kpi)
		}
	}
}

// A recording rule's operation that names what it measures (Pyrra's
// ":burnrate") still decides over a user's family of the metric it
// aggregates: a user's `prefix: haproxy_` made haproxy_…:burnrate5m the
// load balancer's (a review). A user family naming the rule itself wins.
func TestAUserFamilyLeavesBurnRateRulesToTheirOperation(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MetricFamilies = []FamilyConfig{
		{Prefix: "haproxy_", KPI: "URT", Sector: "llm-prompt-cache-lb"},
		{Contains: "_latency", KPI: "CLAT", Sector: "llm-prompt-cache-storage"},
		{Name: "api:custom_errors:burnrate5m", KPI: "ERR", Sector: "llm-inference-api"},
	}
	c := newClassifier(t, cfg)
	for _, tc := range []struct{ expr, sector, kpi string }{
		{`haproxy_backend_http_responses_total:burnrate5m{slo="lb"} > (14.4 * 0.001)`, "slo-monitoring", "EBR"},
		{`vllm:e2e_request_latency_seconds:burnrate5m > (14.4 * 0.001)`, "slo-monitoring", "EBR"},
		{`api:custom_errors:burnrate5m > 0.0144`, "llm-inference-api", "ERR"},
		// Without an operation, the user's family still overrides.
		{`haproxy_backend_http_responses_total > 10`, "llm-prompt-cache-lb", "URT"},
	} {
		cl := c.Classify(newAlert(kv("alertname", "X", "severity", "critical"), nil, tc.expr))
		if cl.Sector != tc.sector || kpiOf(cl) != tc.kpi {
			t.Errorf("%s: %s, want %s %s", tc.expr, describe(cl), tc.sector, tc.kpi)
		}
	}
}
