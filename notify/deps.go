package notify

import (
	"log/slog"

	"github.com/alertrouter/alertrouter/store"
)

// Deps are the shared dependencies an integration is built with.
type Deps struct {
	// Store keeps the integration's state (PagerDuty trigger marks, Slack
	// parent messages) shared by every replica. Required by pagerduty and
	// slack.
	Store store.Store
	// KeyPrefix prefixes every store key the integration writes.
	KeyPrefix string
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
// Store and Metrics are left as they are.
func (d Deps) WithDefaults() Deps {
	if d.Templates == nil {
		d.Templates = BuiltinTemplates()
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.Retry.isZero() {
		d.Retry = DefaultRetryPolicy()
	}
	return d
}
