package enrich

import (
	"slices"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/policies"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// The tests of this file follow the decision audit: a namespace quoted in
// an annotation picked the sector (and so the regression thresholds),
// absent() took the KPI of the metric it asks about, "disappeared from
// Prometheus target discovery" made control-plane alerts monitoring, and
// Thanos and Loki were unknown. Its alerts are in testdata/corpus
// (kp-crashloop-sector-namespaces, apa-postgresql-rules,
// kp-control-plane-target-discovery, apa-cert-manager-embedded-exporter,
// k8s-ai-observability-llm, apa-thanos-query, apa-thanos-compact-rules,
// apa-loki-embedded).

// countedSectors lists the sectors that counted signals (weight > 0) name.
func countedSectors(cl alert.Classification) []string {
	var out []string
	for _, s := range cl.Signals {
		if s.Weight > 0 && s.Sector != "" && !slices.Contains(out, s.Sector) {
			out = append(out, s.Sector)
		}
	}
	return out
}

func signalWeight(cl alert.Classification, kind, value string) (float64, bool) {
	for _, s := range cl.Signals {
		if s.Kind == kind && s.Value == value {
			return s.Weight, true
		}
	}
	return 0, false
}

const crashLoopExpr = `max_over_time(kube_pod_container_status_waiting_reason{reason="CrashLoopBackOff", job="kube-state-metrics"}[5m]) >= 1`

// A word of an annotation that quotes a context label's value is the
// context label again: it counts only to break a tie, never as a word of
// its own, so a namespace does not name a sector by being quoted.
func TestQuotedContextIsNotEvidence(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	for _, file := range []string{"kp-crashloop-sector-namespaces.json", "apa-postgresql-rules.json"} {
		for _, a := range corpusAlerts(t, file, "") {
			cl := c.Classify(a)
			if cl.Sector != alert.Unknown || len(cl.KPIs) != 0 || len(cl.Hints) != 0 || countedSectors(cl) != nil {
				t.Errorf("%s %s in namespace %s: %s", file, a.Labels["alertname"], a.Labels["namespace"], describe(cl))
			}
		}
	}

	crash := func(ns, pod, container string) *alert.Alert {
		return newAlert(kv("alertname", "KubePodCrashLooping", "job", "kube-state-metrics", "namespace", ns, "pod", pod, "container", container, "severity", "warning"),
			kv("summary", "Pod is crash looping.", "description", "Pod "+ns+"/"+pod+" ("+container+`) is in waiting state (reason: "CrashLoopBackOff").`),
			crashLoopExpr)
	}
	for _, a := range []*alert.Alert{
		crash("vllm", "vllm-llama3-70b-0", "vllm"),
		crash("feature-store", "app-7d9f8c-x2x4k", "app"), // a two-word phrase of a hyphenated value
		crash("backtest", "app-7d9f8c-x2x4k", "app"),      // a KPI word (BTT)
		crash("dwdm", "app-7d9f8c-x2x4k", "app"),          // a sector with sector-level hints
		crash("default", "redis-cache-0", "redis"),        // the pod and container, not the namespace
	} {
		if cl := c.Classify(a); cl.Sector != alert.Unknown || countedSectors(cl) != nil || len(cl.Hints) != 0 {
			t.Errorf("namespace %s pod %s: %s", a.Labels["namespace"], a.Labels["pod"], describe(cl))
		}
	}

	// Words match whole: "spark" is no word of "sparkle".
	cl := c.Classify(newAlert(kv("alertname", "ExecutorLost", "namespace", "sparkle"), kv("summary", "spark executor lost in sparkle"), `x > 1`))
	if w, ok := signalWeight(cl, kindToken, "spark"); !ok || w != weightAnnotation {
		t.Errorf("spark (namespace sparkle) is not an annotation word: %s", describe(cl))
	}
	// A word no context label holds still counts.
	cl = c.Classify(newAlert(kv("alertname", "KubePodCrashLooping", "namespace", "serving"), kv("description", "Pod serving/vllm-0 is in waiting state."), crashLoopExpr))
	if w, ok := signalWeight(cl, kindToken, "vllm"); !ok || w != weightAnnotation {
		t.Errorf("vllm (pod label absent) is not an annotation word: %s", describe(cl))
	}
	// Quoted or not, the context label still breaks a tie.
	cl = c.Classify(newAlert(kv("alertname", "GPUTemperatureHigh", "container", "vllm", "namespace", "serving"),
		kv("description", "GPU 0 of serving/vllm (vllm) is at 91C."), `DCGM_FI_DEV_GPU_TEMP > 85`))
	if cl.Sector != "llm-inference-gpu" || !hasSignal(cl, kindContext, "vllm") {
		t.Errorf("a quoted container no longer breaks the tie between GPU sectors: %s", describe(cl))
	}
}

// The same regression in any namespace gets the same sector, so the same
// thresholds and the same decision.
func TestRegressionDecisionDoesNotDependOnTheNamespace(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	eng, err := policies.New(policies.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 4, 9, 10, 0, 0, time.UTC)
	var first alert.Decision
	for i, ns := range []string{"default", "market-data", "spark", "dwdm", "pretrain", "backtest", "kafka"} {
		a := newAlert(kv("alertname", "HTTPLatencyRegression", "severity", "warning", "job", "api", "namespace", ns, "service", "gateway"),
			kv("summary", "p99 latency regressed vs 7d baseline", "description", "p99 latency of "+ns+"/gateway is 1.22x its 7-day median", "baseline_ratio", "1.22"),
			`histogram_quantile(0.99, sum by (le, namespace, service) (rate(http_request_duration_seconds_bucket[5m]))) / on(namespace, service) service:latency_p99:median7d > 1.1`)
		cl := c.Classify(a)
		d := eng.Decide(a, &cl, now)
		if cl.Sector != alert.Unknown || cl.Sensitivity != "" {
			t.Errorf("namespace %s: %s", ns, describe(cl))
		}
		if i == 0 {
			first = d
			continue
		}
		if d.Action != first.Action || d.Tier != first.Tier || d.Policy != first.Policy {
			t.Errorf("namespace %s: %s/%s by %s, namespace default: %s/%s by %s (%q)", ns, d.Action, d.Tier, d.Policy, first.Action, first.Tier, first.Policy, d.Reasons)
		}
	}
}

// absent(X) asks whether X's target still reports: X names its sector, not
// its KPI, and the alert is about availability.
func TestAbsentAsksAboutTheTarget(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	check := func(name string, a *alert.Alert, sector string) {
		t.Helper()
		cl := c.Classify(a)
		if cl.Sector != sector || len(cl.KPIs) != 0 || cl.IncidentClass != ClassAvailability || len(cl.Hints) != 0 {
			t.Errorf("%s: %s, want %s without KPI or hints, class availability", name, describe(cl), sector)
		}
	}
	check("k8s-ai-observability LLMMetricsAbsent", corpusAlerts(t, "k8s-ai-observability-llm.json", "LLMMetricsAbsent")[0], "llm-inference-gpu")
	check("absent of a vLLM gauge with the pod's labels",
		newAlert(kv("alertname", "LLMMetricsAbsent", "job", "vllm", "namespace", "llm-serving", "pod", "vllm-llama3-70b-0", "severity", "critical"),
			kv("summary", "Sin métricas vLLM — Pod no expone /metrics"), `absent(vllm:num_requests_running)`),
		"llm-inference-gpu")
	check("absent_over_time of the vLLM queue",
		newAlert(kv("alertname", "QueueMetricGone"), nil, `absent_over_time(vllm:num_requests_waiting{model_name="llama"}[10m]) == 1`),
		"llm-inference-gpu")
	check("the job of the absent selector names the target",
		newAlert(kv("alertname", "ServerMissing"), nil, `absent(process_start_time_seconds{job="triton"})`),
		"llm-inference-gpu")
	check("absent of a metric nothing names stays unknown",
		newAlert(kv("alertname", "ContainerAbsent"), nil, `absent(container_last_seen)`),
		alert.Unknown)

	// A metric also read outside absent() keeps its KPI.
	cl := c.Classify(newAlert(kv("alertname", "QueueBacklog"), nil, `vllm:num_requests_waiting > 50 or absent(vllm:num_requests_waiting)`))
	if cl.Sector != "llm-inference-gpu" || kpiOf(cl) != "QTS" {
		t.Errorf("queue backlog or absent: %s, want llm-inference-gpu/QTS", describe(cl))
	}
	// absent(up) keeps the up series' reading (docs/classification.md).
	cl = c.Classify(newAlert(kv("alertname", "PrometheusJobMissing"), nil, `absent(up{job="prometheus"})`))
	if cl.Sector != "slo-monitoring" || kpiOf(cl) != "UP" {
		t.Errorf("absent(up{job=prometheus}): %s, want slo-monitoring/UP", describe(cl))
	}
}

func TestScanExprFindsWhatAbsentAsksAbout(t *testing.T) {
	tests := []struct {
		expr   string
		absent []string // the metrics read only inside absent()
	}{
		{`absent(up{job="apiserver"})`, []string{"up"}},
		{`absent(vllm:num_requests_running)`, []string{"vllm:num_requests_running"}},
		{`absent_over_time(foo{a="b"}[5m]) or bar > 1`, []string{"foo"}},
		{`sum(rate(a_total[5m])) > 0 and absent(b{c="(d)"}) == 1`, []string{"b"}},
		{`absent(sum by (job) (rate(x[5m])) > 0)`, []string{"x"}},
		{`x > 1 or absent(x)`, nil},
		{`count(up{job="x"} == 1) < 2`, nil},
		{`histogram_quantile(0.99, sum by (le) (rate(y_bucket[5m]))) > absent(z)`, []string{"z"}},
	}
	for _, tt := range tests {
		var f exprFacts
		scanExpr(tt.expr, &f)
		var got []string
		for k := 0; k < f.nMetrics; k++ {
			if f.absentOnly(k) {
				got = append(got, f.metrics[k])
			}
		}
		if !slices.Equal(got, tt.absent) || f.absent() != (len(tt.absent) > 0) {
			t.Errorf("%s: absent-only %q, want %q", tt.expr, got, tt.absent)
		}
	}
}

// On an alert about a target's health (up, absent()), the prose names the
// scraping system as the observer ("disappeared from Prometheus target
// discovery"): not evidence that the alert is about monitoring.
func TestScrapingSystemInProseIsNotEvidence(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	var alerts []*alert.Alert
	alerts = append(alerts, corpusAlerts(t, "kp-control-plane.json", "KubeAPIDown")...)
	alerts = append(alerts, corpusAlerts(t, "kp-control-plane.json", "KubeSchedulerDown")...)
	alerts = append(alerts, corpusAlerts(t, "kp-control-plane-target-discovery.json", "")...)
	alerts = append(alerts, corpusAlerts(t, "apa-cert-manager-embedded-exporter.json", "Cert-managerAbsent")...)
	alerts = append(alerts, newAlert(kv("alertname", "PaymentsTargetMissing", "job", "payments"),
		kv("summary", "Prometheus failed to scrape payments", "description", "Target down for 5m."), `up{job="payments"} == 0`))
	for _, a := range alerts {
		cl := c.Classify(a)
		if cl.Sector != alert.Unknown || !slices.Equal(cl.Candidates, []string{"slo-monitoring"}) {
			t.Errorf("%s: %s, want unknown with slo-monitoring as candidate", a.Labels["alertname"], describe(cl))
		}
		if w, ok := signalWeight(cl, kindToken, "Prometheus"); !ok || w != 0 {
			t.Errorf("%s: Prometheus is not listed with weight 0: %s", a.Labels["alertname"], describe(cl))
		}
	}
	// In the alertname the scraping system counts, and a job still names it.
	for _, name := range []string{"PrometheusTargetMissing", "PrometheusJobMissing"} {
		a := corpusAlerts(t, "apa-prometheus.json", name)[0]
		if cl := c.Classify(a); cl.Sector != "slo-monitoring" || kpiOf(cl) != "UP" {
			t.Errorf("%s: %s, want slo-monitoring/UP", name, describe(cl))
		}
	}
	// Prose about Prometheus on an alert that is not about a target's health counts.
	cl := c.Classify(newAlert(kv("alertname", "RuleGroupSlow"), kv("summary", "Prometheus rule group is slow"),
		`prometheus_rule_group_last_duration_seconds > prometheus_rule_group_interval_seconds`))
	if w, ok := signalWeight(cl, kindToken, "Prometheus"); cl.Sector != "slo-monitoring" || !ok || w != weightAnnotation {
		t.Errorf("rule group slow: %s", describe(cl))
	}
}

// Thanos and Loki belong to the monitoring stack, as Prometheus and
// Alertmanager do: by their metric prefixes, their job words, their names in
// an alertname — never by a generic word, never by context alone.
func TestThanosAndLokiAreMonitoring(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	for _, file := range []string{"apa-thanos-query.json", "apa-thanos-compact-rules.json", "apa-loki-embedded.json"} {
		for _, a := range corpusAlerts(t, file, "") {
			if cl := c.Classify(a); cl.Sector != "slo-monitoring" {
				t.Errorf("%s %s: %s", file, a.Labels["alertname"], describe(cl))
			}
		}
	}
	for _, tc := range []struct {
		a      *alert.Alert
		sector string
	}{
		{newAlert(kv("alertname", "CompactorHalted"), nil, `thanos_compact_halted == 1`), "slo-monitoring"},
		{newAlert(kv("alertname", "RequestPanics"), nil, `sum(increase(loki_panic_total[5m])) by (namespace, job) > 0`), "slo-monitoring"},
		{newAlert(kv("alertname", "SidecarDown"), nil, `up{job="thanos-sidecar"} == 0`), "slo-monitoring"},
		{newAlert(kv("alertname", "LokiRequestErrors"), nil, `x > 10`), "slo-monitoring"},
		{crashLoopAlert("thanos", "thanos-query-0", "thanos-query"), alert.Unknown},
		{crashLoopAlert("loki", "loki-read-0", "loki"), alert.Unknown},
		{newAlert(kv("alertname", "QueryOverload"), kv("summary", "Query frontend overloaded"), `x < 1`), alert.Unknown},
		{newAlert(kv("alertname", "CompactionHalted"), kv("summary", "Compactor halted, store gateway and ruler degraded"), `x == 1`), alert.Unknown},
	} {
		if cl := c.Classify(tc.a); cl.Sector != tc.sector {
			t.Errorf("%s (%s): %s, want %s", tc.a.Labels["alertname"], tc.a.Labels["namespace"], describe(cl), tc.sector)
		}
	}
}

func crashLoopAlert(ns, pod, container string) *alert.Alert {
	return newAlert(kv("alertname", "KubePodCrashLooping", "job", "kube-state-metrics", "namespace", ns, "pod", pod, "container", container),
		kv("description", "Pod "+ns+"/"+pod+" ("+container+") is in waiting state."), crashLoopExpr)
}

// The context words, split once per alert, answer as splitting the value
// into words (splitWords) and comparing runs of them with the key would, in
// whichever context label the value is.
func TestContextRunAgreesWithSplitWords(t *testing.T) {
	reference := func(v string, key []byte) bool {
		var low [maxContextBytes]byte
		var spans [maxContextBytes]span
		_, ns := splitWords(v, low[:], spans[:])
		for i := 0; i < ns; i++ {
			run := ""
			for j := i; j < ns && len(run) < len(key); j++ {
				run += string(low[spans[j].start:spans[j].end])
				if run == string(key) {
					return true
				}
			}
		}
		return false
	}
	values := []string{"vllm", "vllm-llama3-70b-0", "feature-store", "FeatureStore", "sparkle", "pg-feature-store-0:9187",
		"KVCacheServer", "kvcache", "HTTPServer2", "redis-0.redis.svc:9121", "loki/loki-read", "a1B2c", "vLLM", "ABCDef",
		"market_data", "x", "", "thanos-query-0:10902", "optical-dwdm", "Über-vllm", "10.0.0.1:8000"}
	keys := []string{"vllm", "featurestore", "feature", "store", "spark", "kvcache", "kv", "cache", "server", "redis",
		"loki", "read", "http", "server2", "b2c", "a1", "def", "abc", "marketdata", "market", "data", "x", "thanos", "query",
		"optical", "dwdm", "ber", "llm", "10", "8000", "0"}
	rng := []byte("aZ-9.:/_bQcxV")
	for n := 0; n < 2000; n++ { // and some random mixtures of letters, digits, cases and separators
		b := make([]byte, n%17)
		for i := range b {
			b[i] = rng[(n*7+i*13+i*i)%len(rng)]
		}
		values = append(values, string(b))
	}
	for n, v := range values {
		vi := n % len(contextLabels)
		var w ctxWords
		w.split(vi, v)
		w.split((vi+1)%len(contextLabels), values[(n+1)%len(values)]) // a neighbour, which must not leak into v's words
		for _, k := range append(keys, "az", "9", "bq", "cxv", "zb", "v") {
			if got, want := w.hasRun(vi, v, []byte(k)), reference(v, []byte(k)); got != want {
				t.Errorf("hasRun(%q, %q) = %v, splitting says %v", v, k, got, want)
			}
		}
	}
}
