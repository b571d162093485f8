package enrich

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// Audit K3 fired SRE-written alerts of every sector at the router and read
// what the on-call got: sector texts that were not true of the alert. The
// alerts below are the audit's (/tmp/audit-K3/gen.py), labels, annotations
// and expressions as it sent them.

// hintText returns the text of hint id of cl, and whether it has it.
func hintText(cl alert.Classification, id string) (string, bool) {
	for _, h := range cl.Hints {
		if h.ID == id {
			return h.Text, true
		}
	}
	return "", false
}

// wantHint checks that cl has hint id whose text holds every want and
// none of the nots.
func wantHint(t *testing.T, name string, cl alert.Classification, id string, want, nots []string) {
	t.Helper()
	text, ok := hintText(cl, id)
	if !ok {
		t.Errorf("%s: no %s hint; %s, hints %+v", name, id, describe(cl), cl.Hints)
		return
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("%s: %s hint %q lacks %q", name, id, text, w)
		}
	}
	for _, n := range nots {
		if strings.Contains(text, n) {
			t.Errorf("%s: %s hint %q says %q", name, id, text, n)
		}
	}
}

// F2: a dark-fiber span that is down gets a span-down text, not "optical
// health degrades long before the link fails"; a pre-FEC BER above the
// HD-FEC limit says the span is failing, not "watch the trend".
func TestK3DarkFiberSpanDownAndBERAboveFECLimit(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	down := c.Classify(newAlert(kv("alertname", "DarkFiberSpanDown", "severity", "critical", "source", "ols-ams-fra", "name", "och-3", "sector", "hpc-dark-fiber"),
		kv("summary", "Span AMS-FRA channel och-3 down"), `openconfig_interfaces_interface_state_oper_status{name=~"och.*"} != 1`))
	if down.Sector != "hpc-dark-fiber" || down.IncidentClass != ClassAvailability {
		t.Fatalf("DarkFiberSpanDown: %s, want hpc-dark-fiber, class availability", describe(down))
	}
	wantHint(t, "DarkFiberSpanDown", down, HintOpticalHealth,
		[]string{"down", "loss of signal", "Rx power at both ends", "amplifier", "fibre cut", "OTDR", "move traffic"},
		[]string{"degrades long before the link fails", "trend"})
	// The AVAIL KPI says the same.
	avail := c.Classify(newAlert(kv("alertname", "SpanUnavailable", "severity", "critical", "kpi", "AVAIL", "sector", "hpc-dark-fiber"), nil, ""))
	wantHint(t, "kpi=AVAIL", avail, HintOpticalHealth, []string{"down", "OTDR"}, []string{"degrades long before"})

	failing := c.Classify(newAlert(kv("alertname", "PreFECBERFailing", "severity", "critical", "source", "ols-x", "service", "span-x"),
		kv("summary", "Pre-FEC BER 5e-2", "pre_fec_ber", "0.05"), `openconfig_terminal_device_logical_channels_channel_otn_state_pre_fec_ber_instant > 1e-2`))
	wantHint(t, "PreFECBERFailing", failing, HintOpticalHealth,
		[]string{"pre-FEC BER 5.0e-02", "above the 3.8e-03 HD-FEC limit", "failing", "move traffic off the span"},
		[]string{"watch the trend", "degrades long before"})
	high := c.Classify(newAlert(kv("alertname", "PreFECBERHigh", "severity", "critical", "source", "ols-ams-fra", "channel", "otu4-1"),
		kv("summary", "Pre-FEC BER 2.4e-3 on ols-ams-fra otu4-1", "pre_fec_ber", "0.0024"), `openconfig_terminal_device_logical_channels_channel_otn_state_pre_fec_ber_instant > 1e-3`))
	wantHint(t, "PreFECBERHigh", high, HintOpticalHealth,
		[]string{"pre-FEC BER 2.4e-03", "HD-FEC limit", "degrading"}, []string{"watch the trend"})
	// A healthy BER still says to watch the trend.
	ok := c.Classify(newAlert(kv("alertname", "PreFECBERRising", "severity", "warning", "sector", "hpc-dark-fiber"), kv("pre_fec_ber", "1e-6"), ""))
	wantHint(t, "PreFECBERRising", ok, HintOpticalHealth, []string{"pre-FEC BER 1.0e-06: watch the trend"}, []string{"HD-FEC limit", "failing"})
}

