package enrich

// family is one well-known metric family: a metric name (exact, compared
// after stripping _bucket/_sum/_count/_total), a prefix or a substring, and
// the KPI (and sector) it measures. Source names where the name comes from.
type family struct {
	Name, Prefix, Contains string
	Sector, KPI            string
	// Cands are the candidate sectors of a family that names no sector
	// (shared hardware such as DCGM device counters).
	Cands  []string
	Source string
	// Store marks the metrics of a general-purpose key-value store (Redis,
	// Memcached): prompt-cache storage by the catalog's reading, but no
	// evidence that the cache holds prompts or KV blocks (see
	// promptCacheEvidence).
	Store bool
	// Corrupt marks a counter of frames received or sent with errors (CRC,
	// alignment, symbol errors): packet loss from a bad cable, optic or
	// port, not congestion, so it does not make the microburst hint
	// relevant (see congestionLoss). Discards and drops are congestion.
	Corrupt bool
	// Decode marks a per-request decode time (vLLM's
	// vllm:request_decode_time_seconds): token generation after the first
	// token, as inter-token latency is, but summed over a request's output,
	// so it is no ITL or TPOT. It names its sector without KPI and makes
	// the prefill-decode hint relevant with its decode text.
	Decode bool
	// KVFull marks a count of what a full KV cache does: vLLM preempts
	// running requests (vllm:num_preemptions) when it runs out of KV
	// blocks. Its kv-cache hint is the occupancy text (kvOccupancyText),
	// not the prefix-cache hit-rate one.
	KVFull bool
	// Hardware marks a GPU interconnect device counter (DCGM's NVLink
	// bandwidth): a drop is first a link, NVSwitch or fabric-manager
	// matter, so it does not bring the moe-router hint (router losses).
	Hardware bool
	// PostFEC marks a count of what FEC could not correct (uncorrectable
	// blocks, post-FEC errors): no pre-FEC BER, and its optical-health hint
	// says the span is corrupting traffic now (postFECText).
	PostFEC bool
	// Prefill marks a per-request prefill time (vLLM's
	// vllm:request_prefill_time_seconds, "time spent in PREFILL phase"):
	// prompt processing from the engine taking the request to its first
	// token. It is a part of TTFT but no TTFT, which also holds the time
	// the request waited (vllm:request_queue_time_seconds), so it names
	// its sector without KPI, as Decode does. It keeps the queue-time hint
	// off — generic, or made of queue_time_seconds annotations — and makes
	// the prefill-decode hint relevant with its prefill text
	// (prefillTimeText).
	Prefill bool
	// NoSplit marks a duration that is neither queueing nor prefill or
	// decode compute: a KV-cache transfer between prefill and decode
	// workers (NIXL, SGLang's disaggregation), a model server's request
	// validation and tokenization, its detokenization of a batch's tokens
	// (TGI). An alert on it without KPI gets no queue-time or
	// prefill-decode hint from its incident class: neither split explains
	// it.
	NoSplit bool
	// NoDecode marks a duration of a request that generates no tokens: a
	// predictive model server's steps (KServe's request_predict_seconds
	// wraps the v1/v2 predict call; generation has its own endpoints), an
	// embeddings server's request (TEI: one forward pass, no decode). It
	// holds queueing and compute, so it keeps queue time, but neither
	// prefill nor decode nor a KV cache explains it: no prefill-decode or
	// kv-cache hint, from its KPI (E2E) or from its incident class.
	NoDecode bool
	// HostSide marks a metric of a process on a host (kdb+'s queries,
	// handles and memory): a regression of it is the process's, not the
	// wire's, so the microburst hint of its sector's latency KPIs (one-way
	// delay, feed and order latency) does not attach.
	HostSide bool
	// Provider marks an OpenTelemetry GenAI server metric (gen_ai.server.*:
	// time to first token, time per output token, request duration). A
	// model server records it for the model it runs; an AI gateway (Envoy
	// AI Gateway) records the same names for the upstream it calls. When
	// the alert's labels or the expression's selectors name an external
	// provider (gen_ai_provider_name or the older gen_ai_system, see
	// externalProviders), the series is the gateway's view of that
	// provider's API: llm-inference-api, its durations UST, its request
	// count read with error_type the API's ERR (see providerView).
	Provider bool
}

