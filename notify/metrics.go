package notify

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// The outcomes of alertrouter_notifications_total.
const (
	OutcomeSuccess      = "success"
	OutcomeFailure      = "failure"
	OutcomeDeduplicated = "deduplicated"
)

// The reasons of alertrouter_notification_failures_total.
const (
	ReasonClientError = "client_error"
	ReasonServerError = "server_error"
	ReasonRateLimited = "rate_limited"
	ReasonTimeout     = "timeout"
	// ReasonNoAnswer: the request got no answer — the connection refused,
	// reset or cut, the name not resolved, TLS refused — not a timeout.
	ReasonNoAnswer = "no_answer"
)

var (
	outcomes = []string{OutcomeSuccess, OutcomeFailure, OutcomeDeduplicated}
	reasons  = []string{ReasonClientError, ReasonServerError, ReasonRateLimited, ReasonTimeout, ReasonNoAnswer}
)

// Metrics are the delivery metrics of every integration, labelled by
// receiver (the receiver's name) and integration ("pagerduty", "slack",
// "log"), as Alertmanager labels its notification metrics.
type Metrics struct {
	notifications *prometheus.CounterVec
	failures      *prometheus.CounterVec
	attempts      *prometheus.CounterVec
	duration      *prometheus.HistogramVec
	// renders counts the template renders that failed, or rendered empty
	// where a built-in text stood in (Templates.WithMetrics).
	renders *prometheus.CounterVec
}

// NewMetrics creates the metrics and registers them on reg (nil: not
// registered). Registering twice on one registry panics, as with any
// collector.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		notifications: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "alertrouter_notifications_total",
			Help: "Notifications handled per integration, by outcome (success, failure, deduplicated).",
		}, []string{"receiver", "integration", "outcome"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "alertrouter_notification_failures_total",
			Help: "Failed delivery attempts per integration, by reason (client_error, server_error, rate_limited, timeout, no_answer: refused, reset or cut connections, names not resolved, TLS refused).",
		}, []string{"receiver", "integration", "reason"}),
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "alertrouter_notification_attempts_total",
			Help: "Delivery attempts (API requests) per integration.",
		}, []string{"receiver", "integration"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "alertrouter_notification_duration_seconds",
			Help:    "Time to deliver one notification, retries included, per integration.",
			Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"receiver", "integration"}),
		renders: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "alertrouter_template_render_failures_total",
			Help: "Template renders that failed (reason=\"error\": the template did not execute; the built-in text stood in or the field was left out), or rendered empty where a built-in text stood in (reason=\"empty\"), by receiver and field (the configuration key rendered: summary, title, details.<key> …).",
		}, []string{"receiver", "field", "reason"}),
	}
	if reg != nil {
		reg.MustRegister(m.notifications, m.failures, m.attempts, m.duration, m.renders)
	}
	return m
}

// The reasons of alertrouter_template_render_failures_total.
const (
	// RenderError is a template that did not execute (a missing key
	// indexed, a function given the wrong type): what the operator wrote
	// is not shown; AlertrouterTemplatesFailing fires on it.
	RenderError = "error"
	// RenderEmpty is a template that rendered empty where a built-in
	// text stood in ('{{ .CommonAnnotations.summary }}' whenever the
	// alerts' summaries differ): common and harmless, not alerted on.
	RenderEmpty = "empty"
)

// PrecreateRenderFailures creates the series of
// alertrouter_template_render_failures_total of a receiver's fields at
// zero, for both reasons, so that an alert on its increase sees the first
// failure. A nil Metrics does nothing.
func (m *Metrics) PrecreateRenderFailures(receiver string, fields ...string) {
	if m == nil {
		return
	}
	for _, f := range fields {
		m.renders.WithLabelValues(receiver, f, RenderError)
		m.renders.WithLabelValues(receiver, f, RenderEmpty)
	}
}

// renderFailure counts one render of field for receiver that failed
// (RenderError) or rendered empty, fallen back (RenderEmpty). A nil
// Metrics does nothing.
func (m *Metrics) renderFailure(receiver, field, reason string) {
	if m == nil {
		return
	}
	m.renders.WithLabelValues(receiver, field, reason).Inc()
}

