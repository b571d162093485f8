package policies

import (
	"testing"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// Conventions of operations teams' own production rules (an audit of
// Wikimedia's and GitLab's).

// Wikimedia's `severity: task` opens a Phabricator task: a ticket by the
// severity policy, not an unrecognised severity left to the default.
func TestSeverityTaskIsATicket(t *testing.T) {
	runFiring(t, newEngine(t), firingCases{
		{"severity task", map[string]string{"severity": "task", "team": "sre"}, nil, want{alert.ActionTicket, PolicySeverity, "task", `severity="task" → ticket`}},
	})
}

// A rule over Sloth's sloth_slo_info series (Wikimedia's
// SlothSliErrorRatioRateAbsent: the SLO's recording rules stopped) keeps
// its sloth_id, sloth_severity and sloth_version/sloth_mode/sloth_spec: it
// paged as the SLO's burn whatever its own severity said, and joined the
// SLO's incident. It is decided by its severity, with no SLO identity.
func TestARuleOverSlothsInfoSeriesIsNoSLOBurn(t *testing.T) {
	labels := map[string]string{"alertname": "SlothSliErrorRatioRateAbsent", "sloth_id": "test-kitchen-latency", "sloth_service": "test-kitchen",
		"sloth_slo": "latency", "sloth_severity": "page", "sloth_version": "v0.11.0", "sloth_mode": "cli-gen-prom", "sloth_spec": "prometheus/v1",
		"severity": "warning", "team": "o11y"}
	runFiring(t, newEngine(t), firingCases{
		{"meta alert", labels, nil, want{alert.ActionTicket, PolicySeverity, "warning", "not an SLO's burn"}},
	})
	if id := SLOIdentity(firing(labels)); id != "" {
		t.Errorf("SLO identity %q, want none (the rule is about Sloth's series)", id)
	}
	// Sloth's own burn alert of that SLO still pages as Sloth says.
	burn := map[string]string{"alertname": "SLOLatencyBurn", "sloth_id": "test-kitchen-latency", "sloth_service": "test-kitchen", "sloth_slo": "latency", "sloth_severity": "page", "severity": "warning"}
	runFiring(t, newEngine(t), firingCases{{"burn alert", burn, nil, want{alert.ActionPage, PolicySloth, "page", ""}}})
}

// A plain slo label's identity names the Kubernetes namespace as
// Prometheus' example scrape configs write it (kubernetes_namespace), as
// it names namespace: two namespaces' pages of one SLO category are two
// SLOs (the second's tickets were suppressed by the first's page).
func TestPlainSLOIdentityNamesKubernetesNamespace(t *testing.T) {
	a := SLOIdentity(firing(map[string]string{"alertname": "AvailabilityLow", "slo": "availability", "kubernetes_namespace": "airflow-main"}))
	b := SLOIdentity(firing(map[string]string{"alertname": "AvailabilityLow", "slo": "availability", "kubernetes_namespace": "airflow-analytics"}))
	if a == b || a != "availability/kubernetes_namespace=airflow-main" {
		t.Errorf("identities %q and %q, want two, naming kubernetes_namespace", a, b)
	}
}
