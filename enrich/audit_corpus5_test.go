package enrich

import (
	"slices"
	"testing"
)

// The tests of this file follow an audit that wrote alerts on the names
// large-scale training exports (Megatron-LM's lm loss, grad-norm and MoE
// load-balancing scalars as custom gauges, PyTorch's NCCL watchdog): each
// of these was unknown — a page reading "component: unknown" that a route
// on the training sector missed — for want of the field's words. Words
// that say neither pre- nor post-training count for both, and the alert's
// context (namespace, job) settles which; NCCL counts for inference too.
func TestCorpus5TrainingWords(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	pre := []string{"cluster", "gpu-east-1", "namespace", "llm-pretrain", "job", "megatron-pretrain", "model", "moe-8x22b"}
	post := []string{"cluster", "gpu-east-1", "namespace", "llm-posttrain", "job", "trl-dpo", "model", "moe-8x22b"}
	serving := []string{"cluster", "gpu-east-1", "namespace", "llm-serving", "job", "vllm", "pod", "vllm-deepseek-0"}
	with := func(base []string, more ...string) []string { return append(slices.Clone(base), more...) }
	for _, tc := range []struct {
		name   string
		labels []string
		anns   []string
		sector string
		kpi    string
		hint   string
	}{
		{
			name:   "MoEExpertLoadImbalanceHigh",
			labels: with(pre, "severity", "warning", "layer", "12"),
			anns:   []string{"summary", "Expert load imbalance on layer 12", "description", "Max/avg tokens per expert is 3.4 on layer 12.", "aux_loss", "0.031", "baseline_aux_loss", "0.01"},
			sector: secPretrain, kpi: "EIR", hint: HintMoERouter,
		},
		{
			name:   "MoETokenDropRateHigh",
			labels: with(pre, "severity", "warning"),
			anns:   []string{"summary", "MoE capacity overflow: 7% of tokens dropped", "description", "Tokens dropped by expert capacity factor (moe-expert-capacity-factor) exceed 5%."},
			sector: secPretrain, kpi: "EIR",
		},
		{
			name:   "TrainingLossSpike",
			labels: with(pre, "severity", "critical"),
			anns:   []string{"summary", "Loss spike on megatron-pretrain", "description", "lm loss jumped to 4.8 from a 1h average of 2.1."},
			sector: secPretrain,
		},
		{
			name:   "TrainingLossNaN",
			labels: with(pre, "severity", "critical"),
			anns:   []string{"summary", "Loss is NaN on megatron-pretrain", "description", "lm loss is NaN: the run diverged; stop and roll back to the last checkpoint."},
			sector: secPretrain,
		},
		{
			name:   "TrainingGradNormSpike",
			labels: with(pre, "severity", "warning"),
			anns:   []string{"summary", "Gradient norm spike", "description", "grad-norm 58 vs 1h average 1.9."},
			sector: secPretrain,
		},
		{
			name:   "NCCLWatchdogTimeout",
			labels: with(pre, "severity", "critical", "pod", "pretrain-moe-worker-12"),
			anns:   []string{"summary", "NCCL watchdog timeout on rank 96", "description", "ProcessGroupNCCL watchdog caught a collective operation timeout (TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC); the job will abort."},
			sector: secPretrain,
		},
		// The same words in a post-training run's context, and NCCL in
		// a serving one's.
		{
			name:   "TrainingLossSpike",
			labels: with(post, "severity", "critical"),
			anns:   []string{"summary", "Loss spike on trl-dpo"},
			sector: secPost,
		},
		{
			name:   "NCCLWatchdogTimeout",
			labels: with(serving, "severity", "critical"),
			anns:   []string{"summary", "NCCL watchdog timeout on tensor-parallel rank 3"},
			sector: secGPU,
		},
		// MoE models are served too (vLLM's expert-parallel load
		// balancer): a serving alert on their experts' balance stays GPU
		// serving's. The first build read the words as pre-training's
		// alone, and these paged the training team (a review).
		{
			name:   "VLLMExpertImbalance",
			labels: []string{"job", "vllm", "severity", "critical"},
			anns:   []string{"summary", "MoE expert load imbalance", "description", "balancedness 0.55"},
			sector: secGPU,
		},
		{
			name:   "VLLMEPLBImbalance",
			labels: with(serving, "severity", "critical", "model_name", "deepseek-ai/DeepSeek-R1"),
			anns:   []string{"summary", "Mixture of experts load imbalance on DeepSeek-R1", "description", "vLLM EPLB: expert load max/mean 2.3"},
			sector: secGPU,
		},
		{
			name:   "VLLMMoETokensDropped",
			labels: with(serving, "severity", "warning"),
			anns:   []string{"summary", "MoE tokens dropped on DeepSeek-R1"},
			sector: secGPU,
		},
	} {
		lbls := kv(append([]string{"alertname", tc.name}, tc.labels...)...)
		cl := c.Classify(newAlert(lbls, kv(tc.anns...), ""))
		if cl.Sector != tc.sector || kpiOf(cl) != tc.kpi {
			t.Errorf("%s %v: %s, want %s %q", tc.name, tc.labels, describe(cl), tc.sector, tc.kpi)
			continue
		}
		if tc.hint != "" && !slices.Contains(hintIDs(cl), tc.hint) {
			t.Errorf("%s: hints %v, want %s", tc.name, hintIDs(cl), tc.hint)
		}
	}
}

