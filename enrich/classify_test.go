package enrich

import (
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/prometheus/alertmanager/template"
)

// alert builds a firing alert; expr, when set, becomes the g0.expr of a
// Prometheus generatorURL, URL-encoded the way Prometheus encodes it.
func newAlert(lbls, anns map[string]string, expr string) *alert.Alert {
	a := &alert.Alert{Alert: template.Alert{
		Status:      "firing",
		Labels:      template.KV(lbls),
		Annotations: template.KV(anns),
		StartsAt:    time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC),
		Fingerprint: "0123456789abcdef",
	}}
	if a.Annotations == nil {
		a.Annotations = template.KV{}
	}
	if expr != "" {
		a.GeneratorURL = "http://prometheus-0:9090/graph?g0.expr=" + url.QueryEscape(expr) + "&g0.tab=1"
	}
	return a
}

func kv(pairs ...string) map[string]string {
	m := make(map[string]string, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		m[pairs[i]] = pairs[i+1]
	}
	return m
}

func newClassifier(t testing.TB, cfg Config) *Classifier {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

type sectorCase struct {
	name   string
	alert  *alert.Alert
	sector string
	kpi    string // primary KPI, "" for none
}

// sectorCases are at least three realistic alerts per sector.
var sectorCases = []sectorCase{
	// llm-inference-gpu
	{"an explicit sector label names the GPU serving sector",
		newAlert(kv("alertname", "InferenceSlow", "sector", "llm-inference-gpu"), nil, ""), "llm-inference-gpu", ""},
	{"the vLLM TTFT histogram in the generator expression points at TTFT",
		func() *alert.Alert {
			a := newAlert(kv("alertname", "VLLMHighTTFT", "model_name", "llama-3-70b"), nil, "")
			a.GeneratorURL = "http://prometheus:9090/graph?g0.expr=histogram_quantile%280.99%2C+sum+by+%28le%29+%28rate%28vllm%3Atime_to_first_token_seconds_bucket%5B5m%5D%29%29%29+%3E+2&g0.tab=1"
			return a
		}(), "llm-inference-gpu", "TTFT"},
	{"a lower-case kpi label itl is inter-token latency",
		newAlert(kv("alertname", "DecodeSlow", "kpi", "itl"), nil, ""), "llm-inference-gpu", "ITL"},
	{"the TGI queue duration histogram is request queue time",
		newAlert(kv("alertname", "TGIQueueing"), nil, `histogram_quantile(0.95, sum by (le) (rate(tgi_request_queue_duration_bucket[5m]))) > 1`), "llm-inference-gpu", "QTS"},
	{"Triton queue duration is request queue time",
		newAlert(kv("alertname", "TritonQueueDurationHigh"), nil, `rate(nv_inference_queue_duration_us[5m]) / rate(nv_inference_request_success[5m]) > 50000`), "llm-inference-gpu", "QTS"},

	// llm-inference-api
	{"the seed's sector name in any case names the API sector",
		newAlert(kv("alertname", "ChatAPIDegraded", "sector", "llm inference (api service infra)"), nil, ""), "llm-inference-api", ""},
	{"Envoy 5xx over all upstream requests is the error rate",
		newAlert(kv("alertname", "ChatAPIHighErrorRate"), nil, `sum(rate(envoy_cluster_upstream_rq_xx{envoy_response_code_class="5"}[5m])) / sum(rate(envoy_cluster_upstream_rq_total[5m])) > 0.01`), "llm-inference-api", "ERR"},
	{"a kpi label 429R is the HTTP 429 rate",
		newAlert(kv("alertname", "RateLimitedRequests", "kpi", "429R"), nil, ""), "llm-inference-api", "429R"},
	{"ingress-nginx request duration is p95 latency",
		newAlert(kv("alertname", "CompletionsP95LatencyHigh"), nil, `histogram_quantile(0.95, sum by (le, ingress) (rate(nginx_ingress_controller_request_duration_seconds_bucket{ingress="completions"}[5m]))) > 2`), "llm-inference-api", "P95 LAT"},

	// llm-inference-network
	{"node_exporter receive drops are packet loss",
		newAlert(kv("alertname", "NICReceiveDrops", "device", "ens1f0"), nil, `rate(node_network_receive_drop_total{device=~"ens.*"}[5m]) > 100`), "llm-inference-network", "LOSS"},
	{"a kpi label PDV is packet delay variation",
		newAlert(kv("alertname", "FabricJitterRegression", "kpi", "PDV"), nil, ""), "llm-inference-network", "PDV"},
	{"an ECN alertname is the ECN mark rate",
		newAlert(kv("alertname", "ECNMarkRateHigh"), nil, ""), "llm-inference-network", "ECN"},
	{"an ambiguous OWD kpi is settled by a RoCE fabric alertname",
		newAlert(kv("alertname", "RoceFabricOneWayDelayHigh", "kpi", "OWD"), nil, ""), "llm-inference-network", "OWD"},

	// llm-prompt-cache-compute
	{"vLLM prefix cache hits over queries is the prefix-cache hit rate",
		newAlert(kv("alertname", "VLLMPrefixCacheHitRateLow"), nil, `sum(rate(vllm:prefix_cache_hits_total[10m])) / sum(rate(vllm:prefix_cache_queries_total[10m])) < 0.3`), "llm-prompt-cache-compute", "PCHR"},
	{"a kpi label CTR is the cached-token ratio",
		newAlert(kv("alertname", "CachedTokensRatioLow", "kpi", "CTR"), nil, ""), "llm-prompt-cache-compute", "CTR"},
	{"the SGLang cache hit rate gauge is the prefix-cache hit rate",
		newAlert(kv("alertname", "SGLangCacheHitRateLow"), nil, `avg by (model_name) (sglang:cache_hit_rate) < 0.2`), "llm-prompt-cache-compute", "PCHR"},

	// llm-prompt-cache-storage
	{"Redis keyspace hits and misses are the cache hit ratio",
		newAlert(kv("alertname", "PromptCacheRedisHitRatioLow"), nil, `sum(rate(redis_keyspace_hits_total[5m])) / (sum(rate(redis_keyspace_hits_total[5m])) + sum(rate(redis_keyspace_misses_total[5m]))) < 0.8`), "llm-prompt-cache-storage", "CHR"},
	{"vLLM KV-cache usage is cache occupancy",
		newAlert(kv("alertname", "KVCacheNearlyFull"), nil, `max by (pod) (vllm:kv_cache_usage_perc) > 0.95`), "llm-prompt-cache-storage", "COCC"},
	{"Redis evicted keys are the eviction rate",
		newAlert(kv("alertname", "RedisEvictionsHigh"), nil, `rate(redis_evicted_keys_total[5m]) > 100`), "llm-prompt-cache-storage", "EVR"},

	// llm-prompt-cache-lb
	{"Envoy retries with an Envoy retry alertname are the retry rate",
		newAlert(kv("alertname", "EnvoyRetryRateHigh"), nil, `sum(rate(envoy_cluster_upstream_rq_retry[5m])) / sum(rate(envoy_cluster_upstream_rq_total[5m])) > 0.05`), "llm-prompt-cache-lb", "RTR"},
	{"the HAProxy backend queue is the load-balancer queue",
		newAlert(kv("alertname", "HAProxyBackendQueueing"), nil, `sum by (proxy) (haproxy_backend_current_queue) > 50`), "llm-prompt-cache-lb", "LQ"},
	{"a kpi label URT is the upstream response time",
		newAlert(kv("alertname", "CacheRouterSlowUpstream", "kpi", "URT"), nil, ""), "llm-prompt-cache-lb", "URT"},

	// llm-training-data
	{"the seed's name of the dataset sector names it",
		newAlert(kv("alertname", "IngestStalled", "sector", "LLM Training (bulk initial datasets)"), nil, ""), "llm-training-data", ""},
	{"a dataset ingest throughput alertname is ingest throughput",
		newAlert(kv("alertname", "DatasetIngestThroughputLow"), nil, ""), "llm-training-data", "ITPS"},
	{"a kpi label CONT is the contamination rate",
		newAlert(kv("alertname", "BenchmarkContaminationDetected", "kpi", "CONT"), nil, ""), "llm-training-data", "CONT"},

	// llm-training-pretrain-moe
	{"an expert imbalance alertname is the expert imbalance ratio",
		newAlert(kv("alertname", "MoEExpertImbalanceHigh", "job", "pretrain-moe"), nil, ""), "llm-training-pretrain-moe", "EIR"},
	{"a kpi label STEP in a pre-training job is step time",
		newAlert(kv("alertname", "TrainStepSlow", "kpi", "STEP"), nil, ""), "llm-training-pretrain-moe", "STEP"},
	{"DCGM tensor activity with a pre-training alertname is MFU of pre-training",
		newAlert(kv("alertname", "PretrainMFULow"), nil, `avg by (Hostname) (DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{job="pretrain"}) < 0.35`), "llm-training-pretrain-moe", "MFU"},

	// llm-training-posttrain-moe
	{"a kpi label RACC is reward accuracy",
		newAlert(kv("alertname", "RewardModelAccuracyDrop", "kpi", "RACC"), nil, ""), "llm-training-posttrain-moe", "RACC"},
	{"a DPO reward margin alertname is the reward margin",
		newAlert(kv("alertname", "DPORewardMarginCollapsed"), nil, ""), "llm-training-posttrain-moe", "RMAR"},
	{"a post-training tokens-per-second alertname is TPS",
		newAlert(kv("alertname", "PostTrainingTokensPerSecondLow"), nil, ""), "llm-training-posttrain-moe", "TPS"},
	{"DCGM tensor activity with a post-training alertname is MFU of post-training",
		newAlert(kv("alertname", "PosttrainMFULow"), nil, `avg(DCGM_FI_PROF_PIPE_TENSOR_ACTIVE) < 0.3`), "llm-training-posttrain-moe", "MFU"},

	// hft-vm-clusters
	{"VMware CPU ready summation is CPU ready time",
		newAlert(kv("alertname", "VMCPUReadyHigh", "vm_name", "md-gw-01"), nil, `vmware_vm_cpu_ready_summation / 20000 > 0.05`), "hft-vm-clusters", "RDY"},
	{"node_exporter NUMA misses are the NUMA miss ratio",
		newAlert(kv("alertname", "NUMAMissRatioHigh"), nil, `rate(node_memory_numa_numa_miss_total[5m]) / (rate(node_memory_numa_numa_hit_total[5m]) + rate(node_memory_numa_numa_miss_total[5m])) > 0.1`), "hft-vm-clusters", "NUMA MISS"},
	{"a kpi label CSTP is CPU co-stop",
		newAlert(kv("alertname", "VCPUCoStop", "kpi", "CSTP"), nil, ""), "hft-vm-clusters", "CSTP"},
	{"a kpi label written NUMA_MISS is the NUMA miss ratio",
		newAlert(kv("alertname", "LocalityLost", "kpi", "numa_miss"), nil, ""), "hft-vm-clusters", "NUMA MISS"},

	// hft-baremetal
	{"a kpi label W2W is wire-to-wire latency",
		newAlert(kv("alertname", "TickerPlantSlow", "kpi", "W2W"), nil, ""), "hft-baremetal", "W2W"},
	{"perf cache misses are LLC misses per kilo-instruction",
		newAlert(kv("alertname", "LLCMissesPerKiloInstructionHigh"), nil, `1000 * rate(node_perf_cache_misses_total[1m]) / rate(node_perf_instructions_total[1m]) > 5`), "hft-baremetal", "MPKI"},
	{"a host's perf cycle rate is its sector but no cycles per message",
		newAlert(kv("alertname", "HostHighCPUCycles"), nil, `rate(node_perf_cpucycles_total[5m]) > 3e9`), "hft-baremetal", ""},
	{"perf cycles divided by messages, so named, are cycles per message",
		newAlert(kv("alertname", "CyclesPerMessageHigh"), nil, `rate(node_perf_cpucycles_total[1m]) / rate(feed_handler_messages_total[1m]) > 2000`), "hft-baremetal", "CPM"},
	{"a p999 jitter alertname is p99/p999 jitter",
		newAlert(kv("alertname", "TickerPlantP999JitterHigh"), nil, ""), "hft-baremetal", "JITR"},

	// hft-cdn
	{"Varnish hits and misses are the CDN cache hit ratio",
		newAlert(kv("alertname", "EdgeCacheHitRatioLow"), nil, `sum(rate(varnish_main_cache_hit[5m])) / (sum(rate(varnish_main_cache_hit[5m])) + sum(rate(varnish_main_cache_miss[5m]))) < 0.9`), "hft-cdn", "CHR"},
	{"a kpi label TTFB is time to first byte",
		newAlert(kv("alertname", "EdgeSlow", "kpi", "TTFB"), nil, ""), "hft-cdn", "TTFB"},
	{"an origin TTFB alertname is origin TTFB",
		newAlert(kv("alertname", "OriginTTFBHigh"), nil, ""), "hft-cdn", "OTTFB"},
	{"an ambiguous CHR kpi is settled by a CDN alertname",
		newAlert(kv("alertname", "CDNCacheHitRatioLow", "kpi", "CHR"), nil, ""), "hft-cdn", "CHR"},

	// hft-low-latency-exec
	{"a kpi label OLAT is order latency",
		newAlert(kv("alertname", "OrderRoundTripSlow", "kpi", "OLAT"), nil, ""), "hft-low-latency-exec", "OLAT"},
	{"an ambiguous feed latency is settled by market data",
		newAlert(kv("alertname", "MarketDataFeedLatencyHigh"), nil, ""), "hft-low-latency-exec", "FLAT"},
	{"two ambiguous KPIs that share only low-latency exec settle on it",
		newAlert(kv("alertname", "FeedHandlerClockDrift", "kpi", "FLAT"), nil, `abs(node_timex_offset_seconds) > 0.0001`), "hft-low-latency-exec", "FLAT"},
	{"an order gateway jitter alertname is jitter",
		newAlert(kv("alertname", "OrderGatewayJitterHigh"), nil, ""), "hft-low-latency-exec", "JIT"},

	// hpc-dark-fiber
	{"a fiber OSNR margin alertname is the OSNR margin",
		newAlert(kv("alertname", "FiberSpanOSNRMarginLow", "span", "nyc-chi-07"), nil, ""), "hpc-dark-fiber", "OSNRM"},
	{"a kpi label Pre-FEC BER is the pre-FEC bit error rate",
		newAlert(kv("alertname", "CoherentLinkDegrading", "kpi", "Pre-FEC BER"), nil, ""), "hpc-dark-fiber", "Pre-FEC BER"},
	{"a sector label and kpi AVAIL are dark-fiber availability",
		newAlert(kv("alertname", "WaveDown", "sector", "hpc-dark-fiber", "kpi", "AVAIL"), nil, ""), "hpc-dark-fiber", "AVAIL"},
	{"an optical pre-FEC alertname is the pre-FEC BER",
		newAlert(kv("alertname", "OpticalPreFECBERHigh"), nil, ""), "hpc-dark-fiber", "Pre-FEC BER"},

	// hpc-quant-research
	{"a backtest alertname is backtest wall-clock time",
		newAlert(kv("alertname", "BacktestWallClockSlow"), nil, ""), "hpc-quant-research", "BTT"},
	{"a kpi label TSS is training-serving skew",
		newAlert(kv("alertname", "ModelInputDrift", "kpi", "TSS"), nil, ""), "hpc-quant-research", "TSS"},
	{"a feature freshness alertname is feature freshness lag",
		newAlert(kv("alertname", "FeatureFreshnessLagHigh"), nil, ""), "hpc-quant-research", "FFL"},
	{"an ambiguous FLAT kpi is settled by a feature store summary",
		newAlert(kv("alertname", "ResearchFeedLatencyHigh", "kpi", "FLAT"), map[string]string{"summary": "Feature store feed latency above 200ms"}, ""), "hpc-quant-research", "FLAT"},

	// hpc-big-data
	{"Kafka consumer group lag is consumer lag",
		newAlert(kv("alertname", "KafkaConsumerLagHigh", "consumergroup", "enrichment"), nil, `sum by (consumergroup) (kafka_consumergroup_lag) > 100000`), "hpc-big-data", "CLAG"},
	{"Spark disk bytes spilled are shuffle spill bytes",
		newAlert(kv("alertname", "SparkShuffleSpillHigh"), nil, `sum(increase(metrics_executor_diskBytesSpilled_total[10m])) > 1e10`), "hpc-big-data", "SPILL"},
	{"a kpi label SKR is the task skew ratio",
		newAlert(kv("alertname", "StageStragglers", "kpi", "SKR"), nil, ""), "hpc-big-data", "SKR"},
	{"a Spark job duration alertname is job duration",
		newAlert(kv("alertname", "SparkJobDurationHigh"), nil, ""), "hpc-big-data", "JDUR"},

	// slo-monitoring
	{"a seznam/slo-exporter burn-rate alert is the error-budget burn rate",
		newAlert(kv("alertname", "SloOneHourAlert", "slo_domain", "userportal", "slo_time_range", "1h", "severity", "critical"), map[string]string{"title": "High availability burn-rate in SLO domain userportal (last hour)"},
			`(slo:burn_rate{slo_time_range="1h"} * on(slo_version, slo_domain, namespace) group_left() slo:stable_version{enabled!="false"} > 13.44) and on(percentile, slo_class, slo_domain, slo_type, slo_version, namespace) (slo:burn_rate{slo_time_range="5m"} * on(slo_version, slo_domain, namespace) group_left() slo:stable_version{enabled!="false"} > 13.44)`),
		"slo-monitoring", "EBR"},
	{"a Sloth page alert is the error-budget burn rate",
		newAlert(kv("alertname", "ChatAvailabilityBudgetBurn", "sloth_id", "chat-availability", "sloth_severity", "page"), nil,
			`(max(slo:sli_error:ratio_rate5m{sloth_id="chat-availability", sloth_service="chat", sloth_slo="availability"} > (14.4 * 0.001)) without (sloth_window) and max(slo:sli_error:ratio_rate1h{sloth_id="chat-availability", sloth_service="chat", sloth_slo="availability"} > (14.4 * 0.001)) without (sloth_window))`),
		"slo-monitoring", "EBR"},
	{"a Pyrra burn-rate alert is the error-budget burn rate",
		newAlert(kv("alertname", "ErrorBudgetBurn", "slo", "api-errors", "long", "1h", "short", "5m"), nil,
			`http_requests:burnrate5m{job="api",slo="api-errors"} > (14 * (1-0.99)) and http_requests:burnrate1h{job="api",slo="api-errors"} > (14 * (1-0.99))`),
		"slo-monitoring", "EBR"},
	{"up == 0 is target up",
		newAlert(kv("alertname", "TargetDown", "job", "node"), nil, `up{job="node"} == 0`), "slo-monitoring", "UP"},
	{"a kpi label SLI-LAT is the latency SLI",
		newAlert(kv("alertname", "CheckoutLatencySLI", "kpi", "SLI-LAT"), nil, ""), "slo-monitoring", "SLI-LAT"},
}

func TestClassifySectors(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	perSector := map[string]int{}
	for _, tt := range sectorCases {
		perSector[tt.sector]++
		t.Run(tt.name, func(t *testing.T) {
			got := c.Classify(tt.alert)
			if got.Sector != tt.sector {
				t.Fatalf("Sector = %q, want %q (signals %+v, candidates %v)", got.Sector, tt.sector, got.Signals, got.Candidates)
			}
			if got.PrimaryKPI() != tt.kpi {
				t.Errorf("primary KPI = %q, want %q (KPIs %+v, signals %+v)", got.PrimaryKPI(), tt.kpi, got.KPIs, got.Signals)
			}
			if got.Confidence <= 0 || got.Confidence > 1 {
				t.Errorf("Confidence = %v, want in (0,1]", got.Confidence)
			}
			if len(got.Signals) == 0 {
				t.Error("no signals")
			}
			if got.SectorName == "" || got.AlertStyle == "" || got.Sensitivity == "" {
				t.Errorf("sector context missing: %+v", got)
			}
			if tt.kpi != "" && got.IncidentClass == alert.Unknown {
				t.Errorf("IncidentClass unknown for KPI %s", tt.kpi)
			}
			if len(got.Candidates) != 0 {
				t.Errorf("Candidates = %v for a settled alert", got.Candidates)
			}
		})
	}
	for _, id := range SectorIDs() {
		if perSector[id] < 3 {
			t.Errorf("sector %s has %d cases, want at least 3", id, perSector[id])
		}
	}
}

func TestClassifySignalsAndConfidence(t *testing.T) {
	c := newClassifier(t, DefaultConfig())

	t.Run("a sector label wins over metrics of another sector with confidence 1", func(t *testing.T) {
		got := c.Classify(newAlert(kv("alertname", "KafkaConsumerLagHigh", "sector", "llm-training-data"), nil, `kafka_consumergroup_lag > 1e6`))
		if got.Sector != "llm-training-data" || got.Confidence != 1 {
			t.Fatalf("got %s at %v, want llm-training-data at 1", got.Sector, got.Confidence)
		}
		if got.Signals[0].Kind != "sector_label" || got.Signals[0].Weight != 1 {
			t.Errorf("first signal = %+v, want the sector label", got.Signals[0])
		}
	})
	t.Run("signals are listed strongest first", func(t *testing.T) {
		got := c.Classify(newAlert(kv("alertname", "VLLMHighTTFT", "kpi", "TTFT"), nil, `histogram_quantile(0.99, sum by (le) (rate(vllm:time_to_first_token_seconds_bucket[5m]))) > 2`))
		kinds := []string{}
		for i, s := range got.Signals {
			kinds = append(kinds, s.Kind)
			if i > 0 && s.Weight > got.Signals[i-1].Weight {
				t.Errorf("signal %d (%v) is stronger than signal %d", i, s.Weight, i-1)
			}
		}
		if !slices.Equal(kinds, []string{"kpi_label", "metric", "token", "token"}) {
			t.Errorf("signal kinds = %v", kinds)
		}
		if got.Signals[1].Value != "vllm:time_to_first_token_seconds_bucket" || got.Signals[1].KPI != "TTFT" || got.Signals[1].Sector != "llm-inference-gpu" {
			t.Errorf("metric signal = %+v", got.Signals[1])
		}
	})
	t.Run("more agreeing signals give more confidence", func(t *testing.T) {
		weak := c.Classify(newAlert(kv("alertname", "VLLMDown"), nil, ""))
		strong := c.Classify(newAlert(kv("alertname", "VLLMHighTTFT", "kpi", "TTFT"), nil, `vllm:time_to_first_token_seconds_bucket > 1`))
		if weak.Sector != "llm-inference-gpu" || !(weak.Confidence < strong.Confidence) {
			t.Errorf("weak %s %v, strong %s %v", weak.Sector, weak.Confidence, strong.Sector, strong.Confidence)
		}
		if weak.IncidentClass != ClassAvailability {
			t.Errorf("a sector without KPI takes its class from the alertname: got %q", weak.IncidentClass)
		}
	})
	t.Run("an unknown sector label value is shown but decides nothing", func(t *testing.T) {
		got := c.Classify(newAlert(kv("alertname", "KafkaConsumerLagHigh", "sector", "payments"), nil, ""))
		if got.Sector != "hpc-big-data" {
			t.Fatalf("Sector = %q, want hpc-big-data", got.Sector)
		}
		if got.Signals[len(got.Signals)-1].Kind != "sector_label" || got.Signals[len(got.Signals)-1].Weight != 0 {
			t.Errorf("unknown sector label should be a weight-0 signal: %+v", got.Signals)
		}
	})
	t.Run("four-word phrases and KPI expansions are read", func(t *testing.T) {
		got := c.Classify(newAlert(kv("alertname", "TimeToFirstTokenHigh"), nil, ""))
		if got.Sector != "llm-inference-gpu" || got.PrimaryKPI() != "TTFT" {
			t.Errorf("alertname: got %s/%s", got.Sector, got.PrimaryKPI())
		}
		got = c.Classify(newAlert(kv("alertname", "X", "kpi", "Time per output token"), nil, ""))
		if got.Sector != "llm-inference-gpu" || got.PrimaryKPI() != "TPOT" {
			t.Errorf("kpi expansion: got %s/%s", got.Sector, got.PrimaryKPI())
		}
	})
	t.Run("a resolved alert is classified like its firing twin", func(t *testing.T) {
		firing := newAlert(kv("alertname", "RedisEvictionsHigh"), nil, `rate(redis_evicted_keys_total[5m]) > 100`)
		resolved := newAlert(kv("alertname", "RedisEvictionsHigh"), nil, `rate(redis_evicted_keys_total[5m]) > 100`)
		resolved.Status = "resolved"
		resolved.EndsAt = resolved.StartsAt.Add(10 * time.Minute)
		f, r := c.Classify(firing), c.Classify(resolved)
		if f.Sector != r.Sector || f.PrimaryKPI() != r.PrimaryKPI() || f.Confidence != r.Confidence || f.IncidentClass != r.IncidentClass {
			t.Errorf("firing %+v, resolved %+v", f, r)
		}
	})
}

func TestClassifyAmbiguousAndUnknown(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	tests := []struct {
		name       string
		alert      *alert.Alert
		candidates []string
		kpi        string
		class      string
	}{
		{"an OWD kpi alone stays unknown with its three sectors as candidates",
			newAlert(kv("alertname", "PathDelayHigh", "kpi", "OWD"), nil, ""),
			[]string{"llm-inference-network", "hft-low-latency-exec", "hpc-dark-fiber"}, "OWD", ClassLatency},
		{"a CHR kpi alone stays unknown between prompt-cache storage and CDN",
			newAlert(kv("alertname", "HitRatioLow", "kpi", "chr"), nil, ""),
			[]string{"llm-prompt-cache-storage", "hft-cdn"}, "CHR", ClassCacheEfficiency},
		{"DCGM tensor activity alone stays unknown between the MoE training sectors",
			newAlert(kv("alertname", "GPUTensorActivityLow"), nil, `avg(DCGM_FI_PROF_PIPE_TENSOR_ACTIVE) < 0.3`),
			[]string{"llm-training-pretrain-moe", "llm-training-posttrain-moe"}, "MFU", ClassTrainingStability},
		{"a FLAT kpi alone stays unknown between exec and quant research",
			newAlert(kv("alertname", "FeedSlow", "kpi", "FLAT"), nil, ""),
			[]string{"hft-low-latency-exec", "hpc-quant-research"}, "FLAT", ClassLatency},
		{"a clock offset alone stays unknown",
			newAlert(kv("alertname", "ClockSkew"), nil, `abs(node_timex_offset_seconds) > 0.05`),
			[]string{"llm-inference-network", "hft-low-latency-exec", "hpc-dark-fiber"}, "OWD", ClassLatency},
		{"equally strong signals for two sectors stay unknown with both as candidates",
			newAlert(kv("alertname", "SparkOnVMwareIssue"), nil, ""),
			nil, "", alert.Unknown},
		{"a Watchdog alert is unknown",
			newAlert(kv("alertname", "Watchdog", "severity", "none"), nil, `vector(1)`),
			nil, "", alert.Unknown},
		{"a disk-space alert on unknown metrics is unknown",
			newAlert(kv("alertname", "NodeFilesystemAlmostFull", "mountpoint", "/"), map[string]string{"summary": "Filesystem has less than 5% space left."},
				`node_filesystem_avail_bytes{fstype!=""} / node_filesystem_size_bytes * 100 < 5`),
			nil, "", alert.Unknown},
		{"an alert with no labels at all is unknown",
			newAlert(nil, nil, ""), nil, "", alert.Unknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := c.Classify(tt.alert)
			if got.Sector != alert.Unknown || got.Confidence != 0 || got.SectorName != "" {
				t.Fatalf("got sector %q at %v, want unknown at 0 (signals %+v)", got.Sector, got.Confidence, got.Signals)
			}
			if tt.candidates != nil && !slices.Equal(got.Candidates, tt.candidates) {
				t.Errorf("Candidates = %v, want %v", got.Candidates, tt.candidates)
			}
			if tt.name == "equally strong signals for two sectors stay unknown with both as candidates" && len(got.Candidates) < 2 {
				t.Errorf("Candidates = %v, want the tied sectors", got.Candidates)
			}
			if got.PrimaryKPI() != tt.kpi {
				t.Errorf("KPI = %q, want %q", got.PrimaryKPI(), tt.kpi)
			}
			if got.IncidentClass != tt.class {
				t.Errorf("IncidentClass = %q, want %q", got.IncidentClass, tt.class)
			}
			if got.KPIs == nil || got.Signals == nil || got.Hints == nil {
				t.Errorf("nil slices in %+v: JSON would print null", got)
			}
		})
	}
}

