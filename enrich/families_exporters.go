package enrich

// Sources of exporterFamilies (project and file where the names are
// defined or used). Names taken from a rule file of
// samber/awesome-prometheus-alerts are the exporter's own names as that
// file uses them.
const (
	srcAPA          = "samber/awesome-prometheus-alerts dist/rules/"
	srcGAIE         = "kubernetes-sigs/gateway-api-inference-extension site-src/guides/metrics.md, tools/alerts/alert.yaml"
	srcLLMD         = "llm-d/llm-d docs/monitoring/example-promQL-queries.md (inference_objective_*, vllm:*)"
	srcVLLMOTel     = "vllm-project/vllm docs/design/metrics.md (vllm:* names; vllm_* as OpenTelemetry/Prometheus 3 underscore translation)"
	srcTFServing    = "tensorflow/serving tensorflow_serving/model_servers (:tensorflow:serving:* metrics)"
	srcTRTLLMDynamo = "ai-dynamo/dynamo docs/backends/trtllm observability (trtllm_* metrics)"
	srcDCGMDefault  = "NVIDIA/dcgm-exporter etc/default-counters.csv"
	srcDCGMExp      = "NVIDIA/dcgm-exporter internal/pkg/counters/const.go, etc/default-counters.csv (DCGM_EXP_XID_ERRORS_COUNT, DCGM_EXP_GPU_HEALTH_STATUS, DCGM_EXP_CLOCK_EVENTS_COUNT)"
	srcLiteLLMRules = srcAPA + "litellm/embedded-exporter.yml"
	srcRedisRules   = srcAPA + "redis/oliver006-redis-exporter.yml (oliver006/redis_exporter)"
	srcMemcRules    = srcAPA + "memcached/memcached-exporter.yml (prometheus/memcached_exporter)"
	srcSquid        = "boynux/squid-exporter README (squid_* metrics)"
	srcNGINXStub    = "nginxinc/nginx-prometheus-exporter README (stub_status nginx_* metrics)"
	srcNGINXVTS     = "vozlt/nginx-module-vts README (nginx_vts_* metrics)"
	srcKnyar        = srcAPA + "nginx/knyar-nginx-exporter.yml (knyar/nginx-lua-prometheus)"
	srcHAProxyRules = srcAPA + "haproxy/embedded-exporter-v2.yml (HAProxy native exporter)"
	srcEnvoyRules   = srcAPA + "envoy/embedded-exporter.yml (Envoy admin /stats/prometheus)"
	srcTraefik      = srcAPA + "traefik/embedded-exporter-v2.yml (Traefik v2 metrics)"
	srcTraefikV1    = srcAPA + "traefik/embedded-exporter-v1.yml (Traefik v1 metrics)"
	srcF5           = "ExpressenAB/bigip_exporter README (bigip_* metrics)"
	srcCloudflare   = srcAPA + "cloudflare/lablabs-cloudflare-exporter.yml (lablabs/cloudflare-exporter)"
	srcFastly       = "fastly/fastly-exporter pkg/realtime/metrics.go (fastly_rt_* real-time stats: hits, miss, origin_fetches, miss_duration_seconds)"
	srcCloudFront   = "nerdswords/yet-another-cloudwatch-exporter AWS/CloudFront metrics as aws_cloudfront_<metric>_average (cache_hit_rate, origin_latency)"
	srcFeast        = "feast-dev/feast docs/reference/metrics-reference.md (feast_serving_*, feast_ingestion_*)"
	srcEvidently    = "evidentlyai/evidently monitoring service examples (evidently:data_drift:dataset_drift, n_drifted_features, share_drifted_features)"
	srcLibvirt      = "prometheus-libvirt-exporter READMEs (libvirt_domain_vcpu_delay_seconds_total: time the vCPU waited in the host's queue, exposed to the VM as steal time)"
	srcPCM          = "intel/pcm doc/PCM-EXPORTER.md, pcm-sensor-server (L3_Cache_Misses, Instructions_Retired_Any, Clock_Unhalted_Thread, SMI_Count)"
	srcKafkaRules   = srcAPA + "kafka/danielqsj-kafka-exporter.yml (danielqsj/kafka_exporter)"
	srcKafkaJMX     = "prometheus/jmx_exporter example_configs/kafka-2_0_0.yml (kafka_server_*, kafka_consumer_* JMX names)"
	srcSparkRules   = srcAPA + "apache-spark/spark-prometheus.yml (Spark PrometheusServlet metrics_* names)"
	srcFlinkRules   = srcAPA + "apache-flink/flink-prometheus-reporter.yml (Flink Prometheus reporter)"
	srcAirflow      = "apache/airflow docs/apache-airflow/administration-and-deployment/logging-monitoring/metrics.rst (statsd names via statsd_exporter)"
	srcHadoopRules  = srcAPA + "hadoop/jmx_exporter.yml (Hadoop JMX via jmx_exporter)"
	srcMinioRules   = srcAPA + "minio/embedded-exporter.yml (MinIO cluster metrics)"
	srcCephRules    = srcAPA + "ceph/embedded-exporter.yml (Ceph mgr prometheus module)"
	srcNodeRules    = srcAPA + "host-and-hardware/node-exporter.yml (prometheus/node_exporter)"
	srcVMwareRules  = srcAPA + "vmware/pryorda-vmware-exporter.yml (pryorda/vmware_exporter)"
	srcVSphere      = "influxdata/telegraf plugins/inputs/vsphere README (vsphere_vm_cpu ready/costop summation)"
	srcSNMPRules    = srcAPA + "snmp/snmp-exporter.yml (prometheus/snmp_exporter if_mib module)"
	srcBGP          = "ruby-no-kai/rubykaigi-net k8s/prom/rules/snmp.libsonnet (bgpPeerState, BGP4-MIB)"
	srcOptics       = "czerwonk/junos_exporter interface diagnostics collector (laser_rx_dbm, laser output power in dBm)"
	srcFEC          = "openconfig/public release/models/platform/openconfig-transport-line-common and -terminal-device (pre-FEC BER, FEC corrected/uncorrectable)"
	srcPTPLinux     = "k8snetworkplumbingwg/ptp-operator (openshift_ptp_* metrics)"
	srcPTPSwitch    = "switch and NIC PTP exporters' <vendor>_ptp_offset_ns gauges (\"PTP offset compared to GrandMaster in ns\")"
	srcPulsar       = srcAPA + "pulsar/embedded-exporter.yml (pulsar_* broker metrics; pulsar_subscription_back_log: a subscription's unacknowledged messages)"
	srcStrimzi      = "strimzi/strimzi-kafka-operator packaging/examples/metrics/prometheus-install/prometheus-rules/ (strimzi_* metrics of the Kafka Bridge, Connect and the operators)"
	srcRedpanda     = "redpanda-data/docs modules/reference/pages/public-metrics-reference.adoc (redpanda_* public metrics; redpanda_kafka_consumer_group_lag_{max,sum} with enable_consumer_group_metrics) and internal-metrics-reference.adoc (vectorized_*)"
	srcGJL          = "grafana/jsonnet-libs "
	srcJaeger       = srcGJL + "jaeger-mixin/prometheus_rules_out/prometheus_alerts.yaml (jaeger_* metrics of Jaeger's agent, collector and query)"
	srcOtelcol      = srcGJL + "opentelemetry-collector-observ-lib/prometheus_rules_out/prometheus_alerts.yaml (otelcol_* self-metrics of the OpenTelemetry Collector)"
	srcVCenter      = srcGJL + "vsphere-mixin/prometheus_rules_out/prometheus_alerts.yaml (vcenter_* metrics of vCenter hosts, VMs and datastores)"
	srcScrape       = "prometheus-community/ipmi_exporter docs/metrics.md (ipmi_scrape_duration_seconds: an exporter's own <name>_scrape_duration_seconds, as Prometheus' scrape_duration_seconds)"
	srcSNMPSelf     = srcGJL + "snmp-observ-lib/prometheus_rules_out/prometheus_alerts.yaml (snmp_exporter's own snmp_scrape_* metrics: snmp_scrape_pdus_returned, snmp_scrape_duration_seconds)"
	srcMimir        = srcAPA + "grafana-mimir/embedded-exporter.yml, cortex/embedded-exporter.yml (cortex_* metrics of Grafana Mimir and Cortex)"
	srcTempo        = srcAPA + "grafana-tempo/embedded-exporter.yml (tempo_* and tempodb_* metrics of Grafana Tempo)"
	srcPromtail     = srcAPA + "promtail/embedded-exporter.yml (promtail_* metrics of Promtail, Loki's log shipper)"
	srcBlackboxSelf = srcAPA + "blackbox/blackbox-exporter.yml (blackbox_exporter_* self-metrics; probe_* are the probed target's)"
	srcPresto       = srcGJL + "presto-mixin/prometheus_rules_out/prometheus_alerts.yaml (presto_* JMX metrics of Presto's coordinator and workers)"
	srcClickHouse   = srcGJL + "clickhouse-mixin/prometheus_rules_out/prometheus_alerts.yaml; " + srcAPA + "clickhouse/embedded-exporter.yml (ClickHouse's built-in endpoint: ClickHouseMetrics_*, ClickHouseProfileEvents_*, ClickHouseAsyncMetrics_*, ClickHouseErrorMetric_*)"
	srcKP           = "prometheus-operator/kube-prometheus manifests/"
	srcGrafana      = srcKP + "grafana-prometheusRule.yaml (grafana_* self-metrics of Grafana)"
	srcKSM          = srcKP + "kubeStateMetrics-prometheusRule.yaml (kube_state_metrics_* self-metrics of kube-state-metrics)"
	srcReloader     = srcKP + "prometheusOperator-prometheusRule.yaml (reloader_* metrics of the prometheus-operator config-reloader sidecar)"
	srcAlerts       = srcKP + "kubePrometheus-prometheusRule.yaml (Prometheus' own ALERTS series, read by InfoInhibitor)"
	// Serving frameworks beyond the engines of builtinFamilies.
	srcKServe       = "kserve/website docs/modelserving/observability/prometheus_metrics.md (request_{preprocess,predict,postprocess,explain}_seconds step latencies)"
	srcRayServe     = "ray-project/ray doc/source/serve/monitoring.md (built-in Ray Serve metrics, ray_serve_*)"
	srcLMCacheRef   = "LMCache/LMCache docs/source/production/observability/metrics.rst (lmcache:* metrics reference)"
	srcTRTLLMServe  = "NVIDIA/TensorRT-LLM tensorrt_llm/metrics/collector.py (trtllm_* metrics of trtllm-serve's MetricsCollector)"
	srcTRTLLMBlocks = "triton-inference-server/tensorrtllm_backend README (nv_trt_llm_kv_cache_block_metrics: max, free and used KV cache blocks, tokens per block)"
	srcDynamo       = "ai-dynamo/dynamo docs/observability/metrics.md (dynamo_frontend_*, dynamo_component_* and kvstats metrics)"
	srcNIM          = "NVIDIA NIM for LLMs docs observability.html (docs.nvidia.com/nim/large-language-models/latest: unprefixed engine metrics)"
	srcLLMDRouter   = "llm-d docs operations/observability/router-metrics (llm-d.ai: llm_d_epp_* Endpoint Picker metrics, renamed from inference_objective_* and inference_extension_*)"
	srcTorchServe   = "pytorch/serve docs/metrics.md, docs/metrics_api.md (ts_* Prometheus metrics)"
	srcMLServer     = "SeldonIO/MLServer docs/user-guide/metrics.md (default metrics)"
	srcBentoML      = "bentoml/BentoML docs/source/build-with-bentoml/observability/metrics.rst (bentoml_service_* default metrics)"
	srcDynamoNames  = "ai-dynamo/dynamo lib/runtime/src/metrics/prometheus_names.rs (dynamo_frontend_*, dynamo_component_*, dynamo_router_*, dynamo_kvindexer_* names)"
	srcDynamoKVBM   = "ai-dynamo/dynamo lib/runtime/src/metrics/prometheus_names.rs (mod kvbm: offload_blocks_d2h, onboard_blocks_h2d …, exported kvbm_*; kvbm_host_cache_hit_rate, kvbm_disk_cache_hit_rate)"
	srcLlamaCpp     = "ggml-org/llama.cpp tools/server/server-context.cpp (llamacpp:* metrics of llama-server --metrics; kv_cache_usage_ratio in the older examples/server/server.cpp)"
	srcRoCEEthtool  = "prometheus/node_exporter collector/infiniband_linux.go, collector/ethtool_linux.go (RoCE congestion counters as node_infiniband_* and NIC ethtool stats as node_ethtool_*; mlx5 rx_prio<N>_pause PFC counters)"
	srcOCInterfaces = "openconfig/public release/models/interfaces/openconfig-interfaces.yang (state/counters in-errors, out-errors, in-discards, out-discards, in-fcs-errors) and openconfig-bgp neighbor state, as gnmic names them; wikimedia/operations-alerts team-netops"
	srcOpenConfig   = "openconfig/public release/models/optical-transport/openconfig-terminal-device.yang (optical-channel state osnr, chromatic-dispersion, polarization-mode-dispersion, input-power; otn state q-value, esnr), named as gnmic's Prometheus output joins a path's elements with _"
	srcRayNode      = "ray-project/ray python/ray/dashboard/modules/reporter/reporter_agent.py (ray_node_* metrics of Ray's node agent)"
	srcRayGCS       = "ray-project/ray src/ray/stats/metric_defs.cc (ray_gcs_* metrics of Ray's GCS); ray-project/kuberay config/prometheus/rules/prometheusRules.yaml (ray_gcs_update_resource_usage_time)"
	// Data pipelines, network and SLO tools of audit CORPUS4.
	srcKminion      = "redpanda-data/kminion docs/metrics.md (kminion_* metrics: kminion_kafka_consumer_group_topic_lag, …_topic_partition_lag, kminion_end_to_end_* round-trip checks)"
	srcBurrow       = "linkedin/Burrow core/internal/httpserver/prometheus.go (burrow_kafka_consumer_lag_total, burrow_kafka_consumer_partition_lag, burrow_kafka_consumer_status)"
	srcFlinkSource  = "apache/flink flink-runtime/src/main/java/org/apache/flink/runtime/metrics/MetricNames.java, flink-metrics-core …/groups/SourceReaderMetricGroup.java (FLIP-33 pendingRecords: records the source has not fetched yet)"
	srcOCQoS        = "openconfig/public release/models/qos/openconfig-qos-interfaces.yang (queue state dropped-pkts, dropped-octets: dropped by the queue due to overrun), as gnmic names them"
	srcTelegrafGNMI = "influxdata/telegraf plugins/inputs/gnmi/README.md (subscription name ifcounters on /interfaces/interface/state/counters) and plugins/serializers/prometheus/README.md (metric name = measurement_field)"
	srcSFCNoDesc    = "torvalds/linux drivers/net/ethernet/sfc/siena/siena.c (rx_nodesc_drop_cnt) and sfc/ef10.c (port_rx_nodesc_drops): RX_NODESC_DROPS, as prometheus/node_exporter collector/ethtool_linux.go exports them (node_ethtool_<stat>)"
	srcOCAmp        = "openconfig/public release/models/optical-transport/openconfig-optical-amplifier.yang (amplifier state input-power-total, output-power-total, actual-gain …), as gnmic names them"
	srcSLOGen       = "google/slo-generator slo_generator/exporters/base.py (DEFAULT_METRICS sli_measurement, slo_target)"
	// AI gateways, serving platforms and trading middleware of audit
	// GATEWAYS2.
	srcHigress   = "alibaba/higress plugins/wasm-go/extensions/ai-statistics/README_EN.md, main.go (route_upstream_model_consumer_metric_* counters: llm_first_token_duration, llm_service_duration, input_token, output_token, llm_duration_count, llm_stream_duration_count)"
	srcAPISIX    = "apache/apisix apisix/plugins/prometheus/exporter.lua, docs/*/latest/plugins/prometheus.md (apisix_llm_latency, type=\"total\"|\"ttft\"; apisix_llm_prompt_tokens, apisix_llm_completion_tokens, apisix_llm_active_connections)"
	srcKongAI    = "Kong/kong kong/plugins/prometheus/exporter.lua (kong_ prefix) and spec/03-plugins/26-prometheus (ai_llm_requests_total, ai_llm_cost_total, ai_llm_tokens_total, ai_llm_provider_latency_ms, ai_cache_fetch_latency, ai_cache_embeddings_latency)"
	srcPortkey   = "Portkey-AI/gateway src/apm/prometheus/prometheusClient.ts (portkey_request_duration_milliseconds, portkey_processing_time_excluding_last_byte_ms; request_count and llm_request_duration_milliseconds are unprefixed)"
	srcTEI       = "huggingface/text-embeddings-inference core/src/infer.rs (te_embed_*, te_predict_* durations, te_request_failure), router/src (te_request_duration, te_request_queue_duration, te_request_inference_duration, te_request_tokenization_duration)"
	srcSeldon    = "SeldonIO/seldon-core scheduler/pkg/metrics/agent.go (seldon_model_infer_api_seconds: \"A histogram of latencies for inference server\"; seldon_model_infer_total, seldon_cache_*, seldon_load_model_counter …)"
	srcModelMesh = "kserve/modelmesh src/main/java/com/ibm/watson/modelmesh/Metric.java (modelmesh_req_queue_delay_milliseconds \"Time spent in inference request queue\", modelmesh_api_request_milliseconds \"External inference request time\", modelmesh_loading_queue_delay_milliseconds \"Time spent in model loading queue\")"
	srcLMDeploy  = "InternLM/lmdeploy lmdeploy/metrics/loggers.py (PrometheusStatLogger: lmdeploy:* metrics, adapted from vLLM's)"
	srcKdb       = "KxSystems/prometheus-kdb-exporter q/exporter.q (kdb_* metrics of a q process: sync/async/http/websocket/timer request counts, errors and durations, IPC handles, symbols)"
)

