// Package notifytest holds test helpers shared by the notify integrations:
// an in-memory routing.Store and fixture notifications.
package notifytest

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/alertmanager/template"

	"github.com/alertrouter/alertrouter/routing"
)

// Store is a map-based routing.Store for tests (TTLs are kept but never
// expire). Safe for concurrent use.
type Store struct {
	mu   sync.Mutex
	kv   map[string]string
	sets map[string]map[string]struct{}
	// Err, when set, is returned by every call, to simulate an outage.
	Err error
}

var _ routing.Store = (*Store)(nil)

// NewStore returns an empty Store.
func NewStore() *Store {
	return &Store{kv: map[string]string{}, sets: map[string]map[string]struct{}{}}
}

func (s *Store) fail() error {
	if s.Err != nil {
		return fmt.Errorf("%w: %w", routing.ErrStoreUnavailable, s.Err)
	}
	return nil
}

// SetNX implements routing.Store.
func (s *Store) SetNX(_ context.Context, entries []routing.Entry) ([]bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.fail(); err != nil {
		return nil, err
	}
	out := make([]bool, len(entries))
	for i, e := range entries {
		if _, ok := s.kv[e.Key]; !ok {
			s.kv[e.Key] = e.Value
			out[i] = true
		}
	}
	return out, nil
}

// Set implements routing.Store.
func (s *Store) Set(_ context.Context, entries []routing.Entry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.fail(); err != nil {
		return err
	}
	for _, e := range entries {
		s.kv[e.Key] = e.Value
	}
	return nil
}

// Get implements routing.Store.
func (s *Store) Get(_ context.Context, keys []string) ([]string, []bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.fail(); err != nil {
		return nil, nil, err
	}
	vals, found := make([]string, len(keys)), make([]bool, len(keys))
	for i, k := range keys {
		vals[i], found[i] = s.kv[k]
	}
	return vals, found, nil
}

// DeleteIfEqual implements routing.Store.
func (s *Store) DeleteIfEqual(_ context.Context, entries []routing.Entry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.fail(); err != nil {
		return err
	}
	for _, e := range entries {
		if v, ok := s.kv[e.Key]; ok && v == e.Value {
			delete(s.kv, e.Key)
		}
	}
	return nil
}

// AddMembers implements routing.Store.
func (s *Store) AddMembers(_ context.Context, key string, _ time.Duration, members ...string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.fail(); err != nil {
		return err
	}
	set := s.sets[key]
	if set == nil {
		set = map[string]struct{}{}
		s.sets[key] = set
	}
	for _, m := range members {
		set[m] = struct{}{}
	}
	return nil
}

// RemoveMembers implements routing.Store.
func (s *Store) RemoveMembers(_ context.Context, key string, members ...string) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.fail(); err != nil {
		return 0, err
	}
	set := s.sets[key]
	for _, m := range members {
		delete(set, m)
	}
	return int64(len(set)), nil
}

// Members implements routing.Store.
func (s *Store) Members(_ context.Context, key string) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.fail(); err != nil {
		return nil, err
	}
	var out []string
	for m := range s.sets[key] {
		out = append(out, m)
	}
	return out, nil
}

// Ping implements routing.Store.
func (s *Store) Ping(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fail()
}

// Close implements routing.Store.
func (s *Store) Close() error { return nil }

// Value returns the value at key, for assertions.
func (s *Store) Value(key string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.kv[key]
	return v, ok
}

// T0 is the fixed start time of fixture alerts.
var T0 = time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)

// Result returns a classified, decided alert of sector llm-inference-gpu
// with KPI TTFT, named alertname, with fingerprint fp and status
// ("firing" or "resolved").
func Result(alertname, fp, status string, action routing.Action) *routing.Result {
	a := &routing.Alert{Alert: template.Alert{
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
	return &routing.Result{
		Alert: a,
		Classification: routing.Classification{
			Sector:        "llm-inference-gpu",
			SectorName:    "LLM Inference (GP-GPU Service Infra)",
			KPIs:          []routing.KPI{{ID: "TTFT", Name: "time to first token"}},
			AlertStyle:    "SLO-derived or baseline-relative",
			Sensitivity:   "medium",
			IncidentClass: "latency",
			Confidence:    0.9,
			Signals:       []routing.Signal{{Kind: "metric", Value: "vllm:time_to_first_token_seconds_bucket", Sector: "llm-inference-gpu", KPI: "TTFT", Weight: 0.8}},
			Hints:         []routing.Hint{{ID: "queue-time", Text: "queue time is 82% of latency: saturation, not slow compute — scale out or shed load", Specific: true}},
		},
		Decision: routing.Decision{
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
func Notification(receiver string, kind routing.Kind, action routing.Action, results ...*routing.Result) *routing.Notification {
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
	return &routing.Notification{
		Receiver: receiver,
		Incident: "llm-inference-gpu/chat/TTFT",
		Kind:     kind,
		Action:   action,
		Results:  results,
		Data:     d,
	}
}
