package policies

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"testing"

	"github.com/prometheus/alertmanager/template"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// webhook is the subset of an Alertmanager webhook (version 4) the fixture
// test reads.
type webhook struct {
	Version  string           `json:"version"`
	GroupKey string           `json:"groupKey"`
	Status   string           `json:"status"`
	Receiver string           `json:"receiver"`
	Alerts   []template.Alert `json:"alerts"`
}

// fixtureSensitivity is the regression sensitivity of the sectors the
// fixtures use (SPEC §3); the real classifier lives in another package.
var fixtureSensitivity = map[string]string{
	"hft-low-latency-exec":      "high",
	"llm-training-pretrain-moe": "low",
	"llm-inference-api":         "medium",
	"llm-inference-gpu":         "medium",
	"llm-prompt-cache-compute":  "medium",
}

// TestWebhookFixtures decodes each realistic payload and checks every
// alert's decision against its test_expect_action and test_expect_policy
// annotations.
func TestWebhookFixtures(t *testing.T) {
	e := newEngine(t)
	for _, name := range []string{"sloth", "pyrra", "burn-rate", "capacity", "regression", "regression-direction"} {
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(fixtures, name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			var w webhook
			if err := json.Unmarshal(b, &w); err != nil {
				t.Fatalf("decode %s.json: %v", name, err)
			}
			if w.Version != "4" || w.Receiver == "" || w.GroupKey == "" || len(w.Alerts) == 0 {
				t.Fatalf("%s.json is not a complete v4 webhook: version %q receiver %q groupKey %q, %d alerts",
					name, w.Version, w.Receiver, w.GroupKey, len(w.Alerts))
			}
			for i, ta := range w.Alerts {
				a := &alert.Alert{Alert: ta}
				var c *alert.Classification
				if s := ta.Labels["sector"]; s != "" {
					c = &alert.Classification{Sector: s, Sensitivity: fixtureSensitivity[s]}
				}
				d := e.Decide(a, c, ta.StartsAt.Add(15*60e9))
				wantAction := alert.Action(ta.Annotations["test_expect_action"])
				wantPolicy := ta.Annotations["test_expect_policy"]
				if wantAction == "" || wantPolicy == "" {
					t.Fatalf("alert %d has no test_expect_action / test_expect_policy annotation", i)
				}
				if d.Action != wantAction || d.Policy != wantPolicy {
					t.Errorf("alert %d (%s %v): %s by %s, want %s by %s; reasons %q",
						i, ta.Status, ta.Labels, d.Action, d.Policy, wantAction, wantPolicy, d.Reasons)
				}
				if name == "sloth" || name == "pyrra" {
					if d.SLO == "" {
						t.Errorf("alert %d: no SLO identity", i)
					}
				}
			}
		})
	}
}

// TestOneSLOOneIdentity checks that the alerts one generator fires for one
// SLO share their identity, which the pipeline's suppression relies on.
func TestOneSLOOneIdentity(t *testing.T) {
	cases := map[string]int{"sloth": 1, "pyrra": 3}
	for name, wantIDs := range cases {
		b, err := os.ReadFile(filepath.Join(fixtures, name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var w webhook
		if err := json.Unmarshal(b, &w); err != nil {
			t.Fatal(err)
		}
		ids := map[string]bool{}
		for _, ta := range w.Alerts {
			ids[SLOIdentity(&alert.Alert{Alert: ta})] = true
		}
		if len(ids) != wantIDs {
			t.Errorf("%s: %d SLO identities %v, want %d", name, len(ids), ids, wantIDs)
		}
	}
}

// Both replicas of an HA pair of Prometheus servers (or Thanos rulers)
// whose Alertmanager does not drop the replica label send one SLO's alert
// with their own value: one SLO, one identity — it paged twice, under two
// identities (an audit). Sloth's, Pyrra's and a hand-written burn alert's.
func TestOneSLOOneIdentityAcrossHAReplicas(t *testing.T) {
	for _, base := range []template.KV{
		{"alertname": "CheckoutAvailability", "sloth_id": "checkout-requests-availability", "sloth_service": "checkout", "sloth_slo": "requests-availability", "sloth_severity": "page", "cluster": "prod"},
		{"alertname": "APIErrorBudgetBurn", "slo": "api-errors", "long": "1h", "short": "5m", "severity": "critical", "cluster": "prod"},
		{"alertname": "KubeAPIErrorBudgetBurn", "long": "1h", "short": "5m", "severity": "critical", "cluster": "prod"},
	} {
		for _, replica := range []string{"prometheus_replica", "replica", "rule_replica", "thanos_ruler_replica", "__replica__"} {
			ids := map[string]bool{}
			for _, v := range []string{"A", "B"} {
				ls := maps.Clone(base)
				ls[replica] = v
				ids[SLOIdentity(&alert.Alert{Alert: template.Alert{Labels: ls}})] = true
			}
			if len(ids) != 1 {
				t.Errorf("%s with %s: identities %v, want one", base["alertname"], replica, ids)
			}
		}
	}
}

// The severity policy reads a severity label in any case (`Severity` as
// `severity`): one SLO's page and ticket told apart by `Severity` alone
// share their identity, so the page suppresses the ticket (an audit: two
// identities, an extra ticket). Pyrra's, Sloth's and a hand-written burn
// alert's.
func TestOneSLOOneIdentityWhateverTheSeverityLabelsCase(t *testing.T) {
	for _, base := range []template.KV{
		{"alertname": "CheckoutAvailability", "sloth_id": "checkout-requests-availability", "sloth_severity": "page", "cluster": "prod"},
		{"alertname": "APIErrorBudgetBurn", "slo": "api-errors", "long": "1h", "short": "5m", "cluster": "prod"},
		{"alertname": "KubeAPIErrorBudgetBurn", "long": "1h", "short": "5m", "cluster": "prod"},
	} {
		for _, name := range []string{"Severity", "SEVERITY", "Priority"} {
			ids := map[string]bool{}
			for _, v := range []string{"critical", "warning"} {
				ls := maps.Clone(base)
				ls[name] = v
				ids[SLOIdentity(&alert.Alert{Alert: template.Alert{Labels: ls}})] = true
			}
			if len(ids) != 1 {
				t.Errorf("%s with %s: identities %v, want one", base["alertname"], name, ids)
			}
		}
	}
}
