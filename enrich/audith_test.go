package enrich

import (
	"slices"
	"strings"
	"testing"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// The tests of this file follow audit H, which wrote the alerts an SRE
// would write on the current metric names of each serving framework and
// of the GPU, RDMA and optical exporters, and found prefill time read as
// TTFT (with the queue-time hint) and names the catalog did not know. Its
// alerts are in testdata/corpus/auditH-*.json; the prefill alert with queue
// and compute annotations is its repro (prefill-as-ttft.json), written out.

// auditH is one alert of testdata/corpus/auditH-<file>.json and what it
// should be: sector, first KPI, and the hints it must and must not get.
type auditH struct {
	file, alertname, sector, kpi string
	hints, noHints               []string
}

func (tc auditH) check(t *testing.T, c *Classifier) alert.Classification {
	t.Helper()
	cl := c.Classify(corpusAlerts(t, "auditH-"+tc.file+".json", tc.alertname)[0])
	if cl.Sector != tc.sector || kpiOf(cl) != tc.kpi {
		t.Errorf("%s: %s, want %s/%q", tc.alertname, describe(cl), tc.sector, tc.kpi)
	}
	for _, h := range tc.hints {
		if !hasAnyHint(cl, h) {
			t.Errorf("%s: no %s hint: %s", tc.alertname, h, describe(cl))
		}
	}
	if hasAnyHint(cl, tc.noHints...) {
		t.Errorf("%s: hints %v, want none of %v", tc.alertname, hintIDs(cl), tc.noHints)
	}
	return cl
}

// vLLM documents vllm:request_prefill_time_seconds as the time in the
// PREFILL phase: after the queue (vllm:request_queue_time_seconds), so it
// is no TTFT, and neither the queue-time hint nor "TTFT is queue time plus
// prefill" is true of it — nor a queue share made of queue_time_seconds
// annotations. It gets the prefill half of prefill-decode.
func TestAuditHPrefillTimeIsNotTTFT(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	repro := newAlert(
		kv("alertname", "VLLMPrefillTimeHigh", "severity", "critical", "model_name", "meta-llama/Llama-3.1-70B-Instruct",
			"pod", "vllm-llama70b-0", "namespace", "inference", "job", "vllm"),
		kv("summary", "p95 prefill time of meta-llama/Llama-3.1-70B-Instruct is 3.4s (threshold 2s)",
			"description", "histogram_quantile(0.95) of vllm:request_prefill_time_seconds is 3.4s.",
			"queue_time_seconds", "2.8", "compute_time_seconds", "0.6"),
		`histogram_quantile(0.95, sum by (le, model_name) (rate(vllm:request_prefill_time_seconds_bucket[5m]))) > 2`)
	alerts := map[string]*alert.Alert{
		"repro (queue and compute annotations)": repro,
		"corpus VLLMPrefillTimeHigh":            corpusAlerts(t, "auditH-vllm.json", "VLLMPrefillTimeHigh")[0],
		"a Slow alertname (class latency)": newAlert(kv("alertname", "VLLMPrefillSlow"), nil,
			`histogram_quantile(0.99, sum by (le) (rate(vllm:request_prefill_time_seconds_bucket[5m]))) > 5`),
		"TensorRT-LLM's prefill time": newAlert(kv("alertname", "TRTLLMPrefillTimeHigh"), nil,
			`histogram_quantile(0.95, sum by (le) (rate(trtllm_request_prefill_time_seconds_bucket[5m]))) > 2`),
	}
	for name, a := range alerts {
		cl := c.Classify(a)
		if cl.Sector != "llm-inference-gpu" || len(cl.KPIs) != 0 {
			t.Errorf("%s: %s, want llm-inference-gpu without KPI", name, describe(cl))
		}
		if !slices.Equal(hintIDs(cl), []string{HintPrefillDecode}) {
			t.Errorf("%s: hints %v, want only %s", name, hintIDs(cl), HintPrefillDecode)
		}
		wantHint(t, name, cl, HintPrefillDecode,
			[]string{"prefill time", "prompt lengths", "prefix-cache hit rate", "chunked prefill"},
			[]string{"queue time plus prefill", "scale out", "batch size"})
	}
	// TTFT keeps its hints: queueing is part of it.
	cl := c.Classify(corpusAlerts(t, "auditH-vllm.json", "VLLMTTFTHigh")[0])
	if kpiOf(cl) != "TTFT" || !hasAnyHint(cl, HintQueueTime) {
		t.Errorf("VLLMTTFTHigh: %s, want TTFT with the queue-time hint", describe(cl))
	}
}

// vLLM v1's cache counters: deprecated GPU prefix-cache counters, the KV
// connector's prefix-cache hits, cached and recomputed prompt tokens, and
// the KV-cache residency histograms.
func TestAuditHVLLMCacheFamilies(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	kv := []string{HintKVCache}
	for _, tc := range []auditH{
		{"vllm", "VLLMGPUPrefixCacheHitRateLowLegacy", "llm-prompt-cache-compute", "PCHR", kv, nil},
		{"vllm", "VLLMExternalKVHitRateLow", "llm-prompt-cache-compute", "PCHR", kv, nil},
		{"vllm", "VLLMCachedPromptRatioLow", "llm-prompt-cache-compute", "CTR", kv, nil},
		{"vllm", "VLLMPromptRecomputeHigh", "llm-prompt-cache-compute", "RCR", kv, nil},
		{"vllm", "VLLMKVBlockLifetimeShort", "llm-prompt-cache-storage", "EVR", kv, nil},
		{"vllm", "VLLMKVBlockIdleBeforeEvictShort", "llm-prompt-cache-storage", "EVR", kv, nil},
		{"vllm", "VLLMKVBlockReuseGapLong", "llm-prompt-cache-storage", "", nil, nil},
	} {
		tc.check(t, c)
	}
}

// A KV transfer between prefill and decode workers, TGI's request
// validation and its detokenization ("batch decode", recorded for prefill
// steps too) are neither queueing nor a phase: no queue-time or
// prefill-decode hint from their incident class.
func TestAuditHTransfersGetNoPhaseHints(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	off := []string{HintQueueTime, HintPrefillDecode}
	for _, tc := range []auditH{
		{"vllm", "VLLMNIXLTransferSlow", "llm-inference-gpu", "", nil, off},
		{"sglang", "SGLangKVTransferLatencyHigh", "llm-inference-gpu", "", nil, off},
		{"tgi", "TGIValidationSlow", "llm-inference-gpu", "", nil, off},
		{"tgi", "TGIBatchDecodeSlow", "llm-inference-gpu", "", nil, off},
		// SGLang's host-to-GPU KV load-back is the cache tier's latency.
		{"sglang", "SGLangLoadBackSlow", "llm-prompt-cache-storage", "CLAT", nil, off},
	} {
		cl := tc.check(t, c)
		if cl.IncidentClass != ClassLatency {
			t.Errorf("%s: class %s, want latency", tc.alertname, cl.IncidentClass)
		}
	}
}

// SGLang: cached tokens, HiCache evictions, retractions (its preemptions)
// and the queues of prefill/decode disaggregation.
func TestAuditHSGLangFamilies(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	for _, tc := range []auditH{
		{"sglang", "SGLangCachedTokenRatioLow", "llm-prompt-cache-compute", "CTR", []string{HintKVCache}, nil},
		{"sglang", "SGLangHiCacheEvictionsHigh", "llm-prompt-cache-storage", "EVR", []string{HintKVCache}, nil},
		{"sglang", "SGLangPrefillPreallocQueueHigh", "llm-inference-gpu", "QTS", []string{HintQueueTime}, nil},
		{"sglang", "SGLangDecodeTransferQueueHigh", "llm-inference-gpu", "QTS", []string{HintQueueTime}, nil},
	} {
		tc.check(t, c)
	}
	// A retraction frees a running request's KV blocks: the occupancy text.
	cl := auditH{"sglang", "SGLangRetractionsHigh", "llm-prompt-cache-compute", "RCR", []string{HintKVCache}, nil}.check(t, c)
	wantHint(t, "SGLangRetractionsHigh", cl, HintKVCache, []string{"nearly full"}, nil)
}

// Triton's first-response histogram and request/queue summaries, its
// GPU gauges and its response cache (whole responses, no prompt cache).
func TestAuditHTritonFamilies(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	for _, tc := range []auditH{
		{"triton", "TritonFirstResponseHigh", "llm-inference-gpu", "TTFT", []string{HintQueueTime, HintPrefillDecode}, nil},
		{"triton", "TritonRequestP99High", "llm-inference-gpu", "E2E", nil, nil},
		{"triton", "TritonQueueP99High", "llm-inference-gpu", "QTS", nil, nil},
		{"triton", "TritonGPUUtilizationHigh", "llm-inference-gpu", "", nil, nil},
		{"triton", "TritonGPUMemoryHigh", "llm-inference-gpu", "", nil, nil},
		{"triton", "TritonResponseCacheHitRateLow", "llm-inference-gpu", "", nil, []string{HintKVCache}},
	} {
		tc.check(t, c)
	}
	for _, tc := range []struct{ name, expr string }{
		{"TritonGPUUtilization", `avg(nv_gpu_utilization) > 0.95`},
		{"TritonModelLoadSlow", `nv_model_load_duration_secs > 300`},
	} {
		if cl := c.Classify(newAlert(kv("alertname", tc.name), nil, tc.expr)); cl.Sector != "llm-inference-gpu" {
			t.Errorf("%s: %s, want llm-inference-gpu", tc.name, describe(cl))
		}
	}
}

// Dynamo's current names: KV stats without kvstats_, the KV router's
// TTFT, queue, predicted hit rate and overhead.
func TestAuditHDynamoFamilies(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	for _, tc := range []auditH{
		{"dynamo", "DynamoKVHitRateLow", "llm-prompt-cache-lb", "RCHR", []string{HintKVCache}, nil},
		{"dynamo", "DynamoRouterQueuePending", "llm-inference-gpu", "QTS", []string{HintQueueTime}, nil},
		{"dynamo", "DynamoRouterTTFTHigh", "llm-inference-gpu", "TTFT", nil, nil},
		{"dynamo", "DynamoRouterOverheadHigh", "llm-prompt-cache-lb", "", nil, nil},
	} {
		tc.check(t, c)
	}
	for _, tc := range []struct{ name, expr, sector, kpi string }{
		{"DynamoWorkerKVUsage", `max(dynamo_component_gpu_cache_usage_percent) > 0.95`, "llm-prompt-cache-storage", "COCC"},
		{"DynamoCachedTokensLow", `sum(rate(dynamo_frontend_cached_tokens_sum[10m])) / sum(rate(dynamo_frontend_input_sequence_tokens_sum[10m])) < 0.2`, "llm-prompt-cache-compute", "CTR"},
		{"DynamoIndexerErrors", `rate(dynamo_kvindexer_errors_total[5m]) > 1`, "llm-prompt-cache-lb", ""},
	} {
		cl := c.Classify(newAlert(kv("alertname", tc.name), nil, tc.expr))
		if cl.Sector != tc.sector || kpiOf(cl) != tc.kpi {
			t.Errorf("%s: %s, want %s/%q", tc.name, describe(cl), tc.sector, tc.kpi)
		}
	}
}

// llama.cpp's server: the llamacpp: prefix, deferred requests (QTS), and
// the word llama.cpp.
func TestAuditHLlamaCpp(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	for _, tc := range []auditH{
		{"llamacpp", "LlamaCppRequestsDeferred", "llm-inference-gpu", "QTS", []string{HintQueueTime}, nil},
		{"llamacpp", "LlamaCppGenerationSlow", "llm-inference-gpu", "", nil, nil},
		{"llamacpp", "LlamaCppAllSlotsBusy", "llm-inference-gpu", "", nil, nil},
		{"llamacpp", "LlamaCppServerDown", "llm-inference-gpu", "", nil, nil},
	} {
		tc.check(t, c)
	}
	// The word, however it is written: an alertname word classifies; an
	// annotation word alone is too weak to (0.25), but points there.
	for _, name := range []string{"LlamaCppRestarted", "LlamacppRestarted", "Llama_cpp_restarted"} {
		if cl := c.Classify(newAlert(kv("alertname", name), nil, "")); cl.Sector != "llm-inference-gpu" {
			t.Errorf("%s: %s, want llm-inference-gpu", name, describe(cl))
		}
	}
	cl := c.Classify(newAlert(kv("alertname", "ServerRestarted"), kv("summary", "llama.cpp server restarted"), ""))
	if !slices.ContainsFunc(cl.Signals, func(s alert.Signal) bool { return s.Kind == "token" && s.Sector == "llm-inference-gpu" }) {
		t.Errorf("llama.cpp in a summary: %s, want a token signal of llm-inference-gpu", describe(cl))
	}
	if cl := c.Classify(newAlert(kv("alertname", "LlamaCppKVCacheFull"), nil, `llamacpp:kv_cache_usage_ratio > 0.95`)); kpiOf(cl) != "COCC" {
		t.Errorf("llamacpp:kv_cache_usage_ratio: %s, want COCC", describe(cl))
	}
}

// DCGM's profiling counters beyond the tensor pipe and SM activity are
// shared GPU hardware, as its device counters are: the context decides.
func TestAuditHDCGMProfilingCounters(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	for _, tc := range []auditH{
		{"dcgm", "GPUGraphicsEngineIdle", "llm-training-pretrain-moe", "", nil, nil},
		{"dcgm", "GPUDRAMBandwidthSaturated", "llm-inference-gpu", "", nil, nil},
	} {
		tc.check(t, c)
	}
	want := []string{"llm-inference-gpu", "llm-training-pretrain-moe", "llm-training-posttrain-moe"}
	for _, m := range []string{"DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_PROF_DRAM_ACTIVE", "DCGM_FI_PROF_PCIE_RX_BYTES", "DCGM_FI_PROF_PIPE_FP16_ACTIVE"} {
		cl := c.Classify(newAlert(kv("alertname", "GPUCounterAlert"), nil, `avg(`+m+`) > 0.9`))
		if cl.Sector != alert.Unknown || len(cl.KPIs) != 0 || !slices.Equal(cl.Candidates, want) {
			t.Errorf("%s without context: %s candidates %v, want unknown with candidates %v", m, describe(cl), cl.Candidates, want)
		}
	}
}

// InfiniBand port counters and RoCE congestion counters.
func TestAuditHRDMACounters(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	mb := []string{HintMicroburst}
	for _, tc := range []auditH{
		// A bad link, not congestion: no microburst hint.
		{"rdma", "InfiniBandRcvErrors", "llm-inference-network", "LOSS", nil, mb},
		{"rdma", "InfiniBandLinkIntegrityErrors", "llm-inference-network", "LOSS", nil, mb},
		{"rdma", "InfiniBandXmitWaitHigh", "llm-inference-network", "ECN", mb, nil},
		{"rdma", "RoCECNPSentHigh", "llm-inference-network", "ECN", mb, nil},
		{"rdma", "RoCEPFCPauseStorm", "llm-inference-network", "ECN", mb, nil},
		{"rdma", "RoCEOutOfSequence", "llm-inference-network", "LOSS", nil, nil},
	} {
		tc.check(t, c)
	}
	for _, expr := range []string{
		`rate(node_infiniband_np_cnp_packets_sent_total[5m]) > 1000`,
		`rate(node_infiniband_np_ecn_marked_roce_packets_received_total[5m]) > 1000`,
		`rate(node_ethtool_tx_prio5_pause[5m]) > 1000`,
	} {
		if cl := c.Classify(newAlert(kv("alertname", "FabricCongestion"), nil, expr)); cl.Sector != "llm-inference-network" || kpiOf(cl) != "ECN" {
			t.Errorf("%s: %s, want llm-inference-network/ECN", expr, describe(cl))
		}
	}
}

// OpenConfig optics through gnmic: OSNR, the Q-factor (pre-FEC BER in dB),
// dispersion and ESNR.
func TestAuditHOpenConfigOptics(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	oh := []string{HintOpticalHealth}
	for _, tc := range []auditH{
		{"optics", "OpticalQValueLow", "hpc-dark-fiber", "Pre-FEC BER", oh, nil},
		{"optics", "OpticalOSNRLow", "hpc-dark-fiber", "OSNRM", oh, nil},
		{"optics", "OpticalESNRLow", "hpc-dark-fiber", "", oh, nil},
		{"optics", "OpticalChromaticDispersionHigh", "hpc-dark-fiber", "", oh, nil},
	} {
		tc.check(t, c)
	}
	// gnmic's names carry the path and the subscription: still optics,
	// without an optical word in the alertname.
	for _, tc := range []struct{ expr, kpi string }{
		{`gnmic_och_components_component_optical_channel_state_osnr_instant < 18`, "OSNRM"},
		{`gnmic_otn_terminal_device_logical_channels_channel_otn_state_q_value_instant < 7`, "Pre-FEC BER"},
		{`gnmic_och_components_component_optical_channel_state_polarization_mode_dispersion_instant > 30`, ""},
	} {
		cl := c.Classify(newAlert(kv("alertname", "LineSideAlarm"), nil, tc.expr))
		if cl.Sector != "hpc-dark-fiber" || kpiOf(cl) != tc.kpi {
			t.Errorf("%s: %s, want hpc-dark-fiber/%q", tc.expr, describe(cl), tc.kpi)
		}
	}
}

// LiteLLM: the upstream API's time to first token, and the requests left
// before the provider's rate limit.
func TestAuditHLiteLLM(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	for _, tc := range []auditH{
		{"litellm", "LiteLLMRemainingRequestsLow", "llm-inference-api", "429R", nil, nil},
		{"litellm", "LiteLLMTTFTHigh", "llm-inference-api", "UST", nil, nil},
		{"litellm", "LiteLLMLatencyPerTokenHigh", "llm-inference-api", "UST", nil, nil},
	} {
		tc.check(t, c)
	}
}

// Ray's node agent and GCS serve serving and training alike: candidates,
// settled by context; KubeRay's GCS burn-rate rules stay error-budget burn.
func TestAuditHRay(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	cl := c.Classify(corpusAlerts(t, "auditH-ray.json", "RayNodeGPUUtilizationLow")[0])
	want := []string{"llm-inference-gpu", "llm-training-pretrain-moe", "llm-training-posttrain-moe"}
	if cl.Sector != alert.Unknown || !slices.Equal(cl.Candidates, want) {
		t.Errorf("RayNodeGPUUtilizationLow: %s candidates %v, want unknown with candidates %v", describe(cl), cl.Candidates, want)
	}
	for _, tc := range []struct{ pod, sector string }{
		{"vllm-llama70b-0", "llm-inference-gpu"},
		{"pretrain-moe-worker-3", "llm-training-pretrain-moe"},
	} {
		for _, expr := range []string{`avg(ray_node_gpus_utilization) < 10`,
			`histogram_quantile(0.99, sum by (le) (rate(ray_gcs_storage_operation_latency_ms_bucket[5m]))) > 100`} {
			cl := c.Classify(newAlert(kv("alertname", "RayClusterAlert", "pod", tc.pod), nil, expr))
			if cl.Sector != tc.sector {
				t.Errorf("%s in pod %s: %s, want %s", expr, tc.pod, describe(cl), tc.sector)
			}
		}
	}
	for _, a := range corpusAlerts(t, "kuberay-gcs-slo.json", "") {
		cl := c.Classify(a)
		if strings.HasSuffix(a.Labels["alertname"], "WindowSLO") && (cl.Sector != "slo-monitoring" || kpiOf(cl) != "EBR") {
			t.Errorf("%s: %s, want slo-monitoring/EBR", a.Labels["alertname"], describe(cl))
		}
	}
}

// OpenTelemetry's GenAI semantic conventions, as Prometheus 3 keeps them
// (quoted UTF-8 names) and as its underscore translation writes them:
// gen_ai.server.* is the model server's own (GPU serving), gen_ai.client.*
// the caller's view of an LLM API. An audit of alerts from other rule
// engines found the server's TTFT read with no sector.
func TestGenAISemanticConventionsNameTheirSector(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	for _, tc := range []struct{ name, expr, sector, kpi string }{
		{"GenAITTFTHigh", `histogram_quantile(0.95, sum by (le, "service.name") (rate({"gen_ai.server.time_to_first_token_bucket"}[5m]))) > 2`, "llm-inference-gpu", "TTFT"},
		{"GenAITTFTHigh", `histogram_quantile(0.95, sum by (le) (rate(gen_ai_server_time_to_first_token_seconds_bucket[5m]))) > 2`, "llm-inference-gpu", "TTFT"},
		{"GenAIRequestsSlow", `histogram_quantile(0.95, sum by (le) (rate({"gen_ai.client.operation.duration_bucket"}[5m]))) > 10`, "llm-inference-api", ""},
	} {
		cl := c.Classify(newAlert(kv("alertname", tc.name, "severity", "critical"), nil, tc.expr))
		if cl.Sector != tc.sector || (tc.kpi != "" && kpiOf(cl) != tc.kpi) {
			t.Errorf("%s: %s, want %s/%q", tc.expr, describe(cl), tc.sector, tc.kpi)
		}
	}
}