// F2: the HD-FEC limit the hint quotes is documented.
func TestK3FECLimitDocumented(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "docs", "classification.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "3.8e-3") || !strings.Contains(string(b), "HD-FEC") {
		t.Error("docs/classification.md does not document the HD-FEC pre-FEC BER limit 3.8e-3")
	}
}

// F3: ITL and TPOT are decode only; TTFT is queue plus prefill; a request's
// decode time is a decode signal, not ITL.
func TestK3DecodeAndPrefillTexts(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	decode := []string{"decode", "batch size", "running requests", "preemptions", "chunked prefill"}
	for _, tc := range []struct{ name, expr, summary string }{
		{"VLLMInterTokenLatencyP99High", `histogram_quantile(0.99, sum by (le, model_name) (rate(vllm:inter_token_latency_seconds_bucket[5m]))) > 0.1`, "Inter-token latency p99 of llama-3-70b is 182ms"},
		{"VLLMTimePerOutputTokenHigh", `histogram_quantile(0.95, sum by (le) (rate(vllm:time_per_output_token_seconds_bucket[5m]))) > 0.08`, "TPOT p95 is 0.121s on mixtral-8x7b"},
		{"SGLangInterTokenLatencyHigh", `histogram_quantile(0.99, sum by (le) (rate(sglang:inter_token_latency_seconds_bucket[5m]))) > 0.15`, "SGLang ITL p99 0.31s"},
		{"TGIMeanTimePerTokenHigh", `histogram_quantile(0.95, sum by (le) (rate(tgi_request_mean_time_per_token_duration_bucket[5m]))) > 0.1`, "TGI time per token p95 0.14s"},
	} {
		cl := c.Classify(newAlert(kv("alertname", tc.name, "severity", "critical"), kv("summary", tc.summary), tc.expr))
		wantHint(t, tc.name, cl, HintPrefillDecode, decode, []string{"Split latency into prefill and decode", "slow prefill points at"})
	}
	ttft := c.Classify(newAlert(kv("alertname", "VLLMTimeToFirstTokenP99High", "severity", "critical", "model_name", "llama-3-70b"),
		kv("summary", "TTFT p99 of llama-3-70b is 3.41s", "description", "p99 time to first token 3.41s over 5m, SLO 2s."),
		`histogram_quantile(0.99, sum by (le, model_name) (rate(vllm:time_to_first_token_seconds_bucket[5m]))) > 2`))
	wantHint(t, "VLLMTimeToFirstTokenP99High", ttft, HintPrefillDecode,
		[]string{"prefill", "queue", "prompt lengths", "prefix-cache"}, []string{"slow decode", "batch size", "token generation"})
	// End-to-end latency holds both halves.
	e2e := c.Classify(newAlert(kv("alertname", "TGIRequestDurationP95High", "severity", "critical"), kv("summary", "TGI request duration p95 34s"),
		`histogram_quantile(0.95, sum by (le) (rate(tgi_request_duration_bucket[5m]))) > 20`))
	wantHint(t, "TGIRequestDurationP95High", e2e, HintPrefillDecode, []string{"prefill", "decode"}, nil)

	dec := c.Classify(newAlert(kv("alertname", "VLLMDecodeTimeP95High", "severity", "warning", "model_name", "llama-3-70b"), kv("summary", "Decode p95 26s"),
		`histogram_quantile(0.95, sum by (le) (rate(vllm:request_decode_time_seconds_bucket[5m]))) > 20`))
	if dec.Sector != "llm-inference-gpu" || kpiOf(dec) == "ITL" || kpiOf(dec) == "TPOT" {
		t.Errorf("VLLMDecodeTimeP95High: %s, want llm-inference-gpu and no ITL or TPOT", describe(dec))
	}
	wantHint(t, "VLLMDecodeTimeP95High", dec, HintPrefillDecode, append(decode, "output length"), []string{"Split latency into prefill and decode"})
	if _, ok := hintText(dec, HintQueueTime); ok {
		t.Errorf("VLLMDecodeTimeP95High: a queue-time hint on a decode time: %+v", dec.Hints)
	}
}