// The words decide nothing alone: without a training or serving context
// the alert stays unknown with its candidates, and a load balancer's
// "load imbalance" (a generic word) is no MoE router's.
func TestCorpus5TrainingWordsNeedContext(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	cl := c.Classify(newAlert(kv("alertname", "TrainingLossSpike", "severity", "critical"), kv("summary", "Loss spike"), ""))
	if cl.Sector != "unknown" || !slices.Equal(cl.Candidates, []string{secPretrain, secPost}) {
		t.Errorf("a loss spike without context: %s, candidates %v; want unknown between pre- and post-training", describe(cl), cl.Candidates)
	}
	cl = c.Classify(newAlert(kv("alertname", "HAProxyBackendLoadImbalance", "severity", "warning", "job", "haproxy"),
		kv("summary", "Backend load imbalance across servers"), `max(haproxy_server_current_sessions) / avg(haproxy_server_current_sessions) > 3`))
	if cl.Sector == secPretrain {
		t.Errorf("HAProxy's load imbalance: %s, want no MoE training", describe(cl))
	}
}

// LiteLLM's response cache and the provider prompt-cache reads it counts,
// and Dynamo's KV block manager: API or unknown before, with no cache KPI.
func TestCorpus5CacheFamilies(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	for _, tc := range []struct{ name, expr, sector, kpi string }{
		{"LiteLLMCacheHitRateLow", `sum(rate(litellm_cache_hits_metric_total[10m])) / (sum(rate(litellm_cache_hits_metric_total[10m])) + sum(rate(litellm_cache_misses_metric_total[10m]))) < 0.2`, secPStorage, "CHR"},
		{"LiteLLMProviderPromptCacheReadsLow", `sum(rate(litellm_input_cached_tokens_metric_total[30m])) / sum(rate(litellm_input_tokens_metric_total[30m])) < 0.3`, secPCompute, "CTR"},
		{"DynamoKVBMOnboardStalled", `rate(kvbm_onboard_blocks_h2d[5m]) == 0 and rate(kvbm_offload_blocks_d2h[5m]) > 0`, secPStorage, ""},
		{"DynamoKVBMHostHitRateLow", `kvbm_host_cache_hit_rate < 0.1`, secPStorage, "CHR"},
		// LiteLLM's other names stay the API gateway's.
		{"LiteLLMLatencyHigh", `histogram_quantile(0.95, sum by (le) (rate(litellm_request_total_latency_metric_bucket[5m]))) > 10`, secAPI, "P95 LAT"},
	} {
		cl := c.Classify(newAlert(kv("alertname", tc.name, "severity", "warning", "namespace", "llm-gateway"), nil, tc.expr))
		if cl.Sector != tc.sector || kpiOf(cl) != tc.kpi {
			t.Errorf("%s (%s): %s, want %s %q", tc.name, tc.expr, describe(cl), tc.sector, tc.kpi)
		}
	}
}

