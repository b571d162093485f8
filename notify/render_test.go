package notify_test

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/prometheus/alertmanager/template"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/notify/notifytest"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// alerts returns template data of n alerts named alertname, of sector
// (no KPI when it is alert.Unknown), each with labels (%d in a value
// replaced by the alert's index) and the summary annotation, and the
// common labels the router computes for them.
func alerts(alertname, sector string, n int, labels map[string]string, summary string) *notify.Data {
	var rs []*alert.Result
	for i := range n {
		r := notifytest.Result(alertname, fmt.Sprintf("fp%d", i), "firing", alert.ActionPage)
		r.Alert.Labels = template.KV{"alertname": alertname}
		for k, v := range labels {
			if strings.Contains(v, "%d") {
				v = fmt.Sprintf(v, i)
			}
			r.Alert.Labels[k] = v
		}
		r.Alert.Annotations = template.KV{"summary": summary}
		r.Classification.Sector = sector
		if sector == alert.Unknown {
			r.Classification.KPIs = nil
		}
		rs = append(rs, r)
	}
	data := notify.NewData(notifytest.Notification("oncall", alert.KindFiring, alert.ActionPage, rs...))
	common := template.KV{}
	for k, v := range rs[0].Alert.Labels {
		shared := true
		for _, r := range rs[1:] {
			shared = shared && r.Alert.Labels[k] == v
		}
		if shared {
			common[k] = v
		}
	}
	data.CommonLabels = common
	data.CommonAnnotations = template.KV{"summary": summary}
	return data
}