// Sources (paths in the projects' repositories):
const (
	srcVLLM        = "vllm-project/vllm docs/design/metrics.md (v0 and v1 engine metrics)"
	srcSGLang      = "sgl-project/sglang docs/references/production_metrics.md"
	srcTGI         = "huggingface/text-generation-inference docs/source/reference/metrics.md"
	srcTriton      = "triton-inference-server/server docs/user_guide/metrics.md"
	srcTRTLLM      = "triton-inference-server/tensorrtllm_backend README (nv_trt_llm_* metrics)"
	srcLiteLLM     = "BerriAI/litellm docs/my-website/docs/proxy/prometheus.md"
	srcGenAI       = "open-telemetry/semantic-conventions docs/gen-ai/gen-ai-metrics.md (gen_ai.client.* and gen_ai.server.* metrics)"
	srcLMCache     = "LMCache/LMCache docs/source/production/observability (lmcache:* metrics)"
	srcDCGM        = "NVIDIA/dcgm-exporter etc/default-counters.csv"
	srcEnvoy       = "envoyproxy/envoy docs/root/configuration/upstream/cluster_manager/cluster_stats.rst"
	srcEnvoyHTTP   = "envoyproxy/envoy docs/root/configuration/http/http_conn_man/stats.rst"
	srcHAProxy     = "haproxy/haproxy addons/promex/README (native Prometheus exporter)"
	srcIngress     = "kubernetes/ingress-nginx docs/user-guide/monitoring.md"
	srcNGINXPlus   = "nginxinc/nginx-prometheus-exporter README (NGINX Plus upstream metrics)"
	srcNode        = "prometheus/node_exporter collector/ (netdev, netstat, softnet, timex, meminfo_numa, schedstat, perf, infiniband)"
	srcKafka       = "danielqsj/kafka_exporter README"
	srcKafkaLag    = "seglo/kafka-lag-exporter README"
	srcDebezium    = "debezium/debezium-examples monitoring (JMX exporter: debezium_metrics_…)"
	srcNtpdRs      = "pendulum-project/ntpd-rs metrics exporter (ntp_source_…, ntp_system_…)"
	srcSpark       = "apache/spark docs/monitoring.md (executor task metrics diskBytesSpilled, memoryBytesSpilled)"
	srcFlink       = "apache/flink docs/content/docs/ops/metrics.md"
	srcRedis       = "oliver006/redis_exporter README"
	srcMemcached   = "prometheus/memcached_exporter README"
	srcVarnish     = "jonnenauha/prometheus_varnish_exporter README"
	srcChrony      = "SuperQ/chrony_exporter README"
	srcPTP         = "k8snetworkplumbingwg/linuxptp-daemon (openshift_ptp_* metrics)"
	srcVMware      = "pryorda/vmware_exporter README"
	srcSloth       = "slok/sloth pkg/common/conventions/prometheus.go (Sloth's recording rules: slo:sli_error:ratio_rate<window>, slo:objective:ratio, slo:error_budget:ratio, slo:time_period:days, slo:current_burn_rate:ratio, slo:period_burn_rate:ratio, slo:period_error_budget_remaining:ratio, sloth_slo_info)"
	srcSloExporter = "seznam/slo-exporter prometheus_rules/slo/alerts.yaml, violation_ratio.yaml (slo:burn_rate{slo_time_range}, slo:violation_ratio, slo:violation_ratio_threshold, slo:stable_version)"
	srcBudget      = "error-budget recording rules by name (Sloth's slo:error_budget:ratio; ray-project/kuberay config/prometheus/rules/prometheusRules.yaml, ray_gcs_error_budget_5m …)"
	// srcGitLabSLO: GitLab's metrics catalog writes a multi-window burn-rate
	// alert (ErrorSLOViolation, ApdexSLOViolation) over these ratios per
	// service (type) and component.
	srcATS       = "Apache Traffic Server stats_over_http as exported by trafficserver_exporter (trafficserver_restart_count, trafficserver_connections_total, trafficserver_requests_total); wikimedia/operations-alerts team-traffic/ats.yaml"
	srcGitLabSLI = "gitlab-com/runbooks metrics-catalog, regional and per-node SLIs (gitlab_regional_sli_apdex:ratio_<window>, gitlab_component_node_apdex:ratio_<window>)"
	srcGitLabSLO = "gitlab-com/runbooks metrics-catalog (gitlab_component_errors:ratio_<window>, gitlab_component_apdex:ratio_<window>, gitlab_service_errors:ratio_<window>, gitlab_service_apdex:ratio_<window>)"
	srcPyrra     = "pyrra-dev/pyrra slo/rules.go (<metric>:burnrate<window> recording rules, pyrra_* generic rules)"
	srcProm      = "prometheus/prometheus docs (up, scrape_* synthetic series, prometheus_* self-metrics)"
	srcAM        = "prometheus/alertmanager (alertmanager_* self-metrics)"
	srcThanos    = "samber/awesome-prometheus-alerts dist/rules/thanos/thanos-query.yml, thanos-compactor.yml (thanos_* metrics of Thanos' components)"
	srcLoki      = "samber/awesome-prometheus-alerts dist/rules/loki/embedded-exporter.yml (loki_* metrics of Loki's components)"
)

// Sources of the names audit H found missing (current releases' own
// definitions of the names).
const (
	srcNodeIB          = "prometheus/node_exporter collector/infiniband_linux.go (node_infiniband_* port counters and RoCE hw_counters)"
	srcTritonCore      = "triton-inference-server/core src/metrics.cc (nv_* server, GPU, CPU and response-cache metrics)"
	srcVLLMLoggers     = "vllm-project/vllm vllm/v1/metrics/loggers.py (PrometheusStatLogger: v1 engine metrics)"
	srcVLLMNIXL        = "vllm-project/vllm vllm/distributed/kv_transfer/kv_connector/v1 (NIXL connector: vllm:nixl_* metrics)"
	srcSGLangCollector = "sgl-project/sglang python/sglang/srt/metrics/collector.py (sglang:* scheduler and HiCache metrics)"
	srcLiteLLMTypes    = "BerriAI/litellm litellm/types/integrations/prometheus.py (DEFINED_PROMETHEUS_METRICS)"
	srcDCGMProf        = "NVIDIA/dcgm-exporter etc/default-counters.csv, etc/dcp-metrics-included.csv (DCGM_FI_PROF_* profiling counters)"
)

const (
	secGPU      = "llm-inference-gpu"
	secAPI      = "llm-inference-api"
	secNet      = "llm-inference-network"
	secPCompute = "llm-prompt-cache-compute"
	secPStorage = "llm-prompt-cache-storage"
	secPLB      = "llm-prompt-cache-lb"
	secData     = "llm-training-data"
	secPretrain = "llm-training-pretrain-moe"
	secPost     = "llm-training-posttrain-moe"
	secVM       = "hft-vm-clusters"
	secBare     = "hft-baremetal"
	secCDN      = "hft-cdn"
	secExec     = "hft-low-latency-exec"
	secFiber    = "hpc-dark-fiber"
	secQuant    = "hpc-quant-research"
	secBigData  = "hpc-big-data"
	secSLO      = "slo-monitoring"
)

// clockSectors are the sectors a clock-sync metric or word (PTP, chrony,
// the kernel's timex state) may belong to: those that measure one-way
// delay, whose measurements and timestamps need synchronised clocks.
var clockSectors = []string{secNet, secExec, secFiber}

