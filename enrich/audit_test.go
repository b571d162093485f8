package enrich

import (
	"fmt"
	"strings"
	"testing"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// The tests of this file use real alerts of third-party rule files, as
// audit2 fired them at the router (testdata/corpus: gitlab-*, apa-istio,
// grafana-*-mixin, kp-control-plane-nodes, openshift-node-clock-ptp,
// irp-gpu-health).

// corpusAlerts returns the alerts named alertname of testdata/corpus/file.
func corpusAlerts(t *testing.T, file, alertname string) []*alert.Alert {
	t.Helper()
	var out []*alert.Alert
	for _, f := range loadCorpus(t) {
		if f.name != file {
			continue
		}
		for i := range f.Payload.Alerts {
			if alertname == "" || f.Payload.Alerts[i].Labels["alertname"] == alertname {
				out = append(out, &alert.Alert{Alert: f.Payload.Alerts[i]})
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("no alert %q in testdata/corpus/%s", alertname, file)
	}
	return out
}

func hintIDs(cl alert.Classification) []string {
	ids := make([]string, 0, len(cl.Hints))
	for _, h := range cl.Hints {
		ids = append(ids, h.ID)
	}
	return ids
}

func kpiIDs(cl alert.Classification) []string {
	ids := make([]string, 0, len(cl.KPIs))
	for _, k := range cl.KPIs {
		ids = append(ids, k.ID)
	}
	return ids
}

func describe(cl alert.Classification) string {
	return fmt.Sprintf("%s kpis=%v hints=%v class=%s signals %s", cl.Sector, kpiIDs(cl), hintIDs(cl), cl.IncidentClass, signalText(cl.Signals))
}

// GitLab's saturation alerts compare a component's saturation with its
// threshold, slo:max:hard:gitlab_component_saturation:ratio: a recording
// rule of the "slo:" level that is not one of Sloth's error-budget rules.
func TestSaturationThresholdsAreNotErrorBudgets(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	for _, a := range corpusAlerts(t, "gitlab-saturation.json", "component_saturation_slo_out_of_bounds") {
		cl := c.Classify(a)
		bad := cl.Sector == "slo-monitoring" || cl.IncidentClass == ClassBudgetBurn
		for _, k := range cl.KPIs {
			bad = bad || k.ID == "EBR"
		}
		for _, h := range cl.Hints {
			bad = bad || h.ID == HintBurnExemplars
		}
		for _, s := range cl.Signals {
			bad = bad || (s.Kind == kindMetric && s.Sector != "")
		}
		if bad {
			t.Errorf("%s (component %s) read as an error budget: %s", a.Labels["alertname"], a.Labels["component"], describe(cl))
		}
	}
}

// Sloth's own recording rules (slok/sloth pkg/common/conventions) still
// read as error-budget burn, each by its name.
func TestSlothRecordingRulesReadAsErrorBudgetBurn(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	for _, expr := range []string{
		`max(slo:sli_error:ratio_rate5m{sloth_id="a"} > (14.4 * 0.001)) without (sloth_window) and max(slo:sli_error:ratio_rate1h{sloth_id="a"} > (14.4 * 0.001)) without (sloth_window)`,
		`slo:sli_error:ratio_rate30d{sloth_service="chat"} > 0.001`,
		`slo:period_error_budget_remaining:ratio{sloth_service="chat"} < 0.1`,
		`slo:current_burn_rate:ratio{sloth_service="chat"} > 14.4`,
		`slo:period_burn_rate:ratio{sloth_service="chat"} > 1`,
		`slo:error_budget:ratio{sloth_service="chat"} < 0.001`,
		`slo:objective:ratio{sloth_service="chat"} < 0.99`,
		`slo:time_period:days{sloth_service="chat"} != 30`,
	} {
		cl := c.Classify(newAlert(kv("alertname", "ChatSLO"), nil, expr))
		if cl.Sector != "slo-monitoring" || cl.PrimaryKPI() != "EBR" {
			t.Errorf("%s: got %s", expr, describe(cl))
		}
	}
}

// An ordinary word that the catalog also uses never classifies an alert
// alone: it is listed with weight 0 and the alert stays unknown, without
// the word's KPI.
func TestGenericWordsDoNotClassifyAlone(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	for _, tt := range []struct {
		file, alertname, word string
	}{
		{"apa-istio.json", "IstioPilotDuplicateEntry", "Duplicate"},
		{"grafana-istio-mixin.json", "IstioPilotDuplicateEntry", "Duplicate"},
		{"grafana-openstack-mixin.json", "OpenStackPlacementHighVCPUUsage", "VCPU"},
		{"gitlab-anti-abuse.json", "RunnerJobDurationSpikeDetected", "JobDuration"},
		{"kp-control-plane-nodes.json", "KubeNodeEviction", "Eviction"},
		{"kp-control-plane-nodes.json", "KubeNodePressure", "eviction"},
		{"grafana-aerospike-mixin.json", "AerospikeNamespaceRejectingWrites", "clock skew"},
		{"gitlab-saturation.json", "component_saturation_slo_out_of_bounds", "eviction"}, // Trickster cache usage
	} {
		found := false
		for _, a := range corpusAlerts(t, tt.file, tt.alertname) {
			cl := c.Classify(a)
			if !hasSignal(cl, kindToken, tt.word) {
				continue
			}
			found = true
			if cl.Sector != alert.Unknown || len(cl.KPIs) != 0 {
				t.Errorf("%s/%s: the word %q classifies it alone: %s", tt.file, tt.alertname, tt.word, describe(cl))
			}
			for _, s := range cl.Signals {
				if s.Value == tt.word && s.Weight != 0 {
					t.Errorf("%s/%s: uncorroborated %q weighs %v, want 0", tt.file, tt.alertname, tt.word, s.Weight)
				}
			}
		}
		if !found {
			t.Errorf("%s/%s: no signal %q: the test proves nothing", tt.file, tt.alertname, tt.word)
		}
	}
}

// A generic word counts when a signal that is not a generic word points at
// its sector: a label, a metric family, a job, or a specific word.
func TestGenericWordsCountWhenASpecificSignalAgrees(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	weightOf := func(cl alert.Classification, kind, value string) float64 {
		for _, s := range cl.Signals {
			if s.Kind == kind && strings.EqualFold(s.Value, value) {
				return s.Weight
			}
		}
		return -1
	}
	t.Run("Memcached's eviction rate: the memcached_ family agrees", func(t *testing.T) {
		cl := c.Classify(corpusAlerts(t, "apa-memcached.json", "MemcachedHighEvictionRate")[0])
		if cl.Sector != "llm-prompt-cache-storage" || cl.PrimaryKPI() != "EVR" || weightOf(cl, kindToken, "eviction") <= 0 {
			t.Errorf("got %s", describe(cl))
		}
	})
	t.Run("the ptp job of a clock rule: the OWD metric agrees", func(t *testing.T) {
		cl := c.Classify(corpusAlerts(t, "openshift-node-clock-ptp.json", "NodeClockSkewDetected")[0])
		if cl.Sector != alert.Unknown || cl.PrimaryKPI() != "OWD" || weightOf(cl, kindJob, "ptp") != weightJob {
			t.Errorf("got %s", describe(cl))
		}
	})
	t.Run("Traefik v1's backend error ratio: the family of v2's service requests", func(t *testing.T) {
		cl := c.Classify(newAlert(kv("alertname", "TraefikHighHttp5xxErrorRateBackend", "severity", "critical"), kv("summary", "Traefik high HTTP 5xx error rate backend (instance traefik-0)"),
			`sum(rate(traefik_backend_requests_total{code=~"5.*"}[3m])) by (backend) / sum(rate(traefik_backend_requests_total[3m])) by (backend) * 100 > 5`))
		if cl.Sector != "llm-inference-api" || cl.PrimaryKPI() != "ERR" {
			t.Errorf("got %s", describe(cl))
		}
	})
	t.Run("a sector label", func(t *testing.T) {
		cl := c.Classify(newAlert(kv("alertname", "HypervisorVcpuOvercommit", "sector", "hft-vm-clusters"), nil, ""))
		if cl.Sector != "hft-vm-clusters" || weightOf(cl, kindToken, "Hypervisor") != weightAlertname {
			t.Errorf("got %s", describe(cl))
		}
	})
	t.Run("a specific word with the same KPI after the generic one", func(t *testing.T) {
		cl := c.Classify(newAlert(kv("alertname", "CacheEvictionsHigh"), kv("summary", "EVR above 5% of keys"), ""))
		if cl.Sector != "llm-prompt-cache-storage" || cl.PrimaryKPI() != "EVR" || weightOf(cl, kindToken, "Evictions") != weightAlertname {
			t.Errorf("got %s", describe(cl))
		}
	})
	t.Run("two generic words do not corroborate each other", func(t *testing.T) {
		cl := c.Classify(newAlert(kv("alertname", "HypervisorVcpuOvercommit"), nil, ""))
		if cl.Sector != alert.Unknown {
			t.Errorf("got %s", describe(cl))
		}
	})
}

// A sector's alert without KPI gets no KPI-specific hint: a TLS certificate
// of a load balancer is not about queue time or the KV cache, a GPU's XID
// error not about prefill and decode, a full Ceph cluster not about spill
// and consumer lag.
func TestSectorHintsNeedAKPIOrIncidentClass(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	for _, tt := range []struct {
		file, alertname, sector string
	}{
		{"grafana-traefik-mixin.json", "TraefikTLSCertificatesExpiring", "llm-prompt-cache-lb"},
		{"grafana-traefik-mixin.json", "TraefikTLSCertificatesExpiringSoon", "llm-prompt-cache-lb"},
		{"grafana-haproxy-mixin.json", "HAProxyDroppingLogs", "llm-prompt-cache-lb"},
		{"grafana-f5-bigip-mixin.json", "BigIPLowNodeAvailabilityStatus", "llm-prompt-cache-lb"},
		{"irp-gpu-health.json", "GPUXIDError", "llm-inference-gpu"},
		{"irp-gpu-health.json", "GPUECCDoubleBitError", "llm-inference-gpu"},
		{"grafana-ceph-mixin.json", "CephDiskLessThan5Left", "hpc-big-data"},
		{"grafana-ceph-mixin.json", "CephDiskLessThan15Left", "hpc-big-data"},
	} {
		cl := c.Classify(corpusAlerts(t, tt.file, tt.alertname)[0])
		if cl.Sector != tt.sector || len(cl.KPIs) != 0 {
			t.Errorf("%s: got %s, want %s without KPI (the test would prove nothing)", tt.alertname, describe(cl), tt.sector)
			continue
		}
		if len(cl.Hints) != 0 {
			t.Errorf("%s: hints %v for an alert without KPI or hinted class: %s", tt.alertname, hintIDs(cl), describe(cl))
		}
	}
}

// Without KPI, the incident class still brings the hints of the sector's
// KPIs of that class that diagnose it.
func TestSectorHintsFollowTheIncidentClass(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	for _, tt := range []struct {
		name  string
		alert *alert.Alert
		want  string
	}{
		{"a BIG-IP connection queue (saturation) gets queue-time, not kv-cache",
			corpusAlerts(t, "grafana-f5-bigip-mixin.json", "BigIPHighConnectionQueueDepth")[0], HintQueueTime},
		{"a slow vLLM (latency) gets queue-time and prefill-decode, not kv-cache",
			newAlert(kv("alertname", "VLLMSlowResponses"), nil, `rate(vllm:request_success_total[5m]) < 1`), HintQueueTime + "," + HintPrefillDecode},
		{"a dark-fiber alert gets the sector-level optical-health",
			newAlert(kv("alertname", "X", "sector", "hpc-dark-fiber"), nil, ""), HintOpticalHealth},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cl := c.Classify(tt.alert)
			if got := strings.Join(hintIDs(cl), ","); got != tt.want {
				t.Errorf("hints %q, want %q: %s", got, tt.want, describe(cl))
			}
		})
	}
}