// The built-in summary said what, not where nor how many:
// "NodeFilesystemSpaceFillingUp (unknown): Filesystem is predicted …" on
// every host, "(unknown)" on every unclassified alert, and a 149-alert page
// read as one alert. It now counts the alerts when more than one fires,
// says where from the labels they share (cluster, namespace, then the pod,
// node or instance; not kube-state-metrics' own instance), and names the
// sector only when one is known.
func TestTheSummarySaysHowManyAndWhere(t *testing.T) {
	tests := []struct {
		name string
		data *notify.Data
		want string
	}{
		{"one unclassified alert names its instance and no sector",
			alerts("NodeFilesystemSpaceFillingUp", alert.Unknown, 1, map[string]string{"instance": "node-1:9100", "job": "node-exporter", "mountpoint": "/var"}, "Filesystem is predicted to run out of space within the next 4 hours."),
			"NodeFilesystemSpaceFillingUp on instance=node-1:9100: Filesystem is predicted to run out of space within the next 4 hours."},
		{"a storm counts the alerts and names what they share",
			alerts("KubePodCrashLooping", "k8s-workloads", 149, map[string]string{"cluster": "prod-eu", "namespace": "shop", "pod": "api-%d", "job": "kube-state-metrics", "instance": "10.2.0.5:8080"}, "Pod is crash looping."),
			"[FIRING:149] KubePodCrashLooping on cluster=prod-eu namespace=shop (k8s-workloads TTFT): Pod is crash looping."},
		{"one pod's alert names the pod, not kube-state-metrics' instance",
			alerts("KubePodCrashLooping", alert.Unknown, 1, map[string]string{"cluster": "prod-eu", "namespace": "shop", "pod": "api-0", "job": "kube-state-metrics", "instance": "10.2.0.5:8080"}, "Pod is crash looping."),
			"KubePodCrashLooping on cluster=prod-eu namespace=shop pod=api-0: Pod is crash looping."},
		{"kube-state-metrics' instance is never the place",
			alerts("KubeDeploymentReplicasMismatch", alert.Unknown, 1, map[string]string{"namespace": "shop", "deployment": "api", "job": "kube-state-metrics", "instance": "10.2.0.5:8080"}, "Deployment has not matched the expected number of replicas."),
			"KubeDeploymentReplicasMismatch on namespace=shop deployment=api: Deployment has not matched the expected number of replicas."},
		{"a node's alerts name the node they share",
			alerts("KubeletTooManyPods", alert.Unknown, 2, map[string]string{"node": "worker-3", "job": "kubelet", "instance": "10.0.0.%d:10250"}, "Kubelet is running at capacity."),
			"[FIRING:2] KubeletTooManyPods on node=worker-3: Kubelet is running at capacity."},
		// kube-prometheus' node-exporter targets carry the exporter's pod
		// and namespace, and the node as the instance: the page named
		// node-exporter-05abc in monitoring while node06's disk filled.
		{"a node exporter's alert names the node, not the exporter's pod",
			alerts("NodeFilesystemSpaceFillingUp", alert.Unknown, 1, map[string]string{"cluster": "prod-eu", "namespace": "monitoring", "pod": "node-exporter-05abc", "container": "kube-rbac-proxy", "job": "node-exporter", "instance": "node06", "mountpoint": "/var"}, "Filesystem is predicted to run out of space within the next 4 hours."),
			"NodeFilesystemSpaceFillingUp on cluster=prod-eu instance=node06: Filesystem is predicted to run out of space within the next 4 hours."},
		{"a node exporter scraped by the pods' job names the node",
			alerts("NodeFilesystemSpaceFillingUp", alert.Unknown, 1, map[string]string{"namespace": "monitoring", "pod": "prometheus-node-exporter-zz", "job": "kubernetes-pods", "app": "prometheus-node-exporter", "node": "node06"}, "s"),
			"NodeFilesystemSpaceFillingUp on node=node06: s"},
		{"a DCGM exporter's alert names the GPU's host",
			alerts("GPUXidError", alert.Unknown, 1, map[string]string{"namespace": "gpu-operator", "pod": "nvidia-dcgm-exporter-x7k2p", "job": "nvidia-dcgm-exporter", "Hostname": "gpu-node-7", "instance": "10.0.3.7:9400"}, "XID 79 on GPU 3."),
			"GPUXidError on Hostname=gpu-node-7: XID 79 on GPU 3."},
		// Without NODE_NAME the DCGM exporter's Hostname is its pod's
		// name: still more use than the pod's address.
		{"a DCGM exporter whose Hostname is its own pod names that",
			alerts("GPUXidError", alert.Unknown, 1, map[string]string{"namespace": "gpu-operator", "pod": "nvidia-dcgm-exporter-x7k2p", "job": "nvidia-dcgm-exporter", "Hostname": "nvidia-dcgm-exporter-x7k2p", "instance": "10.244.3.17:9400"}, "s"),
			"GPUXidError on Hostname=nvidia-dcgm-exporter-x7k2p: s"},
		// kube-state-metrics' alert about the exporter's own pod: the pod
		// is the place.
		{"kube-state-metrics' alert about an exporter pod names that pod",
			alerts("KubePodCrashLooping", alert.Unknown, 1, map[string]string{"namespace": "gpu-operator", "pod": "nvidia-dcgm-exporter-7hx2k", "job": "kube-state-metrics", "instance": "10.2.0.14:8080"}, "s"),
			"KubePodCrashLooping on namespace=gpu-operator pod=nvidia-dcgm-exporter-7hx2k: s"},
		// kube-state-metrics scraped under another job name (Grafana's
		// k8s-monitoring, the community chart's service endpoints).
		{"kube-state-metrics under another job keeps the exporter pod",
			alerts("KubePodCrashLooping", alert.Unknown, 1, map[string]string{"namespace": "monitoring", "pod": "prometheus-prometheus-node-exporter-abc12", "job": "kubernetes-service-endpoints", "app_kubernetes_io_name": "kube-state-metrics", "node": "node03", "instance": "10.244.3.9:8080"}, "s"),
			"KubePodCrashLooping on namespace=monitoring pod=prometheus-prometheus-node-exporter-abc12: s"},
		{"kube-state-metrics under another job never names its own instance",
			alerts("KubeDeploymentReplicasMismatch", alert.Unknown, 1, map[string]string{"cluster": "c1", "namespace": "shop", "deployment": "checkout", "job": "integrations/kubernetes/kube-state-metrics", "instance": "10.1.1.1:8080",
				"container": "kube-state-metrics", "service": "kube-state-metrics", "endpoint": "http", "uid": "5f0c2c8e-1b7a-4d3e-9a57-2f9e1c0d4b11"}, "s"),
			"KubeDeploymentReplicasMismatch on cluster=c1 namespace=shop deployment=checkout: s"},
		{"a Windows node's alert names the node, not the exporter's pod",
			alerts("WindowsDiskFull", alert.Unknown, 1, map[string]string{"namespace": "monitoring", "pod": "windows-exporter-abcde", "job": "windows-exporter", "instance": "winnode01"}, "s"),
			"WindowsDiskFull on instance=winnode01: s"},
		// kubernetes-mixin's pod alerts aggregate the job away.
		{"an aggregated pod alert about an exporter pod names the pod",
			alerts("KubePodNotReady", alert.Unknown, 1, map[string]string{"namespace": "monitoring", "pod": "node-exporter-05abc", "cluster": "prod"}, "s"),
			"KubePodNotReady on cluster=prod namespace=monitoring pod=node-exporter-05abc: s"},
		// Several nodes' alerts share no pod: the job says whose they are,
		// and the exporter's namespace is no place.
		{"node exporter alerts of two nodes name no exporter namespace",
			alerts("NodeFilesystemSpaceFillingUp", alert.Unknown, 2, map[string]string{"namespace": "monitoring", "pod": "node-exporter-0%d", "job": "node-exporter", "instance": "node0%d"}, "s"),
			"[FIRING:2] NodeFilesystemSpaceFillingUp: s"},
		{"a node exporter behind a service-endpoints job names its node",
			alerts("NodeFilesystemSpaceFillingUp", alert.Unknown, 1, map[string]string{"namespace": "monitoring", "job": "kubernetes-service-endpoints", "app": "prometheus-node-exporter", "node": "node06"}, "s"),
			"NodeFilesystemSpaceFillingUp on node=node06: s"},
		// DCGM's pod mapping kept with honorLabels: the pod is the GPU
		// workload's, which is the place.
		{"a DCGM alert carrying the workload's pod names that pod",
			alerts("GPUXidError", alert.Unknown, 1, map[string]string{"namespace": "ml-train", "pod": "trainer-0", "job": "nvidia-dcgm-exporter", "Hostname": "gpu-node-3"}, "s"),
			"GPUXidError on namespace=ml-train pod=trainer-0: s"},
		{"a Node.js application's job called node keeps its pod",
			alerts("HighErrorRate", alert.Unknown, 1, map[string]string{"namespace": "shop", "pod": "checkout-7f9c-x2", "job": "node", "instance": "10.2.3.4:3000"}, "s"),
			"HighErrorRate on namespace=shop pod=checkout-7f9c-x2: s"},

		{"a blackbox probe names the probed target",
			alerts("BlackboxProbeFailed", alert.Unknown, 1, map[string]string{"namespace": "monitoring", "pod": "blackbox-exporter-1", "job": "blackbox", "instance": "https://shop.example.com"}, "s"),
			"BlackboxProbeFailed on instance=https://shop.example.com: s"},
		{"alerts sharing no place say what they share",
			alerts("VLLMQueueTooLong", alert.Unknown, 3, map[string]string{"model_name": "llama-70b", "instance": "gpu-%d:8000"}, "Requests are queueing."),
			"[FIRING:3] VLLMQueueTooLong on model_name=llama-70b: Requests are queueing."},
		{"alerts sharing nothing that names a place say none",
			alerts("VLLMQueueTooLong", alert.Unknown, 3, map[string]string{"team": "ml", "job": "vllm", "instance": "gpu-%d:8000"}, "Requests are queueing."),
			"[FIRING:3] VLLMQueueTooLong: Requests are queueing."},
		// A rule aggregating the instance away, a network device's port:
		// the page named the cluster alone (an audit); what the alert is
		// about follows, and no policy input, owner, job or scope does.
		{"an aggregated alert names what it is about",
			alerts("KafkaConsumerGroupLagHigh", alert.Unknown, 1, map[string]string{"cluster": "prod-eu1", "consumergroup": "clickstream-enricher", "topic": "clicks", "job": "kafka-exporter",
				"team": "data", "env": "prod", "sloth_id": "x", "burn_rate_1h": "15", "utilization": "0.9", "le": "+Inf note"}, "Lag above 10k."),
			"KafkaConsumerGroupLagHigh on cluster=prod-eu1 consumergroup=clickstream-enricher topic=clicks: Lag above 10k."},
		{"a device's alert names the device first and at most three labels",
			alerts("OpticalRxPowerLow", alert.Unknown, 1, map[string]string{"cluster": "prod-eu1", "span": "ams-fra", "interface": "et-0/0/1", "device": "ams-fra-dwdm-01", "lane": "2"}, "s"),
			"OpticalRxPowerLow on cluster=prod-eu1 device=ams-fra-dwdm-01 interface=et-0/0/1 span=ams-fra: s"},
		// Labels that route, repeat the alertname or vary per replica are
		// no subject: a first build took them before the one naming the
		// object (a review: GitLab's component, OpenTelemetry's
		// service_name were lost to alert_class, otel_scope_name …).
		{"GitLab's component, not its classification",
			alerts("ComponentErrorSLOViolation", alert.Unknown, 1, map[string]string{"aggregation": "component", "alert_class": "slo_violation", "alert_type": "symptom", "component": "graphql_queries", "tier": "sv"}, "s"),
			"ComponentErrorSLOViolation on component=graphql_queries: s"},
		{"OpenTelemetry's service name, not its scope or instance",
			alerts("HighErrorRate", alert.Unknown, 1, map[string]string{"deployment_environment": "prod", "otel_scope_name": "go.opentelemetry.io/otel", "service_instance_id": "5f0c2c8e-1b7a-4d3e-9a57-2f9e1c0d4b11", "service_name": "checkout"}, "s"),
			"HighErrorRate on service_name=checkout: s"},
		{"routing labels and conditions say nothing",
			alerts("KubeJobFailed", alert.Unknown, 1, map[string]string{"namespace": "batch", "job_name": "nightly-etl", "condition": "true", "phase": "Failed", "routing_key": "myteam", "slack_channel": "#alerts", "le": "0.5", "version": "v1.2.3"}, "s"),
			"KubeJobFailed on namespace=batch job_name=nightly-etl: s"},
		// The sectors' own object labels (testdata/policies/capacity.json's
		// pools read "on cluster=gpu-east-1" alone — a review).
		{"a serving pool",
			alerts("GPUCapacityHigh", alert.Unknown, 1, map[string]string{"cluster": "gpu-east-1", "pool": "h100-pool-3", "kpi": "QTS"}, "s"),
			"GPUCapacityHigh on cluster=gpu-east-1 pool=h100-pool-3: s"},
		{"a workload named the OpenTelemetry way",
			alerts("DeploymentDown", alert.Unknown, 1, map[string]string{"k8s.namespace.name": "shop", "k8s.deployment.name": "checkout", "k8s.replicaset.name": "checkout-7d9f"}, "s"),
			"DeploymentDown on k8s.namespace.name=shop k8s.deployment.name=checkout k8s.replicaset.name=checkout-7d9f: s"},
		{"OpenTelemetry's names stand in for the classic ones",
			alerts("HighErrorRate", alert.Unknown, 1, map[string]string{"k8s.cluster.name": "prod-eu", "k8s.namespace.name": "shop", "k8s.pod.name": "checkout-7d9f", "service.name": "checkout"}, "5xx rate above 5%."),
			"HighErrorRate on k8s.cluster.name=prod-eu k8s.namespace.name=shop k8s.pod.name=checkout-7d9f: 5xx rate above 5%."},
		// Knative's autoscaler names the revision's namespace so (an
		// audit: the tenant was missing from the page).
		{"Knative's namespace_name beside its own pod's namespace",
			alerts("KnativeScaleFromZeroStuck", alert.Unknown, 1, map[string]string{"cluster": "gpu-east-1", "namespace": "knative-serving", "pod": "autoscaler-5f8c9d7b6-x2x4k", "job": "autoscaler", "namespace_name": "team-a"}, "s"),
			"KnativeScaleFromZeroStuck on cluster=gpu-east-1 namespace=knative-serving namespace_name=team-a pod=autoscaler-5f8c9d7b6-x2x4k: s"},
		{"Knative's namespace_name",
			alerts("KnativeScaleFromZeroStuck", alert.Unknown, 1, map[string]string{"cluster": "gpu-east-1", "namespace_name": "team-a", "configuration_name": "llama3-predictor"}, "s"),
			"KnativeScaleFromZeroStuck on cluster=gpu-east-1 namespace_name=team-a configuration_name=llama3-predictor: s"},
		{"a long label value is cut",
			alerts("X", alert.Unknown, 1, map[string]string{"namespace": strings.Repeat("n", 100)}, "s"),
			"X on namespace=" + strings.Repeat("n", 63) + "…: s"},
	}
	tm := notify.BuiltinTemplates()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tm.Render(nil, "summary", "", notify.DefaultSummary, tt.data); got != tt.want {
				t.Fatalf("summary\n got %q\nwant %q", got, tt.want)
			}
		})
	}
	// The title (Slack's header) drops "(unknown)" too.
	data := alerts("NodeFilesystemSpaceFillingUp", alert.Unknown, 1, map[string]string{"instance": "node-1:9100"}, "s")
	if got := tm.Render(nil, "title", "", notify.DefaultTitle, data); got != "[PAGE] NodeFilesystemSpaceFillingUp 1 firing" {
		t.Errorf("title = %q, want no sector", got)
	}
}