// F4: preemptions mean the KV cache ran out: the KV-cache-full text, not
// the prefix-cache hit-rate one.
func TestK3PreemptionsGetKVCacheFullText(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	cl := c.Classify(newAlert(kv("alertname", "VLLMPreemptionsHigh", "severity", "warning", "model_name", "llama-3-70b"),
		kv("summary", "llama-3-70b preempts 2.3 requests/s", "description", "Requests are preempted (KV cache exhausted): 2.3/s."),
		`sum by (model_name) (rate(vllm:num_preemptions_total[5m])) > 0.5`))
	wantHint(t, "VLLMPreemptionsHigh", cl, HintKVCache, []string{"KV cache is nearly full", "gpu_memory_utilization"},
		[]string{"Check the prefix/KV cache hit rate: a falling hit rate"})
}

// F5: DCGM's NVLink bandwidth is hardware: no MoE-router advice.
func TestK3NVLinkBandwidthGetsNoRouterHint(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	cl := c.Classify(newAlert(kv("alertname", "GPUNVLinkBandwidthLowTraining", "severity", "warning", "Hostname", "h100-a12", "pod", "pretrain-moe-worker-3"),
		kv("summary", "NVLink bandwidth dropped to 4.1 GB/s on h100-a12"), `sum by (Hostname) (rate(DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL[5m])) < 1e10`))
	if cl.Sector != "llm-training-pretrain-moe" {
		t.Errorf("GPUNVLinkBandwidthLowTraining: %s, want llm-training-pretrain-moe", describe(cl))
	}
	for _, h := range cl.Hints {
		if h.ID == HintMoERouter || strings.Contains(h.Text, "z-loss") || strings.Contains(h.Text, "auxiliary") {
			t.Errorf("GPUNVLinkBandwidthLowTraining: router advice on an NVLink counter: %+v", h)
		}
	}
	// The router's own KPIs keep it.
	moe := c.Classify(newAlert(kv("alertname", "MoEAllToAllShareHigh", "severity", "warning", "job_name", "pretrain-moe-256"), kv("summary", "All-to-all takes 52% of the step"),
		`sum by (job_name) (rate(megatron_moe_all_to_all_seconds_total[10m])) / sum by (job_name) (rate(megatron_step_time_seconds_total[10m])) > 0.4`))
	if _, ok := hintText(moe, HintMoERouter); !ok {
		t.Errorf("MoEAllToAllShareHigh: %s, lost its moe-router hint: %+v", describe(moe), moe.Hints)
	}
}

