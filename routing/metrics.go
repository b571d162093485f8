package routing

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// Metrics are the pipeline's own metrics. Create them with NewMetrics.
type Metrics struct {
	alerts      *prometheus.CounterVec
	rejected    prometheus.Counter
	flagged     *prometheus.CounterVec
	truncated   prometheus.Counter
	decisions   *prometheus.CounterVec
	heartbeat   prometheus.Gauge
	dedup       *prometheus.CounterVec
	storeErrors prometheus.Counter
	suppressed  prometheus.Counter
	// sendDuration and settleErrors are per integration and per write.
	flapDowngrades prometheus.Counter
	sendDuration   *prometheus.HistogramVec
	settleErrors   *prometheus.CounterVec
	coalesced      *prometheus.CounterVec
	notifierPanics *prometheus.CounterVec
	evaluatePanics prometheus.Counter
	// liveAbandoned counts the alerts whose live SLO lookup the webhook's
	// shared deadline left undone.
	liveAbandoned prometheus.Counter
}

// Dedup results counted by alertrouter_dedup_total{result}.
const (
	dedupMiss     = "miss"            // claimed by this replica, sent
	dedupHit      = "hit"             // already notified: skipped
	dedupInFlight = "in_flight"       // another replica is sending it
	dedupReleased = "released"        // send failed, claim released
	dedupFailOpen = "fail_open"       // store down, sent without a claim
	dedupUnseen   = "resolved_unseen" // resolve of a firing never notified
	// dedupUnseenSent: a resolve no marker says was notified, sent to
	// PagerDuty all the same (lostResolves: its firing may have been
	// delivered without a marker).
	dedupUnseenSent = "resolved_unseen_sent"
)

// NewMetrics registers the pipeline metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		alerts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "alertrouter_alerts_received_total",
			Help: "Alerts received in webhooks, by status.",
		}, []string{"status"}),
		rejected: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "alertrouter_alerts_rejected_total",
			Help: "Alerts rejected alone (no labels, wrong types) while the rest of their webhook was processed.",
		}),
		flagged: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "alertrouter_alerts_flagged_total",
			Help: "Alerts whose defects were mended at decode time, by flag.",
		}, []string{"flag"}),
		truncated: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "alertrouter_alerts_truncated_total",
			Help: "Alerts Alertmanager left out of webhooks (truncatedAlerts, max_alerts).",
		}),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "alertrouter_decisions_total",
			Help: "Policy decisions, by sector, action and policy.",
		}, []string{"sector", "action", "policy"}),
		heartbeat: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "alertrouter_heartbeat_last_received_timestamp_seconds",
			Help: "When this replica last received an always-firing heartbeat alert (policy heartbeat, vector(1)) firing, in Unix seconds; 0 before the first. AlertrouterHeartbeatMissing reads it: the path from Alertmanager to the router is broken when heartbeats stop.",
		}),
		dedup: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "alertrouter_dedup_total",
			Help: "Notification transitions by dedup result: miss (sent), hit (already sent), in_flight, released, fail_open, resolved_unseen (a resolve sent nowhere), resolved_unseen_sent (sent to PagerDuty though no marker says its firing was notified).",
		}, []string{"result"}),
		storeErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "alertrouter_dedup_store_errors_total",
			Help: "Dedup store operations that failed; with fail-open each risks a duplicate notification.",
		}),
		suppressed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "alertrouter_alerts_suppressed_total",
			Help: "Ticket-tier alerts suppressed because a page-tier alert of the same SLO fires.",
		}),
		flapDowngrades: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "alertrouter_flap_downgrades_total",
			Help: "Page-tier firings of flapping alerts notified as tickets instead (never to none).",
		}),
		// Per kind of integration only: alertrouter_notification_duration_seconds
		// is per receiver, and with hundreds of receivers a second
		// per-receiver histogram was a third of the router's series (an
		// audit: 9,030 of 26,479 with 302 receivers).
		sendDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "alertrouter_notification_send_duration_seconds",
			Help:    "Time to deliver one notification to one kind of integration, retries included (per receiver: alertrouter_notification_duration_seconds).",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"integration"}),
		settleErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "alertrouter_dedup_settle_errors_total",
			Help: "Store writes after a delivery that failed (confirm, release, incident state); each is retried in the background and risks a duplicate or a delayed retry.",
		}, []string{"op"}),
		coalesced: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "alertrouter_notifications_coalesced_total",
			Help: "Incident updates that went out in another webhook's send of the same incident (one message for several webhooks' new or resolved members).",
		}, []string{"receiver", "integration"}),
		liveAbandoned: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "alertrouter_live_lookups_abandoned_total",
			Help: "Firing SLO alerts whose live lookup was not done within the webhook's shared deadline (Prometheus too slow for its SLOs): decided from their labels, and the page says so.",
		}),
		evaluatePanics: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "alertrouter_evaluation_panics_total",
			Help: "Alerts whose classification, decision, routing or live SLO lookup panicked (a bug): each paged on the fallback decision (a live lookup's: decided from its labels) instead of failing its webhook.",
		}),
		notifierPanics: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "alertrouter_notifier_panics_total",
			Help: "Notifications whose notifier panicked (a bug): each failed permanently instead of crashing the router.",
		}, []string{"receiver", "integration"}),
	}
	for _, op := range []string{"confirm notified transitions", "release failed claims", "settle incident state"} {
		m.settleErrors.WithLabelValues(op)
	}
	for _, s := range []string{"firing", "resolved"} {
		m.alerts.WithLabelValues(s)
	}
	for _, r := range []string{dedupMiss, dedupHit, dedupInFlight, dedupReleased, dedupFailOpen, dedupUnseen, dedupUnseenSent} {
		m.dedup.WithLabelValues(r)
	}
	for _, f := range []string{alert.FlagInvalidUTF8, alert.FlagStartsAtMissing, alert.FlagStartsAtInvalid, alert.FlagEndsAtInvalid, alert.FlagStatusInvalid, alert.FlagFingerprint} {
		m.flagged.WithLabelValues(f)
	}
	if reg != nil {
		reg.MustRegister(m.alerts, m.rejected, m.flagged, m.truncated,
			m.decisions, m.heartbeat, m.dedup, m.storeErrors, m.suppressed, m.sendDuration, m.settleErrors, m.flapDowngrades, m.coalesced, m.notifierPanics, m.evaluatePanics, m.liveAbandoned)
	}
	return m
}

// InitIntegration creates the per-integration series of one integration of
// a receiver at zero (alertrouter_notifier_panics_total), as the notify and
// dead-letter metrics do: a counter that first appears at 1 has no earlier
// sample for increase() to start from, so an alert on it would miss the
// first panic. Call it for every configured integration when a pipeline is
// built; a nil Metrics does nothing.
func (m *Metrics) InitIntegration(receiver, integration string) {
	if m == nil {
		return
	}
	m.notifierPanics.WithLabelValues(receiver, alert.IntegrationType(integration))
	m.coalesced.WithLabelValues(receiver, alert.IntegrationType(integration))
}

// ForgetIntegration deletes the per-receiver series of receiver's
// integrations of a kind ("pagerduty", "slack"; "": every kind), which a
// reload removed: a removed receiver's series were exported, at their last
// value, until the router restarted. A nil Metrics does nothing.
func (m *Metrics) ForgetIntegration(receiver, kind string) {
	if m == nil {
		return
	}
	match := alert.IntegrationSeries(receiver, kind)
	m.notifierPanics.DeletePartialMatch(match)
	m.coalesced.DeletePartialMatch(match)
}
