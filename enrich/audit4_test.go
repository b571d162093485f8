package enrich

import (
	"slices"
	"testing"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// The tests of this file follow the fourth audit, which fired public rule
// files at the router and found wrong KPIs and hints and missing sectors.
// Its alerts are in testdata/corpus (irp-vllm-slo, grafana-jaeger-mixin,
// grafana-otelcol-observ-lib, grafana-vsphere-mixin-alerts,
// kp-kubestatemetrics, kp-grafana-rules, kp-prometheus-operator,
// kp-kube-prometheus); the others are the audit's own alerts.

// latencyHints are the hints a latency KPI of GPU serving brings.
var latencyHints = []string{HintQueueTime, HintPrefillDecode}

func hasAnyHint(cl alert.Classification, ids ...string) bool {
	for _, h := range cl.Hints {
		if slices.Contains(ids, h.ID) {
			return true
		}
	}
	return false
}

// A histogram's _count series counts requests: an error ratio over
// vllm:e2e_request_latency_seconds_count is no end-to-end latency.
func TestCountSeriesIsARequestCount(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	for _, name := range []string{"VLLMErrorBudgetBurnFast", "VLLMErrorBudgetBurnSlow"} {
		cl := c.Classify(corpusAlerts(t, "irp-vllm-slo.json", name)[0])
		if cl.Sector != "llm-inference-gpu" || len(cl.KPIs) != 0 || cl.IncidentClass != ClassBudgetBurn || hasAnyHint(cl, latencyHints...) {
			t.Errorf("%s: %s, want llm-inference-gpu without KPI, class budget-burn, no latency hint", name, describe(cl))
		}
	}
	cases := []struct {
		name, expr, kpi string
	}{
		{"an ingress error ratio over the duration histogram's _count",
			`sum(rate(nginx_ingress_controller_request_duration_seconds_count{status=~"5.."}[5m])) / sum(rate(nginx_ingress_controller_request_duration_seconds_count[5m])) > 0.05`, ""},
		{"a recording rule of the _count",
			`sum(rate(job:vllm:e2e_request_latency_seconds_count:rate5m[5m])) < 1`, ""},
		// The family's _sum with its _count is a mean latency; its _bucket
		// a quantile: they measure the latency.
		{"the _sum/_count mean", `rate(vllm:e2e_request_latency_seconds_sum[5m]) / rate(vllm:e2e_request_latency_seconds_count[5m]) > 5`, "E2E"},
		{"a quantile guarded by the _count",
			`histogram_quantile(0.99, sum by (le) (rate(vllm:e2e_request_latency_seconds_bucket[5m]))) > 10 and sum(rate(vllm:e2e_request_latency_seconds_count[5m])) > 1`, "E2E"},
		// A family whose own name ends in _count is no _count series.
		{"a family named …_count", `nv_inference_pending_request_count > 10`, "QTS"},
	}
	for _, tc := range cases {
		cl := c.Classify(newAlert(kv("alertname", "ServingAlert", "severity", "warning"), nil, tc.expr))
		if got := kpiOf(cl); got != tc.kpi {
			t.Errorf("%s: KPI %q, want %q: %s", tc.name, got, tc.kpi, describe(cl))
		}
	}
}

// absent() of a _count series asks whether its target still reports, as
// absent() of any series: its selector's job names the target. The _count
// rule took it first, and the job's words were lost.
func TestAbsentOfACountSeriesReadsItsJob(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	jobs := func(expr string) []string {
		var out []string
		for _, s := range c.Classify(newAlert(kv("alertname", "ServingMetricsAbsent", "severity", "warning"), nil, expr)).Signals {
			if s.Kind == kindJob {
				out = append(out, s.Value)
			}
		}
		return out
	}
	count, sum := jobs(`absent(vllm:e2e_request_latency_seconds_count{job="vllm"})`), jobs(`absent(vllm:e2e_request_latency_seconds_sum{job="vllm"})`)
	if len(sum) == 0 || !slices.Equal(count, sum) {
		t.Errorf("job signals of absent(…_count) %q, of absent(…_sum) %q: want the same, not none", count, sum)
	}
}

// A KPI named only by an annotation word does not beat the alertname: an
// alert about aborted requests whose prose blames TTFT is about errors.
func TestAnnotationKPIYieldsToTheAlertname(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	cl := c.Classify(corpusAlerts(t, "irp-vllm-slo.json", "VLLMHighAbortRate")[0])
	if cl.Sector != "llm-inference-gpu" || len(cl.KPIs) != 0 || cl.IncidentClass != ClassErrors || len(cl.Hints) != 0 {
		t.Errorf("VLLMHighAbortRate: %s, want llm-inference-gpu without KPI or hints, class errors", describe(cl))
	}
	if w, ok := signalWeight(cl, kindToken, "TTFT"); !ok || w != 0 {
		t.Errorf("VLLMHighAbortRate: the annotation's TTFT is not listed with weight 0: %s", describe(cl))
	}
	// An annotation KPI of the alertname's class still counts.
	cl = c.Classify(newAlert(kv("alertname", "VLLMSlowResponses", "severity", "warning"),
		kv("description", "TTFT p95 is 4.2s"), `sum(rate(vllm:request_success_total[5m])) > 0`))
	if kpiOf(cl) != "TTFT" || cl.IncidentClass != ClassLatency {
		t.Errorf("VLLMSlowResponses: %s, want TTFT (latency, as the alertname's Slow)", describe(cl))
	}
	// And so does one of an alertname without class.
	cl = c.Classify(newAlert(kv("alertname", "VLLMServing", "severity", "warning"),
		kv("description", "TTFT p95 is 4.2s"), `sum(rate(vllm:request_success_total[5m])) > 0`))
	if kpiOf(cl) != "TTFT" {
		t.Errorf("VLLMServing: %s, want TTFT", describe(cl))
	}
}

// Running requests are not waiting ones: no queue time, no scale-out hint.
func TestRunningRequestsAreNotQueueTime(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	for _, a := range []*alert.Alert{
		corpusAlerts(t, "irp-vllm-slo.json", "VLLMStartupFailing")[0],
		newAlert(kv("alertname", "ZeroThroughput", "severity", "critical", "job", "vllm", "instance", "10.1.2.3:8000"),
			kv("summary", "Zero throughput with active requests on gpu-node-3"),
			`rate(vllm:generation_tokens_total[5m]) == 0 and vllm:num_requests_running > 0`),
	} {
		cl := c.Classify(a)
		if cl.Sector != "llm-inference-gpu" || len(cl.KPIs) != 0 || hasAnyHint(cl, HintQueueTime) {
			t.Errorf("%s: %s, want llm-inference-gpu without KPI or queue-time hint", a.Labels["alertname"], describe(cl))
		}
	}
	cl := c.Classify(corpusAlerts(t, "irp-vllm-slo.json", "VLLMHighQueueDepth")[0])
	if kpiOf(cl) != "QTS" || !hasAnyHint(cl, HintQueueTime) {
		t.Errorf("VLLMHighQueueDepth (num_requests_waiting): %s, want QTS with the queue-time hint", describe(cl))
	}
}

// Compute time is not end-to-end latency: a Triton queue-time alert that
// divides by the compute time is queue time, and gets the queue-vs-compute
// hint only.
func TestComputeTimeIsNotEndToEnd(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	cl := c.Classify(newAlert(kv("alertname", "TritonHighQueueTime", "severity", "warning", "job", "triton", "model", "ensemble"),
		kv("summary", "Triton queue time high", "description", "Average queue time for model ensemble is 450ms (queue/compute ratio 3.1)"),
		`rate(nv_inference_queue_duration_us[1m])/clamp_min(rate(nv_inference_compute_infer_duration_us[1m]),1) > 1`))
	if !slices.Equal(kpiIDs(cl), []string{"QTS"}) || !slices.Equal(hintIDs(cl), []string{HintQueueTime}) {
		t.Errorf("TritonHighQueueTime: %s, want KPI QTS and the queue-time hint only", describe(cl))
	}
	for _, expr := range []string{
		`histogram_quantile(0.99, sum by (le) (rate(vllm:request_inference_time_seconds_bucket[5m]))) > 20`,
		`rate(nv_inference_compute_infer_duration_us[5m]) / rate(nv_inference_exec_count[5m]) > 50000`,
		`histogram_quantile(0.99, sum by (le) (rate(tgi_batch_forward_duration_bucket[5m]))) > 1`,
	} {
		cl := c.Classify(newAlert(kv("alertname", "ModelComputeSlow", "severity", "warning"), nil, expr))
		if cl.Sector != "llm-inference-gpu" || slices.Contains(kpiIDs(cl), "E2E") {
			t.Errorf("%s: %s, want llm-inference-gpu without E2E", expr, describe(cl))
		}
	}
}

// An exporter's own scrape is scrape health, not the target's latency.
func TestExporterScrapeIsMonitoring(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	cl := c.Classify(newAlert(kv("alertname", "SNMPExporterSlowScrape", "severity", "info", "job", "integrations/snmp", "instance", "core-sw-1"),
		kv("summary", "SNMP exporter scrape is slow.",
			"description", "SNMP exporter scrape of core-sw-1 is taking more than 50 seconds. Please check SNMP modules polled and that snmp_exporter is located on the same network as the SNMP target."),
		`min_over_time(snmp_scrape_duration_seconds{}[5m]) > 50`))
	if cl.Sector != "slo-monitoring" || hasAnyHint(cl, HintMicroburst) || cl.IncidentClass == ClassLatency {
		t.Errorf("SNMPExporterSlowScrape: %s, want slo-monitoring without the microburst hint", describe(cl))
	}
}

// The values of the labels that name where an alert fires (a job's name, a
// deployment, a node, a consumer group …), quoted in an annotation, are
// context, not words of their own.
func TestWorkloadLabelsAreContext(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	cl := c.Classify(newAlert(kv("alertname", "KubeJobFailed", "severity", "warning", "job", "kube-state-metrics", "namespace", "ml-batch",
		"job_name", "backtest-nightly-28391", "cluster", "prod-eu1"),
		kv("summary", "Job failed to complete.", "description", "Job ml-batch/backtest-nightly-28391 failed to complete. Removing failed job after investigation should clear this alert."),
		`kube_job_failed{job="kube-state-metrics"}  > 0`))
	if cl.Sector != alert.Unknown || len(cl.KPIs) != 0 || countedSectors(cl) != nil {
		t.Errorf("KubeJobFailed of backtest-nightly-28391: %s, want unknown without KPI", describe(cl))
	}
	for _, tc := range []struct{ label, value, text string }{
		{"job_name", "backtest-nightly-28391", "Job ml-batch/backtest-nightly-28391 is taking more than 12h 0m 0s to complete."},
		{"deployment", "vllm-llama3-70b", "Deployment serving/vllm-llama3-70b has not matched the expected number of replicas."},
		{"statefulset", "redis-cache", "StatefulSet serving/redis-cache has not matched the expected number of replicas."},
		{"daemonset", "roce-agent", "Pods of DaemonSet network/roce-agent are not scheduled."},
		{"cronjob", "spark-nightly", "CronJob batch/spark-nightly is taking more than 1h to complete."},
		{"persistentvolumeclaim", "kafka-data-0", "The PersistentVolume claimed by kafka-data-0 in Namespace data is only 3% free."},
		{"consumergroup", "flink-enrichment", "Consumer group flink-enrichment is not consuming."},
		{"node", "memcached-host-3", "memcached-host-3 is unschedulable for more than 1 hour."},
	} {
		cl := c.Classify(newAlert(kv("alertname", "KubeWorkloadProblem", "severity", "warning", "namespace", "prod", tc.label, tc.value),
			kv("description", tc.text), `kube_workload_status > 0`))
		if cl.Sector != alert.Unknown || countedSectors(cl) != nil {
			t.Errorf("%s=%q quoted: %s, want unknown with no counted signal", tc.label, tc.value, describe(cl))
		}
	}
	// As context, they break a tie: DCGM counters name every GPU sector.
	cl = c.Classify(newAlert(kv("alertname", "GPUTemperatureHigh", "deployment", "vllm-llama3-70b", "namespace", "serving"), nil, `DCGM_FI_DEV_GPU_TEMP > 85`))
	if cl.Sector != "llm-inference-gpu" || !hasSignal(cl, kindContext, "vllm") {
		t.Errorf("DCGM alert of deployment vllm-llama3-70b: %s, want llm-inference-gpu by the deployment's words", describe(cl))
	}
	// The scraping system as a context label is the observer: it breaks no tie.
	cl = c.Classify(newAlert(kv("alertname", "KubeletDown", "job", "kube-state-metrics"), nil, `absent(up{job="kubelet"} == 1)`))
	if cl.Sector != alert.Unknown {
		t.Errorf("absent(up{job=\"kubelet\"}) labelled job=\"kube-state-metrics\": %s, want unknown", describe(cl))
	}
}

// Telemetry and alerting infrastructure is monitoring, as Prometheus,
// Thanos and Loki are; vSphere is the VM clusters' sector, as VMware is.
func TestTelemetryInfraAndVSphereHaveTheirSectors(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	for file, sector := range map[string]string{
		"grafana-jaeger-mixin.json":         "slo-monitoring",
		"grafana-otelcol-observ-lib.json":   "slo-monitoring",
		"kp-kubestatemetrics.json":          "slo-monitoring",
		"kp-grafana-rules.json":             "slo-monitoring",
		"grafana-vsphere-mixin-alerts.json": "hft-vm-clusters",
	} {
		for _, a := range corpusAlerts(t, file, "") {
			if cl := c.Classify(a); cl.Sector != sector || len(cl.KPIs) != 0 || len(cl.Hints) != 0 {
				t.Errorf("%s %s: %s, want %s without KPI or hints", file, a.Labels["alertname"], describe(cl), sector)
			}
		}
	}
	for _, name := range []string{"ConfigReloaderSidecarErrors"} {
		if cl := c.Classify(corpusAlerts(t, "kp-prometheus-operator.json", name)[0]); cl.Sector != "slo-monitoring" {
			t.Errorf("%s: %s, want slo-monitoring", name, describe(cl))
		}
	}
	for _, name := range []string{"Watchdog", "InfoInhibitor"} {
		if cl := c.Classify(corpusAlerts(t, "kp-kube-prometheus.json", name)[0]); cl.Sector != "slo-monitoring" {
			t.Errorf("%s: %s, want slo-monitoring", name, describe(cl))
		}
	}
	// "Watchdog" alone is a generic word: a hardware watchdog is no alert pipeline.
	if cl := c.Classify(newAlert(kv("alertname", "IPMIWatchdogTimeout"), kv("summary", "BMC watchdog timer expired on gpu-node-3"), `ipmi_watchdog_timer_state == 1`)); cl.Sector != alert.Unknown {
		t.Errorf("IPMIWatchdogTimeout: %s, want unknown", describe(cl))
	}
}

// contextIndex is contextLabels' index.
func TestContextIndexMatchesContextLabels(t *testing.T) {
	for i, l := range contextLabels {
		if got := contextIndex(l); got != i {
			t.Errorf("contextIndex(%q) = %d, want %d", l, got, i)
		}
	}
	if contextIndex("cluster") != -1 || contextIndex("") != -1 {
		t.Error("contextIndex names a label that is no context label")
	}
}

// Message brokers and clocks the catalog lacked (a later audit's unseen
// rules: awesome-prometheus-alerts' Pulsar, Strimzi's Kafka Bridge rules,
// a switch exporter's PTP offset) were unknown, with no KPI or hint.
func TestPulsarStrimziAndPTPOffsets(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	cases := []struct {
		name, expr, sector, kpi string
	}{
		{"PulsarSubscriptionHighNumberOfBacklogEntries", `sum(pulsar_subscription_back_log) by (subscription) > 5000`, "hpc-big-data", "CLAG"},
		{"PulsarHighWriteLatency", `sum(pulsar_storage_write_latency_overflow > 0) by (topic)`, "hpc-big-data", ""},
		{"AvgProducerLatency", `strimzi_bridge_kafka_producer_request_latency_avg > 10`, "hpc-big-data", ""},
		// A PTP offset is clock sync, no one-way delay (audit K3): the
		// sector stays unknown among the sectors that watch clocks, without
		// KPI.
		{"SwitchPTPOffsetHigh", `abs(switchmetrics_ptp_offset_ns) > 1000`, "unknown", ""},
	}
	for _, tc := range cases {
		cl := c.Classify(newAlert(kv("alertname", tc.name, "severity", "warning"), nil, tc.expr))
		if cl.Sector != tc.sector || kpiOf(cl) != tc.kpi {
			t.Errorf("%s: %s, want %s with KPI %q", tc.name, describe(cl), tc.sector, tc.kpi)
		}
	}
}
