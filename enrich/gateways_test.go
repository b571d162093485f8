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
			newAlert(with("alertname", "AIGatewayTimeToFirstTokenHigh", "gen_ai_provider_name", "aws.anthropic"), nil, ttft),
			"llm-inference-api", "UST", ClassLatency, []string{HintQueueTime}, noGPUHints},
		// openai is the gateway's name of any upstream speaking OpenAI's
		// API, a self-hosted vLLM's InferencePool included (a review):
		// OpenAI's hosted API only beside one of its models.
		{"TTFT, openai beside an OpenAI model",
			newAlert(with("alertname", "AIGatewayTimeToFirstTokenHigh", "gen_ai_provider_name", "openai", "gen_ai_request_model", "gpt-4o-mini"), nil, ttft),
			"llm-inference-api", "UST", ClassLatency, []string{HintQueueTime}, noGPUHints},
		{"TTFT, openai beside an open-weight model is a self-hosted server's",
			newAlert(with("alertname", "AIGatewayTimeToFirstTokenHigh", "gen_ai_provider_name", "openai", "gen_ai_request_model", "meta-llama/Llama-3.1-8B-Instruct"), nil, ttft),
			"llm-inference-gpu", "TTFT", ClassLatency, []string{HintQueueTime, HintPrefillDecode}, nil},
		{"TTFT, openai beside gpt-oss is a self-hosted server's",
			newAlert(with("alertname", "AIGatewayTimeToFirstTokenHigh", "gen_ai_provider_name", "openai", "gen_ai_request_model", "openai/gpt-oss-120b"), nil, ttft),
			"llm-inference-gpu", "TTFT", ClassLatency, []string{HintQueueTime, HintPrefillDecode}, nil},
		{"TTFT, openai alone is the schema, not the host",
			newAlert(with("alertname", "AIGatewayTimeToFirstTokenHigh", "gen_ai_provider_name", "openai"), nil, ttft),
			"llm-inference-gpu", "TTFT", ClassLatency, []string{HintQueueTime, HintPrefillDecode}, nil},
		{"TTFT, Envoy AI Gateway's Azure OpenAI",
			newAlert(with("alertname", "AIGatewayTimeToFirstTokenHigh", "gen_ai_provider_name", "azure.openai"), nil, ttft),
			"llm-inference-api", "UST", ClassLatency, nil, noGPUHints},
		// The alert's own provider label outranks another selector's.
		{"the alert's own self-hosted provider beside another metric's external one",
			newAlert(kv("alertname", "GenAITimeToFirstTokenHigh", "gen_ai_provider_name", "vllm"), nil,
				`histogram_quantile(0.95, sum by (le) (rate(gen_ai_server_time_to_first_token_seconds_bucket{gen_ai_provider_name="vllm"}[5m]))) > 2 unless on() gen_ai_client_token_usage_sum{gen_ai_provider_name="anthropic"}`),
			"llm-inference-gpu", "TTFT", "", nil, nil},
		{"TTFT, provider in the selector only",
			newAlert(with("alertname", "AIGatewayTimeToFirstTokenHigh"), nil,
				`histogram_quantile(0.95, sum by (le) (rate(gen_ai_server_time_to_first_token_seconds_bucket{gen_ai_provider_name="aws.bedrock"}[5m]))) > 2`),
			"llm-inference-api", "UST", ClassLatency, nil, noGPUHints},
		{"TTFT, a regular expression of providers",
			newAlert(with("alertname", "TimeToFirstTokenHigh"), nil,
				`histogram_quantile(0.95, sum by (le) (rate(gen_ai_server_time_to_first_token_seconds_bucket{gen_ai_provider_name=~"anthropic|aws\\.bedrock"}[5m]))) > 2`),
			"llm-inference-api", "UST", "", nil, noGPUHints},
		{"TTFT, an anchored, grouped regular expression in single quotes",
			newAlert(with("alertname", "TimeToFirstTokenHigh"), nil,
				`histogram_quantile(0.95, sum by (le) (rate(gen_ai_server_time_to_first_token_seconds_bucket{gen_ai_provider_name=~'^(anthropic|gcp\\.anthropic)$'}[5m]))) > 2`),
			"llm-inference-api", "UST", "", nil, noGPUHints},
		{"TTFT, a regular expression with openai and no model",
			newAlert(with("alertname", "TimeToFirstTokenHigh"), nil,
				`histogram_quantile(0.95, sum by (le) (rate(gen_ai_server_time_to_first_token_seconds_bucket{gen_ai_provider_name=~"openai|anthropic"}[5m]))) > 2`),
			"llm-inference-gpu", "TTFT", "", nil, nil},
		{"time per output token, the older gen_ai_system label",
			newAlert(with("alertname", "AIGatewayTimePerOutputTokenHigh", "gen_ai_system", "anthropic"), nil,
				`histogram_quantile(0.95, sum by (le) (rate(gen_ai_server_time_per_output_token_seconds_bucket[5m]))) > 0.1`),
			"llm-inference-api", "UST", "", nil, noGPUHints},
		{"request duration, UTF-8 names as Prometheus 3 keeps them",
			newAlert(with("alertname", "GenAIRequestDurationHigh"), nil,
				`histogram_quantile(0.95, sum by (le) (rate({"gen_ai.server.request.duration_bucket", "gen_ai.provider.name"="gcp.vertex_ai"}[5m]))) > 30`),
			"llm-inference-api", "UST", "", nil, noGPUHints},
		{"the request count's error_type ratio is the API's error rate",
			newAlert(with("alertname", "AIGatewayErrorRateHigh", "gen_ai_provider_name", "openai", "gen_ai_response_model", "gpt-4.1-2025-04-14"), nil,
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
		// An aggregation drops the model its selector names: the selector
		// says which model the alert is about (audit GATEWAYS3).
		{"TTFT, openai with the model in the selector only",
			newAlert(with("alertname", "AIGatewayTimeToFirstTokenHigh"), nil,
				`histogram_quantile(0.95, sum by (le) (rate(gen_ai_server_time_to_first_token_seconds_bucket{gen_ai_provider_name="openai", gen_ai_request_model="gpt-4o"}[5m]))) > 2`),
			"llm-inference-api", "UST", ClassLatency, nil, noGPUHints},
		{"TTFT, openai with the model in the selector only, UTF-8 names",
			newAlert(with("alertname", "AIGatewayTimeToFirstTokenHigh"), nil,
				`histogram_quantile(0.95, sum by (le) (rate({"gen_ai.server.time_to_first_token_bucket", "gen_ai.provider.name"="openai", "gen_ai.request.model"="gpt-4o"}[5m]))) > 2`),
			"llm-inference-api", "UST", ClassLatency, nil, noGPUHints},
		{"TTFT, openai with a regular expression of OpenAI models",
			newAlert(with("alertname", "AIGatewayTimeToFirstTokenHigh", "gen_ai_provider_name", "openai"), nil,
				`histogram_quantile(0.95, sum by (le) (rate(gen_ai_server_time_to_first_token_seconds_bucket{gen_ai_request_model=~"^(gpt-4o|o3-mini)$"}[5m]))) > 2`),
			"llm-inference-api", "UST", ClassLatency, nil, noGPUHints},
		{"TTFT, openai with a regular expression naming an open-weight model too",
			newAlert(with("alertname", "AIGatewayTimeToFirstTokenHigh", "gen_ai_provider_name", "openai"), nil,
				`histogram_quantile(0.95, sum by (le) (rate(gen_ai_server_time_to_first_token_seconds_bucket{gen_ai_request_model=~"gpt-4o|meta-llama/.*"}[5m]))) > 2`),
			"llm-inference-gpu", "TTFT", ClassLatency, []string{HintPrefillDecode}, nil},
		{"TTFT, openai beside another label whose name ends like a model's",
			newAlert(with("alertname", "AIGatewayTimeToFirstTokenHigh", "gen_ai_provider_name", "openai"), nil,
				`histogram_quantile(0.95, sum by (le) (rate(gen_ai_server_time_to_first_token_seconds_bucket{upstream_gen_ai_request_model="gpt-4o"}[5m]))) > 2`),
			"llm-inference-gpu", "TTFT", ClassLatency, []string{HintPrefillDecode}, nil},
		// Open-weight models named GPT, served under their own names.
		{"TTFT, openai beside EleutherAI's gpt-j",
			newAlert(with("alertname", "AIGatewayTimeToFirstTokenHigh", "gen_ai_provider_name", "openai", "gen_ai_request_model", "gpt-j-6b"), nil, ttft),
			"llm-inference-gpu", "TTFT", ClassLatency, []string{HintPrefillDecode}, nil},
		{"TTFT, openai beside EleutherAI's gpt-neox",
			newAlert(with("alertname", "AIGatewayTimeToFirstTokenHigh", "gen_ai_provider_name", "openai", "gen_ai_request_model", "EleutherAI/gpt-neox-20b"), nil, ttft),
			"llm-inference-gpu", "TTFT", ClassLatency, []string{HintPrefillDecode}, nil},
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
		// Seldon Core v2 and ModelMesh serve predictive models for the
		// most part (audit GATEWAYS3).
		{"Seldon's inference latency",
			newAlert(kv("alertname", "SeldonModelInferLatencyHigh", "model", "income-classifier", "server", "mlserver", "severity", "warning"), nil,
				`histogram_quantile(0.95, sum by (le, model) (rate(seldon_model_infer_api_seconds_bucket[5m]))) > 0.2`),
			"llm-inference-gpu", "E2E", ClassLatency, []string{HintQueueTime}, noGPUHints},
		{"ModelMesh's external request time",
			newAlert(kv("alertname", "ModelMeshInferenceLatencyHigh", "modelId", "fraud-xgboost", "severity", "warning"), nil,
				`histogram_quantile(0.95, sum by (le) (rate(modelmesh_api_request_milliseconds_bucket[5m]))) > 500`),
			"llm-inference-gpu", "E2E", ClassLatency, []string{HintQueueTime}, noGPUHints},
		{"ModelMesh's request queue",
			newAlert(kv("alertname", "ModelMeshRequestQueueDelayHigh", "severity", "warning"), nil,
				`histogram_quantile(0.95, sum by (le, modelId) (rate(modelmesh_req_queue_delay_milliseconds_bucket[5m]))) > 500`),
			"llm-inference-gpu", "QTS", ClassSaturation, []string{HintQueueTime}, noGPUHints},
		{"Ray Serve's processing latency may be an LLM's",
			newAlert(kv("alertname", "RayServeProcessingLatencyHigh", "severity", "warning"), nil,
				`histogram_quantile(0.95, sum by (le, deployment) (rate(ray_serve_deployment_processing_latency_ms_bucket[5m]))) > 2000`),
			"llm-inference-gpu", "", ClassLatency, []string{HintQueueTime, HintPrefillDecode}, nil},
	})
}