// A user text that renders empty where a built-in text exists — Alertmanager
// configs' description: '{{ .CommonAnnotations.summary }}', empty whenever
// the alerts' summaries differ — used to come back "", and the PagerDuty
// summary and the Slack header became the raw incident key, with no log. It
// is now treated like a failed render: the built-in text, a warning the
// first time for the receiver and field (debug after), and the counter.
// Where there is no built-in text, empty means something (no severity) and
// stays empty, unlogged and uncounted; so does a built-in text that is
// itself empty.
func TestAnEmptyRenderFallsBackToTheBuiltinText(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	tm := notify.BuiltinTemplates().WithMetrics(notify.NewMetrics(reg))
	logs := &notifytest.SyncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	data := differingSummaries() // two alerts whose summaries differ

	for range 3 {
		if got := tm.Render(logger, "summary", "{{ .CommonAnnotations.summary }}", notify.DefaultSummary, data); got != "[FIRING:2] TTFTHigh (llm-inference-gpu TTFT)" { // the summaries differ: none is the incident's
			t.Fatalf("got %q, want the built-in summary", got)
		}
	}
	if got := tm.Render(logger, "severity", "  {{ .CommonLabels.nope }} ", "", data); got != "" {
		t.Fatalf("severity = %q, want empty (no built-in text)", got)
	}
	empty := notify.NewData(notifytest.Notification("oncall", alert.KindFiring, alert.ActionPage)) // no alerts: the built-in text is empty
	if got := tm.Render(logger, "text", "", notify.DefaultText, empty); got != "" {
		t.Fatalf("text = %q, want the built-in text's empty result", got)
	}

	out := logs.String()
	if n := strings.Count(out, "level=WARN msg=\"template rendered empty"); n != 1 || !strings.Contains(out, "field=summary") {
		t.Errorf("want one warning naming the field and receiver:\n%s", out)
	}
	if n := strings.Count(out, "level=DEBUG msg=\"template rendered empty"); n != 2 {
		t.Errorf("want the later empty renders at debug:\n%s", out)
	}
	if strings.Contains(out, "field=severity") || strings.Contains(out, "field=text") {
		t.Errorf("an empty render without a built-in text, or of the built-in text, was logged:\n%s", out)
	}
	if got := notifytest.RenderFailures(t, reg); len(got) != 1 || got["oncall/summary"] != 3 {
		t.Errorf("render failures = %v, want oncall/summary 3", got)
	}
}

