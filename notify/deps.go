package notify

import (
	"log/slog"
)

// Deps are the shared dependencies an integration is built with. An
// integration keeps no state of its own: what must be shared by replicas
// (who opens an incident, its Slack parent) lives in the dispatch core's
// incident state and reaches the integration in the Notification.
type Deps struct {
	// Templates renders message text; nil means the built-in defaults only.
	Templates *Templates
	// Metrics counts deliveries; nil disables the metrics.
	Metrics *Metrics
	// Logger receives the integration's logs; nil discards them.
	Logger *slog.Logger
	// Retry is the retry policy; its zero value means DefaultRetryPolicy.
	Retry RetryPolicy
}

// WithDefaults returns d with nil fields replaced by working defaults: the
// built-in templates, a discarding logger and the default retry policy.
// Metrics is left as it is.
func (d Deps) WithDefaults() Deps {
	if d.Templates == nil {
		d.Templates = BuiltinTemplates()
	}
	d.Templates = d.Templates.WithMetrics(d.Metrics) // count render failures (nil Metrics: unchanged)
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.Retry.isZero() {
		d.Retry = DefaultRetryPolicy()
	}
	return d
}
