// Package notify holds what every integration of alertrouter shares: the one
// retry loop (Retry, with exponential backoff, jitter, the request deadline
// and Retry-After), the per-integration metrics (Metrics), the
// Alertmanager-language templates with built-in defaults (Templates), and the
// dependencies an integration is built with (Deps).
//
// The integrations live in subpackages: notify/pagerduty (Events API v2),
// notify/slack (Web API, Block Kit, one thread per incident) and
// notify/lognotify (one JSON line per notification). Each implements
// model.Notifier and says, through model.Permanent, which failures a
// retry cannot fix.
package notify
