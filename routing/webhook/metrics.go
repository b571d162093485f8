package webhook

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the edge's own metrics. Create them with NewMetrics.
type Metrics struct {
	webhooks        *prometheus.CounterVec
	webhookDuration prometheus.Histogram
}

// webhookOutcomes are the (outcome, code) pairs of alertrouter_webhooks_total
// the edge counts (edge.go).
var webhookOutcomes = []struct{ outcome, code string }{
	{"ok", "200"},
	{"failed", "502"}, {"failed", "503"},
	{"overloaded", "503"},
	{"body_incomplete", "503"}, // body not received whole: read timeout, connection broken mid-body
	{"unauthorized", "401"},
	{"bad_input", "400"}, {"bad_input", "413"}, {"bad_input", "415"},
	{"not_alertmanager", "404"}, // alerts posted to Alertmanager's API path: the sender points at the wrong service
	{"panic", "500"},
}

// NewMetrics registers the edge metrics on reg (nil: not registered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		webhooks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "alertrouter_webhooks_total",
			Help: "Webhooks received, by outcome and HTTP status code.",
		}, []string{"outcome", "code"}),
		webhookDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "alertrouter_webhook_duration_seconds",
			Help:    "Time from reading a webhook to answering it.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}),
	}
	// Every outcome with the status codes it is answered with, at zero, so
	// that increase() sees the first one (a counter that appears at 1 has
	// no earlier sample to increase from): above all the panic outcome,
	// which the self-monitoring alert AlertrouterPanicked watches.
	for _, oc := range webhookOutcomes {
		m.webhooks.WithLabelValues(oc.outcome, oc.code)
	}
	if reg != nil {
		reg.MustRegister(m.webhooks, m.webhookDuration)
	}
	return m
}

// countPanic counts a webhook whose handling panicked (answered 500).
func (m *Metrics) countPanic() {
	if m != nil {
		m.webhooks.WithLabelValues("panic", "500").Inc()
	}
}
