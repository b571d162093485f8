package webhook

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the edge's own metrics. Create them with NewMetrics.
type Metrics struct {
	webhooks        *prometheus.CounterVec
	webhookDuration prometheus.Histogram
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