// F6: clock sync is no one-way delay, optical power no OSNR margin,
// post-FEC errors no pre-FEC BER; the sectors stay.
func TestK3WrongKPINames(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	clock := []string{"llm-inference-network", "hft-low-latency-exec", "hpc-dark-fiber"}
	for _, tc := range []struct {
		name string
		lbl  map[string]string
		ann  map[string]string
		expr string
	}{
		{"PTPOffsetHigh", kv("node", "hft-bm-01", "iface", "ens5f0", "namespace", "openshift-ptp"),
			kv("summary", "PTP offset 412 ns from grandmaster on hft-bm-01", "description", "ptp4l offset is 412ns (limit 100ns)."),
			`abs(openshift_ptp_offset_ns{from="master",process="ptp4l"}) > 100`},
		{"ChronyOffsetHigh", kv("instance", "hft-gw-03:9123"), kv("summary", "chrony offset 0.00038s on hft-gw-03"), `abs(chrony_tracking_last_offset_seconds) > 0.0001`},
		{"ClockNotSynchronising", kv("instance", "hft-gw-03:9100"), kv("summary", "Clock not synchronising on hft-gw-03"),
			`min_over_time(node_timex_sync_status[5m]) == 0 and node_timex_maxerror_seconds >= 16`},
		{"PTPClockClassDegraded", kv("node", "hft-bm-01", "namespace", "openshift-ptp"), kv("summary", "PTP clock class 248 (free-running) on hft-bm-01"),
			`openshift_ptp_clock_class{process="ptp4l"} > 6`},
	} {
		tc.lbl["alertname"], tc.lbl["severity"] = tc.name, "critical"
		cl := c.Classify(newAlert(tc.lbl, tc.ann, tc.expr))
		if kpiOf(cl) == "OWD" {
			t.Errorf("%s: %s, clock sync read as one-way delay", tc.name, describe(cl))
		}
		if cl.Sector != alert.Unknown || strings.Join(cl.Candidates, ",") != strings.Join(clock, ",") {
			t.Errorf("%s: %s, want unknown among %v", tc.name, describe(cl), clock)
		}
		// An HFT sector label keeps its sector.
		tc.lbl["sector"] = "hft-low-latency-exec"
		if cl := c.Classify(newAlert(tc.lbl, tc.ann, tc.expr)); cl.Sector != "hft-low-latency-exec" || kpiOf(cl) == "OWD" {
			t.Errorf("%s with sector=hft-low-latency-exec: %s", tc.name, describe(cl))
		}
	}
	// A PTP offset beside a feed-latency KPI still settles on the one
	// sector both allow.
	if cl := c.Classify(newAlert(kv("alertname", "FeedClockDrift", "kpi", "FLAT"), nil, `abs(openshift_ptp_offset_ns) > 100`)); cl.Sector != "hft-low-latency-exec" {
		t.Errorf("FeedClockDrift: %s, want hft-low-latency-exec", describe(cl))
	}

	for _, tc := range []struct {
		name string
		lbl  map[string]string
		ann  map[string]string
		expr string
	}{
		{"OpticalRxPowerLowNoSector", kv("source", "roadm-ams-1", "component_name", "och-1/1/1"), kv("summary", "Rx power -17.3 dBm on roadm-ams-1 och-1/1/1"), `gnmic_optical_channel_input_power_dbm < -14`},
		{"OpticalTxPowerLow", kv("target", "mx-fra-2", "name", "et-0/0/1"), kv("summary", "Tx power -8.1 dBm on mx-fra-2 et-0/0/1"), `junos_interface_diagnostics_laser_output_power_dbm < -6`},
		{"OpticalRxPowerLow", kv("source", "roadm-ams-1", "component_name", "transceiver-1/1/1", "sector", "hpc-dark-fiber"), kv("summary", "Rx power -17.3 dBm on roadm-ams-1 transceiver-1/1/1"),
			`openconfig_platform_components_component_transceiver_physical_channels_channel_state_input_power_instant < -14`},
	} {
		tc.lbl["alertname"], tc.lbl["severity"] = tc.name, "critical"
		cl := c.Classify(newAlert(tc.lbl, tc.ann, tc.expr))
		if cl.Sector != "hpc-dark-fiber" || kpiOf(cl) == "OSNRM" {
			t.Errorf("%s: %s, want hpc-dark-fiber without OSNRM", tc.name, describe(cl))
		}
	}

	post := c.Classify(newAlert(kv("alertname", "PostFECUncorrectableBlocks", "severity", "critical", "source", "ols-ams-fra", "channel", "otu4-1"),
		kv("summary", "FEC uncorrectable blocks on ols-ams-fra: traffic is being corrupted"),
		`increase(openconfig_terminal_device_otn_state_fec_uncorrectable_blocks[5m]) > 0`))
	if post.Sector != "hpc-dark-fiber" || kpiOf(post) == "Pre-FEC BER" {
		t.Errorf("PostFECUncorrectableBlocks: %s, want hpc-dark-fiber without Pre-FEC BER", describe(post))
	}
	wantHint(t, "PostFECUncorrectableBlocks", post, HintOpticalHealth, []string{"corrupted now", "move traffic off the span"}, []string{"degrades long before"})
	// The pre-FEC BER itself keeps its KPI.
	pre := c.Classify(newAlert(kv("alertname", "PreFECBERHigh", "severity", "critical"), nil, `openconfig_terminal_device_logical_channels_channel_otn_state_pre_fec_ber_instant > 1e-3`))
	if pre.Sector != "hpc-dark-fiber" || kpiOf(pre) != "Pre-FEC BER" {
		t.Errorf("PreFECBERHigh: %s, want hpc-dark-fiber, Pre-FEC BER", describe(pre))
	}
}