// A failed render is counted as an empty one is, by receiver and field;
// TryRender (for fields left out when they fail) reports the failure,
// logs and counts it.
func TestRenderFailuresAreCounted(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := notify.NewMetrics(reg)
	tm := notify.BuiltinTemplates().WithMetrics(m)
	logs := &notifytest.SyncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	m.PrecreateRenderFailures("oncall", "summary", "details.owner", "title")

	if got := tm.Render(logger, "summary", "{{ .Nope.Deeper }}", notify.DefaultSummary, fixture()); !strings.HasPrefix(got, "[FIRING:2] TTFTHigh") {
		t.Fatalf("got %q, want the built-in summary", got)
	}
	if got, ok := tm.TryRender(logger, "details.owner", "{{ .Nope.Deeper }}", fixture()); ok || got != "" {
		t.Fatalf("TryRender = %q, %v; want a failure", got, ok)
	}
	if got, ok := tm.TryRender(logger, "details.team", " {{ .CommonLabels.job }} ", fixture()); !ok || got != "vllm" {
		t.Fatalf("TryRender = %q, %v; want vllm", got, ok)
	}
	if !strings.Contains(logs.String(), `msg="template render failed, leaving the field out" field=details.owner`) {
		t.Errorf("the failed detail was not logged:\n%s", logs.String())
	}
	want := map[string]float64{"oncall/summary": 1, "oncall/details.owner": 1, "oncall/title": 0}
	if got := notifytest.RenderFailures(t, reg); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("render failures = %v, want %v", got, want)
	}
	// A failure is counted apart from an empty render (the alert on the
	// router's templates reads reason="error" alone): an empty summary
	// the built-in text stands in for is counted as empty.
	tm.Render(logger, "summary", "{{ .CommonAnnotations.summary }}", notify.DefaultSummary, differingSummaries())
	wantByReason := map[string]float64{
		"oncall/summary/error": 1, "oncall/summary/empty": 1,
		"oncall/details.owner/error": 1, "oncall/details.owner/empty": 0,
		"oncall/title/error": 0, "oncall/title/empty": 0,
	}
	if got := notifytest.RenderFailuresByReason(t, reg); fmt.Sprint(got) != fmt.Sprint(wantByReason) {
		t.Errorf("render failures by reason = %v, want %v", got, wantByReason)
	}
	// Without metrics nothing is counted, nothing panics.
	if _, ok := notify.BuiltinTemplates().TryRender(nil, "x", "{{ .Nope.Deeper }}", fixture()); ok {
		t.Error("TryRender without metrics succeeded")
	}
}