// exporterFamilies extend builtinFamilies with the exporters the corpus of
// real alerting rules uses. Vendor prefixes (no KPI) name a sector only;
// a family with Cands and no Sector is shared hardware, settled by other
// signals or by the alert's context labels.
var exporterFamilies = []family{
	// vLLM v1 engine names beyond those of builtinFamilies.
	// Running requests are concurrency, not queueing (the waiting ones,
	// vllm:num_requests_waiting, are QTS): the catalog has no concurrency
	// or serving-throughput KPI, so the gauge names only its sector.
	{Name: "vllm:num_requests_running", Sector: secGPU, Source: srcVLLM},
	{Name: "vllm:request_success", Sector: secGPU, Source: srcVLLM},
	// Gateway API inference extension and llm-d.
	{Name: "inference_objective_request_duration_seconds", Sector: secAPI, KPI: "P95 LAT", Source: srcLLMD},
	{Name: "inference_model_request_duration_seconds", Sector: secAPI, KPI: "P95 LAT", Source: srcGAIE},
	{Name: "inference_objective_request_error", Sector: secAPI, KPI: "ERR", Source: srcLLMD},
	{Name: "inference_model_request_error", Sector: secAPI, KPI: "ERR", Source: srcGAIE},
	{Name: "inference_objective_request", Sector: secAPI, Source: srcLLMD},
	{Name: "inference_model_request", Sector: secAPI, Source: srcGAIE},
	{Name: "inference_pool_average_queue_size", Sector: secPLB, KPI: "LQ", Source: srcGAIE},
	// The requests pending in each model server's queue, and those the
	// endpoint picker's flow control holds waiting for a backend (an
	// audit: a queue page merged with the pool's no-backends page).
	{Name: "inference_pool_per_pod_queue_size", Sector: secPLB, KPI: "LQ", Source: srcGAIE},
	{Name: "inference_extension_flow_control_queue_size", Sector: secPLB, KPI: "LQ", Source: srcGAIE},
	{Name: "inference_pool_average_kv_cache_utilization", Sector: secPStorage, KPI: "COCC", Source: srcGAIE},
	{Prefix: "inference_objective_", Sector: secAPI, Source: srcLLMD},
	{Prefix: "inference_model_", Sector: secAPI, Source: srcGAIE},
	{Prefix: "inference_pool_", Sector: secPLB, Source: srcGAIE},
	{Prefix: "inference_extension_", Sector: secPLB, Source: srcGAIE},
	// TF Serving, TensorRT-LLM behind Dynamo.
	{Name: ":tensorflow:serving:request_latency", Sector: secGPU, KPI: "E2E", Source: srcTFServing},
	{Name: ":tensorflow:serving:batching_session:queuing_latency", Sector: secGPU, KPI: "QTS", Source: srcTFServing},
	{Prefix: ":tensorflow:serving:", Sector: secGPU, Source: srcTFServing},
	{Prefix: "trtllm_", Sector: secGPU, Source: srcTRTLLMDynamo},
	// DCGM device counters are shared GPU hardware.
	{Prefix: "DCGM_FI_DEV_", Cands: []string{secGPU, secPretrain, secPost}, Source: srcDCGMDefault},
	// dcgm-exporter's own series (Xid errors counted over a window or in
	// total, GPU health, clock events): the same shared hardware.
	{Prefix: "DCGM_EXP_", Cands: []string{secGPU, secPretrain, secPost}, Source: srcDCGMExp},
	{Name: "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", Sector: secPretrain, KPI: "A2AS", Source: srcDCGMDefault, Hardware: true},
	// LiteLLM.
	{Name: "litellm_proxy_failed_requests_metric", Sector: secAPI, KPI: "ERR", Source: srcLiteLLMRules},
	// Redis, Memcached: vendor prefixes.
	{Prefix: "redis_", Sector: secPStorage, Source: srcRedisRules, Store: true},
	{Prefix: "memcached_", Sector: secPStorage, Source: srcMemcRules, Store: true},
	// Squid as a CDN/forward cache.
	{Prefix: "squid_", Sector: secCDN, Source: srcSquid},
	// NGINX: stub_status, VTS, knyar's Lua exporter.
	{Name: "nginx_http_requests", Sector: secAPI, KPI: "ERR", Source: srcKnyar},
	{Name: "nginx_http_request_duration_seconds", Sector: secAPI, KPI: "P95 LAT", Source: srcKnyar},
	{Name: "nginx_http_upstream_time_seconds", Sector: secPLB, KPI: "URT", Source: srcKnyar},
	{Name: "nginx_vts_upstream_response_seconds", Sector: secPLB, KPI: "URT", Source: srcNGINXVTS},
	{Name: "nginx_vts_upstream_requests", Sector: secAPI, KPI: "ERR", Source: srcNGINXVTS},
	{Name: "nginx_vts_server_requests", Sector: secAPI, KPI: "ERR", Source: srcNGINXVTS},
	{Prefix: "nginx_connections_", Sector: secPLB, KPI: "LQ", Source: srcNGINXStub},
	{Prefix: "nginx_", Sector: secPLB, Source: srcNGINXStub},
	{Prefix: "nginxplus_", Sector: secPLB, Source: srcNGINXPlus},
	// HAProxy: frontend, backend and server families.
	{Name: "haproxy_server_http_responses", Sector: secAPI, KPI: "ERR", Source: srcHAProxyRules},
	{Name: "haproxy_server_response_errors", Sector: secAPI, KPI: "ERR", Source: srcHAProxyRules},
	{Name: "haproxy_backend_current_sessions", Sector: secPLB, KPI: "LQ", Source: srcHAProxyRules},
	{Name: "haproxy_frontend_current_sessions", Sector: secPLB, KPI: "LQ", Source: srcHAProxyRules},
	{Name: "haproxy_backend_max_total_time_seconds", Sector: secPLB, KPI: "URT", Source: srcHAProxyRules},
	{Name: "haproxy_backend_max_response_time_seconds", Sector: secPLB, KPI: "URT", Source: srcHAProxyRules},
	{Prefix: "haproxy_", Sector: secPLB, Source: srcHAProxyRules},
	// Envoy.
	{Name: "envoy_http_downstream_rq_timeout", Sector: secAPI, KPI: "ERR", Source: srcEnvoyRules},
	{Name: "envoy_listener_downstream_cx_overflow", Sector: secPLB, KPI: "LQ", Source: srcEnvoyRules},
	{Prefix: "envoy_", Sector: secPLB, Source: srcEnvoyRules},
	// Traefik, F5 BIG-IP.
	{Name: "traefik_service_requests", Sector: secAPI, KPI: "ERR", Source: srcTraefik},
	{Name: "traefik_service_request_duration_seconds", Sector: secPLB, KPI: "URT", Source: srcTraefik},
	// Traefik v1 named them by backend (awesome-prometheus-alerts' v1 rules).
	{Name: "traefik_backend_requests", Sector: secAPI, KPI: "ERR", Source: srcTraefikV1},
	{Name: "traefik_backend_request_duration_seconds", Sector: secPLB, KPI: "URT", Source: srcTraefikV1},
	{Prefix: "traefik_", Sector: secPLB, Source: srcTraefik},
	{Prefix: "bigip_", Sector: secPLB, Source: srcF5},
	// Cloudflare as the CDN edge.
	{Name: "cloudflare_zone_requests_cached", Sector: secCDN, KPI: "CHR", Source: srcCloudflare},
	{Name: "cloudflare_zone_bandwidth_cached", Sector: secCDN, KPI: "OOR", Source: srcCloudflare},
	{Prefix: "cloudflare_", Sector: secCDN, Source: srcCloudflare},
	// Fastly's real-time stats and CloudFront through YACE as the CDN
	// edge: hits and misses are the hit ratio, origin fetches the origin
	// offload, a miss's duration the origin's TTFB.
	{Name: "fastly_rt_hits", Sector: secCDN, KPI: "CHR", Source: srcFastly},
	{Name: "fastly_rt_miss", Sector: secCDN, KPI: "CHR", Source: srcFastly},
	{Name: "fastly_rt_origin_fetches", Sector: secCDN, KPI: "OOR", Source: srcFastly},
	{Name: "fastly_rt_miss_duration_seconds", Sector: secCDN, KPI: "OTTFB", Source: srcFastly},
	{Prefix: "fastly_rt_", Sector: secCDN, Source: srcFastly},
	{Name: "aws_cloudfront_cache_hit_rate_average", Sector: secCDN, KPI: "CHR", Source: srcCloudFront},
	{Name: "aws_cloudfront_origin_latency_average", Sector: secCDN, KPI: "OTTFB", Source: srcCloudFront},
	{Prefix: "aws_cloudfront_", Sector: secCDN, Source: srcCloudFront},
	// Feast's feature serving and ingestion (stale features served past
	// their max age, ingestion lag: feature freshness), Evidently's data
	// drift between reference and current data (training-serving skew).
	{Name: "feast_serving_stale_feature_count", Sector: secQuant, KPI: "FFL", Source: srcFeast},
	{Prefix: "feast_ingestion_feature_row_lag", Sector: secQuant, KPI: "FFL", Source: srcFeast},
	{Prefix: "feast_", Sector: secQuant, Source: srcFeast},
	{Prefix: "evidently:data_drift:", Sector: secQuant, KPI: "TSS", Source: srcEvidently},
	// A KVM guest's vCPU waiting in the host's run queue ("exposed to the
	// VM as steal time"): CPU ready, as vSphere's.
	{Name: "libvirt_domain_vcpu_delay_seconds", Sector: secVM, KPI: "RDY", Source: srcLibvirt},
	// Intel PCM's core counters on a trading host: LLC misses are MPKI's.
	{Name: "L3_Cache_Misses", Sector: secBare, KPI: "MPKI", Source: srcPCM},
	{Name: "Instructions_Retired_Any", Sector: secBare, Source: srcPCM},
	{Name: "Clock_Unhalted_Thread", Sector: secBare, Source: srcPCM},
	{Name: "SMI_Count", Sector: secBare, Source: srcPCM},
	// Kafka: exporter, lag exporter, JMX.
	{Name: "kafka_consumer_fetch_manager_records_lag", Sector: secBigData, KPI: "CLAG", Source: srcKafkaJMX},
	{Name: "kafka_consumer_fetch_manager_records_lag_max", Sector: secBigData, KPI: "CLAG", Source: srcKafkaJMX},
	{Prefix: "kafka_", Sector: secBigData, Source: srcKafkaRules},
	{Prefix: "strimzi_", Sector: secBigData, Source: srcStrimzi},
	// Redpanda, a Kafka-API broker: its public metrics (redpanda_…) and its
	// internal endpoint's (vectorized_…).
	{Name: "redpanda_kafka_consumer_group_lag_max", Sector: secBigData, KPI: "CLAG", Source: srcRedpanda},
	{Name: "redpanda_kafka_consumer_group_lag_sum", Sector: secBigData, KPI: "CLAG", Source: srcRedpanda},
	{Prefix: "redpanda_", Sector: secBigData, Source: srcRedpanda},
	{Prefix: "vectorized_", Sector: secBigData, Source: srcRedpanda},
	// Pulsar: a subscription's backlog is its consumer lag.
	{Name: "pulsar_subscription_back_log", Sector: secBigData, KPI: "CLAG", Source: srcPulsar},
	{Prefix: "pulsar_", Sector: secBigData, Source: srcPulsar},
	// kminion and Burrow, Kafka lag exporters: a group's lag per topic or
	// partition is consumer lag; kminion's end-to-end round trips and
	// Burrow's group status are the pipeline's health without KPI.
	{Name: "kminion_kafka_consumer_group_topic_lag", Sector: secBigData, KPI: "CLAG", Source: srcKminion},
	{Name: "kminion_kafka_consumer_group_topic_partition_lag", Sector: secBigData, KPI: "CLAG", Source: srcKminion},
	{Prefix: "kminion_", Sector: secBigData, Source: srcKminion},
	{Name: "burrow_kafka_consumer_lag", Sector: secBigData, KPI: "CLAG", Source: srcBurrow},
	{Name: "burrow_kafka_consumer_partition_lag", Sector: secBigData, KPI: "CLAG", Source: srcBurrow},
	{Prefix: "burrow_", Sector: secBigData, Source: srcBurrow},
	// Flink's FLIP-33 source metric (a Kafka source's records after the
	// consumer offset) is consumer lag: a prefix longer than flink_.
	{Prefix: "flink_taskmanager_job_task_operator_pendingRecords", Sector: secBigData, KPI: "CLAG", Source: srcFlinkSource},
	// Spark (PrometheusServlet), Flink, Airflow, Hadoop, MinIO, Ceph.
	{Prefix: "metrics_master_", Sector: secBigData, Source: srcSparkRules},
	{Prefix: "metrics_worker_", Sector: secBigData, Source: srcSparkRules},
	{Prefix: "metrics_executor_", Sector: secBigData, Source: srcSparkRules},
	{Name: "airflow_dagrun_duration_success", Sector: secBigData, KPI: "JDUR", Source: srcAirflow},
	{Name: "airflow_dagrun_duration_failed", Sector: secBigData, KPI: "JDUR", Source: srcAirflow},
	{Prefix: "airflow_", Sector: secBigData, Source: srcAirflow},
	{Prefix: "hadoop_", Sector: secBigData, Source: srcHadoopRules},
	{Prefix: "Hadoop_", Sector: secBigData, Source: srcHadoopRules},
	{Prefix: "minio_", Sector: secBigData, Source: srcMinioRules},
	{Prefix: "ceph_", Sector: secBigData, Source: srcCephRules},
	// node_exporter.
	{Name: "node_network_transmit_errs", Sector: secNet, KPI: "LOSS", Source: srcNodeRules, Corrupt: true},
	// The kernel's clock state (sync status, max error, frequency): clock
	// sync, no KPI. node_timex_offset_seconds (builtinFamilies) stays OWD.
	{Prefix: "node_timex_", Cands: clockSectors, Source: srcNodeRules},
	// VMware / vSphere: CPU ready and co-stop (guest steal is read from
	// node_cpu_seconds_total{mode="steal"}, see selectorSignals).
	{Prefix: "vmware_", Sector: secVM, Source: srcVMwareRules},
	{Prefix: "vsphere_vm_cpu_ready", Sector: secVM, KPI: "RDY", Source: srcVSphere},
	{Prefix: "vsphere_vm_cpu_costop", Sector: secVM, KPI: "CSTP", Source: srcVSphere},
	{Prefix: "vsphere_", Sector: secVM, Source: srcVSphere},
	// SNMP IF-MIB, BGP.
	{Name: "ifInErrors", Sector: secNet, KPI: "LOSS", Source: srcSNMPRules, Corrupt: true},
	{Name: "ifOutErrors", Sector: secNet, KPI: "LOSS", Source: srcSNMPRules, Corrupt: true},
	{Name: "ifInDiscards", Sector: secNet, KPI: "LOSS", Source: srcSNMPRules},
	{Name: "ifOutDiscards", Sector: secNet, KPI: "LOSS", Source: srcSNMPRules},
	{Prefix: "ifHC", Sector: secNet, Source: srcSNMPRules},
	{Name: "ifOperStatus", Sector: secNet, Source: srcSNMPRules},
	{Name: "ifAdminStatus", Sector: secNet, Source: srcSNMPRules},
	{Name: "ifSpeed", Sector: secNet, Source: srcSNMPRules},
	{Name: "sysUpTime", Sector: secNet, Source: srcSNMPRules},
	{Prefix: "bgpPeer", Sector: secNet, Source: srcBGP},
	// The same counters in OpenConfig's interface model through gNMI
	// (gnmic joins a path's elements with _: gnmi_interfaces_interface_
	// state_counters_in_errors), with Juniper's per-queue WRED drops.
	{Contains: "interface_state_counters_in_errors", Sector: secNet, KPI: "LOSS", Source: srcOCInterfaces, Corrupt: true},
	{Contains: "interface_state_counters_in_fcs_errors", Sector: secNet, KPI: "LOSS", Source: srcOCInterfaces, Corrupt: true},
	{Contains: "interface_state_counters_out_errors", Sector: secNet, KPI: "LOSS", Source: srcOCInterfaces, Corrupt: true},
	{Contains: "interface_state_counters_in_discards", Sector: secNet, KPI: "LOSS", Source: srcOCInterfaces},
	{Contains: "interface_state_counters_out_discards", Sector: secNet, KPI: "LOSS", Source: srcOCInterfaces},
	{Contains: "queue_red_drop", Sector: secNet, KPI: "LOSS", Source: srcOCInterfaces},
	// OpenConfig QoS queues (input, output, virtual output): packets and
	// octets a queue dropped on overrun, congestion as discards are.
	{Contains: "queues_queue_state_dropped_", Sector: secNet, KPI: "LOSS", Source: srcOCQoS},
	// telegraf's gNMI input names a measurement after its subscription
	// (ifcounters for the interface counters, see srcTelegrafGNMI) and its
	// Prometheus output joins it with the field: ifcounters_in_discards.
	{Name: "ifcounters_in_discards", Sector: secNet, KPI: "LOSS", Source: srcTelegrafGNMI},
	{Name: "ifcounters_out_discards", Sector: secNet, KPI: "LOSS", Source: srcTelegrafGNMI},
	{Name: "ifcounters_in_errors", Sector: secNet, KPI: "LOSS", Source: srcTelegrafGNMI, Corrupt: true},
	{Name: "ifcounters_out_errors", Sector: secNet, KPI: "LOSS", Source: srcTelegrafGNMI, Corrupt: true},
	// Solarflare NICs drop received packets for want of a free receive
	// descriptor when the host (Onload, the kernel) does not drain the
	// ring: an overrun, congestion rather than a bad frame.
	{Contains: "rx_nodesc_drop", Sector: secNet, KPI: "LOSS", Source: srcSFCNoDesc},
	{Contains: "interface_state_counters_", Sector: secNet, Source: srcOCInterfaces},
	{Contains: "bgp_neighbor_", Sector: secNet, Source: srcOCInterfaces},
	// SFP/DOM optics and FEC. Rx and Tx power (laser_rx_dbm,
	// laser_output_power_dbm) are no OSNR margin: the sector, no KPI. FEC
	// corrected counts are the errors before FEC (pre-FEC BER); the
	// uncorrectable ones (post-FEC) are what FEC could not correct.
	{Contains: "_dbm", Sector: secFiber, Source: srcOptics},
	{Contains: "pre_fec", Sector: secFiber, KPI: "Pre-FEC BER", Source: srcFEC},
	{Contains: "fec_corrected", Sector: secFiber, KPI: "Pre-FEC BER", Source: srcFEC},
	{Contains: "post_fec", Sector: secFiber, Source: srcFEC, PostFEC: true},
	{Contains: "fec_uncorrect", Sector: secFiber, Source: srcFEC, PostFEC: true},
	{Contains: "fec_", Sector: secFiber, Source: srcFEC},
	// OpenConfig terminal-device optics through gnmic
	// (…optical_channel_state_osnr_instant, …otn_state_q_value_instant):
	// OSNR is the OSNR margin's measure; the Q-factor is pre-FEC BER in dB;
	// chromatic and polarization-mode dispersion, input power and ESNR are
	// the span's optical health without KPI (OSNR margin is not ESNR).
	{Contains: "osnr", Sector: secFiber, KPI: "OSNRM", Source: srcOpenConfig},
	{Contains: "otn_state_q_value", Sector: secFiber, KPI: "Pre-FEC BER", Source: srcOpenConfig},
	{Contains: "chromatic_dispersion", Sector: secFiber, Source: srcOpenConfig},
	{Contains: "polarization_mode_dispersion", Sector: secFiber, Source: srcOpenConfig},
	{Contains: "optical_channel_state_", Sector: secFiber, Source: srcOpenConfig},
	{Contains: "otn_state_", Sector: secFiber, Source: srcOpenConfig},
	// OpenConfig optical amplifiers (EDFA, Raman) and their supervisory
	// channels through gnmic: input and output power, gain, tilt are the
	// line system's optical health without KPI.
	{Contains: "optical_amplifier_", Sector: secFiber, Source: srcOCAmp},
	// RoCE congestion as other exporters spell the NIC's counters
	// (node_ethtool_np_cnp_sent, …np_ecn_marked_roce_packets…): ECN marks
	// and CNPs are ECN, out-of-sequence packets loss; mlx5's per-priority
	// PFC pause counters (rx_prio3_pause, tx_prio3_pause, their _duration)
	// are the lossless fabric's backpressure (ECN, as the word "PFC").
	{Contains: "np_ecn_marked_roce_packets", Sector: secNet, KPI: "ECN", Source: srcRoCEEthtool},
	{Contains: "np_cnp_", Sector: secNet, KPI: "ECN", Source: srcRoCEEthtool},
	{Prefix: "node_ethtool_out_of_sequence", Sector: secNet, KPI: "LOSS", Source: srcRoCEEthtool},
	{Contains: "prio0_pause", Sector: secNet, KPI: "ECN", Source: srcRoCEEthtool},
	{Contains: "prio1_pause", Sector: secNet, KPI: "ECN", Source: srcRoCEEthtool},
	{Contains: "prio2_pause", Sector: secNet, KPI: "ECN", Source: srcRoCEEthtool},
	{Contains: "prio3_pause", Sector: secNet, KPI: "ECN", Source: srcRoCEEthtool},
	{Contains: "prio4_pause", Sector: secNet, KPI: "ECN", Source: srcRoCEEthtool},
	{Contains: "prio5_pause", Sector: secNet, KPI: "ECN", Source: srcRoCEEthtool},
	{Contains: "prio6_pause", Sector: secNet, KPI: "ECN", Source: srcRoCEEthtool},
	{Contains: "prio7_pause", Sector: secNet, KPI: "ECN", Source: srcRoCEEthtool},
	// PTP.
	{Prefix: "openshift_ptp_", Cands: clockSectors, Source: srcPTPLinux},
	{Contains: "ptp_offset", Cands: clockSectors, Source: srcPTPSwitch}, // switchmetrics_ptp_offset_ns, ptp_offset_ns
	// vSphere through vCenter: hosts, VMs and datastores.
	{Prefix: "vcenter_", Sector: secVM, Source: srcVCenter},
	// Telemetry and alerting infrastructure: tracing, the OpenTelemetry
	// Collector, dashboards, kube-state-metrics' own health, the config
	// reloader of Prometheus and Alertmanager pods, Prometheus' ALERTS.
	{Prefix: "jaeger_", Sector: secSLO, Source: srcJaeger},
	{Prefix: "otelcol_", Sector: secSLO, Source: srcOtelcol},
	{Prefix: "grafana_", Sector: secSLO, Source: srcGrafana},
	{Prefix: "kube_state_metrics_", Sector: secSLO, Source: srcKSM},
	{Name: "reloader_last_reload_successful", Sector: secSLO, Source: srcReloader},
	{Name: "ALERTS", Sector: secSLO, Source: srcAlerts},
	// slo-generator's exported SLI and its target: SLO tooling; which SLI
	// (availability, latency) the name does not say, so no KPI. Its
	// error_budget_burn_rate is …error_budget… (EBR).
	{Name: "sli_measurement", Sector: secSLO, Source: srcSLOGen},
	{Name: "slo_target", Sector: secSLO, Source: srcSLOGen},
	// An exporter's own scrape of its target (ipmi_exporter's
	// ipmi_scrape_duration_seconds) is scrape health, as Prometheus'
	// scrape_duration_seconds is: monitoring, not the target's latency.
	// A vendor prefix matches first (redis_exporter_scrape_duration_seconds
	// stays Redis), and so does snmp_scrape_ below.
	{Contains: "_scrape_duration_seconds", Sector: secSLO, KPI: "UP", Source: srcScrape},
	// snmp_exporter's self-metrics of its scrape (its duration, PDUs
	// returned, walk durations): the exporter's scrape, as above.
	{Prefix: "snmp_scrape_", Sector: secSLO, KPI: "UP", Source: srcSNMPSelf},
	// The rest of the monitoring stack: Mimir and Cortex, Tempo, Promtail,
	// blackbox_exporter's own health (its probe_* series are the target's).
	// Vendor prefixes, no KPI: Mimir's query-scheduler queue
	// (cortex_query_scheduler_queue_length) is not an LLM queue.
	{Prefix: "cortex_", Sector: secSLO, Source: srcMimir},
	{Prefix: "tempo_", Sector: secSLO, Source: srcTempo},
	{Prefix: "tempodb_", Sector: secSLO, Source: srcTempo},
	{Prefix: "promtail_", Sector: secSLO, Source: srcPromtail},
	{Prefix: "blackbox_exporter_", Sector: secSLO, Source: srcBlackboxSelf},
	// SQL engines over big data: Presto (its queued tasks are not an LLM
	// queue) and ClickHouse. Vendor prefixes, no KPI.
	{Prefix: "presto_", Sector: secBigData, Source: srcPresto},
	{Prefix: "ClickHouse", Sector: secBigData, Source: srcClickHouse},
	// Serving frameworks: model servers are GPU serving (as Triton and TF
	// Serving); their proxies' HTTP/gRPC error responses are the API's
	// error rate (as a load balancer's); KV-cache occupancy, prefix reuse and a KV
	// cache tier's hit ratio are what vLLM's equivalents are. Read by the
	// names' own words, as vLLM's: waiting requests and queue sizes are
	// queue time, running or in-flight requests concurrency (no KPI), a
	// step or processing latency compute time (no KPI).
	//
	// KServe's model server: the latency of each step of a request. None
	// is end-to-end (predict leaves out pre/post-processing) nor queueing.
	// None generates tokens: predict times the v1/v2 predict call
	// (kserve/kserve python/kserve/kserve/model.py, PREDICT_HIST_TIME;
	// text generation has its OpenAI endpoints), so no prefill-decode
	// (family.NoDecode).
	{Name: "request_preprocess_seconds", Sector: secGPU, Source: srcKServe, NoDecode: true},
	{Name: "request_predict_seconds", Sector: secGPU, Source: srcKServe, NoDecode: true},
	{Name: "request_postprocess_seconds", Sector: secGPU, Source: srcKServe, NoDecode: true},
	{Name: "request_explain_seconds", Sector: secGPU, Source: srcKServe, NoDecode: true},
	// Ray Serve. Requests waiting for a replica are queue time; the HTTP
	// and gRPC proxies' latency is end to end ("measured from the Serve
	// HTTP proxy"); a replica's processing latency is its compute time;
	// ongoing, processing and router request counts are concurrency.
	{Name: "ray_serve_deployment_queued_queries", Sector: secGPU, KPI: "QTS", Source: srcRayServe},
	{Name: "ray_serve_replica_queued_queries", Sector: secGPU, KPI: "QTS", Source: srcRayServe},
	{Name: "ray_serve_deployment_queuing_latency_ms", Sector: secGPU, KPI: "QTS", Source: srcRayServe},
	{Name: "ray_serve_http_request_latency_ms", Sector: secGPU, KPI: "E2E", Source: srcRayServe},
	{Name: "ray_serve_grpc_request_latency_ms", Sector: secGPU, KPI: "E2E", Source: srcRayServe},
	{Name: "ray_serve_deployment_processing_latency_ms", Sector: secGPU, Source: srcRayServe},
	{Name: "ray_serve_num_http_error_requests", Sector: secAPI, KPI: "ERR", Source: srcRayServe},
	{Name: "ray_serve_num_grpc_error_requests", Sector: secAPI, KPI: "ERR", Source: srcRayServe},
	{Name: "ray_serve_num_deployment_http_error_requests", Sector: secAPI, KPI: "ERR", Source: srcRayServe},
	{Name: "ray_serve_num_deployment_grpc_error_requests", Sector: secAPI, KPI: "ERR", Source: srcRayServe},
	{Prefix: "ray_serve_", Sector: secGPU, Source: srcRayServe},
	// Ray's node agent (CPU, GPU, memory of a Ray node) and its GCS
	// (control store) serve model serving and training alike: candidate
	// sectors, settled by context, as DCGM's device counters. The GCS by
	// exact names: KubeRay's ray_gcs_error_budget_<window> recording rules
	// are error-budget burn (…error_budget…), which a ray_gcs_ prefix
	// would shadow.
	{Prefix: "ray_node_", Cands: []string{secGPU, secPretrain, secPost}, Source: srcRayNode},
	{Name: "ray_gcs_storage_operation_latency_ms", Cands: []string{secGPU, secPretrain, secPost}, Source: srcRayGCS},
	{Name: "ray_gcs_storage_operation_count", Cands: []string{secGPU, secPretrain, secPost}, Source: srcRayGCS},
	{Name: "ray_gcs_update_resource_usage_time", Cands: []string{secGPU, secPretrain, secPost}, Source: srcRayGCS},
	// LMCache, the KV cache storage tier (lmcache: stays its sector):
	// retrieve and lookup hit rates and hit tokens are its hit ratio,
	// local and remote cache usage its occupancy, retrieve, store and
	// lookup times its latency, CPU-backend evictions its eviction rate.
	{Name: "lmcache:retrieve_hit_rate", Sector: secPStorage, KPI: "CHR", Source: srcLMCacheRef},
	{Name: "lmcache:lookup_hit_rate", Sector: secPStorage, KPI: "CHR", Source: srcLMCacheRef},
	{Name: "lmcache:request_cache_hit_rate", Sector: secPStorage, KPI: "CHR", Source: srcLMCacheRef},
	{Name: "lmcache:num_hit_tokens", Sector: secPStorage, KPI: "CHR", Source: srcLMCacheRef},
	{Name: "lmcache:num_requested_tokens", Sector: secPStorage, KPI: "CHR", Source: srcLMCacheRef},
	{Name: "lmcache:num_lookup_hits", Sector: secPStorage, KPI: "CHR", Source: srcLMCacheRef},
	{Name: "lmcache:num_lookup_tokens", Sector: secPStorage, KPI: "CHR", Source: srcLMCacheRef},
	{Name: "lmcache:local_cache_usage", Sector: secPStorage, KPI: "COCC", Source: srcLMCacheRef},
	{Name: "lmcache:remote_cache_usage", Sector: secPStorage, KPI: "COCC", Source: srcLMCacheRef},
	{Name: "lmcache:local_storage_usage", Sector: secPStorage, KPI: "COCC", Source: srcLMCacheRef},
	{Name: "lmcache:time_to_retrieve", Sector: secPStorage, KPI: "CLAT", Source: srcLMCacheRef},
	{Name: "lmcache:time_to_store", Sector: secPStorage, KPI: "CLAT", Source: srcLMCacheRef},
	{Name: "lmcache:time_to_lookup", Sector: secPStorage, KPI: "CLAT", Source: srcLMCacheRef},
	{Name: "lmcache:local_cpu_evict_count", Sector: secPStorage, KPI: "EVR", Source: srcLMCacheRef},
	{Name: "lmcache:local_cpu_evict_keys_count", Sector: secPStorage, KPI: "EVR", Source: srcLMCacheRef},
	// TensorRT-LLM (trtllm-serve, and Dynamo's pass-through): its names
	// follow vLLM's. Block reuse is prefix reuse (PCHR); KV cache
	// utilization and blocks in use are occupancy.
	{Name: "trtllm_time_to_first_token_seconds", Sector: secGPU, KPI: "TTFT", Source: srcTRTLLMServe},
	{Name: "trtllm_time_per_output_token_seconds", Sector: secGPU, KPI: "TPOT", Source: srcTRTLLMServe},
	{Name: "trtllm_e2e_request_latency_seconds", Sector: secGPU, KPI: "E2E", Source: srcTRTLLMServe},
	{Name: "trtllm_request_queue_time_seconds", Sector: secGPU, KPI: "QTS", Source: srcTRTLLMServe},
	{Name: "trtllm_num_requests_waiting", Sector: secGPU, KPI: "QTS", Source: srcTRTLLMServe},
	{Name: "trtllm_request_prefill_time_seconds", Sector: secGPU, Source: srcTRTLLMServe, Prefill: true},
	{Name: "trtllm_request_decode_time_seconds", Sector: secGPU, Source: srcTRTLLMServe, Decode: true},
	{Name: "trtllm_kv_cache_hit_rate", Sector: secPCompute, KPI: "PCHR", Source: srcTRTLLMServe},
	{Name: "trtllm_kv_cache_iter_reuse_rate", Sector: secPCompute, KPI: "PCHR", Source: srcTRTLLMServe},
	{Name: "trtllm_kv_cache_reused_blocks", Sector: secPCompute, KPI: "PCHR", Source: srcTRTLLMServe},
	{Name: "trtllm_kv_cache_missed_blocks", Sector: secPCompute, KPI: "PCHR", Source: srcTRTLLMServe},
	{Name: "trtllm_prompt_cached_tokens", Sector: secPCompute, KPI: "CTR", Source: srcTRTLLMServe},
	{Name: "trtllm_kv_cache_utilization", Sector: secPStorage, KPI: "COCC", Source: srcTRTLLMServe},
	{Name: "trtllm_kv_cache_host_utilization", Sector: secPStorage, KPI: "COCC", Source: srcTRTLLMServe},
	{Name: "trtllm_kv_cache_used_blocks", Sector: secPStorage, KPI: "COCC", Source: srcTRTLLMServe},
	{Name: "trtllm_kv_cache_free_blocks", Sector: secPStorage, KPI: "COCC", Source: srcTRTLLMServe},
	{Name: "nv_trt_llm_kv_cache_block_metrics", Sector: secPStorage, KPI: "COCC", Source: srcTRTLLMBlocks},
	// NVIDIA Dynamo: the frontend's TTFT, ITL and request duration, its
	// queued requests (waiting for a first token); inflight requests are
	// concurrency. The workers' kvstats are vLLM's KV usage and prefix
	// hit rate.
	{Name: "dynamo_frontend_time_to_first_token_seconds", Sector: secGPU, KPI: "TTFT", Source: srcDynamo},
	{Name: "dynamo_frontend_inter_token_latency_seconds", Sector: secGPU, KPI: "ITL", Source: srcDynamo},
	{Name: "dynamo_frontend_request_duration_seconds", Sector: secGPU, KPI: "E2E", Source: srcDynamo},
	{Name: "dynamo_frontend_queued_requests", Sector: secGPU, KPI: "QTS", Source: srcDynamo},
	{Name: "dynamo_component_kvstats_gpu_cache_usage_percent", Sector: secPStorage, KPI: "COCC", Source: srcDynamo},
	{Name: "dynamo_component_kvstats_active_blocks", Sector: secPStorage, KPI: "COCC", Source: srcDynamo},
	{Name: "dynamo_component_kvstats_gpu_prefix_cache_hit_rate", Sector: secPCompute, KPI: "PCHR", Source: srcDynamo},
	// Current names: the workers' KV stats without the kvstats_ level, the
	// KV router's TTFT and ITL (dynamo_component_router_*), its pending
	// queue (requests waiting for a worker: QTS, as the frontend's queued
	// requests). The frontend's kv_hit_rate is the router's predicted
	// prefix overlap for the worker it picked: the hit rate of a
	// cache-aware load balancer (RCHR, as llm-d's endpoint picker is the
	// prompt-cache LB); its cached tokens per request are CTR. The KV
	// router's own overhead (dynamo_router_*) and the standalone KV
	// indexer it queries (dynamo_kvindexer_*) are that load balancer.
	{Name: "dynamo_component_gpu_cache_usage_percent", Sector: secPStorage, KPI: "COCC", Source: srcDynamoNames},
	{Name: "dynamo_component_total_blocks", Sector: secPStorage, KPI: "COCC", Source: srcDynamoNames},
	{Name: "dynamo_component_router_time_to_first_token_seconds", Sector: secGPU, KPI: "TTFT", Source: srcDynamoNames},
	{Name: "dynamo_component_router_inter_token_latency_seconds", Sector: secGPU, KPI: "ITL", Source: srcDynamoNames},
	{Name: "dynamo_frontend_router_queue_pending_requests", Sector: secGPU, KPI: "QTS", Source: srcDynamoNames},
	{Name: "dynamo_frontend_kv_hit_rate", Sector: secPLB, KPI: "RCHR", Source: srcDynamoNames},
	{Name: "dynamo_frontend_cached_tokens", Sector: secPCompute, KPI: "CTR", Source: srcDynamoNames},
	{Prefix: "dynamo_frontend_", Sector: secGPU, Source: srcDynamo},
	{Prefix: "dynamo_component_", Sector: secGPU, Source: srcDynamo},
	{Prefix: "dynamo_router_", Sector: secPLB, Source: srcDynamoNames},
	{Prefix: "dynamo_kvindexer_", Sector: secPLB, Source: srcDynamoNames},
	// Dynamo's KV block manager moves KV blocks between GPU, host and disk
	// tiers: prompt-cache storage; its tiers' hit rates are CHR.
	{Name: "kvbm_host_cache_hit_rate", Sector: secPStorage, KPI: "CHR", Source: srcDynamoKVBM},
	{Name: "kvbm_disk_cache_hit_rate", Sector: secPStorage, KPI: "CHR", Source: srcDynamoKVBM},
	{Prefix: "kvbm_", Sector: secPStorage, Source: srcDynamoKVBM},
	// llama.cpp's server: requests deferred for want of a free slot wait
	// (QTS); its KV cache usage is occupancy. Prompt and generation
	// throughput, busy slots per decode call and the cumulative prompt and
	// generation times are GPU serving without KPI.
	{Name: "llamacpp:requests_deferred", Sector: secGPU, KPI: "QTS", Source: srcLlamaCpp},
	{Name: "llamacpp:kv_cache_usage_ratio", Sector: secPStorage, KPI: "COCC", Source: srcLlamaCpp},
	{Prefix: "llamacpp:", Sector: secGPU, Source: srcLlamaCpp},
	// NVIDIA NIM for LLMs exports the engine's names without a namespace.
	{Name: "time_to_first_token_seconds", Sector: secGPU, KPI: "TTFT", Source: srcNIM},
	{Name: "time_per_output_token_seconds", Sector: secGPU, KPI: "TPOT", Source: srcNIM},
	{Name: "e2e_request_latency_seconds", Sector: secGPU, KPI: "E2E", Source: srcNIM},
	{Name: "num_requests_waiting", Sector: secGPU, KPI: "QTS", Source: srcNIM},
	{Name: "num_requests_running", Sector: secGPU, Source: srcNIM},
	{Name: "gpu_cache_usage_perc", Sector: secPStorage, KPI: "COCC", Source: srcNIM},
	// llm-d's Endpoint Picker under its own prefix: its request metrics
	// are those of inference_objective_* (the API's), the rest the
	// endpoint picker's (the prompt-cache load balancer, as
	// inference_extension_*).
	{Name: "llm_d_epp_request_duration_seconds", Sector: secAPI, KPI: "P95 LAT", Source: srcLLMDRouter},
	{Name: "llm_d_epp_request_error", Sector: secAPI, KPI: "ERR", Source: srcLLMDRouter},
	{Name: "llm_d_epp_request", Sector: secAPI, Source: srcLLMDRouter},
	{Name: "llm_d_epp_flow_control_queue_size", Sector: secPLB, KPI: "LQ", Source: srcLLMDRouter},
	{Prefix: "llm_d_epp_", Sector: secPLB, Source: srcLLMDRouter},
	// TorchServe: cumulative queue and inference latency counters (the
	// inference latency runs from the request's arrival to its response).
	{Name: "ts_queue_latency_microseconds", Sector: secGPU, KPI: "QTS", Source: srcTorchServe},
	{Name: "ts_inference_latency_microseconds", Sector: secGPU, KPI: "E2E", Source: srcTorchServe},
	{Name: "ts_inference_requests", Sector: secGPU, Source: srcTorchServe},
	// MLServer (Seldon): its adaptive-batching and inference-worker
	// queues. Failed inference requests are the model server's own
	// failures, as a deployment's exceptions (ray_serve_deployment_error_counter)
	// or vLLM's aborts: GPU serving without KPI, class errors from the
	// alertname; only HTTP and gRPC responses are the API's ERR.
	{Name: "batch_request_queue", Sector: secGPU, KPI: "QTS", Source: srcMLServer},
	{Name: "parallel_request_queue", Sector: secGPU, KPI: "QTS", Source: srcMLServer},
	{Name: "model_infer_request_failure", Sector: secGPU, Source: srcMLServer},
	{Name: "model_infer_request_success", Sector: secGPU, Source: srcMLServer},
	// BentoML (and OpenLLM, which serves through it).
	{Name: "bentoml_service_request_duration_seconds", Sector: secGPU, KPI: "E2E", Source: srcBentoML},
	{Prefix: "bentoml_", Sector: secGPU, Source: srcBentoML},
	// AI gateways (audit GATEWAYS2): the provider's latency as the gateway
	// sees it is the upstream's service time (UST, as LiteLLM's); tokens,
	// costs and requests name the API without KPI. Never a vendor's whole
	// prefix: kong_http_requests_total and apisix_http_status are any
	// API's traffic, not an LLM's.
	//
	// Higress' ai-statistics plugin: cumulative first-token and service
	// durations (ms), divided by their …_llm_stream_duration_count and
	// …_llm_duration_count counters (no KPI: counts).
	{Name: "route_upstream_model_consumer_metric_llm_first_token_duration", Sector: secAPI, KPI: "UST", Source: srcHigress},
	{Name: "route_upstream_model_consumer_metric_llm_service_duration", Sector: secAPI, KPI: "UST", Source: srcHigress},
	{Prefix: "route_upstream_model_consumer_metric_", Sector: secAPI, Source: srcHigress},
	// APISIX's ai-proxy: its LLM latency, total or to the first token.
	{Name: "apisix_llm_latency", Sector: secAPI, KPI: "UST", Source: srcAPISIX},
	{Prefix: "apisix_llm_", Sector: secAPI, Source: srcAPISIX},
	// Kong AI Gateway: the provider's latency; its semantic cache (whole
	// responses, as LiteLLM's cache) is prompt-cache storage, whose fetch
	// and embeddings latencies are the cache's (CLAT). Its requests read
	// with cache_status="hit" are the cache's hits (selectorSignals).
	{Name: "kong_ai_llm_provider_latency_ms", Sector: secAPI, KPI: "UST", Source: srcKongAI},
	{Prefix: "kong_ai_llm_", Sector: secAPI, Source: srcKongAI},
	{Name: "kong_ai_cache_fetch_latency", Sector: secPStorage, KPI: "CLAT", Source: srcKongAI},
	{Name: "kong_ai_cache_embeddings_latency", Sector: secPStorage, KPI: "CLAT", Source: srcKongAI},
	{Prefix: "kong_ai_cache_", Sector: secPStorage, Source: srcKongAI},
	// Portkey's gateway: its own request duration is the API's latency as
	// clients see it (P95 LAT, as LiteLLM's total latency). Its unprefixed
	// request_count and llm_request_duration_milliseconds are too generic
	// to name it.
	{Name: "portkey_request_duration_milliseconds", Sector: secAPI, KPI: "P95 LAT", Source: srcPortkey},
	{Prefix: "portkey_", Sector: secAPI, Source: srcPortkey},
	// Hugging Face Text Embeddings Inference: an embeddings (or
	// classifier) server, one forward pass per batch and no decode
	// (family.NoDecode). Queue durations are queue time, request durations
	// end to end; inference and tokenization durations are neither
	// queueing nor a phase of generation (NoSplit). Exact names and the
	// te_ prefixes of its own families only: te_ alone is too short.
	{Name: "te_request_queue_duration", Sector: secGPU, KPI: "QTS", Source: srcTEI, NoDecode: true},
	{Name: "te_embed_queue_duration", Sector: secGPU, KPI: "QTS", Source: srcTEI, NoDecode: true},
	{Name: "te_predict_queue_duration", Sector: secGPU, KPI: "QTS", Source: srcTEI, NoDecode: true},
	{Name: "te_request_duration", Sector: secGPU, KPI: "E2E", Source: srcTEI, NoDecode: true},
	{Name: "te_embed_duration", Sector: secGPU, KPI: "E2E", Source: srcTEI, NoDecode: true},
	{Name: "te_predict_duration", Sector: secGPU, KPI: "E2E", Source: srcTEI, NoDecode: true},
	{Name: "te_request_inference_duration", Sector: secGPU, Source: srcTEI, NoSplit: true, NoDecode: true},
	{Name: "te_embed_inference_duration", Sector: secGPU, Source: srcTEI, NoSplit: true, NoDecode: true},
	{Name: "te_predict_inference_duration", Sector: secGPU, Source: srcTEI, NoSplit: true, NoDecode: true},
	{Name: "te_request_tokenization_duration", Sector: secGPU, Source: srcTEI, NoSplit: true, NoDecode: true},
	{Name: "te_embed_tokenization_duration", Sector: secGPU, Source: srcTEI, NoSplit: true, NoDecode: true},
	{Name: "te_predict_tokenization_duration", Sector: secGPU, Source: srcTEI, NoSplit: true, NoDecode: true},
	{Prefix: "te_request_", Sector: secGPU, Source: srcTEI, NoDecode: true},
	{Prefix: "te_embed_", Sector: secGPU, Source: srcTEI, NoDecode: true},
	{Prefix: "te_predict_", Sector: secGPU, Source: srcTEI, NoDecode: true},
	{Prefix: "te_batch_", Sector: secGPU, Source: srcTEI, NoDecode: true},
	{Prefix: "te_queue_", Sector: secGPU, Source: srcTEI, NoDecode: true},
	// Seldon Core v2's agent: the inference server's request latency. Its
	// servers (MLServer, Triton) run predictive models for the most part,
	// and the latency is the whole predict call's, split into no prefill
	// or decode (family.NoDecode, as KServe's steps; an LLM's own server
	// metrics behind it keep theirs).
	{Name: "seldon_model_infer_api_seconds", Sector: secGPU, KPI: "E2E", Source: srcSeldon, NoDecode: true},
	{Prefix: "seldon_", Sector: secGPU, Source: srcSeldon, NoDecode: true},
	// KServe ModelMesh: inference requests wait in its request queue (QTS)
	// and take their external request time (E2E); the model loading
	// queue holds model loads, not requests: neither queue time nor a
	// phase of a request (NoSplit). ModelMesh packs many small predictive
	// models (family.NoDecode).
	{Name: "modelmesh_req_queue_delay_milliseconds", Sector: secGPU, KPI: "QTS", Source: srcModelMesh, NoDecode: true},
	{Name: "modelmesh_api_request_milliseconds", Sector: secGPU, KPI: "E2E", Source: srcModelMesh, NoDecode: true},
	{Name: "modelmesh_loading_queue_delay_milliseconds", Sector: secGPU, Source: srcModelMesh, NoSplit: true, NoDecode: true},
	{Prefix: "modelmesh_", Sector: secGPU, Source: srcModelMesh, NoDecode: true},
	// LMDeploy follows vLLM's names under lmdeploy:. Its exact names come
	// first (the index reads exact names before prefixes): its KV cache
	// usage stays the cache's occupancy, not GPU serving.
	{Name: "lmdeploy:time_to_first_token_seconds", Sector: secGPU, KPI: "TTFT", Source: srcLMDeploy},
	{Name: "lmdeploy:time_per_output_token_seconds", Sector: secGPU, KPI: "TPOT", Source: srcLMDeploy},
	{Name: "lmdeploy:iter_token_latency", Sector: secGPU, KPI: "ITL", Source: srcLMDeploy},
	{Name: "lmdeploy:e2e_request_latency_seconds", Sector: secGPU, KPI: "E2E", Source: srcLMDeploy},
	{Name: "lmdeploy:request_queue_time_seconds", Sector: secGPU, KPI: "QTS", Source: srcLMDeploy},
	{Name: "lmdeploy:num_requests_waiting", Sector: secGPU, KPI: "QTS", Source: srcLMDeploy},
	{Name: "lmdeploy:num_requests_running", Sector: secGPU, Source: srcLMDeploy},
	{Name: "lmdeploy:request_inference_time_seconds", Sector: secGPU, Source: srcLMDeploy},
	{Name: "lmdeploy:request_prefill_time_seconds", Sector: secGPU, Source: srcLMDeploy, Prefill: true},
	{Name: "lmdeploy:request_decode_time_seconds", Sector: secGPU, Source: srcLMDeploy, Decode: true},
	{Name: "lmdeploy:gpu_cache_usage_perc", Sector: secPStorage, KPI: "COCC", Source: srcLMDeploy},
	{Prefix: "lmdeploy:", Sector: secGPU, Source: srcLMDeploy},
	// kdb+ (KX's exporter): the tick database of a trading desk or the
	// research store of its quants — candidate sectors, settled by
	// context, without KPI. A q process's query latency is no network's:
	// no microburst hint (family.HostSide). Its unprefixed memory_* gauges
	// are too generic to name it.
	{Prefix: "kdb_", Cands: []string{secExec, secQuant}, Source: srcKdb, HostSide: true},
}