// F7: a DAG run's duration gets no spill or lag text; Spark's spill no
// Kafka advice; a lag in seconds is not messages.
func TestK3BigDataTexts(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	dag := c.Classify(newAlert(kv("alertname", "AirflowDagRunSlow", "severity", "warning", "dag_id", "risk_eod"), kv("summary", "DAG risk_eod took 2h 14m"),
		`max by (dag_id) (airflow_dagrun_duration_success{dag_id="risk_eod"}) > 3600`))
	if kpiOf(dag) != "JDUR" {
		t.Errorf("AirflowDagRunSlow: %s, want JDUR", describe(dag))
	}
	for _, h := range dag.Hints {
		if h.ID == HintSpillLag || strings.Contains(h.Text, "consumer lag") || strings.Contains(h.Text, "spill") {
			t.Errorf("AirflowDagRunSlow: spill/lag text on a DAG run: %+v", h)
		}
	}
	spark := c.Classify(newAlert(kv("alertname", "SparkExecutorDiskSpillHigh", "severity", "warning", "application", "daily-risk-agg"),
		kv("summary", "Spark spills 3.4 GB/s to disk", "spill_bytes", "3650722201"), `sum by (application) (rate(metrics_executor_diskBytesSpilled_bytes_total[10m])) > 1e9`))
	wantHint(t, "SparkExecutorDiskSpillHigh", spark, HintSpillLag, []string{"3.4 GiB spilled to disk", "executor memory"},
		[]string{"consumer", "adding consumers"})
	secs := c.Classify(newAlert(kv("alertname", "KafkaConsumerGroupLagSecondsHigh", "severity", "critical", "group", "payments-enricher"),
		kv("summary", "payments-enricher is 14m behind", "consumer_lag", "840"), `max by (group) (kafka_consumergroup_group_max_lag_seconds) > 300`))
	wantHint(t, "KafkaConsumerGroupLagSecondsHigh", secs, HintSpillLag, []string{"consumer lag is 14m0s"}, []string{"messages", "840 "})
	// A duration written as such is seconds whatever the metric.
	dur := c.Classify(newAlert(kv("alertname", "ConsumerLagHigh", "severity", "warning", "sector", "hpc-big-data"), kv("consumer_lag", "1m 30s"), ""))
	wantHint(t, "consumer_lag 1m 30s", dur, HintSpillLag, []string{"consumer lag is 1m30s"}, []string{"messages"})
	msgs := c.Classify(newAlert(kv("alertname", "KafkaConsumerLagMessagesHigh", "severity", "warning", "consumergroup", "feature-writer"),
		kv("summary", "feature-writer lags 1.2M messages", "consumer_lag", "1.2M"), `sum by (consumergroup) (kafka_consumergroup_lag) > 100000`))
	wantHint(t, "KafkaConsumerLagMessagesHigh", msgs, HintSpillLag, []string{"consumer lag is 1.2M:", "adding consumers"}, []string{"messages", "spill"})
}

