package routing

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/dedup"
	"github.com/alertrouter/alertrouter/store"
)

// AdoptReplayedOpening records in the store the incident that n, a dead
// letter's opening just sent again (router dead-letters replay, the
// console's Replay), opened at an integration that threads updates under
// the incident's parent (Slack's Web API): its firing alerts join the
// incident and its parent (n.Ref, which the send set) is kept, as the
// pipeline does for an opening it delivers. Before, the incident stayed
// unknown to the store: its next notification — Alertmanager's retry of
// the same alerts, a new alert — posted a second parent, and the replayed
// one was left saying firing for good (audit REPLAY). An incident another
// notification opened meanwhile keeps its own parent (the replayed one is
// then an orphan, as before); other integrations (PagerDuty: its dedup key
// folds a trigger into the open incident) are left as they are. The
// alerts in resolvedSince (journal.DeadLetter.ResolvedSince) do not join.
func (p *Pipeline) AdoptReplayedOpening(ctx context.Context, n *alert.Notification, resolvedSince []string) error {
	if !n.Opening || n.Ref == "" || n.IncidentResolved || n.Incident == "" {
		return nil
	}
	if in := p.integration(n.Receiver, n.Integration); in == nil || !in.threadsUpdates() {
		return nil
	}
	var members []store.Member
	// An alert that resolved since is no member: the incident closes when
	// the others resolve (a review: the parent said firing for good, and
	// took in the next episode).
	for _, r := range stillFiring(n, resolvedSince) {
		members = append(members, store.Member{Fingerprint: r.Alert.Fingerprint, StartsAt: identityStart(r)})
	}
	if len(members) == 0 {
		return nil
	}
	key := store.IncidentKey(p.Dedup.KeyPrefix, n.Incident, n.Receiver+"/"+n.Integration)
	token := dedup.NewToken()
	res, err := p.Store.Incidents(ctx, []store.IncidentOp{{Key: key, Step: store.StepJoin, Members: members, Token: token, Lease: settleTimeout, TTL: p.Dedup.NotifiedTTL}})
	if err != nil {
		return fmt.Errorf("record the replayed opening of incident %s: %w", n.Incident, err)
	}
	if res[0].Outcome != store.OutcomeOpening {
		return nil // open already, with its own parent; or being opened by another sender
	}
	if _, err := p.Store.Incidents(ctx, []store.IncidentOp{{Key: key, Step: store.StepOpened, Token: token, Ref: n.Ref, TTL: p.Dedup.NotifiedTTL}}); err != nil {
		return fmt.Errorf("record the replayed opening of incident %s: %w", n.Incident, err)
	}
	p.shared().refs.note(key, n.Ref, time.Now())
	return nil
}

// MarkReplayedFirings writes, for n — a dead letter's firing sent again
// at sentAt — the markers of its alerts still firing (not in
// resolvedSince) at n's integration, as the settle writes them for a
// firing the pipeline delivers: Alertmanager's next repeat of those alerts
// is deduplicated. Before, it found no marker and sent them again (a
// thread reply under the replayed parent; PagerDuty's trigger again). A
// marker written before sentAt of another tier (the ticket the replayed
// escalation supersedes) or of a resolve (an alert that fired again with
// the same start) is replaced, compare-and-swap, as the settle would (a
// review: kept, the next repeat posted the escalation again); a claim
// (another sender's send in flight) and a marker of sentAt or later are
// kept.
func (p *Pipeline) MarkReplayedFirings(ctx context.Context, n *alert.Notification, resolvedSince []string, sentAt time.Time) error {
	if n.Kind != alert.KindFiring || n.IncidentResolved {
		return nil
	}
	integ := p.integration(n.Receiver, n.Integration)
	if integ == nil {
		return nil
	}
	now := p.now()
	var marks []store.Entry
	var keys []string
	for _, r := range stillFiring(n, resolvedSince) {
		m := dedup.Marker{Tier: dedup.Tier(&r.Decision), At: now, Incident: r.Incident}
		key := p.markerKey(r.Alert.Fingerprint, n.Receiver, integ, identityStart(r))
		marks = append(marks, store.Entry{Key: key, Value: m.String(), TTL: p.Dedup.NotifiedTTL})
		keys = append(keys, key)
	}
	if len(marks) == 0 {
		return nil
	}
	fail := func(err error) error {
		return fmt.Errorf("mark the replayed firings of incident %s notified: %w", n.Incident, err)
	}
	values, found, err := p.Store.Get(ctx, keys)
	if err != nil {
		return fail(err)
	}
	var absent, superseded, replace []store.Entry
	for i, m := range marks {
		switch old := dedup.ParseMarker(values[i]); {
		case !found[i]:
			absent = append(absent, m)
		case dedup.IsClaim(values[i]) || !old.At.Before(sentAt):
			// in flight, or written since the replay's send
		case old.Resolved || old.Tier != dedup.ParseMarker(m.Value).Tier:
			superseded = append(superseded, store.Entry{Key: m.Key, Value: values[i]})
			replace = append(replace, m)
		}
	}
	if len(superseded) > 0 {
		// Compare-and-swap: deleted only if unchanged since the read, then
		// written unless another sender wrote it meanwhile.
		if err := p.Store.DeleteIfEqual(ctx, superseded); err != nil {
			return fail(err)
		}
		absent = append(absent, replace...)
	}
	if _, err := p.Store.SetNX(ctx, absent); err != nil {
		return fail(err)
	}
	return nil
}

// integration returns the integration named name of receiver (nil: none
// in the current configuration).
func (p *Pipeline) integration(receiver, name string) *Integration {
	for i := range p.Receivers[receiver] {
		if in := &p.Receivers[receiver][i]; in.Name == name {
			return in
		}
	}
	return nil
}

// stillFiring returns n's results whose alert fires, those in
// resolvedSince (journal.DeadLetter.ResolvedSince) left out.
func stillFiring(n *alert.Notification, resolvedSince []string) []*alert.Result {
	var out []*alert.Result
	for _, r := range n.Results {
		if r.Alert != nil && r.Alert.Firing() && !slices.Contains(resolvedSince, r.Alert.Fingerprint) {
			out = append(out, r)
		}
	}
	return out
}

// identityStart is r's alert's identity start (alert.Alert.IdentityStart)
// in ms, as markers and incident members keep it.
func identityStart(r *alert.Result) string {
	return strconv.FormatInt(r.Alert.IdentityStart().UnixMilli(), 10)
}