// trainingSectors are the candidate sectors of a word of model training
// that says neither pre- nor post-training (a loss spike, Megatron, MoE):
// the alert's context (namespace="llm-pretrain") breaks the tie.
var trainingSectors = []string{secPretrain, secPost}

// collectiveSectors are those of NCCL, whose collectives serve training
// and tensor-parallel inference alike (vLLM's ranks talk over NCCL too),
// and of mixture-of-experts models, trained and served.
var collectiveSectors = []string{secPretrain, secPost, secGPU}

// builtinFamilies is the catalog of well-known metric families. A family
// without Sector points at every sector that has its KPI (an ambiguous KPI
// such as OWD or MFU is settled by other signals). A family without KPI names
// only a sector (a vendor prefix).
var builtinFamilies = []family{
	// vLLM.
	{Name: "vllm:time_to_first_token_seconds", Sector: secGPU, KPI: "TTFT", Source: srcVLLM},
	{Name: "vllm:inter_token_latency_seconds", Sector: secGPU, KPI: "ITL", Source: srcVLLM},
	{Name: "vllm:time_per_output_token_seconds", Sector: secGPU, KPI: "TPOT", Source: srcVLLM},
	{Name: "vllm:request_time_per_output_token_seconds", Sector: secGPU, KPI: "TPOT", Source: srcVLLM},
	{Name: "vllm:e2e_request_latency_seconds", Sector: secGPU, KPI: "E2E", Source: srcVLLM},
	// The time a request spends running (prefill + decode) is compute
	// time, not end-to-end latency; the catalog has no compute-time KPI.
	{Name: "vllm:request_inference_time_seconds", Sector: secGPU, Source: srcVLLM},
	{Name: "vllm:request_queue_time_seconds", Sector: secGPU, KPI: "QTS", Source: srcVLLM},
	{Name: "vllm:num_requests_waiting", Sector: secGPU, KPI: "QTS", Source: srcVLLM},
	// Time in the PREFILL phase, after the queue: a part of TTFT, no TTFT
	// (see family.Prefill).
	{Name: "vllm:request_prefill_time_seconds", Sector: secGPU, Source: srcVLLM, Prefill: true},
	// The decode time of a whole request is no inter-token latency: it
	// grows with the output length. It names the sector and the decode
	// text of prefill-decode, no KPI.
	{Name: "vllm:request_decode_time_seconds", Sector: secGPU, Source: srcVLLM, Decode: true},
	{Name: "vllm:prefix_cache_hits", Sector: secPCompute, KPI: "PCHR", Source: srcVLLM},
	{Name: "vllm:prefix_cache_queries", Sector: secPCompute, KPI: "PCHR", Source: srcVLLM},
	{Name: "vllm:gpu_prefix_cache_hit_rate", Sector: secPCompute, KPI: "PCHR", Source: srcVLLM},
	{Name: "vllm:cpu_prefix_cache_hit_rate", Sector: secPCompute, KPI: "PCHR", Source: srcVLLM},
	// v1 engine: the deprecated GPU prefix-cache counters (renamed
	// vllm:prefix_cache_*), the KV connector's (LMCache, offloading,
	// cross-instance sharing) prefix-cache hits, and cached prompt tokens
	// (CTR). Recomputed tokens are cached tokens computed again for the
	// forward pass (RCR).
	{Name: "vllm:gpu_prefix_cache_hits", Sector: secPCompute, KPI: "PCHR", Source: srcVLLMLoggers},
	{Name: "vllm:gpu_prefix_cache_queries", Sector: secPCompute, KPI: "PCHR", Source: srcVLLMLoggers},
	{Name: "vllm:external_prefix_cache_hits", Sector: secPCompute, KPI: "PCHR", Source: srcVLLMLoggers},
	{Name: "vllm:external_prefix_cache_queries", Sector: secPCompute, KPI: "PCHR", Source: srcVLLMLoggers},
	{Name: "vllm:prompt_tokens_cached", Sector: secPCompute, KPI: "CTR", Source: srcVLLMLoggers},
	{Name: "vllm:prompt_tokens_recomputed", Sector: secPCompute, KPI: "RCR", Source: srcVLLMLoggers},
	// Preempted requests are recomputed (RCR) because the KV cache ran out.
	{Name: "vllm:num_preemptions", Sector: secPCompute, KPI: "RCR", Source: srcVLLM, KVFull: true},
	{Name: "vllm:gpu_cache_usage_perc", Sector: secPStorage, KPI: "COCC", Source: srcVLLM},
	{Name: "vllm:cpu_cache_usage_perc", Sector: secPStorage, KPI: "COCC", Source: srcVLLM},
	{Name: "vllm:kv_cache_usage_perc", Sector: secPStorage, KPI: "COCC", Source: srcVLLM},
	// KV-cache residency (--kv-cache-metrics): a block's lifetime from
	// allocation to eviction and its idle time before eviction measure how
	// fast the cache evicts (EVR); the gap between two uses of a block is
	// the workload's reuse distance, the cache's sector without KPI.
	{Name: "vllm:kv_block_lifetime_seconds", Sector: secPStorage, KPI: "EVR", Source: srcVLLMLoggers},
	{Name: "vllm:kv_block_idle_before_evict_seconds", Sector: secPStorage, KPI: "EVR", Source: srcVLLMLoggers},
	{Name: "vllm:kv_block_reuse_gap_seconds", Sector: secPStorage, Source: srcVLLMLoggers},
	// A NIXL KV-cache transfer (prefill to decode worker) is neither
	// queueing nor a phase of the request (see family.NoSplit).
	{Name: "vllm:nixl_xfer_time_seconds", Sector: secGPU, Source: srcVLLMNIXL, NoSplit: true},
	{Prefix: "vllm:", Sector: secGPU, Source: srcVLLM},
	// SGLang.
	{Name: "sglang:time_to_first_token_seconds", Sector: secGPU, KPI: "TTFT", Source: srcSGLang},
	{Name: "sglang:inter_token_latency_seconds", Sector: secGPU, KPI: "ITL", Source: srcSGLang},
	{Name: "sglang:time_per_output_token_seconds", Sector: secGPU, KPI: "TPOT", Source: srcSGLang},
	{Name: "sglang:e2e_request_latency_seconds", Sector: secGPU, KPI: "E2E", Source: srcSGLang},
	{Name: "sglang:queue_time_seconds", Sector: secGPU, KPI: "QTS", Source: srcSGLang},
	{Name: "sglang:num_queue_reqs", Sector: secGPU, KPI: "QTS", Source: srcSGLang},
	{Name: "sglang:avg_request_queue_latency", Sector: secGPU, KPI: "QTS", Source: srcSGLang},
	{Name: "sglang:cache_hit_rate", Sector: secPCompute, KPI: "PCHR", Source: srcSGLang},
	{Name: "sglang:token_usage", Sector: secPStorage, KPI: "COCC", Source: srcSGLang},
	// Cached prompt tokens (CTR); HiCache's evictions from GPU to host
	// memory (EVR) and the time to evict or load KV back (CLAT);
	// retracted requests, SGLang's preemptions: recomputed because the KV
	// cache ran out (RCR, as vllm:num_preemptions). The prealloc and
	// transfer queues of prefill/decode disaggregation hold waiting
	// requests (QTS); a KV transfer between them is no queueing and no
	// phase (family.NoSplit).
	{Name: "sglang:cached_tokens", Sector: secPCompute, KPI: "CTR", Source: srcSGLangCollector},
	{Name: "sglang:evicted_tokens", Sector: secPStorage, KPI: "EVR", Source: srcSGLangCollector},
	{Name: "sglang:eviction_duration_seconds", Sector: secPStorage, KPI: "CLAT", Source: srcSGLangCollector},
	{Name: "sglang:load_back_duration_seconds", Sector: secPStorage, KPI: "CLAT", Source: srcSGLangCollector},
	{Name: "sglang:num_retracted_requests", Sector: secPCompute, KPI: "RCR", Source: srcSGLangCollector, KVFull: true},
	{Name: "sglang:num_retracted_reqs", Sector: secPCompute, KPI: "RCR", Source: srcSGLangCollector, KVFull: true},
	{Name: "sglang:num_prefill_prealloc_queue_reqs", Sector: secGPU, KPI: "QTS", Source: srcSGLangCollector},
	{Name: "sglang:num_decode_prealloc_queue_reqs", Sector: secGPU, KPI: "QTS", Source: srcSGLangCollector},
	{Name: "sglang:num_decode_transfer_queue_reqs", Sector: secGPU, KPI: "QTS", Source: srcSGLangCollector},
	{Name: "sglang:kv_transfer_latency_ms", Sector: secGPU, Source: srcSGLangCollector, NoSplit: true},
	{Prefix: "sglang:", Sector: secGPU, Source: srcSGLang},
	// Text Generation Inference.
	{Name: "tgi_request_duration", Sector: secGPU, KPI: "E2E", Source: srcTGI},
	{Name: "tgi_request_inference_duration", Sector: secGPU, Source: srcTGI}, // compute time (no queue)
	{Name: "tgi_request_queue_duration", Sector: secGPU, KPI: "QTS", Source: srcTGI},
	{Name: "tgi_queue_size", Sector: secGPU, KPI: "QTS", Source: srcTGI},
	{Name: "tgi_request_mean_time_per_token_duration", Sector: secGPU, KPI: "TPOT", Source: srcTGI},
	{Name: "tgi_batch_inference_duration", Sector: secGPU, Source: srcTGI}, // compute time of a batch
	{Name: "tgi_batch_forward_duration", Sector: secGPU, Source: srcTGI},   // compute time of a forward pass
	// Validating (and tokenizing) a request, and turning a batch step's
	// tokens into text ("decode" here is detokenization, recorded for
	// prefill and decode steps alike: method="prefill"|"decode"): neither
	// queueing nor a phase of the request (family.NoSplit).
	{Name: "tgi_request_validation_duration", Sector: secGPU, Source: srcTGI, NoSplit: true},
	{Name: "tgi_batch_decode_duration", Sector: secGPU, Source: srcTGI, NoSplit: true},
	{Prefix: "tgi_", Sector: secGPU, Source: srcTGI},
	// Triton / TensorRT-LLM.
	{Name: "nv_inference_queue_duration_us", Sector: secGPU, KPI: "QTS", Source: srcTriton},
	{Name: "nv_inference_pending_request_count", Sector: secGPU, KPI: "QTS", Source: srcTriton},
	// Compute time (Triton's compute_input/infer/output durations), not
	// end-to-end latency: the catalog has no compute-time KPI, so a
	// queue-time alert that divides by it stays QTS (queue vs compute).
	{Name: "nv_inference_compute_infer_duration_us", Sector: secGPU, Source: srcTriton},
	{Name: "nv_inference_request_duration_us", Sector: secGPU, KPI: "E2E", Source: srcTriton},
	// The summaries of the same durations, and the time to a decoupled
	// (streaming) model's first response: Triton's TTFT, queueing included.
	{Name: "nv_inference_request_summary_us", Sector: secGPU, KPI: "E2E", Source: srcTritonCore},
	{Name: "nv_inference_queue_summary_us", Sector: secGPU, KPI: "QTS", Source: srcTritonCore},
	{Name: "nv_inference_first_response_histogram_ms", Sector: secGPU, KPI: "TTFT", Source: srcTritonCore},
	// The server's own GPU, CPU and memory gauges, its response cache (a
	// cache of whole inference responses, no prompt or KV cache) and
	// model loading: GPU serving without KPI.
	{Prefix: "nv_gpu_", Sector: secGPU, Source: srcTritonCore},
	{Prefix: "nv_cpu_", Sector: secGPU, Source: srcTritonCore},
	{Prefix: "nv_cache_", Sector: secGPU, Source: srcTritonCore},
	{Prefix: "nv_pinned_memory_pool_", Sector: secGPU, Source: srcTritonCore},
	{Name: "nv_energy_consumption", Sector: secGPU, Source: srcTritonCore},
	{Name: "nv_model_load_duration_secs", Sector: secGPU, Source: srcTritonCore},
	{Prefix: "nv_inference_", Sector: secGPU, Source: srcTriton},
	{Prefix: "nv_trt_llm_", Sector: secGPU, Source: srcTRTLLM},
	// LiteLLM (API gateway in front of model servers).
	{Name: "litellm_request_total_latency_metric", Sector: secAPI, KPI: "P95 LAT", Source: srcLiteLLM},
	{Name: "litellm_llm_api_latency_metric", Sector: secAPI, KPI: "UST", Source: srcLiteLLM},
	{Name: "litellm_deployment_failure_responses", Sector: secAPI, KPI: "ERR", Source: srcLiteLLM},
	// The upstream API's time to first token and latency per output token
	// are its service time (UST), seen from the gateway; the requests and
	// tokens the provider says remain before its rate limit lead its 429s.
	{Name: "litellm_llm_api_time_to_first_token_metric", Sector: secAPI, KPI: "UST", Source: srcLiteLLMTypes},
	{Name: "litellm_deployment_latency_per_output_token", Sector: secAPI, KPI: "UST", Source: srcLiteLLMTypes},
	{Name: "litellm_remaining_requests_metric", Sector: secAPI, KPI: "429R", Source: srcLiteLLMTypes},
	{Name: "litellm_remaining_tokens_metric", Sector: secAPI, KPI: "429R", Source: srcLiteLLMTypes},
	// LiteLLM's own response cache (Redis, S3, semantic) is prompt-cache
	// storage; the provider's prompt-cache reads it counts are cached
	// tokens of the compute (Anthropic's, OpenAI's prompt caching).
	{Name: "litellm_cache_hits_metric", Sector: secPStorage, KPI: "CHR", Source: srcLiteLLMTypes},
	{Name: "litellm_cache_misses_metric", Sector: secPStorage, KPI: "CHR", Source: srcLiteLLMTypes},
	{Name: "litellm_cached_tokens_metric", Sector: secPStorage, Source: srcLiteLLMTypes},
	{Name: "litellm_input_cached_tokens_metric", Sector: secPCompute, KPI: "CTR", Source: srcLiteLLMTypes},
	{Prefix: "litellm_", Sector: secAPI, Source: srcLiteLLM},
	// OpenTelemetry's GenAI semantic conventions: gen_ai.server.* is the
	// model server's own (time to first token, time per output token,
	// request duration), gen_ai.client.* the caller's view of an LLM API
	// (operation duration, token usage). As Prometheus 3 keeps them
	// (UTF-8, quoted: NoTranslation, and NoUTF8EscapingWithSuffixes, which
	// adds the unit's suffix) and as its underscore translations write
	// them: with the unit's suffix (`_seconds`, the default), and without
	// it (Prometheus 3.6's UnderscoreEscapingWithoutSuffixes). Audits found
	// the suffixless underscores and the suffixed dots read with no KPI.
	// An AI gateway records them too, for the provider it calls
	// (envoyproxy/ai-gateway internal/metrics/genai.go: "from the start of
	// the received request headers in extproc to the receiving of the
	// first token in the response body"): with an external provider's
	// name in its labels such a series is the API's (family.Provider).
	{Name: "gen_ai.server.time_to_first_token", Sector: secGPU, KPI: "TTFT", Source: srcGenAI, Provider: true},
	{Name: "gen_ai.server.time_to_first_token_seconds", Sector: secGPU, KPI: "TTFT", Source: srcGenAI, Provider: true},
	{Name: "gen_ai_server_time_to_first_token_seconds", Sector: secGPU, KPI: "TTFT", Source: srcGenAI, Provider: true},
	{Name: "gen_ai_server_time_to_first_token", Sector: secGPU, KPI: "TTFT", Source: srcGenAI, Provider: true},
	{Name: "gen_ai.server.time_per_output_token", Sector: secGPU, KPI: "TPOT", Source: srcGenAI, Provider: true},
	{Name: "gen_ai.server.time_per_output_token_seconds", Sector: secGPU, KPI: "TPOT", Source: srcGenAI, Provider: true},
	{Name: "gen_ai_server_time_per_output_token_seconds", Sector: secGPU, KPI: "TPOT", Source: srcGenAI, Provider: true},
	{Name: "gen_ai_server_time_per_output_token", Sector: secGPU, KPI: "TPOT", Source: srcGenAI, Provider: true},
	{Name: "gen_ai.server.request.duration", Sector: secGPU, KPI: "E2E", Source: srcGenAI, Provider: true},
	{Name: "gen_ai.server.request.duration_seconds", Sector: secGPU, KPI: "E2E", Source: srcGenAI, Provider: true},
	{Name: "gen_ai_server_request_duration_seconds", Sector: secGPU, KPI: "E2E", Source: srcGenAI, Provider: true},
	{Name: "gen_ai_server_request_duration", Sector: secGPU, KPI: "E2E", Source: srcGenAI, Provider: true},
	{Prefix: "gen_ai.server.", Sector: secGPU, Source: srcGenAI, Provider: true},
	{Prefix: "gen_ai_server_", Sector: secGPU, Source: srcGenAI, Provider: true},
	// The caller's operation duration is the API's latency as its clients
	// see it (P95 LAT, as LiteLLM's total latency), its time to the first
	// chunk of a streamed answer the provider's service time (UST, as
	// LiteLLM's time to first token).
	{Name: "gen_ai.client.operation.duration", Sector: secAPI, KPI: "P95 LAT", Source: srcGenAI},
	{Name: "gen_ai.client.operation.duration_seconds", Sector: secAPI, KPI: "P95 LAT", Source: srcGenAI},
	{Name: "gen_ai_client_operation_duration_seconds", Sector: secAPI, KPI: "P95 LAT", Source: srcGenAI},
	{Name: "gen_ai_client_operation_duration", Sector: secAPI, KPI: "P95 LAT", Source: srcGenAI},
	{Name: "gen_ai.client.operation.time_to_first_chunk", Sector: secAPI, KPI: "UST", Source: srcGenAI},
	{Name: "gen_ai.client.operation.time_to_first_chunk_seconds", Sector: secAPI, KPI: "UST", Source: srcGenAI},
	{Name: "gen_ai_client_operation_time_to_first_chunk_seconds", Sector: secAPI, KPI: "UST", Source: srcGenAI},
	{Name: "gen_ai_client_operation_time_to_first_chunk", Sector: secAPI, KPI: "UST", Source: srcGenAI},
	{Prefix: "gen_ai.client.", Sector: secAPI, Source: srcGenAI},
	{Prefix: "gen_ai_client_", Sector: secAPI, Source: srcGenAI},
	// LMCache (KV cache storage tier).
	{Prefix: "lmcache:", Sector: secPStorage, Source: srcLMCache},
	// DCGM: tensor-pipe activity is the usual MFU proxy; training sectors
	// share it, so it is ambiguous on its own.
	{Name: "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", KPI: "MFU", Source: srcDCGM},
	{Name: "DCGM_FI_PROF_SM_ACTIVE", KPI: "MFU", Source: srcDCGM},
	{Prefix: "DCGM_FI_PROF_NVLINK_", Sector: secPretrain, KPI: "A2AS", Source: srcDCGM, Hardware: true},
	// The other profiling counters (graphics-engine, DRAM, PCIe and pipe
	// activity) are shared GPU hardware as the device counters are:
	// candidate sectors, settled by context. Engine activity is no FLOPs
	// utilization (the tensor pipe is).
	{Prefix: "DCGM_FI_PROF_", Cands: []string{secGPU, secPretrain, secPost}, Source: srcDCGMProf},
	// Envoy.
	{Name: "envoy_cluster_upstream_rq_time", Sector: secPLB, KPI: "URT", Source: srcEnvoy},
	{Prefix: "envoy_cluster_upstream_rq_retry", Sector: secPLB, KPI: "RTR", Source: srcEnvoy},
	{Name: "envoy_cluster_upstream_rq_pending_active", Sector: secPLB, KPI: "LQ", Source: srcEnvoy},
	{Name: "envoy_cluster_upstream_rq_pending_overflow", Sector: secPLB, KPI: "LQ", Source: srcEnvoy},
	{Name: "envoy_cluster_upstream_rq_active", Sector: secPLB, KPI: "LQ", Source: srcEnvoy},
	{Name: "envoy_cluster_upstream_rq_xx", Sector: secAPI, KPI: "ERR", Source: srcEnvoy},
	{Name: "envoy_cluster_upstream_rq_5xx", Sector: secAPI, KPI: "ERR", Source: srcEnvoy},
	{Name: "envoy_cluster_upstream_rq_timeout", Sector: secAPI, KPI: "ERR", Source: srcEnvoy},
	{Name: "envoy_http_downstream_rq_time", Sector: secAPI, KPI: "P95 LAT", Source: srcEnvoyHTTP},
	{Name: "envoy_http_downstream_rq_xx", Sector: secAPI, KPI: "ERR", Source: srcEnvoyHTTP},
	// HAProxy.
	{Name: "haproxy_backend_response_time_average_seconds", Sector: secPLB, KPI: "URT", Source: srcHAProxy},
	{Name: "haproxy_backend_total_time_average_seconds", Sector: secPLB, KPI: "URT", Source: srcHAProxy},
	{Name: "haproxy_server_response_time_average_seconds", Sector: secPLB, KPI: "URT", Source: srcHAProxy},
	{Name: "haproxy_backend_queue_time_average_seconds", Sector: secPLB, KPI: "LQ", Source: srcHAProxy},
	{Name: "haproxy_backend_current_queue", Sector: secPLB, KPI: "LQ", Source: srcHAProxy},
	{Name: "haproxy_server_current_queue", Sector: secPLB, KPI: "LQ", Source: srcHAProxy},
	{Name: "haproxy_backend_retry_warnings", Sector: secPLB, KPI: "RTR", Source: srcHAProxy},
	{Name: "haproxy_backend_http_responses", Sector: secAPI, KPI: "ERR", Source: srcHAProxy},
	{Name: "haproxy_frontend_http_responses", Sector: secAPI, KPI: "ERR", Source: srcHAProxy},
	// NGINX.
	{Name: "nginx_ingress_controller_request_duration_seconds", Sector: secAPI, KPI: "P95 LAT", Source: srcIngress},
	{Name: "nginx_ingress_controller_response_duration_seconds", Sector: secAPI, KPI: "UST", Source: srcIngress},
	{Name: "nginx_ingress_controller_requests", Sector: secAPI, KPI: "ERR", Source: srcIngress},
	{Name: "nginxplus_upstream_server_response_time", Sector: secPLB, KPI: "URT", Source: srcNGINXPlus},
	{Name: "nginxplus_upstream_server_header_time", Sector: secPLB, KPI: "URT", Source: srcNGINXPlus},
	// node_exporter.
	{Name: "node_network_receive_drop", Sector: secNet, KPI: "LOSS", Source: srcNode},
	{Name: "node_network_transmit_drop", Sector: secNet, KPI: "LOSS", Source: srcNode},
	{Name: "node_network_receive_errs", Sector: secNet, KPI: "LOSS", Source: srcNode, Corrupt: true},
	{Name: "node_netstat_Tcp_RetransSegs", Sector: secNet, KPI: "LOSS", Source: srcNode},
	{Name: "node_softnet_dropped", Sector: secNet, KPI: "LOSS", Source: srcNode},
	{Name: "node_softnet_times_squeezed", Sector: secNet, KPI: "LOSS", Source: srcNode},
	{Name: "node_infiniband_symbol_error", Sector: secNet, KPI: "LOSS", Source: srcNode, Corrupt: true},
	{Name: "node_infiniband_link_error_recovery", Sector: secNet, KPI: "LOSS", Source: srcNode, Corrupt: true},
	// InfiniBand port counters: received packets with errors, link
	// integrity and buffer-overrun errors are a bad link (loss, not
	// congestion); discards and RoCE's out-of-sequence packets are loss;
	// transmit wait (data to send, no flow-control credit) is the
	// fabric's congestion backpressure, as PFC pauses are (ECN); RoCE's
	// congestion notification (ECN-marked packets, CNPs) is ECN. A link
	// that went down is the network without KPI.
	{Name: "node_infiniband_port_errors_received", Sector: secNet, KPI: "LOSS", Source: srcNodeIB, Corrupt: true},
	{Name: "node_infiniband_port_receive_remote_physical_errors", Sector: secNet, KPI: "LOSS", Source: srcNodeIB, Corrupt: true},
	{Name: "node_infiniband_local_link_integrity_errors", Sector: secNet, KPI: "LOSS", Source: srcNodeIB, Corrupt: true},
	{Name: "node_infiniband_excessive_buffer_overrun_errors", Sector: secNet, KPI: "LOSS", Source: srcNodeIB, Corrupt: true},
	{Name: "node_infiniband_port_discards_received", Sector: secNet, KPI: "LOSS", Source: srcNodeIB},
	{Name: "node_infiniband_port_discards_transmitted", Sector: secNet, KPI: "LOSS", Source: srcNodeIB},
	{Name: "node_infiniband_out_of_sequence_packets_received", Sector: secNet, KPI: "LOSS", Source: srcNodeIB},
	{Name: "node_infiniband_port_transmit_wait", Sector: secNet, KPI: "ECN", Source: srcNodeIB},
	{Name: "node_infiniband_np_ecn_marked_roce_packets_received", Sector: secNet, KPI: "ECN", Source: srcNodeIB},
	{Name: "node_infiniband_np_cnp_packets_sent", Sector: secNet, KPI: "ECN", Source: srcNodeIB},
	{Name: "node_infiniband_rp_cnp_packets_handled", Sector: secNet, KPI: "ECN", Source: srcNodeIB},
	{Prefix: "node_infiniband_", Sector: secNet, Source: srcNodeIB},
	{Name: "node_timex_offset_seconds", KPI: "OWD", Source: srcNode},
	{Prefix: "node_memory_numa_numa_miss", Sector: secVM, KPI: "NUMA MISS", Source: srcNode},
	{Prefix: "node_memory_numa_numa_foreign", Sector: secVM, KPI: "NUMA MISS", Source: srcNode},
	{Prefix: "node_memory_numa_other_node", Sector: secVM, KPI: "NUMA MISS", Source: srcNode},
	{Name: "node_schedstat_waiting_seconds", Sector: secVM, KPI: "RDY", Source: srcNode},
	{Prefix: "node_perf_cache_", Sector: secBare, KPI: "MPKI", Source: srcNode},
	// Cycles alone are no cycles per message (CPM): a host's cycle rate is
	// how busy its CPUs are. The perf collector is opt-in, kept where
	// microarchitecture is watched: the sector, no KPI; a rule dividing by
	// messages says so in its words, which name CPM.
	{Name: "node_perf_cpucycles", Sector: secBare, Source: srcNode},
	// Clock sync (PTP, chrony): the sectors that time one-way delay and
	// orders watch it, but an offset from the grandmaster is no one-way
	// delay, and the catalog has no clock-sync KPI: candidate sectors, no
	// KPI (see clockSectors).
	{Prefix: "chrony_tracking_", Cands: clockSectors, Source: srcChrony},
	{Prefix: "openshift_ptp_offset", Cands: clockSectors, Source: srcPTP},
	{Prefix: "ntp_source_", Cands: clockSectors, Source: srcNtpdRs},
	{Prefix: "ntp_system_", Cands: clockSectors, Source: srcNtpdRs},
	// VMware.
	{Prefix: "vmware_vm_cpu_ready", Sector: secVM, KPI: "RDY", Source: srcVMware},
	{Prefix: "vmware_vm_cpu_costop", Sector: secVM, KPI: "CSTP", Source: srcVMware},
	// Kafka.
	{Name: "kafka_consumergroup_lag", Sector: secBigData, KPI: "CLAG", Source: srcKafka},
	{Prefix: "kafka_consumergroup_lag_", Sector: secBigData, KPI: "CLAG", Source: srcKafka},
	{Prefix: "kafka_consumergroup_group_lag", Sector: secBigData, KPI: "CLAG", Source: srcKafkaLag},
	{Prefix: "kafka_consumergroup_group_max_lag", Sector: secBigData, KPI: "CLAG", Source: srcKafkaLag},
	// Debezium's change-data capture, through the JMX exporter (the
	// metric names as Debezium writes them, or lower-cased by the
	// exporter's lowercaseOutputName): how far the connector is behind its
	// source database is consumer lag.
	{Prefix: "debezium_metrics_MilliSecondsBehindSource", Sector: secBigData, KPI: "CLAG", Source: srcDebezium},
	{Prefix: "debezium_metrics_millisecondsbehindsource", Sector: secBigData, KPI: "CLAG", Source: srcDebezium},
	{Prefix: "debezium_metrics_", Sector: secBigData, Source: srcDebezium},
	// Spark (names depend on the sink; the task-metric names are stable).
	{Contains: "BytesSpilled", Sector: secBigData, KPI: "SPILL", Source: srcSpark},
	{Prefix: "spark_", Sector: secBigData, Source: srcSpark},
	{Prefix: "flink_", Sector: secBigData, Source: srcFlink},
	// Redis and Memcached as prompt-cache stores.
	{Name: "redis_keyspace_hits", Sector: secPStorage, KPI: "CHR", Source: srcRedis, Store: true},
	{Name: "redis_keyspace_misses", Sector: secPStorage, KPI: "CHR", Source: srcRedis, Store: true},
	{Name: "redis_evicted_keys", Sector: secPStorage, KPI: "EVR", Source: srcRedis, Store: true},
	{Name: "redis_memory_used_bytes", Sector: secPStorage, KPI: "COCC", Source: srcRedis, Store: true},
	{Name: "redis_memory_max_bytes", Sector: secPStorage, KPI: "COCC", Source: srcRedis, Store: true},
	{Prefix: "redis_commands_duration_seconds", Sector: secPStorage, KPI: "CLAT", Source: srcRedis, Store: true},
	{Prefix: "redis_latency_percentiles", Sector: secPStorage, KPI: "CLAT", Source: srcRedis, Store: true},
	{Name: "memcached_commands", Sector: secPStorage, KPI: "CHR", Source: srcMemcached, Store: true},
	{Name: "memcached_items_evicted", Sector: secPStorage, KPI: "EVR", Source: srcMemcached, Store: true},
	{Name: "memcached_current_bytes", Sector: secPStorage, KPI: "COCC", Source: srcMemcached, Store: true},
	{Name: "memcached_limit_bytes", Sector: secPStorage, KPI: "COCC", Source: srcMemcached, Store: true},
	// Varnish as CDN edge.
	{Name: "varnish_main_cache_hit", Sector: secCDN, KPI: "CHR", Source: srcVarnish},
	{Name: "varnish_main_cache_miss", Sector: secCDN, KPI: "CHR", Source: srcVarnish},
	{Name: "varnish_main_backend_req", Sector: secCDN, KPI: "OOR", Source: srcVarnish},
	{Prefix: "varnish_", Sector: secCDN, Source: srcVarnish},
	// Apache Traffic Server, the other cache of CDN edges (Wikimedia's
	// backend layer beside Varnish).
	{Prefix: "trafficserver_", Sector: secCDN, Source: srcATS},
	// Sloth and Pyrra recording rules; Prometheus and Alertmanager health.
	// Sloth's rules by their names, not by the "slo:" level alone: other
	// generators use that level for their own thresholds (GitLab's
	// slo:max:hard:gitlab_component_saturation:ratio is a saturation
	// limit, not an error budget).
	{Prefix: "slo:sli_error:ratio_rate", Sector: secSLO, KPI: "EBR", Source: srcSloth},
	{Name: "slo:objective:ratio", Sector: secSLO, KPI: "EBR", Source: srcSloth},
	{Name: "slo:error_budget:ratio", Sector: secSLO, KPI: "EBR", Source: srcSloth},
	{Name: "slo:time_period:days", Sector: secSLO, KPI: "EBR", Source: srcSloth},
	{Name: "slo:current_burn_rate:ratio", Sector: secSLO, KPI: "EBR", Source: srcSloth},
	{Name: "slo:period_burn_rate:ratio", Sector: secSLO, KPI: "EBR", Source: srcSloth},
	{Name: "slo:period_error_budget_remaining:ratio", Sector: secSLO, KPI: "EBR", Source: srcSloth},
	{Prefix: "sloth_", Sector: secSLO, Source: srcSloth},
	{Contains: ":burnrate", Sector: secSLO, KPI: "EBR", Source: srcPyrra},
	{Contains: "error_budget", Sector: secSLO, KPI: "EBR", Source: srcBudget},
	// seznam/slo-exporter's recording rules: burn rates and violation
	// ratios per slo_time_range, and the stable version its alerts
	// multiply by (no KPI of its own).
	{Name: "slo:burn_rate", Sector: secSLO, KPI: "EBR", Source: srcSloExporter},
	{Name: "slo:violation_ratio", Sector: secSLO, KPI: "EBR", Source: srcSloExporter},
	{Name: "slo:violation_ratio_threshold", Sector: secSLO, KPI: "EBR", Source: srcSloExporter},
	{Name: "slo:stable_version", Sector: secSLO, Source: srcSloExporter},
	{Prefix: "gitlab_component_errors:ratio", Sector: secSLO, KPI: "EBR", Source: srcGitLabSLO},
	{Prefix: "gitlab_component_apdex:ratio", Sector: secSLO, KPI: "EBR", Source: srcGitLabSLO},
	{Prefix: "gitlab_service_errors:ratio", Sector: secSLO, KPI: "EBR", Source: srcGitLabSLO},
	{Prefix: "gitlab_service_apdex:ratio", Sector: secSLO, KPI: "EBR", Source: srcGitLabSLO},
	// The regional and per-node SLIs of the same catalog, which its
	// …SLOViolationRegional and …SLOViolationSingleNode alerts burn.
	{Prefix: "gitlab_regional_sli_", Sector: secSLO, KPI: "EBR", Source: srcGitLabSLI},
	{Prefix: "gitlab_component_node_errors:ratio", Sector: secSLO, KPI: "EBR", Source: srcGitLabSLI},
	{Prefix: "gitlab_component_node_apdex:ratio", Sector: secSLO, KPI: "EBR", Source: srcGitLabSLI},
	{Name: "pyrra_availability", Sector: secSLO, KPI: "SLI-AV", Source: srcPyrra},
	{Prefix: "pyrra_", Sector: secSLO, KPI: "EBR", Source: srcPyrra},
	{Name: "up", Sector: secSLO, KPI: "UP", Source: srcProm},
	{Prefix: "scrape_", Sector: secSLO, KPI: "UP", Source: srcProm},
	{Prefix: "prometheus_", Sector: secSLO, Source: srcProm},
	{Prefix: "alertmanager_", Sector: secSLO, Source: srcAM},
	{Prefix: "thanos_", Sector: secSLO, Source: srcThanos},
	{Prefix: "loki_", Sector: secSLO, Source: srcLoki},
}