// F8: a duration counter divided by a request count is an average.
func TestK3TritonSumOverCountIsAnAverage(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	cl := c.Classify(newAlert(kv("alertname", "TritonAvgRequestLatencyHigh", "severity", "critical", "model", "bert-large"),
		kv("summary", "Triton bert-large average request latency 812 ms", "queue_time_seconds", "0.0004", "compute_time_seconds", "0.81"),
		`sum by (model) (rate(nv_inference_request_duration_us[5m])) / sum by (model) (rate(nv_inference_request_success[5m])) / 1000 > 500`))
	wantHint(t, "TritonAvgRequestLatencyHigh", cl, HintPercentiles, []string{"averages"}, nil)
	// A ratio of two durations is no average, nor is a duration alone.
	for _, expr := range []string{
		`rate(nv_inference_queue_duration_us[1m])/clamp_min(rate(nv_inference_compute_infer_duration_us[1m]),1) > 1`,
		`rate(nv_inference_request_duration_us[5m]) > 1e6`,
		`rate(nv_inference_request_duration_us[5m]) > rate(nv_inference_request_success[5m]) * 1000`,
	} {
		cl := c.Classify(newAlert(kv("alertname", "TritonLatencyHigh", "severity", "critical"), nil, expr))
		if _, ok := hintText(cl, HintPercentiles); ok {
			t.Errorf("%s: flagged as an average: %+v", expr, cl.Hints)
		}
	}
}

// F9: sub-millisecond times are shown in µs, not as 0ms.
func TestK3SubMillisecondTimes(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	micro := c.Classify(newAlert(kv("alertname", "TritonQueueMicro", "severity", "critical", "model", "m", "service", "triton-x"),
		kv("summary", "x", "queue_time_seconds", "0.00095", "compute_time_seconds", "0.0004"),
		`rate(nv_inference_queue_duration_us[5m]) / rate(nv_inference_request_success[5m]) > 500`))
	wantHint(t, "TritonQueueMicro", micro, HintQueueTime, []string{"950µs queued of 1.35ms"}, []string{"0ms", "1ms"})
	triton := c.Classify(newAlert(kv("alertname", "TritonAvgRequestLatencyHigh", "severity", "critical", "model", "bert-large"),
		kv("summary", "Triton bert-large average request latency 812 ms", "queue_time_seconds", "0.0004", "compute_time_seconds", "0.81"),
		`sum by (model) (rate(nv_inference_request_duration_us[5m])) / sum by (model) (rate(nv_inference_request_success[5m])) / 1000 > 500`))
	wantHint(t, "TritonAvgRequestLatencyHigh", triton, HintQueueTime, []string{"810ms computing of 810ms, 400µs queued"}, []string{" 0ms"})
	split := c.Classify(newAlert(kv("alertname", "FeedDecodeSplit", "severity", "critical", "sector", "llm-inference-gpu"),
		kv("prefill_seconds", "0.00004", "decode_seconds", "0.0042"), ""))
	wantHint(t, "prefill 40µs, decode 4.2ms", split, HintPrefillDecode, []string{"4.2ms decode vs 40µs prefill"}, []string{"0ms"})
	// The unit follows the value as shown: 0.99996 s is 1.00s, not 1000ms.
	edge := c.Classify(newAlert(kv("alertname", "QueueEdge", "severity", "critical", "sector", "llm-inference-gpu", "kpi", "QTS"),
		kv("queue_time_seconds", "0.99996", "compute_time_seconds", "0.5"), ""))
	wantHint(t, "queue 0.99996s", edge, HintQueueTime, []string{"1.00s queued"}, []string{"1000ms", "1000µs"})
}