func TestClassifyWithConfig(t *testing.T) {
	cfg := Config{
		Rules: []RuleConfig{
			{Matchers: []string{`job=~"vllm.*"`}, Sector: "llm-inference-gpu", KPI: "TTFT"},
			{Matchers: []string{`{team="trading", env="prod"}`}, Sector: "hft-low-latency-exec"},
			// UTF-8 label names, as a route's matchers take them
			// (Alertmanager v0.35's parser): the classic one refused them
			// (an audit).
			{Matchers: []string{`k8s.namespace.name="risk"`, `"service.name"=~"pricer|quoter"`}, Sector: "hft-low-latency-exec", KPI: "OWD"},
		},
		MetricFamilies: []FamilyConfig{
			{Prefix: "acme_kv_", KPI: "CHR", Sector: "llm-prompt-cache-storage"},
			{Name: "kafka_consumergroup_lag", KPI: "ITPS", Sector: "llm-training-data"},
		},
		Hints: map[string]string{HintQueueTime: "See https://runbooks.example/queue", HintPrefillDecode: ""},
	}
	c := newClassifier(t, cfg)

	t.Run("a rule assigns sector and KPI from label matchers", func(t *testing.T) {
		got := c.Classify(newAlert(kv("alertname", "SlowFirstResponse", "job", "vllm-llama"), nil, ""))
		if got.Sector != "llm-inference-gpu" || got.PrimaryKPI() != "TTFT" {
			t.Fatalf("got %s/%s", got.Sector, got.PrimaryKPI())
		}
		if got.Signals[0].Kind != "rule" || got.Signals[0].Value != `job=~"vllm.*"` {
			t.Errorf("signal = %+v", got.Signals[0])
		}
	})
	t.Run("a rule with several matchers needs all of them", func(t *testing.T) {
		if got := c.Classify(newAlert(kv("alertname", "X", "team", "trading", "env", "dev"), nil, "")); got.Sector != alert.Unknown {
			t.Errorf("Sector = %q, want unknown", got.Sector)
		}
		if got := c.Classify(newAlert(kv("alertname", "ClockDrift", "kpi", "OWD", "team", "trading", "env", "prod"), nil, "")); got.Sector != "hft-low-latency-exec" || got.PrimaryKPI() != "OWD" {
			t.Errorf("got %s/%s, want hft-low-latency-exec/OWD", got.Sector, got.PrimaryKPI())
		}
	})
	t.Run("a rule matches on UTF-8 label names", func(t *testing.T) {
		got := c.Classify(newAlert(kv("alertname", "X", "k8s.namespace.name", "risk", "service.name", "quoter"), nil, ""))
		if got.Sector != "hft-low-latency-exec" || got.PrimaryKPI() != "OWD" {
			t.Errorf("got %s/%s, want hft-low-latency-exec/OWD", got.Sector, got.PrimaryKPI())
		}
		if got := c.Classify(newAlert(kv("alertname", "X", "k8s.namespace.name", "risk", "service.name", "web"), nil, "")); got.Sector != alert.Unknown {
			t.Errorf("another service: Sector = %q, want unknown", got.Sector)
		}
	})
	t.Run("a user family extends the catalog", func(t *testing.T) {
		got := c.Classify(newAlert(kv("alertname", "AcmeHits"), nil, `rate(acme_kv_hits_total[5m]) < 10`))
		if got.Sector != "llm-prompt-cache-storage" || got.PrimaryKPI() != "CHR" {
			t.Errorf("got %s/%s", got.Sector, got.PrimaryKPI())
		}
	})
	t.Run("a user family overrides a built-in one", func(t *testing.T) {
		got := c.Classify(newAlert(kv("alertname", "IngestBehind"), nil, `kafka_consumergroup_lag > 1e6`))
		if got.Sector != "llm-training-data" || got.PrimaryKPI() != "ITPS" {
			t.Errorf("got %s/%s", got.Sector, got.PrimaryKPI())
		}
	})
	t.Run("hint texts are overridden or turned off by id", func(t *testing.T) {
		got := c.Classify(newAlert(kv("alertname", "VLLMHighTTFT"), nil, ""))
		if h := findHint(got.Hints, HintQueueTime); h == nil || h.Text != "See https://runbooks.example/queue" {
			t.Errorf("queue-time hint = %+v", h)
		}
		if h := findHint(got.Hints, HintPrefillDecode); h != nil {
			t.Errorf("prefill-decode hint should be off: %+v", h)
		}
	})
}

