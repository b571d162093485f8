package routing

import (
	"context"
	"iter"
	"slices"
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
//
// lagging (laggingCopies) adds the firings that may be such a copy under
// another start.
func (p *Pipeline) staleRefires(ctx context.Context, trs []*transition, steps []dedup.Step, lagging []time.Time) map[*alert.Result]bool {
	if p.FiringAlerts == nil {
		return nil
	}
	var asked map[string]map[string]bool
	var stale map[*alert.Result]bool
	for i, t := range trs {
		a := t.res.Alert
		refire, resolvedAt := steps[i].Refire, steps[i].ResolvedAt
		now := p.now()
		if !refire && lagging != nil && !lagging[i].IsZero() {
			refire, resolvedAt, now = true, lagging[i], p.decideNow()
		}
		if !refire || stale[t.res] || a.HasFlag(alert.FlagFingerprint) || now.Sub(resolvedAt) > staleWindow {
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
		t.res.Stale = true
		p.Logger.Info("firing after its notified resolve, with the same startsAt or one before that resolve, that the Alertmanager at alertmanager.url no longer holds: a lagging Alertmanager peer's copy of a firing that resolved — or, from another Alertmanager than alertmanager.url's, a re-fire sent at its next repeat; not sent now",
			"fingerprint", a.Fingerprint, "alertname", name, "starts_at", a.StartsAt)
	}
	return stale
}

// skipStale makes the steps of stale firings (staleRefires) skips: already
// notified, as their resolve says — at every integration of the alert, not
// only those holding that resolve: the resolve of a firing no marker knew
// went to PagerDuty alone (lostResolves), so the lagging copy arriving
// after it was a new firing at Slack, which drew a card for a trouble that
// had cleared, never closed (an audit: the incident's next episodes were
// hidden under it for a week). Alertmanager, asked, no longer holds the
// alert: nothing of it fires anywhere.
func skipStale(trs []*transition, steps []dedup.Step, stale map[*alert.Result]bool, lagging []time.Time) {
	if len(stale) == 0 {
		return
	}
	for i, t := range trs {
		if stale[t.res] && (steps[i].Refire || lagging != nil && !lagging[i].IsZero() || steps[i].Verdict == dedup.Send && steps[i].Kind == alert.KindFiring) {
			steps[i] = dedup.Step{Verdict: dedup.Skip}
		}
	}
}

// laggingCopies returns, per transition, the time of the resolve a firing
// may be an Alertmanager HA peer's lagging copy of although its start is
// not the resolved firing's (zero otherwise; nil when there is none): a
// firing that no marker knows under any start, whose flap history's newest
// transition is a resolve at most staleWindow ago that came after this
// firing's start — the same trouble, which that resolve ended. Peers stamp
// their own startsAt on an alert pushed without one (amtool alert add
// without --start, a script posting to every peer), so the lagging peer's
// copy of the resolved firing carried another start, found no marker, and
// paged again. Such a firing is asked about as a Refire is (staleRefires);
// one Alertmanager still holds is sent as before.
func (p *Pipeline) laggingCopies(trs []*transition, steps []dedup.Step, found []bool, flap flapRead, now time.Time) []time.Time {
	if p.FiringAlerts == nil || !slices.Contains(flap.found, true) {
		// Nothing to ask, or no alert of the webhook has fired before
		// (the fresh path: no lookups).
		return nil
	}
	var out []time.Time
	for from, j := range alertRuns(trs) {
		a := trs[from].res.Alert
		if !a.Firing() || slices.Contains(found[from:j], true) || a.HasFlag(alert.FlagFingerprint) {
			continue
		}
		rec, ok := p.flapRecordOf(flap, a.Fingerprint)
		if !ok {
			continue
		}
		last := rec.h[len(rec.h)-1]
		if last.Firing || !a.StartsAt.Before(last.At) || now.Sub(last.At) > staleWindow {
			continue
		}
		for k := from; k < j; k++ {
			if steps[k].Verdict == dedup.Send && steps[k].Kind == alert.KindFiring {
				if out == nil {
					out = make([]time.Time, len(trs))
				}
				out[k] = last.At
			}
		}
	}
	return out
}

// alertRuns yields the bounds [from, to) of each run of trs' transitions
// of one alert (they are built alert by alert, an integration each).
func alertRuns(trs []*transition) iter.Seq2[int, int] {
	return func(yield func(int, int) bool) {
		for i := 0; i < len(trs); {
			j := i + 1
			for j < len(trs) && trs[j].res == trs[i].res {
				j++
			}
			if !yield(i, j) {
				return
			}
			i = j
		}
	}
}