// F10: the burn hint uses the SLO period the alert carries and says when
// it assumes 30 days.
func TestK3BurnHintUsesTheSLOPeriod(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	pyrra := c.Classify(newAlert(kv("alertname", "ErrorBudgetBurn", "severity", "critical", "slo", "checkout-availability", "long", "1h", "short", "5m", "exhaustion", "2d"),
		kv("summary", "checkout-availability burns its 28d budget fast", "burn_rate_1h", "16.2", "description", "Objective 99.9% over 28d"),
		`http_requests:burnrate5m{slo="checkout-availability"} > (14 * (1-0.999)) and http_requests:burnrate1h{slo="checkout-availability"} > (14 * (1-0.999))`))
	// 28 days ÷ 16.2 = 41.5 hours.
	wantHint(t, "ErrorBudgetBurn (Pyrra, 28d)", pyrra, HintBurnExemplars, []string{"28-day error budget", "lasts 1d 17h"}, []string{"30-day", "assumed"})
	// Pyrra's 7-day SLO: the 15m/3m pair, exhaustion 12h.
	week := c.Classify(newAlert(kv("alertname", "ErrorBudgetBurn", "severity", "critical", "slo", "x", "long", "15m", "short", "3m", "exhaustion", "12h"),
		kv("burn_rate_1h", "14"), ""))
	wantHint(t, "ErrorBudgetBurn (Pyrra, 7d)", week, HintBurnExemplars, []string{"7-day error budget", "lasts 12h"}, []string{"30-day"})
	named := c.Classify(newAlert(kv("alertname", "ErrorBudgetBurn", "severity", "critical", "slo_period", "28d"), kv("burn_rate_1h", "14"), ""))
	wantHint(t, "slo_period=28d", named, HintBurnExemplars, []string{"28-day error budget", "lasts 2d"}, []string{"30-day"})
	none := c.Classify(newAlert(kv("alertname", "ErrorBudgetBurn", "severity", "critical"), kv("burn_rate_1h", "15.2"), ""))
	wantHint(t, "no period", none, HintBurnExemplars, []string{"30-day", "assumed", "lasts 1d 23h"}, nil)
	// A 30-day Pyrra SLO's windows, rounded to the minute by Pyrra (1h4m,
	// exhaustion 2d3h): a 30-day budget, not "29d 21h".
	month := c.Classify(newAlert(kv("alertname", "ErrorBudgetBurn", "severity", "critical", "slo", "x", "long", "1h4m", "short", "5m", "exhaustion", "2d3h"),
		kv("burn_rate_1h", "15"), ""))
	wantHint(t, "ErrorBudgetBurn (Pyrra, 30d)", month, HintBurnExemplars, []string{"30-day error budget (Pyrra's", "lasts 2d"}, []string{"29d", "assumed"})
	// A burn far below 1 outlasts any budget; its hours overflowed
	// ("lasts -2562047h").
	slow := c.Classify(newAlert(kv("alertname", "ErrorBudgetBurn", "severity", "warning"), kv("burn_rate_1h", "1e-9"), ""))
	wantHint(t, "burn 1e-9", slow, HintBurnExemplars, []string{"lasts more than a year"}, []string{"lasts -"})
}

// F6: with clock sync no OWD, OpenShift's NodeClockNotSynchronising must
// not take UP from its guard absent(up{job="ptp-monitor-service"}): the
// alert is about the clock (no KPI), not about a scrape.
func TestK3AbsentUpGuardNamesNoKPI(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	cl := c.Classify(newAlert(kv("alertname", "NodeClockNotSynchronising", "severity", "critical"), nil,
		`( min_over_time(node_timex_sync_status{job="node-exporter"}[5m]) == 0 and node_timex_maxerror_seconds{job="node-exporter"} >= 16 ) and on() absent(up{job="ptp-monitor-service"})`))
	if kpiOf(cl) != "" {
		t.Errorf("NodeClockNotSynchronising: %s, want no KPI", describe(cl))
	}
	// absent(up{…}) alone is still about the target's scrape.
	if cl := c.Classify(newAlert(kv("alertname", "KubeAPIDown", "severity", "critical"), nil, `absent(up{job="apiserver"} == 1)`)); kpiOf(cl) != "UP" {
		t.Errorf("KubeAPIDown: %s, want UP", describe(cl))
	}
}
