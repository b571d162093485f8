package routing

import (
	"context"
	"log/slog"
	"slices"
)

// alertLine gathers the alerts of one webhook that a line would name one
// by one, for one line naming how many, on which receivers, and the first
// few fingerprints. An audit: resolves no marker says were notified were
// logged a line an alert, again on each of Alertmanager's retries — 600
// lines for one 100-alert resolve retried five times while PagerDuty
// failed, during the outage on-call reads the log for.
type alertLine struct {
	seen         map[string]bool // the alerts counted, by fingerprint
	fingerprints []string        // the first maxNamedAlerts
	receivers    []string        // each once
	integrations []string        // each once
}

// maxNamedAlerts is how many fingerprints an alertLine names.
const maxNamedAlerts = 5

// add counts one alert of receiver and integration ("" when not known).
func (l *alertLine) add(fingerprint, receiver, integration string) {
	if !l.seen[fingerprint] {
		if l.seen == nil {
			l.seen = map[string]bool{}
		}
		l.seen[fingerprint] = true
		if len(l.fingerprints) < maxNamedAlerts {
			l.fingerprints = append(l.fingerprints, fingerprint)
		}
	}
	if receiver != "" && !slices.Contains(l.receivers, receiver) {
		l.receivers = append(l.receivers, receiver)
	}
	if integration != "" && !slices.Contains(l.integrations, integration) {
		l.integrations = append(l.integrations, integration)
	}
}

// log logs msg at info once for the alerts gathered (nothing when none), with
// args, at most once per interval for key and the first alert named —
// Alertmanager's retries of one webhook send it first again, another
// group's webhook names others (a review: keyed by kind alone, a second
// group's line was hidden for 30 s).
func (l *alertLine) log(ctx context.Context, p *Pipeline, key, msg string, args ...any) {
	if len(l.seen) == 0 {
		return
	}
	key += ":" + l.fingerprints[0]
	args = append([]any{"alerts", len(l.seen)}, args...)
	if len(l.receivers) > 0 {
		args = append(args, "receivers", l.receivers)
	}
	if len(l.integrations) > 0 {
		args = append(args, "integrations", l.integrations)
	}
	args = append(args, "fingerprints", l.fingerprints)
	p.shared().alertLogs.Log(ctx, p.Logger, slog.LevelInfo, key, msg, args...)
}
