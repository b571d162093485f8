package slolive

import "github.com/prometheus/client_golang/prometheus"

// The results of a lookup, the values of the result label.
const (
	resultOK          = "ok"
	resultCached      = "cached"
	resultTimeout     = "timeout"
	resultError       = "error"
	resultNoData      = "no_data"
	resultBreakerOpen = "breaker_open"
	resultNotSLO      = "not_slo"
	resultRefused     = "refused"  // Prometheus refused the SLO's query (or answered too much)
	resultTemplate    = "template" // an expr template does not render for the alert
)

// metrics are the package's metrics, registered on the Registerer given to
// New.
type metrics struct {
	lookups      *prometheus.CounterVec
	queries      *prometheus.CounterVec
	queryLatency prometheus.Histogram
	breakerOpen  prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		lookups: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "alertrouter", Subsystem: "slolive", Name: "lookups_total",
			Help: "Live SLO lookups by result (ok, cached, timeout, error, no_data, breaker_open, not_slo, refused: Prometheus refused the SLO's query, template: an expr template does not render for the alert).",
		}, []string{"result"}),
		queries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "alertrouter", Subsystem: "slolive", Name: "queries_total",
			Help: "Queries sent to Prometheus for live SLO context, by outcome (success, failure).",
		}, []string{"outcome"}),
		queryLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "alertrouter", Subsystem: "slolive", Name: "query_set_duration_seconds",
			Help:    "Duration of one SLO's query set, all queries together.",
			Buckets: []float64{.005, .01, .025, .05, .1, .2, .3, .5, 1},
		}),
		breakerOpen: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "alertrouter", Subsystem: "slolive", Name: "breakers_open",
			Help: "Prometheus servers whose circuit breaker is open (not queried).",
		}),
	}
	for _, r := range []string{resultOK, resultCached, resultTimeout, resultError, resultNoData, resultBreakerOpen, resultNotSLO, resultRefused, resultTemplate} {
		m.lookups.WithLabelValues(r)
	}
	m.queries.WithLabelValues("success")
	m.queries.WithLabelValues("failure")
	if reg != nil {
		reg.MustRegister(m.lookups, m.queries, m.queryLatency, m.breakerOpen)
	}
	return m
}