// The AI gateways, serving platforms and trading middleware audit
// GATEWAYS2 found unknown (or, through an alertname word, GPU serving), by
// the names their sources define.
func TestGatewayAndServingPlatformFamilies(t *testing.T) {
	lbl := func(name string, extra ...string) map[string]string {
		return kv(append([]string{"alertname", name, "severity", "warning"}, extra...)...)
	}
	checkGatewayCases(t, []gatewayCase{
		// alibaba/higress plugins/wasm-go/extensions/ai-statistics/README_EN.md:
		// the average first-token latency is …_llm_first_token_duration
		// over …_llm_stream_duration_count. The word "first token" (GPU's
		// TTFT) yields to the gateway's metric.
		{"Higress' first-token latency",
			newAlert(lbl("HigressAIFirstTokenLatencyHigh", "job", "higress-gateway", "ai_model", "qwen-max"), nil,
				`sum by (ai_route, ai_model) (rate(route_upstream_model_consumer_metric_llm_first_token_duration[5m])) / sum by (ai_route, ai_model) (rate(route_upstream_model_consumer_metric_llm_stream_duration_count[5m])) > 3000`),
			secAPI, "UST", ClassLatency, []string{HintQueueTime}, noGPUHints},
		{"Higress' service duration",
			newAlert(lbl("HigressAIServiceLatencyHigh"), nil,
				`sum(rate(route_upstream_model_consumer_metric_llm_service_duration[5m])) / sum(rate(route_upstream_model_consumer_metric_llm_duration_count[5m])) > 20000`),
			secAPI, "UST", ClassLatency, nil, noGPUHints},
		{"Higress' output tokens",
			newAlert(lbl("HigressAITokenSpike"), nil, `sum(rate(route_upstream_model_consumer_metric_output_token[5m])) > 5000`),
			secAPI, "", "", nil, nil},
		// apache/apisix plugins/prometheus docs: apisix_llm_latency,
		// type="total" or "ttft" (3.18.0+).
		{"APISIX's LLM time to first token",
			newAlert(lbl("APISIXLLMTTFTHigh", "job", "apisix"), nil,
				`histogram_quantile(0.95, sum by (le, route_id) (rate(apisix_llm_latency_bucket{type="ttft"}[5m]))) > 3000`),
			secAPI, "UST", ClassLatency, nil, noGPUHints},
		{"APISIX's LLM connections",
			newAlert(lbl("APISIXLLMActiveConnectionsHigh"), nil, `sum by (route_id) (apisix_llm_active_connections) > 500`),
			secAPI, "", "", nil, nil},
		{"APISIX's HTTP traffic is no LLM's",
			newAlert(lbl("APISIXHigh5xxRate"), nil, `sum(rate(apisix_http_status{code=~"5.."}[5m])) / sum(rate(apisix_http_status[5m])) > 0.05`),
			alert.Unknown, "", "", nil, nil},
		// Kong/kong kong/plugins/prometheus/exporter.lua (kong_ prefix),
		// spec/03-plugins/26-prometheus: ai_llm_provider_latency_ms,
		// ai_llm_requests_total{cache_status}, ai_llm_tokens_total,
		// ai_cache_fetch_latency.
		{"Kong AI's provider latency",
			newAlert(lbl("KongAIProviderLatencyCritical", "ai_provider", "anthropic"), nil,
				`histogram_quantile(0.99, sum by (le, ai_provider) (rate(kong_ai_llm_provider_latency_ms_bucket[5m]))) > 20000`),
			secAPI, "UST", ClassLatency, nil, noGPUHints},
		{"Kong AI's semantic cache hit ratio",
			newAlert(lbl("KongAISemanticCacheHitRateLow"), nil,
				`sum(rate(kong_ai_llm_requests_total{cache_status="hit"}[30m])) / sum(rate(kong_ai_llm_requests_total[30m])) < 0.2`),
			secPStorage, "CHR", ClassCacheEfficiency, nil, nil},
		{"Kong AI's cache fetch latency",
			newAlert(lbl("KongAICacheFetchLatencyHigh", "vector_db", "redis"), nil,
				`histogram_quantile(0.95, sum by (le, vector_db) (rate(kong_ai_cache_fetch_latency_bucket[5m]))) > 200`),
			secPStorage, "CLAT", ClassLatency, nil, nil},
		{"Kong AI's tokens",
			newAlert(lbl("KongAITokenUsageSpike"), nil, `sum(rate(kong_ai_llm_tokens_total[15m])) > 3 * sum(rate(kong_ai_llm_tokens_total[15m] offset 1d))`),
			secAPI, "", "", nil, nil},
		{"Kong's HTTP traffic is no LLM's",
			newAlert(lbl("KongHTTP5xxHigh", "job", "kong", "service", "billing-api"), nil,
				`sum(rate(kong_http_requests_total{code=~"5.."}[5m])) by (service) / sum(rate(kong_http_requests_total[5m])) by (service) > 0.05`),
			alert.Unknown, "", "", nil, nil},
		// Portkey-AI/gateway src/apm/prometheus/prometheusClient.ts.
		{"Portkey's request duration",
			newAlert(lbl("PortkeyRequestLatencyHigh"), nil,
				`histogram_quantile(0.95, sum by (le) (rate(portkey_request_duration_milliseconds_bucket[5m]))) > 10000`),
			secAPI, "P95 LAT", ClassLatency, nil, noGPUHints},
		{"Portkey's unprefixed request_count is anyone's",
			newAlert(lbl("Gateway5xxHigh"), nil,
				`sum(rate(request_count{app="portkey-gateway",code=~"5.."}[5m])) / sum(rate(request_count{app="portkey-gateway"}[5m])) > 0.05`),
			alert.Unknown, "", "", nil, nil},
		{"Portkey's unprefixed request_count, named in the alertname",
			newAlert(lbl("PortkeyGateway5xxHigh"), nil,
				`sum(rate(request_count{app="portkey-gateway",code=~"5.."}[5m])) / sum(rate(request_count{app="portkey-gateway"}[5m])) > 0.05`),
			secAPI, "", "", nil, nil},
		// Portkey's unprefixed LLM latency, named by the gateway's name in
		// the alert (audit GATEWAYS3).
		{"Portkey's provider latency, named in the alertname",
			newAlert(lbl("PortkeyLLMLatencyHigh", "job", "portkey-gateway"), nil,
				`histogram_quantile(0.95, sum by (le) (rate(llm_request_duration_milliseconds_bucket{job="portkey-gateway"}[5m]))) > 20000`),
			secAPI, "", ClassLatency, nil, noGPUHints},
		// The word as one word only: a switch's port key is no gateway's
		// (a review).
		{"a MACsec port key is no Portkey",
			newAlert(lbl("MacsecPortKeyMismatch", "job", "snmp", "ifName", "Ethernet12"), kv("summary", "port key mismatch on Ethernet12"), `macsec_port_key_mismatch > 0`),
			alert.Unknown, "", "", nil, nil},
		{"an LACP port key is no Portkey",
			newAlert(lbl("LacpPortKeyMismatch"), nil, `lacp_partner_port_key != lacp_actor_port_key`),
			alert.Unknown, "", "", nil, nil},
		// OpenTelemetry's gen_ai.client.* metrics: an application's view of
		// the LLM API it calls.
		{"gen_ai.client operation duration",
			newAlert(lbl("GenAIClientOperationSlow", "service_name", "support-bot"), nil,
				`histogram_quantile(0.95, sum by (le) (rate(gen_ai_client_operation_duration_seconds_bucket[5m]))) > 20`),
			secAPI, "P95 LAT", ClassLatency, nil, noGPUHints},
		// Prometheus 3.6's UnderscoreEscapingWithoutSuffixes translation
		// leaves the unit's suffix out (an audit: no KPI).
		{"gen_ai.client operation duration without the unit's suffix",
			newAlert(lbl("GenAIClientOperationSlow"), nil,
				`histogram_quantile(0.95, sum by (le) (rate(gen_ai_client_operation_duration_bucket[5m]))) > 20`),
			secAPI, "P95 LAT", ClassLatency, nil, noGPUHints},
		{"gen_ai.server time to first token without the unit's suffix",
			newAlert(lbl("GenAITTFTHigh"), nil,
				`histogram_quantile(0.95, sum by (le) (rate(gen_ai_server_time_to_first_token_bucket[5m]))) > 2`),
			secGPU, "TTFT", ClassLatency, nil, nil},
		{"gen_ai.server time per output token without the unit's suffix",
			newAlert(lbl("GenAITPOTHigh"), nil,
				`histogram_quantile(0.95, sum by (le) (rate(gen_ai_server_time_per_output_token_bucket[5m]))) > 0.2`),
			secGPU, "TPOT", ClassLatency, nil, nil},
		{"gen_ai.client time to first chunk, UTF-8 names",
			newAlert(lbl("GenAIClientFirstChunkSlow"), kv("summary", "Time to first token from the LLM API is above 3s"),
				`histogram_quantile(0.95, sum by (le) (rate({"gen_ai.client.operation.time_to_first_chunk_bucket"}[5m]))) > 3`),
			secAPI, "UST", ClassLatency, nil, noGPUHints},
		// huggingface/text-embeddings-inference core/src/infer.rs
		// (te_embed_*), router/src (te_request_*): an embedding has no
		// decode.
		{"TEI's embedding queue time",
			newAlert(lbl("TEIQueueTimeHigh", "job", "tei"), nil,
				`histogram_quantile(0.95, sum by (le) (rate(te_embed_queue_duration_bucket{job="tei"}[5m]))) > 0.5`),
			secGPU, "QTS", ClassSaturation, []string{HintQueueTime}, noGPUHints},
		{"TEI's embedding latency",
			newAlert(lbl("TEIRequestLatencyHigh", "job", "tei"), nil,
				`histogram_quantile(0.95, sum by (le) (rate(te_embed_duration_bucket{job="tei"}[5m]))) > 1`),
			secGPU, "E2E", ClassLatency, []string{HintQueueTime}, noGPUHints},
		{"TEI's request latency",
			newAlert(lbl("TEIRequestDurationHigh"), nil,
				`histogram_quantile(0.99, sum by (le) (rate(te_request_duration_bucket[5m]))) > 2`),
			secGPU, "E2E", ClassLatency, []string{HintQueueTime}, noGPUHints},
		{"TEI's inference time, neither queueing nor generation",
			newAlert(lbl("TEIInferenceLatencyHigh"), nil,
				`histogram_quantile(0.95, sum by (le) (rate(te_embed_inference_duration_bucket[5m]))) > 0.5`),
			secGPU, "", ClassLatency, nil, []string{HintQueueTime, HintPrefillDecode, HintKVCache}},
		// SeldonIO/seldon-core scheduler/pkg/metrics/agent.go.
		{"Seldon's inference latency",
			newAlert(lbl("SeldonModelInferLatencyHigh", "model", "iris"), nil,
				`histogram_quantile(0.95, sum by (le, model) (rate(seldon_model_infer_api_seconds_bucket[5m]))) > 1`),
			secGPU, "E2E", ClassLatency, nil, nil},
		{"Seldon's error ratio counts requests",
			newAlert(lbl("SeldonModelInferErrors"), nil,
				`sum(rate(seldon_model_infer_api_seconds_count{code!="200"}[5m])) / sum(rate(seldon_model_infer_api_seconds_count[5m])) > 0.05`),
			secGPU, "", ClassErrors, nil, nil},
		// kserve/modelmesh src/main/java/com/ibm/watson/modelmesh/Metric.java.
		{"ModelMesh's request queue",
			newAlert(lbl("ModelMeshRequestQueueDelayHigh"), nil,
				`histogram_quantile(0.95, sum by (le, modelId) (rate(modelmesh_req_queue_delay_milliseconds_bucket[5m]))) > 500`),
			secGPU, "QTS", ClassSaturation, []string{HintQueueTime}, nil},
		{"ModelMesh's external request time",
			newAlert(lbl("ModelMeshInferenceLatencyHigh"), nil,
				`histogram_quantile(0.95, sum by (le) (rate(modelmesh_api_request_milliseconds_bucket[5m]))) > 1000`),
			secGPU, "E2E", ClassLatency, nil, nil},
		{"ModelMesh's model loading queue holds no requests",
			newAlert(lbl("ModelMeshLoadingQueueDelayHigh"), nil,
				`histogram_quantile(0.95, sum by (le) (rate(modelmesh_loading_queue_delay_milliseconds_bucket[5m]))) > 30000`),
			secGPU, "", "", nil, []string{HintQueueTime, HintPrefillDecode}},
		// InternLM/lmdeploy lmdeploy/metrics/loggers.py: exact names before
		// the lmdeploy: prefix, so the KV cache stays the cache's.
		{"LMDeploy's TTFT",
			newAlert(lbl("LMDeployTTFTHigh"), nil,
				`histogram_quantile(0.95, sum by (le) (rate(lmdeploy:time_to_first_token_seconds_bucket[5m]))) > 2`),
			secGPU, "TTFT", ClassLatency, []string{HintQueueTime, HintPrefillDecode}, nil},
		{"LMDeploy's inter-token latency",
			newAlert(lbl("LMDeployTokenLatencyHigh"), nil,
				`histogram_quantile(0.95, sum by (le) (rate(lmdeploy:iter_token_latency_bucket[5m]))) > 0.1`),
			secGPU, "ITL", ClassLatency, nil, nil},
		{"LMDeploy's KV cache",
			newAlert(lbl("LMDeployKVCacheFull"), nil, `max(lmdeploy:gpu_cache_usage_perc) > 0.95`),
			secPStorage, "COCC", ClassCapacity, nil, nil},
		{"LMDeploy's waiting requests",
			newAlert(lbl("LMDeployRequestsWaiting"), nil, `sum(lmdeploy:num_requests_waiting) > 50`),
			secGPU, "QTS", ClassSaturation, nil, nil},
		// KxSystems/prometheus-kdb-exporter q/exporter.q: a tick database or
		// a research store, settled by context; never the network's
		// microburst; its unprefixed memory_* gauges name nothing.
		{"kdb+ query latency alone",
			newAlert(lbl("KdbSyncQueryLatencyHigh", "job", "kdb-rdb"), nil,
				`histogram_quantile(0.95, sum by (le, instance) (rate(kdb_sync_histogram_seconds_bucket[5m]))) > 0.5`),
			alert.Unknown, "", "", nil, nil},
		{"kdb+ query latency of a trading desk",
			newAlert(lbl("KdbSyncQueryLatencyHigh", "sector", "hft-low-latency-exec"), nil,
				`histogram_quantile(0.95, sum by (le, instance) (rate(kdb_sync_histogram_seconds_bucket[5m]))) > 0.5`),
			secExec, "", ClassLatency, nil, []string{HintMicroburst}},
		{"kdb+ memory is any process's",
			newAlert(lbl("KdbMemoryHigh", "job", "kdb-rdb"), nil,
				`memory_usage_bytes{job="kdb-rdb"} / memory_physical_bytes{job="kdb-rdb"} > 0.8`),
			alert.Unknown, "", "", nil, nil},
	})
	// kdb+ names both candidates.
	c := newClassifier(t, DefaultConfig())
	cl := c.Classify(newAlert(lbl("KdbSyncErrors"), nil, `rate(kdb_sync_err_total[5m]) > 0`))
	if !slices.Equal(cl.Candidates, []string{secExec, secQuant}) {
		t.Errorf("KdbSyncErrors: %s, candidates %v; want %s and %s", describe(cl), cl.Candidates, secExec, secQuant)
	}
}

