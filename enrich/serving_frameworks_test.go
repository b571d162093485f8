package enrich

import (
	"slices"
	"testing"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// An audit found the alerts of serving frameworks the catalog did not know
// read as unknown (no sector, KPI or hint: the decision rested on the
// severity alone) or as a sector without its KPI. No public rule file of
// these frameworks with a citable repository was found (rule snippets in
// README files of repositories the index does not name), so each case is
// one realistic alert per framework, written from the framework's
// documented metric names (the Source of its families in
// families_exporters.go).
func TestServingFrameworkAlerts(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	for _, tc := range []struct {
		framework, alertname, expr string
		sector, kpi, class         string
		hints, noHints             []string
	}{
		{
			framework: "KServe", alertname: "KServePredictLatencyHigh",
			expr:   `histogram_quantile(0.99, sum by (le, model_name) (rate(request_predict_seconds_bucket[5m]))) > 0.5`,
			sector: "llm-inference-gpu", kpi: "", class: ClassLatency,
			// A predictive model's predict step generates no tokens:
			// no prefill-decode (audit GATEWAYS2, family.NoDecode).
			hints: []string{HintQueueTime}, noHints: []string{HintPrefillDecode, HintKVCache},
		},
		{
			framework: "Ray Serve", alertname: "RayServeDeploymentQueueBacklog",
			expr:   `sum(ray_serve_deployment_queued_queries) by (application, deployment) > 100`,
			sector: "llm-inference-gpu", kpi: "QTS", class: ClassSaturation,
			hints: []string{HintQueueTime}, noHints: []string{HintKVCache},
		},
		{
			framework: "Ray Serve", alertname: "RayServeHighHTTPErrorRate",
			expr:   `sum(rate(ray_serve_num_http_error_requests_total[5m])) by (application) / sum(rate(ray_serve_num_http_requests_total[5m])) by (application) > 0.05`,
			sector: "llm-inference-api", kpi: "ERR", class: ClassErrors,
			noHints: []string{HintQueueTime, HintKVCache},
		},
		{
			framework: "Ray Serve", alertname: "RayServeHighLatency",
			expr:   `histogram_quantile(0.99, sum(rate(ray_serve_deployment_processing_latency_ms_bucket[5m])) by (le, deployment)) > 1000`,
			sector: "llm-inference-gpu", kpi: "", class: ClassLatency,
			hints: []string{HintQueueTime, HintPrefillDecode},
		},
		{
			framework: "LMCache", alertname: "LMCacheRetrieveHitRateLow",
			expr:   `avg_over_time(lmcache:retrieve_hit_rate[15m]) < 0.2`,
			sector: "llm-prompt-cache-storage", kpi: "CHR", class: ClassCacheEfficiency,
			hints: []string{HintKVCache},
		},
		{
			framework: "LMCache (OpenTelemetry spelling)", alertname: "LMCacheHitRateLow",
			expr:   `lmcache_retrieve_hit_rate < 0.2`,
			sector: "llm-prompt-cache-storage", kpi: "CHR", class: ClassCacheEfficiency,
			hints: []string{HintKVCache},
		},
		{
			framework: "LMCache", alertname: "LMCacheLocalCacheNearlyFull",
			expr:   `lmcache:local_cache_usage / (64 * 1024 * 1024 * 1024) > 0.9`,
			sector: "llm-prompt-cache-storage", kpi: "COCC", class: ClassCapacity,
			hints: []string{HintKVCache},
		},
		{
			framework: "TensorRT-LLM", alertname: "TRTLLMHighKVUtilization",
			expr:   `max by (model_name) (trtllm_kv_cache_utilization) > 0.95`,
			sector: "llm-prompt-cache-storage", kpi: "COCC", class: ClassCapacity,
			hints: []string{HintKVCache},
		},
		{
			framework: "TensorRT-LLM", alertname: "TRTLLMRequestsWaiting",
			expr:   `sum by (model_name) (trtllm_num_requests_waiting) > 50`,
			sector: "llm-inference-gpu", kpi: "QTS", class: ClassSaturation,
			hints: []string{HintQueueTime},
		},
		{
			framework: "Triton TensorRT-LLM backend", alertname: "TritonKVCacheFull",
			expr:   `nv_trt_llm_kv_cache_block_metrics{kv_cache_block_type="used"} / ignoring(kv_cache_block_type) nv_trt_llm_kv_cache_block_metrics{kv_cache_block_type="max"} > 0.9`,
			sector: "llm-prompt-cache-storage", kpi: "COCC", class: ClassCapacity,
			hints: []string{HintKVCache},
		},
		{
			framework: "NVIDIA Dynamo", alertname: "DynamoQueueBacklog",
			expr:   `dynamo_frontend_queued_requests > 100`,
			sector: "llm-inference-gpu", kpi: "QTS", class: ClassSaturation,
			hints: []string{HintQueueTime},
		},
		{
			framework: "NVIDIA Dynamo", alertname: "DynamoGPUCacheFull",
			expr:   `dynamo_component_kvstats_gpu_cache_usage_percent > 0.95`,
			sector: "llm-prompt-cache-storage", kpi: "COCC", class: ClassCapacity,
			hints: []string{HintKVCache},
		},
		{
			framework: "NVIDIA NIM", alertname: "NIMHighQueueDepth",
			expr:   `max by (model_name) (num_requests_waiting) > 10`,
			sector: "llm-inference-gpu", kpi: "QTS", class: ClassSaturation,
			hints: []string{HintQueueTime},
		},
		{
			framework: "llm-d", alertname: "LLMDRouterHighLatency",
			expr:   `histogram_quantile(0.99, sum by (le) (rate(llm_d_epp_request_duration_seconds_bucket[5m]))) > 10`,
			sector: "llm-inference-api", kpi: "P95 LAT", class: ClassLatency,
			hints: []string{HintQueueTime},
		},
		{
			framework: "TorchServe", alertname: "TorchServeQueueLatencyHigh",
			expr:   `rate(ts_queue_latency_microseconds[5m]) / rate(ts_inference_requests_total[5m]) > 100000`,
			sector: "llm-inference-gpu", kpi: "QTS", class: ClassSaturation,
			hints: []string{HintQueueTime},
		},
		{
			framework: "MLServer", alertname: "MLServerWorkerQueueBacklog",
			expr:   `histogram_quantile(0.95, sum by (le) (rate(parallel_request_queue_bucket[5m]))) > 10`,
			sector: "llm-inference-gpu", kpi: "QTS", class: ClassSaturation,
			hints: []string{HintQueueTime},
		},
		{
			framework: "MLServer", alertname: "MLServerInferenceFailures",
			expr:   `sum(rate(model_infer_request_failure_total[5m])) / (sum(rate(model_infer_request_failure_total[5m])) + sum(rate(model_infer_request_success_total[5m]))) > 0.05`,
			sector: "llm-inference-gpu", kpi: "", class: ClassErrors,
			noHints: []string{HintQueueTime, HintPrefillDecode, HintKVCache},
		},
		{
			framework: "BentoML", alertname: "BentoMLHighLatency",
			expr:   `histogram_quantile(0.99, sum by (le, endpoint) (rate(bentoml_service_request_duration_seconds_bucket[5m]))) > 2`,
			sector: "llm-inference-gpu", kpi: "E2E", class: ClassLatency,
			hints: []string{HintQueueTime, HintPrefillDecode},
		},
	} {
		a := newAlert(kv("alertname", tc.alertname, "severity", "warning", "job", "model-serving", "namespace", "inference"), nil, tc.expr)
		cl := c.Classify(a)
		if cl.Sector != tc.sector || kpiOf(cl) != tc.kpi || cl.IncidentClass != tc.class {
			t.Errorf("%s %s: %s, want %s/%q class %s", tc.framework, tc.alertname, describe(cl), tc.sector, tc.kpi, tc.class)
			continue
		}
		ids := hintIDs(cl)
		for _, h := range tc.hints {
			if !slices.Contains(ids, h) {
				t.Errorf("%s %s: hints %v, want %s", tc.framework, tc.alertname, ids, h)
			}
		}
		if hasAnyHint(cl, tc.noHints...) {
			t.Errorf("%s %s: hints %v, want none of %v", tc.framework, tc.alertname, ids, tc.noHints)
		}
	}
}

// A framework's word names GPU serving only with evidence beside it, and
// "Dynamo" is no word of the catalog: DynamoDB's throttling is not NVIDIA
// Dynamo.
func TestServingFrameworkWords(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	if cl := c.Classify(newAlert(kv("alertname", "DynamoDBThrottledRequests", "severity", "warning"), nil, `rate(aws_dynamodb_throttled_requests_sum[5m]) > 10`)); cl.Sector != alert.Unknown {
		t.Errorf("DynamoDBThrottledRequests: %s, want unknown", describe(cl))
	}
	for _, name := range []string{"RayServeReplicaUnhealthy", "KServeModelNotReady", "TorchServeWorkerDied", "BentoMLServiceDown"} {
		if cl := c.Classify(newAlert(kv("alertname", name, "severity", "critical"), nil, "")); cl.Sector != "llm-inference-gpu" {
			t.Errorf("%s: %s, want llm-inference-gpu", name, describe(cl))
		}
	}
}