// A template failing on every notification is logged once per receiver,
// field and error, not once per notification (an audit: 40 identical lines
// a second under load), and counted every time; another field's failure,
// or another error, is logged at once.
func TestRenderFailuresAreLoggedOncePerFieldAndError(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := notify.NewMetrics(reg)
	tm := notify.BuiltinTemplates().WithMetrics(m)
	logs := &notifytest.SyncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	for range 100 {
		tm.Render(logger, "title", "{{ (index .Alerts 3).Status }}", notify.DefaultSummary, fixture())
		tm.TryRender(logger, "details.owner", "{{ .Nope.Deeper }}", fixture())
	}
	tm.Render(logger, "title", "{{ .Nope.Deeper }}", notify.DefaultSummary, fixture())
	out := logs.String()
	if n := strings.Count(out, `msg="template render failed, using the built-in text" field=title`); n != 2 {
		t.Errorf("the failing title was logged %d times, want once per error (2):\n%s", n, out)
	}
	if n := strings.Count(out, `msg="template render failed, leaving the field out" field=details.owner`); n != 1 {
		t.Errorf("the failing detail was logged %d times, want once:\n%s", n, out)
	}
	got := notifytest.RenderFailures(t, reg)
	if got["oncall/title"] != 101 || got["oncall/details.owner"] != 100 {
		t.Errorf("render failures = %v, want every one counted (title 101, details.owner 100)", got)
	}
}