// The experts' balance words name pre-training's EIR, and no class
// elsewhere: a serving alert about them is still about them — the TTFT its
// summary names as an effect yields to its alertname, as any annotation
// KPI does (a review: it read TTFT, class latency, and shared the TTFT
// pages' incident) —, and a post-training one, whose KPIs are all
// training-stability, keeps that class and the moe-router hint.
func TestExpertBalanceAlertsOutsidePreTraining(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	cl := c.Classify(newAlert(kv("alertname", "VLLMExpertLoadImbalance", "severity", "critical", "job", "vllm", "namespace", "llm-serving", "pod", "vllm-deepseek-r1-0"),
		kv("summary", "Expert load imbalance above 2x: hot experts raise TTFT and ITL"), ""))
	if cl.Sector != secGPU || len(cl.KPIs) != 0 || cl.IncidentClass == "latency" {
		t.Errorf("serving: %s class %s, want GPU serving without the TTFT of its summary", describe(cl), cl.IncidentClass)
	}
	cl = c.Classify(newAlert(kv("alertname", "ExpertLoadImbalanceHigh", "severity", "critical", "namespace", "llm-posttrain", "pod", "posttrain-moe-worker-3"),
		kv("summary", "Expert load imbalance above 2x"), ""))
	if cl.Sector != secPost || cl.IncidentClass != "training-stability" || !slices.Contains(hintIDs(cl), HintMoERouter) {
		t.Errorf("post-training: %s class %s hints %v, want training-stability with the moe-router hint", describe(cl), cl.IncidentClass, hintIDs(cl))
	}
}

// The generic balance words count once corroborated (MoE beside "load
// imbalance"), and then outrank the summary as the specific ones do: a
// pre-training MoELoadImbalanceHigh whose summary names TTFT read GPU
// serving's TTFT (a review). A serving one takes no class from the effects
// its summary names either ("error rate up", "throughput down").
func TestGenericBalanceWordsOutrankTheSummary(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	for _, name := range []string{"MoELoadImbalanceHigh", "MoECapacityFactorExceeded"} {
		cl := c.Classify(newAlert(kv("alertname", name, "severity", "critical", "namespace", "llm-pretrain", "pod", "pretrain-moe-worker-3"),
			kv("summary", "MoE load imbalance above 2x: hot experts raise TTFT"), ""))
		if cl.Sector != secPretrain || kpiOf(cl) != "EIR" {
			t.Errorf("%s in pre-training: %s, want pre-training's EIR", name, describe(cl))
		}
	}
	// An annotation's KPI word cannot vouch for the alertname's generic
	// word it would then yield to: the alert lost every signal (a review).
	cl0 := c.Classify(newAlert(kv("alertname", "CapacityFactorExceeded", "severity", "warning", "namespace", "llm-pretrain", "pod", "pretrain-moe-worker-3"),
		kv("summary", "Capacity factor exceeded: tokens dropped, step time up"), ""))
	if cl0.Sector != secPretrain || kpiOf(cl0) != "EIR" {
		t.Errorf("CapacityFactorExceeded in pre-training: %s, want pre-training's EIR", describe(cl0))
	}
	// Uncorroborated, a generic word outranks nothing: Kafka's partition
	// load imbalance keeps its summary's consumer lag (a review: the
	// first build erased it, and the incident key with it).
	cl := c.Classify(newAlert(kv("alertname", "KafkaPartitionLoadImbalance", "severity", "warning", "job", "kafka"),
		kv("summary", "Partition skew: consumer lag up"), ""))
	if kpiOf(cl) != "CLAG" {
		t.Errorf("Kafka's load imbalance: %s, want its summary's CLAG", describe(cl))
	}
	for _, summary := range []string{"Expert load imbalance pushes the error rate up", "Expert load imbalance: generation throughput down 30%"} {
		cl := c.Classify(newAlert(kv("alertname", "VLLMExpertLoadImbalance", "severity", "critical", "job", "vllm", "namespace", "llm-serving"),
			kv("summary", summary), ""))
		if cl.Sector != secGPU || cl.IncidentClass != "unknown" {
			t.Errorf("%q: %s class %s, want GPU serving without its summary's class", summary, describe(cl), cl.IncidentClass)
		}
	}
}
