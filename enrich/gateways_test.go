package enrich

import (
	"slices"
	"testing"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// The tests of this file follow audit GATEWAYS2, which fired alerts on the
// metrics of AI gateways (Envoy AI Gateway, Kong AI, APISIX, Higress,
// Portkey), serving platforms (TEI, Seldon, ModelMesh, LMDeploy) and
// trading middleware (kdb+, FIX) at the router. No public rule file of
// these families exists; the alerts are hand-written on the metric names
// their sources define (each case cites its repository and path).

// gatewayCase is one alert and what it should read as: sector, first KPI
// ("" for none), incident class ("" to leave it unchecked), the hints it
// must get and those it must not.
type gatewayCase struct {
	name          string
	alert         *alert.Alert
	sector, kpi   string
	class         string
	hints, noHint []string
}

func checkGatewayCases(t *testing.T, cases []gatewayCase) {
	t.Helper()
	c := newClassifier(t, DefaultConfig())
	for _, tc := range cases {
		cl := c.Classify(tc.alert)
		if cl.Sector != tc.sector || kpiOf(cl) != tc.kpi {
			t.Errorf("%s: %s, want %s/%q", tc.name, describe(cl), tc.sector, tc.kpi)
			continue
		}
		if tc.class != "" && cl.IncidentClass != tc.class {
			t.Errorf("%s: class %s, want %s (%s)", tc.name, cl.IncidentClass, tc.class, describe(cl))
		}
		for _, h := range tc.hints {
			if !slices.Contains(hintIDs(cl), h) {
				t.Errorf("%s: no %s hint: %s", tc.name, h, describe(cl))
			}
		}
		if hasAnyHint(cl, tc.noHint...) {
			t.Errorf("%s: hints %v, want none of %v", tc.name, hintIDs(cl), tc.noHint)
		}
	}
}

// noGPUHints are the hints of a GPU's generation, which an AI gateway's
// view of a provider cannot act on.
var noGPUHints = []string{HintPrefillDecode, HintKVCache}

// Envoy AI Gateway records OpenTelemetry's gen_ai.server.* durations for
// the upstream it calls (envoyproxy/ai-gateway internal/metrics/genai.go,
// site/docs/capabilities/observability/metrics.md), labelled with the
// provider (gen_ai.provider.name, open-telemetry/semantic-conventions
// model/gen-ai/registry.yaml: openai, aws.bedrock, anthropic …). With an
// external provider's name they are the API's view of that provider (UST,
// an error_type ratio ERR), not a GPU's TTFT with prefill and KV-cache
// hints; without one, a model server's own gen_ai.server.* stays GPU
// serving.
func TestGenAIServerMetricsOfAnExternalProvider(t *testing.T) {
	gw := kv("job", "envoy-ai-gateway", "namespace", "envoy-gateway-system", "severity", "critical")
	with := func(extra ...string) map[string]string {
		m := kv(extra...)
		for k, v := range gw {
			m[k] = v
		}
		return m
	}
	ttft := `histogram_quantile(0.95, sum by (le, gen_ai_provider_name) (rate(gen_ai_server_time_to_first_token_seconds_bucket[5m]))) > 2`
	checkGatewayCases(t, []gatewayCase{
		{"TTFT, provider in the labels",
			newAlert(with("alertname", "AIGatewayTimeToFirstTokenHigh", "gen_ai_provider_name", "openai"), nil, ttft),
			"llm-inference-api", "UST", ClassLatency, []string{HintQueueTime}, noGPUHints},
		{"TTFT, provider in the selector only",
			newAlert(with("alertname", "AIGatewayTimeToFirstTokenHigh"), nil,
				`histogram_quantile(0.95, sum by (le) (rate(gen_ai_server_time_to_first_token_seconds_bucket{gen_ai_provider_name="aws.bedrock"}[5m]))) > 2`),
			"llm-inference-api", "UST", ClassLatency, nil, noGPUHints},
		{"TTFT, a regular expression of providers",
			newAlert(with("alertname", "TimeToFirstTokenHigh"), nil,
				`histogram_quantile(0.95, sum by (le) (rate(gen_ai_server_time_to_first_token_seconds_bucket{gen_ai_provider_name=~"openai|anthropic|aws\\.bedrock"}[5m]))) > 2`),
			"llm-inference-api", "UST", "", nil, noGPUHints},
		{"time per output token, the older gen_ai_system label",
			newAlert(with("alertname", "AIGatewayTimePerOutputTokenHigh", "gen_ai_system", "anthropic"), nil,
				`histogram_quantile(0.95, sum by (le) (rate(gen_ai_server_time_per_output_token_seconds_bucket[5m]))) > 0.1`),
			"llm-inference-api", "UST", "", nil, noGPUHints},
		{"request duration, UTF-8 names as Prometheus 3 keeps them",
			newAlert(with("alertname", "GenAIRequestDurationHigh"), nil,
				`histogram_quantile(0.95, sum by (le) (rate({"gen_ai.server.request.duration_bucket", "gen_ai.provider.name"="gcp.vertex_ai"}[5m]))) > 30`),
			"llm-inference-api", "UST", "", nil, noGPUHints},
		{"the request count's error_type ratio is the API's error rate",
			newAlert(with("alertname", "AIGatewayErrorRateHigh", "gen_ai_provider_name", "openai"), nil,
				`sum by (gen_ai_provider_name) (rate(gen_ai_server_request_duration_seconds_count{error_type!=""}[5m])) / sum by (gen_ai_provider_name) (rate(gen_ai_server_request_duration_seconds_count[5m])) > 0.05`),
			"llm-inference-api", "ERR", ClassErrors, nil, nil},
		{"the words AI gateway name the API",
			newAlert(kv("alertname", "AIGatewayHighLatency", "severity", "warning"), nil, ""),
			"llm-inference-api", "", "", nil, nil},
		// Without an external provider, gen_ai.server.* is the model
		// server's own: GPU serving, as before.
		{"no provider label: a model server's TTFT",
			newAlert(kv("alertname", "GenAITimeToFirstTokenHigh", "job", "vllm", "severity", "critical"), nil, ttft),
			"llm-inference-gpu", "TTFT", ClassLatency, []string{HintQueueTime, HintPrefillDecode}, nil},
		{"a self-hosted provider's name is no external provider",
			newAlert(kv("alertname", "GenAITimeToFirstTokenHigh", "gen_ai_provider_name", "vllm"), nil,
				`histogram_quantile(0.95, sum by (le) (rate(gen_ai_server_time_to_first_token_seconds_bucket{gen_ai_provider_name="vllm"}[5m]))) > 2`),
			"llm-inference-gpu", "TTFT", "", nil, nil},
		{"a negative matcher names no provider",
			newAlert(kv("alertname", "GenAITimeToFirstTokenHigh"), nil,
				`histogram_quantile(0.95, sum by (le) (rate(gen_ai_server_time_to_first_token_seconds_bucket{gen_ai_provider_name!="openai"}[5m]))) > 2`),
			"llm-inference-gpu", "TTFT", "", nil, nil},
	})
}

// KServe's step latencies (kserve/kserve python/kserve/kserve/metrics.py:
// request_predict_seconds "predict request latency", and the pre-,
// post-process and explain steps) time the v1/v2 predict call of a
// predictive model: no token is generated, so the prefill-decode split
// does not explain them (family.NoDecode); queueing still may. Ray Serve's
// replica processing latency keeps prefill-decode: a replica may run an
// LLM (Ray Serve LLM), whose processing is its prefill and decode.
func TestStepLatenciesWithoutGeneration(t *testing.T) {
	lbl := func(name string) map[string]string {
		return kv("alertname", name, "job", "kserve-sklearn", "namespace", "models", "severity", "warning")
	}
	checkGatewayCases(t, []gatewayCase{
		{"KServe's predict step",
			newAlert(lbl("KServePredictLatencyHigh"), nil,
				`histogram_quantile(0.95, sum by (le) (rate(request_predict_seconds_bucket[5m]))) > 0.5`),
			"llm-inference-gpu", "", ClassLatency, []string{HintQueueTime}, noGPUHints},
		{"KServe's preprocess step",
			newAlert(lbl("KServePreprocessSlow"), nil,
				`histogram_quantile(0.99, sum by (le, model_name) (rate(request_preprocess_seconds_bucket[5m]))) > 0.2`),
			"llm-inference-gpu", "", ClassLatency, []string{HintQueueTime}, noGPUHints},
		{"Ray Serve's processing latency may be an LLM's",
			newAlert(kv("alertname", "RayServeProcessingLatencyHigh", "severity", "warning"), nil,
				`histogram_quantile(0.95, sum by (le, deployment) (rate(ray_serve_deployment_processing_latency_ms_bucket[5m]))) > 2000`),
			"llm-inference-gpu", "", ClassLatency, []string{HintQueueTime, HintPrefillDecode}, nil},
	})
}