// Integration returns the metrics of one integration of a receiver with
// every label value pre-created, so its series exist at zero. A nil Metrics
// returns a handle whose methods do nothing.
func (m *Metrics) Integration(receiver, name string) *IntegrationMetrics {
	im := &IntegrationMetrics{}
	if m == nil {
		return im
	}
	im.outcomes = make(map[string]prometheus.Counter, len(outcomes))
	for _, o := range outcomes {
		im.outcomes[o] = m.notifications.WithLabelValues(receiver, name, o)
	}
	im.failures = make(map[string]prometheus.Counter, len(reasons))
	for _, r := range reasons {
		im.failures[r] = m.failures.WithLabelValues(receiver, name, r)
	}
	im.attempts = m.attempts.WithLabelValues(receiver, name)
	im.duration = m.duration.WithLabelValues(receiver, name)
	return im
}

// ForgetIntegration deletes the series of receiver's integrations of a
// kind ("pagerduty", "slack"; "": every kind, its template render series
// included), which a reload removed: they were exported at their last
// value until the router restarted (an audit: 26,000 series of 300
// removed receivers). A nil Metrics does nothing.
func (m *Metrics) ForgetIntegration(receiver, kind string) {
	if m == nil {
		return
	}
	match := alert.IntegrationSeries(receiver, kind)
	if kind == "" {
		m.renders.DeletePartialMatch(match)
	}
	m.notifications.DeletePartialMatch(match)
	m.failures.DeletePartialMatch(match)
	m.attempts.DeletePartialMatch(match)
	m.duration.DeletePartialMatch(match)
}

// IntegrationMetrics are the pre-bound metrics of one integration. The zero
// value (and nil) records nothing. Safe for concurrent use.
type IntegrationMetrics struct {
	outcomes map[string]prometheus.Counter
	failures map[string]prometheus.Counter
	attempts prometheus.Counter
	duration prometheus.Observer
}

// Outcome counts one notification with its outcome (Outcome* constants).
func (m *IntegrationMetrics) Outcome(outcome string) {
	if m == nil || m.outcomes == nil {
		return
	}
	if c, ok := m.outcomes[outcome]; ok {
		c.Inc()
	}
}

// Failure counts one failed attempt with its reason (Reason* constants).
func (m *IntegrationMetrics) Failure(reason string) {
	if m == nil || m.failures == nil {
		return
	}
	if c, ok := m.failures[reason]; ok {
		c.Inc()
	}
}

// Attempt counts one delivery attempt.
func (m *IntegrationMetrics) Attempt() {
	if m == nil || m.attempts == nil {
		return
	}
	m.attempts.Inc()
}

// ObserveSince records the duration of one notification started at start.
func (m *IntegrationMetrics) ObserveSince(start time.Time) {
	if m == nil || m.duration == nil {
		return
	}
	m.duration.Observe(time.Since(start).Seconds())
}

// ReasonForStatus maps an HTTP status of a failed request to a failure
// reason: 429 rate_limited, 408 timeout, other 4xx client_error, everything
// else server_error.
func ReasonForStatus(code int) string {
	switch {
	case code == 429:
		return ReasonRateLimited
	case code == 408:
		return ReasonTimeout
	case code >= 400 && code < 500:
		return ReasonClientError
	default:
		return ReasonServerError
	}
}

// NoAnswer counts and describes a request that got no answer (a transport
// error: nothing was read back). ctx is the webhook's, actx the attempt's
// (bounded by timeout), began when the attempt started and what the
// request, as errors name it. An attempt cut off by the webhook's deadline,
// or that ran out of its own time (the attempt's context, the transport's
// timeout, or the http.Client's racing it), is a timeout; anything else (a
// connection refused or lost) no_answer: no answer of the server's.
func (m *IntegrationMetrics) NoAnswer(ctx, actx context.Context, began time.Time, timeout time.Duration, what string, err error) error {
	var ne net.Error
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		m.Failure(ReasonTimeout)
		return fmt.Errorf("%s: timed out after %s (the webhook's deadline): %w", what, time.Since(began).Round(time.Millisecond), err)
	case ctx.Err() == nil && (actx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() || time.Since(began) >= timeout):
		m.Failure(ReasonTimeout)
		return fmt.Errorf("%s: timed out after %s: %w", what, timeout, err)
	default:
		m.Failure(ReasonNoAnswer)
		return fmt.Errorf("%s: %w", what, err)
	}
}
