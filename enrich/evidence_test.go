package enrich

import (
	"slices"
	"testing"

	"github.com/alertrouter/alertrouter/routing/alert"
)

func kpiOf(c alert.Classification) string {
	if len(c.KPIs) == 0 {
		return ""
	}
	return c.KPIs[0].ID
}

func hasSignal(c alert.Classification, kind, value string) bool {
	for _, s := range c.Signals {
		if s.Kind == kind && s.Value == value {
			return true
		}
	}
	return false
}

// TestEvidenceWeighedLikeAnSRE covers the rules of docs/classification.md
// that real alerting rules need: recording rules, up/absent by job, context
// labels as tie-breakers, weak words, exporter spellings.
func TestEvidenceWeighedLikeAnSRE(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	cases := []struct {
		name       string
		a          *alert.Alert
		sector     string
		kpi        string
		candidates []string
	}{
		{"a recording rule of a colon-named metric is read as that metric",
			newAlert(kv("alertname", "SlowStart"), nil, `model:vllm:time_to_first_token_seconds:p99 > 2`),
			"llm-inference-gpu", "TTFT", nil},
		{"a level:metric:operations name names its metric",
			newAlert(kv("alertname", "InstanceErrors"), nil, `instance:node_network_receive_errs:rate5m > 10`),
			"llm-inference-network", "LOSS", nil},
		{"a metric:operation name names its metric",
			newAlert(kv("alertname", "Lag"), nil, `kafka_consumergroup_lag:sum > 1e4`),
			"hpc-big-data", "CLAG", nil},
		{"up of a Hadoop job is Hadoop, not monitoring",
			newAlert(kv("alertname", "NameNodeDown"), nil, `up{job="hadoop-namenode"} == 0`),
			"hpc-big-data", "", nil},
		{"absent(up) of an SNMP job is the network",
			newAlert(kv("alertname", "TargetMissing"), nil, `absent(up{job=~"snmp-if-mib"})`),
			"llm-inference-network", "", nil},
		{"up of an unnamed job stays unknown, with scrape health as its KPI",
			newAlert(kv("alertname", "KubeAPIDown"), nil, `absent(up{job="apiserver"})`),
			alert.Unknown, "UP", []string{"slo-monitoring"}},
		{"up of Prometheus itself is monitoring",
			newAlert(kv("alertname", "PrometheusJobMissing"), nil, `absent(up{job="prometheus"})`),
			"slo-monitoring", "UP", nil},
		{"a single weak annotation word never beats unknown",
			newAlert(kv("alertname", "HighQueueSize", "name", "vllm-pool"), kv("summary", "High queue for pool vllm-pool"), `pool_queue_size > 50`),
			alert.Unknown, "", []string{"llm-inference-gpu"}},
		{"a word repeated in summary and description counts once",
			newAlert(kv("alertname", "LatencyHigh"), kv("summary", "redis slow", "description", "Redis is slow"), `x > 1`),
			alert.Unknown, "", []string{"llm-prompt-cache-storage"}},
		{"DCGM device counters alone leave the GPU sectors as candidates",
			newAlert(kv("alertname", "GPUTemperatureHigh", "namespace", "monitoring"), nil, `DCGM_FI_DEV_GPU_TEMP > 85`),
			alert.Unknown, "", []string{"llm-inference-gpu", "llm-training-pretrain-moe", "llm-training-posttrain-moe"}},
		{"a training pod breaks the tie between the GPU sectors",
			newAlert(kv("alertname", "GPUTemperatureHigh", "namespace", "training", "pod", "pretrain-moe-worker-3"), nil, `DCGM_FI_DEV_GPU_TEMP > 85`),
			"llm-training-pretrain-moe", "", nil},
		{"a serving container breaks the tie the other way",
			newAlert(kv("alertname", "GPUFramebufferFull", "container", "vllm"), nil, `DCGM_FI_DEV_FB_USED / (DCGM_FI_DEV_FB_USED + DCGM_FI_DEV_FB_FREE) > 0.95`),
			"llm-inference-gpu", "", nil},
		{"context labels alone name no sector",
			newAlert(kv("alertname", "KubePodCrashLooping", "namespace", "vllm", "pod", "vllm-0"), nil, `increase(kube_pod_container_status_restarts_total[10m]) > 3`),
			alert.Unknown, "", nil},
		{"the OpenTelemetry spelling of a vLLM metric",
			newAlert(kv("alertname", "QueueBuilding"), nil, `vllm_num_requests_waiting > 20`),
			"llm-inference-gpu", "QTS", nil},
		{"guest CPU steal is CPU ready",
			newAlert(kv("alertname", "NoisyNeighbor"), nil, `avg without (cpu) (rate(node_cpu_seconds_total{mode="steal"}[5m])) * 100 > 10`),
			"hft-vm-clusters", "RDY", nil},
		{"the inference gateway's pool queue is the load-balancer queue",
			newAlert(kv("alertname", "HighInferencePoolAvgQueueSize"), nil, `inference_pool_average_queue_size > 50`),
			"llm-prompt-cache-lb", "LQ", nil},
		{"the inference objective's latency is the API's",
			newAlert(kv("alertname", "HighInferenceRequestLatencyP99"), nil, `histogram_quantile(0.99, rate(inference_objective_request_duration_seconds_bucket[5m])) > 10`),
			"llm-inference-api", "P95 LAT", nil},
		{"a load balancer's 5xx ratio is the API error rate despite the vendor name",
			newAlert(kv("alertname", "HaproxyHighHttp5xxErrorRateServer"), kv("summary", "HAProxy high HTTP 5xx"), `sum by (server) (rate(haproxy_server_http_responses_total{code="5xx"}[1m])) / sum by (server) (rate(haproxy_server_http_responses_total[1m])) * 100 > 5`),
			"llm-inference-api", "ERR", nil},
		{"optics receive power is dark fiber, but no OSNR margin (audit K3)",
			newAlert(kv("alertname", "OpticsRxLow"), nil, `junos_interface_diagnostics_laser_rx_dbm < -18`),
			"hpc-dark-fiber", "", nil},
		{"a vendor prefix alone is enough to name its sector",
			newAlert(kv("alertname", "JobNotRunning"), nil, `flink_jobmanager_numRunningJobs == 0`),
			"hpc-big-data", "", nil},
		{"an end-to-end test alertname is not E2E latency",
			newAlert(kv("alertname", "AlertmanagerE2eDeadManSwitch"), nil, `vector(1)`),
			"slo-monitoring", "", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := c.Classify(tc.a)
			if got.Sector != tc.sector || kpiOf(got) != tc.kpi {
				t.Fatalf("got %s/%q (candidates %v), want %s/%q; signals %+v", got.Sector, kpiOf(got), got.Candidates, tc.sector, tc.kpi, got.Signals)
			}
			if tc.candidates != nil && !slices.Equal(got.Candidates, tc.candidates) {
				t.Errorf("candidates %v, want %v", got.Candidates, tc.candidates)
			}
		})
	}
}

func TestContextSignalsAreShown(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	got := c.Classify(newAlert(kv("alertname", "GPUTemperatureHigh", "namespace", "training", "pod", "pretrain-moe-worker-3"), nil, `DCGM_FI_DEV_GPU_TEMP > 85`))
	if !hasSignal(got, kindContext, "pretrain") {
		t.Errorf("no context signal for the pod's words: %+v", got.Signals)
	}
	got = c.Classify(newAlert(kv("alertname", "NameNodeDown"), nil, `up{job="hadoop-namenode"} == 0`))
	if !hasSignal(got, kindJob, "hadoop") {
		t.Errorf("no job signal: %+v", got.Signals)
	}
}