func findHint(hs []alert.Hint, id string) *alert.Hint {
	for i := range hs {
		if hs[i].ID == id {
			return &hs[i]
		}
	}
	return nil
}

func TestHints(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	ann := kv
	tests := []struct {
		name     string
		alert    *alert.Alert
		id       string
		specific bool
		contains string // substring of the text; "" to assert the hint is absent
	}{
		{"queue-time is generic for a TTFT alert without numbers",
			newAlert(kv("alertname", "VLLMHighTTFT"), nil, ""), HintQueueTime, false, "saturation"},
		{"queue-time says saturation when queue time dominates",
			newAlert(kv("alertname", "VLLMHighTTFT"), ann("queue_time_seconds", "1.64", "compute_time_seconds", "0.36"), ""),
			HintQueueTime, true, "queue time is 82% of latency (1.64s queued of 2.00s): saturation, not slow compute — scale out or shed load"},
		{"queue-time says slow compute when compute dominates",
			newAlert(kv("alertname", "VLLMHighTTFT"), ann("queue_time_seconds", "50ms", "compute_time_seconds", "1.2"), ""),
			HintQueueTime, true, "compute time is 96% of latency"},
		{"queue-time derives compute from total latency",
			newAlert(kv("alertname", "ChatAPISlow", "kpi", "UST"), ann("queue_time_seconds", "0.3", "latency_seconds", "0.4"), ""),
			HintQueueTime, true, "queue time is 75% of latency"},
		{"prefill-decode is generic for an ITL alert",
			newAlert(kv("alertname", "X", "kpi", "ITL"), nil, ""), HintPrefillDecode, false, "prefill"},
		{"prefill-decode blames prompt processing when prefill dominates",
			newAlert(kv("alertname", "VLLMHighTTFT"), ann("prefill_seconds", "2.5", "decode_seconds", "1"), ""),
			HintPrefillDecode, true, "prefill is 71% of request time (2.50s prefill vs 1.00s decode): prompt processing"},
		{"prefill-decode blames token generation when decode dominates",
			newAlert(kv("alertname", "VLLMHighTTFT"), ann("prefill_seconds", "0.2", "decode_seconds", "4"), ""),
			HintPrefillDecode, true, "decode is 95% of request time"},
		{"kv-cache is generic for a prefix-cache alert",
			newAlert(kv("alertname", "X", "kpi", "PCHR"), nil, ""), HintKVCache, false, "hit rate"},
		{"kv-cache compares the hit ratio with its baseline",
			newAlert(kv("alertname", "X", "kpi", "PCHR"), ann("prefix_cache_hit_ratio", "0.42", "baseline_prefix_cache_hit_ratio", "78%"), ""),
			HintKVCache, true, "prefix cache hit ratio fell to 42% from a 78% baseline (-36 points)"},
		{"kv-cache quotes a low hit ratio without baseline",
			newAlert(kv("alertname", "X", "kpi", "PCHR"), ann("prefix_cache_hit_ratio", "30"), ""),
			HintKVCache, true, "prefix cache hit ratio is 30%: most prompt tokens are recomputed"},
		{"moe-router is generic for expert imbalance",
			newAlert(kv("alertname", "MoEExpertImbalanceHigh"), nil, ""), HintMoERouter, false, "router z-loss"},
		{"moe-router quotes the losses",
			newAlert(kv("alertname", "MoEExpertImbalanceHigh"), ann("aux_loss", "0.031", "baseline_aux_loss", "0.01", "router_z_loss", "0.0042"), ""),
			HintMoERouter, true, "auxiliary load-balancing loss 0.031 (3.1× its 0.01 baseline), router z-loss 0.0042"},
		{"cpu-ready is generic for a VM cluster alert",
			newAlert(kv("alertname", "X", "kpi", "RDY"), nil, ""), HintCPUReady, false, "co-stop"},
		{"cpu-ready blames the hypervisor above 5%",
			newAlert(kv("alertname", "X", "kpi", "RDY"), ann("cpu_ready_ratio", "8%", "co_stop_ratio", "0.03"), ""),
			HintCPUReady, true, "CPU ready is 8.0%, co-stop 3.0% (above the 5% rule of thumb)"},
		{"cpu-ready clears the hypervisor below 5%",
			newAlert(kv("alertname", "X", "kpi", "RDY"), ann("cpu_ready_ratio", "0.012"), ""),
			HintCPUReady, true, "CPU ready is 1.2% (below the 5% rule of thumb)"},
		{"microburst is generic for packet loss",
			newAlert(kv("alertname", "X", "kpi", "LOSS"), nil, ""), HintMicroburst, false, "ECN/PFC"},
		{"microburst quotes depth and ECN marks",
			newAlert(kv("alertname", "X", "kpi", "LOSS"), ann("microburst_depth_bytes", "1258291", "ecn_mark_ratio", "0.004"), ""),
			HintMicroburst, true, "microburst depth 1.2 MiB, ECN marks on 0.40% of packets"},
		{"optical-health is generic for dark fiber",
			newAlert(kv("alertname", "X", "sector", "hpc-dark-fiber"), nil, ""), HintOpticalHealth, false, "pre-FEC BER"},
		{"optical-health warns on a thin OSNR margin",
			newAlert(kv("alertname", "FiberSpanOSNRMarginLow"), ann("osnr_margin_db", "1.5", "pre_fec_ber", "0.0021"), ""),
			HintOpticalHealth, true, "OSNR margin is 1.5 dB (below 3 dB), pre-FEC BER 2.1e-03 (within a decade of the 3.8e-03 HD-FEC limit)"},
		{"spill-lag is generic for consumer lag",
			newAlert(kv("alertname", "KafkaConsumerLagHigh"), nil, ""), HintSpillLag, false, "consumer lag"},
		{"spill-lag quotes lag and spill",
			newAlert(kv("alertname", "KafkaConsumerLagHigh"), ann("consumer_lag", "1200000", "spill_bytes", "3650722201"), ""),
			HintSpillLag, true, "consumer lag is 1.2M and 3.4 GiB spilled to disk"},
		{"burn-exemplars is generic for an SLO alert",
			newAlert(kv("alertname", "X", "kpi", "EBR"), nil, ""), HintBurnExemplars, false, "exemplars"},
		{"burn-exemplars says how long the budget lasts",
			newAlert(kv("alertname", "X", "kpi", "EBR", "burn_rate_1h", "15.2"), nil, ""),
			HintBurnExemplars, true, "burn rate 15.2 over 1h: at this pace a 30-day error budget (assumed: no slo_period or period label says the SLO's) lasts 1d 23h"},
		{"burn-exemplars reads humanize's milli, not minutes",
			newAlert(kv("alertname", "X", "kpi", "EBR", "burn_rate_1h", "500m"), nil, ""),
			HintBurnExemplars, true, "burn rate 0.5 over 1h"},
		{"spill-lag reads humanize's thousands",
			newAlert(kv("alertname", "KafkaConsumerLagHigh"), ann("consumer_lag", "1.2M"), ""),
			HintSpillLag, true, "consumer lag is 1.2M:"},
		{"queue time still reads a duration",
			newAlert(kv("alertname", "SomethingSlow"), ann("queue_time_seconds", "3s", "compute_time_seconds", "1000ms"), ""),
			HintQueueTime, true, "queue time is 75% of latency"},
		{"percentiles-not-averages is given for a latency alert on avg_over_time",
			newAlert(kv("alertname", "HAProxySlowBackend"), nil, `avg_over_time(haproxy_backend_response_time_average_seconds[5m]) > 0.5`),
			HintPercentiles, false, "The expression averages (avg_over_time()): for a latency-sensitive sector, alert on percentile"},
		{"percentiles-not-averages is given for a _sum/_count ratio",
			newAlert(kv("alertname", "VLLMSlowE2E"), nil, `rate(vllm:e2e_request_latency_seconds_sum[5m]) / rate(vllm:e2e_request_latency_seconds_count[5m]) > 10`),
			HintPercentiles, false, "_sum/_count"},
		{"percentiles-not-averages is not given for a percentile",
			newAlert(kv("alertname", "VLLMHighTTFT"), nil, `histogram_quantile(0.99, sum by (le) (rate(vllm:time_to_first_token_seconds_bucket[5m]))) > 2`),
			HintPercentiles, false, ""},
		{"percentiles-not-averages is not given to a low-sensitivity non-latency sector",
			newAlert(kv("alertname", "KafkaConsumerLagHigh"), nil, `avg(kafka_consumergroup_lag) > 1000`),
			HintPercentiles, false, ""},
		{"an unrelated hint is not attached",
			newAlert(kv("alertname", "KafkaConsumerLagHigh"), nil, ""), HintOpticalHealth, false, ""},
		{"numbers make a hint relevant even for an unknown alert",
			newAlert(kv("alertname", "SomethingSlow"), ann("queue_time_seconds", "3", "compute_time_seconds", "1"), ""),
			HintQueueTime, true, "queue time is 75% of latency"},
		{"unparsable numbers leave the hint generic",
			newAlert(kv("alertname", "VLLMHighTTFT"), ann("queue_time_seconds", "lots", "compute_time_seconds", "NaN"), ""),
			HintQueueTime, false, "Compare queue time"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := c.Classify(tt.alert)
			h := findHint(got.Hints, tt.id)
			if tt.contains == "" {
				if h != nil {
					t.Fatalf("hint %s attached: %+v", tt.id, h)
				}
				return
			}
			if h == nil {
				t.Fatalf("hint %s missing; hints %+v (sector %s, KPIs %+v)", tt.id, got.Hints, got.Sector, got.KPIs)
			}
			if h.Specific != tt.specific || !strings.Contains(h.Text, tt.contains) {
				t.Errorf("hint = %+v, want specific=%v containing %q", h, tt.specific, tt.contains)
			}
		})
	}
}

