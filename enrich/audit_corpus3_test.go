package enrich

import (
	"slices"
	"testing"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// The tests of this file follow an audit that wrote alerts on the metric
// names LLM-serving and GPU stacks export now (no corpus file holds them).

// dcgm-exporter's own series (DCGM_EXP_…: Xid errors counted over a window
// or in total, GPU health) are the same shared GPU hardware as its device
// counters: candidates without context, a sector with it. They had no
// signal at all, so an Xid page on an inference pod lost its sector.
func TestDCGMExportersOwnSeriesAreSharedGPUHardware(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	for _, expr := range []string{
		`max_over_time(DCGM_EXP_XID_ERRORS_COUNT{xid="79"}[5m]) > 0`,
		`increase(DCGM_EXP_XID_ERRORS_TOTAL[5m]) > 0`,
		`DCGM_EXP_GPU_HEALTH_STATUS != 0`,
	} {
		cl := c.Classify(newAlert(kv("alertname", "GPUFault", "severity", "critical"), nil, expr))
		want := []string{"llm-inference-gpu", "llm-training-pretrain-moe", "llm-training-posttrain-moe"}
		if cl.Sector != alert.Unknown || !slices.Equal(cl.Candidates, want) {
			t.Errorf("%s without context: %s candidates %v, want unknown with candidates %v", expr, describe(cl), cl.Candidates, want)
		}
		cl = c.Classify(newAlert(kv("alertname", "GPUFault", "severity", "critical", "container", "vllm"), nil, expr))
		if cl.Sector != "llm-inference-gpu" {
			t.Errorf("%s on container vllm: %s, want llm-inference-gpu", expr, describe(cl))
		}
	}
}

// The requests queued at the endpoint picker (its flow control, each model
// server's queue as it reads it) are the load balancer's queue, LQ: without
// a KPI a queue page shared the pool's no-backends page's incident key.
// Triton's TensorRT-LLM backend counts waiting requests under a selector of
// one metric: queue time, as trtllm-serve's trtllm_num_requests_waiting.
func TestInferenceQueuesHaveTheirKPI(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	for _, tc := range []struct{ expr, sector, kpi string }{
		{`sum by (inference_pool) (inference_extension_flow_control_queue_size) > 100`, "llm-prompt-cache-lb", "LQ"},
		{`sum by (model_server_pod) (llm_d_epp_flow_control_queue_size) > 100`, "llm-prompt-cache-lb", "LQ"},
		{`max by (name, model_server_pod) (inference_pool_per_pod_queue_size) > 50`, "llm-prompt-cache-lb", "LQ"},
		{`sum by (model) (nv_trt_llm_request_metrics{request_type="waiting"}) > 50`, "llm-inference-gpu", "QTS"},
		// The same metric's other request types are no queue.
		{`sum by (model) (nv_trt_llm_request_metrics{request_type="scheduled"}) > 50`, "llm-inference-gpu", ""},
		// The steal selector still reads as before.
		{`avg by (instance) (rate(node_cpu_seconds_total{mode="steal"}[5m])) > 0.1`, "hft-vm-clusters", "RDY"},
	} {
		cl := c.Classify(newAlert(kv("alertname", "QueueHigh", "severity", "warning"), nil, tc.expr))
		if cl.Sector != tc.sector || kpiOf(cl) != tc.kpi {
			t.Errorf("%s: %s, want %s %q", tc.expr, describe(cl), tc.sector, tc.kpi)
		}
	}
}

// An SLO's name quoted in a summary is no word of its own, as a context
// label's value is not: a burn alert of the SLO "order-latency" read as an
// order latency (a second audit, of SLO tools' alerts). The name breaks no
// tie between candidate sectors.
func TestAnSLOsNameQuotedIsNoKPI(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	for _, tc := range []struct {
		alertname, expr string
		labels          map[string]string
		summary, desc   string
	}{
		{"Nobl9FastBurn", "", kv("slo", "order-latency", "service", "order-router", "severity", "High"), "Nobl9: order-latency burning 14x", "Remaining budget 62%; burn rate 14.8x over 1h"},
		{"SloGeneratorSLIBelowTarget", `sli_measurement < slo_target`,
			kv("job", "slo-generator", "service_name", "md", "feature_name", "feed", "slo_name", "latency", "severity", "warning"), "md/feed latency SLI below target", ""},
	} {
		tc.labels["alertname"] = tc.alertname
		cl := c.Classify(newAlert(tc.labels, kv("summary", tc.summary, "description", tc.desc), tc.expr))
		if k := kpiOf(cl); k == "OLAT" || k == "FLAT" {
			t.Errorf("%s: %s, want no KPI read from the SLO's name", tc.alertname, describe(cl))
		}
	}
}

// The labels that break ties end at "node": the SLO-naming labels after it
// are quoted context only (tieBreakLabels).
func TestContextLabelsBreakTiesUpToNode(t *testing.T) {
	if contextLabels[tieBreakLabels-1] != "node" || contextLabels[tieBreakLabels] != "slo" {
		t.Errorf("tieBreakLabels = %d ends the tie-breaking labels at %q, want at node, before slo", tieBreakLabels, contextLabels[tieBreakLabels-1])
	}
}
