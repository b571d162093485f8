package journal

import (
	"time"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// Record writes one decision entry for every alert of a processed webhook
// that had something to record: a delivery at any integration (sent,
// failed, waiting for another replica, deliberately not sent), a decision
// of none, a suppression, a mute by a time interval, or a resolve. Alertmanager's
// repeats of what was already notified (dedup hits with nothing new) are
// counted by the dispatch core, not journaled again; so are its repeats of
// an unchanged none, suppression or mute, which this replica journals once
// per quietRepeat (they have no delivery whose dedup would say so). It
// implements routing.Recorder and never blocks.
func (w *Writer) Record(msg *alert.Message, results []*alert.Result) {
	var entries []Entry
	for i, r := range results {
		if len(r.Deliveries) == 0 {
			// A resolve with nothing to send (its firing was suppressed,
			// muted or decided none, or another replica sent it) is
			// journaled too, once per quietRepeat: without it the
			// episode's last entry stayed "firing", and the console
			// listed its incident open after everything had resolved.
			if r.SuppressedBy == "" && r.MutedBy == "" && r.Decision.Action != alert.ActionNone && r.Alert.Firing() {
				continue
			}
			if w.recentlyJournaled(r) {
				continue
			}
		}
		if entries == nil {
			entries = make([]Entry, 0, len(results)-i) // at most the rest
		}
		e := FromResult(msg, r)
		if len(r.Deliveries) > 0 {
			e.Deliveries = make([]Delivery, 0, len(r.Deliveries))
		}
		for _, d := range r.Deliveries {
			e.Deliveries = append(e.Deliveries, Delivery{Receiver: d.Receiver, Integration: d.Integration,
				Outcome: deliveryOutcome(d), Attempts: deliveryAttempts(d), Latency: d.Latency, Error: d.Error, Closed: d.Closed, Repaged: d.Repaged})
			e.Deduplicated = e.Deduplicated || d.Outcome == alert.DeliveryDeduplicated
		}
		entries = append(entries, e)
	}
	if len(entries) > 0 {
		w.write(entries, true)
	}
}

func deliveryOutcome(d alert.Delivery) string {
	switch {
	case d.Outcome == alert.DeliveryFailed && !d.Retryable:
		return OutcomeDeadLetter
	case d.Outcome == alert.DeliveryFailed:
		return OutcomeFailed
	}
	return d.Outcome
}

// deliveryAttempts is the notifier's attempts of d (the pipeline counts
// them, retries included); a send or failure that counted none (a notifier
// that does not go through notify.Retry, a send shared with another
// webhook's) made at least one, a deduplicated or waiting delivery none.
func deliveryAttempts(d alert.Delivery) int {
	switch {
	case d.Attempts > 0:
		return d.Attempts
	case d.Outcome == alert.DeliverySent || d.Outcome == alert.DeliveryFailed:
		return 1
	}
	return 0
}

// DeadLetter writes a dead letter for a notification that failed
// permanently (a revoked token, a deleted routing key), so it can be
// replayed once the configuration is fixed.
func (w *Writer) DeadLetter(n *alert.Notification, cause error) {
	e, err := NewDeadLetter(n, cause, max(1, alert.AttemptsOf(cause)), time.Now())
	if err != nil {
		w.opts.Logger.Error("dead letter could not be kept", "receiver", n.Receiver, "integration", n.Integration, "incident", n.Incident, "err", err)
		return
	}
	w.Write(e)
}

// quietRepeat is how long an unchanged decision without delivery (none,
// suppressed, muted) is not journaled again by one replica.
const quietRepeat = time.Hour

// maxQuiet bounds the memory of recently journaled quiet decisions; past
// it the memory starts afresh (a repeat may then be journaled once more).
const maxQuiet = 10000

// recentlyJournaled reports whether this replica journaled the same quiet
// decision of the same firing within quietRepeat, and remembers it if not.
func (w *Writer) recentlyJournaled(r *alert.Result) bool {
	key := r.Alert.Fingerprint + "|" + r.Alert.Status + "|" + r.Alert.StartsAt.String() + "|" + string(r.Decision.Action) +
		"|" + r.Decision.Policy + "|" + r.Decision.Tier + "|" + r.SuppressedBy + "|" + r.MutedBy
	now := w.opts.Now()
	w.quietMu.Lock()
	defer w.quietMu.Unlock()
	if at, ok := w.quiet[key]; ok && now.Sub(at) < quietRepeat {
		return true
	}
	if w.quiet == nil || len(w.quiet) >= maxQuiet {
		w.quiet = make(map[string]time.Time)
	}
	w.quiet[key] = now
	return false
}