// differingSummaries is the fixture's two alerts with summaries that
// differ: '{{ .CommonAnnotations.summary }}' renders empty.
func differingSummaries() *notify.Data {
	n := notifytest.Notification("oncall", alert.KindFiring, alert.ActionPage,
		notifytest.Result("TTFTHigh", "aaa", "firing", alert.ActionPage),
		notifytest.Result("TTFTHigh", "bbb", "firing", alert.ActionPage))
	n.Results[1].Alert.Annotations["summary"] = "TTFT p99 is 3.1s (SLO 1s)"
	alert.SetCommon(n.Data)
	n.Data.CommonLabels = template.KV{"alertname": "TTFTHigh", "job": "vllm"}
	return notify.NewData(n)
}

// Every integration built from Deps counts its render failures (Slack's
// as PagerDuty's): WithDefaults wires the templates to the metrics.
func TestDepsCountRenderFailures(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	d := notify.Deps{Metrics: notify.NewMetrics(reg)}.WithDefaults()
	d.Templates.Render(nil, "title", "{{ .Nope.Deeper }}", notify.DefaultTitle, fixture())
	if got := notifytest.RenderFailures(t, reg); got["oncall/title"] != 1 {
		t.Errorf("render failures = %v, want oncall/title 1", got)
	}
}
