// Package notifytest holds fixture notifications shared by the tests of the
// notify integrations.
package notifytest

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/alertmanager/template"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// T0 is the fixed start time of fixture alerts.
var T0 = time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)

// Result returns a classified, decided alert of sector llm-inference-gpu
// with KPI TTFT, named alertname, with fingerprint fp and status
// ("firing" or "resolved").
func Result(alertname, fp, status string, action alert.Action) *alert.Result {
	a := &alert.Alert{Alert: template.Alert{
		Status: status,
		Labels: template.KV{
			"alertname": alertname, "job": "vllm", "instance": "gpu-node-1:8000",
			"service": "chat", "severity": "critical",
		},
		Annotations: template.KV{
			"summary":       "TTFT p99 is 2.4s (SLO 1s)",
			"description":   "Time to first token of model llama-70b breaches its SLO.",
			"runbook_url":   "https://runbooks.example.com/ttft",
			"dashboard_url": "https://grafana.example.com/d/ttft",
		},
		StartsAt:     T0,
		GeneratorURL: "http://prometheus.example.com/graph?g0.expr=histogram_quantile%280.99%2C+vllm%3Atime_to_first_token_seconds_bucket%29",
		Fingerprint:  fp,
	}}
	if status == "resolved" {
		a.EndsAt = T0.Add(30 * time.Minute)
	}
	return &alert.Result{
		Alert: a,
		Classification: alert.Classification{
			Sector:        "llm-inference-gpu",
			SectorName:    "LLM Inference (GP-GPU Service Infra)",
			KPIs:          []alert.KPI{{ID: "TTFT", Name: "time to first token"}},
			AlertStyle:    "SLO-derived or baseline-relative",
			Sensitivity:   "medium",
			IncidentClass: "latency",
			Confidence:    0.9,
			Signals:       []alert.Signal{{Kind: "metric", Value: "vllm:time_to_first_token_seconds_bucket", Sector: "llm-inference-gpu", KPI: "TTFT", Weight: 0.8}},
			Hints:         []alert.Hint{{ID: "queue-time", Text: "queue time is 82% of latency: saturation, not slow compute — scale out or shed load", Specific: true}},
		},
		Decision: alert.Decision{
			Action:  action,
			Policy:  "burn-rate",
			Tier:    "1h/5m>14.4",
			Reasons: []string{"burn rate 15.2 > 14.4 over 1h and 16.0 > 14.4 over 5m"},
		},
		Incident:  "llm-inference-gpu/chat/TTFT",
		Receivers: []string{"oncall"},
	}
}

// Notification returns a notification of incident "llm-inference-gpu/chat/TTFT"
// to receiver carrying results, with webhook data whose external URL is
// http://alertmanager.example.com.
func Notification(receiver string, kind alert.Kind, action alert.Action, results ...*alert.Result) *alert.Notification {
	d := &template.Data{
		Receiver:          receiver,
		Status:            "firing",
		GroupLabels:       template.KV{"alertname": "TTFTHigh"},
		CommonLabels:      template.KV{"alertname": "TTFTHigh", "job": "vllm"},
		CommonAnnotations: template.KV{},
		ExternalURL:       "http://alertmanager.example.com",
	}
	resolved := len(results) > 0
	for _, r := range results {
		d.Alerts = append(d.Alerts, r.Alert.Alert)
		if r.Alert.Status != "resolved" {
			resolved = false
		}
	}
	if resolved {
		d.Status = "resolved"
	}
	// The annotations the alerts share, as routing computes them (the
	// labels stay the fixed ones above).
	labels := d.CommonLabels
	alert.SetCommon(d)
	d.CommonLabels = labels
	return &alert.Notification{
		Receiver: receiver,
		Incident: "llm-inference-gpu/chat/TTFT",
		Kind:     kind,
		Action:   action,
		Paged:    action == alert.ActionPage, // a page routed to PagerDuty too
		Results:  results,
		Data:     d,
	}
}

// Waits records the retry waits of a notify.RetryPolicy (pass Wait as its
// Wait func) so that no test sleeps through a backoff. Safe for concurrent use.
type Waits struct {
	mu sync.Mutex
	d  []time.Duration
}

// Wait records d and returns ctx.Err() without sleeping.
func (w *Waits) Wait(ctx context.Context, d time.Duration) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.d = append(w.d, d)
	return ctx.Err()
}

// All returns the waits recorded so far.
func (w *Waits) All() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Duration(nil), w.d...)
}

// SyncBuffer is a bytes.Buffer safe for concurrent writers (loggers).
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns everything written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Outcomes reads alertrouter_notifications_total of integration from reg
// (where notify.NewMetrics registered it), by outcome.
func Outcomes(t testing.TB, reg prometheus.Gatherer, integration string) map[string]float64 {
	t.Helper()
	return byLabel(t, reg, "alertrouter_notifications_total", integration, "outcome")
}

// Failures reads alertrouter_notification_failures_total of integration by
// reason.
func Failures(t testing.TB, reg prometheus.Gatherer, integration string) map[string]float64 {
	t.Helper()
	return byLabel(t, reg, "alertrouter_notification_failures_total", integration, "reason")
}

// RenderFailures reads alertrouter_template_render_failures_total by
// "receiver/field", both reasons summed.
func RenderFailures(t testing.TB, reg prometheus.Gatherer) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for k, v := range RenderFailuresByReason(t, reg) {
		out[k[:strings.LastIndexByte(k, '/')]] += v
	}
	return out
}

// RenderFailuresByReason reads alertrouter_template_render_failures_total
// by "receiver/field/reason".
func RenderFailuresByReason(t testing.TB, reg prometheus.Gatherer) map[string]float64 {
	t.Helper()
	return counters(t, reg, "alertrouter_template_render_failures_total", func(l map[string]string) (string, bool) {
		return l["receiver"] + "/" + l["field"] + "/" + l["reason"], true
	})
}

// byLabel reads the counter name of integration by the value of label.
func byLabel(t testing.TB, reg prometheus.Gatherer, name, integration, label string) map[string]float64 {
	t.Helper()
	return counters(t, reg, name, func(l map[string]string) (string, bool) {
		return l[label], l["integration"] == integration
	})
}

// counters reads the counter name by the key key makes of each series'
// labels, skipping the series it reports false for.
func counters(t testing.TB, reg prometheus.Gatherer, name string, key func(labels map[string]string) (string, bool)) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if k, ok := key(labels); ok {
				out[k] = m.GetCounter().GetValue()
			}
		}
	}
	return out
}