// A FIX session that disconnected is down: availability, as "down" and
// "unreachable" are (audit GATEWAYS2 finding 4). Its sector comes from
// "FIX session"; fix_session_connected is a hand-written gauge.
func TestDisconnectedIsAvailability(t *testing.T) {
	expr := `fix_session_connected{session="FIX.4.4:ACME->NYSE"} == 0`
	checkGatewayCases(t, []gatewayCase{
		{"FIXSessionDisconnected",
			newAlert(kv("alertname", "FIXSessionDisconnected", "job", "oms", "namespace", "trading", "severity", "critical"),
				kv("summary", "FIX session ACME->NYSE is disconnected"), expr),
			secExec, "", ClassAvailability, nil, nil},
		{"FIXSessionDisconnect",
			newAlert(kv("alertname", "FIXSessionDisconnect", "severity", "critical"), nil, expr),
			secExec, "", ClassAvailability, nil, nil},
		// The summary says what is (grafana/kafka-observ-lib's
		// KafkaZookeeperSyncConnect: "Kafka Zookeeper sync disconnected.").
		{"a FIX session's summary says it disconnected",
			newAlert(kv("alertname", "FIXSessionState", "severity", "critical"), kv("summary", "FIX session ACME->NYSE disconnected."), expr),
			secExec, "", ClassAvailability, nil, nil},
	})
	// In prose the word tells what a condition will do, not that anything
	// is down (audit GATEWAYS3): no class from it.
	c := newClassifier(t, DefaultConfig())
	for _, a := range []*alert.Alert{
		newAlert(kv("alertname", "RedisClientsNearMaxclients", "job", "redis-prompt-cache", "severity", "warning"),
			kv("summary", "Redis clients at 90% of maxclients", "description", "New clients will be disconnected when maxclients is reached."),
			`redis_connected_clients / redis_config_maxclients > 0.9`),
		newAlert(kv("alertname", "FIXSessionRejects", "severity", "warning"),
			kv("description", "The venue will disconnect the FIX session after 3 more rejects."),
			`rate(fix_session_rejects_total{session="FIX.4.4:ACME->NYSE"}[5m]) > 0`),
		// A summary saying what will happen, not what is (a review).
		newAlert(kv("alertname", "RedisClientsNearMaxclients", "job", "redis-prompt-cache", "severity", "warning"),
			kv("summary", "New clients will be disconnected when maxclients is reached."),
			`redis_connected_clients / redis_config_maxclients > 0.9`),
	} {
		cl := c.Classify(a)
		if cl.Sector == alert.Unknown {
			t.Errorf("%s: %s, want a known sector (the class is read only then)", a.Labels["alertname"], describe(cl))
		}
		if cl.IncidentClass == ClassAvailability {
			t.Errorf("%s: class %s from the annotations' disconnect: %s", a.Labels["alertname"], cl.IncidentClass, describe(cl))
		}
	}
}
