package routing

import (
	"context"
	"time"

	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/dedup"
)

// staleLookup bounds the question to Alertmanager: a firing waits no
// longer for it, and is sent when it gets no answer.
const staleLookup = 2 * time.Second

// staleWindow bounds how long after its resolve was notified a firing is
// asked about: an HA peer's copy comes within its peer_timeout (15s a
// peer by default). Later, the firing is sent without asking — should
// alertmanager.url name another Alertmanager than the one sending (one
// router behind several clusters), a firing it does not hold is delayed
// to the next repeat past the window, never dropped for good.
const staleWindow = 5 * time.Minute

// staleRefires returns the firings of trs that fire again after their
// notified resolve with the same startsAt (dedup.Step.Refire) and that
// Alertmanager no longer holds (FiringAlerts): an Alertmanager HA peer
// flushed the group while the alert still fired, waited its peer_timeout,
// and sent that copy after the other peer had sent the resolve. Sent, it
// paged again for a trouble that had cleared (a new PagerDuty incident, a
// new Slack parent, resolved 15 seconds later when the peer caught up).
// Alertmanager firing again an alert it had resolved itself (Prometheus'
// resends lapsed, then resumed) still holds it: that firing is sent, as
// is every firing when Alertmanager is not configured, does not answer in
// time (staleLookup), or the alert's fingerprint is not Alertmanager's
// (decode computed it), or the resolve was notified more than staleWindow
// ago. One question per alert name in the webhook.
func (p *Pipeline) staleRefires(ctx context.Context, trs []*transition, steps []dedup.Step) map[*alert.Result]bool {
	if p.FiringAlerts == nil {
		return nil
	}
	var asked map[string]map[string]bool
	var stale map[*alert.Result]bool
	for i, t := range trs {
		a := t.res.Alert
		if !steps[i].Refire || stale[t.res] || a.HasFlag(alert.FlagFingerprint) || p.now().Sub(steps[i].ResolvedAt) > staleWindow {
			continue
		}
		name := a.Labels["alertname"]
		held, ok := asked[name]
		if !ok {
			lctx, cancel := context.WithTimeout(ctx, staleLookup)
			var err error
			held, err = p.FiringAlerts(lctx, name)
			cancel()
			if err != nil {
				p.Logger.Warn("could not ask Alertmanager whether an alert firing again after its resolve still fires; sent", "alertname", name, "err", err)
				held = nil
			} else if held == nil {
				held = map[string]bool{}
			}
			if asked == nil {
				asked = map[string]map[string]bool{}
			}
			asked[name] = held
		}
		if held == nil || held[a.Fingerprint] {
			continue
		}
		if stale == nil {
			stale = map[*alert.Result]bool{}
		}
		stale[t.res] = true
		p.Logger.Info("firing after its notified resolve, with the same startsAt, that the Alertmanager at alertmanager.url no longer holds: a lagging Alertmanager peer's copy of a firing that resolved — or, from another Alertmanager than alertmanager.url's, a re-fire sent at its next repeat; not sent now",
			"fingerprint", a.Fingerprint, "alertname", name, "starts_at", a.StartsAt)
	}
	return stale
}

// skipStale makes the steps of stale firings (staleRefires) skips: already
// notified, as their resolve says.
func skipStale(trs []*transition, steps []dedup.Step, stale map[*alert.Result]bool) {
	if len(stale) == 0 {
		return
	}
	for i, t := range trs {
		if stale[t.res] && steps[i].Refire {
			steps[i] = dedup.Step{Verdict: dedup.Skip}
		}
	}
}