func TestHintsFollowTheCanonicalOrder(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	got := c.Classify(newAlert(kv("alertname", "VLLMHighTTFT"), kv("prefill_seconds", "1", "decode_seconds", "1"),
		`rate(vllm:time_to_first_token_seconds_sum[5m]) / rate(vllm:time_to_first_token_seconds_count[5m]) > 1`))
	var ids []string
	for _, h := range got.Hints {
		ids = append(ids, h.ID)
	}
	want := []string{HintQueueTime, HintPrefillDecode, HintKVCache, HintPercentiles}
	if !slices.Equal(ids, want) {
		t.Errorf("hint ids = %v, want %v", ids, want)
	}
}

func TestClassifyAllocations(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	a := newAlert(kv("alertname", "VLLMHighTTFT", "job", "vllm", "model_name", "llama-3-70b", "severity", "critical"),
		kv("summary", "TTFT p99 above 2s on llama-3-70b", "queue_time_seconds", "1.64", "compute_time_seconds", "0.36"),
		`histogram_quantile(0.99, sum by (le) (rate(vllm:time_to_first_token_seconds_bucket[5m]))) > 2`)
	allocs := testing.AllocsPerRun(100, func() { c.classify(a) })
	if allocs >= 30 {
		t.Errorf("classify allocates %v times per alert, want < 30", allocs)
	}
	if allocs := testing.AllocsPerRun(100, func() { c.Classify(a) }); allocs != 0 {
		t.Errorf("Classify of a remembered alert allocates %v times, want 0", allocs)
	}
}

func BenchmarkClassify(b *testing.B) {
	c := newClassifier(b, DefaultConfig())
	alerts := make([]*alert.Alert, len(sectorCases))
	for i := range sectorCases {
		alerts[i] = sectorCases[i].alert
	}
	// miss: the classification itself; hit: an alert seen before (the
	// steady state of Alertmanager's repeats).
	b.Run("memo=miss", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			c.classify(alerts[i%len(alerts)])
		}
	})
	b.Run("memo=hit", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			c.Classify(alerts[i%len(alerts)])
		}
	})
}
